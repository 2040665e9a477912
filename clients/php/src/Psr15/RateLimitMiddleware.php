<?php
// PSR-15 middleware: asks ratelimitd before the handler runs, answers 429 on deny, adds the headers.

declare(strict_types=1);

namespace Ratelimitd\Client\Psr15;

use Psr\Http\Message\ResponseFactoryInterface;
use Psr\Http\Message\ResponseInterface;
use Psr\Http\Message\ServerRequestInterface;
use Psr\Http\Message\StreamFactoryInterface;
use Psr\Http\Server\MiddlewareInterface;
use Psr\Http\Server\RequestHandlerInterface;
use Ratelimitd\Client\DelayWait;
use Ratelimitd\Client\LimitChecker;
use Ratelimitd\Client\RateLimitClientInterface;
use Ratelimitd\Client\RatelimitdLimit;
use Ratelimitd\Client\Result;
use Ratelimitd\Client\TenantId;

/**
 * For any PSR-15 stack (Slim 4, Mezzio, Laminas Stratigility, ...): add it to a route or a
 * group with the limits of that route. Several limits are one layered check (LimitChecker).
 *
 * Denied: 429 JSON {"error":"rate_limited",...} with the limit headers, Retry-After and
 * Cache-Control: no-store; the handler never runs. A fail-closed answer while the limiter
 * cannot decide: 503 rate_limiter_unavailable. Allowed: the handler's response plus the limit
 * headers; the handler finds the Result in the request attribute RESULT_ATTRIBUTE.
 *
 * Admitted with a delay (a policy with max_delay or delay): by default the handler runs at
 * once; with $waitUpToMs the middleware sleeps a delay up to that bound first and answers a
 * longer one with 429 (DelayWait).
 */
final class RateLimitMiddleware implements MiddlewareInterface
{
    public const RESULT_ATTRIBUTE = 'ratelimitd.result';

    /** @var \Closure(ServerRequestInterface): list<RatelimitdLimit> */
    private readonly \Closure $limitsOf;
    /** @var \Closure(ServerRequestInterface): ?string|null */
    private readonly ?\Closure $tenantResolver;
    private readonly LimitChecker $checker;
    private readonly DelayWait $delayWait;

    /**
     * @param RatelimitdLimit|list<RatelimitdLimit>|callable(ServerRequestInterface): list<RatelimitdLimit> $limits
     *        the route's limits, or a function of the request (an empty list: not limited)
     * @param callable(ServerRequestInterface): ?string|null $tenantResolver the authenticated id;
     *        null or no id: "ip:" + REMOTE_ADDR (put a trusted-proxy middleware in front when behind one)
     * @param int|null $waitUpToMs a delayed admit: null go ahead at once; else sleep a delay up to
     *        this many ms before the handler runs, and deny a longer one (0..DelayWait::MAX_WAIT_MS)
     */
    public function __construct(
        RateLimitClientInterface $client,
        private readonly ResponseFactoryInterface $responses,
        private readonly StreamFactoryInterface $streams,
        RatelimitdLimit|array|callable $limits,
        ?callable $tenantResolver = null,
        string $layeredPrefix = '/_layered/',
        ?int $waitUpToMs = null,
    ) {
        if (is_callable($limits) && !$limits instanceof RatelimitdLimit) {
            $this->limitsOf = \Closure::fromCallable($limits);
        } else {
            $list = is_array($limits) ? array_values($limits) : [$limits];
            $this->limitsOf = static fn (): array => $list;
        }
        $this->tenantResolver = $tenantResolver === null ? null : \Closure::fromCallable($tenantResolver);
        $this->checker = new LimitChecker($client, $layeredPrefix);
        $this->delayWait = new DelayWait($waitUpToMs);
    }

    public function process(ServerRequestInterface $request, RequestHandlerInterface $handler): ResponseInterface
    {
        $limits = ($this->limitsOf)($request);
        if ($limits === []) {
            return $handler->handle($request);
        }
        $id = $this->tenantResolver !== null ? ($this->tenantResolver)($request) : null;
        $ip = $request->getServerParams()['REMOTE_ADDR'] ?? null;
        $result = $this->checker->decide($limits, TenantId::of($id, is_string($ip) ? $ip : null), $request->getMethod());
        $result = $this->delayWait->apply($result);
        if (!$result->allowed) {
            return $this->deny($result);
        }
        $response = $handler->handle($request->withAttribute(self::RESULT_ATTRIBUTE, $result));
        foreach ($result->headers() as $name => $value) {
            $response = $response->withHeader($name, $value);
        }
        return $response;
    }

    private function deny(Result $result): ResponseInterface
    {
        // A fail-closed answer while the limiter cannot decide is our outage, not the
        // client's excess: 503, so clients and monitors do not blame the caller.
        [$status, $error, $detail] = $result->degraded
            ? [503, 'rate_limiter_unavailable', 'The rate limiter cannot be reached; retry shortly.']
            : [429, 'rate_limited', sprintf('Too many requests for policy "%s"; retry in %d s.', $result->policy ?? '', $result->retryAfter)];
        $body = json_encode(['error' => $error, 'detail' => $detail, 'retry_after' => $result->retryAfter], JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES);
        $response = $this->responses->createResponse($status)
            ->withHeader('Content-Type', 'application/json')
            ->withBody($this->streams->createStream($body));
        foreach ($result->headers() as $name => $value) {
            $response = $response->withHeader($name, $value);
        }
        return $response
            ->withHeader('Retry-After', (string) $result->retryAfter)
            ->withHeader('Cache-Control', 'no-store');
    }
}
