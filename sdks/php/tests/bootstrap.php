<?php

declare(strict_types=1);

// PHPUnit bootstrap. With `composer install`, vendor/autoload.php is used. Without Composer (CI
// here, where Packagist is out of reach), Debian's packaged Guzzle, PSR-7, PSR-17 and PSR-18
// autoloaders are loaded (php-guzzlehttp-guzzle and its dependencies), plus a PSR-4 loader for
// this package.

$vendor = __DIR__ . '/../vendor/autoload.php';
if (is_file($vendor)) {
    require $vendor;
} else {
    $debian = [
        'GuzzleHttp/autoload.php',           // php-guzzlehttp-guzzle (loads psr7, promises, psr/http-client)
        'GuzzleHttp/Psr7/autoload.php',      // php-guzzlehttp-psr7
        'Psr/Http/Message/autoload.php',     // php-psr-http-message
        'Psr/Http/Message/factory-autoload.php', // php-psr-http-factory
        'Psr/Http/Client/autoload.php',      // php-psr-http-client
        'Psr/Log/autoload.php',              // php-psr-log (PSR-3: the `logger` option; tests use its AbstractLogger)
    ];
    foreach ($debian as $file) {
        $found = stream_resolve_include_path($file) ?: (is_file("/usr/share/php/$file") ? "/usr/share/php/$file" : false);
        if ($found === false) {
            fwrite(STDERR, "missing $file: apt-get install php-guzzlehttp-guzzle php-psr-http-factory (or run composer install)\n");
            exit(1);
        }
        require_once $found;
    }
    spl_autoload_register(static function (string $class): void {
        foreach (['Fileshare\\Tests\\' => __DIR__ . '/', 'Fileshare\\' => __DIR__ . '/../src/'] as $prefix => $dir) {
            if (str_starts_with($class, $prefix)) {
                $file = $dir . str_replace('\\', '/', substr($class, \strlen($prefix))) . '.php';
                if (is_file($file)) {
                    require $file;
                }

                return;
            }
        }
    });
}
