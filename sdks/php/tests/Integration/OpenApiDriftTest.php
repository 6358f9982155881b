<?php

declare(strict_types=1);

namespace Fileshare\Tests\Integration;

use Fileshare\Model\Limits;
use Fileshare\Model\Stats;
use Fileshare\Model\FileRecord;
use Fileshare\Model\Link;
use Fileshare\Model\Pagination;
use Fileshare\Tests\Support\IntegrationTestCase;
use Fileshare\Tests\Support\Server;

/** The SDK's records against the server's OpenAPI document (GET /api/v1/openapi.json). */
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
            'idempotency_key_reused'] as $code) {
            self::assertContains($code, $codes);
        }
    }
}
