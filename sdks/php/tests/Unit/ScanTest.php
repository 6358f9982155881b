<?php

declare(strict_types=1);

namespace Fileshare\Tests\Unit;

use Fileshare\Exception\BadRequestException;
use Fileshare\Exception\FileshareException;
use Fileshare\Exception\LimitExceededException;
use Fileshare\Exception\ScanPendingException;
use Fileshare\Internal\Http;
use Fileshare\Model\AuditActor;
use Fileshare\Model\AuditEvent;
use Fileshare\Model\FileRecord;
use Fileshare\Model\FileScan;
use Fileshare\Model\WebhookEvent;
use Fileshare\Tests\Support\Mock;
use Fileshare\UploadSource;
use GuzzleHttp\Psr7\Response;
use PHPUnit\Framework\TestCase;

/** Virus scanning (issue 35): the file record's `scan`, `file_not_scannable`, `scan_pending`, the events. */
final class ScanTest extends TestCase
{
    private const GRANT = 'https://files.test/download/tok1/grant1';

    private static function thrown(callable $call): \Throwable
    {
        try {
            $call();
        } catch (\Throwable $e) {
            return $e;
        }
        self::fail('no exception');
    }

    /** @return iterable<string, array{array<string, mixed>, string, ?string, ?string}> */
    public static function statuses(): iterable
    {
        yield 'pending' => [['status' => 'pending', 'signature' => null, 'scanned_at' => null], FileScan::STATUS_PENDING, null, null];
        yield 'clean' => [['status' => 'clean', 'signature' => null, 'scanned_at' => '2026-11-27 10:00:01'], FileScan::STATUS_CLEAN, null, '2026-11-27T10:00:01+00:00'];
        yield 'infected' => [['status' => 'infected', 'signature' => 'Win.Test.EICAR_HDB-1', 'scanned_at' => '2026-11-27 10:00:02'],
            FileScan::STATUS_INFECTED, 'Win.Test.EICAR_HDB-1', '2026-11-27T10:00:02+00:00'];
        yield 'error' => [['status' => 'error', 'signature' => null, 'scanned_at' => '2026-11-27 10:00:03'], FileScan::STATUS_ERROR, null, '2026-11-27T10:00:03+00:00'];
        yield 'skipped' => [['status' => 'skipped', 'signature' => null, 'scanned_at' => '2026-11-27 10:00:04'], FileScan::STATUS_SKIPPED, null, '2026-11-27T10:00:04+00:00'];
    }

    /**
     * @dataProvider statuses
     *
     * @param array<string, mixed> $scan
     */
    public function testEachStatusIsParsed(array $scan, string $status, ?string $signature, ?string $scannedAt): void
    {
        $data = Mock::file('abc', 7, 'a.txt') + ['source' => ['type' => 'api']];
        $data['scan'] = $scan;
        $file = FileRecord::fromArray($data);
        self::assertInstanceOf(FileScan::class, $file->scan);
        self::assertSame($status, $file->scan->status);
        self::assertContains($status, FileScan::STATUSES);
        self::assertSame($signature, $file->scan->signature);
        self::assertSame($scan['scanned_at'], $file->scan->scanned_at);
        self::assertSame($scannedAt, $file->scan->scanned?->format(\DATE_ATOM), 'scanned_at as a date-time in UTC');
        self::assertSame($status === 'pending', $file->scan->isPending());
        self::assertSame($status === 'clean', $file->scan->isClean());
        self::assertSame($status === 'infected', $file->scan->isInfected());
        self::assertSame([], $file->scan->extra);
        self::assertSame([], $file->extra, 'scan is a known field');
        // toArray() and json_encode() give back the API's object.
        $expected = Mock::file('abc', 7, 'a.txt');
        $expected['scan'] = $scan;
        $expected['source'] = ['type' => 'api'];
        self::assertSame($expected, $file->toArray());
        self::assertSame($expected, json_decode((string) json_encode($file), true));
        self::assertSame($scan, json_decode((string) json_encode($file->scan), true));
    }

