<?php
// LimitChecker against a real ratelimitd; run by tests/shell/php_layered_test.sh.
//   layered_test.php rules URL            one limit, two limits, and every misconfiguration named
//   layered_test.php fallback URL         a server whose default_policy answers instead: refused, not trusted
//   layered_test.php one URL TENANT       one layered decision, prints "allowed" or "denied" (concurrency part)

declare(strict_types=1);

require __DIR__ . '/../../clients/php/autoload.php';
require __DIR__ . '/lib/assert.php';

use Ratelimitd\Client\Exception\LayeredLimitsException;
use Ratelimitd\Client\LimitChecker;
use Ratelimitd\Client\RateLimitClient;
use Ratelimitd\Client\RatelimitdLimit;

[$mode, $url] = [$argv[1] ?? '', $argv[2] ?? ''];
$checker = new LimitChecker(new RateLimitClient($url, timeoutMs: 5000));
$both = [new RatelimitdLimit('burst', 'orders'), new RatelimitdLimit('hourly', 'orders')];

switch ($mode) {
    case 'one':
        echo $checker->decide($both, $argv[3])->allowed ? "allowed\n" : "denied\n";
        exit(0);

    case 'rules':
        $single = $checker->decide([new RatelimitdLimit('burst', 'orders')], 'tenant_single');
        Check::same('burst', $single->policy, 'one limit: a plain check of its policy');
        $layered = $checker->decide($both, 'tenant_two');
        Check::same('burst,hourly', $layered->policy, 'two limits: one layered check of both');

        $e = Check::throws(LayeredLimitsException::class, fn () => $checker->decide([new RatelimitdLimit('burst'), new RatelimitdLimit('unrouted')], 'tenant_x'), 'no layered route for the pair: refused');
        Check::ok($e !== null && str_contains($e->getMessage(), 'path: "/_layered/burst+unrouted", limits: [ { policy: burst }, { policy: unrouted } ]'), 'the message gives the route to add', $e?->getMessage() ?? '');
        $e = Check::throws(LayeredLimitsException::class, fn () => $checker->decide([new RatelimitdLimit('burst', 'a'), new RatelimitdLimit('hourly', 'b')], 'tenant_x'), 'different scopes: refused');
        Check::ok($e !== null && str_contains($e->getMessage(), 'scope'), 'the message names the scope', $e?->getMessage() ?? '');
        Check::throws(LayeredLimitsException::class, fn () => $checker->decide([new RatelimitdLimit('burst', cost: 2), new RatelimitdLimit('hourly')], 'tenant_x'), 'different costs: refused');
        Check::throws(LayeredLimitsException::class, fn () => $checker->decide([new RatelimitdLimit('burst'), new RatelimitdLimit('burst')], 'tenant_x'), 'a policy twice: refused');
        Check::throws(LayeredLimitsException::class, fn () => $checker->decide(array_fill(0, 9, new RatelimitdLimit('burst')), 'tenant_x'), 'nine limits: refused');
        break;

    case 'fallback':
        // This server has default_policy burst and no layered route: it answers a single
        // "burst" verdict for the layered path, which must not pass for both limits.
        $e = Check::throws(LayeredLimitsException::class, fn () => $checker->decide($both, 'tenant_f'), 'a default_policy answer instead of the layered route: refused');
        Check::ok($e !== null && str_contains($e->getMessage(), 'ratelimitd decided "burst"'), 'the message says what ratelimitd decided', $e?->getMessage() ?? '');
        break;

    default:
        fwrite(STDERR, "usage: layered_test.php rules|fallback|one URL [TENANT]\n");
        exit(2);
}
Check::done();
