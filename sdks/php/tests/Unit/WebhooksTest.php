<?php

declare(strict_types=1);

namespace Fileshare\Tests\Unit;

use Fileshare\Exception\BadRequestException;
use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\FileshareException;
use Fileshare\Exception\InsufficientScopeException;
use Fileshare\Exception\LimitExceededException;
use Fileshare\Exception\NotFoundException;
use Fileshare\Model\Webhook;
use Fileshare\Model\WebhookDelivery;
use Fileshare\Model\WebhookDeliveryList;
use Fileshare\RawResponse;
use Fileshare\Tests\Support\Mock;
use Fileshare\Webhooks;
use PHPUnit\Framework\TestCase;

/** `$client->webhooks`: the management calls on Guzzle's MockHandler. */
final class WebhooksTest extends TestCase
{
    private const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

    /**
     * @param array<string, mixed> $fields
     *
     * @return array<string, mixed> a webhook object
     */
    private static function webhook(int $id = 5, array $fields = []): array
    {
        return array_replace([
            'webhook_id' => $id,
            'url' => 'https://hooks.example.com/fileshare',
            'events' => ['file.uploaded', 'link.downloaded'],
            'description' => 'CRM sync',
            'enabled' => true,
            'disabled_reason' => null,
            'created_at' => '2026-11-27 10:00:00',
        ], $fields);
    }

    /**
     * @param array<string, mixed> $fields
     *
     * @return array<string, mixed> a delivery object
     */
    private static function delivery(int $id, array $fields = []): array
    {
        return array_replace([
            'delivery_id' => $id,
            'event_type' => 'file.uploaded',
            'message_id' => 'msg_' . $id,
            'attempts' => 1,
            'last_status' => 200,
            'last_error' => null,
            'next_attempt_at' => null,
            'state' => 'succeeded',
            'created_at' => '2026-11-27 10:00:01',
        ], $fields);
    }

    /** @param list<int> $ids */
    private static function page(array $ids, ?int $next, int $limit = 2): \GuzzleHttp\Psr7\Response
    {
        return Mock::json(200, ['success' => true, 'deliveries' => array_map(static fn (int $id): array => self::delivery($id), $ids),
            'pagination' => ['limit' => $limit, 'next_before_id' => $next]]);
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
        $mock = new Mock([Mock::json(201, ['success' => true, 'webhook' => self::webhook(5, ['secret' => self::SECRET])],
            ['Location' => '/api/v1/webhooks/5'])]);
        $webhook = $mock->client->webhooks->create(url: 'https://hooks.example.com/fileshare', events: ['file.uploaded', 'link.downloaded'],
            description: 'CRM sync');
        [$method, $url, $key, $body] = self::request($mock);
        self::assertSame('POST', $method);
        self::assertSame(Mock::BASE . '/webhooks', $url);
        self::assertMatchesRegularExpression('/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/', $key);
        self::assertSame(['url' => 'https://hooks.example.com/fileshare', 'events' => ['file.uploaded', 'link.downloaded'], 'description' => 'CRM sync'], $body);
        self::assertSame('application/json', $mock->requests[0]['request']->getHeaderLine('Content-Type'));
        self::assertSame('Bearer ' . Mock::KEY, $mock->requests[0]['request']->getHeaderLine('Authorization'));

        self::assertInstanceOf(Webhook::class, $webhook);
        self::assertSame(5, $webhook->webhook_id);
        self::assertSame('https://hooks.example.com/fileshare', $webhook->url);
        self::assertSame(['file.uploaded', 'link.downloaded'], $webhook->events);
        self::assertSame('CRM sync', $webhook->description);
        self::assertTrue($webhook->enabled);
        self::assertNull($webhook->disabled_reason);
        self::assertSame(self::SECRET, $webhook->secret);
        self::assertSame('2026-11-27T10:00:00+00:00', $webhook->created->format(\DATE_ATOM));
        self::assertSame([], $webhook->extra);
        self::assertTrue($webhook->receives('file.uploaded'));
        self::assertFalse($webhook->receives('file.deleted'));
        self::assertSame(self::webhook(5, ['secret' => self::SECRET]), $webhook->toArray());
        self::assertSame(self::webhook(5, ['secret' => self::SECRET]), json_decode((string) json_encode($webhook), true));
    }

