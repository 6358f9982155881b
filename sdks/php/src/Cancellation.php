<?php

declare(strict_types=1);

namespace Fileshare;

use Fileshare\Exception\CancelledException;

/**
 * Cancels a call that is under way: pass it as the `cancellation` request option, then call
 * cancel() from a progress callback, a signal handler (pcntl_async_signals) or a tick; the call
 * stops at the next piece of the transfer, or before its next request or retry, and throws
 * CancelledException. A cancelled resumable upload is deleted unless `keep_on_failure` is set
 * (then `on_upload_created`'s URL continues it). One token may serve several calls.
 */
final class Cancellation
{
    private bool $cancelled = false;

    public function cancel(): void
    {
        $this->cancelled = true;
    }

    public function isCancelled(): bool
    {
        return $this->cancelled;
    }

    /** @internal */
    public function check(): void
    {
        if ($this->cancelled) {
            throw new CancelledException('the call was cancelled');
        }
    }
}
