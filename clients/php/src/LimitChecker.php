<?php
// Decides the limits of one request: one check for one limit, one layered route check for several.

declare(strict_types=1);

namespace Ratelimitd\Client;

use Ratelimitd\Client\Exception\CheckRejectedException;
use Ratelimitd\Client\Exception\LayeredLimitsException;

/**
 * The one place that turns "this request has these limits" into ratelimitd calls, shared by
 * the Symfony subscriber, the PSR-15 middleware and the Laravel middleware.
 *
 * ratelimitd's /v1/check takes one policy per call; several limits are decided atomically
 * only through a layered route of its config (`limits:`), reached with `method` + `path`.
 * So several limits become one checkRoute() on the path
 * `<layeredPrefix><policy1>+<policy2>...` (in the order given), which ratelimitd's config
 * must define:
 *
 *     routes:
 *       - path: "/_layered/per-minute+per-hour"
 *         limits: [ { policy: per-minute }, { policy: per-hour } ]
 *
 * ratelimitd answers with the policies it decided; anything else (no such route, a route with
 * other policies) throws LayeredLimitsException naming the route to add, never a silent
 * single-policy check.
 */
final class LimitChecker
{
    /** ratelimitd's bound on the limits of one route. */
    private const MAX_LIMITS = 8;

    public function __construct(
        private readonly RateLimitClientInterface $client,
        private readonly string $layeredPrefix = '/_layered/',
    ) {
    }

    /**
     * @param list<RatelimitdLimit> $limits at least one
     *
     * @throws LayeredLimitsException when several limits cannot be one layered check
     * @throws CheckRejectedException when ratelimitd refuses a single check
     */
    public function decide(array $limits, string $tenant, string $method = 'GET'): Result
    {
        if ($limits === []) {
            throw new \InvalidArgumentException('decide() needs at least one limit');
        }
        $first = $limits[0];
        if (count($limits) === 1) {
            return $this->client->check($first->policy, $tenant, $first->scope, $first->cost, $first->failOpen);
        }
        $policies = self::validate($limits);
        $path = $this->layeredPrefix . implode('+', $policies);
        try {
            $result = $this->client->checkRoute($method, $path, $tenant, $first->scope, $first->cost, $first->failOpen);
        } catch (CheckRejectedException $e) {
            throw self::missingRoute($path, $policies, "ratelimitd answered $e->status $e->errorCode");
        }
        if (!$result->degraded) {
            $decided = explode(',', (string) $result->policy);
            if (self::sorted($decided) !== self::sorted($policies)) {
                throw self::missingRoute($path, $policies, 'ratelimitd decided "' . $result->policy . '"');
            }
        }
        return $result;
    }

    /**
     * @param list<RatelimitdLimit> $limits
     * @return list<string> the policies, in the given order
     */
    private static function validate(array $limits): array
    {
        if (count($limits) > self::MAX_LIMITS) {
            throw new LayeredLimitsException(sprintf('%d limits on one request; ratelimitd decides at most %d as one', count($limits), self::MAX_LIMITS));
        }
        $first = $limits[0];
        $policies = [];
        foreach ($limits as $limit) {
            if ($limit->scope !== $first->scope || $limit->cost !== $first->cost || $limit->failOpen !== $first->failOpen) {
                throw new LayeredLimitsException(sprintf(
                    'layered limits %s and %s differ in scope, cost or failOpen; ratelimitd decides'
                    . ' one scope and one cost for all the limits of a request, so give them the same',
                    $first->policy,
                    $limit->policy,
                ));
            }
            if (in_array($limit->policy, $policies, true)) {
                throw new LayeredLimitsException(sprintf('policy %s is named twice on one request; a policy counts once per request', $limit->policy));
            }
            $policies[] = $limit->policy;
        }
        return $policies;
    }

    /** @param list<string> $policies */
    private static function missingRoute(string $path, array $policies, string $why): LayeredLimitsException
    {
        $limits = implode(', ', array_map(static fn (string $p): string => "{ policy: $p }", $policies));
        return new LayeredLimitsException(sprintf(
            'ratelimitd has no layered route for %s (%s); add to its routes: - { path: "%s", limits: [ %s ] }',
            implode(' + ', $policies),
            $why,
            $path,
            $limits,
        ));
    }

    /**
     * @param list<string> $names
     * @return list<string>
     */
    private static function sorted(array $names): array
    {
        sort($names);
        return $names;
    }
}
