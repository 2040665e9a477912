<?php
// A quota webhook receiver under `php -S` (tests/shell/php_webhook_test.sh): every POST is
// appended to $EVENTS_FILE as one JSON line {"body","signature"}; GET / answers the probe.

declare(strict_types=1);

if ($_SERVER['REQUEST_METHOD'] !== 'POST') {
    http_response_code(200);
    return true;
}
$line = json_encode([
    'body' => (string) file_get_contents('php://input'),
    'signature' => $_SERVER['HTTP_RATELIMIT_SIGNATURE'] ?? '',
], JSON_THROW_ON_ERROR);
file_put_contents((string) getenv('EVENTS_FILE'), $line . "\n", FILE_APPEND | LOCK_EX);
http_response_code(204);
return true;
