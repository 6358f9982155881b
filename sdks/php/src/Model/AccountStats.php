<?php

declare(strict_types=1);

namespace Fileshare\Model;

// The 0.1 name of Stats, kept as an alias: `AccountStats` and `Stats` are the same class.
class_alias(Stats::class, AccountStats::class);
