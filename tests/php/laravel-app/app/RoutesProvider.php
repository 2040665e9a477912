<?php
// The test app's routes: ratelimitd's middleware by its alias, a tenant from X-Api-Key, handler runs in WORK_LOG.

declare(strict_types=1);

namespace App;

use Illuminate\Auth\GenericUser;
use Illuminate\Http\Request;
use Illuminate\Support\ServiceProvider;

final class RoutesProvider extends ServiceProvider
{
    public function boot(): void
    {
        $router = $this->app->make('router');
        $run = static function (string $name, array $body): array {
            file_put_contents((string) getenv('WORK_LOG'), "$name\n", FILE_APPEND);
            return $body;
        };
        // A stand-in for authentication: X-Api-Key: key-alice is user tenant_alice.
        $router->aliasMiddleware('demo-auth', static function (Request $request, \Closure $next) {
            if ($request->header('X-Api-Key') === 'key-alice') {
                $request->setUserResolver(static fn () => new GenericUser(['id' => 'tenant_alice']));
            }
            return $next($request);
        });
        $router->middleware('demo-auth')->group(function () use ($router, $run): void {
            $router->get('/hello', static fn () => $run('hello', ['hello' => 'world']))->middleware('ratelimitd:api');
            $router->get('/orders', static fn () => $run('orders', ['orders' => []]))->middleware('ratelimitd:burst,hourly,scope=orders');
            $router->post('/login', static fn () => $run('login', ['login' => 'form']))->middleware('ratelimitd:login,fail_open=0');
            $router->get('/health', static fn () => $run('health', ['status' => 'ok']));
            // A max_delay policy, waited out up to 5 s / 200 ms; the run logs the delay it waited.
            $delayed = static function (string $name) use ($run): \Closure {
                return static fn (Request $r) => $run("$name " . $r->attributes->get('_ratelimitd_result')->delayMs, ['ran' => $name]);
            };
            $router->get('/smooth', $delayed('smooth'))->middleware('ratelimitd:smooth,scope=long,wait=5000');
            $router->get('/smooth-short', $delayed('smooth-short'))->middleware('ratelimitd:smooth,scope=short,wait=200');
            $router->get('/', static fn () => ['app' => 'laravel']);
        });
    }
}
