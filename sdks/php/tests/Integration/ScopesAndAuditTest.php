<?php

declare(strict_types=1);

namespace Fileshare\Tests\Integration;

use Fileshare\Client;
use Fileshare\Exception\BadRequestException;
use Fileshare\Exception\InsufficientScopeException;
use Fileshare\Exception\IpNotAllowedException;
use Fileshare\Exception\PermissionDeniedException;
use Fileshare\Model\AuditEvent;
use Fileshare\Model\CurrentKey;
use Fileshare\Tests\Support\IntegrationTestCase;
use Fileshare\Tests\Support\Server;
use GuzzleHttp\HandlerStack;
use GuzzleHttp\Middleware;

/**
 * Issue 32 against the real server: scoped keys (key(), 403 insufficient_scope and
 * ip_not_allowed) and the audit log, with the launcher's `pro`, `read_only` (files:read,
 * links:read, stats:read), `ip_restricted` (10.0.0.0/8 only) and `auditor` (audit:read) keys.
 */
final class ScopesAndAuditTest extends IntegrationTestCase
{
    /** @var list<array{request: \Psr\Http\Message\RequestInterface}> */
    private array $history = [];

    /** A client on the launcher's $key that records its requests in $history (retries on, as by default). */
    private function client(string $key): Client
    {
        $stack = HandlerStack::create();
        $stack->push(Middleware::history($this->history));

        return Server::client($key, ['http_client' => new \GuzzleHttp\Client(['handler' => $stack]), 'max_retries' => 2]);
    }

    /**
     * Runs $call and returns what it threw.
     *
     * @param callable(): mixed $call
     */
    private static function thrown(callable $call): \Throwable
    {
        try {
            $call();
        } catch (\Throwable $e) {
            return $e;
        }
        self::fail('no exception');
    }

    public function testKeyOfAFullKeyHoldsAllNineScopes(): void
    {
        $key = Server::client()->key();
        self::assertInstanceOf(CurrentKey::class, $key);
        self::assertSame(CurrentKey::SCOPES, $key->scopes, 'all nine, in the API\'s order');
        self::assertSame(['files:read', 'files:write', 'files:delete', 'links:read', 'links:write', 'stats:read', 'webhooks:manage',
            'requests:manage', 'audit:read'], $key->scopes);
        self::assertSame([], $key->allowed_ips);
        self::assertSame('pro', $key->plan);
        self::assertGreaterThan(0, $key->key_id);
        self::assertStringStartsWith('fsk_', $key->prefix);
        self::assertStringStartsWith($key->prefix, Server::key('pro'), 'the prefix is the key\'s beginning');
        self::assertLessThan(\strlen(Server::key('pro')), \strlen($key->prefix));
        self::assertStringNotContainsString(Server::key('pro'), (string) json_encode($key));
        self::assertLessThan(86400, abs(time() - $key->created->getTimestamp()));
        self::assertNull($key->expires_at);
        self::assertTrue($key->hasScope('files:delete'));
        // The last use is recorded to the minute, in the background, and GET /key shows the key as
        // the server's key cache holds it: it may lag (null on a fresh key), never lie ahead.
        $lastUsed = Server::client()->key()->last_used;
        if ($lastUsed !== null) {
            self::assertLessThanOrEqual(time() + 5, $lastUsed->getTimestamp());
            self::assertGreaterThanOrEqual($key->created->getTimestamp(), $lastUsed->getTimestamp());
        }
    }

    public function testKeyOfTheReadOnlyKey(): void
    {
        $key = $this->client('read_only')->key();
        self::assertSame(['files:read', 'links:read', 'stats:read'], $key->scopes);
        self::assertSame('pro', $key->plan);
        self::assertSame([], $key->allowed_ips);
        self::assertFalse($key->hasScope('files:delete'));
        self::assertNotSame(Server::client()->key()->key_id, $key->key_id, 'another key of the same account');
    }

