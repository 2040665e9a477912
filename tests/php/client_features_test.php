<?php
// The client's newer parts against a real ratelimitd; run by tests/shell/php_client_features_test.sh.
//   client_features_test.php api URL          interface, no destructor, ensureAllowed(), layered checkRoute(), admin reset()
//   client_features_test.php store-down URL   Redis gone: the PSR-3 logger is told about every degraded answer
//   client_features_test.php gone URL         nothing listening: the logger hears "unreachable"
//   client_features_test.php announced URL PID the server's on_store_error is learnt from its
//                                              answers and kept once it is gone (PID: ratelimitd)

declare(strict_types=1);

require __DIR__ . '/../../clients/php/autoload.php';
require __DIR__ . '/lib/assert.php';
// Debian's php-psr-log (the php-psr extension, when loaded, provides the same interfaces).
if (!interface_exists(\Psr\Log\LoggerInterface::class)) {
    require '/usr/share/php/Psr/Log/autoload.php';
}

use Psr\Log\AbstractLogger;
use Ratelimitd\Client\Exception\CheckRejectedException;
use Ratelimitd\Client\Exception\RateLimitExceededException;
use Ratelimitd\Client\RateLimitClient;
use Ratelimitd\Client\RateLimitClientInterface;

/** A PSR-3 logger that keeps what it was told. */
final class MemoryLogger extends AbstractLogger
{
    /** @var list<array{level: string, message: string, context: array<string, mixed>}> */
    public array $records = [];

    public function log($level, $message, array $context = []): void
    {
        $this->records[] = ['level' => (string) $level, 'message' => (string) $message, 'context' => $context];
    }
}

/** SIGTERM to $pid, with or without the posix extension. */
function posix_kill_or_kill(int $pid): bool
{
    if (function_exists('posix_kill')) {
        return posix_kill($pid, 15);
    }
    exec('kill ' . $pid, $out, $status);
    return $status === 0;
}

/** Checks until no HTTP answer comes (ratelimitd has closed its port); the last result. */
function awaitUnreachable(RateLimitClient $client): \Ratelimitd\Client\Result
{
    $deadline = microtime(true) + 10;
    do {
        $r = $client->check('api', 'tenant_probe');
        if ($r->degradedReason === 'unreachable' || $r->degradedReason === 'timeout') {
            return $r;
        }
        usleep(20_000);
    } while (microtime(true) < $deadline);
    return $r;
}

[$mode, $url] = [$argv[1] ?? '', $argv[2] ?? ''];
$token = getenv('ADMIN_TOKEN') ?: null;

