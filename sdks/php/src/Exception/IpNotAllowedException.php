<?php

declare(strict_types=1);

namespace Fileshare\Exception;

/**
 * 403 `ip_not_allowed`: the API key is limited to some addresses (`allowed_ips`), and this call
 * came from another (the address as the server sees it). Not retried.
 */
class IpNotAllowedException extends PermissionDeniedException
{
}
