<?php

declare(strict_types=1);

namespace Fileshare\Tests\Unit;

use Fileshare\Exception\FileshareException;
use Fileshare\FileSort;
use Fileshare\FileState;
use Fileshare\SortOrder;
use Fileshare\Tests\Support\Mock;
use GuzzleHttp\Psr7\Response;
use PHPUnit\Framework\TestCase;
use Psr\Http\Message\RequestInterface;

/**
 * files->list() and files->iterate() with a search, filters and an order (q, type, state, sort, order), against a
 * scripted server that lists as the real one does: the query of every request, and how iterate()
 * pages (by before_id in upload order, either direction; by page number in the other orders).
 */
final class FileListingTest extends TestCase
{
    /**
     * Files 1..n, uploaded in id order, with names, sizes and download counts in other orders.
     *
     * @return list<array{file_id: int, filename: string, size: int, download_count: int}>
     */
    private static function stored(int $n): array
    {
        $files = [];
        for ($i = 0; $i < $n; ++$i) {
            $files[] = ['file_id' => $i + 1, 'filename' => \chr(97 + $i * 7 % 26) . '-' . ($i % 2 === 0 ? 'Report' : 'photo') . '.txt',
                'size' => $i * 5 % $n * 10, 'download_count' => $i * 3 % 4];
        }

        return $files;
    }

    /**
     * `GET /files` over $files as the server answers it: q (any case), sort, order (ties by id in
     * the same direction), page or before_id; before_id (the files past it in id order) only in
     * upload order, else 400 invalid_parameter.
     *
     * @param list<array{file_id: int, filename: string, size: int, download_count: int}> $files
     * @param array<string, string>                                                      $params
     */
    private static function listing(array $files, array $params): Response
    {
        $limit = (int) ($params['limit'] ?? 20);
        $sort = $params['sort'] ?? 'upload_date';
        $sign = ($params['order'] ?? 'desc') === 'desc' ? -1 : 1;
        $q = isset($params['q']) ? strtolower($params['q']) : null;
        $before = isset($params['before_id']) ? (int) $params['before_id'] : null;
        if ($before !== null && $sort !== 'upload_date') {
            return Mock::error(400, 'invalid_parameter');
        }
        $key = static fn (array $f): int|string => match ($sort) {
            'upload_date' => $f['file_id'],
            'filename' => strtolower($f['filename']),
            default => $f[$sort],
        };
        $matching = array_values(array_filter($files, static fn (array $f): bool => $q === null || str_contains(strtolower($f['filename']), $q)));
        usort($matching, static fn (array $a, array $b): int => $sign * ([$key($a), $a['file_id']] <=> [$key($b), $b['file_id']]));
        $total = \count($matching);
        $page = null;
        if ($before !== null) {
            $rest = array_values(array_filter($matching, static fn (array $f): bool => $sign < 0 ? $f['file_id'] < $before : $f['file_id'] > $before));
        } else {
            $page = (int) ($params['page'] ?? 1);
            $rest = \array_slice($matching, ($page - 1) * $limit);
        }
        $shown = \array_slice($rest, 0, $limit);

        return Mock::json(200, ['success' => true, 'files' => array_map(static fn (array $f): array => $f + Mock::file('x', $f['file_id']), $shown),
            'pagination' => ['page' => $page, 'limit' => $limit, 'total' => $total, 'pages' => (int) ceil($total / $limit),
                'next_before_id' => \count($rest) > $limit ? $shown[$limit - 1]['file_id'] : null]]);
    }

    /** A Mock whose every answer comes from listing() over stored($n). */
    private static function server(int $n): Mock
    {
        $files = self::stored($n);
        $answer = static function (RequestInterface $request) use ($files): Response {
            parse_str($request->getUri()->getQuery(), $params);

            /** @var array<string, string> $params */
            return self::listing($files, $params);
        };

        return new Mock(array_fill(0, 20, $answer));
    }

    /** @return list<string> the query string of each request */
    private static function queries(Mock $mock): array
    {
        return array_map(static fn (array $r): string => $r['request']->getUri()->getQuery(), $mock->requests);
    }

