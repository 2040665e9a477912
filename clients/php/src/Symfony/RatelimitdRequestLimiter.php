<?php
// Symfony's RequestRateLimiterInterface decided by ratelimitd, e.g. for security's login_throttling.limiter.

declare(strict_types=1);

namespace Ratelimitd\Client\Symfony;

use Ratelimitd\Client\RateLimitClientInterface;
use Ratelimitd\Client\RatelimitdLimit;
use Ratelimitd\Client\TenantId;
use Symfony\Component\HttpFoundation\RateLimiter\RequestRateLimiterInterface;
use Symfony\Component\HttpFoundation\Request;
use Symfony\Component\RateLimiter\RateLimit;

/**
 * Limits requests through ratelimitd: the tenant comes from the request (by default "ip:" +
 * the client IP; forLogin(): the username being tried + the IP), the limits from the config.
 * Every PHP process asks the same ratelimitd, so counts hold across workers and hosts.
 */
final class RatelimitdRequestLimiter implements RequestRateLimiterInterface
{
    /** Request attribute holding the RateLimit of the last consume() for this request. */
    public const RATE_LIMIT_ATTRIBUTE = '_ratelimitd_rate_limit';
    /** Request attribute holding ratelimitd's Result of that consume(). */
    public const RESULT_ATTRIBUTE = '_ratelimitd_result';

    /** @var \Closure(Request): string */
    private readonly \Closure $tenantOf;

    /**
     * @param RatelimitdLimit|list<RatelimitdLimit> $limits
     * @param callable(Request): ?string|null $tenantResolver the id to limit; null: the client IP
     */
    public function __construct(
        private readonly RateLimitClientInterface $client,
        private readonly RatelimitdLimit|array $limits,
        ?callable $tenantResolver = null,
        private readonly string $layeredPrefix = '/_layered/',
    ) {
        $resolver = $tenantResolver === null ? null : \Closure::fromCallable($tenantResolver);
        $this->tenantOf = static fn (Request $r): string => TenantId::of($resolver !== null ? $resolver($r) : null, $r->getClientIp());
    }

    /**
     * For security's login_throttling: one budget per (username tried, client IP), as
     * Symfony's DefaultLoginRateLimiter keys its local limiter. The firewall puts the
     * username in the `_security.last_username` attribute before it consumes.
     *
     * @param RatelimitdLimit|list<RatelimitdLimit> $limits
     */
    public static function forLogin(RateLimitClientInterface $client, RatelimitdLimit|array $limits): self
    {
        return new self($client, $limits, static function (Request $r): string {
            $username = (string) $r->attributes->get('_security.last_username', '');
            return 'login:' . hash('sha256', mb_strtolower($username) . '|' . ($r->getClientIp() ?? ''));
        });
    }

    public function consume(Request $request): RateLimit
    {
        $limiter = $this->limiterFor($request);
        $rateLimit = $limiter->consume();
        // Kept for the response: LoginThrottledFailureHandler answers 429 with its Retry-After
        // (or 503 when the limiter could not decide and failed closed).
        $request->attributes->set(self::RATE_LIMIT_ATTRIBUTE, $rateLimit);
        $request->attributes->set(self::RESULT_ATTRIBUTE, $limiter->lastResult());
        return $rateLimit;
    }

    public function reset(Request $request): void
    {
        $this->limiterFor($request)->reset();
    }

    private function limiterFor(Request $request): RatelimitdLimiter
    {
        return new RatelimitdLimiter($this->client, $this->limits, ($this->tenantOf)($request), $this->layeredPrefix);
    }
}
