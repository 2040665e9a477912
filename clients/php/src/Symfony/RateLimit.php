<?php
// #[RateLimit] names the ratelimitd policy of a controller (method, invokable class or closure).

declare(strict_types=1);

namespace Ratelimitd\Client\Symfony;

/**
 * Marks a controller as rate-limited, e.g.
 *
 *     #[RateLimit(policy: 'api-default')]
 *     #[RateLimit(policy: 'exports', scope: 'POST_exports', cost: 5, failOpen: false)]
 *
 * On a class it applies to every action of the class; an attribute on the method wins.
 * The same class describes entries of RateLimitSubscriber's route map.
 */
#[\Attribute(\Attribute::TARGET_CLASS | \Attribute::TARGET_METHOD | \Attribute::TARGET_FUNCTION)]
final class RateLimit
{
    /**
     * @param string    $policy   policy name in ratelimitd's registry
     * @param string    $scope    what is limited; requests sharing policy + tenant + scope share one budget
     * @param int       $cost     units one request uses
     * @param bool|null $failOpen when ratelimitd cannot be asked: true allow, false answer 503;
     *                            null: the client's default
     */
    public function __construct(
        public readonly string $policy,
        public readonly string $scope = 'global',
        public readonly int $cost = 1,
        public readonly ?bool $failOpen = null,
    ) {
    }
}
