<?php

declare(strict_types=1);

namespace Fileshare\Exception;

/**
 * Base class of the exceptions of a call that went wrong (an API error, no response, a checksum
 * mismatch, a cancellation). Every SDK exception, ConfigurationException too, implements
 * ExceptionInterface.
 *
 * getCode() is the HTTP status (0 without a response); the API's error code is getErrorCode().
 * When the server named the request (`X-Request-Id`), the message ends with `(request id …)`.
 */
class FileshareException extends \RuntimeException implements ExceptionInterface
{
    /**
     * @param array<string, list<string>> $headers the response's headers (none without a response)
     * @param array<mixed>|string|null    $body    the response's body: the decoded JSON, else its text
     */
    public function __construct(
        string $message,
        private readonly ?int $status = null,
        private readonly ?string $errorCode = null,
        private readonly ?string $requestId = null,
        private readonly ?int $retryAfter = null,
        ?\Throwable $previous = null,
        private readonly array $headers = [],
        private readonly array|string|null $body = null,
    ) {
        if ($requestId !== null && $requestId !== '' && !str_contains($message, "(request id $requestId)")) {
            $message .= " (request id $requestId)";
        }
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

    /**
     * The response's headers as PSR-7 gives them (name => list of values); empty without a response.
     *
     * @return array<string, list<string>>
     */
    public function getHeaders(): array
    {
        return $this->headers;
    }

    /** One header's values joined with ", " ('' when absent), names case-insensitive. */
    public function getHeaderLine(string $name): string
    {
        foreach ($this->headers as $key => $values) {
            if (strcasecmp((string) $key, $name) === 0) {
                return implode(', ', $values);
            }
        }

        return '';
    }

    /**
     * The response's body: the decoded JSON (`['error' => ['code' => …, 'message' => …]]` for the
     * API's errors), else its text; null without a response.
     *
     * @return array<mixed>|string|null
     */
    public function getBody(): array|string|null
    {
        return $this->body;
    }
}
