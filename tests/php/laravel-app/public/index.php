<?php
// Front controller of the Laravel 8 test app (Debian's php-laravel-framework; this package through Composer).

declare(strict_types=1);

require __DIR__ . '/../vendor/autoload.php';        // the app's Composer install: ratelimitd/client + App\
require_once '/usr/share/php/Illuminate/autoload.php';

$app = require __DIR__ . '/../bootstrap/app.php';
$kernel = $app->make(Illuminate\Contracts\Http\Kernel::class);
$request = Illuminate\Http\Request::capture();
$response = $kernel->handle($request);
$response->send();
$kernel->terminate($request, $response);
