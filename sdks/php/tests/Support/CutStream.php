<?php

declare(strict_types=1);

namespace Fileshare\Tests\Support;

use GuzzleHttp\Psr7\StreamDecoratorTrait;
use Psr\Http\Message\StreamInterface;

/** A request body that ends after $cut bytes while its Content-Length promises more: a dropped upload. */
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

    public function eof(): bool
    {
        return $this->done >= $this->cut || $this->stream->eof();
    }

    public function isSeekable(): bool
    {
        return false;
    }
}
