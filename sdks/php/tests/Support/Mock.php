<?php

declare(strict_types=1);

namespace Fileshare\Tests\Support;

use Fileshare\Client;
use GuzzleHttp\Handler\MockHandler;
use GuzzleHttp\HandlerStack;
use GuzzleHttp\Promise\Create;
use GuzzleHttp\Psr7\Response;
use Psr\Http\Message\RequestInterface;

/**
 * A Client on Guzzle's MockHandler. The handler reads each request body first, as a real
 * transport would (so the SDK's SHA-256 and progress see the bytes), and records every request
 * with its body in $requests.
 */
final class Mock
{
    public const BASE = 'https://files.test/api/v1';
    public const KEY = 'fsk_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG';

    /** @var list<array{request: RequestInterface, body: string, options: array<string, mixed>}> */
    public array $requests = [];
    /** @var list<float> */
    public array $sleeps = [];
    public MockHandler $handler;
    public Client $client;

    /**
     * @param list<mixed>          $queue   responses, exceptions, or callables (request, options) => response
     * @param array<string, mixed> $options Client options
     */
    public function __construct(array $queue, array $options = [])
    {
        $this->handler = new MockHandler($queue);
        $handler = function (RequestInterface $request, array $options) {
            $body = $request->getBody();
            $text = '';
            if ($body->isSeekable()) {
                $body->rewind();
            }
            while (!$body->eof()) {
                $piece = $body->read(65536);
                if ($piece === '') {
                    break;
                }
                $text .= $piece;
            }
            $this->requests[] = ['request' => $request, 'body' => $text, 'options' => $options];

            return ($this->handler)($request, $options);
        };
        $this->client = new Client($options + [
            'base_url' => self::BASE,
            'api_key' => self::KEY,
            'http_client' => new \GuzzleHttp\Client(['handler' => HandlerStack::create($handler)]),
            'sleep' => function (float $seconds): void {
                $this->sleeps[] = $seconds;
            },
            'random' => static fn (): float => 0.5,
        ]);
    }

    /** @param array<string, mixed> $data @param array<string, string> $headers */
    public static function json(int $status, array $data, array $headers = []): Response
    {
        return new Response($status, $headers + ['Content-Type' => 'application/json; charset=utf-8'], json_encode($data, \JSON_THROW_ON_ERROR));
    }

    /** @param array<string, string> $headers */
    public static function error(int $status, string $code, string $message = 'nope', array $headers = []): Response
    {
        return self::json($status, ['success' => false, 'error' => ['code' => $code, 'message' => $message]], $headers + ['X-Request-Id' => 'req-' . $status]);
    }

    /** @return array<string, mixed> a file object for these bytes */
    public static function file(string $bytes, int $id = 1, string $name = 'a.bin', ?string $sha256 = null): array
    {
        return [
            'file_id' => $id,
            'filename' => $name,
            'size' => \strlen($bytes),
            'upload_date' => '2026-11-22 00:17:19',
            'download_count' => 0,
            'public_link' => 'https://files.test/download/tok' . $id,
            'content_type' => 'application/octet-stream',
            'sha256' => $sha256 ?? hash('sha256', $bytes),
            'expires_at' => null,
            'scan' => null,
        ];
    }

    /**
     * @param array<string, mixed> $fields
     *
     * @return array<string, mixed> a link object
     */
    public static function link(int $id = 12, int $fileId = 1, array $fields = []): array
    {
        return array_replace([
            'link_id' => $id,
            'file_id' => $fileId,
            'url' => 'https://files.test/download/link' . $id,
            'default' => false,
            'label' => null,
            'expires_at' => null,
            'max_downloads' => null,
            'download_count' => 0,
            'password_protected' => false,
            'status' => 'active',
            'created_at' => '2026-11-27 10:00:00',
        ], $fields);
    }

    /** The link's answer to a download POST: 303 to a grant URL ($location as the Location header). */
    public static function grant(string $location = 'https://files.test/download/tok1/grant1'): Response
    {
        return self::json(303, ['success' => true, 'download_url' => $location, 'expires_at' => '2026-11-27 11:00:00'], ['Location' => $location]);
    }

    /** A callable answer that fails as a dropped connection would. */
    public static function drop(string $message = 'Connection reset by peer'): callable
    {
        return static fn (RequestInterface $request) => Create::rejectionFor(new \GuzzleHttp\Exception\ConnectException($message, $request));
    }
}
