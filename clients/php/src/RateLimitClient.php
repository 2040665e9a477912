<?php
// Asks ratelimitd "may this tenant spend `cost` units of this policy now?" over one kept-alive curl handle.

declare(strict_types=1);

namespace Ratelimitd\Client;

use Psr\Log\LoggerInterface;
use Ratelimitd\Client\Exception\CheckRejectedException;
use Ratelimitd\Client\Exception\RateLimitException;

/**
 * A client for ratelimitd's POST /v1/check and POST /v1/report (and the admin POST /v1/reset).
 *
 * One instance holds one curl handle, so consecutive checks reuse one keep-alive TCP
 * connection (create the client once per worker process, not once per request). Every
 * call is bounded by a short timeout: when ratelimitd is down, hung or answers garbage,
 * check() returns at once with the caller's fail-open or fail-closed choice instead of
 * making the application wait on its limiter. The handle is freed with the object (no
 * destructor: curl_close() is a no-op since PHP 8.0 and deprecated in 8.5).
 */
final class RateLimitClient implements RateLimitClientInterface
{
    /** Four times the server's default store_timeout (50 ms), so its verdict arrives first. */
    public const DEFAULT_TIMEOUT_MS = 200;

    private \CurlHandle $curl;
    private string $baseUrl;
    private int $connectionsOpened = 0;
    private bool $persistent = false;
    /** @var array<string,true> the policies whose answers said on_store_error: deny */
    private array $announcedFailClosed = [];

    /** How long APCu keeps an announced failure mode: a reload may change it. */
    private const ANNOUNCED_TTL_S = 3600;

    /**
     * @param string   $baseUrl          where ratelimitd listens, e.g. http://127.0.0.1:8080
     * @param int      $timeoutMs        upper bound of one whole check, connect included. Keep it
     *                                   well above the server's store_timeout (50 ms by default):
     *                                   when Redis is slow the server answers by each policy's
     *                                   on_store_error at that deadline, and a client that gave up
     *                                   first would put its own failOpen in place of a policy's deny
     * @param bool     $failOpen         default answer when ratelimitd cannot be asked:
     *                                   true = allow (fail open), false = deny (fail closed).
     *                                   A policy whose answers say on_store_error "deny" is
     *                                   denied instead; a per-call failOpen wins over both
     * @param int|null $connectTimeoutMs bound of the TCP connect alone; default: $timeoutMs
     * @param LoggerInterface|null $logger told (warning) about every degraded answer
     * @param bool     $persistentConnections keep connections across requests of one PHP worker
     *                                   (php-fpm) where PHP offers it: curl_share_init_persistent(),
     *                                   PHP 8.5+; on older PHP the connection lives as long as the client
     * @param string|null $adminToken    the server's admin token, for reset(); null or '': none sent
     */
    public function __construct(
        string $baseUrl = 'http://127.0.0.1:8080',
        private readonly int $timeoutMs = self::DEFAULT_TIMEOUT_MS,
        private readonly bool $failOpen = true,
        ?int $connectTimeoutMs = null,
        private readonly ?LoggerInterface $logger = null,
        bool $persistentConnections = false,
        private readonly ?string $adminToken = null,
    ) {
        if ($timeoutMs < 1) {
            throw new \InvalidArgumentException('timeoutMs must be at least 1 ms');
        }
        $this->baseUrl = rtrim($baseUrl, '/');
        $curl = curl_init();
        if ($curl === false) {
            throw new \RuntimeException('curl_init failed');
        }
        $this->curl = $curl;
        curl_setopt_array($this->curl, [
            CURLOPT_POST => true,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_HTTP_VERSION => CURL_HTTP_VERSION_1_1,
            CURLOPT_TIMEOUT_MS => $timeoutMs,
            CURLOPT_CONNECTTIMEOUT_MS => $connectTimeoutMs ?? $timeoutMs,
            // Without NOSIGNAL libcurl's resolver may use SIGALRM, which cannot time out
            // below one second: sub-second timeouts need it.
            CURLOPT_NOSIGNAL => true,
            CURLOPT_TCP_NODELAY => true,
            CURLOPT_FOLLOWLOCATION => false,
        ]);
        if ($persistentConnections && function_exists('curl_share_init_persistent')) {
            // PHP 8.5+: the share handle, and the connections in it, outlive this request.
            $share = curl_share_init_persistent([CURL_LOCK_DATA_CONNECTION, CURL_LOCK_DATA_DNS]);
            curl_setopt($this->curl, CURLOPT_SHARE, $share);
            $this->persistent = true;
        }
    }

