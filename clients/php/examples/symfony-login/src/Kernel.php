<?php
// A full-stack Symfony app (FrameworkBundle + SecurityBundle) whose json_login is throttled by ratelimitd.

declare(strict_types=1);

namespace LoginApp;

use Ratelimitd\Client\RateLimitClient;
use Ratelimitd\Client\RatelimitdLimit;
use Ratelimitd\Client\Symfony\LoginThrottledFailureHandler;
use Ratelimitd\Client\Symfony\RatelimitdRequestLimiter;
use Symfony\Bundle\FrameworkBundle\FrameworkBundle;
use Symfony\Bundle\FrameworkBundle\Kernel\MicroKernelTrait;
use Symfony\Bundle\SecurityBundle\SecurityBundle;
use Symfony\Component\DependencyInjection\Loader\Configurator\ContainerConfigurator;
use Symfony\Component\HttpFoundation\JsonResponse;
use Symfony\Component\HttpKernel\Kernel as BaseKernel;
use Symfony\Component\Routing\Loader\Configurator\RoutingConfigurator;
use Symfony\Component\Security\Core\User\InMemoryUser;

use function Symfony\Component\DependencyInjection\Loader\Configurator\env;
use function Symfony\Component\DependencyInjection\Loader\Configurator\inline_service;
use function Symfony\Component\DependencyInjection\Loader\Configurator\service;

final class Kernel extends BaseKernel
{
    use MicroKernelTrait;

    public function registerBundles(): iterable
    {
        return [new FrameworkBundle(), new SecurityBundle()];
    }

    public function getCacheDir(): string
    {
        return (getenv('APP_CACHE_DIR') ?: sys_get_temp_dir() . '/ratelimitd-login-app') . '/cache';
    }

    public function getLogDir(): string
    {
        return (getenv('APP_CACHE_DIR') ?: sys_get_temp_dir() . '/ratelimitd-login-app') . '/log';
    }

    protected function configureContainer(ContainerConfigurator $c): void
    {
        $c->extension('framework', ['secret' => 'example-only-secret', 'http_method_override' => false, 'router' => ['utf8' => true]]);

        // RATELIMITD_TIMEOUT_MS bounds one check (default 500 ms); a test on a loaded machine
        // gives more, so that a slow answer is not taken for ratelimitd being down.
        $c->parameters()->set('ratelimitd.timeout_ms', 500);
        $services = $c->services();
        $services->set(RateLimitClient::class)
            ->args([env('RATELIMITD_URL'), env('RATELIMITD_TIMEOUT_MS')->default('ratelimitd.timeout_ms')->int(), false])   // logins fail closed
            ->arg('$adminToken', env('RATELIMITD_ADMIN_TOKEN')->default('')->string());
        // login_throttling.limiter: one ratelimitd budget per (username, client IP), policy "login".
        $services->set('app.login_limiter', RatelimitdRequestLimiter::class)
            ->factory([RatelimitdRequestLimiter::class, 'forLogin'])
            ->args([service(RateLimitClient::class), inline_service(RatelimitdLimit::class)->args(['login'])]);
        $services->set(LoginThrottledFailureHandler::class);

        $c->extension('security', [
            'enable_authenticator_manager' => true,
            'password_hashers' => [InMemoryUser::class => 'plaintext'],
            'providers' => ['users' => ['memory' => ['users' => ['alice' => ['password' => 'right-password', 'roles' => ['ROLE_USER']]]]]],
            'firewalls' => ['main' => [
                'stateless' => true,
                'provider' => 'users',
                'json_login' => ['check_path' => 'login', 'failure_handler' => LoginThrottledFailureHandler::class],
                'login_throttling' => ['limiter' => 'app.login_limiter'],
            ]],
            // The controller runs only for a successful json_login, never for a bare POST.
            'access_control' => [['path' => '^/login', 'roles' => 'ROLE_USER']],
        ]);
    }

    protected function configureRoutes(RoutingConfigurator $routes): void
    {
        $routes->add('login', '/login')->controller([self::class, 'loggedIn'])->methods(['POST']);
    }

    /** Reached only after a successful json_login. */
    public static function loggedIn(): JsonResponse
    {
        return new JsonResponse(['login' => 'ok']);
    }
}
