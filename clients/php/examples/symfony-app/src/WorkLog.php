<?php
// Notes each controller run in $DEMO_WORK_LOG, so a test can see that a denied request did no work.

declare(strict_types=1);

namespace App;

final class WorkLog
{
    public static function record(string $action): void
    {
        $file = getenv('DEMO_WORK_LOG');
        if (is_string($file) && $file !== '') {
            file_put_contents($file, $action . "\n", FILE_APPEND | LOCK_EX);
        }
    }
}
