<?php

declare(strict_types=1);

namespace Fileshare\Exception;

/** 401: missing, malformed, unknown, revoked or expired API key. */
class AuthenticationException extends FileshareException
{
}
