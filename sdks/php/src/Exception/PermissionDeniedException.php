<?php

declare(strict_types=1);

namespace Fileshare\Exception;

/** 403 `plan_not_supported`: the account's plan has no API access. */
class PermissionDeniedException extends FileshareException
{
}
