<?php
// The verdict of one check: allowed or not, the numbers, and the headers to copy onto the app's response.

declare(strict_types=1);

namespace Ratelimitd\Client;

use Ratelimitd\Client\Exception\RateLimitExceededException;

final class Result
{
    /**
     * ratelimitd's headers that belong on the application's own response (docs/api.md "Headers"),
     * in their canonical spelling. Cache-Control is deliberately not among them: an allowed
     * response of the app keeps its own caching rules.
     */
    private const COPIED_HEADERS = [
        'x-ratelimit-limit' => 'X-RateLimit-Limit',
        'x-ratelimit-remaining' => 'X-RateLimit-Remaining',
        'x-ratelimit-reset' => 'X-RateLimit-Reset',
        'ratelimit-policy' => 'RateLimit-Policy',
        'ratelimit' => 'RateLimit',
        'retry-after' => 'Retry-After',
    ];

    /**
     * @param bool        $allowed        may the request go on
     * @param int|null    $limit          the quota of the reported window; null when unknown (degraded)
     * @param int|null    $remaining      units left in that window; null when unknown
     * @param int|null    $reset          Unix epoch seconds when the window resets; null when unknown
     * @param int         $retryAfter     whole seconds to wait; >= 1 when denied, 0 when allowed
     * @param bool        $degraded       the verdict was not decided by a counter (store or sidecar down)
     * @param string|null $degradedReason store_unavailable | store_timeout (ratelimitd's own fallback),
     *                                    or unreachable | timeout | bad_response (this client's fallback)
     * @param array<string,string> $headers canonical name => value, see headers()
     * @param string|null $lease          a concurrency policy's lease, held until release() or
     *                                    its expiry (docs/leases.md); null for other policies
     * @param int         $delayMs        a policy with max_delay: admitted (the unit is charged), to
     *                                    go ahead after this many ms; 0 to go ahead now
     */
    public function __construct(
        public readonly bool $allowed,
        public readonly ?int $limit,
        public readonly ?int $remaining,
        public readonly ?int $reset,
        public readonly int $retryAfter,
        public readonly ?string $policy = null,
        public readonly bool $degraded = false,
        public readonly ?string $degradedReason = null,
        private readonly array $headers = [],
        public readonly ?string $lease = null,
        public readonly int $delayMs = 0,
    ) {
    }

    /**
     * Builds a Result from a ratelimitd verdict (200, 429, or a 503 fail-closed answer).
     *
     * @param array<string,mixed>  $body
     * @param array<string,string> $rawHeaders lower-cased name => value, as received
     */
    public static function fromVerdict(array $body, array $rawHeaders): self
    {
        $headers = [];
        foreach (self::COPIED_HEADERS as $lower => $canonical) {
            if (isset($rawHeaders[$lower])) {
                $headers[$canonical] = $rawHeaders[$lower];
            }
        }
        $allowed = ($body['allowed'] ?? false) === true;
        $degraded = ($body['degraded'] ?? false) === true;
        $retryAfter = self::intOrNull($body['retry_after'] ?? null) ?? 0;
        if (!$allowed && $retryAfter < 1) {
            // A deny always tells the caller when to come back; a fail-closed 503 carries
            // it only as a header.
            $retryAfter = max(1, self::intOrNull($rawHeaders['retry-after'] ?? null) ?? 1);
        }

        return new self(
            allowed: $allowed,
            limit: self::intOrNull($body['limit'] ?? null),
            remaining: self::intOrNull($body['remaining'] ?? null),
            reset: self::intOrNull($body['reset'] ?? null),
            retryAfter: $retryAfter,
            policy: is_string($body['policy'] ?? null) ? $body['policy'] : null,
            degraded: $degraded,
            degradedReason: $degraded ? ($rawHeaders['x-ratelimit-degraded'] ?? 'store_unavailable') : null,
            headers: $headers,
            lease: is_string($body['lease'] ?? null) ? $body['lease'] : null,
            delayMs: $allowed ? max(0, self::intOrNull($body['delay_ms'] ?? null) ?? 0) : 0,
        );
    }

    /**
     * The answer when ratelimitd itself could not be asked (down, hung, garbage): the caller's
     * fail-open or fail-closed choice, with no numbers since none are known.
     */
    public static function unavailable(bool $failOpen, string $reason, ?string $policy = null): self
    {
        return new self(
            allowed: $failOpen,
            limit: null,
            remaining: null,
            reset: null,
            retryAfter: $failOpen ? 0 : 1,
            policy: $policy,
            degraded: true,
            degradedReason: $reason,
            headers: $failOpen ? [] : ['Retry-After' => '1'],
        );
    }

    /**
     * The rate-limit headers to set on the application's response: X-RateLimit-Limit,
     * X-RateLimit-Remaining, X-RateLimit-Reset, RateLimit-Policy, RateLimit, and Retry-After
     * when denied. Empty for unlimited routes (policy "none") and fail-open answers.
     *
     * @return array<string,string>
     */
    public function headers(): array
    {
        return $this->headers;
    }

    /**
     * Returns this result when allowed; otherwise throws, so a caller can write
     * `$client->check(...)->ensureAllowed();` and turn the exception into its 429 (or 503).
     *
     * @throws RateLimitExceededException carrying retryAfter, the headers and this result
     */
    public function ensureAllowed(): self
    {
        if (!$this->allowed) {
            throw new RateLimitExceededException($this);
        }
        return $this;
    }

    private static function intOrNull(mixed $value): ?int
    {
        if (is_int($value)) {
            return $value;
        }
        if (is_string($value) && preg_match('/^\s*(\d+)\s*$/', $value, $m) === 1) {
            return (int) $m[1];
        }
        return null;
    }
}
