<?php

declare(strict_types=1);

namespace Fileshare\Internal;

use Fileshare\Cancellation;
use Psr\Http\Message\ResponseInterface;

/**
 * A download sink that stops the transfer once its Cancellation is cancelled.
 *
 * @internal
 */
final class CancellableSink implements ResponseSink
{
    public function __construct(private readonly ResponseSink $sink, private readonly Cancellation $cancellation)
    {
    }

    public function begin(ResponseInterface $response): void
    {
        $this->cancellation->check();
        $this->sink->begin($response);
    }

    public function write(string $data): void
    {
        $this->cancellation->check();
        $this->sink->write($data);
    }
}
