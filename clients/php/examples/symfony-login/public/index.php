<?php
// Front controller: `php -S 127.0.0.1:8001 clients/php/examples/symfony-login/public/index.php`
// Environment: RATELIMITD_URL, RATELIMITD_ADMIN_TOKEN (reset on a successful login), APP_CACHE_DIR,
// RATELIMITD_TIMEOUT_MS (the bound of one check, default 500).

declare(strict_types=1);

if (is_file(__DIR__ . '/../vendor/autoload.php')) {
    require __DIR__ . '/../vendor/autoload.php';
} else {
    // Debian 12: php-symfony-framework-bundle, php-symfony-security-bundle, php-symfony-rate-limiter.
    foreach (['Bundle/FrameworkBundle', 'Bundle/SecurityBundle', 'Component/RateLimiter'] as $package) {
        require_once "/usr/share/php/Symfony/$package/autoload.php";
    }
    require_once __DIR__ . '/../../../autoload.php';
    require_once __DIR__ . '/../src/Kernel.php';
}

use LoginApp\Kernel;
use Symfony\Component\HttpFoundation\Request;

$kernel = new Kernel('prod', false);
$request = Request::createFromGlobals();
$response = $kernel->handle($request);
$response->send();
$kernel->terminate($request, $response);
