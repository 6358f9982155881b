<?php

declare(strict_types=1);

namespace Fileshare\Tests\Unit;

use Fileshare\Cancellation;
use Fileshare\Client;
use Fileshare\Exception\APIConnectionException;
use Fileshare\Exception\APITimeoutException;
use Fileshare\Exception\CancelledException;
use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\ExceptionInterface;
use Fileshare\Exception\FileshareException;
use Fileshare\Exception\NotFoundException;
use Fileshare\Model\FileList;
use Fileshare\Model\FileRecord;
use Fileshare\RawResponse;
use Fileshare\Tests\Support\MemoryLogger;
use Fileshare\Tests\Support\Mock;
use Fileshare\UploadSource;
use GuzzleHttp\Exception\ConnectException;
use GuzzleHttp\Promise\Create;
use GuzzleHttp\Psr7\Response;
use PHPUnit\Framework\TestCase;
use Psr\Http\Message\RequestInterface;

/** Issue 30: per-request options, withOptions(), raw responses, error data, timeouts, logging, cancellation, bytes. */
final class RoundTwoTest extends TestCase
{
    private static function fileAnswer(int $id = 1, array $headers = []): Response
    {
        return Mock::json(200, ['success' => true, 'file' => Mock::file('abc', $id)], $headers);
    }

    public function testABaseUrlWithoutApiV1SaysWhatToAdd(): void
    {
        foreach (['https://files.example.com', 'https://files.example.com/', 'https://files.example.com/api'] as $url) {
            try {
                new Client(['base_url' => $url, 'api_key' => Mock::KEY]);
                self::fail("accepted $url");
            } catch (ConfigurationException $e) {
                self::assertStringContainsString('add /api/v1', $e->getMessage());
                self::assertStringContainsString(rtrim($url, '/') . '/api/v1', $e->getMessage());
                self::assertInstanceOf(\InvalidArgumentException::class, $e);
            }
        }
        self::assertSame('https://files.example.com/api/v1', (new Client(['base_url' => 'https://files.example.com/api/v1/', 'api_key' => 'k']))->baseUrl);
    }

    public function testPerRequestOptionsReachTheRequest(): void
    {
        $mock = new Mock([self::fileAnswer(), Mock::error(503, 'unavailable'), Mock::json(200, ['success' => true, 'files' => [], 'pagination' => ['page' => 1, 'limit' => 20, 'total' => 0, 'total_pages' => 0]])]);
        $mock->client->files->get(1, ['timeout' => 7, 'headers' => ['X-Trace' => 'abc']]);
        $request = $mock->requests[0];
        self::assertSame('abc', $request['request']->getHeaderLine('X-Trace'));
        self::assertSame(7.0, $request['options']['read_timeout']);
        self::assertSame(7.0, $request['options']['connect_timeout']);
        try {
            $mock->client->files->list(requestOptions: ['max_retries' => 0]);
            self::fail('retried');
        } catch (FileshareException $e) {
            self::assertSame(503, $e->getStatus());
        }
        self::assertCount(2, $mock->requests, 'max_retries 0: one attempt');
        self::assertSame([], $mock->sleeps);

        $this->expectException(ConfigurationException::class);
        $mock->client->files->get(1, ['tiemout' => 1]);
    }

    public function testTheSdksOwnHeadersCannotBeReplaced(): void
    {
        $mock = new Mock([]);
        $this->expectException(ConfigurationException::class);
        $mock->client->files->get(1, ['headers' => ['Authorization' => 'Bearer other']]);
    }

    public function testWithOptionsCopiesTheClient(): void
    {
        $mock = new Mock([self::fileAnswer(), Mock::error(500, 'internal'), Mock::error(500, 'internal')]);
        $copy = $mock->client->withOptions(['timeout' => 3, 'max_retries' => 0, 'headers' => ['X-Team' => 'ops']]);
        self::assertNotSame($mock->client, $copy);
        self::assertSame(3.0, $copy->timeout);
        self::assertSame(0, $copy->maxRetries);
        self::assertSame(60.0, $mock->client->timeout, 'the original is left as it is');
        self::assertSame(Mock::BASE, $copy->baseUrl);
        $copy->files->get(1);
        self::assertSame('ops', $mock->requests[0]['request']->getHeaderLine('X-Team'));
        self::assertSame('Bearer ' . Mock::KEY, $mock->requests[0]['request']->getHeaderLine('Authorization'), 'the key is kept');
        self::assertSame(3.0, $mock->requests[0]['options']['read_timeout']);
        try {
            $copy->files->get(1);
        } catch (FileshareException) {
        }
        self::assertCount(2, $mock->requests, 'no retry in the copy');
        self::assertStringNotContainsString(Mock::KEY, print_r($copy, true));
    }

