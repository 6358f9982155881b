<?php

declare(strict_types=1);

// A webhook endpoint for the integration tests (tests/Support/WebhookReceiver.php runs it with
// `php -S 127.0.0.1:PORT webhook-receiver.php`): each request is saved as a JSON file in
// $WEBHOOK_RECEIVER_DIR (method, path, headers as getallheaders() gives them, the raw body in
// base64, the status answered), and answered with the status in $WEBHOOK_RECEIVER_DIR/status
// (default 204).

$dir = (string) getenv('WEBHOOK_RECEIVER_DIR');
$status = is_file("$dir/status") ? (int) trim((string) file_get_contents("$dir/status")) : 204;
$record = [
    'method' => $_SERVER['REQUEST_METHOD'] ?? '',
    'path' => $_SERVER['REQUEST_URI'] ?? '',
    'headers' => getallheaders(),
    'body' => base64_encode((string) file_get_contents('php://input')),
    'status' => $status,
    'at' => microtime(true),
];
$name = sprintf('%s/request-%.6f-%s.json', $dir, microtime(true), bin2hex(random_bytes(4)));
file_put_contents("$name.part", json_encode($record, \JSON_UNESCAPED_SLASHES | \JSON_THROW_ON_ERROR));
rename("$name.part", $name);
http_response_code($status);
