<?php

declare(strict_types=1);

namespace Fileshare\Tests\Integration;

use Fileshare\Client;
use Fileshare\Exception\AuthenticationException;
use Fileshare\Exception\BadRequestException;
use Fileshare\Exception\FileshareException;
use Fileshare\Exception\LimitExceededException;
use Fileshare\Exception\NotFoundException;
use Fileshare\Exception\RateLimitException;
use Fileshare\Model\Link;
use Fileshare\Tests\Support\CutStream;
use Fileshare\Tests\Support\IntegrationTestCase;
use Fileshare\Tests\Support\Server;
use Fileshare\UploadSource;
use GuzzleHttp\HandlerStack;
use Psr\Http\Message\RequestInterface;

/** Links as resources, file expiry, and downloads through the POST-and-grant flow, against the real server. */
final class LinksTest extends IntegrationTestCase
{
    /**
     * Runs $call and checks that it throws $class with this status and error code (and, when
     * given, a message naming $field).
     *
     * @param class-string<FileshareException> $class
     */
    private static function assertFails(string $class, int $status, string $code, callable $call, ?string $field = null): FileshareException
    {
        try {
            $call();
        } catch (FileshareException $e) {
            self::assertInstanceOf($class, $e, $e->getMessage());
            self::assertSame($status, $e->getStatus(), $e->getMessage());
            self::assertSame($code, $e->getErrorCode(), $e->getMessage());
            if ($field !== null) {
                self::assertStringContainsString($field, $e->getMessage());
            }

            return $e;
        }
        self::fail("no exception (expected $status $code)");
    }

    /** $time is about $seconds from now (the server counts whole seconds). */
    private static function assertInAbout(int $seconds, ?\DateTimeImmutable $time): void
    {
        self::assertNotNull($time);
        self::assertEqualsWithDelta(time() + $seconds, $time->getTimestamp(), 5);
        self::assertSame('UTC', $time->getTimezone()->getName());
    }

