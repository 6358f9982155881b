<?php

declare(strict_types=1);

namespace Fileshare\Tests\Integration;

use Fileshare\FileSort;
use Fileshare\FileState;
use Fileshare\Model\AuditActor;
use Fileshare\Model\AuditEvent;
use Fileshare\Model\AuditPagination;
use Fileshare\Model\AuditTarget;
use Fileshare\Model\CurrentKey;
use Fileshare\Model\Limits;
use Fileshare\Model\Stats;
use Fileshare\Model\FileRecord;
use Fileshare\Model\FileScan;
use Fileshare\Model\Link;
use Fileshare\Model\Pagination;
use Fileshare\Model\FileSource;
use Fileshare\Model\UploadRequest;
use Fileshare\Model\UploadRequestFilePagination;
use Fileshare\Model\Webhook;
use Fileshare\Model\WebhookDelivery;
use Fileshare\Model\WebhookDeliveryPagination;
use Fileshare\SortOrder;
use Fileshare\Tests\Support\IntegrationTestCase;
use Fileshare\Tests\Support\Server;

/**
 * The SDK's records and 403 codes against the server's OpenAPI document (GET /api/v1/openapi.json).
 * The webhook checks run once the document has the `/webhooks` paths, the upload request checks
 * once it has `/upload-requests` (skipped before).
 */
final class OpenApiDriftTest extends IntegrationTestCase
{
    /** @return list<string> the record's API fields (its constructor's parameters but `extra`) */
    private static function fields(string $class): array
    {
        $names = array_map(static fn (\ReflectionParameter $p): string => $p->getName(), (new \ReflectionMethod($class, '__construct'))->getParameters());
        $names = array_values(array_diff($names, ['extra']));
        sort($names);

        return $names;
    }

    public function testRecordsHaveTheDocumentsFields(): void
    {
        $document = json_decode((string) file_get_contents(Server::info()['base_url'] . '/openapi.json'), true, flags: \JSON_THROW_ON_ERROR);
        $schemas = $document['components']['schemas'];
        // The link object is a component where the document names one, else inline in GET /links/{link_id}.
        $schemas['Link'] ??= $document['paths']['/api/v1/links/{link_id}']['get']['responses']['200']['content']['application/json']['schema']['properties']['link'] ?? [];
        foreach (['File' => FileRecord::class, 'Link' => Link::class, 'Pagination' => Pagination::class, 'Stats' => Stats::class,
            'Limits' => Limits::class] as $name => $class) {
            $properties = array_keys($schemas[$name]['properties'] ?? []);
            $required = $schemas[$name]['required'] ?? [];
            sort($properties);
            sort($required);
            self::assertSame($properties, self::fields($class), "$name vs $class");
            self::assertSame($required, self::fields($class), "$name: required fields");
        }
        // Every 403 code the document knows is one the SDK sorts (LimitExceeded or PermissionDenied).
        $codes = $schemas['Error']['properties']['error']['properties']['code']['enum'];
        foreach (['plan_not_supported', 'file_too_large', 'daily_upload_limit_exceeded', 'rate_limited', 'not_found', 'unauthorized',
            'link_limit_exceeded', 'default_link_required', 'invalid_password', 'storage_quota_exceeded', 'idempotency_in_progress',
            'idempotency_key_reused', 'insufficient_scope', 'ip_not_allowed'] as $code) {
            self::assertContains($code, $codes);
        }
        // getRequiredScope() reads error.required_scope.
        self::assertArrayHasKey('required_scope', $schemas['Error']['properties']['error']['properties']);
    }

    /**
     * The object schema of a 200 answer's property, resolving `$ref`s and a nullable `anyOf`.
     *
     * @param array<string, mixed> $document
     * @param list<string>         $path     property names (`items` for an array's items)
     *
     * @return array<string, mixed>
     */
    private static function answer(array $document, string $route, array $path): array
    {
        $schema = $document['paths'][$route]['get']['responses']['200']['content']['application/json']['schema'] ?? null;
        self::assertIsArray($schema, "GET $route has a 200 JSON answer");
        foreach ($path as $name) {
            $schema = self::resolve($document, $schema);
            $schema = $name === 'items' ? ($schema['items'] ?? null) : ($schema['properties'][$name] ?? null);
            self::assertIsArray($schema, "GET $route: " . implode('.', $path));
        }

        return self::resolve($document, $schema);
    }

    /**
     * @param array<string, mixed> $document
     * @param array<string, mixed> $schema
     *
     * @return array<string, mixed>
     */
    private static function resolve(array $document, array $schema): array
    {
        if (isset($schema['$ref'])) {
            $schema = $document['components']['schemas'][substr($schema['$ref'], \strlen('#/components/schemas/'))];
        }
        foreach ($schema['anyOf'] ?? $schema['oneOf'] ?? [] as $option) {
            $option = self::resolve($document, $option);
            if (isset($option['properties'])) {
                return $option; // the object of "object or null"
            }
        }

        return $schema;
    }

