<?php
// Two limits on one action: a burst limit and an hourly one, decided by ratelimitd as one layered check.

declare(strict_types=1);

namespace App;

use Ratelimitd\Client\RatelimitdLimit;
use Symfony\Component\HttpFoundation\JsonResponse;

final class OrderController
{
    /**
     * Both must admit; a deny by one charges neither. ratelimitd's config holds the layered
     * route /_layered/burst+hourly that decides them (see ratelimitd.yaml).
     */
    #[RatelimitdLimit(policy: 'burst', scope: 'orders')]
    #[RatelimitdLimit(policy: 'hourly', scope: 'orders')]
    public function list(): JsonResponse
    {
        WorkLog::record('orders');
        return new JsonResponse(['orders' => []]);
    }
}
