<?php
// Symfony's LimiterInterface decided by ratelimitd: one tenant, one limit or several (layered, atomic).

declare(strict_types=1);

namespace Ratelimitd\Client\Symfony;

use Ratelimitd\Client\LimitChecker;
use Ratelimitd\Client\RateLimitClientInterface;
use Ratelimitd\Client\RatelimitdLimit;
use Ratelimitd\Client\Result;
use Symfony\Component\RateLimiter\Exception\MaxWaitDurationExceededException;
use Symfony\Component\RateLimiter\Exception\ReserveNotSupportedException;
use Symfony\Component\RateLimiter\LimiterInterface;
use Symfony\Component\RateLimiter\RateLimit;
use Symfony\Component\RateLimiter\Reservation;

/**
 * Code written against Symfony\Component\RateLimiter\LimiterInterface runs against ratelimitd
 * unchanged: consume() is one check (several limits: one layered check, denied if any denies,
 * a deny charges none), so every PHP worker and every other language shares one count.
 *
 * - consume($tokens): `tokens` is the check's cost (1..1000000; ratelimitd has no 0-cost peek here).
 * - reserve(): an admitted check is a reservation to act now, or, on a policy with max_delay,
 *   after the delay ratelimitd booked (the tokens are charged: wait() sleeps until then, as
 *   Symfony's token bucket does); a delay beyond $maxTime throws MaxWaitDurationExceededException
 *   (the booking stands). A denied one throws MaxWaitDurationExceededException when Retry-After
 *   is beyond $maxTime, else ReserveNotSupportedException (as Symfony's sliding-window limiter does).
 * - reset(): the admin API (POST /v1/reset) for each limit; give the client the admin token
 *   when the server has one.
 */
final class RatelimitdLimiter implements LimiterInterface
{
    /** @var list<RatelimitdLimit> */
    private readonly array $limits;
    private readonly LimitChecker $checker;
    private ?Result $lastResult = null;

    /**
     * @param RatelimitdLimit|list<RatelimitdLimit> $limits
     * @param string $tenant a valid ratelimitd tenant (see Ratelimitd\Client\TenantId)
     */
    public function __construct(
        private readonly RateLimitClientInterface $client,
        RatelimitdLimit|array $limits,
        private readonly string $tenant,
        string $layeredPrefix = '/_layered/',
    ) {
        $this->limits = is_array($limits) ? array_values($limits) : [$limits];
        if ($this->limits === []) {
            throw new \InvalidArgumentException('RatelimitdLimiter needs at least one limit');
        }
        $this->checker = new LimitChecker($client, $layeredPrefix);
    }

    public function consume(int $tokens = 1): RateLimit
    {
        if ($tokens < 1) {
            throw new \InvalidArgumentException(sprintf('consume(%d): ratelimitd charges 1..1000000 units per check', $tokens));
        }
        $limits = array_map(
            static fn (RatelimitdLimit $l): RatelimitdLimit => new RatelimitdLimit($l->policy, $l->scope, $tokens, $l->failOpen),
            $this->limits,
        );
        $this->lastResult = $this->checker->decide($limits, $this->tenant);
        return SymfonyRateLimit::from($this->lastResult);
    }

    /** ratelimitd's own answer to the last consume() (degraded or not, headers), null before one. */
    public function lastResult(): ?Result
    {
        return $this->lastResult;
    }

    public function reserve(int $tokens = 1, ?float $maxTime = null): Reservation
    {
        $rateLimit = $this->consume($tokens);
        if ($rateLimit->isAccepted()) {
            $delay = ($this->lastResult?->delayMs ?? 0) / 1000;
            if ($maxTime !== null && $delay > $maxTime) {
                $message = sprintf('The tokens are booked in %.3F s, more than the %.3F s allowed.', $delay, $maxTime);
                throw new MaxWaitDurationExceededException($message, $rateLimit);
            }
            return new Reservation(microtime(true) + $delay, $rateLimit);
        }
        $wait = $rateLimit->getRetryAfter()->getTimestamp() - time();
        if ($maxTime !== null && $wait > $maxTime) {
            $message = sprintf('The tokens are available in %d s, more than the %.3F s allowed.', $wait, $maxTime);
            throw new MaxWaitDurationExceededException($message, $rateLimit);
        }
        throw new ReserveNotSupportedException(self::class);
    }

    public function reset(): void
    {
        foreach ($this->limits as $limit) {
            $this->client->reset($limit->policy, $this->tenant, $limit->scope);
        }
    }
}
