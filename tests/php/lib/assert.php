<?php
// Minimal assertions for the PHP test scripts: each check prints one line; done() exits non-zero on any failure.

declare(strict_types=1);

final class Check
{
    private static int $passed = 0;
    private static int $failed = 0;

    public static function ok(bool $condition, string $what, string $detail = ''): void
    {
        if ($condition) {
            self::$passed++;
            echo "ok    $what\n";
        } else {
            self::$failed++;
            echo "FAIL  $what" . ($detail !== '' ? "  ($detail)" : '') . "\n";
        }
    }

    public static function same(mixed $expected, mixed $actual, string $what): void
    {
        self::ok($expected === $actual, $what, 'expected ' . var_export($expected, true) . ', got ' . var_export($actual, true));
    }

    /** Runs $fn, which must throw $class; returns the exception for further checks. */
    public static function throws(string $class, callable $fn, string $what): ?\Throwable
    {
        try {
            $fn();
        } catch (\Throwable $e) {
            self::ok($e instanceof $class, $what, 'threw ' . get_class($e) . ': ' . $e->getMessage());
            return $e;
        }
        self::ok(false, $what, "no $class thrown");
        return null;
    }

    /** Runs $fn and returns [its result, elapsed seconds]. */
    public static function timed(callable $fn): array
    {
        $start = hrtime(true);
        $result = $fn();
        return [$result, (hrtime(true) - $start) / 1e9];
    }

    public static function done(): never
    {
        echo self::$passed . ' passed, ' . self::$failed . " failed\n";
        exit(self::$failed === 0 ? 0 : 1);
    }
}
