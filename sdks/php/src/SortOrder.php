<?php

declare(strict_types=1);

namespace Fileshare;

/**
 * The direction of a file list's sort (`order`): `Desc` (the default: newest, largest, Z first) or
 * `Asc`. The calls take the enum or its value (`SortOrder::Asc` or `'asc'`).
 */
enum SortOrder: string
{
    case Asc = 'asc';
    case Desc = 'desc';
}
