<?php
// Translates a ratelimitd Result into Symfony RateLimiter's own RateLimit value.

declare(strict_types=1);

namespace Ratelimitd\Client\Symfony;

use Ratelimitd\Client\Result;
use Symfony\Component\RateLimiter\RateLimit;

/** Result -> Symfony\Component\RateLimiter\RateLimit, the way Symfony's own limiters fill it. */
final class SymfonyRateLimit
{
    /**
     * retryAfter: now while tokens are left; when the check denied, now + Retry-After; when
     * it took the last token, the window's reset. A degraded answer knows no numbers: 0
     * tokens and limit 0, accepted as the fail-open/fail-closed choice decided.
     */
    public static function from(Result $result): RateLimit
    {
        $now = time();
        if (!$result->allowed) {
            $retryAt = $now + max(1, $result->retryAfter);
        } elseif ($result->remaining === 0 && $result->reset !== null) {
            $retryAt = max($now, $result->reset);
        } else {
            $retryAt = $now;
        }
        return new RateLimit(
            $result->remaining ?? 0,
            new \DateTimeImmutable('@' . $retryAt),
            $result->allowed,
            $result->limit ?? 0,
        );
    }
}
