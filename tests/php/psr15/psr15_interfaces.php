<?php
// PSR-15's two interfaces (psr/http-server-handler, psr/http-server-middleware 1.0), as the
// standard defines them: Debian 12 packages no PSR-15 interfaces (its php-psr extension, which
// has them, conflicts with composer), so the test declares them when nothing else has.

declare(strict_types=1);

namespace Psr\Http\Server;

use Psr\Http\Message\ResponseInterface;
use Psr\Http\Message\ServerRequestInterface;

if (!interface_exists(RequestHandlerInterface::class)) {
    interface RequestHandlerInterface
    {
        public function handle(ServerRequestInterface $request): ResponseInterface;
    }
}

if (!interface_exists(MiddlewareInterface::class)) {
    interface MiddlewareInterface
    {
        public function process(ServerRequestInterface $request, RequestHandlerInterface $handler): ResponseInterface;
    }
}