    public function check(string $policy, string $tenant, string $scope = 'global', int $cost = 1, ?bool $failOpen = null, ?string $plan = null): Result
    {
        $fields = ['policy' => $policy, 'tenant' => $tenant, 'scope' => $scope, 'cost' => $cost];
        if ($plan !== null) {
            $fields['plan'] = $plan;
        }
        return $this->decide($fields, $failOpen ?? $this->failOpenFor($policy), $policy);
    }

    public function checkRoute(string $method, string $path, string $tenant, ?string $scope = null, int $cost = 1, ?bool $failOpen = null): Result
    {
        $fields = ['method' => $method, 'path' => $path, 'tenant' => $tenant, 'cost' => $cost];
        if ($scope !== null) {
            $fields['scope'] = $scope;
        }
        return $this->decide($fields, $failOpen ?? $this->failOpen, null);
    }

    public function report(string $policy, string $tenant, int $cost, string $scope = 'global', ?string $plan = null): Result
    {
        $fields = ['policy' => $policy, 'tenant' => $tenant, 'scope' => $scope, 'cost' => $cost];
        if ($plan !== null) {
            $fields['plan'] = $plan;
        }
        return $this->decide($fields, $this->failOpenFor($policy), $policy, '/v1/report');
    }

    public function release(string $policy, string $tenant, string $lease, string $scope = 'global'): bool
    {
        $answer = $this->post('/v1/release', ['policy' => $policy, 'tenant' => $tenant, 'scope' => $scope, 'lease' => $lease]);
        if ($answer === null) {
            throw new RateLimitException('ratelimitd could not be reached for a release');
        }
        [$status, $data] = $answer;
        if ($status === 200 && is_array($data)) {
            return ($data['released'] ?? false) === true;
        }
        throw new CheckRejectedException($status, (string) ($data['error'] ?? 'bad_response'), (string) ($data['detail'] ?? ''));
    }

    public function reset(string $policy, string $tenant, string $scope = 'global'): bool
    {
        $answer = $this->post('/v1/reset', ['policy' => $policy, 'tenant' => $tenant, 'scope' => $scope]);
        if ($answer === null) {
            throw new RateLimitException('ratelimitd could not be reached for a reset');
        }
        [$status, $data] = $answer;
        if ($status === 200 && is_array($data)) {
            return ($data['reset'] ?? false) === true;
        }
        throw new CheckRejectedException($status, (string) ($data['error'] ?? 'bad_response'), (string) ($data['detail'] ?? ''));
    }

    /** The timeout of one check, in milliseconds. */
    public function timeoutMs(): int
    {
        return $this->timeoutMs;
    }

    /** Whether connections outlive the request (persistentConnections on PHP 8.5+). */
    public function persistent(): bool
    {
        return $this->persistent;
    }

    /**
     * How many TCP connections this client has opened so far: stays at 1 while keep-alive
     * works, which is what makes a check cost one round trip and no handshake.
     */
    public function connectionsOpened(): int
    {
        return $this->connectionsOpened;
    }

    /** @param array<string,string|int> $fields */
    private function decide(array $fields, bool $failOpen, ?string $policy, string $path = '/v1/check'): Result
    {
        $answer = $this->post($path, $fields, $headers, $timedOut);
        if ($answer === null) {
            return $this->degraded(Result::unavailable($failOpen, $timedOut ? 'timeout' : 'unreachable', $policy));
        }
        [$status, $data] = $answer;
        if (!is_array($data)) {
            return $this->degraded(Result::unavailable($failOpen, 'bad_response', $policy));
        }
        // 200 allowed, 429 denied, 503 ratelimitd's own fail-closed answer for a policy with
        // on_store_error: deny: all three are verdicts, and the server's policy decided them.
        if (in_array($status, [200, 429, 503], true) && array_key_exists('allowed', $data)) {
            $this->remember($policy, $data['on_store_error'] ?? null);
            $result = Result::fromVerdict($data, $headers);
            return $result->degraded ? $this->degraded($result) : $result;
        }
        if ($status >= 400 && $status < 500 && isset($data['error'])) {
            throw new CheckRejectedException($status, (string) $data['error'], (string) ($data['detail'] ?? ''));
        }
        // Anything else (a proxy's 502, an unexpected shape) says nothing about the limit.
        return $this->degraded(Result::unavailable($failOpen, 'bad_response', $policy));
    }

