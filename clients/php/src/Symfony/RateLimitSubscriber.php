<?php
// Symfony kernel subscriber: asks ratelimitd before the controller runs, answers 429 on deny, adds the headers.

declare(strict_types=1);

namespace Ratelimitd\Client\Symfony;

use Ratelimitd\Client\RateLimitClientInterface;
use Ratelimitd\Client\Result;
use Symfony\Component\EventDispatcher\EventSubscriberInterface;
use Symfony\Component\HttpFoundation\JsonResponse;
use Symfony\Component\HttpFoundation\Request;
use Symfony\Component\HttpKernel\Event\RequestEvent;
use Symfony\Component\HttpKernel\Event\ResponseEvent;
use Symfony\Component\HttpKernel\KernelEvents;

/**
 * Rate-limits routes through ratelimitd.
 *
 * kernel.request, priority 7: after the router (32) has set `_route` / `_controller` and
 * after the security firewall (8) has authenticated the user, before the controller runs.
 * The policy comes from the route map given to the constructor (route name => limit), else
 * from a #[RateLimit] attribute on the controller method or class; a route with neither is
 * not touched at all. The tenant is what the tenant resolver returns for the request (the
 * authenticated account's id), else "ip:" + the client IP (Request::getClientIp(), which
 * honours Request::setTrustedProxies()).
 *
 * Denied: a 429 JSON response with the limit headers and Retry-After; the controller never
 * runs. ratelimitd unreachable and the limit fails closed: 503 with Retry-After.
 * kernel.response: the limit headers are added to every response of a limited route.
 */
final class RateLimitSubscriber implements EventSubscriberInterface
{
    /** Request attribute holding the Result of this request's check. */
    public const RESULT_ATTRIBUTE = '_ratelimit_result';

    /** @var array<string, RateLimit> */
    private array $routeLimits = [];

    /** @var \Closure(Request): ?string|null */
    private ?\Closure $tenantResolver;

    /** @var array<string, RateLimit|null> controller id => attribute, so reflection runs once per controller */
    private array $attributeCache = [];

    /**
     * @param array<string, RateLimit|array{policy: string, scope?: string, cost?: int, fail_open?: bool}> $routeLimits
     *        route name => limit; wins over an attribute, so operators can change a limit without touching code
     * @param callable(Request): ?string|null $tenantResolver the authenticated tenant's id, or null for anonymous
     */
    public function __construct(
        private readonly RateLimitClientInterface $client,
        array $routeLimits = [],
        ?callable $tenantResolver = null,
    ) {
        foreach ($routeLimits as $route => $limit) {
            $this->routeLimits[$route] = $limit instanceof RateLimit ? $limit : new RateLimit(
                policy: $limit['policy'],
                scope: $limit['scope'] ?? 'global',
                cost: $limit['cost'] ?? 1,
                failOpen: $limit['fail_open'] ?? null,
            );
        }
        $this->tenantResolver = $tenantResolver === null ? null : \Closure::fromCallable($tenantResolver);
    }

    public static function getSubscribedEvents(): array
    {
        return [
            KernelEvents::REQUEST => ['onKernelRequest', 7],
            KernelEvents::RESPONSE => ['onKernelResponse', 0],
        ];
    }

    public function onKernelRequest(RequestEvent $event): void
    {
        // Sub-requests (fragments, forwards) belong to a request that was already counted.
        if (!$event->isMainRequest()) {
            return;
        }
        $request = $event->getRequest();
        $limit = $this->limitFor($request);
        if ($limit === null) {
            return;
        }

        $result = $this->client->check($limit->policy, $this->tenantFor($request), $limit->scope, $limit->cost, $limit->failOpen);
        $request->attributes->set(self::RESULT_ATTRIBUTE, $result);
        if (!$result->allowed) {
            $event->setResponse($this->denyResponse($result));
        }
    }

