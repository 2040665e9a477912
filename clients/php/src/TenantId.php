<?php
// Turns "who is calling" (an account id, else the client address) into a valid ratelimitd tenant.

declare(strict_types=1);

namespace Ratelimitd\Client;

/** The tenant rules every framework integration shares. */
final class TenantId
{
    /**
     * The authenticated id when there is one, else "ip:" + the client address. ratelimitd
     * accepts 1..128 bytes of [A-Za-z0-9._:@-]; an id outside that (an e-mail with "+", a
     * long DN) is replaced by a stable digest rather than rejected, so every user still gets
     * a budget of their own.
     */
    public static function of(?string $authenticatedId, ?string $clientIp): string
    {
        $tenant = $authenticatedId;
        if ($tenant === null || $tenant === '') {
            $tenant = 'ip:' . ($clientIp ?? 'unknown');
        }
        if (preg_match('/^[A-Za-z0-9._:@-]{1,128}$/D', $tenant) !== 1) {
            $tenant = 'sha256:' . substr(hash('sha256', $tenant), 0, 40);
        }
        return $tenant;
    }
}
