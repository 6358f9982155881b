<?php

declare(strict_types=1);

// Links as resources: a file that expires, a link limited to a few downloads and protected by a
// password, a download through it, then rotation and revocation.
// Usage (FILESHARE_BASE_URL and FILESHARE_API_KEY set): php examples/links.php [path]

require __DIR__ . '/autoload.php';

use Fileshare\Client;
use Fileshare\Exception\AuthenticationException;
use Fileshare\Exception\NotFoundException;

$client = new Client();

// A file that is gone (with all its links) in a week.
$file = $client->files->upload($argv[1] ?? __FILE__, ['expires_in' => 7 * 24 * 3600]);
echo "uploaded file {$file->file_id}, expires {$file->expiry?->format(DATE_ATOM)}\n";

// A second link beside the default one (the file's public_link): three downloads, a password, a day.
$link = $client->links->create($file, [
    'label' => 'for the auditors',
    'max_downloads' => 3,
    'password' => 'correct horse battery staple',
    'expires_in' => 24 * 3600,
]);
echo "link {$link->link_id}: {$link->url} ({$link->status}, {$link->max_downloads} downloads, password: "
    . ($link->password_protected ? 'yes' : 'no') . ")\n";

foreach ($client->links->list($file) as $l) {
    echo '  ' . ($l->default ? 'default ' : '') . "#{$l->link_id} {$l->status} {$l->download_count}"
        . ($l->max_downloads === null ? '' : "/{$l->max_downloads}") . " {$l->url}\n";
}

// Downloading through the link: one POST counts one download and gives a grant URL, which the SDK reads.
$copy = tempnam(sys_get_temp_dir(), 'fileshare-');
try {
    $client->download($link, $copy, ['password' => 'not the password']);
} catch (AuthenticationException $e) {
    echo "a wrong password: {$e->getErrorCode()}\n";
}
$result = $client->download($link, $copy, ['password' => 'correct horse battery staple']);
echo "downloaded {$result->size} bytes through the link; grant valid for an hour: {$result->grant_url}\n";
echo 'the link has counted ' . $client->links->get($link->link_id)->download_count . " download(s)\n";

// Change the policy: a key with null clears it, a key left out stays.
$link = $client->links->update($link, ['password' => null, 'label' => 'auditors, no password']);
echo "updated: label '{$link->label}', password: " . ($link->password_protected ? 'yes' : 'no') . ", still {$link->max_downloads} downloads\n";

// Rotate: a new URL, the old one is dead at once.
$old = $link->url;
$link = $client->links->rotate($link);
try {
    $client->download($old, $copy);
} catch (NotFoundException) {
    echo "rotated: the old URL answers 404, the new one is {$link->url}\n";
}

// Revoke, and keep the file a little longer.
$client->links->delete($link);
$file = $client->files->update($file, ['expires_in' => 30 * 24 * 3600]);
echo "revoked link {$link->link_id}; file {$file->file_id} now expires {$file->expiry?->format(DATE_ATOM)}\n";

unlink($copy);
$client->files->delete($file);
echo "deleted file {$file->file_id}\n";