    public function testCreateWithoutADescriptionAndWithItsOwnKey(): void
    {
        $mock = new Mock([Mock::json(201, ['success' => true, 'webhook' => self::webhook(6, ['events' => ['*'], 'description' => null, 'secret' => self::SECRET])])]);
        $webhook = $mock->client->webhooks->create('https://hooks.example.com/all', Webhook::ALL_EVENTS, requestOptions: ['idempotency_key' => 'hook-1']);
        [, , $key, $body] = self::request($mock);
        self::assertSame('hook-1', $key);
        self::assertSame(['url' => 'https://hooks.example.com/all', 'events' => ['*']], $body, 'no description: none sent');
        self::assertNull($webhook->description);
        self::assertTrue($webhook->receives('anything.new'));

        // '' is no description either; a map of events is sent as a list.
        $mock = new Mock([Mock::json(201, ['success' => true, 'webhook' => self::webhook()])]);
        $mock->client->webhooks->create('https://hooks.example.com/x', [3 => 'file.deleted'], description: '');
        self::assertSame(['url' => 'https://hooks.example.com/x', 'events' => ['file.deleted']], self::request($mock)[3]);
    }

    public function testCreateIsRetriedWithTheSameKey(): void
    {
        $mock = new Mock([Mock::drop(), Mock::error(503, 'unavailable'), Mock::json(201, ['success' => true, 'webhook' => self::webhook(5, ['secret' => self::SECRET])])],
            ['max_retries' => 2]);
        $webhook = $mock->client->webhooks->create('https://hooks.example.com/fileshare', ['file.uploaded']);
        self::assertSame(self::SECRET, $webhook->secret);
        self::assertCount(3, $mock->requests);
        $keys = array_map(static fn (array $r): string => $r['request']->getHeaderLine('Idempotency-Key'), $mock->requests);
        self::assertCount(1, array_unique($keys), 'one key for the call, sent on every attempt');
        self::assertCount(2, $mock->sleeps);
    }

    public function testCreateChecksItsArgumentsBeforeSending(): void
    {
        $mock = new Mock([]);
        self::assertInstanceOf(ConfigurationException::class, self::thrown(fn () => $mock->client->webhooks->create('https://x.test', ['file.uploaded', 3])));
        self::assertInstanceOf(ConfigurationException::class, self::thrown(fn () => $mock->client->webhooks->create('https://x.test', ['*'],
            requestOptions: ['retries' => 1])));
        self::assertInstanceOf(ConfigurationException::class, self::thrown(fn () => $mock->client->webhooks->create('https://x.test', ['*'],
            requestOptions: ['idempotency_key' => "two\nlines"])));
        self::assertSame([], $mock->requests);
    }

    public function testTheServersRefusals(): void
    {
        $cases = [
            [Mock::error(400, 'webhook_url_not_allowed', 'url: the address 127.0.0.1 is not allowed'), BadRequestException::class],
            [Mock::error(400, 'invalid_parameter', 'events: unknown event type file.exploded'), BadRequestException::class],
            [Mock::error(403, 'webhook_limit_exceeded', 'At most 20 webhooks per account'), LimitExceededException::class],
            [Mock::json(403, ['success' => false, 'error' => ['code' => 'insufficient_scope', 'message' => 'needs webhooks:manage',
                'required_scope' => 'webhooks:manage']]), InsufficientScopeException::class],
        ];
        foreach ($cases as [$answer, $class]) {
            $mock = new Mock([$answer, Mock::json(201, ['success' => true, 'webhook' => self::webhook()])]);
            $e = self::thrown(fn () => $mock->client->webhooks->create('http://127.0.0.1:9/hook', ['file.exploded']));
            self::assertInstanceOf($class, $e);
            self::assertCount(1, $mock->requests, 'a 4xx is not retried');
        }
        self::assertSame('webhooks:manage', $e->getRequiredScope());

        $mock = new Mock([Mock::error(404, 'not_found'), Mock::error(404, 'not_found')]);
        self::assertInstanceOf(NotFoundException::class, self::thrown(fn () => $mock->client->webhooks->get(99)));
        self::assertInstanceOf(NotFoundException::class, self::thrown(fn () => $mock->client->webhooks->delete(99)));
    }

