<?php
// Symfony's reserve()->wait() on a ratelimitd policy with max_delay (issue 50); run by
// tests/shell/php_symfony_reserve_test.sh against a real ratelimitd:
//   symfony_reserve_test.php URL   (policy smooth: 1/s, burst 2, max_delay 10s)

declare(strict_types=1);

require __DIR__ . '/../../clients/php/autoload.php';
require __DIR__ . '/lib/assert.php';
require_once '/usr/share/php/Symfony/Component/RateLimiter/autoload.php';

use Ratelimitd\Client\RateLimitClient;
use Ratelimitd\Client\RatelimitdLimit;
use Ratelimitd\Client\Symfony\RatelimitdLimiter;
use Symfony\Component\RateLimiter\Exception\MaxWaitDurationExceededException;
use Symfony\Component\RateLimiter\Exception\ReserveNotSupportedException;

$client = new RateLimitClient($argv[1] ?? '', timeoutMs: 2000);
$limiter = new RatelimitdLimiter($client, new RatelimitdLimit('smooth'), 'tenant_reserve');

// The burst: act now.
Check::ok($limiter->reserve()->getWaitDuration() === 0.0, 'reserve() within the burst: act now');
Check::ok($limiter->reserve()->getWaitDuration() === 0.0, 'reserve() the burst\'s last token: act now');
// Past the burst: booked one emission interval (1 s) after the last, at most.
$reservation = $limiter->reserve();
$booked = $limiter->lastResult()->delayMs;
$wait = $reservation->getWaitDuration();
Check::ok($booked >= 1 && $booked <= 1000, 'reserve() past the burst: booked within 1 s', "delay_ms $booked");
Check::ok($wait > 0.0 && $wait <= $booked / 1000, 'getWaitDuration() is the booked delay (less what has passed)', "wait $wait s");
$before = microtime(true);
$reservation->wait();
Check::ok(microtime(true) >= $before + $wait - 0.001, 'wait() sleeps until the booked time', 'slept ' . (microtime(true) - $before) . ' s');
// Booking further ahead than the caller accepts: MaxWaitDurationExceededException.
for ($i = 0; $i < 5; ++$i) {
    $limiter->reserve();
}
Check::throws(MaxWaitDurationExceededException::class, fn () => $limiter->reserve(1, 0.05), 'reserve(1, 0.05) booked further ahead: MaxWaitDurationExceededException');
// Beyond max_delay ratelimitd denies: as before, no booking.
for ($i = 0; $i < 12; ++$i) {
    try {
        $limiter->reserve();
    } catch (ReserveNotSupportedException) {
        Check::ok(true, 'reserve() beyond max_delay: denied (ReserveNotSupportedException)');
        Check::done();
    }
}
Check::ok(false, 'reserve() beyond max_delay: denied (ReserveNotSupportedException)', 'every reserve() was booked');
Check::done();
