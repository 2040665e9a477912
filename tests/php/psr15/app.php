<?php
// A PSR-15 app for `php -S`: nyholm/psr7 (Debian php-nyholm-psr7) messages, a minimal
// dispatcher, ratelimitd's RateLimitMiddleware on /hello (api), /orders (burst + hourly,
// layered), /login (fails closed) and /smooth, /smooth-short (a max_delay policy, waiting up to
// 5 s and 200 ms); /health has no middleware. Handler runs go to WORK_LOG.

declare(strict_types=1);

require '/usr/share/php/Nyholm/Psr7/autoload.php';
require __DIR__ . '/psr15_interfaces.php';
require __DIR__ . '/Pipeline.php';
require __DIR__ . '/CallableHandler.php';
require __DIR__ . '/../../../clients/php/autoload.php';

use Nyholm\Psr7\Factory\Psr17Factory;
use Nyholm\Psr7\ServerRequest;
use Psr\Http\Message\ServerRequestInterface;
use Ratelimitd\Client\Psr15\RateLimitMiddleware;
use Ratelimitd\Client\RateLimitClient;
use Ratelimitd\Client\RatelimitdLimit;
use TestApp\CallableHandler;
use TestApp\Pipeline;

$factory = new Psr17Factory();
$client = new RateLimitClient(getenv('RATELIMITD_URL') ?: 'http://127.0.0.1:8080', timeoutMs: 500, failOpen: true);
$tenant = static fn (ServerRequestInterface $r): ?string => ['key-alice' => 'tenant_alice'][$r->getHeaderLine('X-Api-Key')] ?? null;
$limited = static fn ($limits) => new RateLimitMiddleware($client, $factory, $factory, $limits, $tenant);
$waiting = static fn ($limits, int $upToMs) => new RateLimitMiddleware($client, $factory, $factory, $limits, $tenant, waitUpToMs: $upToMs);
// The delay the middleware waited out, logged with the run: the test compares it with its clock.
$delayed = static function (string $name) use ($factory): CallableHandler {
    return new CallableHandler(static function (ServerRequestInterface $r) use ($factory, $name) {
        $delay = $r->getAttribute(RateLimitMiddleware::RESULT_ATTRIBUTE)->delayMs;
        file_put_contents((string) getenv('WORK_LOG'), "$name $delay\n", FILE_APPEND);
        return $factory->createResponse(200)->withBody($factory->createStream("$name\n"));
    });
};

$json = static function (string $name, array $body) use ($factory): CallableHandler {
    return new CallableHandler(static function () use ($factory, $name, $body) {
        file_put_contents((string) getenv('WORK_LOG'), "$name\n", FILE_APPEND);
        return $factory->createResponse(200)->withHeader('Content-Type', 'application/json')
            ->withBody($factory->createStream(json_encode($body)));
    });
};
$routes = [
    '/hello' => [[$limited(new RatelimitdLimit('api'))], $json('hello', ['hello' => 'world'])],
    '/orders' => [[$limited([new RatelimitdLimit('burst', 'orders'), new RatelimitdLimit('hourly', 'orders')])], $json('orders', ['orders' => []])],
    '/login' => [[$limited(new RatelimitdLimit('login', failOpen: false))], $json('login', ['login' => 'form'])],
    '/health' => [[], $json('health', ['status' => 'ok'])],
    '/smooth' => [[$waiting(new RatelimitdLimit('smooth', 'long'), 5000)], $delayed('smooth')],
    '/smooth-short' => [[$waiting(new RatelimitdLimit('smooth', 'short'), 200)], $delayed('smooth-short')],
];

$path = parse_url($_SERVER['REQUEST_URI'] ?? '/', PHP_URL_PATH) ?: '/';
$request = new ServerRequest($_SERVER['REQUEST_METHOD'] ?? 'GET', $_SERVER['REQUEST_URI'] ?? '/', getallheaders(), null, '1.1', $_SERVER);
[$middleware, $handler] = $routes[$path] ?? [[], new CallableHandler(static fn () => $factory->createResponse(404))];
$response = (new Pipeline($middleware, $handler))->handle($request);

http_response_code($response->getStatusCode());
foreach ($response->getHeaders() as $name => $values) {
    foreach ($values as $value) {
        header("$name: $value", false);
    }
}
echo $response->getBody();
