<?php

declare(strict_types=1);

namespace Fileshare\Exception;

/**
 * 403 `insufficient_scope`: the API key lacks the scope the call needs; getRequiredScope() names
 * it (e.g. `files:delete`). Nothing was done, and the call is not retried: a key with that scope
 * is needed (keys are made in the dashboard or with `fileshare key create --scopes …`).
 */
class InsufficientScopeException extends PermissionDeniedException
{
}