    public function testRawResponsesCarryStatusHeadersAndTheRecord(): void
    {
        $mock = new Mock([
            self::fileAnswer(5, ['RateLimit-Remaining' => '58', 'RateLimit-Limit' => '60', 'X-Request-Id' => 'req-1']),
            Mock::json(200, ['success' => true, 'files' => [Mock::file('x', 3)], 'pagination' => ['page' => 1, 'limit' => 20, 'total' => 1, 'total_pages' => 1]], ['RateLimit-Remaining' => '57']),
            new Response(204),
        ]);
        $raw = $mock->client->withRawResponse()->files->get(5);
        self::assertInstanceOf(RawResponse::class, $raw);
        self::assertSame(200, $raw->getStatusCode());
        self::assertSame('58', $raw->getHeaderLine('RateLimit-Remaining'));
        self::assertSame(58, $raw->getRateLimit()->remaining);
        self::assertSame(60, $raw->getRateLimit()->limit);
        self::assertSame('req-1', $raw->getRequestId());
        self::assertInstanceOf(FileRecord::class, $raw->data);
        self::assertSame(5, $raw->parse()->file_id);

        $list = $mock->client->withRawResponse()->files->list(limit: 20);
        self::assertInstanceOf(FileList::class, $list->data);
        self::assertSame(['57'], $list->getHeader('RateLimit-Remaining'));

        $deleted = $mock->client->withRawResponse()->files->delete(3);
        self::assertSame(204, $deleted->getStatusCode());
        self::assertNull($deleted->data);

        $this->expectException(ConfigurationException::class);
        $mock->client->withRawResponse()->files->iterate();
    }

    public function testEveryApiErrorHasItsHeadersAndBody(): void
    {
        $mock = new Mock([
            Mock::error(404, 'not_found', 'No such file.', ['RateLimit-Remaining' => '9']),
            new Response(502, ['Content-Type' => 'text/html', 'X-Request-Id' => 'req-proxy'], '<html>' . str_repeat('bad gateway ', 100) . '</html>'),
        ], ['max_retries' => 0]);
        try {
            $mock->client->files->get(1);
            self::fail('no exception');
        } catch (NotFoundException $e) {
            self::assertSame('9', $e->getHeaderLine('RateLimit-Remaining'));
            self::assertSame('No such file.', $e->getBody()['error']['message']);
            self::assertStringEndsWith('(request id req-404)', $e->getMessage());
        }
        try {
            $mock->client->files->get(1);
            self::fail('no exception');
        } catch (FileshareException $e) {
            self::assertSame(502, $e->getStatus());
            self::assertIsString($e->getBody());
            self::assertStringStartsWith('<html>', $e->getBody());
            self::assertLessThan(300, \strlen($e->getMessage()), 'the body is not echoed whole');
            self::assertStringEndsWith('(request id req-proxy)', $e->getMessage());
        }
    }

    public function testATimeoutIsAnApiTimeoutExceptionUnderTheConnectionOne(): void
    {
        $timeout = static fn (RequestInterface $r) => Create::rejectionFor(new ConnectException('cURL error 28: Operation timed out after 5001 milliseconds', $r, null, ['errno' => 28]));
        $mock = new Mock([$timeout, $timeout, $timeout]);
        try {
            $mock->client->files->get(1);
            self::fail('no exception');
        } catch (APITimeoutException $e) {
            self::assertInstanceOf(APIConnectionException::class, $e);
            self::assertCount(3, $mock->requests, 'retried as a connection failure');
        }
        $mock = new Mock([Mock::drop()], ['max_retries' => 0]);
        try {
            $mock->client->files->get(1);
            self::fail('no exception');
        } catch (APIConnectionException $e) {
            self::assertNotInstanceOf(APITimeoutException::class, $e);
        }
    }

    public function testAPsr3LoggerSeesEachExchangeAndRetryButNeverTheKey(): void
    {
        $logger = new MemoryLogger();
        $mock = new Mock([Mock::error(503, 'unavailable'), self::fileAnswer(1, ['X-Request-Id' => 'req-ok'])], ['logger' => $logger]);
        $mock->client->files->get(1);
        $text = $logger->text();
        self::assertStringContainsString('GET https://files.test/api/v1/files/1 -> 503', $text);
        self::assertStringContainsString('retrying in', $text);
        self::assertStringContainsString('-> 200', $text);
        self::assertStringContainsString('(request id req-ok)', $text);
        self::assertStringContainsString('Bearer [redacted]', $text, 'debug lines show the headers');
        self::assertStringNotContainsString(Mock::KEY, $text);
        self::assertStringNotContainsString(substr(Mock::KEY, 4, 20), $text);
    }

