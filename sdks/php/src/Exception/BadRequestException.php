<?php

declare(strict_types=1);

namespace Fileshare\Exception;

/** Any other 4xx (`invalid_parameter`, `upload_expired`, ...): retrying it unchanged will not help. */
class BadRequestException extends FileshareException
{
}
