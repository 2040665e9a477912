<?php
// The Symfony RateLimiter bridge with Debian's php-symfony-rate-limiter against a real ratelimitd;
// run by tests/shell/php_symfony_limiter_test.sh.
//   symfony_limiter_test.php api URL    LimiterInterface, CompoundLimiter, factory, RequestRateLimiterInterface, reset
//   symfony_limiter_test.php down URL   ratelimitd stopped: fail open / fail closed as RateLimit values

declare(strict_types=1);

require __DIR__ . '/../../clients/php/autoload.php';
require __DIR__ . '/lib/assert.php';
foreach (['RateLimiter', 'HttpFoundation'] as $component) {
    require_once "/usr/share/php/Symfony/Component/$component/autoload.php";
}

use Ratelimitd\Client\RateLimitClient;
use Ratelimitd\Client\RatelimitdLimit;
use Ratelimitd\Client\Symfony\RatelimitdLimiter;
use Ratelimitd\Client\Symfony\RatelimitdLimiterFactory;
use Ratelimitd\Client\Symfony\RatelimitdRequestLimiter;
use Symfony\Component\HttpFoundation\RateLimiter\RequestRateLimiterInterface;
use Symfony\Component\HttpFoundation\Request;
use Symfony\Component\RateLimiter\CompoundLimiter;
use Symfony\Component\RateLimiter\Exception\MaxWaitDurationExceededException;
use Symfony\Component\RateLimiter\Exception\RateLimitExceededException;
use Symfony\Component\RateLimiter\Exception\ReserveNotSupportedException;
use Symfony\Component\RateLimiter\LimiterInterface;

/** Code written for Symfony's component, knowing nothing of ratelimitd. */
function spend(LimiterInterface $limiter, int $tokens = 1): array
{
    $limit = $limiter->consume($tokens);
    return [$limit->isAccepted(), $limit->getRemainingTokens(), $limit->getLimit(), $limit->getRetryAfter()->getTimestamp() - time()];
}

[$mode, $url] = [$argv[1] ?? '', $argv[2] ?? ''];
$client = new RateLimitClient($url, timeoutMs: 2000, adminToken: getenv('ADMIN_TOKEN') ?: null);