    public function testReadOnlyReadsButCannotDeleteAndNothingIsDeleted(): void
    {
        $pro = Server::client();
        $file = $pro->files->uploadBytes('kept by scopes', ['filename' => 'scoped.txt']);
        $readOnly = $this->client('read_only');

        // What its scopes allow works.
        self::assertSame($file->sha256, $readOnly->files->get($file->file_id)->sha256);
        self::assertNotEmpty($readOnly->files->list(limit: 1)->files);
        self::assertCount(1, $readOnly->links->list($file->file_id));
        self::assertSame('pro', $readOnly->stats()->plan);

        $this->history = [];
        $e = self::thrown(fn () => $readOnly->files->delete($file->file_id));
        self::assertInstanceOf(InsufficientScopeException::class, $e);
        self::assertInstanceOf(PermissionDeniedException::class, $e);
        self::assertSame(403, $e->getStatus());
        self::assertSame('insufficient_scope', $e->getErrorCode());
        self::assertSame('files:delete', $e->getRequiredScope());
        self::assertStringContainsString('files:delete', $e->getMessage());
        self::assertNotNull($e->getRequestId());
        // The server names the scope both ways (the body, and RFC 6750's challenge).
        self::assertSame('files:delete', $e->getBody()['error']['required_scope'] ?? null);
        self::assertSame('files:delete', PermissionDeniedException::challengeScope($e->getHeaderLine('WWW-Authenticate')));
        self::assertSame('insufficient_scope', PermissionDeniedException::challengeError($e->getHeaderLine('WWW-Authenticate')));
        self::assertCount(1, $this->history, 'not retried');

        // Nothing was deleted.
        $still = $pro->files->get($file->file_id);
        self::assertSame($file->sha256, $still->sha256);

        // The other refused calls name their own scope.
        $cases = [
            'files:write' => fn () => $readOnly->files->uploadBytes('nope', ['filename' => 'nope.txt']),
            'links:write' => fn () => $readOnly->links->create($file->file_id),
            'audit:read' => fn () => $readOnly->auditEvents->list(limit: 1),
        ];
        foreach ($cases as $scope => $call) {
            $e = self::thrown($call);
            self::assertInstanceOf(InsufficientScopeException::class, $e, $scope);
            self::assertSame($scope, $e->getRequiredScope(), $scope);
        }
        $pro->files->delete($file->file_id);
    }

    public function testEveryCallWithTheIpRestrictedKeyIsRefused(): void
    {
        $client = $this->client('ip_restricted');
        $calls = [
            'key' => fn () => $client->key(),
            'list' => fn () => $client->files->list(limit: 1),
            'stats' => fn () => $client->stats(),
            'upload' => fn () => $client->files->uploadBytes('from the wrong place', ['filename' => 'ip.txt']),
            'audit' => fn () => $client->auditEvents->list(limit: 1),
        ];
        foreach ($calls as $name => $call) {
            $this->history = [];
            $e = self::thrown($call);
            self::assertInstanceOf(IpNotAllowedException::class, $e, $name);
            self::assertInstanceOf(PermissionDeniedException::class, $e, $name);
            self::assertSame(403, $e->getStatus(), $name);
            self::assertSame('ip_not_allowed', $e->getErrorCode(), $name);
            self::assertNull($e->getRequiredScope(), $name);
            self::assertCount(1, $this->history, "$name: not retried");
        }
    }

    /**
     * The pro key's events about one file (newest first), read with $client.
     *
     * @return list<AuditEvent>
     */
    private static function eventsAbout(Client $client, int $fileId, \DateTimeInterface $since): array
    {
        $events = [];
        foreach ($client->auditEvents->iterate(limit: 100, action: 'file.*', since: $since) as $event) {
            if ($event->target?->type === 'file' && $event->target->id === $fileId) {
                $events[] = $event;
            }
        }

        return $events;
    }

    public function testAnUploadAnUpdateAndADeleteAreAudited(): void
    {
        $since = new \DateTimeImmutable('-2 seconds');
        $pro = Server::client();
        $key = $pro->key();
        $file = $pro->files->uploadBytes('audited bytes', ['filename' => 'audited.txt']);
        $pro->files->update($file, ['filename' => 'audited-renamed.txt']);
        $pro->files->delete($file);

        $events = self::eventsAbout($pro, $file->file_id, $since);
        self::assertSame(['file.deleted', 'file.updated', 'file.uploaded'], array_map(static fn (AuditEvent $e): string => $e->action, $events),
            'newest first');
        self::assertGreaterThan($events[1]->event_id, $events[0]->event_id);
        self::assertGreaterThan($events[2]->event_id, $events[1]->event_id);
        foreach ($events as $event) {
            self::assertSame('key', $event->actor->type, $event->action);
            self::assertSame($key->key_id, $event->actor->id, $event->action);
            self::assertSame('file', $event->target?->type);
            self::assertLessThan(300, abs(time() - $event->time->getTimestamp()));
            self::assertGreaterThanOrEqual($since->getTimestamp(), $event->time->getTimestamp());
            self::assertStringStartsWith('fileshare-sdk-php/', (string) $event->user_agent);
            self::assertStringNotContainsString(Server::key('pro'), (string) json_encode($event));
        }
        // The address is kept truncated by default: 127.0.0.1 is 127.0.0.0.
        self::assertSame('127.0.0.0', $events[0]->ip);

        // The newest event of the whole log (action file.deleted) is this delete.
        $page = $pro->auditEvents->list(limit: 1, action: 'file.deleted');
        self::assertCount(1, $page->events);
        self::assertSame($events[0]->event_id, $page->events[0]->event_id);
        self::assertSame($events[0]->toArray(), $page->events[0]->toArray());
    }

