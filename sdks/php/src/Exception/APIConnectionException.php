<?php

declare(strict_types=1);

namespace Fileshare\Exception;

/** No response: the connection failed, dropped, or stayed idle past the timeout. */
class APIConnectionException extends FileshareException
{
}
