<?php
// Reads the #[RatelimitdLimit] attributes (and the deprecated #[Symfony\RateLimit]) of a controller.

declare(strict_types=1);

namespace Ratelimitd\Client;

use Ratelimitd\Client\Symfony\RateLimit as DeprecatedRateLimit;

/**
 * The limits a controller declares, in any form PHP frameworks accept as a controller:
 * "Class::method", [object|class, method], an invokable object or class, a closure.
 * The attributes on the method win over those on its class; reflection runs once per
 * controller id (string controllers are cached).
 */
final class ControllerLimits
{
    /** @var array<string, list<RatelimitdLimit>> */
    private array $cache = [];

    /** @return list<RatelimitdLimit> empty when the controller declares none */
    public function of(mixed $controller): array
    {
        if (is_string($controller) && array_key_exists($controller, $this->cache)) {
            return $this->cache[$controller];
        }
        $limits = self::read($controller);
        if (is_string($controller)) {
            $this->cache[$controller] = $limits;
        }
        return $limits;
    }

    /** @return list<RatelimitdLimit> */
    private static function read(mixed $controller): array
    {
        try {
            if (is_string($controller) && str_contains($controller, '::')) {
                $controller = explode('::', $controller, 2);
            }
            if (is_array($controller) && count($controller) === 2) {
                $method = new \ReflectionMethod($controller[0], $controller[1]);
                return self::on($method) ?: self::on($method->getDeclaringClass());
            }
            if ($controller instanceof \Closure) {
                return self::on(new \ReflectionFunction($controller));
            }
            if ((is_object($controller) || (is_string($controller) && class_exists($controller)))
                && method_exists($controller, '__invoke')) {
                $method = new \ReflectionMethod($controller, '__invoke');
                return self::on($method) ?: self::on($method->getDeclaringClass());
            }
        } catch (\ReflectionException) {
            // An unresolvable controller fails later in the framework's resolver, with a
            // better message than we could give.
        }
        return [];
    }

    /** @return list<RatelimitdLimit> the new attribute's if any, else the deprecated one's */
    private static function on(\ReflectionFunctionAbstract|\ReflectionClass $target): array
    {
        $limits = [];
        foreach ($target->getAttributes(RatelimitdLimit::class) as $attribute) {
            $limits[] = $attribute->newInstance();
        }
        if ($limits !== []) {
            return $limits;
        }
        foreach ($target->getAttributes(DeprecatedRateLimit::class) as $attribute) {
            $limits[] = $attribute->newInstance()->toLimit();
        }
        return $limits;
    }
}