    public function testEveryLinksCall(): void
    {
        $client = Server::client();
        $file = $client->files->upload(UploadSource::fromBytes('shared three ways'), ['filename' => 'links.txt']);

        $links = $client->links->list($file->file_id);
        self::assertCount(1, $links);
        $default = $links[0];
        self::assertTrue($default->default);
        self::assertSame($file->public_link, $default->url);
        self::assertSame($file->file_id, $default->file_id);
        self::assertSame(Link::STATUS_ACTIVE, $default->status);
        self::assertNull($default->max_downloads);
        self::assertNull($default->expires_at);
        self::assertFalse($default->password_protected);

        $link = $client->links->create($file, ['label' => 'for the auditors', 'expires_in' => 3600, 'max_downloads' => 3,
            'password' => 'correct horse battery']);
        self::assertFalse($link->default);
        self::assertSame($file->file_id, $link->file_id);
        self::assertSame('for the auditors', $link->label);
        self::assertSame(3, $link->max_downloads);
        self::assertSame(0, $link->download_count);
        self::assertTrue($link->password_protected);
        self::assertSame(Link::STATUS_ACTIVE, $link->status);
        self::assertInAbout(3600, $link->expiry);
        self::assertInAbout(0, $link->created);
        self::assertStringStartsWith(Server::info()['server_url'] . '/download/', $link->url);
        self::assertNotSame($file->public_link, $link->url);
        self::assertArrayNotHasKey('password', $link->toArray());

        $plain = $client->links->create($file->file_id);
        self::assertNull($plain->label);
        self::assertNull($plain->max_downloads);
        self::assertNull($plain->expires_at);
        self::assertFalse($plain->password_protected);

        // The default link first, then newest first.
        $ids = array_map(static fn (Link $l): int => $l->link_id, $client->links->list($file));
        self::assertSame([$default->link_id, $plain->link_id, $link->link_id], $ids);
        self::assertEquals($link, $client->links->get($link->link_id));

        // A key left out is left as it is; a key with null clears its field.
        $renamed = $client->links->update($link, ['label' => 'renamed']);
        self::assertSame('renamed', $renamed->label);
        self::assertSame(3, $renamed->max_downloads);
        self::assertTrue($renamed->password_protected);
        self::assertSame($link->expires_at, $renamed->expires_at);
        $cleared = $client->links->update($link->link_id, ['password' => null, 'max_downloads' => null, 'expires_at' => null, 'label' => null]);
        self::assertNull($cleared->label);
        self::assertNull($cleared->max_downloads);
        self::assertNull($cleared->expires_at);
        self::assertFalse($cleared->password_protected);
        $at = (new \DateTimeImmutable('+2 days', new \DateTimeZone('UTC')))->setTime(12, 30);
        $dated = $client->links->update($link, ['expires_at' => $at, 'max_downloads' => 10]);
        self::assertSame($at->format('Y-m-d H:i:s'), $dated->expires_at);
        self::assertSame(10, $dated->max_downloads);
        self::assertInAbout(3600, $client->links->update($link, ['expires_in' => 3600])->expiry);

        // Rotate: a new URL, the same link and counts; the old URL is dead at once.
        $grant = $client->download($plain, "$this->dir/plain-1.txt")->grant_url;
        $rotated = $client->links->rotate($plain);
        self::assertSame($plain->link_id, $rotated->link_id);
        self::assertNotSame($plain->url, $rotated->url);
        self::assertSame(1, $rotated->download_count);
        self::assertFails(NotFoundException::class, 404, 'not_found', fn () => $client->download($plain->url, "$this->dir/plain-2.txt"));
        // A grant dies with the URL it came from.
        self::assertFails(NotFoundException::class, 404, 'not_found', fn () => $client->download($grant, "$this->dir/plain-2.txt"));
        $client->download($rotated, "$this->dir/plain-3.txt");
        self::assertSame('shared three ways', file_get_contents("$this->dir/plain-3.txt"));
        self::assertSame(2, $client->links->get($plain->link_id)->download_count);

        // Delete: the URL is dead at once; the link stays listed as revoked.
        $client->links->delete($rotated);
        self::assertFails(NotFoundException::class, 404, 'not_found', fn () => $client->download($rotated->url, "$this->dir/plain-4.txt"));
        $statuses = [];
        foreach ($client->links->list($file) as $l) {
            $statuses[$l->link_id] = $l->status;
        }
        self::assertSame(Link::STATUS_REVOKED, $statuses[$plain->link_id]);
        self::assertSame(Link::STATUS_ACTIVE, $statuses[$default->link_id]);

        // The file's download_count is the sum over its links.
        self::assertSame(2, $client->files->get($file->file_id)->download_count);
    }

    public function testTheDefaultLinkCannotBeDeletedButRotates(): void
    {
        $client = Server::client();
        $file = $client->files->upload(UploadSource::fromBytes('default link'), ['filename' => 'default.txt']);
        $default = $client->links->list($file)[0];
        self::assertFails(BadRequestException::class, 409, 'default_link_required', fn () => $client->links->delete($default));

        $rotated = $client->links->rotate($default);
        self::assertTrue($rotated->default);
        $after = $client->files->get($file->file_id);
        self::assertSame($rotated->url, $after->public_link);
        self::assertNotSame($file->public_link, $after->public_link);
        self::assertFails(NotFoundException::class, 404, 'not_found', fn () => $client->download($file, "$this->dir/old.txt"));
        $client->download($after, "$this->dir/new.txt");
        self::assertSame('default link', file_get_contents("$this->dir/new.txt"));
    }

