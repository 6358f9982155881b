<?php

declare(strict_types=1);

namespace Fileshare\Exception;

/**
 * 409 `scan_pending`: the file has not been scanned for malware yet, and the server serves only
 * scanned files (FILESHARE_SCAN=required), so its link answers this until the verdict.
 * getRetryAfter() says when to ask again (the server sends 10 seconds). `download()` does not
 * wait on its own: a scan usually takes a moment, but one waits as long as the scanner is down.
 * A BadRequestException (as every other 409), so code that caught those still catches it.
 */
class ScanPendingException extends BadRequestException
{
}
