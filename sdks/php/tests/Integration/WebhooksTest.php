<?php

declare(strict_types=1);

namespace Fileshare\Tests\Integration;

use Fileshare\Client;
use Fileshare\Exception\BadRequestException;
use Fileshare\Exception\InsufficientScopeException;
use Fileshare\Exception\NotFoundException;
use Fileshare\Exception\WebhookVerificationException;
use Fileshare\Model\FileRecord;
use Fileshare\Model\Webhook;
use Fileshare\Model\WebhookDelivery;
use Fileshare\Model\WebhookEvent;
use Fileshare\Tests\Support\IntegrationTestCase;
use Fileshare\Tests\Support\Server;
use Fileshare\Tests\Support\WebhookReceiver;
use Fileshare\Webhooks;

/**
 * Issue 33 against the real server: `$client->webhooks` with the launcher's pro key (which holds
 * webhooks:manage) and a receiver on 127.0.0.1 (`php -S`), whose messages Webhooks::verify()
 * accepts.
 */
final class WebhooksTest extends IntegrationTestCase
{
    private WebhookReceiver $receiver;
    private Client $client;
    /** @var list<int> endpoints to delete at the end */
    private array $made = [];

    protected function setUp(): void
    {
        parent::setUp();
        $this->receiver = new WebhookReceiver();
        $this->client = Server::client();
    }

