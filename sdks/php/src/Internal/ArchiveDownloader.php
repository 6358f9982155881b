<?php

declare(strict_types=1);

namespace Fileshare\Internal;

use Fileshare\Exception\APIConnectionException;
use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\FileshareException;
use Fileshare\Model\ArchiveResult;
use Fileshare\UploadSource;
use Psr\Http\Message\ResponseInterface;
use Psr\Http\Message\StreamInterface;

/**
 * downloadArchive(): several files as one ZIP (POST /files/archive), streamed to a path or a
 * stream. The server makes the archive as it sends it, so there is no Range to continue one: a
 * connection lost before the first byte is retried, one lost later starts the archive again where
 * the destination can be rewritten (a path), and a path that did not get the whole archive is
 * removed, so that a broken ZIP is never left where a finished one is expected.
 *
 * @internal
 */
final class ArchiveDownloader implements ResponseSink
{
    /** The most files one archive may hold (the server's limit). */
    public const MAX_FILES = 1000;

    private ?string $path = null;
    /** @var resource|null */
    private $file = null;
    /** @var resource|StreamInterface|null */
    private $stream = null;
    private int $received = 0;
    private ?int $total = null;
    private bool $error = false;
    private bool $opened = false;
    private string $errorBody = '';

    /** @param (callable(int, ?int): void)|null $onProgress */
    private function __construct(private readonly Http $http, private readonly mixed $onProgress)
    {
    }

    /**
     * @param list<int|string>                             $fileIds
     * @param string|\SplFileInfo|resource|StreamInterface $destination
     * @param (callable(int, ?int): void)|null             $onProgress
     */
    public static function download(Http $http, array $fileIds, mixed $destination, ?callable $onProgress): ArchiveResult
    {
        $ids = self::ids($fileIds);
        $self = new self($http, $onProgress);
        if (\is_string($destination) || $destination instanceof \SplFileInfo) {
            $self->path = (string) $destination;
            if ($self->path === '' || is_dir($self->path)) {
                throw new ConfigurationException('download destination is a directory: ' . UploadSource::describe($self->path, false));
            }
        } elseif ($destination instanceof StreamInterface || (\is_resource($destination) && get_resource_type($destination) === 'stream')) {
            $self->stream = $destination;
        } else {
            throw new ConfigurationException('unsupported download destination ' . get_debug_type($destination)
                . ': pass a path, a writable stream resource or a PSR-7 stream');
        }
        $body = json_encode(['ids' => $ids], \JSON_THROW_ON_ERROR);
        try {
            return $self->run($body);
        } catch (\Throwable $error) {
            $self->closeFile();
            // Only a file this call opened (and so truncated) is removed: a refused call leaves what was there.
            if ($self->opened && $self->path !== null && is_file($self->path)) {
                @unlink($self->path);
            }
            throw $error;
        } finally {
            $self->closeFile();
        }
    }

    /**
     * @param array<mixed> $fileIds
     *
     * @return list<int>
     */
    private static function ids(array $fileIds): array
    {
        if ($fileIds === []) {
            throw new ConfigurationException('downloadArchive needs at least one file id');
        }
        if (\count($fileIds) > self::MAX_FILES) {
            throw new ConfigurationException('downloadArchive takes at most ' . self::MAX_FILES . ' file ids');
        }
        $ids = [];
        foreach ($fileIds as $id) {
            if (!(\is_int($id) && $id >= 1) && !(\is_string($id) && preg_match('/^[1-9][0-9]*$/', $id) === 1)) {
                throw new ConfigurationException('not a file id: ' . var_export($id, true));
            }
            $ids[] = (int) $id;
        }

        return $ids;
    }

    private function run(string $body): ArchiveResult
    {
        $http = $this->http;
        $failures = 0;
        for (;;) {
            $this->error = false;
            $this->errorBody = '';
            try {
                $request = $http->build('POST', $http->url('/files/archive'),
                    ['Content-Type' => 'application/json', 'Accept' => 'application/zip, application/json'], true, $http->streams->createStream($body));
                $response = $http->send($request, $this);
                if ($this->error) {
                    throw ErrorFactory::fromResponse($response, $this->errorBody);
                }
                // The server cuts the connection when a stored file fails mid-archive: never a short ZIP taken as whole.
                if ($this->total !== null && $this->received !== $this->total) {
                    throw new APIConnectionException("the connection ended after {$this->received} of {$this->total} bytes");
                }
                if ($this->path !== null && $this->file === null) {
                    $this->openFile();
                }
                $name = preg_match('/filename="([^"]*)"/', $response->getHeaderLine('Content-Disposition'), $m) === 1 ? $m[1] : null;

                return new ArchiveResult($this->received, $name);
            } catch (FileshareException $error) {
                // The budget is never given back: an archive does not resume, so every attempt downloads it from
                // its first byte, and a store that cuts each attempt near the same offset must not buy more of them.
                $canRetry = $this->received === 0 || $this->path !== null;
                if (!Http::isRetryable($error) || $failures >= $http->maxRetries || !$canRetry) {
                    throw $error;
                }
                $http->pause($failures, $error);
                ++$failures;
            }
        }
    }

    public function begin(ResponseInterface $response): void
    {
        if ($response->getStatusCode() !== 200) {
            $this->error = true;

            return;
        }
        if ($this->received > 0) {
            // A second attempt after bytes were written: only a path can take the archive again.
            if ($this->file !== null) {
                ftruncate($this->file, 0);
                rewind($this->file);
            }
            $this->received = 0;
        }
        $length = $response->getHeaderLine('Content-Length');
        $this->total = ctype_digit($length) ? (int) $length : null;
        $this->progress();
    }

    public function write(string $data): void
    {
        if ($this->error) {
            if (\strlen($this->errorBody) < 65536) {
                $this->errorBody .= $data;
            }

            return;
        }
        if ($this->path !== null) {
            if ($this->file === null) {
                $this->openFile();
            }
            $target = $this->file;
        } else {
            $target = $this->stream;
        }
        if ($target instanceof StreamInterface) {
            $target->write($data);
        } else {
            $left = $data;
            while ($left !== '') {
                $written = @fwrite($target, $left);
                if ($written === false || $written === 0) {
                    throw new FileshareException('could not write the archive: ' . (error_get_last()['message'] ?? 'write error'));
                }
                $left = substr($left, $written);
            }
        }
        $this->received += \strlen($data);
        $this->progress();
    }

    private function progress(): void
    {
        if ($this->onProgress !== null) {
            ($this->onProgress)($this->received, $this->total);
        }
    }

    private function openFile(): void
    {
        $file = @fopen((string) $this->path, 'w+b');
        if ($file === false) {
            throw new ConfigurationException('cannot open the download destination: ' . UploadSource::describe($this->path, false));
        }
        $this->file = $file;
        $this->opened = true;
    }

    private function closeFile(): void
    {
        if ($this->file !== null) {
            fclose($this->file);
            $this->file = null;
        }
    }
}
