<?php

declare(strict_types=1);

namespace Fileshare;

use Fileshare\Model\RateLimitInfo;
use Psr\Http\Message\ResponseInterface;

/**
 * What a call through `$client->withRawResponse()` answers: the HTTP response (status, headers)
 * and the parsed result the call returns otherwise (`$raw->data`, or parse()).
 *
 * ```php
 * $raw = $client->withRawResponse()->files->get($id);
 * $raw->getStatusCode();                      // 200
 * $raw->getHeaderLine('RateLimit-Remaining'); // "59"
 * $file = $raw->parse();                      // the FileRecord
 * ```
 *
 * The response is the call's last one (a call that retried: the answer that succeeded; a
 * resumable upload: the final GET of the upload). Its body was read already: use $data.
 *
 * @template T
 */
final class RawResponse
{
    /** @param T $data */
    public function __construct(
        private readonly ResponseInterface $response,
        /** The call's usual result (a FileRecord, a FileList, a StatsResult, null for a delete…). */
        public readonly mixed $data,
    ) {
    }

    /** @return T the call's usual result */
    public function parse(): mixed
    {
        return $this->data;
    }

    public function getStatusCode(): int
    {
        return $this->response->getStatusCode();
    }

    /** @return array<string, list<string>> */
    public function getHeaders(): array
    {
        return $this->response->getHeaders();
    }

    /** @return list<string> */
    public function getHeader(string $name): array
    {
        return $this->response->getHeader($name);
    }

    public function getHeaderLine(string $name): string
    {
        return $this->response->getHeaderLine($name);
    }

    /** `X-Request-Id`, when the server sent one. */
    public function getRequestId(): ?string
    {
        $id = $this->response->getHeaderLine('X-Request-Id');

        return $id === '' ? null : $id;
    }

    /** `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` of the answer (null where absent). */
    public function getRateLimit(): RateLimitInfo
    {
        $int = function (string $name): ?int {
            $value = trim($this->response->getHeaderLine($name));

            return preg_match('/^\d+$/', $value) === 1 ? (int) $value : null;
        };

        return new RateLimitInfo($int('RateLimit-Limit'), $int('RateLimit-Remaining'), $int('RateLimit-Reset'));
    }

    /** The PSR-7 response itself (its body already read). */
    public function getResponse(): ResponseInterface
    {
        return $this->response;
    }
}
