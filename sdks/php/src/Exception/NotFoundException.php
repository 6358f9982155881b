<?php

declare(strict_types=1);

namespace Fileshare\Exception;

/** 404: no such file (or not this account's), no such upload, no file behind a link. */
class NotFoundException extends FileshareException
{
}
