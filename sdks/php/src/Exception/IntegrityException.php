<?php

declare(strict_types=1);

namespace Fileshare\Exception;

/** The bytes do not match their SHA-256 (an upload's `sha256`, a download's `ETag`). */
class IntegrityException extends FileshareException
{
    public function __construct(
        string $message,
        private readonly ?string $expected = null,
        private readonly ?string $actual = null,
    ) {
        parent::__construct($message);
    }

    /** The SHA-256 the SDK expected (the server's or the link's), lower-case hex. */
    public function getExpected(): ?string
    {
        return $this->expected;
    }

    /** The SHA-256 of the bytes the SDK sent or received, lower-case hex. */
    public function getActual(): ?string
    {
        return $this->actual;
    }
}
