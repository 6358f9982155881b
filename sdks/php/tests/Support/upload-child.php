<?php

declare(strict_types=1);

// A separate process for the cross-process resumable upload test (tests/Integration/CrossProcessResumeTest.php).
// FILESHARE_BASE_URL and FILESHARE_API_KEY come from the environment.
//   php upload-child.php start PATH CHUNK   uploads PATH through tus, prints "url <upload URL>", then
//                                           "stalled <bytes>" once a chunk is in and the next is half
//                                           sent, and hangs there until it is killed
//   php upload-child.php resume PATH CHUNK URL  continues the upload at URL: prints "from <offset>"
//                                           and, at the end, "file <record JSON>"

require __DIR__ . '/../bootstrap.php';

[, $mode, $path, $chunk] = $argv;
$chunk = (int) $chunk;
$client = new Fileshare\Client(['chunk_size' => $chunk, 'timeout' => 30]);
$say = static function (string $line): void {
    fwrite(STDOUT, $line . "\n");
    fflush(STDOUT);
};

if ($mode === 'start') {
    $client->files->upload($path, [
        'resumable' => true,
        'on_upload_created' => static fn (string $url) => $say("url $url"),
        'on_progress' => static function (int $sent) use ($chunk, $say): void {
            if ($sent >= $chunk + intdiv($chunk, 2)) {
                $say("stalled $sent");
                sleep(600); // killed here, midway through the second chunk
            }
        },
    ]);
    $say('finished'); // not expected
    exit(1);
}

$first = null;
$file = $client->files->upload($path, [
    'upload_url' => $argv[4],
    'on_progress' => static function (int $sent) use (&$first, $say): void {
        if ($first === null) {
            $first = $sent;
            $say("from $sent");
        }
    },
]);
$say('file ' . json_encode($file));
