<?php

declare(strict_types=1);

namespace Fileshare\Tests\Integration;

use Fileshare\Client;
use Fileshare\Exception\BadRequestException;
use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\InsufficientScopeException;
use Fileshare\Exception\LimitExceededException;
use Fileshare\Exception\NotFoundException;
use Fileshare\Internal\ErrorFactory;
use Fileshare\Model\AuditActor;
use Fileshare\Model\FileRecord;
use Fileshare\Model\FileSource;
use Fileshare\Model\UploadRequest;
use Fileshare\Model\WebhookEvent;
use Fileshare\Tests\Support\Guest;
use Fileshare\Tests\Support\IntegrationTestCase;
use Fileshare\Tests\Support\Server;
use Fileshare\Tests\Support\WebhookReceiver;
use Fileshare\Webhooks;
use Psr\Http\Message\ResponseInterface;

/**
 * Issue 34 against the real server: `$client->uploadRequests` on a pro account of its own (made
 * with the CLI, so that its list, daily uploads and audit log are this test's alone), and guests
 * uploading through tus with `Authorization: UploadRequest <token>` (raw HTTP, as the guest page
 * does: the SDK has no guest side).
 */
final class UploadRequestsTest extends IntegrationTestCase
{
    private static ?string $key = null;
    private Client $client;

