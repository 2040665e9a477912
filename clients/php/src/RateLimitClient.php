<?php
// Asks ratelimitd "may this tenant spend `cost` units of this policy now?" over one kept-alive curl handle.

declare(strict_types=1);

namespace Ratelimitd\Client;

use Ratelimitd\Client\Exception\CheckRejectedException;

/**
 * A client for ratelimitd's POST /v1/check.
 *
 * One instance holds one curl handle, so consecutive checks reuse one keep-alive TCP
 * connection (create the client once per worker process, not once per request). Every
 * call is bounded by a short timeout: when ratelimitd is down, hung or answers garbage,
 * check() returns at once with the caller's fail-open or fail-closed choice instead of
 * making the application wait on its limiter.
 */
final class RateLimitClient
{
    private \CurlHandle $curl;
    private string $checkUrl;
    private int $connectionsOpened = 0;

    /**
     * @param string   $baseUrl          where ratelimitd listens, e.g. http://127.0.0.1:8080
     * @param int      $timeoutMs        upper bound of one whole check, connect included
     * @param bool     $failOpen         default answer when ratelimitd cannot be asked:
     *                                   true = allow (fail open), false = deny (fail closed)
     * @param int|null $connectTimeoutMs bound of the TCP connect alone; default: $timeoutMs
     */
    public function __construct(
        string $baseUrl = 'http://127.0.0.1:8080',
        private readonly int $timeoutMs = 50,
        private readonly bool $failOpen = true,
        ?int $connectTimeoutMs = null,
    ) {
        if ($timeoutMs < 1) {
            throw new \InvalidArgumentException('timeoutMs must be at least 1 ms');
        }
        $this->checkUrl = rtrim($baseUrl, '/') . '/v1/check';
        $curl = curl_init();
        if ($curl === false) {
            throw new \RuntimeException('curl_init failed');
        }
        $this->curl = $curl;
        curl_setopt_array($this->curl, [
            CURLOPT_URL => $this->checkUrl,
            CURLOPT_POST => true,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_HTTP_VERSION => CURL_HTTP_VERSION_1_1,
            // "Expect:" stops curl from waiting for a 100-continue on larger bodies.
            CURLOPT_HTTPHEADER => ['Content-Type: application/json', 'Accept: application/json', 'Expect:'],
            CURLOPT_TIMEOUT_MS => $timeoutMs,
            CURLOPT_CONNECTTIMEOUT_MS => $connectTimeoutMs ?? $timeoutMs,
            // Without NOSIGNAL libcurl's resolver may use SIGALRM, which cannot time out
            // below one second: sub-second timeouts need it.
            CURLOPT_NOSIGNAL => true,
            CURLOPT_TCP_NODELAY => true,
            CURLOPT_FOLLOWLOCATION => false,
        ]);
    }

    public function __destruct()
    {
        curl_close($this->curl);
    }

    /**
     * Checks (and, when allowed, consumes) `cost` units of `policy` for `tenant` on `scope`.
     *
     * @param string    $policy   a policy name from ratelimitd's registry
     * @param string    $tenant   who is limited: an account or API-key id (never the secret),
     *                            1..128 bytes of [A-Za-z0-9._:@-], e.g. "tenant_42" or "ip:203.0.113.9"
     * @param string    $scope    what is limited, e.g. "global" or "POST_/v1/exports"
     * @param int       $cost     units this request uses, 1..1000000
     * @param bool|null $failOpen this call's answer when ratelimitd cannot be asked; null: the client's default
     * @param string|null $plan   the tenant's plan when the app knows it (e.g. "pro"); null: the registry decides
     *
     * @throws CheckRejectedException when ratelimitd refuses the request itself (400 unknown_policy, ...)
     */
    public function check(string $policy, string $tenant, string $scope = 'global', int $cost = 1, ?bool $failOpen = null, ?string $plan = null): Result
    {
        $failOpen ??= $this->failOpen;
        $headers = [];
        $fields = ['policy' => $policy, 'tenant' => $tenant, 'scope' => $scope, 'cost' => $cost];
        if ($plan !== null) {
            $fields['plan'] = $plan;
        }
        curl_setopt_array($this->curl, [
            CURLOPT_POSTFIELDS => json_encode(
                $fields,
                JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES,
            ),
            CURLOPT_HEADERFUNCTION => static function ($curl, string $line) use (&$headers): int {
                if (str_starts_with($line, 'HTTP/')) {
                    $headers = []; // a new status line (e.g. after 100 Continue) starts a new header block
                } elseif (($colon = strpos($line, ':')) !== false) {
                    $headers[strtolower(trim(substr($line, 0, $colon)))] = trim(substr($line, $colon + 1));
                }
                return strlen($line);
            },
        ]);

        $body = curl_exec($this->curl);
        $this->connectionsOpened += (int) curl_getinfo($this->curl, CURLINFO_NUM_CONNECTS);
        if ($body === false || $body === true) {
            $reason = curl_errno($this->curl) === CURLE_OPERATION_TIMEDOUT ? 'timeout' : 'unreachable';
            return Result::unavailable($failOpen, $reason, $policy);
        }

        $status = (int) curl_getinfo($this->curl, CURLINFO_RESPONSE_CODE);
        $data = json_decode($body, true);
        if (!is_array($data)) {
            return Result::unavailable($failOpen, 'bad_response', $policy);
        }
        // 200 allowed, 429 denied, 503 ratelimitd's own fail-closed answer for a policy with
        // on_store_error: deny: all three are verdicts, and the server's policy decided them.
        if (in_array($status, [200, 429, 503], true) && array_key_exists('allowed', $data)) {
            return Result::fromVerdict($data, $headers);
        }
        if ($status >= 400 && $status < 500 && isset($data['error'])) {
            throw new CheckRejectedException($status, (string) $data['error'], (string) ($data['detail'] ?? ''));
        }
        // Anything else (a proxy's 502, an unexpected shape) says nothing about the limit.
        return Result::unavailable($failOpen, 'bad_response', $policy);
    }

    /** The timeout of one check, in milliseconds. */
    public function timeoutMs(): int
    {
        return $this->timeoutMs;
    }

    /**
     * How many TCP connections this client has opened so far: stays at 1 while keep-alive
     * works, which is what makes a check cost one round trip and no handshake.
     */
    public function connectionsOpened(): int
    {
        return $this->connectionsOpened;
    }
}
