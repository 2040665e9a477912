<?php
// Symfony kernel subscriber: asks ratelimitd before the controller runs, answers 429 on deny, adds the headers.

declare(strict_types=1);

namespace Ratelimitd\Client\Symfony;

use Ratelimitd\Client\ControllerLimits;
use Ratelimitd\Client\LimitChecker;
use Ratelimitd\Client\RateLimitClientInterface;
use Ratelimitd\Client\RatelimitdLimit;
use Ratelimitd\Client\TenantId;
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
 * from #[RatelimitdLimit] attributes on the controller method or class (several: one layered
 * check, see LimitChecker); a route with neither is not touched at all. The tenant is what
 * the tenant resolver returns for the request (the authenticated account's id), else "ip:" +
 * the client IP (Request::getClientIp(), which honours Request::setTrustedProxies()).
 *
 * Denied: a 429 JSON response with the limit headers and Retry-After; the controller never
 * runs. ratelimitd unreachable and the limit fails closed: 503 with Retry-After.
 * kernel.response: the limit headers are added to every response of a limited route.
 */
final class RateLimitSubscriber implements EventSubscriberInterface
{
    /** Request attribute holding the Result of this request's check. */
    public const RESULT_ATTRIBUTE = '_ratelimit_result';

    /** @var array<string, list<RatelimitdLimit>> */
    private array $routeLimits = [];

    /** @var \Closure(Request): ?string|null */
    private ?\Closure $tenantResolver;

    private readonly LimitChecker $checker;
    private readonly ControllerLimits $controllerLimits;

    /**
     * @param array<string, mixed> $routeLimits route name => a limit (RatelimitdLimit or
     *        [policy, scope?, cost?, fail_open?]) or a list of them (layered); wins over the
     *        attributes, so operators can change a limit without touching code
     * @param callable(Request): ?string|null $tenantResolver the authenticated tenant's id, or null for anonymous
     * @param string $layeredPrefix where ratelimitd's config puts the layered routes (see LimitChecker)
     */
    public function __construct(
        RateLimitClientInterface $client,
        array $routeLimits = [],
        ?callable $tenantResolver = null,
        string $layeredPrefix = '/_layered/',
    ) {
        foreach ($routeLimits as $route => $limit) {
            $list = is_array($limit) && array_is_list($limit) ? $limit : [$limit];
            $this->routeLimits[$route] = array_map([RatelimitdLimit::class, 'from'], $list);
        }
        $this->tenantResolver = $tenantResolver === null ? null : \Closure::fromCallable($tenantResolver);
        $this->checker = new LimitChecker($client, $layeredPrefix);
        $this->controllerLimits = new ControllerLimits();
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
        $limits = $this->limitsFor($request);
        if ($limits === []) {
            return;
        }

        $result = $this->checker->decide($limits, $this->tenantFor($request), $request->getMethod());
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

    /**
     * The limits of this request's route: the route map first, then the controller's attributes.
     *
     * @return list<RatelimitdLimit> empty: the route is not limited
     */
    public function limitsFor(Request $request): array
    {
        $route = $request->attributes->get('_route');
        if (is_string($route) && isset($this->routeLimits[$route])) {
            return $this->routeLimits[$route];
        }
        $controller = $request->attributes->get('_controller');
        return $controller === null ? [] : $this->controllerLimits->of($controller);
    }

    private function tenantFor(Request $request): string
    {
        $tenant = $this->tenantResolver !== null ? ($this->tenantResolver)($request) : null;
        return TenantId::of($tenant, $request->getClientIp());
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
}
