<?php

declare(strict_types=1);

namespace Fileshare\Model;

/** `RateLimit-*` values of a response, where the server sent them. */
final readonly class RateLimitInfo
{
    public function __construct(
        /** The limit of the window that binds first. */
        public ?int $limit,
        /** Requests left in that window. */
        public ?int $remaining,
        /** Seconds until that window frees a request. */
        public ?int $reset,
    ) {
    }
}