    public function testIteratePagesThroughWithASmallLimit(): void
    {
        $since = new \DateTimeImmutable('-2 seconds');
        $pro = Server::client();
        $ids = [];
        for ($i = 0; $i < 5; ++$i) {
            $ids[] = $pro->files->uploadBytes("page $i", ['filename' => "audit-page-$i.txt"])->file_id;
        }
        foreach ($ids as $id) {
            $pro->files->delete($id);
        }

        // Pages of 2: the same events as one page of 100, in the same order, none twice.
        $all = $pro->auditEvents->list(limit: 100, action: 'file.*', since: $since)->events;
        $seen = [];
        foreach ($pro->auditEvents->iterate(limit: 2, action: 'file.*', since: $since) as $event) {
            $seen[] = $event->event_id;
        }
        self::assertGreaterThanOrEqual(10, \count($seen));
        self::assertSame(array_map(static fn (AuditEvent $e): int => $e->event_id, $all), $seen);
        self::assertSame(array_values(array_unique($seen)), $seen, 'none twice');
        $sorted = $seen;
        rsort($sorted);
        self::assertSame($sorted, $seen, 'newest first');

        // By hand: list() with beforeId follows the same cursor.
        $page = $pro->auditEvents->list(limit: 2, action: 'file.*', since: $since);
        self::assertSame(2, $page->pagination->limit);
        self::assertSame($page->events[1]->event_id, $page->pagination->next_before_id);
        $next = $pro->auditEvents->list(limit: 2, beforeId: $page->pagination->next_before_id, action: 'file.*', since: $since);
        self::assertSame(\array_slice($seen, 2, 2), array_map(static fn (AuditEvent $e): int => $e->event_id, $next->events));

        // A family and one action.
        $deleted = iterator_to_array($pro->auditEvents->iterate(limit: 3, action: 'file.deleted', since: $since), false);
        self::assertSame(array_reverse($ids), array_values(array_filter(
            array_map(static fn (AuditEvent $e): ?int => $e->target?->id, $deleted),
            static fn (?int $id): bool => \in_array($id, $ids, true),
        )));
        foreach ($deleted as $event) {
            self::assertSame('file.deleted', $event->action);
        }

        // The last page says so.
        $last = $pro->auditEvents->list(limit: 100, beforeId: 1);
        self::assertSame([], $last->events);
        self::assertNull($last->pagination->next_before_id);
    }

    public function testBadParametersAreRefusedByTheServer(): void
    {
        $pro = Server::client();
        foreach ([
            'beforeId 0' => fn () => $pro->auditEvents->list(beforeId: 0),
            'limit 101' => fn () => $pro->auditEvents->list(limit: 101),
            'limit 0' => fn () => $pro->auditEvents->list(limit: 0),
            'since' => fn () => $pro->auditEvents->list(since: 'yesterday'),
        ] as $name => $call) {
            $e = self::thrown($call);
            self::assertInstanceOf(BadRequestException::class, $e, $name);
            self::assertSame(400, $e->getStatus(), $name);
            self::assertSame('invalid_parameter', $e->getErrorCode(), $name);
        }
        // A date alone is accepted.
        self::assertIsArray($pro->auditEvents->list(limit: 1, since: gmdate('Y-m-d'))->events);
    }

    public function testTheAuditorReadsTheLogButCannotUpload(): void
    {
        $since = new \DateTimeImmutable('-2 seconds');
        $pro = Server::client();
        $file = $pro->files->uploadBytes('seen by the auditor', ['filename' => 'auditor.txt']);
        $auditor = $this->client('auditor');

        self::assertSame(['audit:read'], $auditor->key()->scopes);
        $events = self::eventsAbout($auditor, $file->file_id, $since);
        self::assertSame(['file.uploaded'], array_map(static fn (AuditEvent $e): string => $e->action, $events));

        $this->history = [];
        $e = self::thrown(fn () => $auditor->files->uploadBytes('not allowed', ['filename' => 'auditor-upload.txt']));
        self::assertInstanceOf(InsufficientScopeException::class, $e);
        self::assertSame('files:write', $e->getRequiredScope());
        self::assertCount(1, $this->history, 'not retried');
        $e = self::thrown(fn () => $auditor->files->list());
        self::assertInstanceOf(InsufficientScopeException::class, $e);
        self::assertSame('files:read', $e->getRequiredScope());

        // The refused upload stored nothing and was not audited.
        self::assertSame([], array_values(array_filter(
            iterator_to_array($auditor->auditEvents->iterate(action: 'file.uploaded', since: $since), false),
            static fn (AuditEvent $e): bool => ($e->details['filename'] ?? null) === 'auditor-upload.txt',
        )));
        $pro->files->delete($file);
    }
}
