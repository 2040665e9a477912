<?php
// Security failure handler: a throttled login is a 429 with Retry-After, any other failure a 401.

declare(strict_types=1);

namespace Ratelimitd\Client\Symfony;

use Ratelimitd\Client\Result;
use Symfony\Component\HttpFoundation\JsonResponse;
use Symfony\Component\HttpFoundation\Request;
use Symfony\Component\HttpFoundation\Response;
use Symfony\Component\Security\Core\Exception\AuthenticationException;
use Symfony\Component\Security\Core\Exception\TooManyLoginAttemptsAuthenticationException;
use Symfony\Component\Security\Http\Authentication\AuthenticationFailureHandlerInterface;

/**
 * For `json_login: { failure_handler: ... }` next to `login_throttling`: Symfony answers a
 * throttled login like a wrong password (401); this answers 429 with the Retry-After that
 * ratelimitd gave (RatelimitdRequestLimiter keeps it on the request), or 503 when ratelimitd
 * could not decide and the limiter failed closed. Other failures go to
 * the inner handler, or become a 401 JSON {"error": ...} without one.
 */
final class LoginThrottledFailureHandler implements AuthenticationFailureHandlerInterface
{
    public function __construct(private readonly ?AuthenticationFailureHandlerInterface $inner = null)
    {
    }

    public function onAuthenticationFailure(Request $request, AuthenticationException $exception): Response
    {
        if (!$exception instanceof TooManyLoginAttemptsAuthenticationException) {
            return $this->inner?->onAuthenticationFailure($request, $exception)
                ?? new JsonResponse(['error' => strtr($exception->getMessageKey(), $exception->getMessageData())], 401);
        }
        $rateLimit = $request->attributes->get(RatelimitdRequestLimiter::RATE_LIMIT_ATTRIBUTE);
        $retryAfter = $rateLimit instanceof \Symfony\Component\RateLimiter\RateLimit
            ? max(1, $rateLimit->getRetryAfter()->getTimestamp() - time())
            : 60 * max(1, (int) ($exception->getMessageData()['%minutes%'] ?? 1));
        $result = $request->attributes->get(RatelimitdRequestLimiter::RESULT_ATTRIBUTE);
        // Failed closed because ratelimitd could not decide: our outage, not the user's excess.
        $response = $result instanceof Result && $result->degraded
            ? new JsonResponse(['error' => 'rate_limiter_unavailable', 'retry_after' => $retryAfter], 503)
            : new JsonResponse(['error' => 'too_many_login_attempts', 'retry_after' => $retryAfter], 429);
        $response->headers->set('Retry-After', (string) $retryAfter);
        $response->headers->set('Cache-Control', 'no-store');
        return $response;
    }
}