    /**
     * @param array<string, mixed> $schema
     *
     * @return array{list<string>, list<string>} the schema's property names and required names, sorted
     */
    private static function names(array $schema): array
    {
        $properties = array_keys($schema['properties'] ?? []);
        $required = $schema['required'] ?? [];
        sort($properties);
        sort($required);

        return [$properties, $required];
    }

    public function testTheKeyAndAuditRecordsHaveTheDocumentsFields(): void
    {
        $document = json_decode((string) file_get_contents(Server::info()['base_url'] . '/openapi.json'), true, flags: \JSON_THROW_ON_ERROR);

        // GET /key: CurrentKey is the `key` object plus the answer's `plan`.
        [$properties, $required] = self::names(self::answer($document, '/api/v1/key', ['key']));
        $fields = array_values(array_diff(self::fields(CurrentKey::class), ['plan']));
        self::assertSame($properties, $fields, 'key vs CurrentKey');
        self::assertSame($required, $fields, 'key: required fields');
        self::assertArrayHasKey('plan', self::answer($document, '/api/v1/key', [])['properties']);

        // GET /audit-events.
        foreach ([
            [['events', 'items'], AuditEvent::class, true],
            [['events', 'items', 'actor'], AuditActor::class, false],
            [['events', 'items', 'target'], AuditTarget::class, true],
            [['pagination'], AuditPagination::class, true],
        ] as [$path, $class, $allRequired]) {
            [$properties, $required] = self::names(self::answer($document, '/api/v1/audit-events', $path));
            $where = implode('.', $path) . " vs $class";
            self::assertSame($properties, self::fields($class), $where);
            if ($allRequired) {
                self::assertSame($required, self::fields($class), "$where: required fields");
            }
        }
        // The actor's name may be absent.
        self::assertSame(['id', 'type'], self::names(self::answer($document, '/api/v1/audit-events', ['events', 'items', 'actor']))[1]);
    }

    /**
     * The path of the document matching $route, whatever its parameters are called
     * (`/api/v1/webhooks/{}/test` matches `/api/v1/webhooks/{webhook_id}/test`), or null.
     *
     * @param array<string, mixed> $document
     */
    private static function route(array $document, string $route): ?string
    {
        foreach (array_keys($document['paths'] ?? []) as $path) {
            if (preg_replace('/\{[^}]*\}/', '{}', (string) $path) === $route) {
                return (string) $path;
            }
        }

        return null;
    }

    /**
     * The object schema of a JSON answer's property (as answer() for any method and status).
     *
     * @param array<string, mixed> $document
     * @param list<string>         $path
     *
     * @return array<string, mixed>
     */
    private static function answerOf(array $document, string $method, string $route, string $status, array $path): array
    {
        $found = self::route($document, $route);
        self::assertNotNull($found, "the document has $route");
        $schema = $document['paths'][$found][$method]['responses'][$status]['content']['application/json']['schema'] ?? null;
        self::assertIsArray($schema, strtoupper($method) . " $route has a $status JSON answer");
        foreach ($path as $name) {
            $schema = self::resolve($document, $schema);
            $schema = $name === 'items' ? ($schema['items'] ?? null) : ($schema['properties'][$name] ?? null);
            self::assertIsArray($schema, strtoupper($method) . " $route $status: " . implode('.', $path));
        }

        return self::resolve($document, $schema);
    }