    public function testEveryFieldRuleIs400InvalidParameterNamingTheField(): void
    {
        $client = Server::client();
        $file = $client->files->upload(UploadSource::fromBytes('rules'), ['filename' => 'rules.txt']);
        $link = $client->links->create($file);
        $cases = [
            'expires_in' => [['expires_in' => 0], ['expires_in' => 315_360_001]],
            'expires_at' => [['expires_at' => '2020-01-01 00:00:00'], ['expires_at' => 'tomorrow'], ['expires_at' => '2099-01-01T00:00:00Z']],
            'max_downloads' => [['max_downloads' => 0], ['max_downloads' => 1_000_001], ['max_downloads' => 'three']],
            'password' => [['password' => 'short'], ['password' => str_repeat('p', 1025)]],
            'label' => [['label' => str_repeat('l', 101)], ['label' => "two\nlines"]],
        ];
        foreach ($cases as $field => $bodies) {
            foreach ($bodies as $body) {
                self::assertFails(BadRequestException::class, 400, 'invalid_parameter', fn () => $client->links->create($file, $body), $field);
                self::assertFails(BadRequestException::class, 400, 'invalid_parameter', fn () => $client->links->update($link, $body), $field);
            }
        }
        $both = ['expires_in' => 60, 'expires_at' => '2099-01-01 00:00:00'];
        self::assertFails(BadRequestException::class, 400, 'invalid_parameter', fn () => $client->links->create($file, $both), 'expires_');
        self::assertFails(BadRequestException::class, 400, 'invalid_parameter', fn () => $client->links->update($link, $both), 'expires_');
        self::assertFails(BadRequestException::class, 400, 'invalid_parameter', fn () => $client->links->update($link, ['expires_in' => null]), 'expires_in');
        self::assertFails(BadRequestException::class, 400, 'invalid_parameter', fn () => $client->files->update($file, ['expires_in' => 0]), 'expires_in');
        self::assertFails(BadRequestException::class, 400, 'invalid_parameter', fn () => $client->files->update($file, $both), 'expires_');
        self::assertFails(BadRequestException::class, 400, 'invalid_parameter',
            fn () => $client->files->update($file, ['expires_at' => '2020-01-01 00:00:00']), 'expires_at');
        self::assertFails(BadRequestException::class, 400, 'invalid_parameter',
            fn () => $client->files->upload(UploadSource::fromBytes('x'), ['expires_in' => 0]), 'xpires');

        // Nothing was changed by the refused calls.
        $unchanged = $client->links->get($link->link_id);
        self::assertEquals($link, $unchanged);
        self::assertNull($client->files->get($file->file_id)->expires_at);
    }

    public function testAnotherAccountsFileAndLinksAre404(): void
    {
        $owner = Server::client();
        $file = $owner->files->upload(UploadSource::fromBytes('mine'), ['filename' => 'mine.txt']);
        $link = $owner->links->create($file, ['label' => 'mine']);
        $other = new Client(['base_url' => Server::info()['base_url'], 'api_key' => Server::newAccount()]);
        foreach ([
            fn () => $other->links->list($file->file_id),
            fn () => $other->links->create($file->file_id, ['label' => 'theirs']),
            fn () => $other->links->get($link->link_id),
            fn () => $other->links->update($link->link_id, ['label' => 'theirs']),
            fn () => $other->links->rotate($link->link_id),
            fn () => $other->links->delete($link->link_id),
            fn () => $other->files->update($file->file_id, ['expires_in' => 60]),
        ] as $call) {
            self::assertFails(NotFoundException::class, 404, 'not_found', $call);
        }
        self::assertEquals($link, $owner->links->get($link->link_id), 'nothing changed');
        self::assertCount(2, $owner->links->list($file));
        self::assertNull($owner->files->get($file->file_id)->expires_at);
    }

