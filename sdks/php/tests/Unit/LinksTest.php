<?php

declare(strict_types=1);

namespace Fileshare\Tests\Unit;

use Fileshare\Exception\BadRequestException;
use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\FileshareException;
use Fileshare\Exception\LimitExceededException;
use Fileshare\Model\FileRecord;
use Fileshare\Model\Link;
use Fileshare\Tests\Support\Mock;
use PHPUnit\Framework\TestCase;

/** $client->links and $client->files->update: the requests they send and the records they return. */
final class LinksTest extends TestCase
{
    private static function answer(array $link, int $status = 200): \GuzzleHttp\Psr7\Response
    {
        return Mock::json($status, ['success' => true, 'link' => $link]);
    }

    /** @return array<string, mixed>|null the JSON body of request $n */
    private static function body(Mock $mock, int $n = 0): ?array
    {
        return json_decode($mock->requests[$n]['body'], true);
    }

    public function testCreateSendsOnlyTheGivenFieldsAndReturnsALink(): void
    {
        $link = Mock::link(12, 3, ['label' => 'for the auditors', 'expires_at' => '2026-12-01 00:00:00', 'max_downloads' => 3,
            'download_count' => 1, 'password_protected' => true]);
        $mock = new Mock([self::answer($link, 201)]);
        $created = $mock->client->links->create(3, [
            'label' => 'for the auditors',
            'expires_at' => new \DateTimeImmutable('2026-12-01 01:00:00', new \DateTimeZone('Europe/Paris')),
            'max_downloads' => 3,
            'password' => 'correct horse',
            'expires_in' => null, // null on create: left out
        ]);
        $request = $mock->requests[0]['request'];
        self::assertSame('POST', $request->getMethod());
        self::assertSame(Mock::BASE . '/files/3/links', (string) $request->getUri());
        self::assertSame('application/json', $request->getHeaderLine('Content-Type'));
        self::assertSame('Bearer ' . Mock::KEY, $request->getHeaderLine('Authorization'));
        self::assertSame(['label' => 'for the auditors', 'expires_at' => '2026-12-01 00:00:00', 'max_downloads' => 3, 'password' => 'correct horse'],
            self::body($mock));

        self::assertSame(12, $created->link_id);
        self::assertSame(3, $created->file_id);
        self::assertSame('https://files.test/download/link12', $created->url);
        self::assertFalse($created->default);
        self::assertSame('for the auditors', $created->label);
        self::assertSame(3, $created->max_downloads);
        self::assertSame(1, $created->download_count);
        self::assertTrue($created->password_protected);
        self::assertTrue($created->isActive());
        self::assertSame('2026-12-01T00:00:00+00:00', $created->expiry?->format(\DATE_ATOM));
        self::assertSame('2026-11-27T10:00:00+00:00', $created->created->format(\DATE_ATOM));
        self::assertSame($link, json_decode((string) json_encode($created), true));
    }

    public function testCreateWithoutOptionsSendsAnEmptyObject(): void
    {
        $mock = new Mock([self::answer(Mock::link(), 201)]);
        $link = $mock->client->links->create(FileRecord::fromArray(Mock::file('x', 1)));
        self::assertSame('{}', $mock->requests[0]['body']);
        self::assertNull($link->expiry);
        self::assertNull($link->label);
        self::assertNull($link->max_downloads);
    }

    public function testUpdateSendsNullToClearAndLeavesOutWhatIsAbsent(): void
    {
        $mock = new Mock([self::answer(Mock::link(12, 1, ['label' => 'kept']))]);
        $mock->client->links->update(12, ['password' => null, 'max_downloads' => null, 'expires_in' => 3600]);
        $request = $mock->requests[0]['request'];
        self::assertSame('PATCH', $request->getMethod());
        self::assertSame(Mock::BASE . '/links/12', (string) $request->getUri());
        self::assertSame('{"password":null,"max_downloads":null,"expires_in":3600}', $mock->requests[0]['body']);
    }

