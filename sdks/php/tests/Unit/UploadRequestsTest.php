<?php

declare(strict_types=1);

namespace Fileshare\Tests\Unit;

use Fileshare\Exception\BadRequestException;
use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\FileshareException;
use Fileshare\Exception\InsufficientScopeException;
use Fileshare\Exception\LimitExceededException;
use Fileshare\Exception\NotFoundException;
use Fileshare\Model\AuditActor;
use Fileshare\Model\AuditEvent;
use Fileshare\Model\FileRecord;
use Fileshare\Model\FileSource;
use Fileshare\Model\UploadRequest;
use Fileshare\Model\UploadRequestFileList;
use Fileshare\Model\WebhookEvent;
use Fileshare\RawResponse;
use Fileshare\Tests\Support\Mock;
use Fileshare\UploadRequests;
use PHPUnit\Framework\TestCase;

/** `$client->uploadRequests` (issue 34) on Guzzle's MockHandler, and the file record's `source`. */
final class UploadRequestsTest extends TestCase
{
    /**
     * @param array<string, mixed> $fields
     *
     * @return array<string, mixed> an upload request object
     */
    private static function record(int $id = 12, array $fields = []): array
    {
        return array_replace([
            'request_id' => $id,
            'url' => 'https://files.test/r/' . str_repeat('A', 43),
            'label' => 'Invoices for March',
            'message' => "Please send\nthe PDFs",
            'expires_at' => '2026-12-04 10:00:00',
            'max_files' => 5,
            'max_file_size' => 1048576,
            'max_total_size' => 10485760,
            'file_expires_in' => 86400,
            'password_protected' => false,
            'files_received' => 0,
            'bytes_received' => 0,
            'status' => 'active',
            'created_at' => '2026-11-27 10:00:00',
        ], $fields);
    }

    /** @param array<string, mixed> $fields */
    private static function answer(int $status = 200, int $id = 12, array $fields = []): \GuzzleHttp\Psr7\Response
    {
        return Mock::json($status, ['success' => true, 'upload_request' => self::record($id, $fields)]);
    }