    /** @param iterable<\Fileshare\Model\FileRecord> $files @return list<int> */
    private static function ids(iterable $files): array
    {
        $ids = [];
        foreach ($files as $file) {
            $ids[] = $file->file_id;
        }

        return $ids;
    }

    public function testTheEnumsHoldTheApisValues(): void
    {
        self::assertSame(['upload_date', 'filename', 'size', 'download_count'], array_map(static fn (FileSort $s): string => $s->value, FileSort::cases()));
        self::assertSame(['asc', 'desc'], array_map(static fn (SortOrder $o): string => $o->value, SortOrder::cases()));
    }

    public function testListSendsQSortAndOrderAsEnumsOrStringsAndNothingUnasked(): void
    {
        $mock = self::server(5);
        $mock->client->files->list();
        $list = $mock->client->files->list(page: 2, limit: 2, q: 'Report', sort: FileSort::Size, order: SortOrder::Asc);
        $mock->client->files->list(q: '50% off & more', sort: 'download_count', order: 'desc');
        $mock->client->files->list(limit: 2, beforeId: 2, order: SortOrder::Asc);
        self::assertSame([
            '',
            'page=2&limit=2&q=Report&sort=size&order=asc',
            'q=50%25%20off%20%26%20more&sort=download_count&order=desc',
            'limit=2&before_id=2&order=asc',
        ], self::queries($mock));
        self::assertSame([2, 3], [$list->pagination->page, $list->pagination->total]);
    }

    /** @return iterable<string, array{FileSort, SortOrder}> */
    public static function orders(): iterable
    {
        foreach (FileSort::cases() as $sort) {
            foreach (SortOrder::cases() as $order) {
                yield "$sort->value $order->value" => [$sort, $order];
            }
        }
    }

    /** @dataProvider orders */
    public function testIterateYieldsEveryMatchOnceInOrderWithTheQueryOnEveryPage(FileSort $sort, SortOrder $order): void
    {
        $mock = self::server(23);
        $ids = self::ids($mock->client->files->iterate(limit: 5, q: 'REPORT', sort: $sort, order: $order));
        $all = json_decode((string) self::listing(self::stored(23), ['limit' => '100', 'q' => 'REPORT', 'sort' => $sort->value, 'order' => $order->value])->getBody(), true);
        self::assertIsArray($all);
        self::assertCount(12, $all['files']);
        self::assertSame(array_column($all['files'], 'file_id'), $ids);
        $sent = self::queries($mock);
        self::assertCount(3, $sent);
        foreach ($sent as $query) {
            self::assertStringContainsString("q=REPORT&sort=$sort->value&order=$order->value", $query);
        }
        if ($sort === FileSort::UploadDate) {
            foreach (\array_slice($sent, 1) as $query) {
                self::assertMatchesRegularExpression('/^limit=5&before_id=\d+&/', $query, 'upload order pages by before_id');
            }
        } else {
            self::assertSame(["page=2&limit=5&q=REPORT&sort=$sort->value&order=$order->value", "page=3&limit=5&q=REPORT&sort=$sort->value&order=$order->value"],
                \array_slice($sent, 1));
        }
    }

    public function testIterateOldestFirstPagesByBeforeIdGoingUp(): void
    {
        $mock = self::server(5);
        self::assertSame([1, 2, 3, 4, 5], self::ids($mock->client->files->iterate(limit: 2, order: 'asc')));
        self::assertSame(['limit=2&order=asc', 'limit=2&before_id=2&order=asc', 'limit=2&before_id=4&order=asc'], self::queries($mock));
    }