switch ($mode) {
    case 'api':
        $limiter = new RatelimitdLimiter($client, new RatelimitdLimit('api'), 'tenant_sf');
        Check::same([true, 2, 3, 0], spend($limiter), 'consume(): accepted, 2 of 3 left, retry now');
        Check::same([true, 1, 3, 0], spend($limiter), 'consume(): 1 left');
        [$ok, $left, $lim, $retry] = spend($limiter);
        Check::ok($ok && $left === 0 && $retry > 0, 'the last token: accepted, 0 left, retryAfter = the window reset', "retry in $retry s");
        [$ok, , , $retry] = spend($limiter);
        Check::ok(!$ok && $retry >= 1 && $retry <= 60, 'consume() after the quota: not accepted, retryAfter = now + Retry-After', "retry in $retry s");
        Check::throws(RateLimitExceededException::class, fn () => $limiter->consume()->ensureAccepted(), "Symfony's own ensureAccepted() throws its RateLimitExceededException");
        Check::throws(ReserveNotSupportedException::class, fn () => $limiter->reserve(), 'reserve() when denied: ReserveNotSupportedException (no booking of future tokens)');
        Check::throws(MaxWaitDurationExceededException::class, fn () => $limiter->reserve(1, 0.5), 'reserve(1, 0.5) when Retry-After is longer: MaxWaitDurationExceededException');
        Check::throws(\InvalidArgumentException::class, fn () => $limiter->consume(0), 'consume(0) is refused (ratelimitd charges >= 1)');

        $limiter->reset();
        Check::same([true, 2, 3, 0], spend($limiter), 'reset() through the admin API: the next consume starts afresh');
        $fresh = new RatelimitdLimiter($client, new RatelimitdLimit('api'), 'tenant_reserve');
        $reservation = $fresh->reserve(2);
        Check::ok($reservation->getWaitDuration() === 0.0 && $reservation->getRateLimit()->getRemainingTokens() === 1, 'reserve(2) when admitted: act now, 2 tokens spent');
        Check::same([false, 1, 3], array_slice(spend($fresh, 2), 0, 3), 'consume(2) with 1 left: not accepted, nothing spent');

        // Two ratelimitd limiters in Symfony's own CompoundLimiter (each consumed separately).
        $compound = new CompoundLimiter([
            new RatelimitdLimiter($client, new RatelimitdLimit('api'), 'tenant_compound'),
            new RatelimitdLimiter($client, new RatelimitdLimit('hourly'), 'tenant_compound'),
        ]);
        Check::same([true, 1, 2, 0], spend($compound), "Symfony's CompoundLimiter over two ratelimitd limiters reports the tighter (hourly 2)");
        // The atomic alternative: one RatelimitdLimiter with both limits, one layered check.
        $layered = new RatelimitdLimiter($client, [new RatelimitdLimit('api'), new RatelimitdLimit('hourly')], 'tenant_layered');
        Check::same([true, 1, 2, 0], spend($layered), 'one limiter, two limits: one layered check, the tighter reported');
        spend($layered);
        Check::same(false, spend($layered)[0], 'the layered limiter denies once hourly is spent');
        Check::same(true, $client->check('api', 'tenant_layered')->allowed, 'and its deny charged api nothing: a 3rd api unit is still there');

        $factory = new RatelimitdLimiterFactory($client, new RatelimitdLimit('api'));
        Check::same(2, $factory->create('user-42')->consume()->getRemainingTokens(), 'factory: create(key) limits that key');
        Check::same(1, $factory->create('user-42')->consume()->getRemainingTokens(), 'factory: the same key shares one budget');
        Check::same(2, $factory->create('user+43@example.com')->consume()->getRemainingTokens(), 'factory: a key ratelimitd would refuse becomes a digest tenant, with its own budget');

        $requests = new RatelimitdRequestLimiter($client, new RatelimitdLimit('api', 'web'));
        Check::ok($requests instanceof RequestRateLimiterInterface, 'RatelimitdRequestLimiter implements RequestRateLimiterInterface');
        $from = static fn (string $ip): Request => Request::create('/', 'GET', server: ['REMOTE_ADDR' => $ip]);
        Check::same(2, $requests->consume($from('192.0.2.7'))->getRemainingTokens(), 'consume(Request): limited by client IP');
        Check::same(2, $requests->consume($from('192.0.2.8'))->getRemainingTokens(), 'another IP: its own budget');
        Check::same(1, $requests->consume($from('192.0.2.7'))->getRemainingTokens(), 'the first IP again: shared budget');
        Check::same(0, $client->check('api', 'ip:192.0.2.7', 'web')->remaining, 'the tenant is ip:192.0.2.7 on scope web: a direct check takes its last unit');
        $requests->reset($from('192.0.2.7'));
        Check::same(2, $requests->consume($from('192.0.2.7'))->getRemainingTokens(), 'reset(Request) forgets that IP');

        $login = RatelimitdRequestLimiter::forLogin($client, new RatelimitdLimit('login'));
        $attempt = static function (string $user, string $ip) use ($from): Request {
            $r = $from($ip);
            $r->attributes->set('_security.last_username', $user);
            return $r;
        };
        Check::same(1, $login->consume($attempt('Alice', '192.0.2.9'))->getRemainingTokens(), 'forLogin(): budget per username + IP');
        Check::same(0, $login->consume($attempt('alice', '192.0.2.9'))->getRemainingTokens(), 'forLogin(): the username case does not give a new budget');
        Check::same(false, $login->consume($attempt('alice', '192.0.2.9'))->isAccepted(), 'forLogin(): the 3rd attempt is refused');
        Check::same(true, $login->consume($attempt('bob', '192.0.2.9'))->isAccepted(), 'forLogin(): another username has its own budget');
        break;

    case 'down':
        $open = new RatelimitdLimiter(new RateLimitClient($url, timeoutMs: 200, failOpen: true), new RatelimitdLimit('api'), 'tenant_down');
        $r = $open->consume();
        Check::ok($r->isAccepted() && $r->getLimit() === 0, 'ratelimitd down, fail open: accepted, no numbers (limit 0)');
        $closed = new RatelimitdLimiter(new RateLimitClient($url, timeoutMs: 200, failOpen: false), new RatelimitdLimit('api'), 'tenant_down');
        $r = $closed->consume();
        Check::ok(!$r->isAccepted() && $r->getRetryAfter()->getTimestamp() - time() >= 1, 'ratelimitd down, fail closed: not accepted, retry after 1 s');
        break;

    default:
        fwrite(STDERR, "usage: symfony_limiter_test.php api|down URL\n");
        exit(2);
}
Check::done();
