<?php

declare(strict_types=1);

namespace Fileshare\Exception;

/**
 * A webhook message that Webhooks::verify() refused: a header missing or malformed, a secret that
 * is not a `whsec_` secret, a timestamp more than the tolerance (5 minutes) away from now, no
 * signature that matches, or a body that is not a JSON object. The message says which, and
 * getReason() gives it as one of the REASON_* constants. Answer such a request with a 4xx (400
 * or 401) and do not act on it.
 *
 * There is no response behind it: getStatus() and getErrorCode() are null.
 */
class WebhookVerificationException extends FileshareException
{
    /** A `webhook-id`, `webhook-timestamp` or `webhook-signature` header is absent or empty. */
    public const REASON_MISSING_HEADER = 'missing_header';
    /** A header is there but malformed (a timestamp that is not unix seconds, two different ids). */
    public const REASON_INVALID_HEADER = 'invalid_header';
    /** The secret is not `whsec_` followed by base64. */
    public const REASON_INVALID_SECRET = 'invalid_secret';
    /** `webhook-timestamp` is older than now minus the tolerance: a replay, or a clock that is off. */
    public const REASON_TIMESTAMP_TOO_OLD = 'timestamp_too_old';
    /** `webhook-timestamp` is later than now plus the tolerance: a clock that is off. */
    public const REASON_TIMESTAMP_TOO_NEW = 'timestamp_too_new';
    /** No `v1` signature matches: another secret, or a body or header that was changed. */
    public const REASON_NO_MATCHING_SIGNATURE = 'no_matching_signature';
    /** The signature matches, but the body is not a JSON object. */
    public const REASON_INVALID_BODY = 'invalid_body';

    /** @param self::REASON_* $reason */
    public function __construct(string $message, private readonly string $reason, ?\Throwable $previous = null)
    {
        parent::__construct($message, null, null, null, null, $previous);
    }

    /**
     * Why the message was refused: one of the REASON_* constants.
     *
     * @return self::REASON_*
     */
    public function getReason(): string
    {
        return $this->reason;
    }
}
