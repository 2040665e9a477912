<?php
// Route name => ratelimitd policy, for routes whose controller carries no #[RatelimitdLimit] (or to override one); a list of limits is one layered check.

declare(strict_types=1);

return [
    // Logins fail closed: while ratelimitd is unreachable, /login answers 503 rather than
    // letting unlimited password guesses through.
    'login' => ['policy' => 'login', 'scope' => 'global', 'fail_open' => false],
];
