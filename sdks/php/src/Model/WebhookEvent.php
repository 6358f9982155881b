<?php

declare(strict_types=1);

namespace Fileshare\Model;

/**
 * A webhook message that Webhooks::verify() accepted: the body's `type`, `timestamp` and `data`,
 * with the message's `webhook-id` as `message_id` (the same on every retry of one message:
 * deduplicate by it).
 *
 * `time` is `timestamp` as a date-time in UTC (null if it is none), and `extra` keeps the body's
 * other fields. toArray() / json_encode() give the body's object (without `message_id`, which is
 * a header). A body from another Standard Webhooks sender without `type`, `timestamp` or `data`
 * gives '' and [] for them, its fields in `extra`.
 */
final readonly class WebhookEvent implements \JsonSerializable
{
    /** `data`: the file record (FileRecord::fromArray() reads it). */
    public const FILE_UPLOADED = 'file.uploaded';
    /** `data`: `file_id`, `filename`, `reason` (`owner`, `expired`, `operator`, `infected`). */
    public const FILE_DELETED = 'file.deleted';
    /** `data`: the link record (Link::fromArray() reads it). */
    public const LINK_CREATED = 'link.created';
    /** `data`: the link record. */
    public const LINK_UPDATED = 'link.updated';
    /** `data`: the link record. */
    public const LINK_REVOKED = 'link.revoked';
    /** A limited link gave its last download. `data`: the link record. */
    public const LINK_EXHAUSTED = 'link.exhausted';
    /** A link with a policy granted a download. `data`: `link_id`, `file_id`, `downloads_left`. */
    public const LINK_DOWNLOADED = 'link.downloaded';
    /** A resumable upload expired unfinished. `data`: `upload_id`, `filename`, `offset`, `length`. */
    public const UPLOAD_EXPIRED = 'upload.expired';
    /**
     * A guest sent a file through an upload request. `data`: `request_id`, `label`,
     * `files_received`, `bytes_received`, `file` (the file record: FileRecord::fromArray() reads it).
     */
    public const UPLOAD_REQUEST_FILE_RECEIVED = 'upload_request.file_received';
    /** An upload request became full (max_files or max_total_size). `data`: `request_id`, `label`, `files_received`, `bytes_received`. */
    public const UPLOAD_REQUEST_FULL = 'upload_request.full';
    /** `$client->webhooks->test()`. `data`: `webhook_id`. */
    public const WEBHOOK_TEST = 'webhook.test';
    /** The event types the server sends today (later versions add more; `["*"]` subscribes to all). */
    public const TYPES = [self::FILE_UPLOADED, self::FILE_DELETED, self::LINK_CREATED, self::LINK_UPDATED, self::LINK_REVOKED,
        self::LINK_EXHAUSTED, self::LINK_DOWNLOADED, self::UPLOAD_EXPIRED, self::UPLOAD_REQUEST_FILE_RECEIVED, self::UPLOAD_REQUEST_FULL,
        self::WEBHOOK_TEST];

    private const KNOWN = ['type', 'timestamp', 'data'];

    /** `timestamp` as a date-time in UTC, or null when it is not one. */
    public ?\DateTimeImmutable $time;

    /**
     * @param array<string, mixed> $data
     * @param array<string, mixed> $extra
     */
    public function __construct(
        /** `file.uploaded`, `link.downloaded`, … (the constants above). */
        public string $type,
        /** When the event happened: ISO 8601 in UTC, `2026-11-27T10:00:00.000Z`. */
        public string $timestamp,
        /** The event's object: a file or link record, or the fields the type names. */
        public array $data,
        /** The `webhook-id` header (`msg_…`): one per message, the same on its retries. */
        public string $message_id = '',
        public array $extra = [],
    ) {
        $time = null;
        if ($timestamp !== '') {
            try {
                $time = (new \DateTimeImmutable($timestamp))->setTimezone(new \DateTimeZone('UTC'));
            } catch (\Exception) {
                $time = null;
            }
        }
        $this->time = $time;
    }

    /** @param array<string, mixed> $body the decoded body */
    public static function fromArray(array $body, string $messageId = ''): self
    {
        return new self(
            \is_string($body['type'] ?? null) ? $body['type'] : '',
            \is_string($body['timestamp'] ?? null) ? $body['timestamp'] : '',
            \is_array($body['data'] ?? null) ? $body['data'] : [],
            $messageId,
            array_diff_key($body, array_flip(self::KNOWN)),
        );
    }

    /** @return array<string, mixed> the body's object */
    public function toArray(): array
    {
        return ['type' => $this->type, 'timestamp' => $this->timestamp, 'data' => $this->data] + $this->extra;
    }

    /** @return array<string, mixed> the body's object (`data` as a JSON object, `{}` when empty) */
    public function jsonSerialize(): array
    {
        $body = $this->toArray();
        $body['data'] = (object) $this->data;

        return $body;
    }
}
