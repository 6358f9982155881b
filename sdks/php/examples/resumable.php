<?php

declare(strict_types=1);

// A large upload through resumable uploads (tus), with progress, then a download that resumes
// a partial copy. Usage: php examples/resumable.php <path> [chunk size in MiB]

require __DIR__ . '/autoload.php';

use Fileshare\Client;

$path = $argv[1] ?? null;
if ($path === null) {
    fwrite(STDERR, "usage: php examples/resumable.php <path> [chunk MiB]\n");
    exit(2);
}
$client = new Client(['max_retries' => 5]); // a dropped chunk is resumed up to 5 times in a row

$started = microtime(true);
$file = $client->files->upload($path, [
    'resumable' => true,                               // also the default from 64 MiB on
    'chunk_size' => (int) ($argv[2] ?? 16) * 1024 * 1024,
    'on_progress' => static function (int $sent, ?int $total): void {
        fwrite(STDERR, sprintf("\r%5.1f%%", $total ? 100 * $sent / $total : 0));
    },
]);
fwrite(STDERR, "\n");
printf("file %d: %d bytes in %.1f s, sha256 %s\n", $file->file_id, $file->size, microtime(true) - $started, $file->sha256);

// Download half, as an interrupted download would leave it, then resume.
$copy = tempnam(sys_get_temp_dir(), 'fileshare-');
$in = fopen($path, 'rb');
file_put_contents($copy, fread($in, max(1, intdiv($file->size, 2))) ?: '');
fclose($in);
$result = $client->download($file, $copy); // 'resume' => true is the default
printf("download resumed from byte %d, %d bytes in all, verified\n", $result->resumed_from, $result->size);
unlink($copy);
$client->files->delete($file->file_id);
