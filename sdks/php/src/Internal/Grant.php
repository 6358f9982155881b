<?php

declare(strict_types=1);

namespace Fileshare\Internal;


/**
 * The first step of a download through a link: `POST /download/<token>` (with the password, if
 * any) counts one download and answers `303 See Other` to a grant URL,
 * `/download/<token>/<grant>`, which serves the file with Range for an hour and counts nothing
 * more. The redirect is read, never followed (the transport follows none).
 *
 * Every POST counts a download and carries no idempotency key, so it is sent again only when the
 * server answered 429 or 503 (nothing was counted) and asked to wait no longer than
 * Http::MAX_RETRY_AFTER; never after a connection failure, a timeout or another 5xx, where the
 * server may have counted it.
 *
 * @internal
 */
final class Grant
{
    /** Whether $url is a grant URL already (`…/download/<token>/<grant>`): then no POST is needed. */
    public static function isGrantUrl(string $url): bool
    {
        $path = parse_url($url, \PHP_URL_PATH);

        return \is_string($path) && preg_match('#/download/[^/]+/[^/]+/?$#', $path) === 1;
    }

    /** The grant URL for a link (absolute). No API key goes to the link. */
    public static function obtain(Http $http, string $link, #[\SensitiveParameter] ?string $password): string
    {
        // Always a JSON object, `{}` without a password: the server refuses a POST with no body at
        // all (400 invalid_request "The body must be object."), though an empty body is meant to do.
        $json = json_encode($password === null ? new \stdClass() : ['password' => $password], \JSON_THROW_ON_ERROR | \JSON_UNESCAPED_UNICODE);

        return $http->retry(
            static function () use ($http, $link, $json): string {
                $body = $http->streams->createStream($json);
                $response = $http->send($http->build('POST', $link, ['Content-Type' => 'application/json'], false, $body));
                try {
                    $text = (string) $response->getBody();
                } catch (\RuntimeException $error) {
                    throw Http::connectionError($error);
                }
                $status = $response->getStatusCode();
                if ($status !== 303 && ($status < 200 || $status > 299)) {
                    throw ErrorFactory::fromResponse($response, $text);
                }
                $url = $response->getHeaderLine('Location');
                if ($url === '') {
                    $data = json_decode($text, true);
                    $url = \is_array($data) && \is_string($data['download_url'] ?? null) ? $data['download_url'] : '';
                }
                if ($url === '') {
                    // A PSR-18 client that follows redirects by itself ends here, with the file's bytes.
                    throw ErrorFactory::unexpected($response, "$status: the link answered the POST without a grant URL (is the HTTP client following redirects?)");
                }

                return Http::resolve($link, $url);
            },
            [Http::class, 'wasRefused'],
        );
    }
}