    public function testNoScanIsNull(): void
    {
        // A server that does not scan sends `scan: null`; an older one sends nothing.
        $file = FileRecord::fromArray(Mock::file('abc'));
        self::assertNull($file->scan);
        self::assertSame(Mock::file('abc'), $file->toArray(), 'scan: null is kept');
        $older = Mock::file('abc');
        unset($older['scan']);
        self::assertNull(FileRecord::fromArray($older)->scan);
        self::assertArrayHasKey('scan', FileRecord::fromArray($older)->toArray());
        self::assertNull(FileRecord::fromArray($older)->toArray()['scan']);
    }

    public function testAnUnknownStatusAndFieldsAreKept(): void
    {
        $scan = FileScan::fromArray(['status' => 'quarantined', 'signature' => null, 'scanned_at' => null, 'engine' => 'clamav 1.4']);
        self::assertSame('quarantined', $scan->status);
        self::assertFalse($scan->isPending() || $scan->isClean() || $scan->isInfected());
        self::assertSame(['engine' => 'clamav 1.4'], $scan->extra);
        self::assertSame(['status' => 'quarantined', 'signature' => null, 'scanned_at' => null, 'engine' => 'clamav 1.4'], $scan->toArray());
        self::assertNull($scan->scanned);
        self::assertSame(['pending', 'clean', 'infected', 'error', 'skipped'], FileScan::STATUSES);
    }

    public function testListGetAndUploadAnswersCarryTheScan(): void
    {
        $clean = ['status' => 'clean', 'signature' => null, 'scanned_at' => '2026-11-27 10:00:01'];
        $pending = ['status' => 'pending', 'signature' => null, 'scanned_at' => null];
        $mock = new Mock([
            Mock::json(200, ['success' => true, 'files' => [['scan' => $clean] + Mock::file('a', 1), ['scan' => $pending] + Mock::file('b', 2)],
                'pagination' => ['page' => 1, 'limit' => 20, 'total' => 2, 'pages' => 1]]),
            Mock::json(200, ['success' => true, 'file' => ['scan' => $clean] + Mock::file('a', 1)]),
            Mock::json(201, ['success' => true] + ['scan' => $pending] + Mock::file('abc', 3)),
        ]);
        $list = $mock->client->files->list();
        self::assertSame(['clean', 'pending'], array_map(static fn (FileRecord $f): ?string => $f->scan?->status, $list->files));
        self::assertTrue($mock->client->files->get(1)->scan?->isClean());
        self::assertTrue($mock->client->files->uploadBytes('abc')->scan?->isPending(), 'an upload answers while the scan is pending');
    }

    public function testFileNotScannableIsALimitExceededException(): void
    {
        $message = 'The file is larger than the virus scanner can scan (FILESHARE_SCAN_MAX_BYTES), and this server serves only scanned files.';
        // Multipart upload.
        $mock = new Mock([Mock::error(403, 'file_not_scannable', $message)]);
        $e = self::thrown(fn () => $mock->client->files->uploadBytes('abc'));
        self::assertInstanceOf(LimitExceededException::class, $e);
        self::assertSame(403, $e->getStatus());
        self::assertSame('file_not_scannable', $e->getErrorCode());
        self::assertSame("403 file_not_scannable: $message (request id req-403)", $e->getMessage());
        self::assertCount(1, $mock->requests, 'not retried');
        // Resumable upload: the creation with Upload-Length above the limit.
        $options = new Response(204, ['Tus-Version' => '1.0.0', 'Tus-Extension' => 'creation,creation-with-upload,termination,expiration,checksum',
            'Tus-Checksum-Algorithm' => 'sha256', 'Tus-Max-Size' => '53687091200']);
        $mock = new Mock([$options, Mock::error(403, 'file_not_scannable', $message)]);
        $e = self::thrown(fn () => $mock->client->files->upload(UploadSource::fromBytes('abc'), ['resumable' => true]));
        self::assertInstanceOf(LimitExceededException::class, $e);
        self::assertSame('file_not_scannable', $e->getErrorCode());
        self::assertSame(['OPTIONS', 'POST'], array_map(static fn (array $r): string => $r['request']->getMethod(), $mock->requests));
        // A download of a file the scanner could not scan (status error).
        $mock = new Mock([Mock::error(403, 'file_not_scannable', $message)]);
        $e = self::thrown(fn () => $mock->client->download('https://files.test/download/tok1', 'php://memory'));
        self::assertInstanceOf(LimitExceededException::class, $e);
        self::assertCount(1, $mock->requests);
    }

