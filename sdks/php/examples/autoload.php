<?php

declare(strict_types=1);

// The examples run from a checkout: with `composer install` (vendor/autoload.php), else with
// Debian's packaged Guzzle (the test suite's loader). In your project, require vendor/autoload.php.
$vendor = __DIR__ . '/../vendor/autoload.php';
require is_file($vendor) ? $vendor : __DIR__ . '/../tests/bootstrap.php';
