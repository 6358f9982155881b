<?php

declare(strict_types=1);

namespace Fileshare\Tests\Unit;

use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\FileshareException;
use Fileshare\Model\FileRecord;
use Fileshare\Model\Pagination;
use Fileshare\Tests\Support\Mock;
use GuzzleHttp\Psr7\Response;
use PHPUnit\Framework\TestCase;

/** Paging by before_id, and the storage quota in stats. */
final class PagingAndStatsTest extends TestCase
{
    /**
     * A page of files with these ids.
     *
     * @param list<int> $ids
     */
    private static function page(array $ids, ?int $next, ?int $page = null, int $limit = 2, int $total = 5): Response
    {
        return Mock::json(200, ['success' => true, 'files' => array_map(static fn (int $id): array => Mock::file("f$id", $id), $ids),
            'pagination' => ['page' => $page, 'limit' => $limit, 'total' => $total, 'pages' => (int) ceil($total / $limit), 'next_before_id' => $next]]);
    }

    /** @return list<string> the query string of each request */
    private static function queries(Mock $mock): array
    {
        return array_map(static fn (array $r): string => $r['request']->getUri()->getQuery(), $mock->requests);
    }

    public function testIterateFollowsNextBeforeId(): void
    {
        $mock = new Mock([self::page([9, 7], 7, 1), self::page([5, 4], 4), self::page([2], null)]);
        $files = [];
        foreach ($mock->client->files->iterate(limit: 2) as $n => $file) {
            $files[$n] = $file->file_id;
        }
        self::assertSame([9, 7, 5, 4, 2], $files, 'keys run on across pages');
        self::assertSame(['limit=2', 'limit=2&before_id=7', 'limit=2&before_id=4'], self::queries($mock));
        self::assertSame(Mock::BASE . '/files', (string) $mock->requests[0]['request']->getUri()->withQuery(''));
    }

    public function testIterateStopsOnAFullLastPageAndOnAnEmptyAccount(): void
    {
        $mock = new Mock([self::page([9, 7], null, 1)]);
        self::assertCount(2, iterator_to_array($mock->client->files->iterate(limit: 2), false));
        self::assertCount(1, $mock->requests);

        $mock = new Mock([self::page([], null, 1, 100, 0)]);
        self::assertSame([], iterator_to_array($mock->client->files->iterate()));
        self::assertSame(['limit=100'], self::queries($mock));
    }

    public function testIterateRefusesACursorThatDoesNotGoDown(): void
    {
        $mock = new Mock([self::page([9, 7], 7, 1), self::page([7, 6], 7)]);
        $seen = [];
        try {
            foreach ($mock->client->files->iterate(limit: 2) as $file) {
                $seen[] = $file->file_id;
            }
            self::fail('no exception');
        } catch (FileshareException $e) {
            self::assertStringContainsString('next_before_id', $e->getMessage());
        }
        self::assertCount(2, $mock->requests);
    }

    public function testListByBeforeIdOrPageNotBoth(): void
    {
        $mock = new Mock([self::page([5, 4], 4), self::page([9, 7], 7, 1)]);
        $list = $mock->client->files->list(limit: 2, beforeId: 7);
        self::assertNull($list->pagination->page);
        self::assertSame(4, $list->pagination->next_before_id);
        self::assertContainsOnlyInstancesOf(FileRecord::class, $list->files);
        $list = $mock->client->files->list(page: 1, limit: 2);
        self::assertSame(1, $list->pagination->page);
        self::assertSame(['limit=2&before_id=7', 'page=1&limit=2'], self::queries($mock));

        $this->expectException(ConfigurationException::class);
        $mock->client->files->list(page: 2, beforeId: 7);
    }

    public function testPaginationRecord(): void
    {
        $last = Pagination::fromArray(['page' => 3, 'limit' => 20, 'total' => 41, 'pages' => 3, 'next_before_id' => null]);
        self::assertSame(3, $last->page);
        self::assertNull($last->next_before_id);
        $cursor = Pagination::fromArray(['page' => null, 'limit' => 20, 'total' => 41, 'pages' => 3, 'next_before_id' => 1234]);
        self::assertNull($cursor->page);
        self::assertSame(1234, $cursor->next_before_id);
        self::assertSame('{"page":null,"limit":20,"total":41,"pages":3,"next_before_id":1234}', json_encode($cursor));
    }

    public function testStatsCarryTheQuotaAndTheReservedBytes(): void
    {
        $stats = fn (mixed $maxStorage): array => [
            'success' => true,
            'stats' => ['total_files' => 2, 'total_size' => 700, 'total_downloads' => 0, 'uploads_today' => 2, 'storage_reserved' => 300],
            'limits' => ['max_file_size' => 10, 'daily_uploads' => 3, 'requests_per_minute' => 50, 'requests_per_day' => 5000, 'max_storage' => $maxStorage],
            'plan' => 'pro',
        ];
        $mock = new Mock([Mock::json(200, $stats(1000)), Mock::json(200, $stats(null))]);
        $quota = $mock->client->stats();
        self::assertSame(1000, $quota->limits->max_storage);
        self::assertSame(300, $quota->stats->storage_reserved);
        self::assertSame(700, $quota->stats->total_size);
        self::assertSame([], $quota->stats->extra);
        self::assertSame([], $quota->limits->extra);
        $unlimited = $mock->client->stats();
        self::assertNull($unlimited->limits->max_storage);
        $array = $unlimited->toArray();
        self::assertArrayHasKey('max_storage', $array['limits']);
        self::assertNull($array['limits']['max_storage']);
        self::assertSame(300, $array['stats']['storage_reserved']);
    }
}