    public function testTheWebhookRecordsHaveTheDocumentsFields(): void
    {
        $document = json_decode((string) file_get_contents(Server::info()['base_url'] . '/openapi.json'), true, flags: \JSON_THROW_ON_ERROR);
        if (self::route($document, '/api/v1/webhooks') === null) {
            self::markTestSkipped('the server has no /webhooks paths yet');
        }

        // Every call of $client->webhooks has its route.
        foreach ([
            ['post', '/api/v1/webhooks'], ['get', '/api/v1/webhooks'], ['get', '/api/v1/webhooks/{}'], ['patch', '/api/v1/webhooks/{}'],
            ['delete', '/api/v1/webhooks/{}'], ['post', '/api/v1/webhooks/{}/rotate-secret'], ['post', '/api/v1/webhooks/{}/test'],
            ['get', '/api/v1/webhooks/{}/deliveries'], ['post', '/api/v1/webhooks/{}/deliveries/{}/retry'],
        ] as [$method, $route]) {
            $found = self::route($document, $route);
            self::assertNotNull($found, "the document has $route");
            self::assertArrayHasKey($method, $document['paths'][$found], strtoupper($method) . " $route");
        }

        // Webhook: the object of list, get, update, create and rotate-secret. `secret` is optional
        // (only create and rotate-secret send it); every other field is required.
        $fields = self::fields(Webhook::class);
        foreach ([
            ['get', '/api/v1/webhooks', '200', ['webhooks', 'items']],
            ['get', '/api/v1/webhooks/{}', '200', ['webhook']],
            ['patch', '/api/v1/webhooks/{}', '200', ['webhook']],
            ['post', '/api/v1/webhooks', '201', ['webhook']],
            ['post', '/api/v1/webhooks/{}/rotate-secret', '200', ['webhook']],
        ] as [$method, $route, $status, $path]) {
            [$properties, $required] = self::names(self::answerOf($document, $method, $route, $status, $path));
            $where = strtoupper($method) . " $route vs Webhook";
            self::assertSame($fields, $properties, $where);
            self::assertSame(array_values(array_diff($fields, ['secret'])), $required, "$where: required fields");
        }
        // The test call names its message.
        self::assertArrayHasKey('message_id', self::answerOf($document, 'post', '/api/v1/webhooks/{}/test', '202', [])['properties'] ?? []);

        // WebhookDelivery and its pagination.
        [$properties, $required] = self::names(self::answerOf($document, 'get', '/api/v1/webhooks/{}/deliveries', '200', ['deliveries', 'items']));
        self::assertSame(self::fields(WebhookDelivery::class), $properties, 'deliveries.items vs WebhookDelivery');
        self::assertSame(self::fields(WebhookDelivery::class), $required, 'deliveries.items: required fields');
        [$properties] = self::names(self::answerOf($document, 'get', '/api/v1/webhooks/{}/deliveries', '200', ['pagination']));
        self::assertSame(self::fields(WebhookDeliveryPagination::class), $properties, 'pagination vs WebhookDeliveryPagination');

        // The webhook error codes are known (webhook_limit_exceeded is a LimitExceededException).
        $codes = $document['components']['schemas']['Error']['properties']['error']['properties']['code']['enum'];
        foreach (['webhook_limit_exceeded', 'webhook_url_not_allowed'] as $code) {
            self::assertContains($code, $codes);
        }
    }

    public function testTheUploadRequestRecordsHaveTheDocumentsFields(): void
    {
        $document = json_decode((string) file_get_contents(Server::info()['base_url'] . '/openapi.json'), true, flags: \JSON_THROW_ON_ERROR);
        if (self::route($document, '/api/v1/upload-requests') === null) {
            self::markTestSkipped('the server has no /upload-requests paths yet');
        }

        // Every call of $client->uploadRequests has its route.
        foreach ([
            ['post', '/api/v1/upload-requests'], ['get', '/api/v1/upload-requests'], ['get', '/api/v1/upload-requests/{}'],
            ['patch', '/api/v1/upload-requests/{}'], ['delete', '/api/v1/upload-requests/{}'], ['post', '/api/v1/upload-requests/{}/close'],
            ['get', '/api/v1/upload-requests/{}/files'],
        ] as [$method, $route]) {
            $found = self::route($document, $route);
            self::assertNotNull($found, "the document has $route");
            self::assertArrayHasKey($method, $document['paths'][$found], strtoupper($method) . " $route");
        }

        // UploadRequest: the object of every call but files; every field required.
        $fields = self::fields(UploadRequest::class);
        foreach ([
            ['post', '/api/v1/upload-requests', '201', ['upload_request']],
            ['get', '/api/v1/upload-requests', '200', ['upload_requests', 'items']],
            ['get', '/api/v1/upload-requests/{}', '200', ['upload_request']],
            ['patch', '/api/v1/upload-requests/{}', '200', ['upload_request']],
            ['delete', '/api/v1/upload-requests/{}', '200', ['upload_request']],
            ['post', '/api/v1/upload-requests/{}/close', '200', ['upload_request']],
        ] as [$method, $route, $status, $path]) {
            [$properties, $required] = self::names(self::answerOf($document, $method, $route, $status, $path));
            $where = strtoupper($method) . " $route vs UploadRequest";
            self::assertSame($fields, $properties, $where);
            self::assertSame($fields, $required, "$where: required fields");
        }

        // files: file records (with their source) and the before_id pagination.
        [$properties] = self::names(self::answerOf($document, 'get', '/api/v1/upload-requests/{}/files', '200', ['files', 'items']));
        self::assertSame(self::fields(FileRecord::class), $properties, 'files.items vs FileRecord');
        [$properties] = self::names(self::answerOf($document, 'get', '/api/v1/upload-requests/{}/files', '200', ['pagination']));
        self::assertSame(self::fields(UploadRequestFilePagination::class), $properties, 'pagination vs UploadRequestFilePagination');
        // File.source: one object per type (anyOf/oneOf), or one object; FileSource holds the fields of all.
        $source = $document['components']['schemas']['File']['properties']['source'] ?? [];
        $properties = [];
        foreach ($source['anyOf'] ?? $source['oneOf'] ?? [$source] as $option) {
            $properties = [...$properties, ...array_keys(self::resolve($document, $option)['properties'] ?? [])];
        }
        $properties = array_values(array_unique($properties));
        sort($properties);
        self::assertSame(self::fields(FileSource::class), $properties, 'File.source vs FileSource');

        // upload_request_full is a code the document knows (a LimitExceededException).
        $codes = $document['components']['schemas']['Error']['properties']['error']['properties']['code']['enum'];
        self::assertContains('upload_request_full', $codes);
    }

