<?php
// Laravel service provider (auto-discovered through composer.json's extra.laravel): the client and the `ratelimitd` middleware.

declare(strict_types=1);

namespace Ratelimitd\Client\Laravel;

use Illuminate\Contracts\Foundation\Application;
use Illuminate\Routing\Router;
use Illuminate\Support\ServiceProvider;
use Ratelimitd\Client\RateLimitClient;
use Ratelimitd\Client\RateLimitClientInterface;

/**
 * Binds one RateLimitClient per worker from config('ratelimitd') (env RATELIMITD_URL,
 * RATELIMITD_TIMEOUT_MS, RATELIMITD_FAIL_OPEN, RATELIMITD_ADMIN_TOKEN), tells Laravel's log
 * about degraded answers, and names the middleware `ratelimitd`:
 *
 *     Route::get('/orders', ...)->middleware('ratelimitd:api-default');
 *     Route::post('/orders', ...)->middleware('ratelimitd:burst,hourly,scope=orders');
 */
final class RatelimitdServiceProvider extends ServiceProvider
{
    public function register(): void
    {
        $this->app->singleton(RateLimitClientInterface::class, static function (Application $app): RateLimitClientInterface {
            $config = (array) $app->make('config')->get('ratelimitd', []);
            return new RateLimitClient(
                baseUrl: (string) ($config['url'] ?? getenv('RATELIMITD_URL') ?: 'http://127.0.0.1:8080'),
                timeoutMs: (int) ($config['timeout_ms'] ?? getenv('RATELIMITD_TIMEOUT_MS') ?: RateLimitClient::DEFAULT_TIMEOUT_MS),
                failOpen: filter_var($config['fail_open'] ?? getenv('RATELIMITD_FAIL_OPEN') ?: 'true', FILTER_VALIDATE_BOOLEAN),
                logger: $app->bound('log') ? $app->make('log') : null,
                adminToken: ($config['admin_token'] ?? getenv('RATELIMITD_ADMIN_TOKEN')) ?: null,
            );
        });
        $this->app->alias(RateLimitClientInterface::class, RateLimitClient::class);
    }

    public function boot(Router $router): void
    {
        $router->aliasMiddleware('ratelimitd', RatelimitdMiddleware::class);
    }
}
