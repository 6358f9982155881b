<?php

declare(strict_types=1);

namespace Fileshare\Tests\Support;

use GuzzleHttp\Psr7\StreamDecoratorTrait;
use Psr\Http\Message\StreamInterface;

/**
 * A stream that stops after $cut bytes. As a request body whose Content-Length promises more, it
 * ends early: a dropped upload. As a response sink, it refuses what comes past $cut, so cURL stops
 * the transfer with a write error: a download dropped in the middle.
 */
final class CutStream implements StreamInterface
{
    use StreamDecoratorTrait;

    private int $done = 0;

    public function __construct(private StreamInterface $stream, private int $cut)
    {
    }

    public function read($length): string
    {
        if ($this->done >= $this->cut) {
            return '';
        }
        $data = $this->stream->read(min((int) $length, $this->cut - $this->done));
        $this->done += \strlen($data);

        return $data;
    }

    public function write($string): int
    {
        $take = max(0, min(\strlen((string) $string), $this->cut - $this->done));
        if ($take > 0) {
            $this->stream->write(substr((string) $string, 0, $take));
            $this->done += $take;
        }

        return $take;
    }

    public function eof(): bool
    {
        return $this->done >= $this->cut || $this->stream->eof();
    }

    public function isSeekable(): bool
    {
        return false;
    }
}
