<?php

declare(strict_types=1);

namespace Fileshare\Tests\Integration;

use Fileshare\Client;
use Fileshare\Exception\IntegrityException;
use Fileshare\Tests\Support\CutStream;
use Fileshare\Tests\Support\IntegrationTestCase;
use Fileshare\Tests\Support\Server;
use GuzzleHttp\Exception\ConnectException;
use GuzzleHttp\HandlerStack;
use GuzzleHttp\Promise\Create;
use GuzzleHttp\Psr7\Response;
use GuzzleHttp\Utils;
use Psr\Http\Message\RequestInterface;

/** Resumable uploads (tus) interrupted and resumed, large files in flat memory. */
final class ResumableTest extends IntegrationTestCase
{
    /**
     * A client whose Guzzle handler lets $interfere act on the Nth PATCH; records the methods.
     *
     * @param list<string>                                      $methods
     * @param callable(RequestInterface, array<string, mixed>, callable): mixed $interfere
     */
    private function client(array &$methods, int $nth, callable $interfere, array $options = []): Client
    {
        $real = Utils::chooseHandler();
        $patches = 0;
        $handler = static function (RequestInterface $request, array $options) use (&$methods, &$patches, $nth, $interfere, $real) {
            $methods[] = $request->getMethod();
            if ($request->getMethod() === 'PATCH' && ++$patches === $nth) {
                return $interfere($request, $options, $real);
            }

            return $real($request, $options);
        };

        return Server::client('pro', $options + [
            'http_client' => new \GuzzleHttp\Client(['handler' => HandlerStack::create($handler)]),
            'chunk_size' => 1 << 20,
            'sleep' => static function (): void {
            },
        ]);
    }

    public function testAChunkCutMidwayIsResumedWhereTheServerStands(): void
    {
        $path = $this->makeFile('cut.bin', 5 * 1024 * 1024 + 3);
        $methods = [];
        $client = $this->client($methods, 2, static function (RequestInterface $request, array $options, callable $real) {
            // Half the chunk goes out, then nothing more: the connection stalls until the idle timeout.
            return $real($request->withBody(new CutStream($request->getBody(), 512 * 1024)), $options);
        }, ['timeout' => 2]);
        $progress = [];
        $file = $client->files->upload($path, ['resumable' => true, 'on_progress' => function (int $s, ?int $t) use (&$progress): void {
            $progress[] = $s;
        }]);
        self::assertSame(hash_file('sha256', $path), $file->sha256);
        self::assertSame(filesize($path), $file->size);
        self::assertContains("HEAD", $methods);
        self::assertSame(['OPTIONS', 'POST', 'PATCH', 'PATCH', 'HEAD'], \array_slice($methods, 0, 5));
        self::assertSame(filesize($path), end($progress));
        $copy = "$this->dir/copy.bin";
        Server::client()->download($file, $copy);
        self::assertSame($file->sha256, hash_file('sha256', $copy));
    }

    public function testAChunkWhoseAnswerIsLostIsNotSentTwice(): void
    {
        $path = $this->makeFile('lost.bin', 3 * 1024 * 1024);
        $methods = [];
        $client = $this->client($methods, 2, static function (RequestInterface $request, array $options, callable $real) {
            // The server stores the chunk, but its answer never arrives.
            return $real($request, $options)->then(static fn () => Create::rejectionFor(new ConnectException('Connection reset by peer', $request)));
        });
        $file = $client->files->upload($path, ['resumable' => true]);
        self::assertSame(hash_file('sha256', $path), $file->sha256);
        self::assertSame(['OPTIONS', 'POST', 'PATCH', 'PATCH', 'HEAD', 'PATCH', 'GET'], $methods);
    }

    public function testIntegrityExceptionWhenTheServerReportsAnotherSha256(): void
    {
        $path = $this->makeFile('corrupt.bin', 100_000);
        $methods = [];
        $real = Utils::chooseHandler();
        $handler = static function (RequestInterface $request, array $options) use ($real) {
            return $real($request, $options)->then(static function (Response $response) {
                $body = (string) $response->getBody();
                $corrupt = preg_replace('/"sha256":"[0-9a-f]{64}"/', '"sha256":"' . str_repeat('0', 64) . '"', $body);

                return $response->withBody(\GuzzleHttp\Psr7\Utils::streamFor($corrupt));
            });
        };
        $client = Server::client('pro', ['http_client' => new \GuzzleHttp\Client(['handler' => HandlerStack::create($handler)])]);
        foreach ([false, true] as $resumable) {
            try {
                $client->files->upload($path, ['resumable' => $resumable]);
                self::fail('no exception');
            } catch (IntegrityException $e) {
                self::assertSame(str_repeat('0', 64), $e->getExpected());
                self::assertSame(hash_file('sha256', $path), $e->getActual());
            }
        }
    }

    public function testA200MiBUploadAndDownloadInFlatMemory(): void
    {
        $size = 200 * 1024 * 1024;
        $path = $this->makeFile('large.bin', $size);
        $sha = hash_file('sha256', $path);
        $client = Server::client();
        $limit = 16 * 1024 * 1024;
        $copy = "$this->dir/large-copy.bin";

        foreach (['multipart' => false, 'resumable' => null] as $how => $resumable) {
            gc_collect_cycles();
            $base = memory_get_usage();
            memory_reset_peak_usage();
            $calls = 0;
            $file = $client->files->upload($path, ['resumable' => $resumable, 'on_progress' => function () use (&$calls): void {
                ++$calls;
            }]);
            $growth = memory_get_peak_usage() - $base;
            self::assertSame($sha, $file->sha256, $how);
            self::assertLessThan($limit, $growth, "$how upload: peak memory grew by $growth bytes");
            self::assertGreaterThan(10, $calls);
        }

        gc_collect_cycles();
        $base = memory_get_usage();
        memory_reset_peak_usage();
        $result = $client->download($file, $copy);
        $growth = memory_get_peak_usage() - $base;
        self::assertSame($sha, $result->sha256);
        self::assertLessThan($limit, $growth, "download: peak memory grew by $growth bytes");
        self::assertSame($size, filesize($copy));
    }
}
