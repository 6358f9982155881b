<?php

declare(strict_types=1);

namespace Fileshare\Tests\Unit;

use Fileshare\Client;
use Fileshare\Exception\APIConnectionException;
use Fileshare\Exception\AuthenticationException;
use Fileshare\Exception\FileshareException;
use Fileshare\Exception\IntegrityException;
use Fileshare\Exception\NotFoundException;
use Fileshare\Exception\RateLimitException;
use Fileshare\Exception\ServerException;
use Fileshare\Model\FileRecord;
use Fileshare\Model\Link;
use Fileshare\Tests\Support\Mock;
use GuzzleHttp\Psr7\HttpFactory;
use GuzzleHttp\Psr7\Response;
use PHPUnit\Framework\TestCase;
use Psr\Http\Client\ClientInterface;
use Psr\Http\Message\RequestInterface;
use Psr\Http\Message\ResponseInterface;

final class DownloadTest extends TestCase
{
    private const GRANT = 'https://files.test/download/tok1/grant1';

    private string $path;
    private string $bytes;
    private FileRecord $file;

    protected function setUp(): void
    {
        $this->path = tempnam(sys_get_temp_dir(), 'fileshare-php-dl-');
        unlink($this->path);
        $this->bytes = random_bytes(5000);
        $this->file = FileRecord::fromArray(Mock::file($this->bytes));
    }

    protected function tearDown(): void
    {
        @unlink($this->path);
    }

    private function etag(): string
    {
        return '"' . hash('sha256', $this->bytes) . '"';
    }

    private function whole(): Response
    {
        return new Response(200, ['ETag' => $this->etag(), 'Content-Length' => (string) \strlen($this->bytes)], $this->bytes);
    }

    private function partial(int $from, ?int $to = null): Response
    {
        $to ??= \strlen($this->bytes) - 1;

        return new Response(206, ['ETag' => $this->etag(), 'Content-Range' => "bytes $from-$to/" . \strlen($this->bytes),
            'Content-Length' => (string) ($to - $from + 1)], substr($this->bytes, $from, $to - $from + 1));
    }

    /** @return list<string> "METHOD url" of each request */
    private static function calls(Mock $mock): array
    {
        return array_map(static fn (array $r): string => $r['request']->getMethod() . ' ' . $r['request']->getUri(), $mock->requests);
    }

    public function testPostsForAGrantThenStreamsTheGrant(): void
    {
        $mock = new Mock([Mock::grant(self::GRANT), $this->whole()]);
        $result = $mock->client->download($this->file, $this->path);
        self::assertSame(['POST https://files.test/download/tok1', 'GET ' . self::GRANT], self::calls($mock));
        $post = $mock->requests[0];
        self::assertSame('{}', $post['body'], 'no password: an empty JSON object');
        self::assertSame('application/json', $post['request']->getHeaderLine('Content-Type'));
        self::assertSame('', $post['request']->getHeaderLine('Authorization'), 'no key to a link');
        self::assertSame('', $mock->requests[1]['request']->getHeaderLine('Authorization'), 'no key to a grant');
        self::assertFalse($post['options']['allow_redirects'], 'the 303 is read, not followed');
        self::assertSame($this->bytes, file_get_contents($this->path));
        self::assertSame(self::GRANT, $result->grant_url);
        self::assertSame(0, $result->resumed_from);
    }

    public function testThePasswordGoesInAJsonBodyNeverInTheUrl(): void
    {
        $mock = new Mock([Mock::grant(self::GRANT), $this->whole()]);
        $mock->client->download('https://files.test/download/tok1', $this->path, ['password' => 'correct horse "battery"']);
        $post = $mock->requests[0];
        self::assertSame('application/json', $post['request']->getHeaderLine('Content-Type'));
        self::assertSame(['password' => 'correct horse "battery"'], json_decode($post['body'], true));
        self::assertSame('https://files.test/download/tok1', (string) $post['request']->getUri());
        self::assertStringNotContainsString('horse', (string) $mock->requests[1]['request']->getUri());
    }

    public function testAWrongPasswordIsAnAuthenticationExceptionThatShowsNoPassword(): void
    {
        $mock = new Mock([Mock::error(401, 'invalid_password', 'The password is wrong.')]);
        try {
            $mock->client->download($this->file, $this->path, ['password' => 'hunter2hunter2']);
            self::fail('no exception');
        } catch (AuthenticationException $e) {
            self::assertSame('invalid_password', $e->getErrorCode());
            self::assertSame(401, $e->getStatus());
            self::assertStringNotContainsString('hunter2', $e->getMessage());
            self::assertStringNotContainsString('hunter2', $e->getTraceAsString());
        }
        self::assertCount(1, $mock->requests, 'a wrong password is not retried');
        self::assertFileDoesNotExist($this->path);
    }

