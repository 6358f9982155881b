<?php

declare(strict_types=1);

namespace Fileshare\Exception;

use Fileshare\Model\RateLimitInfo;

/** 429: a request rate limit. getRetryAfter() says how long to wait; getRateLimit() holds `RateLimit-*`. */
class RateLimitException extends FileshareException
{
    private readonly RateLimitInfo $rateLimit;

    /**
     * @param array<string, list<string>> $headers
     * @param array<mixed>|string|null    $body
     */
    public function __construct(
        string $message,
        ?int $status = 429,
        ?string $errorCode = null,
        ?string $requestId = null,
        ?int $retryAfter = null,
        ?RateLimitInfo $rateLimit = null,
        ?\Throwable $previous = null,
        array $headers = [],
        array|string|null $body = null,
    ) {
        parent::__construct($message, $status, $errorCode, $requestId, $retryAfter, $previous, $headers, $body);
        $this->rateLimit = $rateLimit ?? new RateLimitInfo(null, null, null);
    }

    /** `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` of the refusal. */
    public function getRateLimit(): RateLimitInfo
    {
        return $this->rateLimit;
    }
}
