<?php
// #[RatelimitdLimit] names one ratelimitd limit of a controller; repeat it for layered limits decided as one.

declare(strict_types=1);

namespace Ratelimitd\Client;

/**
 * One limit a request must pass, e.g.
 *
 *     #[RatelimitdLimit(policy: 'api-default')]
 *     #[RatelimitdLimit(policy: 'exports', scope: 'POST_exports', cost: 5, failOpen: false)]
 *
 * Repeatable: several on one controller are one layered check (LimitChecker), decided
 * atomically by ratelimitd, denied if any denies, charging none on a deny. On a class it
 * applies to every action of the class; the attributes on a method win over the class's.
 * Named apart from Symfony's own #[RateLimit] (symfony/http-kernel 8.1) on purpose.
 * The same class describes entries of route maps (Symfony subscriber, PSR-15 middleware).
 */
#[\Attribute(\Attribute::TARGET_CLASS | \Attribute::TARGET_METHOD | \Attribute::TARGET_FUNCTION | \Attribute::IS_REPEATABLE)]
final class RatelimitdLimit
{
    /**
     * @param string    $policy   policy name in ratelimitd's registry
     * @param string    $scope    what is limited; requests sharing policy + tenant + scope share one budget
     * @param int       $cost     units one request uses
     * @param bool|null $failOpen when ratelimitd cannot be asked: true allow, false deny (503);
     *                            null: the client's default
     */
    public function __construct(
        public readonly string $policy,
        public readonly string $scope = 'global',
        public readonly int $cost = 1,
        public readonly ?bool $failOpen = null,
    ) {
    }

    /**
     * A limit from a route map entry: a RatelimitdLimit, or an array with policy [, scope,
     * cost, fail_open].
     *
     * @param RatelimitdLimit|array{policy: string, scope?: string, cost?: int, fail_open?: bool}|object $entry
     */
    public static function from(mixed $entry): self
    {
        if ($entry instanceof self) {
            return $entry;
        }
        if (is_object($entry) && method_exists($entry, 'toLimit')) {
            return $entry->toLimit();   // the deprecated Symfony\RateLimit
        }
        if (!is_array($entry) || !is_string($entry['policy'] ?? null)) {
            throw new \InvalidArgumentException('a limit needs a policy: expected RatelimitdLimit or [policy => ..., scope?, cost?, fail_open?]');
        }
        return new self($entry['policy'], $entry['scope'] ?? 'global', $entry['cost'] ?? 1, $entry['fail_open'] ?? null);
    }
}
