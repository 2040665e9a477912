<?php
// Result::ensureAllowed() on a deny: carries when to retry and the headers for the caller's 429 (or 503).

declare(strict_types=1);

namespace Ratelimitd\Client\Exception;

use Ratelimitd\Client\Result;

/**
 * Thrown by Result::ensureAllowed() when the check denied. `retryAfter` is in whole seconds
 * (>= 1); `headers` are the ones to put on the response (Retry-After included). `degraded` is
 * true for a fail-closed answer while the limiter could not decide: answer 503, not 429.
 */
final class RateLimitExceededException extends RateLimitException
{
    public readonly int $retryAfter;
    /** @var array<string,string> */
    public readonly array $headers;
    public readonly bool $degraded;

    public function __construct(public readonly Result $result)
    {
        $this->retryAfter = $result->retryAfter;
        $this->headers = ['Retry-After' => (string) $result->retryAfter] + $result->headers();
        $this->degraded = $result->degraded;
        parent::__construct(
            $result->degraded
                ? sprintf('The rate limiter could not decide for policy "%s" and fails closed; retry in %d s.', $result->policy ?? '', $result->retryAfter)
                : sprintf('Too many requests for policy "%s"; retry in %d s.', $result->policy ?? '', $result->retryAfter),
            $result->degraded ? 503 : 429,
        );
    }
}
