<?php
// ratelimitd refused the check itself (400 unknown_policy, invalid_cost, ...): a caller bug, not a verdict.

declare(strict_types=1);

namespace Ratelimitd\Client\Exception;

/**
 * Thrown when ratelimitd answers a 4xx error body (`{"error": ..., "detail": ...}`).
 *
 * This is never "limit reached" (that is a Result with allowed=false) and never
 * "ratelimitd unreachable" (that is a fail-open/fail-closed Result): it means the
 * request named an unknown policy, a bad tenant or cost, a wrong URL, ... and retrying
 * will not help, so it is raised rather than silently allowed or denied.
 */
final class CheckRejectedException extends RateLimitException
{
    public function __construct(
        public readonly int $status,
        public readonly string $errorCode,
        public readonly string $detail,
    ) {
        parent::__construct(sprintf('ratelimitd rejected the check (%d %s): %s', $status, $errorCode, $detail), $status);
    }
}
