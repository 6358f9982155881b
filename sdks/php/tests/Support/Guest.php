<?php

declare(strict_types=1);

namespace Fileshare\Tests\Support;

use Fileshare\Model\UploadRequest;
use Psr\Http\Message\ResponseInterface;

/** What a guest of an upload request does, in raw HTTP (no key, no SDK), as the guest page does. */
final class Guest
{
    /** The token of a request: the last path segment of its url. */
    public static function token(UploadRequest $request): string
    {
        return substr($request->url, strrpos($request->url, '/') + 1);
    }

    /** A one-request tus upload (creation-with-upload) of $bytes into $request (every status answered). */
    public static function upload(UploadRequest|string $request, string $bytes, string $filename = 'hello.txt', ?string $grant = null): ResponseInterface
    {
        $headers = [
            'Tus-Resumable' => '1.0.0',
            'Authorization' => 'UploadRequest ' . ($request instanceof UploadRequest ? self::token($request) : $request),
            'Upload-Length' => (string) \strlen($bytes),
            'Upload-Metadata' => 'filename ' . base64_encode($filename),
            'Content-Type' => 'application/offset+octet-stream',
        ];
        if ($grant !== null) {
            $headers['Fileshare-Upload-Grant'] = $grant;
        }

        return (new \GuzzleHttp\Client(['http_errors' => false, 'timeout' => 30]))
            ->post(Server::info()['base_url'] . '/uploads', ['headers' => $headers, 'body' => $bytes]);
    }
}
