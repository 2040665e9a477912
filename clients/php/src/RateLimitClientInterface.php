<?php
// What callers depend on: a check by policy, a check by route (layered limits), and an admin reset.

declare(strict_types=1);

namespace Ratelimitd\Client;

use Ratelimitd\Client\Exception\CheckRejectedException;

/**
 * The contract of RateLimitClient, so applications can double it in tests and swap it in a
 * container. Every method answers within the client's timeout; only a caller bug throws.
 */
interface RateLimitClientInterface
{
    /**
     * Checks (and, when allowed, consumes) `cost` units of `policy` for `tenant` on `scope`.
     *
     * @param bool|null   $failOpen this call's answer when ratelimitd cannot be asked; null: the client's default
     * @param string|null $plan     the tenant's plan when the app knows it; null: the registry decides
     *
     * @throws CheckRejectedException when ratelimitd refuses the request itself (400 unknown_policy, ...)
     */
    public function check(string $policy, string $tenant, string $scope = 'global', int $cost = 1, ?bool $failOpen = null, ?string $plan = null): Result;

    /**
     * Checks the limits of the ratelimitd route that `method` + `path` resolve to: on a layered
     * route (`limits:` in ratelimitd's config) every limit is decided in one atomic call,
     * denied if any denies, and a denial charges none of them. Result::$policy lists the
     * policies that decided, comma-separated, in the route's order.
     *
     * @param string|null $scope null: the route's scope, else "global"
     *
     * @throws CheckRejectedException when ratelimitd refuses the request itself
     */
    public function checkRoute(string $method, string $path, string $tenant, ?string $scope = null, int $cost = 1, ?bool $failOpen = null): Result;

    /**
     * Charges `cost` units after the fact (POST /v1/report): without asking, into debt if need
     * be (later checks are denied until time repays it); a negative cost refunds what a check
     * reserved, never above the quota. Returns the state after the charge (allowed is true);
     * degraded as check() when ratelimitd cannot be reached (a report then charged nothing).
     * A 400 (a refund on a sliding_log policy, a bad cost) throws CheckRejectedException.
     */
    public function report(string $policy, string $tenant, int $cost, string $scope = 'global', ?string $plan = null): Result;

    /**
     * Frees the slot of a concurrency policy that check() admitted (POST /v1/release), with
     * the lease its Result carries. A slot not released comes back when its lease expires.
     *
     * @return bool true when the lease was held; false when it was unknown, already released
     *              or expired (a retried release is harmless)
     *
     * @throws CheckRejectedException when ratelimitd refuses it (400: a malformed lease, not a concurrency policy)
     * @throws Exception\RateLimitException when ratelimitd cannot be reached (the lease expires on its own)
     */
    public function release(string $policy, string $tenant, string $lease, string $scope = 'global'): bool;

    /**
     * Forgets the state of one key through the admin API (POST /v1/reset): the next check
     * of that policy, tenant and scope starts afresh. Needs the admin token when the server has one.
     *
     * @return bool true when there was state to forget
     *
     * @throws CheckRejectedException when ratelimitd refuses the reset (403 admin_disabled, 401, 400)
     * @throws Exception\RateLimitException when ratelimitd cannot be reached
     */
    public function reset(string $policy, string $tenant, string $scope = 'global'): bool;
}
