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
    public function send(RequestInterface $request, ?ResponseSink $sink = null): ResponseInterface;
}