    public function testListAndGet(): void
    {
        $mock = new Mock([
            Mock::json(200, ['success' => true, 'webhooks' => [
                self::webhook(6, ['enabled' => false, 'disabled_reason' => 'gone', 'failure_count' => 4]),
                self::webhook(5),
            ]]),
            Mock::json(200, ['success' => true, 'webhook' => self::webhook(5)]),
            Mock::json(200, ['success' => true, 'webhook' => self::webhook(6)]),
        ]);
        $list = $mock->client->webhooks->list();
        self::assertSame(['GET', Mock::BASE . '/webhooks', '', null], self::request($mock));
        self::assertContainsOnlyInstancesOf(Webhook::class, $list);
        self::assertSame([6, 5], array_map(static fn (Webhook $w): int => $w->webhook_id, $list));
        self::assertFalse($list[0]->enabled);
        self::assertSame(Webhook::DISABLED_GONE, $list[0]->disabled_reason);
        self::assertSame(['failure_count' => 4], $list[0]->extra);
        self::assertNull($list[1]->secret, 'no secret outside create and rotate-secret');
        self::assertArrayNotHasKey('secret', $list[1]->toArray());

        $webhook = $mock->client->webhooks->get(5);
        self::assertSame(['GET', Mock::BASE . '/webhooks/5', '', null], self::request($mock, 1));
        self::assertSame('CRM sync', $webhook->description);
        $mock->client->webhooks->get($list[0]);
        self::assertSame(Mock::BASE . '/webhooks/6', self::request($mock, 2)[1], 'a Webhook for its id');

        foreach ([0, -1, '5; DROP', '../5'] as $bad) {
            self::assertInstanceOf(ConfigurationException::class, self::thrown(fn () => $mock->client->webhooks->get($bad)));
        }
        self::assertCount(3, $mock->requests);

        $mock = new Mock([Mock::json(200, ['success' => true])]);
        self::assertInstanceOf(FileshareException::class, self::thrown(fn () => $mock->client->webhooks->list()));
    }

    public function testUpdateSendsOnlyWhatIsGiven(): void
    {
        $mock = new Mock([
            Mock::json(200, ['success' => true, 'webhook' => self::webhook(5, ['enabled' => false, 'disabled_reason' => 'owner'])]),
            Mock::json(200, ['success' => true, 'webhook' => self::webhook(5, ['description' => null, 'events' => ['*']])]),
            Mock::json(200, ['success' => true, 'webhook' => self::webhook(5, ['url' => 'https://new.example.com/h'])]),
        ]);
        $webhook = $mock->client->webhooks->update(5, enabled: false);
        self::assertSame(['PATCH', Mock::BASE . '/webhooks/5', '', ['enabled' => false]], self::request($mock));
        self::assertSame(Webhook::DISABLED_OWNER, $webhook->disabled_reason);

        $webhook = $mock->client->webhooks->update($webhook, events: ['*'], description: '', enabled: true);
        self::assertSame(['events' => ['*'], 'description' => null, 'enabled' => true], self::request($mock, 1)[3], "'' clears the description");
        self::assertSame('{"events":["*"],"description":null,"enabled":true}', $mock->requests[1]['body']);
        self::assertNull($webhook->description);

        $mock->client->webhooks->update('5', url: 'https://new.example.com/h', description: 'new');
        self::assertSame(['url' => 'https://new.example.com/h', 'description' => 'new'], self::request($mock, 2)[3]);

        self::assertInstanceOf(ConfigurationException::class, self::thrown(fn () => $mock->client->webhooks->update(5)));
        self::assertCount(3, $mock->requests);
    }

    public function testWritesWithoutAKeyAreRetriedOnlyWhenRefused(): void
    {
        // A dropped connection: the server may have acted, so no second PATCH, rotation, test or retry.
        foreach ([
            fn (Mock $m) => $m->client->webhooks->update(5, enabled: true),
            fn (Mock $m) => $m->client->webhooks->rotateSecret(5),
            fn (Mock $m) => $m->client->webhooks->test(5),
            fn (Mock $m) => $m->client->webhooks->retryDelivery(5, 9),
        ] as $call) {
            $mock = new Mock([Mock::drop(), Mock::json(200, ['success' => true, 'webhook' => self::webhook()])]);
            self::assertInstanceOf(FileshareException::class, self::thrown(fn () => $call($mock)));
            self::assertCount(1, $mock->requests);
        }
        // A 503 or 429: it did nothing.
        $mock = new Mock([Mock::error(503, 'unavailable'), Mock::error(429, 'rate_limited', 'slow down', ['Retry-After' => '1']),
            Mock::json(200, ['success' => true, 'webhook' => self::webhook(5, ['secret' => 'whsec_bmV3'])])]);
        self::assertSame('whsec_bmV3', $mock->client->webhooks->rotateSecret(5)->secret);
        self::assertCount(3, $mock->requests);
        // Reads and deletes are retried after a drop.
        $mock = new Mock([Mock::drop(), Mock::json(200, ['success' => true, 'message' => 'Webhook deleted'])]);
        $mock->client->webhooks->delete(5);
        self::assertCount(2, $mock->requests);
    }