    public function testScanPendingIsAScanPendingExceptionWithRetryAfterNotRetried(): void
    {
        $message = 'The file has not been scanned for malware yet; try again shortly.';
        // The POST for a grant answers 409: download() throws at once, without waiting.
        $mock = new Mock([Mock::error(409, 'scan_pending', $message, ['Retry-After' => '10'])]);
        $out = fopen('php://memory', 'w+b');
        $e = self::thrown(fn () => $mock->client->download('https://files.test/download/tok1', $out));
        self::assertInstanceOf(ScanPendingException::class, $e);
        self::assertInstanceOf(BadRequestException::class, $e, 'a 409 as before');
        self::assertSame(409, $e->getStatus());
        self::assertSame('scan_pending', $e->getErrorCode());
        self::assertSame(10, $e->getRetryAfter());
        self::assertSame("409 scan_pending: $message (request id req-409)", $e->getMessage());
        self::assertCount(1, $mock->requests);
        self::assertSame([], $mock->sleeps, 'not retried, not slept');
        // A grant URL read while the file is pending: the same.
        $mock = new Mock([Mock::error(409, 'scan_pending', $message, ['Retry-After' => '10'])]);
        $e = self::thrown(fn () => $mock->client->download(self::GRANT, $out));
        self::assertInstanceOf(ScanPendingException::class, $e);
        self::assertSame(10, $e->getRetryAfter());
        self::assertSame(['GET ' . self::GRANT], array_map(static fn (array $r): string => $r['request']->getMethod() . ' ' . $r['request']->getUri(), $mock->requests));
        self::assertSame([], $mock->sleeps);
        // Asked again once scanned, the download works.
        $bytes = 'scanned and clean';
        $mock = new Mock([Mock::error(409, 'scan_pending', $message, ['Retry-After' => '10']), Mock::grant(self::GRANT),
            new Response(200, ['ETag' => '"' . hash('sha256', $bytes) . '"', 'Content-Length' => (string) \strlen($bytes)], $bytes)]);
        self::assertInstanceOf(ScanPendingException::class, self::thrown(fn () => $mock->client->download('https://files.test/download/tok1', $out)));
        $mock->client->download('https://files.test/download/tok1', $out);
        rewind($out);
        self::assertSame($bytes, stream_get_contents($out));
        // Not a retryable error anywhere (only idempotency_in_progress is, among the 409s).
        self::assertFalse(Http::isRetryable($e));
        // Another 409 stays a plain BadRequestException.
        $mock = new Mock([Mock::error(409, 'default_link_required')]);
        $e = self::thrown(fn () => $mock->client->links->delete(12));
        self::assertSame(BadRequestException::class, $e::class);
        self::assertInstanceOf(FileshareException::class, $e);
    }

    public function testTheInfectedEvents(): void
    {
        // The webhook: file.deleted with reason infected.
        $event = WebhookEvent::fromArray(['type' => 'file.deleted', 'timestamp' => '2026-11-27T10:00:00.000Z',
            'data' => ['file_id' => 7, 'filename' => 'eicar.com', 'reason' => 'infected']]);
        self::assertSame(WebhookEvent::FILE_DELETED, $event->type);
        self::assertSame('infected', $event->data['reason']);
        // The audit event scan.infected: the system's, about the file, with the signature.
        $audit = AuditEvent::fromArray(['event_id' => 9, 'at' => '2026-11-27 10:00:00', 'action' => 'scan.infected',
            'actor' => ['type' => 'system', 'id' => null], 'ip' => null, 'user_agent' => null, 'target' => ['type' => 'file', 'id' => 7],
            'details' => ['filename' => 'eicar.com', 'size' => 68, 'signature' => 'Win.Test.EICAR_HDB-1']]);
        self::assertSame('scan.infected', $audit->action);
        self::assertSame(AuditActor::TYPE_SYSTEM, $audit->actor->type);
        self::assertNull($audit->actor->id);
        self::assertSame(7, $audit->target?->id);
        self::assertSame('Win.Test.EICAR_HDB-1', $audit->details['signature']);
    }
}
