<?php

declare(strict_types=1);

namespace Fileshare\Internal;

use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\FileshareException;
use Fileshare\RawResponse;
use Psr\Http\Message\ResponseInterface;

/**
 * `$client->withRawResponse()->files`, `->links`, `->auditEvents`, `->webhooks` and `->uploadRequests`: each call of the resource answers a
 * RawResponse (the call's last HTTP response and its usual result).
 *
 * @method RawResponse upload(mixed $source, array $options = [])                          files
 * @method RawResponse uploadBytes(string $bytes, array $options = [])                     files
 * @method RawResponse list(mixed ...$arguments)                                           files, links, auditEvents, webhooks, uploadRequests
 * @method RawResponse get(int|string $id, array $requestOptions = [])                     files, links, webhooks, uploadRequests
 * @method RawResponse update(mixed $id, mixed ...$changes)                                files, links, webhooks, uploadRequests
 * @method RawResponse delete(mixed $id, array $requestOptions = [])                       files, links, webhooks, uploadRequests
 * @method RawResponse create(mixed ...$arguments)                                         links, webhooks, uploadRequests
 * @method RawResponse close(mixed $requestId, array $requestOptions = [])                 uploadRequests
 * @method RawResponse files(mixed $requestId, mixed ...$arguments)                        uploadRequests
 * @method RawResponse rotate(mixed $linkId, array $requestOptions = [])                   links
 * @method RawResponse rotateSecret(mixed $webhookId, array $requestOptions = [])          webhooks
 * @method RawResponse test(mixed $webhookId, array $requestOptions = [])                  webhooks
 * @method RawResponse deliveries(mixed $webhookId, mixed ...$arguments)                   webhooks
 * @method RawResponse retryDelivery(mixed $webhookId, mixed $deliveryId, array $requestOptions = []) webhooks
 */
final class RawResponses
{
    public ?ResponseInterface $last = null;

    public function __construct(private readonly object $target, private readonly ?self $recorder = null)
    {
    }

    /** Sees each response of the calls (Http's on_response). */
    public function record(ResponseInterface $response): void
    {
        $this->last = $response;
    }

    /** @param list<mixed> $arguments */
    public function __call(string $name, array $arguments): RawResponse
    {
        $recorder = $this->recorder ?? $this;
        if (!method_exists($this->target, $name)) {
            throw new ConfigurationException(sprintf('no method %s::%s()', $this->target::class, $name));
        }
        $recorder->last = null;
        $result = $this->target->{$name}(...$arguments);
        if ($result instanceof \Generator) {
            throw new ConfigurationException("$name() reads many pages: use list() for each page's raw response");
        }
        if ($recorder->last === null) {
            throw new FileshareException("$name() made no request");
        }

        return new RawResponse($recorder->last, $result);
    }
}
