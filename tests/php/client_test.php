<?php
// Drives Ratelimitd\Client\RateLimitClient against a real ratelimitd; run by tests/shell/php_client_test.sh.
//   client_test.php verdicts URL       verdicts, numbers, headers, 400 errors, keep-alive reuse
//   client_test.php outage URL PID     ratelimitd frozen (SIGSTOP) then stopped: fail open/closed, fast
//   client_test.php store-down URL     Redis gone: ratelimitd's own fail-open/fail-closed verdicts
//   client_test.php store-slow URL     Redis hung: a default client still gets a deny policy's deny

declare(strict_types=1);

require __DIR__ . '/../../clients/php/autoload.php';
require __DIR__ . '/lib/assert.php';

use Ratelimitd\Client\Exception\CheckRejectedException;
use Ratelimitd\Client\RateLimitClient;
use Ratelimitd\Client\Result;

[$mode, $url] = [$argv[1] ?? '', $argv[2] ?? ''];

/** The `t` parameter of the single-window RateLimit field, e.g. "api";r=2;t=41 -> 41. */
function rateLimitT(Result $r): ?int
{
    return preg_match('/;t=(\d+)$/', $r->headers()['RateLimit'] ?? '', $m) === 1 ? (int) $m[1] : null;
}

/** True once every thread of $pid is in state T (stopped), polling for at most 10 s (a bound for a loaded machine). */
function waitUntilStopped(int $pid): bool
{
    $deadline = microtime(true) + 10;
    do {
        $states = [];
        foreach (glob("/proc/$pid/task/*/stat") ?: [] as $stat) {
            // The state follows the parenthesised command name, which may itself hold spaces.
            $text = (string) @file_get_contents($stat);
            $states[] = substr($text, strrpos($text, ')') + 2, 1);
        }
        if ($states !== [] && count(array_diff($states, ['T', 't'])) === 0) {
            return true;
        }
        usleep(1000);
    } while (microtime(true) < $deadline);
    return false;
}

/** Waits until the process has exited (gone, or a zombie its parent has not reaped). */
function waitUntilExited(int $pid): bool
{
    $deadline = microtime(true) + 10;
    do {
        $text = @file_get_contents("/proc/$pid/stat");
        if ($text === false || substr($text, strrpos($text, ')') + 2, 1) === 'Z') {
            return true;
        }
        usleep(5000);
    } while (microtime(true) < $deadline);
    return false;
}

/**
 * A check of policy api that ratelimitd really answered: with a 50 ms timeout a stalled CI
 * machine (both cores busy, a sanitizer build) can turn many answers in a row into a (correct)
 * fail-open, so ask again until one is real, for 30 s at most.
 */
function firstRealVerdict(RateLimitClient $client, string $tenant): Result
{
    $deadline = microtime(true) + 30;
    do {
        $result = $client->check('api', $tenant);
        if (!$result->degraded) {
            return $result;
        }
        usleep(100_000);
    } while (microtime(true) < $deadline);
    return $result;
}

