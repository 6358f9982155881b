<?php

declare(strict_types=1);

namespace Fileshare\Exception;

/**
 * 403 `file_too_large`, `daily_upload_limit_exceeded`, `storage_quota_exceeded`, `link_limit_exceeded`,
 * `webhook_limit_exceeded`, `upload_request_full`, `file_not_scannable` (larger than the server's
 * virus scanner can scan, on a server that serves only scanned files), and the 413 `file_too_large`
 * of resumable uploads.
 */
class LimitExceededException extends FileshareException
{
}