    public function testListGetDeleteRotate(): void
    {
        $default = Mock::link(1, 3, ['default' => true, 'url' => 'https://files.test/download/tok3']);
        $mock = new Mock([
            Mock::json(200, ['success' => true, 'links' => [$default, Mock::link(13, 3, ['status' => 'revoked'])]]),
            self::answer(Mock::link(13, 3, ['status' => 'revoked'])),
            Mock::json(200, ['success' => true, 'message' => 'Link revoked.']),
            self::answer(Mock::link(1, 3, ['default' => true, 'url' => 'https://files.test/download/new'])),
        ]);
        $links = $mock->client->links->list(3);
        self::assertCount(2, $links);
        self::assertTrue($links[0]->default);
        self::assertSame(Link::STATUS_REVOKED, $links[1]->status);
        self::assertFalse($links[1]->isActive());
        self::assertSame(13, $mock->client->links->get(13)->link_id);
        $mock->client->links->delete($links[1]);
        $rotated = $mock->client->links->rotate($links[0]);
        self::assertSame('https://files.test/download/new', $rotated->url);
        $calls = array_map(static fn (array $r): string => $r['request']->getMethod() . ' ' . $r['request']->getUri(), $mock->requests);
        self::assertSame(['GET ' . Mock::BASE . '/files/3/links', 'GET ' . Mock::BASE . '/links/13', 'DELETE ' . Mock::BASE . '/links/13',
            'POST ' . Mock::BASE . '/links/1/rotate'], $calls);
        self::assertSame('', $mock->requests[3]['body'], 'rotate has no body');
        self::assertSame('', $mock->requests[3]['request']->getHeaderLine('Content-Type'));
    }

    public function testBadOptionsAndIdsNeverReachTheServer(): void
    {
        $mock = new Mock([]);
        foreach ([
            fn () => $mock->client->links->create(3, ['max_download' => 3]),
            fn () => $mock->client->links->update(3, ['filename' => 'x']),
            fn () => $mock->client->links->get('12/../../files'),
            fn () => $mock->client->links->list(0),
            fn () => $mock->client->files->update(3, ['label' => 'x']),
            fn () => $mock->client->files->upload(\Fileshare\UploadSource::fromBytes('x'), ['expires_in' => '1 day']),
            // Idempotency keys: 1 to 255 printable ASCII characters, on creating calls only.
            fn () => $mock->client->links->create(3, ['idempotency_key' => '']),
            fn () => $mock->client->links->create(3, ['idempotency_key' => str_repeat('k', 256)]),
            fn () => $mock->client->links->create(3, ['idempotency_key' => "a\nb"]),
            fn () => $mock->client->links->create(3, ['idempotency_key' => 'clé']),
            fn () => $mock->client->links->create(3, ['idempotency_key' => 42]),
            fn () => $mock->client->links->update(3, ['idempotency_key' => 'k']),
            fn () => $mock->client->files->upload(\Fileshare\UploadSource::fromBytes('x'), ['idempotency_key' => "tab\t"]),
        ] as $n => $call) {
            try {
                $call();
                self::fail("no exception for call $n");
            } catch (ConfigurationException $e) {
                self::addToAssertionCount(1);
            }
        }
        self::assertSame([], $mock->requests);
    }

    public function testWritesWithoutAKeyAreRetriedOnlyWhenTheServerRefused(): void
    {
        // 503: the server did nothing, so the write is sent again.
        $mock = new Mock([Mock::error(503, 'service_unavailable'), self::answer(Mock::link())]);
        $mock->client->links->update(1, ['label' => 'x']);
        self::assertCount(2, $mock->requests);
        self::assertSame($mock->requests[0]['body'], $mock->requests[1]['body']);

        // A dropped connection or a 500: the server may have acted, so nothing is sent again.
        foreach ([Mock::drop(), Mock::error(500, 'internal_error'), Mock::error(502, 'bad_gateway')] as $failure) {
            foreach ([fn (Mock $m) => $m->client->links->rotate(1), fn (Mock $m) => $m->client->links->update(1, ['label' => 'y']),
                fn (Mock $m) => $m->client->files->update(1, ['filename' => 'y'])] as $call) {
                $mock = new Mock([$failure, self::answer(Mock::link())]);
                try {
                    $call($mock);
                    self::fail('no exception');
                } catch (FileshareException) {
                }
                self::assertCount(1, $mock->requests);
                self::assertFalse($mock->requests[0]['request']->hasHeader('Idempotency-Key'));
            }
        }

        // Reads and deletes are retried after a drop, as every GET and DELETE is.
        $mock = new Mock([Mock::drop(), self::answer(Mock::link())]);
        $mock->client->links->get(12);
        self::assertCount(2, $mock->requests);
    }

