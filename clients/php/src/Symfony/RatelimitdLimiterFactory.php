<?php
// Symfony-style create(?string $key) for ratelimitd limiters: the key becomes the tenant.

declare(strict_types=1);

namespace Ratelimitd\Client\Symfony;

use Ratelimitd\Client\RateLimitClientInterface;
use Ratelimitd\Client\RatelimitdLimit;
use Ratelimitd\Client\TenantId;
use Symfony\Component\RateLimiter\LimiterInterface;

/**
 * The ratelimitd counterpart of a `framework.rate_limiter.<name>` factory: same create()
 * signature, so `$factory->create($request->getClientIp())->consume()` works unchanged.
 * Symfony 5.4's RateLimiterFactory is a final class with no interface (7.3 adds
 * RateLimiterFactoryInterface), so code type-hinting that class needs this one instead.
 */
final class RatelimitdLimiterFactory
{
    /** @param RatelimitdLimit|list<RatelimitdLimit> $limits */
    public function __construct(
        private readonly RateLimitClientInterface $client,
        private readonly RatelimitdLimit|array $limits,
        private readonly string $layeredPrefix = '/_layered/',
    ) {
    }

    /** A limiter for `key` (null: one limiter shared by everybody, tenant "shared"). */
    public function create(?string $key = null): LimiterInterface
    {
        return new RatelimitdLimiter($this->client, $this->limits, TenantId::of($key ?? 'shared', null), $this->layeredPrefix);
    }
}
