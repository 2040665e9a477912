<?php
// One log file the test reads: the ratelimitd client's degraded-answer warnings land here.

return [
    'default' => 'single',
    'channels' => [
        'single' => ['driver' => 'single', 'path' => getenv('APP_LOG') ?: sys_get_temp_dir() . '/laravel.log', 'level' => 'debug'],
    ],
];
