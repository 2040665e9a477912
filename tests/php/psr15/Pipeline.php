<?php
// A minimal PSR-15 dispatcher for the test app: runs middleware in order, then the final handler.

declare(strict_types=1);

namespace TestApp;

use Psr\Http\Message\ResponseInterface;
use Psr\Http\Message\ServerRequestInterface;
use Psr\Http\Server\MiddlewareInterface;
use Psr\Http\Server\RequestHandlerInterface;

final class Pipeline implements RequestHandlerInterface
{
    /** @param list<MiddlewareInterface> $middleware */
    public function __construct(private array $middleware, private readonly RequestHandlerInterface $final)
    {
    }

    public function handle(ServerRequestInterface $request): ResponseInterface
    {
        if ($this->middleware === []) {
            return $this->final->handle($request);
        }
        $next = clone $this;
        $first = array_shift($next->middleware);
        return $first->process($request, $next);
    }
}
