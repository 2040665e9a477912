<?php
// A stand-in for Symfony's security firewall (kernel.request, priority 8): X-Api-Key -> the tenant's id.

declare(strict_types=1);

namespace App;

use Symfony\Component\EventDispatcher\EventSubscriberInterface;
use Symfony\Component\HttpFoundation\JsonResponse;
use Symfony\Component\HttpKernel\Event\RequestEvent;
use Symfony\Component\HttpKernel\KernelEvents;

/**
 * In a full Symfony app the SecurityBundle does this and the tenant resolver reads
 * $security->getUser()?->getUserIdentifier(); here a fixed key table keeps the demo small.
 * Only the tenant's id reaches ratelimitd, never the key.
 */
final class ApiKeyFirewall implements EventSubscriberInterface
{
    /** @param array<string, string> $tenantsByKey API key => tenant id */
    public function __construct(private readonly array $tenantsByKey)
    {
    }

    public static function getSubscribedEvents(): array
    {
        return [KernelEvents::REQUEST => ['onKernelRequest', 8]];
    }

    public function onKernelRequest(RequestEvent $event): void
    {
        $key = $event->getRequest()->headers->get('X-Api-Key');
        if ($key === null) {
            return; // anonymous: limited by client IP
        }
        $tenant = $this->tenantsByKey[$key] ?? null;
        if ($tenant === null) {
            $event->setResponse(new JsonResponse(['error' => 'unauthorized'], 401));
            return;
        }
        $event->getRequest()->attributes->set('tenant_id', $tenant);
    }
}
