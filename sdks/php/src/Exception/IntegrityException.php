<?php

declare(strict_types=1);

namespace Fileshare\Exception;

use Fileshare\Model\FileRecord;

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

    /**
     * @internal throws unless $file (an upload's answer) holds the bytes that hash to $actual
     *
     * @param ?string $replayedKey the idempotency key, when the answer was the one stored for an earlier request with it
     */
    public static function checkUpload(FileRecord $file, string $actual, ?string $replayedKey = null): void
    {
        if ($file->sha256 === $actual) {
            return;
        }
        $message = "the server stored file {$file->file_id} with SHA-256 {$file->sha256}, but the bytes sent hash to $actual";
        if ($replayedKey !== null) {
            $message .= sprintf(' (the answer is the one stored for an earlier upload with the idempotency key %s: use a new key for other bytes)', json_encode($replayedKey, \JSON_UNESCAPED_SLASHES));
        }

        throw new self($message, $file->sha256, $actual);
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
