<?php

declare(strict_types=1);

namespace Fileshare;

use Fileshare\Internal\RawResponses;

/**
 * `$client->withRawResponse()`: the same calls, each answering a RawResponse (status, headers,
 * and the usual result as `->data` / `->parse()`). `files->iterate()`, `auditEvents->iterate()`,
 * `webhooks->iterateDeliveries()` and `uploadRequests->iterateFiles()` are the exceptions (they
 * read many pages): use `list()`, `deliveries()` or `files()` page by page.
 *
 * ```php
 * $raw = $client->withRawResponse()->files->get($id);
 * echo $raw->getHeaderLine('RateLimit-Remaining'), ' ', $raw->data->filename;
 * ```
 *
 * @method RawResponse<Model\StatsResult>    stats(array $requestOptions = [])
 * @method RawResponse<Model\CurrentKey>     key(array $requestOptions = [])
 * @method RawResponse<Model\DownloadResult> download(Model\FileRecord|Model\Link|string $fileOrLink, mixed $destination, array $options = [])
 */
final class RawResponseClient
{
    /** `files` with each call answering a RawResponse (upload, list, get, update, delete). */
    public readonly RawResponses $files;
    /** `links` with each call answering a RawResponse. */
    public readonly RawResponses $links;
    /** `auditEvents` with list() answering a RawResponse (iterate() reads many pages: use list()). */
    public readonly RawResponses $auditEvents;
    /** `webhooks` with each management call answering a RawResponse (iterateDeliveries() reads many pages: use deliveries()). */
    public readonly RawResponses $webhooks;
    /** `uploadRequests` with each call answering a RawResponse (iterateFiles() reads many pages: use files()). */
    public readonly RawResponses $uploadRequests;
    private readonly RawResponses $client;

    /** @internal */
    public function __construct(Client $client, RawResponses $recorder)
    {
        $this->client = new RawResponses($client, $recorder);
        $this->files = new RawResponses($client->files, $recorder);
        $this->links = new RawResponses($client->links, $recorder);
        $this->auditEvents = new RawResponses($client->auditEvents, $recorder);
        $this->webhooks = new RawResponses($client->webhooks, $recorder);
        $this->uploadRequests = new RawResponses($client->uploadRequests, $recorder);
    }

    /** @param list<mixed> $arguments */
    public function __call(string $name, array $arguments): RawResponse
    {
        return $this->client->__call($name, $arguments);
    }
}
