<?php

declare(strict_types=1);

namespace Fileshare\Tests\Integration;

use Fileshare\Client;
use Fileshare\Exception\LimitExceededException;
use Fileshare\Exception\NotFoundException;
use Fileshare\Exception\ScanPendingException;
use Fileshare\Model\AuditActor;
use Fileshare\Model\AuditEvent;
use Fileshare\Model\FileRecord;
use Fileshare\Model\FileScan;
use Fileshare\Model\WebhookEvent;
use Fileshare\Tests\Support\IntegrationTestCase;
use Fileshare\Tests\Support\Server;
use Fileshare\Tests\Support\WebhookReceiver;
use Fileshare\Webhooks;

/**
 * Virus scanning (issue 35). The launcher's main server does not scan (`scan` is null); its
 * `scanning` server (FILESHARE_SCAN=required, on a clamd of the launcher's own whose database
 * knows the EICAR test string) scans every upload. Skipped where the launcher has no scanning
 * server (clamd is not installed).
 */
final class ScanningTest extends IntegrationTestCase
{
    /** @return array{base_url: string, server_url: string, keys: array{pro: string}, mode: string, eicar: string, signature: string} */
    private static function scanning(): array
    {
        $info = Server::info();
        if (!\array_key_exists('scanning', $info)) {
            self::markTestSkipped('the launcher does not start a scanning server');
        }
        if ($info['scanning'] === null) {
            self::markTestSkipped('the launcher has no scanning server (clamd is not installed)');
        }

        return $info['scanning'];
    }

    private static function scanningClient(): Client
    {
        $scanning = self::scanning();

        return new Client(['base_url' => $scanning['base_url'], 'api_key' => $scanning['keys']['pro']]);
    }

    /** get($file) until its scan is no longer pending (at most $seconds): the last record. */
    private static function verdict(Client $client, FileRecord $file, float $seconds = 30.0): FileRecord
    {
        $deadline = microtime(true) + $seconds;
        for (;;) {
            $got = $client->files->get($file->file_id);
            self::assertNotNull($got->scan, 'a scanning server sends scan');
            if (!$got->scan->isPending() || microtime(true) > $deadline) {
                return $got;
            }
            usleep(100_000);
        }
    }

    /** @return list<int> the ids of every file the account lists */
    private static function listed(Client $client): array
    {
        return array_map(static fn (FileRecord $f): int => $f->file_id, iterator_to_array($client->files->iterate(limit: 100), false));
    }

    private static function thrown(callable $call): \Throwable
    {
        try {
            $call();
        } catch (\Throwable $e) {
            return $e;
        }
        self::fail('no exception');
    }

    public function testTheServerThatDoesNotScanSendsNull(): void
    {
        $client = Server::client();
        $file = $client->files->uploadBytes('not scanned here', ['filename' => 'plain.txt']);
        self::assertNull($file->scan, 'the upload answer');
        self::assertArrayHasKey('scan', $file->toArray());
        self::assertNull($file->toArray()['scan']);
        self::assertNull($client->files->get($file->file_id)->scan, 'GET /files/{id}');
        $listed = array_values(array_filter($client->files->list(limit: 100)->files, static fn (FileRecord $f): bool => $f->file_id === $file->file_id));
        self::assertCount(1, $listed);
        self::assertNull($listed[0]->scan, 'GET /files');
        self::assertSame([], $listed[0]->extra);
        // Served at once.
        $out = fopen('php://memory', 'w+b');
        $client->download($file, $out);
        rewind($out);
        self::assertSame('not scanned here', stream_get_contents($out));
        $client->files->delete($file->file_id);
    }

    public function testACleanUploadEndsClean(): void
    {
        $client = self::scanningClient();
        $bytes = 'a harmless text, ' . bin2hex(random_bytes(8));
        $file = $client->files->uploadBytes($bytes, ['filename' => 'clean.txt']);
        self::assertInstanceOf(FileScan::class, $file->scan, 'the upload answer has the scan');
        self::assertContains($file->scan->status, [FileScan::STATUS_PENDING, FileScan::STATUS_CLEAN]);

        $got = self::verdict($client, $file);
        self::assertSame(FileScan::STATUS_CLEAN, $got->scan?->status);
        self::assertTrue($got->scan->isClean());
        self::assertNull($got->scan->signature);
        self::assertNotNull($got->scan->scanned_at);
        self::assertLessThan(300, abs(time() - (int) $got->scan->scanned?->getTimestamp()));
        self::assertSame([], $got->extra);
        self::assertContains($file->file_id, self::listed($client));
        $listed = array_values(array_filter($client->files->list(limit: 100)->files, static fn (FileRecord $f): bool => $f->file_id === $file->file_id));
        self::assertSame(FileScan::STATUS_CLEAN, $listed[0]->scan?->status, 'GET /files has the scan too');

        // Scanned clean: its link serves it.
        $path = "$this->dir/clean.txt";
        $client->download($got, $path);
        self::assertSame($bytes, file_get_contents($path));
        $client->files->delete($file->file_id);
    }