    protected function setUp(): void
    {
        parent::setUp();
        self::$key ??= Server::newAccount('pro');
        $this->client = new Client(['base_url' => Server::info()['base_url'], 'api_key' => self::$key]);
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

    /** A plain HTTP client (no key, no retries, every status answered). */
    private static function http(): \GuzzleHttp\Client
    {
        return new \GuzzleHttp\Client(['http_errors' => false, 'timeout' => 30]);
    }

    /** The file id of a guest upload that must have succeeded. */
    private static function uploaded(ResponseInterface $response): int
    {
        self::assertSame(201, $response->getStatusCode(), 'guest upload: ' . $response->getBody());
        $id = $response->getHeaderLine('Fileshare-File-Id');
        self::assertMatchesRegularExpression('/^[1-9]\d*$/', $id, 'Fileshare-File-Id');

        return (int) $id;
    }

    /** The error code of a JSON error answer. */
    private static function code(ResponseInterface $response): ?string
    {
        $body = json_decode((string) $response->getBody(), true);

        return \is_array($body) ? ($body['error']['code'] ?? null) : null;
    }

    public function testCreateGivesBackEveryField(): void
    {
        $maxFileSize = min(1048576, $this->client->stats()->limits->max_file_size);
        $expires = (new \DateTimeImmutable('+3 days', new \DateTimeZone('UTC')))->setTime(10, 0, 0);
        $request = $this->client->uploadRequests->create([
            'label' => 'Invoices for March — ünïcode',
            'message' => "Please send the PDFs.\n\tThank you!",
            'expires_at' => $expires,
            'max_files' => 5,
            'max_file_size' => $maxFileSize,
            'max_total_size' => 10485760,
            'password' => 'correct horse battery',
            'file_expires_in' => 86400,
        ]);
        self::assertGreaterThan(0, $request->request_id);
        $server = preg_quote(Server::info()['server_url'], '#');
        self::assertMatchesRegularExpression("#^$server/r/[A-Za-z0-9_-]{43}$#", $request->url);
        self::assertSame('Invoices for March — ünïcode', $request->label);
        self::assertSame("Please send the PDFs.\n\tThank you!", $request->message);
        self::assertSame($expires->format('Y-m-d H:i:s'), $request->expires_at);
        self::assertEquals($expires, $request->expiry);
        self::assertSame(5, $request->max_files);
        self::assertSame($maxFileSize, $request->max_file_size);
        self::assertSame(10485760, $request->max_total_size);
        self::assertSame(86400, $request->file_expires_in);
        self::assertTrue($request->password_protected);
        self::assertSame(0, $request->files_received);
        self::assertSame(0, $request->bytes_received);
        self::assertSame(UploadRequest::STATUS_ACTIVE, $request->status);
        self::assertLessThan(300, abs(time() - $request->created->getTimestamp()));
        self::assertSame([], $request->extra, 'no field this SDK does not know');
        self::assertStringNotContainsString('correct horse', (string) json_encode($request));

        // get() and list() give the same record; list() newest first.
        self::assertEquals($request->toArray(), $this->client->uploadRequests->get($request->request_id)->toArray());
        $minimal = $this->client->uploadRequests->create(['label' => 'CVs', 'expires_in' => 3600]);
        self::assertNull($minimal->message);
        self::assertNull($minimal->max_files);
        self::assertNull($minimal->max_file_size);
        self::assertNull($minimal->max_total_size);
        self::assertNull($minimal->file_expires_in);
        self::assertFalse($minimal->password_protected);
        self::assertLessThan(120, abs(time() + 3600 - $minimal->expiry->getTimestamp()), 'expires_in from now');
        self::assertNotSame(Guest::token($request), Guest::token($minimal));
        $listed = $this->client->uploadRequests->list();
        $ids = array_map(static fn (UploadRequest $r): int => $r->request_id, $listed);
        self::assertSame([$minimal->request_id, $request->request_id], \array_slice($ids, 0, 2), 'newest first');
        self::assertEquals($request->toArray(), $listed[1]->toArray());

        // The same idempotency key makes one request.
        $first = $this->client->uploadRequests->create(['label' => 'once', 'expires_in' => 600], ['idempotency_key' => 'php-ur-' . bin2hex(random_bytes(6))]);
        $key = 'php-ur-' . bin2hex(random_bytes(6));
        $a = $this->client->uploadRequests->create(['label' => 'once', 'expires_in' => 600, 'idempotency_key' => $key]);
        $b = $this->client->uploadRequests->create(['label' => 'once', 'expires_in' => 600, 'idempotency_key' => $key]);
        self::assertSame($a->request_id, $b->request_id);
        self::assertNotSame($first->request_id, $a->request_id);
    }

    public function testTheFieldRules(): void
    {
        $plan = $this->client->stats()->limits->max_file_size;
        $past = new \DateTimeImmutable('-1 hour');
        $cases = [
            'label' => ['label' => '', 'expires_in' => 60],
            'label ' => ['label' => str_repeat('a', 201), 'expires_in' => 60],
            'label  ' => ['label' => "two\nlines", 'expires_in' => 60],
            'message' => ['label' => 'x', 'message' => str_repeat('m', 2001), 'expires_in' => 60],
            'message ' => ['label' => 'x', 'message' => "bell\x07", 'expires_in' => 60],
            'expires_in' => ['label' => 'x', 'expires_in' => 0],
            'expires_in ' => ['label' => 'x', 'expires_in' => 7776001],
            'expires_at' => ['label' => 'x', 'expires_at' => $past],
            'expires_at ' => ['label' => 'x', 'expires_at' => new \DateTimeImmutable('+91 days')],
            'max_files' => ['label' => 'x', 'expires_in' => 60, 'max_files' => 0],
            'max_files ' => ['label' => 'x', 'expires_in' => 60, 'max_files' => 10001],
            'max_file_size' => ['label' => 'x', 'expires_in' => 60, 'max_file_size' => $plan + 1],
            'max_file_size ' => ['label' => 'x', 'expires_in' => 60, 'max_file_size' => 0],
            'max_total_size' => ['label' => 'x', 'expires_in' => 60, 'max_total_size' => 0],
            'password' => ['label' => 'x', 'expires_in' => 60, 'password' => 'short'],
            'file_expires_in' => ['label' => 'x', 'expires_in' => 60, 'file_expires_in' => 0],
            'file_expires_in ' => ['label' => 'x', 'expires_in' => 60, 'file_expires_in' => 315360001],
        ];
        foreach ($cases as $field => $options) {
            $e = self::thrown(fn () => $this->client->uploadRequests->create($options));
            self::assertInstanceOf(BadRequestException::class, $e, "$field: " . $e->getMessage());
            self::assertSame(400, $e->getStatus());
            self::assertSame('invalid_parameter', $e->getErrorCode(), $field);
            self::assertStringContainsString(trim($field), $e->getMessage(), 'the message names the field');
        }
        // Neither or both expiries.
        foreach ([['label' => 'x'], ['label' => 'x', 'expires_in' => 60, 'expires_at' => new \DateTimeImmutable('+1 day')], ['expires_in' => 60]] as $options) {
            $e = self::thrown(fn () => $this->client->uploadRequests->create($options));
            self::assertInstanceOf(BadRequestException::class, $e, json_encode($options) . ': ' . $e->getMessage());
            self::assertSame('invalid_parameter', $e->getErrorCode());
        }
        // An unknown field: the SDK stops it before sending; the server refuses it too.
        self::assertInstanceOf(ConfigurationException::class, self::thrown(fn () => $this->client->uploadRequests->create(['label' => 'x',
            'expires_in' => 60, 'max_downloads' => 3])));
        $response = self::http()->post(Server::info()['base_url'] . '/upload-requests', ['headers' => ['Authorization' => 'Bearer ' . self::$key],
            'json' => ['label' => 'x', 'expires_in' => 60, 'max_downloads' => 3]]);
        self::assertSame(400, $response->getStatusCode());
        self::assertSame('invalid_parameter', self::code($response));

        // update(): label and expiry cannot be removed; the same rules.
        $request = $this->client->uploadRequests->create(['label' => 'rules', 'expires_in' => 600]);
        foreach ([['label' => null], ['expires_in' => null], ['expires_at' => null], ['max_files' => 0], ['password' => 'short']] as $changes) {
            $e = self::thrown(fn () => $this->client->uploadRequests->update($request, $changes));
            self::assertInstanceOf(BadRequestException::class, $e, json_encode($changes) . ': ' . $e->getMessage());
            self::assertSame('invalid_parameter', $e->getErrorCode());
        }
        self::assertSame($request->toArray(), $this->client->uploadRequests->get($request)->toArray(), 'nothing changed');
        self::assertSame([], iterator_to_array($this->client->uploadRequests->iterateFiles($request), false));
    }

    public function testUpdateCloseAndDelete(): void
    {
        $request = $this->client->uploadRequests->create(['label' => 'to change', 'expires_in' => 600, 'message' => 'hi', 'max_files' => 3,
            'password' => 'correct horse battery', 'file_expires_in' => 3600]);

        $updated = $this->client->uploadRequests->update($request, ['label' => 'changed', 'message' => null, 'max_files' => null,
            'password' => null, 'max_total_size' => 1000, 'expires_in' => 7200]);
        self::assertSame($request->request_id, $updated->request_id);
        self::assertSame($request->url, $updated->url, 'the URL stays');
        self::assertSame('changed', $updated->label);
        self::assertNull($updated->message);
        self::assertNull($updated->max_files);
        self::assertFalse($updated->password_protected);
        self::assertSame(1000, $updated->max_total_size);
        self::assertSame(3600, $updated->file_expires_in, 'left out: left as it was');
        self::assertLessThan(120, abs(time() + 7200 - $updated->expiry->getTimestamp()));
        self::assertSame($updated->toArray(), $this->client->uploadRequests->get($request)->toArray());

        // close(): closed, twice; a closed request stays closed when its expiry is extended.
        $closed = $this->client->uploadRequests->close($request);
        self::assertSame(UploadRequest::STATUS_CLOSED, $closed->status);
        self::assertFalse($closed->isActive());
        self::assertSame(UploadRequest::STATUS_CLOSED, $this->client->uploadRequests->close($request)->status, 'idempotent');
        self::assertSame(UploadRequest::STATUS_CLOSED, $this->client->uploadRequests->update($request, ['expires_in' => 86400])->status);
        self::assertSame(401, Guest::upload($request, 'late')->getStatusCode(), 'a closed request takes nothing');

        // An expired request re-opens when its expiry is extended.
        $short = $this->client->uploadRequests->create(['label' => 'short', 'expires_in' => 1]);
        sleep(2);
        self::assertSame(UploadRequest::STATUS_EXPIRED, $this->client->uploadRequests->get($short)->status);
        self::assertSame(401, Guest::upload($short, 'late')->getStatusCode(), 'an expired request takes nothing');
        self::assertSame(UploadRequest::STATUS_ACTIVE, $this->client->uploadRequests->update($short, ['expires_in' => 600])->status);

        // delete(): the record as it was, closed; then gone.
        $other = $this->client->uploadRequests->create(['label' => 'to delete', 'expires_in' => 600]);
        $deleted = $this->client->uploadRequests->delete($other);
        self::assertSame($other->request_id, $deleted->request_id);
        self::assertSame('to delete', $deleted->label);
        self::assertSame(UploadRequest::STATUS_CLOSED, $deleted->status);
        self::assertInstanceOf(NotFoundException::class, self::thrown(fn () => $this->client->uploadRequests->get($other)));
        self::assertNotContains($other->request_id, array_map(static fn (UploadRequest $r): int => $r->request_id, $this->client->uploadRequests->list()));
        self::assertSame(401, Guest::upload($other, 'late')->getStatusCode(), 'a deleted request takes nothing');

        self::assertInstanceOf(NotFoundException::class, self::thrown(fn () => $this->client->uploadRequests->get(999999999)));
        self::assertInstanceOf(NotFoundException::class, self::thrown(fn () => $this->client->uploadRequests->close(999999999)));
    }

    public function testScopesAndOwners(): void
    {
        $request = $this->client->uploadRequests->create(['label' => 'mine', 'expires_in' => 600]);

        // The launcher's read_only key (pro account) lacks requests:manage.
        $readOnly = Server::client('read_only');
        foreach ([
            fn () => $readOnly->uploadRequests->create(['label' => 'x', 'expires_in' => 60]),
            fn () => $readOnly->uploadRequests->list(),
            fn () => $readOnly->uploadRequests->get(1),
            fn () => $readOnly->uploadRequests->files(1),
        ] as $call) {
            $e = self::thrown($call);
            self::assertInstanceOf(InsufficientScopeException::class, $e, $e->getMessage());
            self::assertSame('insufficient_scope', $e->getErrorCode());
            self::assertSame('requests:manage', $e->getRequiredScope());
        }

        // Another account's request is unknown.
        $pro = Server::client();
        foreach ([
            fn () => $pro->uploadRequests->get($request),
            fn () => $pro->uploadRequests->update($request, ['label' => 'theirs']),
            fn () => $pro->uploadRequests->close($request),
            fn () => $pro->uploadRequests->delete($request),
            fn () => $pro->uploadRequests->files($request),
        ] as $call) {
            self::assertInstanceOf(NotFoundException::class, self::thrown($call));
        }
        self::assertSame('mine', $this->client->uploadRequests->get($request)->label);
        self::assertTrue($this->client->uploadRequests->get($request)->isActive());
    }

    public function testAGuestUploadLandsInTheAccount(): void
    {
        $request = $this->client->uploadRequests->create(['label' => 'guest files', 'expires_in' => 3600, 'max_files' => 2,
            'file_expires_in' => 86400]);

        $fileId = self::uploaded(Guest::upload($request, 'hello'));
        $files = $this->client->uploadRequests->files($request);
        self::assertCount(1, $files->files);
        self::assertNull($files->pagination->next_before_id);
        $file = $files->files[0];
        self::assertSame($fileId, $file->file_id);
        self::assertSame('hello.txt', $file->filename);
        self::assertSame(5, $file->size);
        self::assertSame(hash('sha256', 'hello'), $file->sha256);
        self::assertInstanceOf(FileSource::class, $file->source);
        self::assertSame(FileSource::TYPE_UPLOAD_REQUEST, $file->source->type);
        self::assertSame($request->request_id, $file->source->request_id);
        self::assertNotNull($file->expiry, 'file_expires_in gives the file an expiry');
        self::assertLessThan(300, abs($file->uploaded_at->getTimestamp() + 86400 - $file->expiry->getTimestamp()));
        self::assertSame([], $file->extra, 'no field this SDK does not know');

        // The holder's own view of the file says the same; the file is theirs to download.
        $got = $this->client->files->get($fileId);
        self::assertEquals($file->source, $got->source);
        $this->client->download($got, "$this->dir/hello.txt");
        self::assertSame('hello', file_get_contents("$this->dir/hello.txt"));

        $counted = $this->client->uploadRequests->get($request);
        self::assertSame(1, $counted->files_received);
        self::assertSame(5, $counted->bytes_received);
        self::assertSame(UploadRequest::STATUS_ACTIVE, $counted->status);

        // The second file fills it (max_files 2): full, and the token takes nothing more.
        $secondId = self::uploaded(Guest::upload($request, 'world!', 'world.txt'));
        $full = $this->client->uploadRequests->get($request);
        self::assertSame(2, $full->files_received);
        self::assertSame(11, $full->bytes_received);
        self::assertSame(UploadRequest::STATUS_FULL, $full->status);
        self::assertFalse($full->isActive());
        $refused = Guest::upload($request, 'three');
        self::assertSame(401, $refused->getStatusCode(), 'a full request is dead: ' . $refused->getBody());
        self::assertSame('unauthorized', self::code($refused));

        // Newest first, page by page.
        $ids = array_map(static fn (FileRecord $f): int => $f->file_id, iterator_to_array($this->client->uploadRequests->iterateFiles($request, limit: 1), false));
        self::assertSame([$secondId, $fileId], $ids);
        $page = $this->client->uploadRequests->files($request, limit: 1);
        self::assertSame([$secondId], array_map(static fn (FileRecord $f): int => $f->file_id, $page->files));
        self::assertSame(1, $page->pagination->limit);
        self::assertSame($secondId, $page->pagination->next_before_id);
        $next = $this->client->uploadRequests->files($request, limit: 1, beforeId: $page->pagination->next_before_id);
        self::assertSame([$fileId], array_map(static fn (FileRecord $f): int => $f->file_id, $next->files));

        // An upload with the key is the API's, in the upload's answer as in get().
        $own = $this->client->files->uploadBytes('mine', ['filename' => 'mine.txt']);
        self::assertSame(FileSource::TYPE_API, $own->source?->type);
        $ownSource = $this->client->files->get($own->file_id)->source;
        self::assertSame(FileSource::TYPE_API, $ownSource?->type);
        self::assertNull($ownSource->request_id);
        self::assertNotContains($own->file_id, array_map(static fn (FileRecord $f): int => $f->file_id, $this->client->uploadRequests->files($request)->files));

        // The audit log names the guest (actor type guest, id = the request's).
        $uploaded = null;
        foreach ($this->client->auditEvents->iterate(limit: 50, action: 'file.uploaded') as $event) {
            if ($event->target?->id === $fileId) {
                $uploaded = $event;
                break;
            }
        }
        self::assertNotNull($uploaded, 'file.uploaded of the guest file');
        self::assertSame(AuditActor::TYPE_GUEST, $uploaded->actor->type);
        self::assertSame($request->request_id, $uploaded->actor->id);
        $actions = array_map(static fn ($e): string => $e->action, iterator_to_array($this->client->auditEvents->iterate(limit: 100, action: 'upload_request.*'), false));
        self::assertContains('upload_request.created', $actions);

        // Closing keeps the files received.
        $this->client->uploadRequests->delete($request);
        self::assertSame('hello.txt', $this->client->files->get($fileId)->filename);
    }

    public function testAPasswordAndTheTotalSize(): void
    {
        $request = $this->client->uploadRequests->create(['label' => 'protected', 'expires_in' => 3600, 'password' => 'correct horse battery',
            'max_total_size' => 8]);
        $grantUrl = Server::info()['server_url'] . '/r/' . Guest::token($request) . '/grant';

        // A wrong password is refused; the right one gives a grant the upload carries.
        $wrong = self::http()->post($grantUrl, ['json' => ['password' => 'wrong horse battery']]);
        self::assertSame(401, $wrong->getStatusCode());
        self::assertSame('invalid_password', self::code($wrong));
        foreach ([null, 'not-a-grant'] as $grant) {
            $refused = Guest::upload($request, 'hello', grant: $grant);
            self::assertSame(401, $refused->getStatusCode(), 'no grant: ' . $refused->getBody());
            self::assertSame('invalid_password', self::code($refused));
        }
        $answer = self::http()->post($grantUrl, ['json' => ['password' => 'correct horse battery']]);
        self::assertSame(200, $answer->getStatusCode(), (string) $answer->getBody());
        $granted = json_decode((string) $answer->getBody(), true);
        self::assertTrue($granted['success']);
        self::assertIsString($granted['grant']);
        self::assertIsString($granted['expires_at']);
        self::uploaded(Guest::upload($request, 'hello', grant: $granted['grant']));

        // 5 of 8 bytes taken: 5 more do not fit, a 403 upload_request_full the SDK maps to LimitExceededException.
        $full = Guest::upload($request, 'world', grant: $granted['grant']);
        self::assertSame(403, $full->getStatusCode(), (string) $full->getBody());
        self::assertSame('upload_request_full', self::code($full));
        $e = ErrorFactory::fromResponse($full, (string) $full->getBody());
        self::assertInstanceOf(LimitExceededException::class, $e);
        self::assertSame('upload_request_full', $e->getErrorCode());
        $after = $this->client->uploadRequests->get($request);
        self::assertSame(1, $after->files_received);
        self::assertSame(5, $after->bytes_received);
        self::assertSame(UploadRequest::STATUS_ACTIVE, $after->status, '5 < 8 bytes: not full yet');

        // 3 bytes fit exactly: full.
        self::uploaded(Guest::upload($request, 'abc', grant: $granted['grant']));
        self::assertSame(UploadRequest::STATUS_FULL, $this->client->uploadRequests->get($request)->status);

        // An unknown token is refused as a dead one is.
        $unknown = Guest::upload(str_repeat('A', 43), 'x');
        self::assertSame(401, $unknown->getStatusCode());
        self::assertSame('unauthorized', self::code($unknown));
    }

    public function testTheWebhookEvents(): void
    {
        $receiver = new WebhookReceiver();
        $webhook = $this->client->webhooks->create(url: $receiver->url, events: [WebhookEvent::UPLOAD_REQUEST_FILE_RECEIVED,
            WebhookEvent::UPLOAD_REQUEST_FULL, WebhookEvent::FILE_UPLOADED]);
        try {
            $request = $this->client->uploadRequests->create(['label' => 'hooked', 'expires_in' => 600, 'max_files' => 1]);
            $fileId = self::uploaded(Guest::upload($request, 'webhooked', 'hooked.txt'));
            $events = [];
            foreach ([WebhookEvent::UPLOAD_REQUEST_FILE_RECEIVED, WebhookEvent::UPLOAD_REQUEST_FULL, WebhookEvent::FILE_UPLOADED] as $type) {
                $message = $receiver->waitFor(static function (array $r) use ($type, $request): bool {
                    $body = json_decode($r['body'], true);

                    return ($body['type'] ?? null) === $type
                        && (($body['data']['request_id'] ?? null) === $request->request_id
                            || ($body['data']['source']['request_id'] ?? null) === $request->request_id);
                });
                $events[$type] = Webhooks::verify($message['body'], $message['headers'], (string) $webhook->secret);
            }

            $received = $events[WebhookEvent::UPLOAD_REQUEST_FILE_RECEIVED]->data;
            self::assertSame($request->request_id, $received['request_id']);
            self::assertSame('hooked', $received['label']);
            self::assertSame(1, $received['files_received']);
            self::assertSame(9, $received['bytes_received']);
            $file = FileRecord::fromArray($received['file']);
            self::assertSame($fileId, $file->file_id);
            self::assertSame('hooked.txt', $file->filename);
            self::assertSame($request->request_id, $file->source?->request_id);

            $full = $events[WebhookEvent::UPLOAD_REQUEST_FULL]->data;
            self::assertSame(['bytes_received' => 9, 'files_received' => 1, 'label' => 'hooked', 'request_id' => $request->request_id],
                (static function (array $d): array {
                    ksort($d);

                    return $d;
                })($full));

            $uploaded = FileRecord::fromArray($events[WebhookEvent::FILE_UPLOADED]->data);
            self::assertSame($fileId, $uploaded->file_id);
            self::assertSame(FileSource::TYPE_UPLOAD_REQUEST, $uploaded->source?->type);
        } finally {
            $this->client->webhooks->delete($webhook);
            $receiver->stop();
        }
    }
}
