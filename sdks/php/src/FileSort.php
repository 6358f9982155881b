<?php

declare(strict_types=1);

namespace Fileshare;

/**
 * What `$client->files->list()` and `->iterate()` order by (`sort`): upload time (the default),
 * name (ignoring case), size or download count; ties by file_id in the same direction. The calls
 * take the enum or its value (`FileSort::Size` or `'size'`).
 */
enum FileSort: string
{
    case UploadDate = 'upload_date';
    case Filename = 'filename';
    case Size = 'size';
    case DownloadCount = 'download_count';
}
