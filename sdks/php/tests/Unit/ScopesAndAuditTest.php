<?php

declare(strict_types=1);

namespace Fileshare\Tests\Unit;

use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\FileshareException;
use Fileshare\Exception\InsufficientScopeException;
use Fileshare\Exception\IpNotAllowedException;
use Fileshare\Exception\PermissionDeniedException;
use Fileshare\Model\AuditEvent;
use Fileshare\Model\AuditEventList;
use Fileshare\Model\CurrentKey;
use Fileshare\RawResponse;
use Fileshare\Tests\Support\Mock;
use GuzzleHttp\Psr7\Response;
use PHPUnit\Framework\TestCase;

/** Scoped keys (403 insufficient_scope / ip_not_allowed, key()) and the audit log (auditEvents). */
final class ScopesAndAuditTest extends TestCase
{
    private const SCOPE_MESSAGE = 'This API key lacks the scope files:delete, which this call needs.';

    /**
     * A 403 `insufficient_scope` as the server sends it.
     *
     * @param array<string, string> $headers
     */
    private static function insufficientScope(?string $inBody = 'files:delete', array $headers = [
        'WWW-Authenticate' => 'Bearer error="insufficient_scope", scope="files:delete"',
    ]): Response {
        $error = ['code' => 'insufficient_scope', 'message' => self::SCOPE_MESSAGE];
        if ($inBody !== null) {
            $error['required_scope'] = $inBody;
        }

        return Mock::json(403, ['success' => false, 'error' => $error], $headers + ['X-Request-Id' => 'req-403']);
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

    public function testInsufficientScopeNamesTheScopeAndIsNotRetried(): void
    {
        $mock = new Mock([self::insufficientScope(), self::insufficientScope(), self::insufficientScope()], ['max_retries' => 2]);
        $e = self::thrown(fn () => $mock->client->files->delete(7));
        self::assertInstanceOf(InsufficientScopeException::class, $e);
        self::assertInstanceOf(PermissionDeniedException::class, $e);
        self::assertSame(403, $e->getStatus());
        self::assertSame('insufficient_scope', $e->getErrorCode());
        self::assertSame('files:delete', $e->getRequiredScope());
        self::assertSame('req-403', $e->getRequestId());
        self::assertSame('403 insufficient_scope: ' . self::SCOPE_MESSAGE . ' (request id req-403)', $e->getMessage());
        self::assertCount(1, $mock->requests, 'not retried');
        self::assertSame([], $mock->sleeps);
        self::assertSame('DELETE', $mock->requests[0]['request']->getMethod());
    }

    public function testTheRequiredScopeFallsBackToTheChallenge(): void
    {
        $cases = [
            'quoted' => ['Bearer error="insufficient_scope", scope="links:write"', 'links:write'],
            'token' => ['Bearer realm="fileshare",error="insufficient_scope",scope=audit:read', 'audit:read'],
            'case' => ['bearer ERROR="insufficient_scope", Scope="files:write"', 'files:write'],
            'none' => ['Bearer error="insufficient_scope"', null],
            'empty' => ['Bearer error="insufficient_scope", scope=""', null],
        ];
        foreach ($cases as $name => [$header, $scope]) {
            $mock = new Mock([self::insufficientScope(null, ['WWW-Authenticate' => $header])]);
            $e = self::thrown(fn () => $mock->client->stats());
            self::assertInstanceOf(InsufficientScopeException::class, $e, $name);
            self::assertSame($scope, $e->getRequiredScope(), $name);
        }
        // The body wins over the header.
        $mock = new Mock([self::insufficientScope('files:write', ['WWW-Authenticate' => 'Bearer error="insufficient_scope", scope="files:read"'])]);
        $e = self::thrown(fn () => $mock->client->stats());
        self::assertInstanceOf(InsufficientScopeException::class, $e);
        self::assertSame('files:write', $e->getRequiredScope());
        // No header, no body field: null.
        $mock = new Mock([self::insufficientScope(null, [])]);
        $e = self::thrown(fn () => $mock->client->stats());
        self::assertInstanceOf(InsufficientScopeException::class, $e);
        self::assertNull($e->getRequiredScope());
    }

    public function testA403WithoutABodyIsSortedByItsChallenge(): void
    {
        $mock = new Mock([new Response(403, ['WWW-Authenticate' => 'Bearer error="insufficient_scope", scope="stats:read"'], '')]);
        $e = self::thrown(fn () => $mock->client->stats());
        self::assertInstanceOf(InsufficientScopeException::class, $e);
        self::assertNull($e->getErrorCode(), 'the code is the body\'s, and there is none');
        self::assertSame('stats:read', $e->getRequiredScope());

        $mock = new Mock([new Response(403, [], '')]);
        $e = self::thrown(fn () => $mock->client->stats());
        self::assertSame(PermissionDeniedException::class, $e::class);
    }

    public function testIpNotAllowedIsAPermissionDeniedExceptionNotRetried(): void
    {
        $mock = new Mock([Mock::error(403, 'ip_not_allowed', 'This API key may not be used from 127.0.0.1.'), Mock::json(200, [])]);
        $e = self::thrown(fn () => $mock->client->files->list());
        self::assertInstanceOf(IpNotAllowedException::class, $e);
        self::assertInstanceOf(PermissionDeniedException::class, $e);
        self::assertNotInstanceOf(InsufficientScopeException::class, $e);
        self::assertSame('ip_not_allowed', $e->getErrorCode());
        self::assertNull($e->getRequiredScope());
        self::assertCount(1, $mock->requests);
        self::assertSame([], $mock->sleeps);
    }

    public function testPlanNotSupportedStaysAPlainPermissionDeniedException(): void
    {
        $mock = new Mock([Mock::error(403, 'plan_not_supported')]);
        $e = self::thrown(fn () => $mock->client->key());
        self::assertSame(PermissionDeniedException::class, $e::class);
        self::assertNull($e->getRequiredScope());
    }

    public function testNeitherIsRetriedOnAnUploadOrAWrite(): void
    {
        $mock = new Mock([self::insufficientScope('files:write'), Mock::json(200, [])]);
        $e = self::thrown(fn () => $mock->client->files->uploadBytes('abc'));
        self::assertInstanceOf(InsufficientScopeException::class, $e);
        self::assertSame('files:write', $e->getRequiredScope());
        self::assertCount(1, $mock->requests);

        $mock = new Mock([Mock::error(403, 'ip_not_allowed'), Mock::json(200, [])]);
        self::assertInstanceOf(IpNotAllowedException::class, self::thrown(fn () => $mock->client->links->create(1)));
        self::assertCount(1, $mock->requests);
    }

    /** @return array<string, mixed> the answer of GET /key */
    private static function keyAnswer(array $key = [], array $top = []): array
    {
        return ['success' => true, 'key' => $key + [
            'key_id' => 12,
            'name' => 'ci',
            'prefix' => 'fsk_Ab12Cd',
            'scopes' => ['files:read', 'stats:read'],
            'allowed_ips' => ['10.0.0.0/8'],
            'created_at' => '2026-11-27 10:00:00',
            'expires_at' => null,
            'last_used_at' => '2026-11-27 10:05:00',
        ], 'plan' => 'pro'] + $top;
    }

    public function testKey(): void
    {
        $mock = new Mock([Mock::json(200, self::keyAnswer())]);
        $key = $mock->client->key();
        self::assertSame('GET', $mock->requests[0]['request']->getMethod());
        self::assertSame(Mock::BASE . '/key', (string) $mock->requests[0]['request']->getUri());
        self::assertSame('Bearer ' . Mock::KEY, $mock->requests[0]['request']->getHeaderLine('Authorization'));
        self::assertInstanceOf(CurrentKey::class, $key);
        self::assertSame(12, $key->key_id);
        self::assertSame('ci', $key->name);
        self::assertSame('fsk_Ab12Cd', $key->prefix);
        self::assertSame(['files:read', 'stats:read'], $key->scopes);
        self::assertSame(['10.0.0.0/8'], $key->allowed_ips);
        self::assertSame('pro', $key->plan);
        self::assertSame('2026-11-27T10:00:00+00:00', $key->created->format(\DATE_ATOM));
        self::assertNull($key->expires_at);
        self::assertNull($key->expiry);
        self::assertSame('2026-11-27T10:05:00+00:00', $key->last_used?->format(\DATE_ATOM));
        self::assertTrue($key->hasScope('stats:read'));
        self::assertFalse($key->hasScope('files:delete'));
        self::assertSame([], $key->extra);
        self::assertSame(
            '{"key_id":12,"name":"ci","prefix":"fsk_Ab12Cd","scopes":["files:read","stats:read"],"allowed_ips":["10.0.0.0/8"],'
            . '"created_at":"2026-11-27 10:00:00","expires_at":null,"last_used_at":"2026-11-27 10:05:00","plan":"pro"}',
            json_encode($key, \JSON_UNESCAPED_SLASHES),
        );
    }

    public function testKeyKeepsUnknownFieldsAndDates(): void
    {
        $mock = new Mock([Mock::json(200, self::keyAnswer(
            ['scopes' => CurrentKey::SCOPES, 'allowed_ips' => [], 'expires_at' => '2027-01-01 00:00:00', 'last_used_at' => null, 'name' => null, 'last_used_ip' => '127.0.0.0'],
            ['account' => ['id' => 1]],
        ))]);
        $key = $mock->client->key();
        self::assertCount(9, $key->scopes);
        self::assertSame([], $key->allowed_ips);
        self::assertNull($key->name);
        self::assertNull($key->last_used);
        self::assertSame('2027-01-01T00:00:00+00:00', $key->expiry?->format(\DATE_ATOM));
        self::assertSame(['last_used_ip' => '127.0.0.0', 'account' => ['id' => 1]], $key->extra);

        $mock = new Mock([Mock::json(200, ['success' => true])]);
        self::assertInstanceOf(FileshareException::class, self::thrown(fn () => $mock->client->key()));

        $mock = new Mock([]);
        self::assertInstanceOf(ConfigurationException::class, self::thrown(fn () => $mock->client->key(['retries' => 1])));
        self::assertSame([], $mock->requests);
    }

    /** @return array<string, mixed> an audit event */
    private static function event(int $id, string $action = 'file.uploaded', array $fields = []): array
    {
        return array_replace([
            'event_id' => $id,
            'at' => '2026-11-27 10:05:00',
            'action' => $action,
            'actor' => ['type' => 'key', 'id' => 12, 'name' => 'ci'],
            'ip' => '127.0.0.0',
            'user_agent' => 'fileshare-sdk-php/0.2.0',
            'target' => ['type' => 'file', 'id' => 7],
            'details' => ['filename' => 'a.txt', 'size' => 3],
        ], $fields);
    }

    /** @param list<int> $ids */
    private static function page(array $ids, ?int $next, int $limit = 2): Response
    {
        return Mock::json(200, ['success' => true, 'events' => array_map(static fn (int $id): array => self::event($id), $ids),
            'pagination' => ['limit' => $limit, 'next_before_id' => $next]]);
    }

    /** @return list<array<string, string>> each request's query, decoded */
    private static function queries(Mock $mock): array
    {
        return array_map(static function (array $r): array {
            parse_str($r['request']->getUri()->getQuery(), $query);

            return $query;
        }, $mock->requests);
    }

    public function testListSendsItsFiltersAndParsesEvents(): void
    {
        $mock = new Mock([
            Mock::json(200, ['success' => true, 'events' => [
                self::event(42, 'file.deleted'),
                self::event(41, 'link.created', ['actor' => ['type' => 'system', 'id' => null], 'ip' => null, 'user_agent' => null,
                    'target' => null, 'details' => [], 'region' => 'eu']),
            ], 'pagination' => ['limit' => 20, 'next_before_id' => 41]]),
            self::page([], null),
        ]);
        $since = new \DateTimeImmutable('2026-11-27 12:30:00', new \DateTimeZone('Europe/Berlin'));
        $list = $mock->client->auditEvents->list(limit: 20, beforeId: 50, action: 'file.*', since: $since);
        self::assertInstanceOf(AuditEventList::class, $list);
        self::assertSame(Mock::BASE . '/audit-events', (string) $mock->requests[0]['request']->getUri()->withQuery(''));
        self::assertSame('GET', $mock->requests[0]['request']->getMethod());
        self::assertSame([['limit' => '20', 'before_id' => '50', 'action' => 'file.*', 'since' => '2026-11-27T11:30:00Z']], self::queries($mock));
        self::assertSame(41, $list->pagination->next_before_id);
        self::assertSame(20, $list->pagination->limit);
        self::assertContainsOnlyInstancesOf(AuditEvent::class, $list->events);

        [$deleted, $system] = $list->events;
        self::assertSame(42, $deleted->event_id);
        self::assertSame('file.deleted', $deleted->action);
        self::assertSame('2026-11-27T10:05:00+00:00', $deleted->time->format(\DATE_ATOM));
        self::assertSame('key', $deleted->actor->type);
        self::assertSame(12, $deleted->actor->id);
        self::assertSame('ci', $deleted->actor->name);
        self::assertSame('127.0.0.0', $deleted->ip);
        self::assertSame('fileshare-sdk-php/0.2.0', $deleted->user_agent);
        self::assertSame('file', $deleted->target?->type);
        self::assertSame(7, $deleted->target?->id);
        self::assertSame(['filename' => 'a.txt', 'size' => 3], $deleted->details);
        self::assertSame(self::event(42, 'file.deleted'), $deleted->toArray());

        self::assertSame('system', $system->actor->type);
        self::assertNull($system->actor->id);
        self::assertNull($system->actor->name);
        self::assertNull($system->ip);
        self::assertNull($system->user_agent);
        self::assertNull($system->target);
        self::assertSame([], $system->details);
        self::assertSame(['region' => 'eu'], $system->extra);
        self::assertSame('{"details":{},"event_id":41,"at":"2026-11-27 10:05:00","action":"link.created","actor":{"type":"system","id":null},'
            . '"ip":null,"user_agent":null,"target":null,"region":"eu"}', json_encode($system));

        // Strings go as given; nothing left out is sent.
        $mock->client->auditEvents->list(since: '2026-11-27');
        self::assertSame(['since' => '2026-11-27'], self::queries($mock)[1]);
    }

    public function testListChecksItsOptionsBeforeSending(): void
    {
        $mock = new Mock([]);
        self::assertInstanceOf(ConfigurationException::class, self::thrown(fn () => $mock->client->auditEvents->list(since: '')));
        self::assertInstanceOf(ConfigurationException::class, self::thrown(fn () => $mock->client->auditEvents->list(requestOptions: ['page' => 2])));
        self::assertSame([], $mock->requests);

        $mock = new Mock([Mock::json(200, ['success' => true, 'events' => 'nope'])]);
        self::assertInstanceOf(FileshareException::class, self::thrown(fn () => $mock->client->auditEvents->list()));
        $mock = new Mock([Mock::error(400, 'invalid_parameter', 'before_id must be a positive integer')]);
        self::assertSame(400, self::thrown(fn () => $mock->client->auditEvents->list(beforeId: -1))->getCode());
    }

    public function testIterateFollowsNextBeforeIdWithTheSameFilters(): void
    {
        $mock = new Mock([self::page([9, 8], 8), self::page([5, 4], 4), self::page([2], null)]);
        $ids = [];
        foreach ($mock->client->auditEvents->iterate(limit: 2, action: 'file.deleted', since: new \DateTimeImmutable('@1795000000')) as $n => $event) {
            $ids[$n] = $event->event_id;
        }
        self::assertSame([9, 8, 5, 4, 2], $ids, 'keys run on across pages');
        $since = gmdate('Y-m-d\TH:i:s\Z', 1795000000);
        self::assertSame([
            ['limit' => '2', 'action' => 'file.deleted', 'since' => $since],
            ['limit' => '2', 'before_id' => '8', 'action' => 'file.deleted', 'since' => $since],
            ['limit' => '2', 'before_id' => '4', 'action' => 'file.deleted', 'since' => $since],
        ], self::queries($mock));
    }

    public function testIterateDefaultsAndStops(): void
    {
        $mock = new Mock([self::page([], null, 100)]);
        self::assertSame([], iterator_to_array($mock->client->auditEvents->iterate()));
        self::assertSame([['limit' => '100']], self::queries($mock));

        $mock = new Mock([self::page([9, 8], 8), self::page([8, 7], 8)]);
        $e = self::thrown(fn () => iterator_to_array($mock->client->auditEvents->iterate(limit: 2), false));
        self::assertInstanceOf(FileshareException::class, $e);
        self::assertStringContainsString('next_before_id', $e->getMessage());
        self::assertCount(2, $mock->requests);

        // A page refused part-way (the key lost audit:read) ends the iteration with that exception.
        $mock = new Mock([self::page([9, 8], 8), self::insufficientScope('audit:read')]);
        $seen = [];
        $e = self::thrown(function () use ($mock, &$seen): void {
            foreach ($mock->client->auditEvents->iterate(limit: 2) as $event) {
                $seen[] = $event->event_id;
            }
        });
        self::assertInstanceOf(InsufficientScopeException::class, $e);
        self::assertSame('audit:read', $e->getRequiredScope());
        self::assertSame([9, 8], $seen);
        self::assertCount(2, $mock->requests);
    }

    public function testRawResponses(): void
    {
        $mock = new Mock([
            Mock::json(200, self::keyAnswer(), ['RateLimit-Remaining' => '99']),
            Mock::json(200, ['success' => true, 'events' => [self::event(3)], 'pagination' => ['limit' => 1, 'next_before_id' => 3]], ['RateLimit-Remaining' => '98']),
        ]);
        $raw = $mock->client->withRawResponse();
        $key = $raw->key();
        self::assertInstanceOf(RawResponse::class, $key);
        self::assertSame('99', $key->getHeaderLine('RateLimit-Remaining'));
        self::assertInstanceOf(CurrentKey::class, $key->data);
        $page = $raw->auditEvents->list(limit: 1);
        self::assertSame('98', $page->getHeaderLine('RateLimit-Remaining'));
        self::assertSame(3, $page->data->events[0]->event_id);
        self::assertInstanceOf(ConfigurationException::class, self::thrown(fn () => $raw->auditEvents->iterate()));
    }
}
