<?php
// A class-level attribute, under its deprecated old name #[Symfony\RateLimit] (still read): every action shares the "reports" scope of policy "api" and costs 2 units.

declare(strict_types=1);

namespace App;

use Ratelimitd\Client\Symfony\RateLimit;
use Symfony\Component\HttpFoundation\JsonResponse;

#[RateLimit(policy: 'api', scope: 'reports', cost: 2)]
final class ReportController
{
    public function list(): JsonResponse
    {
        WorkLog::record('reports');
        return new JsonResponse(['reports' => []]);
    }
}