    public function testListFilesTakesTheSortsOrdersAndStatesOfTheEnums(): void
    {
        $document = json_decode((string) file_get_contents(Server::info()['base_url'] . '/openapi.json'), true, flags: \JSON_THROW_ON_ERROR);
        $parameters = [];
        foreach ($document['paths'][self::route($document, '/api/v1/files')]['get']['parameters'] ?? [] as $parameter) {
            if (($parameter['in'] ?? null) === 'query') {
                $parameters[$parameter['name']] = $parameter['schema'] ?? [];
                if (\in_array($parameter['name'], ['type', 'state'], true)) {
                    // Lists, sent as the parameter repeated (OpenAPI's default for a query array: form, exploded).
                    self::assertSame(['array', 'form', true], [$parameter['schema']['type'] ?? null, $parameter['style'] ?? 'form', $parameter['explode'] ?? true],
                        $parameter['name']);
                }
            }
        }
        // Every parameter list() sends is there (the server may take more: the SDK does not send those).
        $missing = array_diff(['before_id', 'limit', 'order', 'page', 'q', 'sort', 'state', 'type'], array_keys($parameters));
        self::assertSame([], array_values($missing), 'GET /files takes the parameters list() sends');
        // The values, whether the document gives an enum or a union of constants.
        $values = static fn (array $schema): array => $schema['enum']
            ?? array_merge(...array_map(static fn (array $o): array => isset($o['const']) ? [$o['const']] : ($o['enum'] ?? []), $schema['anyOf'] ?? $schema['oneOf'] ?? []));
        self::assertSame(array_map(static fn (FileSort $s): string => $s->value, FileSort::cases()), $values($parameters['sort']));
        self::assertSame(array_map(static fn (SortOrder $o): string => $o->value, SortOrder::cases()), $values($parameters['order']));
        self::assertSame(array_map(static fn (FileState $s): string => $s->value, FileState::cases()), $values($parameters['state']['items']));
    }

    public function testTheFileScanHasTheDocumentsFields(): void
    {
        $document = json_decode((string) file_get_contents(Server::info()['base_url'] . '/openapi.json'), true, flags: \JSON_THROW_ON_ERROR);
        $file = $document['components']['schemas']['File'];
        if (!isset($file['properties']['scan'])) {
            self::markTestSkipped('the server has no File.scan yet');
        }
        // File.scan: a FileScan or null (anyOf/oneOf, or a nullable object), always present.
        self::assertContains('scan', $file['required'] ?? []);
        $scan = $file['properties']['scan'];
        $options = $scan['anyOf'] ?? $scan['oneOf'] ?? [$scan];
        $nullable = ($scan['nullable'] ?? false) === true;
        $object = null;
        foreach ($options as $option) {
            $option = self::resolve($document, $option);
            if (isset($option['properties'])) {
                $object = $option;
            }
            $nullable = $nullable || ($option['type'] ?? null) === 'null' || (\is_array($option['type'] ?? null) && \in_array('null', $option['type'], true));
        }
        self::assertIsArray($object, 'File.scan is an object');
        self::assertTrue($nullable, 'File.scan may be null');
        [$properties, $required] = self::names($object);
        self::assertSame(self::fields(FileScan::class), $properties, 'File.scan vs FileScan');
        self::assertSame(self::fields(FileScan::class), $required, 'File.scan: required fields');
        // Every status the document names is a STATUS_* constant.
        $status = $object['properties']['status'];
        $statuses = $status['enum'] ?? array_merge(...array_map(static fn (array $o): array => isset($o['const']) ? [$o['const']] : ($o['enum'] ?? []),
            $status['anyOf'] ?? $status['oneOf'] ?? []));
        sort($statuses);
        $known = FileScan::STATUSES;
        sort($known);
        self::assertSame($known, $statuses, 'File.scan.status vs FileScan::STATUSES');

        // The two codes are known: file_not_scannable (a LimitExceededException), scan_pending (a ScanPendingException).
        $codes = $document['components']['schemas']['Error']['properties']['error']['properties']['code']['enum'];
        self::assertContains('file_not_scannable', $codes);
        self::assertContains('scan_pending', $codes);
    }
}
