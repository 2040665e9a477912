<?php
// Loads the example app's classes: Composer's vendor/ when present, else Debian's php-symfony-* packages.

declare(strict_types=1);

if (is_file(__DIR__ . '/vendor/autoload.php')) {
    require __DIR__ . '/vendor/autoload.php';
} else {
    // Debian's php-symfony-http-kernel and php-symfony-routing install PSR autoloaders here.
    foreach (['HttpKernel', 'Routing'] as $component) {
        $file = "/usr/share/php/Symfony/Component/$component/autoload.php";
        if (!is_file($file)) {
            fwrite(STDERR, "missing $file: apt-get install php-symfony-http-kernel php-symfony-routing\n");
            exit(1);
        }
        require_once $file;
    }
    require_once __DIR__ . '/../../autoload.php';
}

spl_autoload_register(static function (string $class): void {
    if (str_starts_with($class, 'App\\')) {
        require __DIR__ . '/src/' . str_replace('\\', '/', substr($class, 4)) . '.php';
    }
});
