<?php
// Verifies ratelimitd's quota webhook events (docs/operations.md "Quota webhooks").

declare(strict_types=1);

namespace Ratelimitd\Client;

/**
 * RateLimit-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" with the target's
 * secret>. A receiver checks it before it trusts the body:
 *
 *     $body = file_get_contents('php://input');
 *     if (!Webhook::verify($body, $_SERVER['HTTP_RATELIMIT_SIGNATURE'] ?? '', $secret)) {
 *         http_response_code(400);
 *         exit;
 *     }
 *     $event = json_decode($body, true);  // id, type, policy, tenant, scope, threshold, ...
 *
 * Events may arrive more than once (a retry after a lost answer): keep the ids seen within
 * the tolerance and drop repeats.
 */
final class Webhook
{
    /**
     * True when $signatureHeader signs exactly $body with $secret, and its time is within
     * $tolerance seconds of this host's clock (older or newer: a replay, or a clock to fix).
     * The comparison takes constant time. Unknown parts of the header (a future v2=) are
     * ignored; several v1= are accepted when one matches (a secret being rotated). $now: this
     * host's clock unless given (tests).
     */
    public static function verify(
        string $body,
        string $signatureHeader,
        string $secret,
        int $tolerance = 300,
        ?int $now = null,
    ): bool
    {
        $time = null;
        $signatures = [];
        foreach (explode(',', $signatureHeader) as $part) {
            $pair = explode('=', trim($part), 2);
            if (count($pair) !== 2) {
                continue;
            }
            [$name, $value] = $pair;
            if ($name === 't' && preg_match('/^\d{1,12}$/D', $value) === 1) {
                $time = (int) $value;
            } elseif ($name === 'v1' && preg_match('/^[0-9a-f]{64}$/D', $value) === 1) {
                $signatures[] = $value;
            }
        }
        if ($time === null || $signatures === [] || $secret === '') {
            return false;
        }
        if (abs(($now ?? time()) - $time) > $tolerance) {
            return false;
        }
        $expected = hash_hmac('sha256', $time . '.' . $body, $secret);
        $matched = false;
        foreach ($signatures as $signature) {
            // Every candidate is compared, so the time taken does not say which one matched.
            $matched = hash_equals($expected, $signature) || $matched;
        }
        return $matched;
    }
}
