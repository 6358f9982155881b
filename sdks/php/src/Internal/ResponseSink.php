<?php

declare(strict_types=1);

namespace Fileshare\Internal;

use Psr\Http\Message\ResponseInterface;

/**
 * Receives a response body as it arrives (downloads): begin() with the status and headers, then
 * write() for each piece.
 *
 * @internal
 */
interface ResponseSink
{
    public function begin(ResponseInterface $response): void;

    public function write(string $data): void;
}