    public function testCreateCarriesOneIdempotencyKeyAndIsRetriedWithIt(): void
    {
        // A drop, then a 409 for the key's first request still running: each retried with the same key and body.
        $mock = new Mock([Mock::drop(), Mock::error(409, 'idempotency_in_progress', 'x', ['Retry-After' => '1']), self::answer(Mock::link(), 201)],
            ['max_retries' => 3]);
        self::assertSame(12, $mock->client->links->create(1, ['label' => 'x'])->link_id);
        self::assertCount(3, $mock->requests);
        $keys = array_map(static fn (array $r): string => $r['request']->getHeaderLine('Idempotency-Key'), $mock->requests);
        self::assertMatchesRegularExpression('/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/', $keys[0]);
        self::assertSame([$keys[0], $keys[0], $keys[0]], $keys);
        self::assertSame(['{"label":"x"}', '{"label":"x"}', '{"label":"x"}'], array_column($mock->requests, 'body'));
        self::assertSame([0.25, 1.0], $mock->sleeps);

        // Another call, another key; the caller's own key is sent as given, never in the body.
        $mock = new Mock([self::answer(Mock::link(), 201), Mock::error(500, 'internal_error'), self::answer(Mock::link(), 201)]);
        $mock->client->links->create(1);
        $mock->client->links->create(1, ['idempotency_key' => 'order-42/link', 'label' => null]);
        self::assertNotSame($keys[0], $mock->requests[0]['request']->getHeaderLine('Idempotency-Key'));
        self::assertSame('order-42/link', $mock->requests[1]['request']->getHeaderLine('Idempotency-Key'));
        self::assertSame('order-42/link', $mock->requests[2]['request']->getHeaderLine('Idempotency-Key'));
        self::assertSame('{}', $mock->requests[2]['body']);

        // The same key for another link: 422, not retried.
        $mock = new Mock([Mock::error(422, 'idempotency_key_reused'), self::answer(Mock::link(), 201)]);
        try {
            $mock->client->links->create(1, ['idempotency_key' => 'k', 'label' => 'other']);
            self::fail('no exception');
        } catch (BadRequestException $e) {
            self::assertSame('idempotency_key_reused', $e->getErrorCode());
        }
        self::assertCount(1, $mock->requests);
    }

    public function testLinkErrors(): void
    {
        $mock = new Mock([
            Mock::error(403, 'link_limit_exceeded', 'A file has at most 100 links that are not revoked.'),
            Mock::error(409, 'default_link_required', 'The default link cannot be deleted; rotate it instead.'),
            Mock::error(400, 'invalid_parameter', 'max_downloads must be an integer from 1 to 1000000.'),
        ]);
        try {
            $mock->client->links->create(1);
            self::fail('no exception');
        } catch (LimitExceededException $e) {
            self::assertSame('link_limit_exceeded', $e->getErrorCode());
        }
        try {
            $mock->client->links->delete(1);
            self::fail('no exception');
        } catch (BadRequestException $e) {
            self::assertSame(409, $e->getStatus());
            self::assertSame('default_link_required', $e->getErrorCode());
        }
        try {
            $mock->client->links->create(1, ['max_downloads' => 0]);
            self::fail('no exception');
        } catch (BadRequestException $e) {
            self::assertSame('invalid_parameter', $e->getErrorCode());
            self::assertStringContainsString('max_downloads', $e->getMessage());
        }
    }

    public function testFilesUpdate(): void
    {
        $file = Mock::file('abc', 4, 'renamed.txt');
        $mock = new Mock([
            Mock::json(200, ['success' => true, 'file' => ['expires_at' => '2026-12-24 18:00:00'] + $file]),
            Mock::json(200, ['success' => true, 'file' => $file]),
        ]);
        $updated = $mock->client->files->update(4, ['expires_at' => new \DateTimeImmutable('2026-12-24T19:00:00+01:00'), 'filename' => 'renamed.txt']);
        self::assertSame('PATCH', $mock->requests[0]['request']->getMethod());
        self::assertSame(Mock::BASE . '/files/4', (string) $mock->requests[0]['request']->getUri());
        self::assertSame(['expires_at' => '2026-12-24 18:00:00', 'filename' => 'renamed.txt'], self::body($mock));
        self::assertSame('2026-12-24 18:00:00', $updated->expires_at);
        self::assertSame('2026-12-24T18:00:00+00:00', $updated->expiry?->format(\DATE_ATOM));
        self::assertSame('renamed.txt', $updated->filename);

        $cleared = $mock->client->files->update($updated, ['expires_at' => null]);
        self::assertSame('{"expires_at":null}', $mock->requests[1]['body']);
        self::assertNull($cleared->expires_at);
        self::assertNull($cleared->expiry);
    }
}
