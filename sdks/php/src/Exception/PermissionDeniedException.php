<?php

declare(strict_types=1);

namespace Fileshare\Exception;

/**
 * 403 the key may not do this: `plan_not_supported` (the account's plan has no API access), and
 * its subclasses InsufficientScopeException (`insufficient_scope`: the key lacks the scope the call
 * needs) and IpNotAllowedException (`ip_not_allowed`: the key may not be used from this address).
 * None is retried: asking again changes nothing.
 */
class PermissionDeniedException extends FileshareException
{
    /**
     * The scope the call needs (e.g. `files:delete`), for a 403 `insufficient_scope`: the body's
     * `error.required_scope`, else the `scope="…"` of the `WWW-Authenticate` header; null when
     * neither names one (`plan_not_supported`, `ip_not_allowed`).
     */
    public function getRequiredScope(): ?string
    {
        $body = $this->getBody();
        $scope = \is_array($body) && \is_array($body['error'] ?? null) ? ($body['error']['required_scope'] ?? null) : null;
        if (\is_string($scope) && $scope !== '') {
            return $scope;
        }

        return self::challengeScope($this->getHeaderLine('WWW-Authenticate'));
    }

    /**
     * The `scope` parameter of a Bearer challenge (RFC 6750: `Bearer error="insufficient_scope",
     * scope="files:delete"`), quoted or not; null when there is none.
     *
     * @internal
     */
    public static function challengeScope(string $header): ?string
    {
        if (preg_match('/(?:^|[\s,])scope\s*=\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^\s,"]+))/i', $header, $m) !== 1) {
            return null;
        }
        $scope = isset($m[2]) && $m[2] !== '' ? $m[2] : (string) preg_replace('/\\\\(.)/s', '$1', $m[1]);
        $scope = trim($scope);

        return $scope === '' ? null : $scope;
    }

    /**
     * The `error` parameter of a Bearer challenge (`insufficient_scope`), or null.
     *
     * @internal
     */
    public static function challengeError(string $header): ?string
    {
        if (preg_match('/(?:^|[\s,])error\s*=\s*(?:"([^"]*)"|([^\s,"]+))/i', $header, $m) !== 1) {
            return null;
        }

        return isset($m[2]) && $m[2] !== '' ? $m[2] : $m[1];
    }
}
