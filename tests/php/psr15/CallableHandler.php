<?php
// A PSR-15 request handler made of a closure: the test app's "controllers".

declare(strict_types=1);

namespace TestApp;

use Psr\Http\Message\ResponseInterface;
use Psr\Http\Message\ServerRequestInterface;
use Psr\Http\Server\RequestHandlerInterface;

final class CallableHandler implements RequestHandlerInterface
{
    /** @param \Closure(ServerRequestInterface): ResponseInterface $fn */
    public function __construct(private readonly \Closure $fn)
    {
    }

    public function handle(ServerRequestInterface $request): ResponseInterface
    {
        return ($this->fn)($request);
    }
}
