<?php
// Drives RateLimitClient::report() against a real ratelimitd + redis-server; run by
// tests/shell/php_client_report_test.sh. Reserve-then-settle, refunds capped at the quota,
// debt repaid exactly when Retry-After says, the sliding log's refused refund, calendar resets.

declare(strict_types=1);

require __DIR__ . '/../../clients/php/autoload.php';
require __DIR__ . '/lib/assert.php';

use Ratelimitd\Client\Exception\CheckRejectedException;
use Ratelimitd\Client\RateLimitClient;

$url = $argv[1] ?? '';
// Verdicts are under test, not timeouts: a generous timeout for a loaded CI machine.
$client = new RateLimitClient($url, timeoutMs: 2000, failOpen: false);

// llm: token bucket of 100 per day (nothing refills during the test).
$reserved = $client->check('llm', 'tenant_r', cost: 40);
Check::same(60, $reserved->remaining, 'reserve 40 of 100');
$settled = $client->report('llm', 'tenant_r', 25 - 40);
Check::same(true, $settled->allowed, 'a report is always charged');
Check::same(75, $settled->remaining, 'used 25 of the 40 reserved: 15 refunded');
$client->check('llm', 'tenant_r', cost: 40);
Check::same(5, $client->report('llm', 'tenant_r', 70 - 40)->remaining, 'used 70 of 40 reserved: 30 more charged');

// Refunds never go above the quota.
Check::same(100, $client->report('llm', 'tenant_full', -50)->remaining, 'a full bucket stays full');
$client->check('quota', 'tenant_q', cost: 2);
Check::same(3, $client->report('quota', 'tenant_q', -5)->remaining, 'a window count stops at 0');

// Debt: 1 token per second, burst 2; a report of 4 owes 2: a check needs 3 tokens back (3 s
// after the report). The answers below are the debt's only when the checks reach the server in
// time (the denial within 1 s of the report, the last denied check before 3 s): on a machine
// too loaded for that, a new tenant again, and only the attempt that held is checked.
for ($attempt = 0, $held = false; $attempt < 5 && !$held; $attempt++) {
    $tenant = "tenant_d$attempt";
    $before = microtime(true);
    $inDebt = $client->report('debt', $tenant, 4);
    $denied = $client->check('debt', $tenant);
    $deniedAt = microtime(true);
    // Waiting what Retry-After says, less a margin, is still denied; at Retry-After it passes.
    time_sleep_until($deniedAt + max(1, $denied->retryAfter) - 0.4);
    $stillDenied = $client->check('debt', $tenant);
    $held = $deniedAt - $before < 1.0 && microtime(true) - $before < 3.0;
}
Check::ok($held, 'the debt checks reached the server before the debt was repaid', "$attempt attempts");
Check::same(0, $inDebt->remaining, 'in debt: remaining 0');
Check::same(false, $denied->allowed, 'a check in debt is denied');
Check::same(3, $denied->retryAfter, 'Retry-After: 2 owed + 1 to spend, at one per second');
Check::same(false, $stillDenied->allowed, 'still denied shortly before Retry-After');
time_sleep_until($deniedAt + $denied->retryAfter);
Check::same(true, $client->check('debt', $tenant)->allowed, 'allowed once Retry-After has passed');

// The sliding log cannot refund.
$e = Check::throws(CheckRejectedException::class, fn () => $client->report('log', 'tenant_l', -1), 'a refund on a sliding log is refused');
Check::ok($e !== null && str_contains($e->getMessage(), 'sliding_log'), 'the refusal names the algorithm', $e?->getMessage() ?? '');
Check::throws(CheckRejectedException::class, fn () => $client->report('quota', 'tenant_q', 2_000_000), 'a cost beyond 1000000 is refused');

// Calendar: the minute resets at the next whole minute, whatever the count.
$cal = $client->check('cal', 'tenant_c');
$now = time();
Check::ok($cal->reset % 60 === 0 && $cal->reset > $now - 1 && $cal->reset <= $now + 60, 'a calendar minute resets on the minute', "reset {$cal->reset}, now $now");
Check::same(1, $cal->remaining, 'the minute counts: 1 of 2 left');

Check::done();
