<?php

declare(strict_types=1);

namespace Fileshare\Exception;

/** The client is not set up right: no base URL, no key, an unsupported source or destination, a bad option. */
class ConfigurationException extends FileshareException
{
}
