<?php

declare(strict_types=1);

// Upload requests: a page where someone without an account sends files into yours. Makes one,
// shows it, collects what it received, then closes and deletes it.
// Usage (FILESHARE_BASE_URL and FILESHARE_API_KEY set; the key needs requests:manage):
//   php examples/upload-requests.php [destination folder]

require __DIR__ . '/autoload.php';

use Fileshare\Client;
use Fileshare\Exception\InsufficientScopeException;

$client = new Client();
$folder = $argv[1] ?? sys_get_temp_dir();

try {
    $request = $client->uploadRequests->create([
        'label' => 'Invoices for March',
        'message' => "Please send the March invoices as PDF.\nThank you!",
        'expires_in' => 7 * 24 * 3600,
        'max_files' => 10,
        'max_total_size' => 100 * 1024 * 1024,
        'password' => 'correct horse battery staple',
        'file_expires_in' => 30 * 24 * 3600,
    ]);
} catch (InsufficientScopeException $e) {
    fwrite(STDERR, "this key cannot manage upload requests (needs {$e->getRequiredScope()})\n");
    exit(1);
}
echo "upload request {$request->request_id} ({$request->status}): send {$request->url} to the guest, "
    . "with its password; it expires {$request->expiry->format(DATE_ATOM)}\n";

// Change it: a key with null removes the limit, a key left out stays.
$request = $client->uploadRequests->update($request, ['max_files' => null, 'expires_in' => 14 * 24 * 3600]);
echo 'max files: ' . ($request->max_files ?? 'no limit') . ", password: " . ($request->password_protected ? 'yes' : 'no')
    . ", now expires {$request->expiry->format(DATE_ATOM)}\n";

foreach ($client->uploadRequests->list() as $r) {
    echo "  #{$r->request_id} {$r->status} '{$r->label}': {$r->files_received} file(s), {$r->bytes_received} bytes\n";
}

// Collect what guests sent (newest first, every page).
$received = 0;
foreach ($client->uploadRequests->iterateFiles($request) as $file) {
    $client->download($file, $folder . '/' . basename($file->filename));
    ++$received;
}
echo "downloaded {$received} received file(s) to {$folder}\n";

// Close it (guests can send nothing more; it stays listed), then delete it (the files stay).
$closed = $client->uploadRequests->close($request);
echo "closed: {$closed->status}\n";
$deleted = $client->uploadRequests->delete($request);
echo "deleted upload request {$deleted->request_id}\n";