    public function testTheGrantComesFromTheBodyOrARelativeLocation(): void
    {
        $mock = new Mock([Mock::json(200, ['success' => true, 'download_url' => self::GRANT]), $this->whole()]);
        $mock->client->download($this->file, $this->path);
        self::assertSame('GET ' . self::GRANT, self::calls($mock)[1]);

        $mock = new Mock([new Response(303, ['Location' => '/download/tok1/g2']), $this->whole()]);
        $result = $mock->client->download($this->file, $this->path, ['resume' => false]);
        self::assertSame('GET https://files.test/download/tok1/g2', self::calls($mock)[1]);
        self::assertSame('https://files.test/download/tok1/g2', $result->grant_url);
    }

    public function testAnAnswerWithoutAGrantIsAnError(): void
    {
        // What a PSR-18 client that followed the redirect by itself would hand back: the file.
        $mock = new Mock([$this->whole()]);
        $this->expectException(FileshareException::class);
        $this->expectExceptionMessage('without a grant URL');
        $mock->client->download($this->file, $this->path);
    }

    public function testThePostIsNeverRetriedAfterAConnectionFailureOrA500(): void
    {
        foreach ([[Mock::drop(), APIConnectionException::class], [Mock::error(500, 'internal_error'), ServerException::class],
            [Mock::error(504, 'gateway_timeout'), ServerException::class]] as [$failure, $class]) {
            $mock = new Mock([$failure, Mock::grant(), $this->whole()]);
            try {
                $mock->client->download($this->file, $this->path);
                self::fail('no exception');
            } catch (FileshareException $e) {
                self::assertInstanceOf($class, $e);
            }
            self::assertCount(1, $mock->requests);
            self::assertSame([], $mock->sleeps);
            self::assertFalse($mock->requests[0]['request']->hasHeader('Idempotency-Key'), 'the download POST carries no key');
        }
    }

    public function testThePostIsRetriedWhenNothingWasCounted(): void
    {
        $mock = new Mock([Mock::error(503, 'service_unavailable'), Mock::error(429, 'rate_limited', 'x', ['Retry-After' => '2']),
            Mock::grant(self::GRANT), $this->whole()]);
        $mock->client->download($this->file, $this->path);
        self::assertSame(['POST', 'POST', 'POST', 'GET'], array_map(static fn (array $r): string => $r['request']->getMethod(), $mock->requests));
        self::assertSame([0.25, 2.0], $mock->sleeps);

        // Ten wrong passwords: a wait of minutes is not slept through.
        unlink($this->path);
        $mock = new Mock([Mock::error(429, 'rate_limited', 'Too many wrong passwords.', ['Retry-After' => '840']), Mock::grant()]);
        try {
            $mock->client->download($this->file, $this->path, ['password' => 'wrongwrong']);
            self::fail('no exception');
        } catch (RateLimitException $e) {
            self::assertSame(840, $e->getRetryAfter());
        }
        self::assertCount(1, $mock->requests);
    }

    public function testADroppedDownloadContinuesThroughTheSameGrant(): void
    {
        $mock = new Mock([
            Mock::grant(self::GRANT),
            new Response(200, ['ETag' => $this->etag(), 'Content-Length' => '5000'], substr($this->bytes, 0, 3000)), // cut short
            Mock::drop(),
            $this->partial(3000),
        ]);
        $result = $mock->client->download($this->file->public_link, $this->path);
        self::assertSame(0, $result->resumed_from);
        self::assertSame($this->bytes, file_get_contents($this->path));
        self::assertSame(['POST https://files.test/download/tok1', 'GET ' . self::GRANT, 'GET ' . self::GRANT, 'GET ' . self::GRANT], self::calls($mock));
        self::assertSame('', $mock->requests[1]['request']->getHeaderLine('Range'));
        self::assertSame('bytes=3000-', $mock->requests[3]['request']->getHeaderLine('Range'));
        self::assertSame($this->etag(), $mock->requests[3]['request']->getHeaderLine('If-Range'));
    }

    public function testAGrantUrlIsReadWithoutAnotherPost(): void
    {
        file_put_contents($this->path, substr($this->bytes, 0, 1000));
        $mock = new Mock([new Response(200, ['ETag' => $this->etag(), 'Content-Length' => '5000']), $this->partial(1000)]);
        $result = $mock->client->download(self::GRANT, $this->path);
        self::assertSame(['HEAD ' . self::GRANT, 'GET ' . self::GRANT], self::calls($mock));
        self::assertSame(1000, $result->resumed_from);
        self::assertSame($this->bytes, file_get_contents($this->path));
    }

    public function testALinkRecordIsDownloadedThroughItsUrl(): void
    {
        $link = Link::fromArray(Mock::link(12, 1, ['url' => 'https://files.test/download/abc', 'password_protected' => true]));
        $mock = new Mock([Mock::grant('https://files.test/download/abc/g'), $this->whole()]);
        $mock->client->download($link, $this->path, ['password' => 'longenough']);
        self::assertSame(['POST https://files.test/download/abc', 'GET https://files.test/download/abc/g'], self::calls($mock));
    }

