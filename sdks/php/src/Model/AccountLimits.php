<?php

declare(strict_types=1);

namespace Fileshare\Model;

// The 0.1 name of Limits, kept as an alias: `AccountLimits` and `Limits` are the same class.
class_alias(Limits::class, AccountLimits::class);
