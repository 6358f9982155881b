<?php

declare(strict_types=1);

namespace Fileshare\Exception;

/**
 * No response in time: the connection could not be made within `timeout` seconds, or stayed idle
 * that long (a whole transfer has no deadline). Retried like any connection failure.
 */
class APITimeoutException extends APIConnectionException
{
}
