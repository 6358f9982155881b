<?php

declare(strict_types=1);

namespace Fileshare\Exception;

/**
 * Implemented by every exception the SDK throws: `catch (\Fileshare\Exception\ExceptionInterface $e)`
 * catches them all (FileshareException and its subclasses, ConfigurationException, which is an
 * \InvalidArgumentException, and CancelledException).
 */
interface ExceptionInterface extends \Throwable
{
}
