<?php

declare(strict_types=1);

namespace Fileshare\Tests\Integration;

use Fileshare\Client;
use Fileshare\Exception\BadRequestException;
use Fileshare\FileSort;
use Fileshare\SortOrder;
use Fileshare\Tests\Support\IntegrationTestCase;
use Fileshare\Tests\Support\Server;
use Fileshare\UploadSource;

/**
 * $client->files->list() and ->iterate() with q, sort and order against the real server, on an
 * account of their own (so that the listing holds only these five files): the search (any case),
 * each sort in both directions with its ties, iterate() across pages with the same query on every
 * request (by before_id in upload order, by page number otherwise), and the server's 400s.
 */
final class SearchSortTest extends IntegrationTestCase
{
    /** In upload order: name => [size, downloads]. */
    private const FILES = [
        'Beta-report.txt' => [30, 0],
        'alpha.TXT' => [10, 1],
        'gamma_report.csv' => [50, 0],
        'delta.txt' => [20, 2],
        'REPORT-epsilon.pdf' => [40, 0],
    ];

    private static ?string $key = null;

    /** The key of an account with just FILES, uploaded in that order and downloaded as often as said. */
    private function key(): string
    {
        if (self::$key === null) {
            $key = Server::newAccount();
            $client = Server::client('pro', ['api_key' => $key]);
            foreach (self::FILES as $name => [$size, $downloads]) {
                $file = $client->files->upload(UploadSource::fromBytes(str_repeat('x', $size)), ['filename' => $name]);
                for ($n = 0; $n < $downloads; ++$n) {
                    $client->download($file, "$this->dir/$n-$name");
                }
            }
            self::$key = $key;
        }

        return self::$key;
    }

    /**
     * A client on that account; with $history, every request it sends is noted there.
     *
     * @param list<array{request: \Psr\Http\Message\RequestInterface}>|null $history
     */
    private function client(?array &$history = null): Client
    {
        return self::clientFor($this->key(), $history, \func_num_args() > 0);
    }

    public function testQListsTheNamesContainingItInAnyCase(): void
    {
        $files = $this->client()->files;
        $found = $files->list(q: 'rEpOrT');
        self::assertSame(['REPORT-epsilon.pdf', 'gamma_report.csv', 'Beta-report.txt'], self::filenames($found));
        self::assertSame([1, 3, 1, null], [$found->pagination->page, $found->pagination->total, $found->pagination->pages, $found->pagination->next_before_id]);
        self::assertSame(3, $files->list(q: '.txt')->pagination->total);
        self::assertSame([], $files->list(q: 'nothing like it')->files);
        self::assertSame(5, $files->list(q: '')->pagination->total, 'an empty q filters nothing');
    }

    public function testEachSortBothWaysTiesByFileId(): void
    {
        $files = $this->client()->files;
        $byName = ['alpha.TXT', 'Beta-report.txt', 'delta.txt', 'gamma_report.csv', 'REPORT-epsilon.pdf'];
        self::assertSame($byName, self::filenames($files->list(sort: FileSort::Filename, order: SortOrder::Asc)));
        self::assertSame(array_reverse($byName), self::filenames($files->list(sort: 'filename')));
        $bySize = ['gamma_report.csv', 'REPORT-epsilon.pdf', 'Beta-report.txt', 'delta.txt', 'alpha.TXT'];
        self::assertSame($bySize, self::filenames($files->list(sort: FileSort::Size, order: 'desc')));
        self::assertSame(array_reverse($bySize), self::filenames($files->list(sort: FileSort::Size, order: SortOrder::Asc)));
        $byDownloads = $files->list(sort: FileSort::DownloadCount);
        self::assertSame(['delta.txt', 'alpha.TXT', 'REPORT-epsilon.pdf', 'gamma_report.csv', 'Beta-report.txt'], self::filenames($byDownloads));
        self::assertSame([2, 1, 0, 0, 0], array_map(static fn ($f): int => $f->download_count, $byDownloads->files));
        self::assertSame(array_keys(self::FILES), self::filenames($files->list(sort: FileSort::UploadDate, order: SortOrder::Asc)));
    }

