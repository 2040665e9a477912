<?php
// Drives check() and release() of a concurrency policy against a real ratelimitd and
// redis-server; run by tests/shell/php_client_lease_test.sh. A slot per lease, a release frees
// exactly one, a released or made-up lease frees nothing.

declare(strict_types=1);

require __DIR__ . '/../../clients/php/autoload.php';
require __DIR__ . '/lib/assert.php';

use Ratelimitd\Client\Exception\CheckRejectedException;
use Ratelimitd\Client\RateLimitClient;

$url = $argv[1] ?? '';
$client = new RateLimitClient($url, timeoutMs: 2000, failOpen: false);

// exports: at most 2 at once, leases of 1 minute (none expires during the test).
$first = $client->check('exports', 'tenant_l');
$second = $client->check('exports', 'tenant_l');
Check::same(true, $first->allowed && $second->allowed, 'two slots of two');
Check::same(true, is_string($first->lease) && preg_match('/^[0-9a-f]{32}$/', $first->lease) === 1, 'a lease of 32 hex digits');
Check::same(true, $first->lease !== $second->lease, 'each check its own lease');
Check::same(0, $second->remaining, 'no slot left');
$third = $client->check('exports', 'tenant_l');
Check::same(false, $third->allowed, 'a third is denied while two are held');
Check::same(null, $third->lease, 'a denial holds no lease');

Check::same(true, $client->release('exports', 'tenant_l', $first->lease), 'the first release frees its slot');
Check::same(false, $client->release('exports', 'tenant_l', $first->lease), 'a second release of it frees nothing');
Check::same(false, $client->release('exports', 'tenant_l', str_repeat('0', 32)), 'a made-up lease frees nothing');
$again = $client->check('exports', 'tenant_l');
Check::same(true, $again->allowed, 'the freed slot is taken again');
Check::same(false, $client->check('exports', 'tenant_l')->allowed, 'and only that one');

$bad = Check::throws(CheckRejectedException::class, fn () => $client->release('exports', 'tenant_l', 'not-a-lease'), 'a malformed lease is refused');
Check::same(400, $bad?->status, 'a malformed lease is a 400');
$notLease = Check::throws(CheckRejectedException::class, fn () => $client->release('quota', 'tenant_l', str_repeat('a', 32)), 'a release on a window policy is refused');
Check::same(400, $notLease?->status, 'a release on a policy that is not concurrency is a 400');

Check::done();
