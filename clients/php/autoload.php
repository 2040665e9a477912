<?php
// PSR-4 autoloader for Ratelimitd\Client when the package is used without Composer.

declare(strict_types=1);

// Same mapping as composer.json's "autoload" section, so both ways load the same files.
spl_autoload_register(static function (string $class): void {
    $prefix = 'Ratelimitd\\Client\\';
    if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
        return;
    }
    $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
