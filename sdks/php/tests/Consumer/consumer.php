<?php

declare(strict_types=1);

// A consumer project's script: only Composer's autoloader, then the SDK as a user would call it
// (FILESHARE_BASE_URL and FILESHARE_API_KEY from the environment).

require __DIR__ . '/vendor/autoload.php';

$client = new Fileshare\Client();
$file = $client->files->uploadBytes('hello from a consumer project', ['filename' => 'consumer.txt']);
$stats = $client->stats();
$client->files->delete($file->file_id);
echo json_encode([
    'version' => Fileshare\Client::VERSION,
    'installed' => Composer\InstalledVersions::isInstalled('fileshare/sdk'),
    'sha256' => $file->sha256,
    'plan' => $stats->plan,
    'sdk_path' => (new ReflectionClass(Fileshare\Client::class))->getFileName(),
]), "\n";
