<?php

declare(strict_types=1);

namespace Fileshare\Internal;

use GuzzleHttp\ClientInterface as GuzzleClient;
use GuzzleHttp\Exception\GuzzleException;
use Psr\Http\Message\RequestInterface;
use Psr\Http\Message\ResponseInterface;

/**
 * Sends through Guzzle with the SDK's options: no whole-request deadline, an idle timeout
 * (connect_timeout, read_timeout, and cURL's low-speed limit of 1 byte/s for `timeout`
 * seconds), no redirects, no exceptions for HTTP errors, downloads streamed to a sink.
 *
 * @internal
 */
final class GuzzleTransport implements Transport
{
    /** @var array<int, mixed> */
    private readonly array $curlDefaults;

    public function __construct(private readonly GuzzleClient $client)
    {
        $curl = [];
        if (method_exists($client, 'getConfig')) {
            $configured = $client->getConfig('curl');
            $curl = \is_array($configured) ? $configured : [];
        }
        $this->curlDefaults = $curl;
    }

    public function send(RequestInterface $request, ?ResponseSink $sink = null, float $timeout = 0.0): ResponseInterface
    {
        $options = [
            'http_errors' => false,
            'allow_redirects' => false,
            'decode_content' => $sink === null,
            'timeout' => 0,
        ];
        if ($timeout > 0) {
            $options['connect_timeout'] = $timeout;
            $options['read_timeout'] = $timeout;
            if (\defined('CURLOPT_LOW_SPEED_LIMIT')) {
                $options['curl'] = [
                    \CURLOPT_LOW_SPEED_LIMIT => 1,
                    \CURLOPT_LOW_SPEED_TIME => max(1, (int) ceil($timeout)),
                ] + $this->curlDefaults;
            }
        }
        $stream = null;
        if ($sink !== null) {
            $stream = new SinkStream($sink);
            $options['sink'] = $stream;
            $options['on_headers'] = static function ($response) use ($stream): void {
                if ($response instanceof ResponseInterface) {
                    $stream->begin($response);
                }
            };
        }
        try {
            $response = $this->client->send($request, $options);
        } catch (GuzzleException $error) {
            throw Http::connectionError($error);
        }
        $stream?->begin($response);

        return $response;
    }
}
