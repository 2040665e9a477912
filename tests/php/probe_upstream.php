<?php
// The API behind nginx in probe_proxy_test.sh (served by `php -S`): every path answers 200 "ok".

declare(strict_types=1);

header('Content-Type: text/plain');
echo "ok\n";
