<?php
// Ratelimitd\Client\Webhook::verify; run by tests/shell/php_webhook_test.sh.
//   webhook_test.php cases                     the signature rules, on hand-made headers
//   webhook_test.php events FILE SECRET N       FILE holds what the receiver got from a real
//                                               ratelimitd (one JSON line per request):
//                                               N events, each verified

declare(strict_types=1);

require __DIR__ . '/../../clients/php/autoload.php';
require __DIR__ . '/lib/assert.php';

use Ratelimitd\Client\Webhook;

$mode = $argv[1] ?? '';
if ($mode === 'cases') {
    $secret = 'php-webhook-secret-0123456789';
    $body = '{"id":"evt_1","type":"threshold","policy":"api","tenant":"acme","scope":"global","threshold":0.8,'
        . '"limit":100,"used":80,"window_end":1700000060}';
    $t = time();
    $sign = static fn (int $at, string $b, string $key): string => 't=' . $at . ',v1=' . hash_hmac('sha256', $at . '.' . $b, $key);
    Check::ok(Webhook::verify($body, $sign($t, $body, $secret), $secret), 'a fresh, signed event verifies');
    Check::ok(!Webhook::verify($body . ' ', $sign($t, $body, $secret), $secret), 'a changed body does not');
    Check::ok(!Webhook::verify($body, $sign($t, $body, $secret), $secret . 'x'), 'another secret does not');
    Check::ok(!Webhook::verify($body, $sign($t - 301, $body, $secret), $secret), 'older than the tolerance: a replay');
    Check::ok(!Webhook::verify($body, $sign($t + 301, $body, $secret), $secret), 'newer than the tolerance');
    Check::ok(Webhook::verify($body, $sign($t - 3000, $body, $secret), $secret, 3600), 'a wider tolerance');
    Check::ok(Webhook::verify($body, $sign(1700000000, $body, $secret), $secret, 300, 1700000100), 'a given clock');
    // The time is signed: moving it breaks the signature even inside the tolerance.
    $moved = preg_replace('/^t=\d+/', 't=' . ($t - 1), $sign($t, $body, $secret));
    Check::ok(!Webhook::verify($body, $moved, $secret), 'a changed time does not');
    $both = 'v1=' . str_repeat('0', 64) . ',' . $sign($t, $body, $secret) . ',v2=future';
    Check::ok(Webhook::verify($body, $both, $secret), 'one matching v1 among several, unknown parts ignored');
    foreach (['', 't=' . $t, 'v1=' . hash_hmac('sha256', $t . '.' . $body, $secret), 't=abc,v1=00', 'garbage',
              't=' . $t . ',v1=' . strtoupper(hash_hmac('sha256', $t . '.' . $body, $secret))] as $bad) {
        Check::ok(!Webhook::verify($body, $bad, $secret), 'malformed header refused: ' . var_export($bad, true));
    }
    Check::ok(!Webhook::verify($body, $sign($t, $body, ''), ''), 'an empty secret never verifies');
    Check::done();
} elseif ($mode === 'events') {
    [, , $file, $secret, $n] = $argv;
    $lines = array_values(array_filter(explode("\n", (string) file_get_contents($file))));
    Check::same((int) $n, count($lines), "the receiver got $n events");
    foreach ($lines as $line) {
        $request = json_decode($line, true, 512, JSON_THROW_ON_ERROR);
        $event = json_decode($request['body'], true, 512, JSON_THROW_ON_ERROR);
        Check::ok(Webhook::verify($request['body'], $request['signature'], $secret),
            'ratelimitd\'s event ' . $event['id'] . ' verifies (' . $event['policy'] . ' at ' . $event['threshold'] . ')');
        Check::ok(!Webhook::verify($request['body'], $request['signature'], 'not-the-secret-0123456789'),
            'and not with another secret');
        Check::same(['id', 'type', 'policy', 'plan', 'tenant', 'scope', 'window', 'window_start', 'window_end',
                     'crossed_at', 'threshold', 'limit', 'used'],
            array_keys($event), 'the documented fields, in order');
        Check::ok(!str_contains($line, $secret), 'no secret in the request');
    }
    Check::done();
} else {
    fwrite(STDERR, "usage: webhook_test.php cases | events FILE SECRET N\n");
    exit(2);
}