    public function testQAndSortWithAPageAndWithBeforeId(): void
    {
        $files = $this->client()->files;
        $second = $files->list(page: 2, limit: 2, q: 'REPORT', sort: FileSort::Size, order: SortOrder::Asc);
        self::assertSame(['gamma_report.csv'], self::filenames($second));
        self::assertSame([2, 3, 2], [$second->pagination->page, $second->pagination->total, $second->pagination->pages]);
        $oldestFirst = $files->list(order: SortOrder::Asc)->files;
        $after = $files->list(beforeId: $oldestFirst[1]->file_id, q: 'report', order: SortOrder::Asc);
        self::assertSame(['gamma_report.csv', 'REPORT-epsilon.pdf'], self::filenames($after));
        self::assertNull($after->pagination->page);
        $before = $files->list(limit: 1, beforeId: $oldestFirst[4]->file_id, q: 'report');
        self::assertSame(['gamma_report.csv'], self::filenames($before));
        self::assertSame($oldestFirst[2]->file_id, $before->pagination->next_before_id);
    }

    public function testIterateGivesTheFilesOfOnePageInItsOrderWithTheQueryOnEveryRequest(): void
    {
        foreach (FileSort::cases() as $sort) {
            foreach (SortOrder::cases() as $order) {
                $client = $this->client($history);
                $whole = array_map(static fn ($f): int => $f->file_id, $client->files->list(limit: 100, q: 'T', sort: $sort, order: $order)->files);
                self::assertCount(5, $whole);
                $history = [];
                $ids = [];
                foreach ($client->files->iterate(limit: 2, q: 'T', sort: $sort, order: $order) as $file) {
                    $ids[] = $file->file_id;
                }
                $label = "$sort->value $order->value";
                self::assertSame($whole, $ids, $label);
                self::assertCount(3, $history, $label);
                $paging = [];
                foreach ($history as $i => $exchange) {
                    parse_str($exchange['request']->getUri()->getQuery(), $query);
                    self::assertSame(['T', $sort->value, $order->value], [$query['q'] ?? null, $query['sort'] ?? null, $query['order'] ?? null], $label);
                    if ($i > 0) {
                        $paging[] = isset($query['before_id']) ? 'before_id' : (isset($query['page']) ? 'page' : '?');
                    }
                }
                self::assertSame($sort === FileSort::UploadDate ? ['before_id', 'before_id'] : ['page', 'page'], $paging, $label);
            }
        }
    }

    public function testIterateOldestFirstDeletingEachFileSkipsNone(): void
    {
        $client = Server::client('pro', ['api_key' => Server::newAccount()]);
        $uploaded = [];
        for ($n = 0; $n < 7; ++$n) {
            $uploaded[] = $client->files->upload(UploadSource::fromBytes("$n"), ['filename' => "x-$n.bin"])->file_id;
        }
        $seen = [];
        foreach ($client->files->iterate(limit: 3, q: 'X-', order: SortOrder::Asc) as $file) {
            $seen[] = $file->file_id;
            $client->files->delete($file->file_id);
        }
        self::assertSame($uploaded, $seen);
    }

    public function testTheServerRefusesAnUnknownSortOrOrderAndBeforeIdWithAnotherSort(): void
    {
        $files = $this->client()->files;
        $cases = [
            'sort must be one of upload_date, filename, size, download_count' => static fn () => $files->list(sort: 'name'),
            'order must be asc or desc' => static fn () => $files->list(order: 'up'),
            'before_id pages only with sort=upload_date' => static fn () => $files->list(beforeId: 5, sort: FileSort::Size),
        ];
        foreach ($cases as $message => $call) {
            try {
                $call();
                self::fail("no exception: $message");
            } catch (BadRequestException $e) {
                self::assertSame([400, 'invalid_parameter'], [$e->getStatus(), $e->getErrorCode()]);
                self::assertStringContainsString($message, $e->getMessage());
            }
        }
    }
}
