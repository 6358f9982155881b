<?php

declare(strict_types=1);

namespace Fileshare\Exception;

/**
 * The call was cancelled through its `cancellation` option (Fileshare\Cancellation::cancel()).
 * Never retried. A cancelled resumable upload is deleted unless `keep_on_failure` is set.
 */
class CancelledException extends FileshareException
{
}