    public function testALimitedLinkCountsEachDownloadOnceAndResumesThroughItsGrant(): void
    {
        $client = Server::client();
        $path = $this->makeFile('limited.bin', 2 * 1024 * 1024 + 5);
        $file = $client->files->upload($path);
        $link = $client->links->create($file, ['max_downloads' => 2]);

        // The first GET of the grant drops after 700 000 bytes; the SDK continues through the same grant.
        $calls = [];
        $real = \GuzzleHttp\Utils::chooseHandler();
        $handler = static function (RequestInterface $request, array $options) use (&$calls, $real) {
            $range = $request->getHeaderLine('Range');
            $calls[] = $request->getMethod() . ' ' . $request->getUri() . ($range === '' ? '' : " $range");
            if ($request->getMethod() === 'GET' && \count($calls) === 2 && isset($options['sink'])) {
                $options['sink'] = new CutStream($options['sink'], 700_000);
            }

            return $real($request, $options);
        };
        $dropping = Server::client('pro', ['http_client' => new \GuzzleHttp\Client(['handler' => HandlerStack::create($handler)]),
            'sleep' => static function (): void {
            }]);
        $first = $dropping->download($link, "$this->dir/first.bin");
        self::assertSame($file->sha256, hash_file('sha256', "$this->dir/first.bin"));
        self::assertNotNull($first->grant_url);
        self::assertStringStartsWith($link->url . '/', $first->grant_url);
        self::assertSame(["POST $link->url", "GET $first->grant_url", "GET $first->grant_url bytes=700000-"], $calls);
        self::assertSame(1, $client->links->get($link->link_id)->download_count, 'one POST, one download');

        // Later, a partial copy resumes through the grant for free.
        file_put_contents("$this->dir/second.bin", (string) file_get_contents($path, false, null, 0, 1 << 20));
        $resumed = $client->download($first->grant_url, "$this->dir/second.bin");
        self::assertSame(1 << 20, $resumed->resumed_from);
        self::assertSame($file->sha256, hash_file('sha256', "$this->dir/second.bin"));
        self::assertSame(1, $client->links->get($link->link_id)->download_count);

        // The second download uses up the link; a third finds it dead, like an unknown link.
        $client->download($link, "$this->dir/third.bin");
        $exhausted = $client->links->get($link->link_id);
        self::assertSame(2, $exhausted->download_count);
        self::assertSame(Link::STATUS_EXHAUSTED, $exhausted->status);
        self::assertFails(NotFoundException::class, 404, 'not_found', fn () => $client->download($link, "$this->dir/fourth.bin"));
        self::assertFails(NotFoundException::class, 404, 'not_found',
            fn () => $client->download(Server::info()['server_url'] . '/download/' . str_repeat('x', 32), "$this->dir/unknown.bin"));

        // A grant given before keeps serving (it was counted) and counts nothing.
        $client->download($first->grant_url, "$this->dir/again.bin");
        self::assertSame($file->sha256, hash_file('sha256', "$this->dir/again.bin"));
        self::assertSame(2, $client->links->get($link->link_id)->download_count);

        // max_downloads cannot go below the count; raised, the link lives again.
        self::assertFails(BadRequestException::class, 400, 'invalid_parameter', fn () => $client->links->update($link, ['max_downloads' => 1]), 'max_downloads');
        self::assertSame(Link::STATUS_ACTIVE, $client->links->update($link, ['max_downloads' => 3])->status);
    }

    public function testAPasswordProtectedDownload(): void
    {
        $client = Server::client();
        $file = $client->files->upload(UploadSource::fromBytes('the secret plans'), ['filename' => 'plans.txt']);
        $link = $client->links->create($file, ['password' => 'correct horse battery']);
        $dest = "$this->dir/plans.txt";

        self::assertFails(AuthenticationException::class, 401, 'invalid_password', fn () => $client->download($link, $dest));
        $wrong = self::assertFails(AuthenticationException::class, 401, 'invalid_password',
            fn () => $client->download($link->url, $dest, ['password' => 'incorrect horse']));
        self::assertStringNotContainsString('incorrect horse', $wrong->getMessage());
        self::assertFileDoesNotExist($dest);
        self::assertSame(0, $client->links->get($link->link_id)->download_count, 'refused attempts count nothing');

        $result = $client->download($link, $dest, ['password' => 'correct horse battery']);
        self::assertSame('the secret plans', file_get_contents($dest));
        self::assertSame($file->sha256, $result->sha256);
        self::assertSame(1, $client->links->get($link->link_id)->download_count);

        // The default link can be protected too: then the file record needs the password.
        $default = $client->links->list($file)[0];
        $client->links->update($default, ['password' => 'another good one']);
        self::assertFails(AuthenticationException::class, 401, 'invalid_password', fn () => $client->download($file, "$this->dir/d.txt"));
        $client->download($file, "$this->dir/d.txt", ['password' => 'another good one']);
        self::assertSame('the secret plans', file_get_contents("$this->dir/d.txt"));
    }

