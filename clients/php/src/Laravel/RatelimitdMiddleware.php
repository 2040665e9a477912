<?php
// Laravel route middleware `ratelimitd:policy[,policy...][,scope=S][,cost=N][,fail_open=0|1][,wait=MS]`.

declare(strict_types=1);

namespace Ratelimitd\Client\Laravel;

use Illuminate\Http\JsonResponse;
use Illuminate\Http\Request;
use Ratelimitd\Client\DelayWait;
use Ratelimitd\Client\LimitChecker;
use Ratelimitd\Client\RateLimitClientInterface;
use Ratelimitd\Client\RatelimitdLimit;
use Ratelimitd\Client\Result;
use Ratelimitd\Client\TenantId;
use Symfony\Component\HttpFoundation\Response;

/**
 * Asks ratelimitd before the route's controller runs. The tenant is the authenticated user's
 * id (`$request->user()`), else "ip:" + `$request->ip()` (which honours TrustProxies).
 * Several policies are one layered check (see LimitChecker for the route ratelimitd needs).
 * Denied: 429 JSON with the limit headers, Retry-After and Cache-Control: no-store; failed
 * closed while ratelimitd cannot decide: 503. Allowed: the response gets the limit headers.
 * Admitted with a delay (a policy with max_delay or delay): the route runs at once, unless
 * `wait=MS` is given: then a delay up to MS is slept first and a longer one answered 429
 * (DelayWait).
 */
final class RatelimitdMiddleware
{
    private readonly LimitChecker $checker;

    public function __construct(RateLimitClientInterface $client)
    {
        $this->checker = new LimitChecker($client);
    }

    public function handle(Request $request, \Closure $next, string ...$arguments): Response
    {
        $result = $this->checker->decide(self::limits($arguments), self::tenant($request), $request->getMethod());
        $result = self::delayWait($arguments)->apply($result);
        if (!$result->allowed) {
            return self::deny($result);
        }
        $request->attributes->set('_ratelimitd_result', $result);
        $response = $next($request);
        $response->headers->add($result->headers());
        return $response;
    }

    /**
     * @param list<string> $arguments policies, then optional scope=, cost=, fail_open=, wait=
     * @return list<RatelimitdLimit>
     */
    private static function limits(array $arguments): array
    {
        [$policies, $options] = self::split($arguments);
        if ($policies === []) {
            throw new \InvalidArgumentException('ratelimitd middleware needs a policy: ratelimitd:api-default');
        }
        $failOpen = $options['fail_open'] === null ? null : filter_var($options['fail_open'], FILTER_VALIDATE_BOOLEAN);
        return array_map(
            static fn (string $p): RatelimitdLimit => new RatelimitdLimit($p, $options['scope'], (int) $options['cost'], $failOpen),
            $policies,
        );
    }

    /** @param list<string> $arguments */
    private static function delayWait(array $arguments): DelayWait
    {
        $wait = self::split($arguments)[1]['wait'];
        if ($wait !== null && filter_var($wait, FILTER_VALIDATE_INT) === false) {
            throw new \InvalidArgumentException("ratelimitd middleware: wait must be whole milliseconds, got '$wait'");
        }
        return new DelayWait($wait === null ? null : (int) $wait);
    }

    /**
     * @param list<string> $arguments
     * @return array{0: list<string>, 1: array<string, ?string>} the policies, the options
     */
    private static function split(array $arguments): array
    {
        $policies = [];
        $options = ['scope' => 'global', 'cost' => '1', 'fail_open' => null, 'wait' => null];
        foreach ($arguments as $argument) {
            if (str_contains($argument, '=')) {
                [$name, $value] = explode('=', $argument, 2);
                if (!array_key_exists($name, $options)) {
                    throw new \InvalidArgumentException("ratelimitd middleware: unknown option '$name' (scope, cost, fail_open, wait)");
                }
                $options[$name] = $value;
            } else {
                $policies[] = $argument;
            }
        }
        return [$policies, $options];
    }

    private static function tenant(Request $request): string
    {
        $user = $request->user();
        $id = $user !== null && method_exists($user, 'getAuthIdentifier') ? (string) $user->getAuthIdentifier() : null;
        return TenantId::of($id, $request->ip());
    }

    private static function deny(Result $result): JsonResponse
    {
        // A fail-closed answer while the limiter cannot decide is our outage: 503, not 429.
        [$status, $error, $detail] = $result->degraded
            ? [503, 'rate_limiter_unavailable', 'The rate limiter cannot be reached; retry shortly.']
            : [429, 'rate_limited', sprintf('Too many requests for policy "%s"; retry in %d s.', $result->policy ?? '', $result->retryAfter)];
        $response = new JsonResponse(['error' => $error, 'detail' => $detail, 'retry_after' => $result->retryAfter], $status);
        $response->headers->add($result->headers());
        $response->headers->set('Retry-After', (string) $result->retryAfter);
        $response->headers->set('Cache-Control', 'no-store');
        return $response;
    }
}
