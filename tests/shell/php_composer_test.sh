#!/usr/bin/env bash
# clients/php/composer.json works as users install it: `composer validate --strict`, then a
# throw-away app requires the package through a path repository (offline: packagist is
# disabled) and Composer's own autoloader loads every class of the package.
# Usage: php_composer_test.sh [PATH_TO_RATELIMITD]   (the binary is not needed)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/php/lib/servers.sh"
require_php
require_tools composer
export COMPOSER_HOME="$work/composer-home" COMPOSER_NO_INTERACTION=1 COMPOSER_ALLOW_SUPERUSER=1

# validate reads the package in place; copy it so composer writes nothing into the repo.
cp -r "$root/clients/php" "$work/package"
composer validate --strict --no-check-publish --no-check-lock -d "$work/package" \
  || fail "composer validate rejects clients/php/composer.json"

mkdir "$work/app"
cat >"$work/app/composer.json" <<JSON
{
  "name": "test/app",
  "repositories": [{"type": "path", "url": "$work/package", "options": {"symlink": false}}, {"packagist.org": false}],
  "require": {"ratelimitd/client": "*@dev"}
}
JSON
composer install -d "$work/app" --no-progress 2>&1 | tail -3
[ -f "$work/app/vendor/autoload.php" ] || fail "composer install did not produce vendor/autoload.php"

# Every class file under src/ must load through Composer's PSR-4 map under the name its path gives.
cat >"$work/app/load_all.php" <<'PHP'
<?php
require __DIR__ . '/vendor/autoload.php';
$src = __DIR__ . '/vendor/ratelimitd/client/src';
$it = new RecursiveIteratorIterator(new RecursiveDirectoryIterator($src, FilesystemIterator::SKIP_DOTS));
$n = 0;
foreach ($it as $file) {
    $class = 'Ratelimitd\\Client\\' . str_replace('/', '\\', substr($file->getPathname(), strlen($src) + 1, -4));
    // Classes that implement an optional framework's interfaces (Symfony, PSR-15, Laravel:
    // only suggestions) are checked by file and name, not by loading them.
    if (preg_match('#\\\\(Symfony|Psr15|Laravel)\\\\#', $class) === 1) {
        $short = substr($class, strrpos($class, '\\') + 1);
        if (!preg_match('/^(final |abstract )?(class|interface) ' . $short . '\b/m', file_get_contents($file->getPathname()))) { echo "FAIL: $class\n"; exit(1); }
        $n++;
        continue;
    }
    if (!class_exists($class) && !interface_exists($class)) { echo "FAIL: $class does not autoload from $file\n"; exit(1); }
    $n++;
}
$client = new Ratelimitd\Client\RateLimitClient('http://127.0.0.1:9');
echo "ok    $n classes autoload through Composer; client timeout {$client->timeoutMs()} ms\n";
PHP
php "$work/app/load_all.php" || fail "a class of the package does not autoload through Composer"
echo "PASS: composer package"
