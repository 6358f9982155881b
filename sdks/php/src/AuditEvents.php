<?php

declare(strict_types=1);

namespace Fileshare;

use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\FileshareException;
use Fileshare\Internal\Http;
use Fileshare\Internal\Params;
use Fileshare\Model\AuditEvent;
use Fileshare\Model\AuditEventList;

/**
 * `$client->auditEvents`: the account's audit log, newest first (`GET /audit-events`; the key
 * needs the scope `audit:read`, else InsufficientScopeException). Every change is an event
 * (uploads, updates, deletions, links, keys, sign-ins, …); reads are not.
 */
final class AuditEvents
{
    /** @internal */
    public function __construct(private readonly Http $http)
    {
    }

    /**
     * One page of events, newest first: `limit` 1 to 100 (server default 20), `beforeId` (the
     * events whose event_id is lower, as `pagination->next_before_id` names the next page's
     * start), `action` (one action, `file.deleted`, or a family, `file.*`) and `since` (events at
     * or after it: a DateTimeInterface, sent in UTC, or a UTC string `YYYY-MM-DD` or
     * `YYYY-MM-DDTHH:MM:SSZ`). A value the server refuses is a BadRequestException
     * `invalid_parameter`.
     *
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: Cancellation} $requestOptions
     */
    public function list(?int $limit = null, ?int $beforeId = null, ?string $action = null, string|\DateTimeInterface|null $since = null,
        array $requestOptions = []): AuditEventList
    {
        $http = $this->http->with(Params::requestOptions($requestOptions, 'audit events'));
        [, $data] = $http->call('GET', $http->url('/audit-events', [
            'limit' => $limit,
            'before_id' => $beforeId,
            'action' => $action,
            'since' => self::since($since),
        ]));

        return AuditEventList::fromArray($data);
    }

    /**
     * Every event (with `action` and `since` as list() takes them), newest first, `limit` per
     * request: the first page, then `before_id` = the page's `next_before_id` until there is none.
     * An event is never yielded twice; events recorded while iterating are newer, so they are not
     * yielded. The request options apply to each page's request.
     *
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: Cancellation} $requestOptions
     *
     * @return \Generator<int, AuditEvent>
     */
    public function iterate(int $limit = 100, ?string $action = null, string|\DateTimeInterface|null $since = null,
        array $requestOptions = []): \Generator
    {
        Params::requestOptions($requestOptions, 'audit events');
        $since = self::since($since);
        $beforeId = null;
        for (;;) {
            $page = $this->list($limit, $beforeId, $action, $since, $requestOptions);
            foreach ($page->events as $event) {
                yield $event;
            }
            $next = $page->pagination->next_before_id;
            if ($next === null) {
                return;
            }
            if ($beforeId !== null && $next >= $beforeId) {
                throw new FileshareException("the server's next_before_id ($next) does not go down from $beforeId");
            }
            $beforeId = $next;
        }
    }

    /** `since` as the API takes it: a DateTimeInterface as UTC `YYYY-MM-DDTHH:MM:SSZ`, a string as given. */
    private static function since(string|\DateTimeInterface|null $since): ?string
    {
        if ($since instanceof \DateTimeInterface) {
            return \DateTimeImmutable::createFromInterface($since)->setTimezone(new \DateTimeZone('UTC'))->format('Y-m-d\TH:i:s\Z');
        }
        if ($since === '') {
            throw new ConfigurationException('since must be a date (YYYY-MM-DD), a UTC time (YYYY-MM-DDTHH:MM:SSZ) or a DateTimeInterface');
        }

        return $since;
    }
}