    public function testDeleteRotateAndTest(): void
    {
        $mock = new Mock([
            Mock::json(200, ['success' => true, 'message' => 'Webhook deleted']),
            Mock::json(200, ['success' => true, 'webhook' => self::webhook(5, ['secret' => 'whsec_bmV3IHNlY3JldA=='])]),
            Mock::json(202, ['success' => true, 'message_id' => 'msg_2Yb3']),
            Mock::json(202, ['success' => true]),
        ]);
        $mock->client->webhooks->delete(5);
        self::assertSame(['DELETE', Mock::BASE . '/webhooks/5', '', null], self::request($mock));

        $webhook = $mock->client->webhooks->rotateSecret(5);
        self::assertSame(['POST', Mock::BASE . '/webhooks/5/rotate-secret', '', null], self::request($mock, 1), 'no body, no key');
        self::assertSame('whsec_bmV3IHNlY3JldA==', $webhook->secret);

        self::assertSame('msg_2Yb3', $mock->client->webhooks->test($webhook));
        self::assertSame(['POST', Mock::BASE . '/webhooks/5/test', '', null], self::request($mock, 2));
        self::assertNull($mock->client->webhooks->test(5), 'a 202 that names no message');
    }

    public function testDeliveries(): void
    {
        $mock = new Mock([
            Mock::json(200, ['success' => true, 'deliveries' => [
                self::delivery(12, ['state' => 'pending', 'attempts' => 3, 'last_status' => 503, 'last_error' => 'HTTP 503',
                    'next_attempt_at' => '2026-11-27 10:35:00', 'event_type' => 'webhook.test', 'response_ms' => 120]),
                self::delivery(11, ['state' => 'failed', 'attempts' => 8, 'last_status' => null, 'last_error' => 'timeout']),
            ], 'pagination' => ['limit' => 2, 'next_before_id' => 11]]),
            self::page([], null),
        ]);
        $page = $mock->client->webhooks->deliveries(5, limit: 2, beforeId: 20);
        self::assertSame(['GET', Mock::BASE . '/webhooks/5/deliveries?limit=2&before_id=20', '', null], self::request($mock));
        self::assertInstanceOf(WebhookDeliveryList::class, $page);
        self::assertSame(2, $page->pagination->limit);
        self::assertSame(11, $page->pagination->next_before_id);
        [$pending, $failed] = $page->deliveries;
        self::assertInstanceOf(WebhookDelivery::class, $pending);
        self::assertSame(12, $pending->delivery_id);
        self::assertSame('webhook.test', $pending->event_type);
        self::assertSame('msg_12', $pending->message_id);
        self::assertSame(3, $pending->attempts);
        self::assertSame(503, $pending->last_status);
        self::assertSame('HTTP 503', $pending->last_error);
        self::assertSame(WebhookDelivery::STATE_PENDING, $pending->state);
        self::assertSame('2026-11-27T10:35:00+00:00', $pending->next_attempt?->format(\DATE_ATOM));
        self::assertSame('2026-11-27T10:00:01+00:00', $pending->created->format(\DATE_ATOM));
        self::assertSame(['response_ms' => 120], $pending->extra);
        self::assertSame(WebhookDelivery::STATE_FAILED, $failed->state);
        self::assertNull($failed->last_status);
        self::assertNull($failed->next_attempt);
        self::assertSame(self::delivery(11, ['state' => 'failed', 'attempts' => 8, 'last_status' => null, 'last_error' => 'timeout']), $failed->toArray());
        self::assertSame('{"deliveries":[],"pagination":{"limit":2,"next_before_id":null}}', json_encode($mock->client->webhooks->deliveries(5)));
        self::assertSame(Mock::BASE . '/webhooks/5/deliveries', self::request($mock, 1)[1], 'nothing left out is sent');

        $mock = new Mock([Mock::error(400, 'invalid_parameter', 'limit must be 1 to 100')]);
        self::assertInstanceOf(BadRequestException::class, self::thrown(fn () => $mock->client->webhooks->deliveries(5, limit: 0)));
        $mock = new Mock([Mock::json(200, ['success' => true, 'deliveries' => 'none'])]);
        self::assertInstanceOf(FileshareException::class, self::thrown(fn () => $mock->client->webhooks->deliveries(5)));
    }

