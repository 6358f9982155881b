<?php

declare(strict_types=1);

namespace Fileshare\Exception;

/** 5xx. */
class ServerException extends FileshareException
{
}
