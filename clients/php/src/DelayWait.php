<?php
// A middleware's optional wait for a delayed admit (max_delay policies): sleep it out, or refuse it.

declare(strict_types=1);

namespace Ratelimitd\Client;

/**
 * What a middleware does with an admit that ratelimitd booked for later (`Result::$delayMs`,
 * a policy with `max_delay` or `delay`): its unit is charged, so going ahead at once uses it
 * early. With a wait bound, a delay up to the bound is slept before the request goes on (as
 * nginx's limit_req holds it); a longer one is refused like a deny, with Retry-After the delay
 * in whole seconds (the booking stands, as in nginx: nothing is given back). Each waiting
 * request keeps its PHP worker busy, so the bound is the most a request may cost a worker.
 */
final class DelayWait
{
    /** The longest wait a middleware accepts as its bound: ratelimitd's longest max_delay. */
    public const MAX_WAIT_MS = 3_600_000;

    /**
     * @param int|null $waitUpToMs null: go ahead at once (no wait); 0..MAX_WAIT_MS: wait a delay
     *                             up to this many ms, refuse a longer one (0 refuses every delay)
     */
    public function __construct(private readonly ?int $waitUpToMs)
    {
        if ($waitUpToMs !== null && ($waitUpToMs < 0 || $waitUpToMs > self::MAX_WAIT_MS)) {
            throw new \InvalidArgumentException(sprintf('wait bound must be 0..%d ms, got %d', self::MAX_WAIT_MS, $waitUpToMs));
        }
    }

    /**
     * The result to act on: `$result` itself after sleeping its delay (or at once when there
     * is none to wait), or a denial when its delay is beyond the bound.
     */
    public function apply(Result $result): Result
    {
        if ($this->waitUpToMs === null || !$result->allowed || $result->delayMs === 0) {
            return $result;
        }
        if ($result->delayMs > $this->waitUpToMs) {
            return new Result(
                allowed: false,
                limit: $result->limit,
                remaining: $result->remaining,
                reset: $result->reset,
                retryAfter: max(1, intdiv($result->delayMs + 999, 1000)),
                policy: $result->policy,
                headers: $result->headers(),
            );
        }
        usleep($result->delayMs * 1000);
        return $result;
    }
}
