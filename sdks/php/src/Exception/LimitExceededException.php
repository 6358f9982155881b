<?php

declare(strict_types=1);

namespace Fileshare\Exception;

/** 403 `file_too_large` / `daily_upload_limit_exceeded`, and the 413 `file_too_large` of resumable uploads. */
class LimitExceededException extends FileshareException
{
}