    /**
     * What to answer for $policy when ratelimitd cannot be asked: deny when its answers said
     * on_store_error "deny", so a client never admits what the server would refuse; else the
     * client's default.
     */
    private function failOpenFor(string $policy): bool
    {
        if (isset($this->announcedFailClosed[$policy])) {
            return false;
        }
        if (self::apcuEnabled() && apcu_fetch($this->announcedKey($policy)) === true) {
            $this->announcedFailClosed[$policy] = true;
            return false;
        }
        return $this->failOpen;
    }

    /**
     * Keeps what an answer said of its policy's failure mode (route checks name no policy):
     * a fail-closed policy says on_store_error "deny"; an answer without it is a fail-open
     * policy, for which the client's own default stands.
     */
    private function remember(?string $policy, mixed $onStoreError): void
    {
        if ($policy === null) {
            return;
        }
        $failClosed = $onStoreError === 'deny';
        if (isset($this->announcedFailClosed[$policy]) === $failClosed) {
            return;
        }
        if ($failClosed) {
            $this->announcedFailClosed[$policy] = true;
        } else {
            unset($this->announcedFailClosed[$policy]);
        }
        // Under php-fpm the client lives for one request; APCu carries what it learned to the
        // worker's next requests, so the first check after ratelimitd goes away is covered too.
        if (self::apcuEnabled()) {
            $failClosed
                ? apcu_store($this->announcedKey($policy), true, self::ANNOUNCED_TTL_S)
                : apcu_delete($this->announcedKey($policy));
        }
    }

    private function announcedKey(string $policy): string
    {
        return 'ratelimitd:on_store_error:' . $this->baseUrl . ':' . $policy;
    }

    private static function apcuEnabled(): bool
    {
        return function_exists('apcu_enabled') && apcu_enabled();
    }

    /** A degraded answer is worth a warning: limits are not being enforced as configured. */
    private function degraded(Result $result): Result
    {
        if ($this->logger === null) {
            return $result;
        }
        $context = [
            'reason' => $result->degradedReason,
            'outcome' => $result->allowed ? 'allowed' : 'denied',
            'policy' => $result->policy ?? '(route)',
            'url' => $this->baseUrl,
        ];
        // The message reads whole by itself: not every PSR-3 logger interpolates placeholders.
        $message = sprintf(
            'ratelimitd answer is degraded (%s): %s without a counter for policy %s',
            $context['reason'],
            $context['outcome'],
            $context['policy'],
        );
        $this->logger->warning($message, $context);
        return $result;
    }

    /**
     * One POST of a JSON body. Returns [status, decoded body] or null when no HTTP answer came;
     * $headers gets the answer's headers (lower-cased names), $timedOut why there was none.
     *
     * @param array<string,string|int> $fields
     * @param array<string,string>     $headers
     * @return array{0:int,1:mixed}|null
     */
    private function post(string $path, array $fields, ?array &$headers = [], ?bool &$timedOut = false): ?array
    {
        $headers = [];
        $requestHeaders = ['Content-Type: application/json', 'Accept: application/json', 'Expect:'];
        if ($this->adminToken !== null && $this->adminToken !== '' && $path !== '/v1/check') {
            $requestHeaders[] = 'Authorization: Bearer ' . $this->adminToken;
        }
        curl_setopt_array($this->curl, [
            CURLOPT_URL => $this->baseUrl . $path,
            // "Expect:" stops curl from waiting for a 100-continue on larger bodies.
            CURLOPT_HTTPHEADER => $requestHeaders,
            CURLOPT_POSTFIELDS => json_encode($fields, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES),
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
            $timedOut = curl_errno($this->curl) === CURLE_OPERATION_TIMEDOUT;
            return null;
        }
        return [(int) curl_getinfo($this->curl, CURLINFO_RESPONSE_CODE), json_decode($body, true)];
    }
}
