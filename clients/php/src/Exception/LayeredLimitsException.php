<?php
// Several limits on one request that ratelimitd cannot decide as one: a configuration bug, named precisely.

declare(strict_types=1);

namespace Ratelimitd\Client\Exception;

/**
 * Thrown by LimitChecker when the limits of one request cannot be one layered check: they
 * differ in scope, cost or failOpen (ratelimitd decides one scope and cost for all), name a
 * policy twice, are more than 8, or ratelimitd's config has no layered route for them (the
 * message gives the route to add). Never a verdict: fix the config or the attributes.
 */
final class LayeredLimitsException extends RateLimitException
{
}
