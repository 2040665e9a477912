<?php
// The example app's controllers: one limited by attribute, one by the route map, one not limited.

declare(strict_types=1);

namespace App;

use Ratelimitd\Client\RatelimitdLimit;
use Symfony\Component\HttpFoundation\JsonResponse;
use Symfony\Component\HttpFoundation\Request;

final class DemoController
{
    /** Limited by its attribute: policy "api", scope "global". */
    #[RatelimitdLimit(policy: 'api')]
    public function hello(Request $request): JsonResponse
    {
        WorkLog::record('hello');
        return new JsonResponse(['hello' => $request->attributes->get('tenant_id') ?? 'anonymous']);
    }

    /** Limited through config/ratelimit.php (route "login"), which fails closed. */
    public function login(): JsonResponse
    {
        WorkLog::record('login');
        return new JsonResponse(['login' => 'form']);
    }

    /** No attribute, no map entry: never sent to ratelimitd. */
    public function health(): JsonResponse
    {
        WorkLog::record('health');
        return new JsonResponse(['status' => 'ok']);
    }
}
