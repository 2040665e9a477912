<?php
// Only the app's own provider: ratelimitd's provider must arrive through package auto-discovery.

return [
    'name' => 'ratelimitd-test',
    'env' => 'production',
    'debug' => false,
    'providers' => [App\RoutesProvider::class],
];