    public function testLinkTokensAreNotLogged(): void
    {
        $logger = new MemoryLogger();
        $mock = new Mock([Mock::grant(), new Response(200, ['ETag' => '"' . hash('sha256', 'abc') . '"', 'Content-Length' => '3'], 'abc')], ['logger' => $logger]);
        $out = fopen('php://memory', 'w+b');
        $mock->client->download('https://files.test/download/secrettoken', $out);
        self::assertStringNotContainsString('secrettoken', $logger->text());
        self::assertStringNotContainsString('grant1', $logger->text());
        self::assertStringContainsString('/download/[redacted]', $logger->text());
    }

    public function testACancelledUploadStopsAndIsNotRetried(): void
    {
        $mock = new Mock([Mock::json(201, ['success' => true] + Mock::file('x'))]);
        $cancel = new Cancellation();
        $path = tempnam(sys_get_temp_dir(), 'fs');
        file_put_contents($path, random_bytes(3 << 20));
        try {
            $mock->client->files->upload($path, ['cancellation' => $cancel, 'on_progress' => static function (int $sent) use ($cancel): void {
                if ($sent > 0) {
                    $cancel->cancel();
                }
            }]);
            self::fail('not cancelled');
        } catch (CancelledException $e) {
            self::assertInstanceOf(ExceptionInterface::class, $e);
        } finally {
            unlink($path);
        }
        self::assertCount(1, $mock->requests);
        self::assertLessThan(3 << 20, \strlen($mock->requests[0]['body']), 'the body stopped early');
        self::assertSame([], $mock->sleeps);

        $this->expectException(CancelledException::class);
        $mock->client->files->get(1, ['cancellation' => $cancel]); // cancelled already: nothing is sent
    }

    public function testACancelledDownloadStops(): void
    {
        $cancel = new Cancellation();
        $bytes = random_bytes(3 << 20);
        $mock = new Mock([Mock::grant(), new Response(200, ['ETag' => '"' . hash('sha256', $bytes) . '"', 'Content-Length' => (string) \strlen($bytes)], $bytes)]);
        $out = fopen('php://memory', 'w+b');
        $this->expectException(CancelledException::class);
        $mock->client->download('https://files.test/download/tok', $out, ['cancellation' => $cancel, 'on_progress' => static function (int $got) use ($cancel): void {
            if ($got > 0) {
                $cancel->cancel();
            }
        }]);
    }

    public function testBytesUploadDirectlyAndAStringThatIsNoPathIsNotEchoed(): void
    {
        $mock = new Mock([Mock::json(201, ['success' => true] + Mock::file('hello bytes', 4, 'file'))]);
        $file = $mock->client->files->uploadBytes('hello bytes', ['filename' => 'hello.txt']);
        self::assertSame(4, $file->file_id);
        self::assertStringContainsString("\r\n\r\nhello bytes\r\n", $mock->requests[0]['body']);
        self::assertStringContainsString('filename="hello.txt"', $mock->requests[0]['body']);

        $secret = "line one of a secret body\n" . str_repeat('s3cr3t ', 200);
        try {
            $mock->client->files->upload($secret);
            self::fail('no exception');
        } catch (ConfigurationException $e) {
            self::assertStringNotContainsString('s3cr3t', $e->getMessage());
            self::assertStringContainsString('uploadBytes()', $e->getMessage());
            self::assertStringContainsString(\strlen($secret) . '-byte string', $e->getMessage());
        }
        try {
            UploadSource::fromPath('/no/such/file.bin');
            self::fail('no exception');
        } catch (ConfigurationException $e) {
            self::assertSame('no such file: "/no/such/file.bin"', $e->getMessage());
        }
    }

    public function testEverySdkExceptionImplementsTheInterface(): void
    {
        foreach (glob(__DIR__ . '/../../src/Exception/*.php') as $file) {
            $class = 'Fileshare\\Exception\\' . basename($file, '.php');
            if ($class === ExceptionInterface::class) {
                continue;
            }
            self::assertTrue(is_subclass_of($class, ExceptionInterface::class), $class);
        }
        self::assertTrue(is_subclass_of(ConfigurationException::class, \InvalidArgumentException::class));
    }
}
