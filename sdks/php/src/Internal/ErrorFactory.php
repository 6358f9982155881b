<?php

declare(strict_types=1);

namespace Fileshare\Internal;

use Fileshare\Exception\AuthenticationException;
use Fileshare\Exception\BadRequestException;
use Fileshare\Exception\FileshareException;
use Fileshare\Exception\InsufficientScopeException;
use Fileshare\Exception\IpNotAllowedException;
use Fileshare\Exception\LimitExceededException;
use Fileshare\Exception\NotFoundException;
use Fileshare\Exception\PermissionDeniedException;
use Fileshare\Exception\RateLimitException;
use Fileshare\Exception\ScanPendingException;
use Fileshare\Exception\ServerException;
use Fileshare\Model\RateLimitInfo;
use Psr\Http\Message\ResponseInterface;

/** @internal */
final class ErrorFactory
{
    /**
     * 403 codes of an account or resource limit (LimitExceededException); `insufficient_scope` and
     * `ip_not_allowed` have their own PermissionDeniedException subclasses, other 403s are
     * PermissionDeniedException.
     */
    private const LIMIT_CODES = ['file_too_large', 'daily_upload_limit_exceeded', 'storage_quota_exceeded', 'link_limit_exceeded',
        'webhook_limit_exceeded', 'upload_request_full', 'file_not_scannable'];

    /** `Retry-After` in seconds (delta-seconds or an HTTP date), or null. */
    public static function parseRetryAfter(string $value, ?int $now = null): ?int
    {
        $value = trim($value);
        if ($value === '') {
            return null;
        }
        if (preg_match('/^\d+$/', $value) === 1) {
            return (int) $value;
        }
        $time = strtotime($value);
        if ($time === false) {
            return null;
        }

        return max(0, $time - ($now ?? time()));
    }

    private static function headerInt(ResponseInterface $response, string $name): ?int
    {
        $value = trim($response->getHeaderLine($name));

        return preg_match('/^\d+$/', $value) === 1 ? (int) $value : null;
    }

    /**
     * An exception about an answer that succeeded but is not what the SDK needs: its status,
     * request id (in the message too) and headers.
     *
     * @template E of FileshareException
     *
     * @param class-string<E> $class
     *
     * @return E
     */
    public static function unexpected(ResponseInterface $response, string $message, string $class = FileshareException::class): FileshareException
    {
        $requestId = $response->getHeaderLine('X-Request-Id');

        return new $class($message, $response->getStatusCode(), null, $requestId === '' ? null : $requestId, null, null, $response->getHeaders());
    }

    /** At most 200 characters of a body that is not the API's error object, on one line. */
    public static function excerpt(string $body): string
    {
        $text = trim((string) preg_replace('/\s+/', ' ', $body));

        if (\strlen($text) <= 200) {
            return $text;
        }
        // 200 characters of UTF-8 text, else 200 bytes.
        $cut = preg_match('/^.{200}/su', $text, $m) === 1 ? $m[0] : substr($text, 0, 200);

        return $cut === $text ? $text : $cut . '…';
    }

    /** The exception for a response that is not a success, from its status, body and headers. */
    public static function fromResponse(ResponseInterface $response, string $body): FileshareException
    {
        $status = $response->getStatusCode();
        $code = null;
        $serverMessage = null;
        $decoded = json_decode($body, true);
        if (\is_array($decoded) && \is_array($decoded['error'] ?? null)) {
            $code = \is_string($decoded['error']['code'] ?? null) ? $decoded['error']['code'] : null;
            $serverMessage = \is_string($decoded['error']['message'] ?? null) ? $decoded['error']['message'] : null;
        }
        $requestId = $response->getHeaderLine('X-Request-Id');
        $requestId = $requestId === '' ? null : $requestId;
        $retryAfter = self::parseRetryAfter($response->getHeaderLine('Retry-After'));
        $text = $serverMessage ?? self::excerpt($body);
        $headers = $response->getHeaders();
        $parsed = \is_array($decoded) ? $decoded : $body;
        $message = $status . ($code !== null ? ' ' . $code : '') . ': ' . ($text !== '' ? $text : ($response->getReasonPhrase() ?: 'no message'));

        if ($status === 401) {
            return new AuthenticationException($message, $status, $code, $requestId, $retryAfter, null, $headers, $parsed);
        }
        if ($status === 403) {
            if (\in_array($code, self::LIMIT_CODES, true)) {
                return new LimitExceededException($message, $status, $code, $requestId, $retryAfter, null, $headers, $parsed);
            }
            if ($code === 'insufficient_scope'
                || ($code === null && PermissionDeniedException::challengeError($response->getHeaderLine('WWW-Authenticate')) === 'insufficient_scope')) {
                return new InsufficientScopeException($message, $status, $code, $requestId, $retryAfter, null, $headers, $parsed);
            }
            if ($code === 'ip_not_allowed') {
                return new IpNotAllowedException($message, $status, $code, $requestId, $retryAfter, null, $headers, $parsed);
            }

            return new PermissionDeniedException($message, $status, $code, $requestId, $retryAfter, null, $headers, $parsed);
        }
        if ($status === 413 && ($code === 'file_too_large' || $code === null)) {
            return new LimitExceededException($message, $status, $code, $requestId, $retryAfter, null, $headers, $parsed);
        }
        if ($status === 404) {
            return new NotFoundException($message, $status, $code, $requestId, $retryAfter, null, $headers, $parsed);
        }
        if ($status === 429) {
            return new RateLimitException($message, $status, $code, $requestId, $retryAfter, new RateLimitInfo(
                self::headerInt($response, 'RateLimit-Limit'),
                self::headerInt($response, 'RateLimit-Remaining'),
                self::headerInt($response, 'RateLimit-Reset'),
            ), null, $headers, $parsed);
        }
        if ($status >= 500) {
            return new ServerException($message, $status, $code, $requestId, $retryAfter, null, $headers, $parsed);
        }

        if ($status === 409 && $code === 'scan_pending') {
            return new ScanPendingException($message, $status, $code, $requestId, $retryAfter, null, $headers, $parsed);
        }

        return new BadRequestException($message, $status, $code, $requestId, $retryAfter, null, $headers, $parsed);
    }
}
