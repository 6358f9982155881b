<?php

declare(strict_types=1);

namespace Fileshare;

/**
 * What `$client->files->list()` and `->iterate()` filter by (`state`): `Expiring` (the file has an
 * expiry), `ExpiredLinks` (one of its links expired or used up its downloads; revoked ones do not
 * count), `FromUploadRequest` (a guest brought it through an upload request). The calls take the
 * enum or its value (`FileState::Expiring` or `'expiring'`), one or a list (any of them).
 */
enum FileState: string
{
    case Expiring = 'expiring';
    case ExpiredLinks = 'expired_links';
    case FromUploadRequest = 'from_upload_request';
}