    public function testTenWrongPasswordsAreRateLimitedWithoutTheSdkWaiting(): void
    {
        $sleeps = [];
        $client = Server::client('pro', ['sleep' => static function (float $seconds) use (&$sleeps): void {
            $sleeps[] = $seconds;
        }]);
        $file = $client->files->upload(UploadSource::fromBytes('guarded'), ['filename' => 'guarded.txt']);
        $link = $client->links->create($file, ['password' => 'the right one']);
        for ($i = 0; $i < 10; ++$i) {
            self::assertFails(AuthenticationException::class, 401, 'invalid_password',
                fn () => $client->download($link, "$this->dir/guarded.txt", ['password' => "wrong guess $i"]));
        }
        $limited = self::assertFails(RateLimitException::class, 429, 'rate_limited',
            fn () => $client->download($link, "$this->dir/guarded.txt", ['password' => 'the right one']));
        self::assertGreaterThan(60, $limited->getRetryAfter());
        self::assertSame([], $sleeps, 'a wait of minutes is not slept through, and the POST is not sent again');
        self::assertSame(0, $client->links->get($link->link_id)->download_count);
    }

    public function testFileExpiryThroughUpdateAndTheUploadOption(): void
    {
        $client = Server::client();
        $file = $client->files->upload(UploadSource::fromBytes('expiring'), ['filename' => 'expiring.txt']);
        self::assertNull($file->expires_at);
        self::assertNull($file->expiry);

        $updated = $client->files->update($file, ['expires_in' => 3600]);
        self::assertInAbout(3600, $updated->expiry);
        self::assertEquals($updated, $client->files->get($file->file_id));
        $at = (new \DateTimeImmutable('+3 days', new \DateTimeZone('UTC')))->setTime(8, 0);
        self::assertSame($at->format('Y-m-d H:i:s'), $client->files->update($file->file_id, ['expires_at' => $at])->expires_at);
        $renamed = $client->files->update($file, ['filename' => 'renamed.txt']);
        self::assertSame('renamed.txt', $renamed->filename);
        self::assertSame($at->format('Y-m-d H:i:s'), $renamed->expires_at, 'left as it was');
        self::assertNull($client->files->update($file, ['expires_at' => null])->expires_at);

        // The upload option, on a multipart and on a resumable upload.
        $multipart = $client->files->upload(UploadSource::fromBytes('for a day'), ['filename' => 'day.txt', 'expires_in' => 86_400]);
        self::assertInAbout(86_400, $multipart->expiry);
        $resumable = $client->files->upload($this->makeFile('day.bin', 100_000), ['resumable' => true, 'expires_in' => 86_400]);
        self::assertInAbout(86_400, $resumable->expiry);
        self::assertSame($resumable->expires_at, $client->files->get($resumable->file_id)->expires_at);

        // Gone at expires_at, for the API and every link, whether set on upload or later.
        $short = $client->files->upload(UploadSource::fromBytes('two seconds'), ['filename' => 'short.txt', 'expires_in' => 2]);
        $later = $client->files->update($file, ['expires_in' => 2]);
        $link = $client->links->create($later);
        $until = max($short->expiry->getTimestamp(), $later->expiry->getTimestamp());
        $before = $client->stats()->stats->total_files;
        while (time() <= $until) {
            usleep(100_000);
        }
        self::assertSame($before - 2, $client->stats()->stats->total_files, 'expired files leave the stats');
        foreach ([$short, $later] as $gone) {
            self::assertFails(NotFoundException::class, 404, 'not_found', fn () => $client->files->get($gone->file_id));
            self::assertFails(NotFoundException::class, 404, 'not_found', fn () => $client->download($gone, "$this->dir/gone.txt"));
            self::assertFails(NotFoundException::class, 404, 'not_found', fn () => $client->links->list($gone->file_id));
        }
        self::assertFails(NotFoundException::class, 404, 'not_found', fn () => $client->download($link, "$this->dir/gone.txt"));
    }

    public function testAHundredLinksAtMostPerFile(): void
    {
        $client = Server::client();
        $file = $client->files->upload(UploadSource::fromBytes('popular'), ['filename' => 'popular.txt']);
        $last = null;
        for ($i = 1; $i < 100; ++$i) { // the default link is the first of the hundred
            $last = $client->links->create($file, ['label' => "link $i"]);
        }
        self::assertFails(LimitExceededException::class, 403, 'link_limit_exceeded', fn () => $client->links->create($file));
        $client->links->delete($last);
        self::assertSame('one more', $client->links->create($file, ['label' => 'one more'])->label, 'a revoked link frees its place');
    }
}