switch ($mode) {
    case 'verdicts':
        Check::same(200, (new RateLimitClient($url))->timeoutMs(), 'default timeout is 200 ms');
        // Verdicts, not timeouts, are under test here: a generous timeout keeps a loaded CI
        // machine (sanitizer build, parallel tests) from turning a slow answer into fail-open.
        $client = new RateLimitClient($url, timeoutMs: 2000);

        // Policy "api": fixed window, 3 per minute.
        $before = time();
        $first = $client->check('api', 'tenant_a');
        Check::same(true, $first->allowed, 'first check allowed');
        Check::same(false, $first->degraded, 'a real verdict is not degraded');
        Check::same(3, $first->limit, 'limit');
        Check::same(2, $first->remaining, 'remaining after one');
        Check::same(0, $first->retryAfter, 'retryAfter 0 when allowed');
        Check::ok($first->reset >= $before && $first->reset <= time() + 61, 'reset is epoch seconds within the window', (string) $first->reset);
        $h = $first->headers();
        Check::same('3', $h['X-RateLimit-Limit'] ?? null, 'X-RateLimit-Limit header');
        Check::same('2', $h['X-RateLimit-Remaining'] ?? null, 'X-RateLimit-Remaining header');
        Check::same((string) $first->reset, $h['X-RateLimit-Reset'] ?? null, 'X-RateLimit-Reset header equals reset');
        Check::same('"api";q=3;w=60', $h['RateLimit-Policy'] ?? null, 'RateLimit-Policy header');
        Check::ok(preg_match('/^"api";r=2;t=\d+$/', $h['RateLimit'] ?? '') === 1, 'RateLimit header', $h['RateLimit'] ?? 'absent');
        Check::ok(!isset($h['Retry-After']), 'no Retry-After when allowed');
        Check::ok(!isset($h['Cache-Control']), "ratelimitd's Cache-Control is not copied onto the app's response");

        Check::same(1, $client->check('api', 'tenant_a')->remaining, 'second check: remaining 1');
        Check::same(0, $client->check('api', 'tenant_a')->remaining, 'third check: remaining 0');
        $denied = $client->check('api', 'tenant_a');
        Check::same(false, $denied->allowed, 'fourth check denied');
        Check::same(0, $denied->remaining, 'denied: remaining 0');
        Check::ok($denied->retryAfter >= 1 && $denied->retryAfter <= 60, 'denied: retryAfter in 1..60', (string) $denied->retryAfter);
        Check::same((string) $denied->retryAfter, $denied->headers()['Retry-After'] ?? null, 'denied: Retry-After header equals retryAfter');
        Check::same($denied->retryAfter, rateLimitT($denied), 'denied: RateLimit t equals Retry-After');

        Check::same(2, $client->check('api', 'tenant_b')->remaining, 'another tenant has its own budget');
        Check::same(2, $client->check('api', 'tenant_a', 'exports')->remaining, 'another scope has its own budget');
        Check::same(1, $client->check('api', 'tenant_c', 'global', 2)->remaining, 'cost 2 uses two units');
        $tooDear = $client->check('api', 'tenant_c', 'global', 2);
        Check::ok(!$tooDear->allowed && $tooDear->remaining === 1, 'cost 2 with one unit left is denied and consumes nothing');

        Check::same(9, $client->check('api', 'tenant_pro', plan: 'pro')->remaining, 'a plan named by the caller: its limit (10)');
        $e = Check::throws(CheckRejectedException::class, fn () => $client->check('api', 'tenant_pro', plan: 'gold'), 'an unknown plan throws');
        if ($e instanceof CheckRejectedException) {
            Check::same('unknown_plan', $e->errorCode, 'unknown plan: error code');
        }

        $e = Check::throws(CheckRejectedException::class, fn () => $client->check('no-such-policy', 'tenant_a'), 'unknown policy throws');
        if ($e instanceof CheckRejectedException) {
            Check::same(400, $e->status, 'unknown policy: status 400');
            Check::same('unknown_policy', $e->errorCode, 'unknown policy: error code');
            Check::ok($e->detail !== '' && str_contains($e->getMessage(), $e->detail), 'message names the detail', $e->getMessage());
        }
        $e = Check::throws(CheckRejectedException::class, fn () => $client->check('api', 'bad tenant'), 'tenant with a space throws');
        if ($e instanceof CheckRejectedException) {
            Check::same('invalid_request', $e->errorCode, 'bad tenant: invalid_request');
            Check::ok(str_contains($e->getMessage(), 'tenant'), 'bad tenant: the message names the field', $e->getMessage());
        }
        $e = Check::throws(CheckRejectedException::class, fn () => $client->check('api', 'tenant_a', 'global', 0), 'cost 0 throws');
        if ($e instanceof CheckRejectedException) {
            Check::same('invalid_cost', $e->errorCode, 'cost 0: invalid_cost');
        }

        // Everything above (verdicts and 400s) went over one TCP connection.
        Check::same(1, $client->connectionsOpened(), 'keep-alive: one connection for all checks');

        $wrongUrl = new RateLimitClient($url . '/not-ratelimitd');
        $e = Check::throws(CheckRejectedException::class, fn () => $wrongUrl->check('api', 'tenant_x'), 'a wrong base URL throws (404), it is not a verdict');
        if ($e instanceof CheckRejectedException) {
            Check::same(404, $e->status, 'wrong base URL: status 404');
        }
        break;

    case 'outage':
        $pid = (int) ($argv[3] ?? 0);
        $client = new RateLimitClient($url, timeoutMs: 50, failOpen: true);
        Check::same(false, firstRealVerdict($client, 'tenant_outage')->degraded, 'ratelimitd answers before the outage');

        // Frozen: the kernel still accepts connections and buffers the request, nobody answers.
        posix_kill($pid, defined('SIGSTOP') ? SIGSTOP : 19);
        // kill() returns before every thread has stopped; wait until the kernel shows them all
        // stopped, or a last answer could still slip out.
        Check::ok(waitUntilStopped($pid), 'ratelimitd is frozen');
        [$open, $s] = Check::timed(fn () => $client->check('api', 'tenant_hung'));
        printf("      hung ratelimitd, fail open: %.0f ms\n", $s * 1000);
        Check::ok($open->allowed && $open->degraded && $open->degradedReason === 'timeout', 'hung: fail open allows, degraded by timeout', var_export($open, true));
        Check::ok($s >= 0.045 && $s < 1.0, 'hung: answered after the 50 ms timeout, well within 1 s', sprintf('%.3f s', $s));
        Check::same([], $open->headers(), 'fail open: no limit headers, since no numbers are known');
        [$closed, $s] = Check::timed(fn () => $client->check('api', 'tenant_hung', failOpen: false));
        printf("      hung ratelimitd, fail closed: %.0f ms\n", $s * 1000);
        Check::ok(!$closed->allowed && $closed->degraded && $closed->retryAfter === 1, 'hung: per-call fail closed denies with retryAfter 1');
        Check::same(['Retry-After' => '1'], $closed->headers(), 'fail closed: Retry-After 1 only');
        Check::ok($s < 1.0, 'hung: fail closed within 1 s', sprintf('%.3f s', $s));

        posix_kill($pid, defined('SIGCONT') ? SIGCONT : 18);
        $back = firstRealVerdict($client, 'tenant_outage');
        Check::ok($back->allowed && !$back->degraded, 'the same client recovers when ratelimitd resumes', var_export($back, true));

        // Stopped: nothing listens, the connect is refused.
        // Wait for the exit itself, not a refused connect: the listener closes first, and a
        // draining server still answers a request that reaches a connection it has not yet
        // closed (the client's kept-alive one, on a loaded machine).
        posix_kill($pid, defined('SIGTERM') ? SIGTERM : 15);
        Check::ok(waitUntilExited($pid), 'ratelimitd has exited');
        [$open, $s] = Check::timed(fn () => $client->check('api', 'tenant_outage'));
        printf("      stopped ratelimitd, fail open: %.0f ms\n", $s * 1000);
        Check::ok($open->allowed && $open->degraded && $open->degradedReason === 'unreachable', 'stopped: fail open allows', var_export($open, true));
        Check::ok($s < 1.0, 'stopped: fail open within 1 s', sprintf('%.3f s', $s));
        $closedClient = new RateLimitClient($url, failOpen: false);
        [$closed, $s] = Check::timed(fn () => $closedClient->check('api', 'tenant_outage'));
        printf("      stopped ratelimitd, fail closed: %.0f ms\n", $s * 1000);
        Check::ok(!$closed->allowed && $closed->degraded && $closed->degradedReason === 'unreachable', 'stopped: a fail-closed client denies');
        Check::ok($s < 1.0, 'stopped: fail closed within 1 s', sprintf('%.3f s', $s));
        Check::same(true, $closedClient->check('api', 'tenant_outage', failOpen: true)->allowed, 'the per-call choice overrides the client default');
        break;

    case 'store-down':
        // ratelimitd is up, its Redis is not: the policies' own on_store_error decides, and the
        // client reports that verdict as it is, whatever its own fail-open default.
        $client = new RateLimitClient($url, timeoutMs: 500, failOpen: false);
        $open = $client->check('api', 'tenant_store');
        Check::ok($open->allowed && $open->degraded && $open->limit === null, 'policy with on_store_error allow: allowed, degraded, no numbers', var_export($open, true));
        Check::same([], $open->headers(), 'server fail open: no limit headers');
        $client = new RateLimitClient($url, timeoutMs: 500, failOpen: true);
        $closed = $client->check('strict', 'tenant_store');
        Check::ok(!$closed->allowed && $closed->degraded && $closed->retryAfter >= 1, 'policy with on_store_error deny: the 503 is a deny, not an error', var_export($closed, true));
        Check::ok(in_array($closed->degradedReason, ['store_unavailable', 'store_timeout'], true), "server's degraded reason is reported", (string) $closed->degradedReason);
        break;

    case 'store-slow':
        // Redis hangs: ratelimitd answers at its store_timeout (50 ms by default) by each
        // policy's on_store_error. A client with the default timeout and failOpen: true must
        // wait for that answer: giving up first, it would admit what the policy refuses.
        $client = new RateLimitClient($url, failOpen: true);
        for ($i = 0; $i < 3; $i++) {
            [$r, $s] = Check::timed(fn () => $client->check('strict', 'tenant_slow'));
            printf("      Redis hung, policy on_store_error deny: %s (%s) in %.0f ms\n",
                $r->allowed ? 'allowed' : 'denied', (string) $r->degradedReason, $s * 1000);
            Check::ok(!$r->allowed && in_array($r->degradedReason, ['store_timeout', 'store_unavailable'], true),
                "default client, Redis hung: the policy's deny (server's verdict), not the client's fail open",
                var_export($r, true));
        }
        break;

    default:
        fwrite(STDERR, "usage: client_test.php verdicts|outage|store-down|store-slow URL [PID]\n");
        exit(2);
}
Check::done();