    protected function tearDown(): void
    {
        foreach ($this->made as $id) {
            try {
                $this->client->webhooks->delete($id);
            } catch (NotFoundException) {
            }
        }
        $this->receiver->stop();
        parent::tearDown();
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

    /** @param list<string> $events */
    private function create(array $events, ?string $description = null): Webhook
    {
        $webhook = $this->client->webhooks->create(url: $this->receiver->url, events: $events, description: $description);
        $this->made[] = $webhook->webhook_id;

        return $webhook;
    }

    /**
     * The delivery of $messageId once $done accepts it, asking up to $seconds.
     *
     * @param callable(WebhookDelivery): bool $done
     */
    private function delivery(Webhook $webhook, string $messageId, callable $done, float $seconds = 30.0): WebhookDelivery
    {
        $deadline = microtime(true) + $seconds;
        $last = null;
        do {
            foreach ($this->client->webhooks->iterateDeliveries($webhook, limit: 50) as $delivery) {
                if ($delivery->message_id === $messageId) {
                    $last = $delivery;
                    if ($done($delivery)) {
                        return $delivery;
                    }
                }
            }
            usleep(200_000);
        } while (microtime(true) < $deadline);
        self::fail("delivery of $messageId: " . ($last === null ? 'none listed' : json_encode($last)));
    }

    public function testCreateListGetUpdateTestDeliveriesRotateDelete(): void
    {
        // create: the secret, once.
        $webhook = $this->create(['webhook.test', 'file.deleted'], 'php sdk');
        self::assertGreaterThan(0, $webhook->webhook_id);
        self::assertSame($this->receiver->url, $webhook->url);
        self::assertEqualsCanonicalizing(['webhook.test', 'file.deleted'], $webhook->events, 'the server may sort them');
        self::assertSame('php sdk', $webhook->description);
        self::assertTrue($webhook->enabled);
        self::assertNull($webhook->disabled_reason);
        self::assertMatchesRegularExpression('/^whsec_[A-Za-z0-9+\/]+={0,2}$/', (string) $webhook->secret);
        $bytes = \strlen((string) base64_decode(substr((string) $webhook->secret, 6), true));
        self::assertGreaterThanOrEqual(24, $bytes);
        self::assertLessThanOrEqual(64, $bytes);
        self::assertLessThan(300, abs(time() - $webhook->created->getTimestamp()));
        $secret = (string) $webhook->secret;

        // list and get: no secret.
        $listed = array_values(array_filter($this->client->webhooks->list(), static fn (Webhook $w): bool => $w->webhook_id === $webhook->webhook_id));
        self::assertCount(1, $listed);
        self::assertNull($listed[0]->secret);
        $got = $this->client->webhooks->get($webhook->webhook_id);
        self::assertNull($got->secret);
        self::assertSame(array_diff_key($webhook->toArray(), ['secret' => 1]), $got->toArray());
        self::assertSame($got->toArray(), $listed[0]->toArray());

        // update: only what is given.
        $updated = $this->client->webhooks->update($webhook, description: 'renamed');
        self::assertSame('renamed', $updated->description);
        self::assertSame($webhook->events, $updated->events);
        $updated = $this->client->webhooks->update($webhook, events: ['*'], description: '');
        self::assertSame(['*'], $updated->events);
        self::assertNull($updated->description, "'' removes the description");
        $disabled = $this->client->webhooks->update($webhook, enabled: false);
        self::assertFalse($disabled->enabled);
        self::assertSame(Webhook::DISABLED_OWNER, $disabled->disabled_reason);
        $enabled = $this->client->webhooks->update($webhook, enabled: true);
        self::assertTrue($enabled->enabled);
        self::assertNull($enabled->disabled_reason);
        self::assertSame($enabled->toArray(), $this->client->webhooks->get($webhook)->toArray());

        // test: the receiver gets a webhook.test that verify() accepts.
        $messageId = $this->client->webhooks->test($webhook);
        self::assertIsString($messageId);
        self::assertStringStartsWith('msg_', $messageId);
        $request = $this->receiver->waitFor(static fn (array $r): bool => WebhookReceiver::header($r, 'webhook-id') === $messageId);
        self::assertSame('POST', $request['method']);
        self::assertSame('/hooks/fileshare', $request['path']);
        self::assertStringStartsWith('application/json', WebhookReceiver::header($request, 'content-type'));
        // The spec says `Fileshare-Webhooks/<version>`; the server sends `Fileshare-Webhooks` for now.
        self::assertMatchesRegularExpression('#^Fileshare-Webhooks(/\S+)?$#', WebhookReceiver::header($request, 'user-agent'));
        $event = Webhooks::verify($request['body'], $request['headers'], $secret);
        self::assertSame(WebhookEvent::WEBHOOK_TEST, $event->type);
        self::assertSame($messageId, $event->message_id);
        self::assertSame($webhook->webhook_id, $event->data['webhook_id'] ?? null);
        self::assertNotNull($event->time);
        self::assertLessThan(300, abs(time() - $event->time->getTimestamp()));
        self::assertCount(1, explode(' ', WebhookReceiver::header($request, 'webhook-signature')), 'one signature before a rotation');
        // The same message with another secret, or changed, is refused.
        $other = 'whsec_' . base64_encode(random_bytes(32));
        $e = self::thrown(fn () => Webhooks::verify($request['body'], $request['headers'], $other));
        self::assertInstanceOf(WebhookVerificationException::class, $e);
        self::assertSame(WebhookVerificationException::REASON_NO_MATCHING_SIGNATURE, $e->getReason());
        $e = self::thrown(fn () => Webhooks::verify($request['body'] . ' ', $request['headers'], $secret));
        self::assertSame(WebhookVerificationException::REASON_NO_MATCHING_SIGNATURE, $e->getReason());

        // deliveries: the test message, delivered (204).
        $delivery = $this->delivery($webhook, $messageId, static fn (WebhookDelivery $d): bool => $d->state === WebhookDelivery::STATE_SUCCEEDED);
        self::assertSame(WebhookEvent::WEBHOOK_TEST, $delivery->event_type);
        self::assertGreaterThanOrEqual(1, $delivery->attempts);
        self::assertSame(204, $delivery->last_status);
        self::assertNull($delivery->next_attempt_at);
        $page = $this->client->webhooks->deliveries($webhook, limit: 1);
        self::assertCount(1, $page->deliveries);
        self::assertSame(1, $page->pagination->limit);

        // rotate-secret: a new secret; the old one signs too, so a message carries two signatures.
        $rotated = $this->client->webhooks->rotateSecret($webhook);
        self::assertSame($webhook->webhook_id, $rotated->webhook_id);
        self::assertStringStartsWith('whsec_', (string) $rotated->secret);
        self::assertNotSame($secret, $rotated->secret);
        self::assertNull($this->client->webhooks->get($webhook)->secret);
        $second = (string) $this->client->webhooks->test($webhook);
        $request = $this->receiver->waitFor(static fn (array $r): bool => WebhookReceiver::header($r, 'webhook-id') === $second);
        $signatures = preg_split('/\s+/', trim(WebhookReceiver::header($request, 'webhook-signature'))) ?: [];
        self::assertCount(2, $signatures, 'the new and the previous secret both sign');
        foreach ($signatures as $signature) {
            self::assertStringStartsWith('v1,', $signature);
        }
        self::assertSame($second, Webhooks::verify($request['body'], $request['headers'], (string) $rotated->secret)->message_id);
        self::assertSame($second, Webhooks::verify($request['body'], $request['headers'], $secret)->message_id, 'the old secret still verifies');

        // delete: gone.
        $this->client->webhooks->delete($webhook);
        self::assertInstanceOf(NotFoundException::class, self::thrown(fn () => $this->client->webhooks->get($webhook)));
        self::assertInstanceOf(NotFoundException::class, self::thrown(fn () => $this->client->webhooks->test($webhook)));
        self::assertNotContains($webhook->webhook_id, array_map(static fn (Webhook $w): int => $w->webhook_id, $this->client->webhooks->list()));
    }

    public function testAnUploadSendsFileUploadedWithTheFileRecord(): void
    {
        $webhook = $this->create(['file.uploaded']);
        $file = $this->client->files->uploadBytes('a webhook about me', ['filename' => 'webhooked.txt']);
        try {
            $request = $this->receiver->waitFor(static function (array $r) use ($file): bool {
                $body = json_decode($r['body'], true);

                return ($body['type'] ?? null) === 'file.uploaded' && ($body['data']['file_id'] ?? null) === $file->file_id;
            });
            $event = Webhooks::verify($request['body'], $request['headers'], (string) $webhook->secret);
            self::assertSame(WebhookEvent::FILE_UPLOADED, $event->type);
            $record = FileRecord::fromArray($event->data);
            self::assertSame($file->file_id, $record->file_id);
            self::assertSame($file->sha256, $record->sha256);
            self::assertSame('webhooked.txt', $record->filename);
            self::assertSame($file->size, $record->size);
        } finally {
            $this->client->files->delete($file);
        }
    }

    public function testAFailedDeliveryIsRetried(): void
    {
        $webhook = $this->create(['webhook.test']);
        $this->receiver->answerWith(500);
        $messageId = (string) $this->client->webhooks->test($webhook);
        $this->receiver->waitFor(static fn (array $r): bool => WebhookReceiver::header($r, 'webhook-id') === $messageId && $r['status'] === 500);
        $failed = $this->delivery($webhook, $messageId, static fn (WebhookDelivery $d): bool => $d->last_status === 500);
        self::assertSame(WebhookDelivery::STATE_PENDING, $failed->state);
        self::assertNotNull($failed->next_attempt, 'another attempt is planned');

        $this->receiver->answerWith(204);
        $this->client->webhooks->retryDelivery($webhook, $failed);
        $request = $this->receiver->waitFor(static fn (array $r): bool => WebhookReceiver::header($r, 'webhook-id') === $messageId && $r['status'] === 204);
        self::assertSame($messageId, Webhooks::verify($request['body'], $request['headers'], (string) $webhook->secret)->message_id,
            'the same message id on every attempt');
        $done = $this->delivery($webhook, $messageId, static fn (WebhookDelivery $d): bool => $d->state === WebhookDelivery::STATE_SUCCEEDED);
        self::assertGreaterThanOrEqual(2, $done->attempts);
        self::assertSame(204, $done->last_status);
    }

    public function testCreateWithTheSameIdempotencyKeyMakesOneEndpoint(): void
    {
        $key = 'php-webhook-' . bin2hex(random_bytes(8));
        $raw = $this->client->withRawResponse();
        $first = $raw->webhooks->create(url: $this->receiver->url, events: ['*'], requestOptions: ['idempotency_key' => $key]);
        $this->made[] = $first->data->webhook_id;
        self::assertSame(201, $first->getStatusCode());
        self::assertStringEndsWith('/webhooks/' . $first->data->webhook_id, $first->getHeaderLine('Location'));
        $again = $raw->webhooks->create(url: $this->receiver->url, events: ['*'], requestOptions: ['idempotency_key' => $key]);
        self::assertSame('true', $again->getHeaderLine('Idempotent-Replayed'));
        self::assertSame($first->data->webhook_id, $again->data->webhook_id);
        self::assertCount(1, array_filter($this->client->webhooks->list(), static fn (Webhook $w): bool => $w->webhook_id === $first->data->webhook_id));
        $e = self::thrown(fn () => $this->client->webhooks->create(url: $this->receiver->url, events: ['file.uploaded'],
            requestOptions: ['idempotency_key' => $key]));
        self::assertInstanceOf(BadRequestException::class, $e);
        self::assertSame('idempotency_key_reused', $e->getErrorCode());
    }

    public function testRefusals(): void
    {
        // Bad fields.
        $e = self::thrown(fn () => $this->client->webhooks->create(url: $this->receiver->url, events: ['file.exploded']));
        self::assertInstanceOf(BadRequestException::class, $e);
        self::assertSame(400, $e->getStatus());
        self::assertSame('invalid_parameter', $e->getErrorCode());
        $e = self::thrown(fn () => $this->client->webhooks->create(url: 'ftp://127.0.0.1/hook', events: ['*']));
        self::assertInstanceOf(BadRequestException::class, $e);
        self::assertSame(400, $e->getStatus());
        self::assertContains($e->getErrorCode(), ['invalid_parameter', 'webhook_url_not_allowed']);

        // A key without webhooks:manage.
        $e = self::thrown(fn () => Server::client('read_only')->webhooks->list());
        self::assertInstanceOf(InsufficientScopeException::class, $e);
        self::assertSame('webhooks:manage', $e->getRequiredScope());

        // Another account's endpoint is unknown.
        $webhook = $this->create(['*']);
        $stranger = new Client(['base_url' => Server::info()['base_url'], 'api_key' => Server::newAccount()]);
        self::assertInstanceOf(NotFoundException::class, self::thrown(fn () => $stranger->webhooks->get($webhook)));
        self::assertInstanceOf(NotFoundException::class, self::thrown(fn () => $stranger->webhooks->delete($webhook)));
        self::assertNotContains($webhook->webhook_id, array_map(static fn (Webhook $w): int => $w->webhook_id, $stranger->webhooks->list()));
        self::assertSame($webhook->webhook_id, $this->client->webhooks->get($webhook)->webhook_id, 'still there');
        self::assertInstanceOf(NotFoundException::class, self::thrown(fn () => $this->client->webhooks->get(999999999)));
    }
}
