<?php
// A deliberately broken stand-in for ratelimitd's /v1/check (served by `php -S`), so probe tests can show each probe check failing.
// FAKE_LIMIT=N, FAKE_STATE=file, FAKE_BUG=no-recovery | no-retry-after | shared-tenants | degraded.

declare(strict_types=1);

$limit = (int) getenv('FAKE_LIMIT');
$bug = (string) getenv('FAKE_BUG');
if (parse_url($_SERVER['REQUEST_URI'] ?? '/', PHP_URL_PATH) !== '/v1/check') {
    echo 'ok';   // /readyz and the start-up probe: ready, so the probe reaches its checks
    return;
}
if ($bug === 'degraded') {
    // What ratelimitd answers for a fail-open policy whose store cannot decide: allowed, no numbers.
    header('Content-Type: application/json');
    header('X-RateLimit-Degraded: store_timeout');
    echo json_encode(['allowed' => true, 'degraded' => true, 'limit' => null, 'remaining' => null, 'reset' => null, 'retry_after' => 0]);
    return;
}
$body = json_decode((string) file_get_contents('php://input'), true);
$tenant = is_array($body) ? (string) ($body['tenant'] ?? '') : '';

// Counters per tenant in one JSON file, under an exclusive lock: requests arrive concurrently.
$fh = fopen((string) getenv('FAKE_STATE'), 'c+');
flock($fh, LOCK_EX);
$state = json_decode(stream_get_contents($fh) ?: '{}', true) ?: [];
$key = $bug === 'shared-tenants' ? 'everyone' : $tenant;   // bug: one budget for all tenants
$used = $state[$key] ?? 0;
// Bug in every mode (and all of no-recovery): there is no window, a spent budget never comes back.
$allowed = $used < $limit;
if ($allowed) {
    $state[$key] = $used + 1;
}
ftruncate($fh, 0);
rewind($fh);
fwrite($fh, json_encode($state));
flock($fh, LOCK_UN);
fclose($fh);

header('Content-Type: application/json');
header("X-RateLimit-Limit: $limit");
header('X-RateLimit-Remaining: ' . max(0, $limit - $used - ($allowed ? 1 : 0)));
if (!$allowed) {
    http_response_code(429);
    if ($bug !== 'no-retry-after') {
        header('Retry-After: 1');
    }
}
echo json_encode(['allowed' => $allowed, 'retry_after' => $allowed ? 0 : 1]);