    public function testIterateDeliveries(): void
    {
        $mock = new Mock([self::page([9, 8], 8), self::page([5, 4], 4), self::page([2], null)]);
        $ids = [];
        foreach ($mock->client->webhooks->iterateDeliveries(5, limit: 2) as $delivery) {
            $ids[] = $delivery->delivery_id;
        }
        self::assertSame([9, 8, 5, 4, 2], $ids);
        self::assertSame([
            Mock::BASE . '/webhooks/5/deliveries?limit=2',
            Mock::BASE . '/webhooks/5/deliveries?limit=2&before_id=8',
            Mock::BASE . '/webhooks/5/deliveries?limit=2&before_id=4',
        ], array_map(static fn (array $r): string => (string) $r['request']->getUri(), $mock->requests));

        $mock = new Mock([self::page([], null, 100)]);
        self::assertSame([], iterator_to_array($mock->client->webhooks->iterateDeliveries(5)));
        self::assertSame(Mock::BASE . '/webhooks/5/deliveries?limit=100', (string) $mock->requests[0]['request']->getUri());

        $mock = new Mock([self::page([9, 8], 8), self::page([8, 7], 8)]);
        $e = self::thrown(fn () => iterator_to_array($mock->client->webhooks->iterateDeliveries(5, limit: 2), false));
        self::assertStringContainsString('next_before_id', $e->getMessage());

        $mock = new Mock([]);
        self::assertInstanceOf(ConfigurationException::class, self::thrown(fn () => $mock->client->webhooks->iterateDeliveries(0)->current()));
        self::assertSame([], $mock->requests);
    }

    public function testRetryDelivery(): void
    {
        $mock = new Mock([Mock::json(202, ['success' => true]), Mock::json(202, ['success' => true])]);
        $mock->client->webhooks->retryDelivery(5, 9);
        self::assertSame(['POST', Mock::BASE . '/webhooks/5/deliveries/9/retry', '', null], self::request($mock));
        $mock->client->webhooks->retryDelivery(Webhook::fromArray(self::webhook(6)), WebhookDelivery::fromArray(self::delivery(10)));
        self::assertSame(Mock::BASE . '/webhooks/6/deliveries/10/retry', self::request($mock, 1)[1]);
        self::assertInstanceOf(ConfigurationException::class, self::thrown(fn () => $mock->client->webhooks->retryDelivery(5, 'x')));
        self::assertCount(2, $mock->requests);
    }

    public function testTheSecretIsRedactedInDumps(): void
    {
        $webhook = Webhook::fromArray(['success' => true, 'webhook' => self::webhook(5, ['secret' => self::SECRET])]);
        ob_start();
        var_dump($webhook);
        $dump = (string) ob_get_clean() . print_r($webhook, true);
        self::assertStringNotContainsString(self::SECRET, $dump);
        self::assertStringContainsString('whsec_[redacted]', $dump);
        self::assertStringContainsString('CRM sync', $dump);
        self::assertSame(self::SECRET, $webhook->secret, 'the property itself is the secret');
        $plain = Webhook::fromArray(self::webhook());
        self::assertArrayHasKey('secret', $plain->__debugInfo());
        self::assertNull($plain->__debugInfo()['secret']);
    }

    public function testRawResponses(): void
    {
        $mock = new Mock([
            Mock::json(201, ['success' => true, 'webhook' => self::webhook(5, ['secret' => self::SECRET])], ['Location' => '/api/v1/webhooks/5']),
            Mock::json(200, ['success' => true, 'deliveries' => [self::delivery(3)], 'pagination' => ['limit' => 1, 'next_before_id' => null]],
                ['RateLimit-Remaining' => '97']),
            Mock::json(202, ['success' => true, 'message_id' => 'msg_x']),
        ]);
        $raw = $mock->client->withRawResponse();
        $created = $raw->webhooks->create(url: 'https://hooks.example.com/x', events: ['*']);
        self::assertInstanceOf(RawResponse::class, $created);
        self::assertSame(201, $created->getStatusCode());
        self::assertSame('/api/v1/webhooks/5', $created->getHeaderLine('Location'));
        self::assertSame(self::SECRET, $created->data->secret);
        $page = $raw->webhooks->deliveries(5, limit: 1);
        self::assertSame('97', $page->getHeaderLine('RateLimit-Remaining'));
        self::assertSame(3, $page->data->deliveries[0]->delivery_id);
        $test = $raw->webhooks->test(5);
        self::assertSame(202, $test->getStatusCode());
        self::assertSame('msg_x', $test->data);
        self::assertInstanceOf(ConfigurationException::class, self::thrown(fn () => $raw->webhooks->iterateDeliveries(5)));
    }

    public function testTheClientHasWebhooks(): void
    {
        $mock = new Mock([]);
        self::assertInstanceOf(Webhooks::class, $mock->client->webhooks);
        self::assertInstanceOf(Webhooks::class, $mock->client->withOptions(['timeout' => 5])->webhooks);
    }
}
