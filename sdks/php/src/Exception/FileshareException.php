<?php

declare(strict_types=1);

namespace Fileshare\Exception;

/**
 * Base class of every exception the SDK throws.
 *
 * getCode() is the HTTP status (0 without a response); the API's error code is getErrorCode().
 */
class FileshareException extends \RuntimeException
{
    public function __construct(
        string $message,
        private readonly ?int $status = null,
        private readonly ?string $errorCode = null,
        private readonly ?string $requestId = null,
        private readonly ?int $retryAfter = null,
        ?\Throwable $previous = null,
    ) {
        parent::__construct($message, $status ?? 0, $previous);
    }

    /** HTTP status, when there was a response. */
    public function getStatus(): ?int
    {
        return $this->status;
    }

    /** The body's `error.code` (snake_case, e.g. `file_too_large`), when there was one. */
    public function getErrorCode(): ?string
    {
        return $this->errorCode;
    }

    /** `X-Request-Id` of the response: quote it when reporting a problem. */
    public function getRequestId(): ?string
    {
        return $this->requestId;
    }

    /** Seconds the server asked to wait (`Retry-After`), when it did. */
    public function getRetryAfter(): ?int
    {
        return $this->retryAfter;
    }
}