    /**
     * @param list<int> $ids
     */
    private static function page(array $ids, ?int $next, int $limit = 2): \GuzzleHttp\Psr7\Response
    {
        return Mock::json(200, ['success' => true, 'files' => array_map(static fn (int $id): array => Mock::file('x', $id)
            + ['source' => ['type' => 'upload_request', 'request_id' => 12]], $ids), 'pagination' => ['limit' => $limit, 'next_before_id' => $next]]);
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

    /** @return array{string, string, string, array<string, mixed>|null} method, URL, Idempotency-Key, decoded body of request $n */
    private static function request(Mock $mock, int $n = 0): array
    {
        $r = $mock->requests[$n];

        return [$r['request']->getMethod(), (string) $r['request']->getUri(), $r['request']->getHeaderLine('Idempotency-Key'),
            $r['body'] === '' ? null : json_decode($r['body'], true)];
    }

    public function testCreate(): void
    {
        $mock = new Mock([Mock::json(201, ['success' => true, 'upload_request' => self::record()], ['Location' => '/api/v1/upload-requests/12'])]);
        $request = $mock->client->uploadRequests->create([
            'label' => 'Invoices for March',
            'message' => "Please send\nthe PDFs",
            'expires_in' => 7 * 86400,
            'max_files' => 5,
            'max_file_size' => 1048576,
            'max_total_size' => 10485760,
            'file_expires_in' => 86400,
            'password' => null,
        ]);
        [$method, $url, $key, $body] = self::request($mock);
        self::assertSame('POST', $method);
        self::assertSame(Mock::BASE . '/upload-requests', $url);
        self::assertMatchesRegularExpression('/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/', $key);
        self::assertSame(['label' => 'Invoices for March', 'message' => "Please send\nthe PDFs", 'expires_in' => 604800, 'max_files' => 5,
            'max_file_size' => 1048576, 'max_total_size' => 10485760, 'file_expires_in' => 86400], $body, 'a null option is left out');
        self::assertSame('application/json', $mock->requests[0]['request']->getHeaderLine('Content-Type'));
        self::assertSame('Bearer ' . Mock::KEY, $mock->requests[0]['request']->getHeaderLine('Authorization'));

        self::assertInstanceOf(UploadRequest::class, $request);
        self::assertSame(12, $request->request_id);
        self::assertSame('https://files.test/r/' . str_repeat('A', 43), $request->url);
        self::assertSame('Invoices for March', $request->label);
        self::assertSame("Please send\nthe PDFs", $request->message);
        self::assertSame('2026-12-04 10:00:00', $request->expires_at);
        self::assertSame('2026-12-04T10:00:00+00:00', $request->expiry->format(\DATE_ATOM));
        self::assertSame('2026-11-27T10:00:00+00:00', $request->created->format(\DATE_ATOM));
        self::assertSame(5, $request->max_files);
        self::assertSame(1048576, $request->max_file_size);
        self::assertSame(10485760, $request->max_total_size);
        self::assertSame(86400, $request->file_expires_in);
        self::assertFalse($request->password_protected);
        self::assertSame(0, $request->files_received);
        self::assertSame(0, $request->bytes_received);
        self::assertSame(UploadRequest::STATUS_ACTIVE, $request->status);
        self::assertTrue($request->isActive());
        self::assertSame([], $request->extra);
        self::assertSame(self::record(), $request->toArray());
        self::assertSame(self::record(), json_decode((string) json_encode($request), true));
    }

    public function testCreateWithADateAndItsOwnKey(): void
    {
        $mock = new Mock([self::answer(201), self::answer(201), self::answer(201)]);
        $mock->client->uploadRequests->create(['label' => 'CVs', 'expires_at' => new \DateTimeImmutable('2026-12-04 12:00:00', new \DateTimeZone('Europe/Paris')),
            'password' => 'correct horse battery', 'idempotency_key' => 'ur-1']);
        [, , $key, $body] = self::request($mock);
        self::assertSame('ur-1', $key);
        self::assertSame(['label' => 'CVs', 'expires_at' => '2026-12-04 11:00:00', 'password' => 'correct horse battery'], $body,
            'a date in UTC; the key is a header, not a field');

        $mock->client->uploadRequests->create(['label' => 'CVs', 'expires_at' => '2026-12-04 11:00:00'], ['idempotency_key' => 'ur-2']);
        self::assertSame('ur-2', self::request($mock, 1)[2], 'the key as a request option');
        self::assertSame(['label' => 'CVs', 'expires_at' => '2026-12-04 11:00:00'], self::request($mock, 1)[3]);

        $mock->client->uploadRequests->create(['label' => 'CVs', 'expires_in' => 60]);
        self::assertNotSame(self::request($mock, 1)[2], self::request($mock, 2)[2]);
        self::assertNotSame(self::request($mock, 0)[2], self::request($mock, 2)[2], 'a new key per call');
    }

    public function testCreateIsRetriedWithTheSameKey(): void
    {
        $mock = new Mock([Mock::drop(), Mock::error(503, 'unavailable'), self::answer(201)], ['max_retries' => 2]);
        $request = $mock->client->uploadRequests->create(['label' => 'CVs', 'expires_in' => 3600]);
        self::assertSame(12, $request->request_id);
        self::assertCount(3, $mock->requests);
        $keys = array_map(static fn (array $r): string => $r['request']->getHeaderLine('Idempotency-Key'), $mock->requests);
        self::assertCount(1, array_unique($keys), 'one key for the call, sent on every attempt');
        self::assertCount(2, $mock->sleeps);
    }

    public function testCreateChecksItsOptionsBeforeSending(): void
    {
        $mock = new Mock([]);
        foreach ([
            fn () => $mock->client->uploadRequests->create(['label' => 'x', 'expires_in' => 60, 'max_downloads' => 3]),
            fn () => $mock->client->uploadRequests->create(['label' => 'x', 'expires_in' => 60], ['retries' => 1]),
            fn () => $mock->client->uploadRequests->create(['label' => 'x', 'expires_in' => 60, 'idempotency_key' => "two\nlines"]),
        ] as $call) {
            self::assertInstanceOf(ConfigurationException::class, self::thrown($call));
        }
        self::assertSame([], $mock->requests);
        // The password is a sensitive parameter: not in a trace's arguments.
        $e = self::thrown(fn () => $mock->client->uploadRequests->create(['label' => 'x', 'password' => 'hunter2hunter2', 'typo' => 1]));
        self::assertStringNotContainsString('hunter2hunter2', $e->getTraceAsString());
    }

    public function testTheServersRefusals(): void
    {
        $cases = [
            [Mock::error(400, 'invalid_parameter', 'label: must be 1 to 200 characters'), BadRequestException::class],
            [Mock::json(403, ['success' => false, 'error' => ['code' => 'insufficient_scope', 'message' => 'needs requests:manage',
                'required_scope' => 'requests:manage']]), InsufficientScopeException::class],
        ];
        foreach ($cases as [$answer, $class]) {
            $mock = new Mock([$answer, self::answer(201)]);
            $e = self::thrown(fn () => $mock->client->uploadRequests->create(['label' => '', 'expires_in' => 60]));
            self::assertInstanceOf($class, $e);
            self::assertCount(1, $mock->requests, 'a 4xx is not retried');
        }
        self::assertSame('requests:manage', $e->getRequiredScope());

        $mock = new Mock([Mock::error(404, 'not_found'), Mock::error(404, 'not_found'), Mock::error(404, 'not_found'), Mock::error(404, 'not_found')]);
        self::assertInstanceOf(NotFoundException::class, self::thrown(fn () => $mock->client->uploadRequests->get(99)));
        self::assertInstanceOf(NotFoundException::class, self::thrown(fn () => $mock->client->uploadRequests->delete(99)));
        self::assertInstanceOf(NotFoundException::class, self::thrown(fn () => $mock->client->uploadRequests->close(99)));
        self::assertInstanceOf(NotFoundException::class, self::thrown(fn () => $mock->client->uploadRequests->files(99)));

        // A guest's upload into a full request: a limit, as the other 403 limit codes.
        $mock = new Mock([Mock::error(403, 'upload_request_full', 'This upload request has no room left for this file.')]);
        $e = self::thrown(fn () => $mock->client->uploadRequests->get(1));
        self::assertInstanceOf(LimitExceededException::class, $e);
        self::assertSame('upload_request_full', $e->getErrorCode());
    }

    public function testListAndGet(): void
    {
        $mock = new Mock([
            Mock::json(200, ['success' => true, 'upload_requests' => [
                self::record(13, ['status' => 'full', 'files_received' => 5, 'bytes_received' => 500, 'password_protected' => true, 'scan' => 'on']),
                self::record(12, ['message' => null, 'max_files' => null, 'max_file_size' => null, 'max_total_size' => null, 'file_expires_in' => null]),
            ]]),
            self::answer(),
            self::answer(200, 13),
        ]);
        $list = $mock->client->uploadRequests->list();
        self::assertSame(['GET', Mock::BASE . '/upload-requests', '', null], self::request($mock));
        self::assertContainsOnlyInstancesOf(UploadRequest::class, $list);
        self::assertSame([13, 12], array_map(static fn (UploadRequest $r): int => $r->request_id, $list));
        self::assertSame(UploadRequest::STATUS_FULL, $list[0]->status);
        self::assertFalse($list[0]->isActive());
        self::assertTrue($list[0]->password_protected);
        self::assertSame(5, $list[0]->files_received);
        self::assertSame(500, $list[0]->bytes_received);
        self::assertSame(['scan' => 'on'], $list[0]->extra);
        self::assertNull($list[1]->message);
        self::assertNull($list[1]->max_files);
        self::assertNull($list[1]->max_file_size);
        self::assertNull($list[1]->max_total_size);
        self::assertNull($list[1]->file_expires_in);
        self::assertSame(self::record(12, ['message' => null, 'max_files' => null, 'max_file_size' => null, 'max_total_size' => null,
            'file_expires_in' => null]), $list[1]->toArray(), 'nulls are kept');

        $request = $mock->client->uploadRequests->get(12);
        self::assertSame(['GET', Mock::BASE . '/upload-requests/12', '', null], self::request($mock, 1));
        self::assertSame('Invoices for March', $request->label);
        $mock->client->uploadRequests->get($list[0]);
        self::assertSame(Mock::BASE . '/upload-requests/13', self::request($mock, 2)[1], 'an UploadRequest for its id');

        foreach ([0, -1, '5; DROP', '../5', ''] as $bad) {
            self::assertInstanceOf(ConfigurationException::class, self::thrown(fn () => $mock->client->uploadRequests->get($bad)));
        }
        self::assertCount(3, $mock->requests);

        $mock = new Mock([Mock::json(200, ['success' => true]), Mock::json(200, ['success' => true, 'upload_request' => ['label' => 'x']])]);
        self::assertInstanceOf(FileshareException::class, self::thrown(fn () => $mock->client->uploadRequests->list()));
        self::assertInstanceOf(FileshareException::class, self::thrown(fn () => $mock->client->uploadRequests->get(1)));
    }

    public function testUpdateSendsWhatIsGivenAndNullClears(): void
    {
        $mock = new Mock([self::answer(200, 12, ['max_files' => null, 'password_protected' => false]), self::answer(200, 12, ['expires_at' => '2027-01-01 00:00:00'])]);
        $request = $mock->client->uploadRequests->update(12, ['max_files' => null, 'password' => null, 'message' => 'new']);
        self::assertSame(['PATCH', Mock::BASE . '/upload-requests/12', '', ['max_files' => null, 'password' => null, 'message' => 'new']], self::request($mock));
        self::assertSame('{"max_files":null,"password":null,"message":"new"}', $mock->requests[0]['body']);
        self::assertNull($request->max_files);

        $request = $mock->client->uploadRequests->update($request, ['expires_at' => new \DateTimeImmutable('2027-01-01T00:00:00Z')]);
        self::assertSame(['expires_at' => '2027-01-01 00:00:00'], self::request($mock, 1)[3]);
        self::assertSame('2027-01-01 00:00:00', $request->expires_at);

        self::assertInstanceOf(ConfigurationException::class, self::thrown(fn () => $mock->client->uploadRequests->update(12, [])));
        self::assertInstanceOf(ConfigurationException::class, self::thrown(fn () => $mock->client->uploadRequests->update(12, ['lable' => 'x'])));
        self::assertCount(2, $mock->requests);
    }

    public function testDeleteAndCloseAnswerTheRequest(): void
    {
        $mock = new Mock([self::answer(200, 12, ['status' => 'closed']), self::answer(200, 13, ['status' => 'closed'])]);
        $deleted = $mock->client->uploadRequests->delete(12);
        self::assertSame(['DELETE', Mock::BASE . '/upload-requests/12', '', null], self::request($mock));
        self::assertSame(UploadRequest::STATUS_CLOSED, $deleted->status);

        $closed = $mock->client->uploadRequests->close('13');
        self::assertSame(['POST', Mock::BASE . '/upload-requests/13/close', '', null], self::request($mock, 1), 'no body, no key');
        self::assertSame(UploadRequest::STATUS_CLOSED, $closed->status);
        self::assertSame(13, $closed->request_id);
    }

    public function testRetries(): void
    {
        // A PATCH without a key is not sent again after a dropped connection (the server may have acted)...
        $mock = new Mock([Mock::drop(), self::answer()]);
        self::assertInstanceOf(FileshareException::class, self::thrown(fn () => $mock->client->uploadRequests->update(12, ['label' => 'x'])));
        self::assertCount(1, $mock->requests);
        // ...but is after a refusal (it did nothing).
        $mock = new Mock([Mock::error(503, 'unavailable'), self::answer()]);
        $mock->client->uploadRequests->update(12, ['label' => 'x']);
        self::assertCount(2, $mock->requests);
        // Reads, deletes and close (closing twice changes nothing) are retried after a drop.
        foreach ([
            fn (Mock $m) => $m->client->uploadRequests->get(12),
            fn (Mock $m) => $m->client->uploadRequests->list(),
            fn (Mock $m) => $m->client->uploadRequests->delete(12),
            fn (Mock $m) => $m->client->uploadRequests->close(12),
        ] as $n => $call) {
            $ok = $n === 1 ? Mock::json(200, ['success' => true, 'upload_requests' => []]) : self::answer();
            $mock = new Mock([Mock::drop(), Mock::error(502, 'bad_gateway'), $ok]);
            $call($mock);
            self::assertCount(3, $mock->requests);
        }
    }

    public function testFiles(): void
    {
        $file = Mock::file('hello', 40, 'hello.txt') + ['source' => ['type' => 'upload_request', 'request_id' => 12]];
        $mock = new Mock([
            Mock::json(200, ['success' => true, 'files' => [$file], 'pagination' => ['limit' => 1, 'next_before_id' => 40]]),
            Mock::json(200, ['success' => true, 'files' => [], 'pagination' => ['limit' => 20, 'next_before_id' => null]]),
        ]);
        $page = $mock->client->uploadRequests->files(12, limit: 1, beforeId: 50);
        self::assertSame(['GET', Mock::BASE . '/upload-requests/12/files?limit=1&before_id=50', '', null], self::request($mock));
        self::assertInstanceOf(UploadRequestFileList::class, $page);
        self::assertSame(1, $page->pagination->limit);
        self::assertSame(40, $page->pagination->next_before_id);
        self::assertContainsOnlyInstancesOf(FileRecord::class, $page->files);
        self::assertSame('hello.txt', $page->files[0]->filename);
        self::assertInstanceOf(FileSource::class, $page->files[0]->source);
        self::assertSame(FileSource::TYPE_UPLOAD_REQUEST, $page->files[0]->source->type);
        self::assertSame(12, $page->files[0]->source->request_id);
        self::assertTrue($page->files[0]->source->isUploadRequest());
        self::assertSame($file, $page->files[0]->toArray());

        self::assertSame('{"files":[],"pagination":{"limit":20,"next_before_id":null}}',
            json_encode($mock->client->uploadRequests->files(UploadRequest::fromArray(self::record(12)))));
        self::assertSame(Mock::BASE . '/upload-requests/12/files', self::request($mock, 1)[1], 'nothing left out is sent');

        $mock = new Mock([Mock::error(400, 'invalid_parameter', 'limit must be 1 to 100')]);
        self::assertInstanceOf(BadRequestException::class, self::thrown(fn () => $mock->client->uploadRequests->files(12, limit: 0)));
        $mock = new Mock([Mock::json(200, ['success' => true, 'files' => 'none'])]);
        self::assertInstanceOf(FileshareException::class, self::thrown(fn () => $mock->client->uploadRequests->files(12)));
    }

    public function testIterateFiles(): void
    {
        $mock = new Mock([self::page([9, 8], 8), self::page([5, 4], 4), self::page([2], null)]);
        $ids = [];
        foreach ($mock->client->uploadRequests->iterateFiles(12, limit: 2, requestOptions: ['timeout' => 5]) as $file) {
            $ids[] = $file->file_id;
        }
        self::assertSame([9, 8, 5, 4, 2], $ids);
        self::assertSame([
            Mock::BASE . '/upload-requests/12/files?limit=2',
            Mock::BASE . '/upload-requests/12/files?limit=2&before_id=8',
            Mock::BASE . '/upload-requests/12/files?limit=2&before_id=4',
        ], array_map(static fn (array $r): string => (string) $r['request']->getUri(), $mock->requests));

        // A server whose next_before_id does not go down would loop for ever: stopped.
        $mock = new Mock([self::page([9, 8], 8), self::page([9, 8], 8)]);
        self::assertInstanceOf(FileshareException::class, self::thrown(fn () => iterator_to_array($mock->client->uploadRequests->iterateFiles(12, 2), false)));
        // Arguments are checked before the first request.
        $mock = new Mock([]);
        $generator = $mock->client->uploadRequests->iterateFiles('x');
        self::assertInstanceOf(ConfigurationException::class, self::thrown(fn () => $generator->current()));
        self::assertSame([], $mock->requests);
    }

    public function testRawResponses(): void
    {
        $mock = new Mock([Mock::json(201, ['success' => true, 'upload_request' => self::record()], ['Location' => '/api/v1/upload-requests/12']),
            self::page([3], null)]);
        $raw = $mock->client->withRawResponse();
        $created = $raw->uploadRequests->create(['label' => 'x', 'expires_in' => 60]);
        self::assertInstanceOf(RawResponse::class, $created);
        self::assertSame(201, $created->getStatusCode());
        self::assertSame('/api/v1/upload-requests/12', $created->getHeaderLine('Location'));
        self::assertInstanceOf(UploadRequest::class, $created->data);
        self::assertInstanceOf(UploadRequestFileList::class, $raw->uploadRequests->files(12)->data);
        self::assertInstanceOf(ConfigurationException::class, self::thrown(fn () => $raw->uploadRequests->iterateFiles(12)));
        self::assertInstanceOf(UploadRequests::class, $mock->client->uploadRequests);
    }

    public function testTheFileSource(): void
    {
        foreach ([
            [['type' => 'api'], 'api', null],
            [['type' => 'dashboard'], 'dashboard', null],
            [['type' => 'upload_request', 'request_id' => 12], 'upload_request', 12],
        ] as [$source, $type, $requestId]) {
            $data = Mock::file('abc') + ['source' => $source];
            $file = FileRecord::fromArray($data);
            self::assertSame($type, $file->source?->type);
            self::assertSame($requestId, $file->source?->request_id);
            self::assertSame([], $file->extra, 'source is a known field');
            self::assertSame($data, $file->toArray());
            self::assertSame($data, json_decode((string) json_encode($file), true));
        }
        self::assertFalse(FileSource::fromArray(['type' => 'api'])->isUploadRequest());
        // A server that does not say: null, and toArray() gives back what it sent.
        $file = FileRecord::fromArray(Mock::file('abc'));
        self::assertNull($file->source);
        self::assertSame(Mock::file('abc'), $file->toArray());
        // A type this SDK does not know is kept, with its other fields.
        $source = FileSource::fromArray(['type' => 'email', 'mailbox' => 'in@x.test']);
        self::assertSame('email', $source->type);
        self::assertSame(['type' => 'email', 'mailbox' => 'in@x.test'], $source->toArray());
    }

    public function testTheWebhookEventsAndTheGuestActor(): void
    {
        $file = Mock::file('hello', 40, 'hello.txt') + ['source' => ['type' => 'upload_request', 'request_id' => 12]];
        $event = WebhookEvent::fromArray(['type' => 'upload_request.file_received', 'timestamp' => '2026-11-27T10:00:00.000Z',
            'data' => ['request_id' => 12, 'label' => 'CVs', 'files_received' => 1, 'bytes_received' => 5, 'file' => $file]]);
        self::assertSame(WebhookEvent::UPLOAD_REQUEST_FILE_RECEIVED, $event->type);
        self::assertSame(12, FileRecord::fromArray($event->data['file'])->source?->request_id);
        self::assertSame('upload_request.full', WebhookEvent::UPLOAD_REQUEST_FULL);

        $audit = AuditEvent::fromArray(['event_id' => 7, 'at' => '2026-11-27 10:00:00', 'action' => 'file.uploaded',
            'actor' => ['type' => 'guest', 'id' => 12], 'ip' => '127.0.0.0', 'user_agent' => null, 'target' => ['type' => 'file', 'id' => 40],
            'details' => []]);
        self::assertSame(AuditActor::TYPE_GUEST, $audit->actor->type);
        self::assertSame(12, $audit->actor->id);
        self::assertNull($audit->actor->name);
    }
}
