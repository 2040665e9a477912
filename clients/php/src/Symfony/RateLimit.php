<?php
// Deprecated: the old name of #[RatelimitdLimit], kept so existing controllers keep working.

declare(strict_types=1);

namespace Ratelimitd\Client\Symfony;

use Ratelimitd\Client\RatelimitdLimit;

/**
 * @deprecated since 2.0, use #[Ratelimitd\Client\RatelimitdLimit]: this short name is the one
 *             Symfony 8.1 gives its own native attribute. Read exactly like RatelimitdLimit
 *             (repeatable too); when a controller carries both, the new name wins.
 */
#[\Attribute(\Attribute::TARGET_CLASS | \Attribute::TARGET_METHOD | \Attribute::TARGET_FUNCTION | \Attribute::IS_REPEATABLE)]
final class RateLimit
{
    public function __construct(
        public readonly string $policy,
        public readonly string $scope = 'global',
        public readonly int $cost = 1,
        public readonly ?bool $failOpen = null,
    ) {
        @trigger_error(sprintf('%s is deprecated, use %s.', self::class, RatelimitdLimit::class), E_USER_DEPRECATED);
    }

    public function toLimit(): RatelimitdLimit
    {
        return new RatelimitdLimit($this->policy, $this->scope, $this->cost, $this->failOpen);
    }
}
