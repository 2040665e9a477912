<?php
// Front controller of the example app: Symfony HttpKernel + Routing, an API-key firewall, ratelimitd's subscriber.
//
//   ratelimitd --config clients/php/examples/symfony-app/ratelimitd.yaml --listen 127.0.0.1:8080 &
//   php -S 127.0.0.1:8000 clients/php/examples/symfony-app/public/index.php
//   curl -i localhost:8000/hello        # 3 allowed, then 429 with Retry-After
//
// Environment: RATELIMITD_URL (default http://127.0.0.1:8080), RATELIMITD_TIMEOUT_MS (default 50).

declare(strict_types=1);

require __DIR__ . '/../bootstrap.php';

use App\ApiKeyFirewall;
use App\DemoController;
use App\OrderController;
use App\ReportController;
use Ratelimitd\Client\RateLimitClient;
use Ratelimitd\Client\Symfony\RateLimitSubscriber;
use Symfony\Component\EventDispatcher\EventDispatcher;
use Symfony\Component\HttpFoundation\JsonResponse;
use Symfony\Component\HttpFoundation\Request;
use Symfony\Component\HttpFoundation\RequestStack;
use Symfony\Component\HttpKernel\Controller\ArgumentResolver;
use Symfony\Component\HttpKernel\Controller\ControllerResolver;
use Symfony\Component\HttpKernel\Event\ExceptionEvent;
use Symfony\Component\HttpKernel\EventListener\RouterListener;
use Symfony\Component\HttpKernel\Exception\HttpExceptionInterface;
use Symfony\Component\HttpKernel\HttpKernel;
use Symfony\Component\HttpKernel\KernelEvents;
use Symfony\Component\Routing\Matcher\UrlMatcher;
use Symfony\Component\Routing\RequestContext;
use Symfony\Component\Routing\Route;
use Symfony\Component\Routing\RouteCollection;

$routes = new RouteCollection();
$routes->add('hello', new Route('/hello', ['_controller' => DemoController::class . '::hello']));
$routes->add('login', new Route('/login', ['_controller' => DemoController::class . '::login']));
$routes->add('health', new Route('/health', ['_controller' => DemoController::class . '::health']));
$routes->add('reports', new Route('/reports', ['_controller' => ReportController::class . '::list']));
$routes->add('orders', new Route('/orders', ['_controller' => OrderController::class . '::list']));

$client = new RateLimitClient(
    baseUrl: getenv('RATELIMITD_URL') ?: 'http://127.0.0.1:8080',
    timeoutMs: (int) (getenv('RATELIMITD_TIMEOUT_MS') ?: 50),
    failOpen: true,
);

$requestStack = new RequestStack();
$dispatcher = new EventDispatcher();
$dispatcher->addSubscriber(new RouterListener(new UrlMatcher($routes, new RequestContext()), $requestStack));
$dispatcher->addSubscriber(new ApiKeyFirewall(['demo-key-alice' => 'tenant_alice', 'demo-key-bob' => 'tenant_bob']));
$dispatcher->addSubscriber(new RateLimitSubscriber(
    $client,
    require __DIR__ . '/../config/ratelimit.php',
    // The authenticated tenant; null (anonymous) makes the subscriber use "ip:" + client IP.
    static fn (Request $request): ?string => $request->attributes->get('tenant_id'),
));
// Errors as JSON (404 for unknown paths, 500 otherwise), as an API would answer them.
$dispatcher->addListener(KernelEvents::EXCEPTION, static function (ExceptionEvent $event): void {
    $e = $event->getThrowable();
    $status = $e instanceof HttpExceptionInterface ? $e->getStatusCode() : 500;
    $event->setResponse(new JsonResponse(['error' => $e->getMessage()], $status));
});

$kernel = new HttpKernel($dispatcher, new ControllerResolver(), $requestStack, new ArgumentResolver());
$request = Request::createFromGlobals();
$response = $kernel->handle($request);
$response->send();
$kernel->terminate($request, $response);