    public function onKernelResponse(ResponseEvent $event): void
    {
        if (!$event->isMainRequest()) {
            return;
        }
        $result = $event->getRequest()->attributes->get(self::RESULT_ATTRIBUTE);
        if ($result instanceof Result) {
            $event->getResponse()->headers->add($result->headers());
        }
    }

    /** The limit of this request's route: the route map first, then the controller's attribute. */
    public function limitFor(Request $request): ?RateLimit
    {
        $route = $request->attributes->get('_route');
        if (is_string($route) && isset($this->routeLimits[$route])) {
            return $this->routeLimits[$route];
        }
        $controller = $request->attributes->get('_controller');
        if ($controller === null) {
            return null;
        }
        if (is_string($controller) && array_key_exists($controller, $this->attributeCache)) {
            return $this->attributeCache[$controller];
        }
        $limit = self::attributeOf($controller);
        if (is_string($controller)) {
            $this->attributeCache[$controller] = $limit;
        }
        return $limit;
    }

    private function tenantFor(Request $request): string
    {
        $tenant = $this->tenantResolver !== null ? ($this->tenantResolver)($request) : null;
        if ($tenant === null || $tenant === '') {
            $tenant = 'ip:' . ($request->getClientIp() ?? 'unknown');
        }
        // ratelimitd accepts 1..128 bytes of [A-Za-z0-9._:@-]; an id outside that (an e-mail
        // with "+", a long DN) is replaced by a stable digest rather than rejected, so every
        // user still gets a budget of their own.
        if (preg_match('/^[A-Za-z0-9._:@-]{1,128}$/D', $tenant) !== 1) {
            $tenant = 'sha256:' . substr(hash('sha256', $tenant), 0, 40);
        }
        return $tenant;
    }

    private function denyResponse(Result $result): JsonResponse
    {
        // A fail-closed answer while the limiter is unreachable is our outage, not the
        // client's excess: 503, so clients and monitors do not blame the caller.
        if ($result->degraded) {
            $response = new JsonResponse([
                'error' => 'rate_limiter_unavailable',
                'detail' => 'The rate limiter cannot be reached; retry shortly.',
                'retry_after' => $result->retryAfter,
            ], 503);
        } else {
            $response = new JsonResponse([
                'error' => 'rate_limited',
                'detail' => sprintf('Too many requests for policy "%s"; retry in %d s.', $result->policy ?? '', $result->retryAfter),
                'retry_after' => $result->retryAfter,
            ], 429);
        }
        $response->headers->add($result->headers());
        $response->headers->set('Retry-After', (string) $result->retryAfter);
        $response->headers->set('Cache-Control', 'no-store');
        return $response;
    }

    /** The #[RateLimit] of a controller in any form Symfony accepts; the method's wins over its class's. */
    private static function attributeOf(mixed $controller): ?RateLimit
    {
        try {
            if (is_string($controller) && str_contains($controller, '::')) {
                $controller = explode('::', $controller, 2);
            }
            if (is_array($controller) && count($controller) === 2) {
                $method = new \ReflectionMethod($controller[0], $controller[1]);
                return self::first($method) ?? self::first($method->getDeclaringClass());
            }
            if ($controller instanceof \Closure) {
                return self::first(new \ReflectionFunction($controller));
            }
            if ((is_object($controller) || (is_string($controller) && class_exists($controller)))
                && method_exists($controller, '__invoke')) {
                $method = new \ReflectionMethod($controller, '__invoke');
                return self::first($method) ?? self::first($method->getDeclaringClass());
            }
        } catch (\ReflectionException) {
            // An unresolvable controller fails later in the ControllerResolver, with a
            // better message than we could give.
        }
        return null;
    }

    private static function first(\ReflectionFunctionAbstract|\ReflectionClass $target): ?RateLimit
    {
        $attributes = $target->getAttributes(RateLimit::class);
        return $attributes === [] ? null : $attributes[0]->newInstance();
    }
}