    public function testIterateOldestFirstStopsWhenNextBeforeIdDoesNotGoUp(): void
    {
        $page = static fn (array $ids, ?int $next): Response => Mock::json(200, ['success' => true,
            'files' => array_map(static fn (int $id): array => Mock::file('x', $id), $ids),
            'pagination' => ['page' => null, 'limit' => 2, 'total' => 9, 'pages' => 5, 'next_before_id' => $next]]);
        $mock = new Mock([$page([1, 2], 2), $page([3, 4], 4), $page([5, 6], 3)]);
        $seen = [];
        try {
            foreach ($mock->client->files->iterate(limit: 2, order: SortOrder::Asc) as $file) {
                $seen[] = $file->file_id;
            }
            self::fail('no exception');
        } catch (FileshareException $e) {
            self::assertStringContainsString('next_before_id (3) does not move past 4', $e->getMessage());
        }
        self::assertSame([1, 2, 3, 4, 5, 6], $seen);
    }

    public function testIterateByPageNumberYieldsAShiftedFileOnce(): void
    {
        $page = static fn (array $ids, int $n): Response => Mock::json(200, ['success' => true,
            'files' => array_map(static fn (int $id): array => Mock::file('x', $id), $ids),
            'pagination' => ['page' => $n, 'limit' => 2, 'total' => 5, 'pages' => 3, 'next_before_id' => null]]);
        $mock = new Mock([$page([4, 2], 1), $page([2, 5], 2), $page([1], 3)]);
        self::assertSame([4, 2, 5, 1], self::ids($mock->client->files->iterate(limit: 2, sort: FileSort::Filename)));
        self::assertSame(['limit=2&sort=filename', 'page=2&limit=2&sort=filename', 'page=3&limit=2&sort=filename'], self::queries($mock));
    }

    public function testIterateWithNoMatchMakesOneRequest(): void
    {
        $mock = self::server(5);
        self::assertSame([], self::ids($mock->client->files->iterate(q: 'nothing like it', sort: 'size')));
        self::assertSame(['limit=100&q=nothing%20like%20it&sort=size'], self::queries($mock));
    }

    public function testTheStateEnumHoldsTheApisValues(): void
    {
        self::assertSame(['expiring', 'expired_links', 'from_upload_request'], array_map(static fn (FileState $s): string => $s->value, FileState::cases()));
    }

    public function testListSendsTypeAndStateOnceOrRepeatedAsEnumsOrStringsWithTheOtherParameters(): void
    {
        $mock = self::server(5);
        $mock->client->files->list(type: 'image');
        $mock->client->files->list(state: FileState::Expiring);
        $mock->client->files->list(type: ['application/pdf', 'text'], state: [FileState::ExpiredLinks, 'from_upload_request']);
        $mock->client->files->list(type: [], state: []); // an empty list sends nothing
        $mock->client->files->list(page: 2, limit: 2, q: 'Report', sort: FileSort::Size, order: 'asc', type: 'text/plain', state: 'expiring');
        $mock->client->files->list(limit: 2, beforeId: 4, q: 'a', type: ['image', 'video'], state: [FileState::Expiring, FileState::ExpiredLinks]);
        self::assertSame([
            'type=image',
            'state=expiring',
            'type=application%2Fpdf&type=text&state=expired_links&state=from_upload_request',
            '',
            'page=2&limit=2&q=Report&sort=size&order=asc&type=text%2Fplain&state=expiring',
            'limit=2&before_id=4&q=a&type=image&type=video&state=expiring&state=expired_links',
        ], self::queries($mock));
    }

    public function testIterateKeepsTypeAndStateOnEveryPageByBeforeIdOrPage(): void
    {
        $filters = ['type' => ['image', 'application/pdf'], 'state' => [FileState::Expiring, FileState::FromUploadRequest]];
        $kept = 'type=image&type=application%2Fpdf&state=expiring&state=from_upload_request';
        $byDate = self::server(3);
        self::assertSame([3, 2, 1], self::ids($byDate->client->files->iterate(...$filters, limit: 2, q: 'o')));
        self::assertSame(["limit=2&q=o&$kept", "limit=2&before_id=2&q=o&$kept"], self::queries($byDate));
        $bySize = self::server(3);
        self::assertCount(3, self::ids($bySize->client->files->iterate(...$filters, limit: 2, q: 'o', sort: FileSort::Size)));
        self::assertSame(["limit=2&q=o&sort=size&$kept", "page=2&limit=2&q=o&sort=size&$kept"], self::queries($bySize));
    }
}