switch ($mode) {
    case 'api':
        Check::ok(is_subclass_of(RateLimitClient::class, RateLimitClientInterface::class), 'RateLimitClient implements RateLimitClientInterface');
        Check::ok(!method_exists(RateLimitClient::class, '__destruct'), 'no destructor (curl_close is deprecated in PHP 8.5)');
        $deprecations = [];
        set_error_handler(static function (int $no, string $msg) use (&$deprecations): bool {
            $deprecations[] = $msg;
            return true;
        }, E_ALL);
        $c = new RateLimitClient($url, timeoutMs: 2000);
        $c->check('api', 'tenant_destroy');
        unset($c);
        gc_collect_cycles();
        restore_error_handler();
        Check::same([], $deprecations, 'creating, using and destroying a client raises no notice or deprecation');

        $logger = new MemoryLogger();
        $client = new RateLimitClient($url, timeoutMs: 2000, logger: $logger, persistentConnections: true, adminToken: $token);
        Check::same(function_exists('curl_share_init_persistent'), $client->persistent(), 'persistent connections exactly where PHP offers curl_share_init_persistent (' . PHP_VERSION . ')');
        $first = $client->check('api', 'tenant_e')->ensureAllowed();
        Check::same(2, $first->remaining, 'ensureAllowed() returns the allowed result itself');
        $client->check('api', 'tenant_e');
        $client->check('api', 'tenant_e');
        $denied = $client->check('api', 'tenant_e');
        $e = Check::throws(RateLimitExceededException::class, fn () => $denied->ensureAllowed(), 'ensureAllowed() on a deny throws RateLimitExceededException');
        if ($e instanceof RateLimitExceededException) {
            Check::ok($e->retryAfter >= 1 && $e->retryAfter === $denied->retryAfter, 'the exception carries retryAfter', (string) $e->retryAfter);
            Check::same((string) $e->retryAfter, $e->headers['Retry-After'] ?? null, 'its headers carry Retry-After');
            Check::same('3', $e->headers['X-RateLimit-Limit'] ?? null, 'its headers carry X-RateLimit-Limit');
            Check::same('0', $e->headers['X-RateLimit-Remaining'] ?? null, 'its headers carry X-RateLimit-Remaining');
            Check::same(false, $e->degraded, 'a counted deny is not degraded');
            Check::same(429, $e->getCode(), 'a counted deny: code 429');
            Check::same($denied, $e->result, 'the exception carries the Result');
        }
        Check::same([], $logger->records, 'real verdicts (allowed and denied) log nothing');

        echo "--- layered route: per-minute (5/min) and per-hour (3/h) as one check\n";
        $l = $client->checkRoute('GET', '/layered/orders', 'tenant_l');
        Check::same('per-minute,per-hour', $l->policy, 'the answer names both policies, in the route order');
        Check::same(2, $l->remaining, 'the least remaining (per-hour: 3 - 1) is reported');
        Check::ok(str_contains($l->headers()['RateLimit-Policy'] ?? '', '"per-minute";q=5') && str_contains($l->headers()['RateLimit-Policy'] ?? '', '"per-hour";q=3'), 'RateLimit-Policy lists both limits', $l->headers()['RateLimit-Policy'] ?? '');
        $client->checkRoute('GET', '/layered/orders', 'tenant_l');
        $client->checkRoute('GET', '/layered/orders', 'tenant_l');
        $d = $client->checkRoute('GET', '/layered/orders', 'tenant_l');
        Check::ok(!$d->allowed && $d->retryAfter >= 1, 'the 4th is denied by the hourly limit');
        // The denied check charged no layer: the per-minute key still holds 3.
        $m = $client->check('per-minute', 'tenant_l');
        Check::same(1, $m->remaining, 'the deny charged nothing on per-minute (5 - 3 - this check)');

        echo "--- admin reset\n";
        $anonymous = new RateLimitClient($url, timeoutMs: 2000);
        $e = Check::throws(CheckRejectedException::class, fn () => $anonymous->reset('api', 'tenant_e'), 'reset without the admin token is refused');
        if ($e instanceof CheckRejectedException) {
            Check::same(401, $e->status, 'reset without token: 401');
        }
        Check::same(true, $client->reset('api', 'tenant_e'), 'reset with the token forgets the key');
        Check::same(2, $client->check('api', 'tenant_e')->remaining, 'after the reset the tenant starts afresh');
        Check::same(false, $client->reset('api', 'tenant_never_seen'), 'reset of a key that holds nothing: false');
        break;

    case 'store-down':
        $logger = new MemoryLogger();
        $client = new RateLimitClient($url, timeoutMs: 2000, logger: $logger);
        $r = $client->check('api', 'tenant_s');
        Check::ok($r->allowed && $r->degraded, 'Redis down, on_store_error allow: allowed, degraded');
        Check::same(1, count($logger->records), 'one warning for one degraded answer');
        $rec = $logger->records[0] ?? ['level' => '', 'message' => '', 'context' => []];
        Check::same('warning', $rec['level'], 'logged at warning');
        Check::ok(in_array($rec['context']['reason'] ?? '', ['store_unavailable', 'store_timeout'], true), 'the warning names the server\'s reason', json_encode($rec['context']));
        Check::same('api', $rec['context']['policy'] ?? null, 'the warning names the policy');
        $e = Check::throws(RateLimitExceededException::class, fn () => $client->check('strict', 'tenant_s')->ensureAllowed(), 'fail-closed 503 verdict: ensureAllowed() throws');
        if ($e instanceof RateLimitExceededException) {
            Check::same(true, $e->degraded, 'the exception says degraded (answer 503, not 429)');
            Check::same(503, $e->getCode(), 'code 503');
        }
        Check::same('denied', $logger->records[1]['context']['outcome'] ?? null, 'the fail-closed answer is logged as denied');
        break;

    case 'gone':
        $logger = new MemoryLogger();
        $client = new RateLimitClient($url, timeoutMs: 200, logger: $logger);
        $client->check('api', 'tenant_g');
        Check::same('unreachable', $logger->records[0]['context']['reason'] ?? null, "the client's own fail-open is logged: unreachable");
        break;

    case 'announced':
        // A fail-open client must not admit what a fail-closed policy would refuse: it follows
        // the on_store_error each answer announces, even after ratelimitd has gone away.
        $client = new RateLimitClient($url, timeoutMs: 200, failOpen: true);
        Check::same(false, $client->check('strict', 'tenant_n')->allowed, 'strict (on_store_error: deny) is denied by ratelimitd while Redis is down');
        Check::same(true, $client->check('api', 'tenant_n')->allowed, 'api (on_store_error: allow) is allowed by ratelimitd while Redis is down');
        $pid = (int) ($argv[3] ?? 0);
        Check::ok($pid > 0 && posix_kill_or_kill($pid), 'ratelimitd is told to stop');
        $gone = awaitUnreachable($client);
        Check::same('unreachable', $gone->degradedReason, 'ratelimitd is gone: the answer is the client\'s own');
        $strict = $client->check('strict', 'tenant_n');
        Check::same([false, true, 'unreachable'], [$strict->allowed, $strict->degraded, $strict->degradedReason], 'strict stays fail-closed on a fail-open client: the announced deny wins over the default');
        Check::same(true, $client->check('api', 'tenant_n')->allowed, 'api stays fail-open');
        Check::same(true, $client->check('strict', 'tenant_n', failOpen: true)->allowed, "a per-call failOpen still wins over the announced mode");
        Check::same(true, $client->check('never-asked', 'tenant_n')->allowed, "a policy never answered follows the client's default");
        $closed = new RateLimitClient($url, timeoutMs: 200, failOpen: false);
        Check::same(false, $closed->check('api', 'tenant_n')->allowed, 'a new client has heard nothing yet (no APCu in the CLI): its default');
        break;

    default:
        fwrite(STDERR, "usage: client_features_test.php api|store-down|gone|announced URL [PID]\n");
        exit(2);
}
Check::done();
