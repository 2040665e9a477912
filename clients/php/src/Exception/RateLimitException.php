<?php
// Base class of every exception this package throws, so callers can catch them all at once.

declare(strict_types=1);

namespace Ratelimitd\Client\Exception;

class RateLimitException extends \RuntimeException
{
}