    public function testThroughAPsr18Client(): void
    {
        $psr18 = new class ([Mock::grant(self::GRANT), $this->whole()]) implements ClientInterface {
            /** @var list<RequestInterface> */
            public array $seen = [];

            /** @param list<ResponseInterface> $answers */
            public function __construct(private array $answers)
            {
            }

            public function sendRequest(RequestInterface $request): ResponseInterface
            {
                $this->seen[] = $request;

                return array_shift($this->answers);
            }
        };
        $factory = new HttpFactory();
        $client = new Client(['base_url' => Mock::BASE, 'api_key' => Mock::KEY, 'http_client' => $psr18,
            'request_factory' => $factory, 'stream_factory' => $factory]);
        $result = $client->download($this->file, $this->path);
        self::assertSame($this->bytes, file_get_contents($this->path));
        self::assertSame(self::GRANT, $result->grant_url);
        self::assertSame(['POST', 'GET'], array_map(static fn (RequestInterface $r): string => $r->getMethod(), $psr18->seen));
        self::assertSame('{}', (string) $psr18->seen[0]->getBody());
    }

    public function testResumesAPartialFileWithRangeAndIfRange(): void
    {
        file_put_contents($this->path, substr($this->bytes, 0, 1200));
        $mock = new Mock([Mock::grant(self::GRANT), $this->partial(1200)]);
        $progress = [];
        $result = $mock->client->download($this->file, $this->path, ['on_progress' => function (int $s, ?int $t) use (&$progress): void {
            $progress[] = [$s, $t];
        }]);
        self::assertSame(1200, $result->resumed_from);
        self::assertSame(5000, $result->size);
        self::assertSame($this->bytes, file_get_contents($this->path));
        $request = $mock->requests[1]['request'];
        self::assertSame('bytes=1200-', $request->getHeaderLine('Range'));
        self::assertSame($this->etag(), $request->getHeaderLine('If-Range'));
        self::assertSame('', $request->getHeaderLine('Authorization'), 'no key to a public link');
        self::assertSame([1200, 5000], $progress[0]);
        self::assertSame([5000, 5000], end($progress));
    }

    public function testACompleteFileOfARecordIsCheckedWithoutCountingADownload(): void
    {
        file_put_contents($this->path, $this->bytes);
        $mock = new Mock([]);
        $result = $mock->client->download($this->file, $this->path);
        self::assertSame([], $mock->requests);
        self::assertSame(5000, $result->resumed_from);
        self::assertNull($result->grant_url);
    }

    public function testStartsOverWhenTheFileChanged(): void
    {
        file_put_contents($this->path, 'something else entirely');
        $mock = new Mock([Mock::grant(), $this->whole()]);
        $result = $mock->client->download($this->file, $this->path);
        self::assertSame(0, $result->resumed_from);
        self::assertSame($this->bytes, file_get_contents($this->path));
    }

    public function testIntegrityExceptionAfterResumingAForeignPartialFile(): void
    {
        file_put_contents($this->path, str_repeat('x', 1200));
        $mock = new Mock([Mock::grant(), $this->partial(1200)]);
        try {
            $mock->client->download($this->file, $this->path);
            self::fail('no exception');
        } catch (IntegrityException $e) {
            self::assertStringContainsString("'resume' => false", $e->getMessage());
            self::assertSame(hash('sha256', $this->bytes), $e->getExpected());
        }
        // Without resume the file is downloaded whole.
        $mock = new Mock([Mock::grant(), new Response(200, ['ETag' => $this->etag()], $this->bytes)]);
        $result = $mock->client->download($this->file, $this->path, ['resume' => false]);
        self::assertSame($this->bytes, file_get_contents($this->path));
        self::assertSame('', $mock->requests[1]['request']->getHeaderLine('Range'));
        self::assertSame(0, $result->resumed_from);
    }

    public function testToAStreamAndErrors(): void
    {
        $mock = new Mock([Mock::grant(), new Response(200, ['ETag' => $this->etag()], $this->bytes), Mock::error(404, 'not_found', 'No file behind this link.')]);
        $out = fopen('php://memory', 'w+b');
        $mock->client->download($this->file, $out);
        rewind($out);
        self::assertSame($this->bytes, stream_get_contents($out));
        $this->expectException(NotFoundException::class);
        $this->expectExceptionMessage('No file behind this link.');
        $mock->client->download($this->file, $this->path);
    }

    public function testEtagMismatch(): void
    {
        $mock = new Mock([Mock::grant(), new Response(200, ['ETag' => $this->etag()], 'tampered')]);
        $this->expectException(IntegrityException::class);
        $mock->client->download($this->file->public_link, $this->path);
    }
}
