<?php

declare(strict_types=1);

namespace Fileshare\Internal;

use Psr\Http\Message\RequestInterface;
use Psr\Http\Message\ResponseInterface;

/**
 * One HTTP exchange. Answers any status (errors included); throws APIConnectionException when
 * there is no response. With a sink, the body goes to it as it arrives.
 *
 * @internal
 */
interface Transport
{
    /** @param float $timeout connect and idle timeout in seconds (0: none); a PSR-18 client keeps its own */
    public function send(RequestInterface $request, ?ResponseSink $sink = null, float $timeout = 0.0): ResponseInterface;
}
