<?php

declare(strict_types=1);

namespace Fileshare\Exception;

/**
 * The client or a call is not set up right: no base URL or one without `/api/v1`, no key, an
 * unsupported source or destination, a bad option. A programming error, so an
 * \InvalidArgumentException (as stripe-php's is), not a FileshareException: nothing was sent.
 * Catch every SDK exception with ExceptionInterface.
 */
class ConfigurationException extends \InvalidArgumentException implements ExceptionInterface
{
}