    public function testAnInfectedUploadIsRemovedButItsRecordAnswersItsOwner(): void
    {
        $scanning = self::scanning();
        $client = self::scanningClient();
        $receiver = new WebhookReceiver();
        $webhook = $client->webhooks->create(url: $receiver->url, events: ['file.deleted']);
        try {
            $totalBefore = $client->files->list()->pagination->total;
            $file = $client->files->uploadBytes($scanning['eicar'], ['filename' => 'eicar.com']);
            self::assertSame(68, $file->size);
            self::assertInstanceOf(FileScan::class, $file->scan);
            self::assertContains($file->scan->status, [FileScan::STATUS_PENDING, FileScan::STATUS_INFECTED]);

            $got = self::verdict($client, $file);
            self::assertSame(FileScan::STATUS_INFECTED, $got->scan?->status);
            self::assertTrue($got->scan->isInfected());
            self::assertSame($scanning['signature'], $got->scan->signature);
            self::assertNotNull($got->scan->scanned);
            self::assertSame($file->file_id, $got->file_id);
            self::assertSame('eicar.com', $got->filename);

            // get() keeps answering for its owner; the list, its total and the link do not have it.
            self::assertSame(FileScan::STATUS_INFECTED, $client->files->get($file->file_id)->scan?->status);
            self::assertNotContains($file->file_id, self::listed($client));
            self::assertSame($totalBefore, $client->files->list()->pagination->total, 'pagination.total excludes it');
            $e = self::thrown(fn () => $client->download($file->public_link, "$this->dir/eicar.com"));
            self::assertInstanceOf(NotFoundException::class, $e, 'the public link answers 404');
            self::assertSame(404, $e->getStatus());
            self::assertFileDoesNotExist("$this->dir/eicar.com");

            // The webhook file.deleted with reason infected.
            $request = $receiver->waitFor(static function (array $r) use ($file): bool {
                $body = json_decode($r['body'], true);

                return ($body['type'] ?? null) === 'file.deleted' && ($body['data']['file_id'] ?? null) === $file->file_id;
            });
            $event = Webhooks::verify($request['body'], $request['headers'], (string) $webhook->secret);
            self::assertSame(WebhookEvent::FILE_DELETED, $event->type);
            self::assertSame('infected', $event->data['reason']);
            self::assertSame('eicar.com', $event->data['filename']);

            // The audit event scan.infected: the system's, about the file, with the signature.
            $found = null;
            foreach ($client->auditEvents->iterate(limit: 50, action: 'scan.infected') as $audit) {
                if ($audit->target?->id === $file->file_id) {
                    $found = $audit;
                    break;
                }
            }
            self::assertInstanceOf(AuditEvent::class, $found, 'scan.infected in the audit log');
            self::assertSame('scan.infected', $found->action);
            self::assertSame(AuditActor::TYPE_SYSTEM, $found->actor->type);
            self::assertNull($found->actor->id);
            self::assertSame('file', $found->target?->type);
            self::assertSame(['filename' => 'eicar.com', 'size' => 68, 'signature' => $scanning['signature']], $found->details);

            // Deleting the record removes it: then 404.
            $client->files->delete($file->file_id);
            self::assertInstanceOf(NotFoundException::class, self::thrown(fn () => $client->files->get($file->file_id)));
        } finally {
            $client->webhooks->delete($webhook->webhook_id);
            $receiver->stop();
        }
    }

    public function testAFileLargerThanTheScannerTakesIsNotScannable(): void
    {
        $client = self::scanningClient();
        $totalBefore = $client->files->list()->pagination->total;
        // FILESHARE_SCAN_MAX_BYTES is left at its default, 26214400 (clamd's StreamMaxLength 25M).
        $path = $this->makeFile('too-big.bin', 26_214_401);
        foreach ([false, true] as $resumable) {
            $e = self::thrown(fn () => $client->files->upload($path, ['resumable' => $resumable]));
            $how = $resumable ? 'resumable' : 'multipart';
            self::assertInstanceOf(LimitExceededException::class, $e, $how);
            self::assertSame(403, $e->getStatus(), $how);
            self::assertSame('file_not_scannable', $e->getErrorCode(), $how);
        }
        self::assertSame($totalBefore, $client->files->list()->pagination->total, 'nothing stored');
    }

    public function testALinkOfAFileNotScannedYetIsScanPending(): void
    {
        $client = self::scanningClient();
        // 24 MB take clamd about a second: the download asked right after the upload finds it pending.
        $path = $this->makeFile('pending.bin', 24_000_000);
        $file = $client->files->upload($path, ['resumable' => false]);
        $out = "$this->dir/pending.out";
        try {
            $client->download($file->public_link, $out);
            // The verdict came first (a very fast scanner): then the file is clean and was served.
            self::assertTrue($client->files->get($file->file_id)->scan?->isClean(), 'served only once clean');
        } catch (ScanPendingException $e) {
            self::assertSame(409, $e->getStatus());
            self::assertSame('scan_pending', $e->getErrorCode());
            self::assertSame(10, $e->getRetryAfter());
            self::assertNotNull($e->getRequestId());
            self::assertTrue($client->files->get($file->file_id)->scan?->isPending() || $client->files->get($file->file_id)->scan?->isClean());
            // Once clean, the same link serves it.
            self::assertSame(FileScan::STATUS_CLEAN, self::verdict($client, $file, 60.0)->scan?->status);
            $client->download($file->public_link, $out);
        }
        self::assertSame(hash_file('sha256', $path), hash_file('sha256', $out));
        $client->files->delete($file->file_id);
    }
}
