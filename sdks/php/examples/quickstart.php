<?php

declare(strict_types=1);

// Upload a file, list and iterate the account's files, download one back, read the statistics,
// delete the upload. Usage (FILESHARE_BASE_URL and FILESHARE_API_KEY set):
//   php examples/quickstart.php [path]

require __DIR__ . '/autoload.php';

use Fileshare\Client;

$client = new Client(); // base_url and api_key from FILESHARE_BASE_URL and FILESHARE_API_KEY

$path = $argv[1] ?? __FILE__;
// Retries after a lost answer are safe: every upload carries an idempotency key (one per call).
$file = $client->files->upload($path, [
    'on_progress' => static function (int $sent, ?int $total): void {
        fwrite(STDERR, sprintf("\rupload: %d / %s bytes", $sent, $total ?? '?'));
    },
]);
fwrite(STDERR, "\n");
echo "uploaded {$file->filename} as file {$file->file_id} ({$file->size} bytes, sha256 {$file->sha256})\n";
echo "public link: {$file->public_link}\n";

$page = $client->files->list(page: 1, limit: 5);
echo "newest {$page->pagination->limit} of {$page->pagination->total} files:\n";
foreach ($page->files as $f) {
    echo "  #{$f->file_id} {$f->filename} ({$f->size} bytes, uploaded {$f->uploaded_at->format(DATE_ATOM)})\n";
}

$count = 0;
foreach ($client->files->iterate(limit: 100) as $f) { // pages by before_id: deleting here would skip nothing
    ++$count;
}
echo "iterate() went through $count files\n";

$copy = tempnam(sys_get_temp_dir(), 'fileshare-');
$result = $client->download($file, $copy);
echo "downloaded {$result->size} bytes to $copy, SHA-256 checked against the ETag\n";
unlink($copy);

$stats = $client->stats();
// The HTTP side of any call: status and headers, with the usual result as ->data.
$raw = $client->withRawResponse()->files->get($file->file_id);
echo "GET answered {$raw->getStatusCode()}, {$raw->getHeaderLine('RateLimit-Remaining')} requests left in the window\n";
echo "plan {$stats->plan}: {$stats->stats->total_files} files, {$stats->stats->uploads_today} of {$stats->limits->daily_uploads} uploads today\n";
echo "storage: {$stats->stats->total_size} bytes used, {$stats->stats->storage_reserved} reserved by uploads in progress, of "
    . ($stats->limits->max_storage === null ? 'no quota' : "a quota of {$stats->limits->max_storage}") . "\n";

$client->files->delete($file->file_id);
echo "deleted file {$file->file_id}\n";
