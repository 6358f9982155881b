<?php

declare(strict_types=1);

namespace Fileshare\Tests\Integration;

use Fileshare\Client;
use Fileshare\Exception\BadRequestException;
use Fileshare\FileSort;
use Fileshare\FileState;
use Fileshare\SortOrder;
use Fileshare\Tests\Support\Guest;
use Fileshare\Tests\Support\IntegrationTestCase;
use Fileshare\Tests\Support\Server;
use Fileshare\UploadSource;

/**
 * $client->files->list() and ->iterate() with type and state against the real server, on an
 * account of their own holding one file of each kind: the media types (top-level, exact, any case,
 * several as any of), each state (an expiry; a used-up link, and a revoked one that does not count;
 * a guest's upload through an upload request), the filters with q and a sort, iterate() sending
 * them on every request, and the server's 400s.
 */
final class FileFiltersTest extends IntegrationTestCase
{
    private static ?string $key = null;

    /**
     * The key of an account with photo.png; scan.jpg (an expiry); report.pdf (its link used up);
     * notes.txt (its link revoked); guest.csv (a guest's, through an upload request): in that order.
     */
    private function key(): string
    {
        if (self::$key === null) {
            $key = Server::newAccount();
            $client = Server::client('pro', ['api_key' => $key]);
            $upload = static fn (string $name, array $options = []) => $client->files->upload(UploadSource::fromBytes('filter me'), ['filename' => $name] + $options);
            $upload('photo.png');
            $upload('scan.jpg', ['expires_in' => 86400]);
            $report = $upload('report.pdf');
            $client->download($client->links->create($report, ['max_downloads' => 1]), "$this->dir/report.pdf");
            $notes = $upload('notes.txt');
            $client->links->delete($client->links->create($notes, ['max_downloads' => 1]));
            $request = $client->uploadRequests->create(['label' => 'filters', 'expires_in' => 86400]);
            self::assertSame(201, Guest::upload($request, 'filter me', 'guest.csv')->getStatusCode());
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

    public function testTypeTopLevelExactAnyCaseAndSeveralAsAnyOf(): void
    {
        $files = $this->client()->files;
        self::assertSame(['scan.jpg', 'photo.png'], self::filenames($files->list(type: 'image')));
        self::assertSame(['photo.png'], self::filenames($files->list(type: 'IMAGE/PNG')));
        self::assertSame(['guest.csv', 'notes.txt', 'report.pdf'], self::filenames($files->list(type: ['application/pdf', 'text'])));
        self::assertSame(['guest.csv'], self::filenames($files->list(type: ['text/csv', 'text/csv'])), 'duplicates harmless');
        self::assertSame([], self::filenames($files->list(type: 'video')));
    }

    public function testEachStateAndSeveralAsAnyOf(): void
    {
        $files = $this->client()->files;
        self::assertSame(['scan.jpg'], self::filenames($files->list(state: FileState::Expiring)));
        self::assertSame(['report.pdf'], self::filenames($files->list(state: 'expired_links')), 'not notes.txt: a revoked link does not count');
        self::assertSame(['guest.csv'], self::filenames($files->list(state: FileState::FromUploadRequest)));
        self::assertSame(['guest.csv', 'scan.jpg'], self::filenames($files->list(state: [FileState::Expiring, 'from_upload_request'])));
        self::assertSame(3, $files->list(state: FileState::cases())->pagination->total);
    }

    public function testFiltersWithEachOtherQASortAPageAndBeforeId(): void
    {
        $files = $this->client()->files;
        self::assertSame(['guest.csv'], self::filenames($files->list(type: 'text', state: FileState::FromUploadRequest)));
        self::assertSame([], self::filenames($files->list(type: 'image', state: FileState::ExpiredLinks)));
        self::assertSame(['notes.txt', 'photo.png'], self::filenames($files->list(q: 'O', sort: FileSort::Filename, order: SortOrder::Asc, type: ['image', 'text'])));
        $second = $files->list(page: 2, limit: 2, sort: FileSort::Filename, type: ['image', 'text']);
        self::assertSame(['notes.txt', 'guest.csv'], self::filenames($second));
        self::assertSame([2, 4, 2], [$second->pagination->page, $second->pagination->total, $second->pagination->pages]);
        $oldest = $files->list(order: SortOrder::Asc)->files[0];
        self::assertSame(['scan.jpg'], self::filenames($files->list(beforeId: $oldest->file_id, order: SortOrder::Asc, type: 'image', state: FileState::Expiring)));
    }

    public function testIterateGivesTheFilesOfOnePageWithTheFiltersOnEveryRequest(): void
    {
        foreach ([[FileSort::UploadDate, 'before_id'], [FileSort::Filename, 'page']] as [$sort, $paging]) {
            $files = $this->client($history)->files;
            $filters = ['type' => ['text', 'application/pdf'], 'state' => [FileState::ExpiredLinks, FileState::FromUploadRequest], 'sort' => $sort];
            $whole = array_map(static fn ($f): int => $f->file_id, $files->list(...$filters)->files);
            self::assertCount(2, $whole);
            $history = [];
            $ids = [];
            foreach ($files->iterate(...$filters, limit: 1) as $file) {
                $ids[] = $file->file_id;
            }
            self::assertSame($whole, $ids, $sort->value);
            self::assertGreaterThanOrEqual(2, \count($history));
            foreach ($history as $n => ['request' => $request]) {
                $query = $request->getUri()->getQuery();
                self::assertStringContainsString('type=text&type=application%2Fpdf&state=expired_links&state=from_upload_request', $query);
                if ($n > 0) {
                    self::assertStringContainsString("$paging=", $query, $sort->value);
                }
            }
        }
    }

    public function testTheServerRefusesAnUnknownStateOrType(): void
    {
        $files = $this->client()->files;
        $cases = [
            'state must be one of expiring, expired_links, from_upload_request, got "expired".' => static fn () => $files->list(state: ['expiring', 'expired']),
            'type must be a media type (image) or type/subtype (application/pdf), got "image/*".' => static fn () => $files->list(type: 'image/*'),
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
