<?php

declare(strict_types=1);

namespace Fileshare\Tests\Unit;

use Fileshare\Client;
use Fileshare\Exception\APIConnectionException;
use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\ExceptionInterface;
use Fileshare\Exception\FileshareException;
use Fileshare\Model\AccountLimits;
use Fileshare\Model\AccountStats;
use Fileshare\Model\Limits;
use Fileshare\Model\Stats;
use Fileshare\Model\StatsResult;
use Fileshare\Tests\Support\Mock;
use GuzzleHttp\Psr7\HttpFactory;
use GuzzleHttp\Psr7\Response;
use PHPUnit\Framework\TestCase;
use Psr\Http\Client\ClientInterface;
use Psr\Http\Client\NetworkExceptionInterface;
use Psr\Http\Message\RequestInterface;
use Psr\Http\Message\ResponseInterface;

final class ClientTest extends TestCase
{
    protected function setUp(): void
    {
        putenv('FILESHARE_BASE_URL');
        putenv('FILESHARE_API_KEY');
        unset($_ENV['FILESHARE_BASE_URL'], $_ENV['FILESHARE_API_KEY'], $_SERVER['FILESHARE_BASE_URL'], $_SERVER['FILESHARE_API_KEY']);
    }

    public function testConfigurationExceptionWithoutBaseUrlOrKey(): void
    {
        try {
            new Client(['api_key' => Mock::KEY]);
            self::fail('no exception');
        } catch (ConfigurationException $e) {
            self::assertStringContainsString('FILESHARE_BASE_URL', $e->getMessage());
            self::assertInstanceOf(ExceptionInterface::class, $e);
            self::assertInstanceOf(\InvalidArgumentException::class, $e);
        }
        $this->expectException(ConfigurationException::class);
        $this->expectExceptionMessage('FILESHARE_API_KEY');
        new Client(['base_url' => Mock::BASE]);
    }

    /** @return iterable<string, array{array<string, mixed>}> */
    public static function badOptions(): iterable
    {
        yield 'not a URL' => [['base_url' => 'files.test/api/v1']];
        yield 'negative retries' => [['max_retries' => -1]];
        yield 'zero chunk size' => [['chunk_size' => 0]];
        yield 'negative timeout' => [['timeout' => -1]];
        yield 'unknown option' => [['apiKey' => 'x']];
        yield 'not an HTTP client' => [['http_client' => new \stdClass()]];
    }

    /**
     * @dataProvider badOptions
     *
     * @param array<string, mixed> $options
     */
    public function testConfigurationExceptionForBadOptions(array $options): void
    {
        $this->expectException(ConfigurationException::class);
        new Client($options + ['base_url' => Mock::BASE, 'api_key' => Mock::KEY]);
    }

    public function testEnvironmentVariables(): void
    {
        putenv('FILESHARE_BASE_URL=' . Mock::BASE . '/');
        putenv('FILESHARE_API_KEY=' . Mock::KEY);
        $client = new Client();
        self::assertSame(Mock::BASE, $client->baseUrl);
        self::assertSame(2, $client->maxRetries);
        self::assertSame(60.0, $client->timeout);
    }

    public function testTheKeyNeverShows(): void
    {
        $mock = new Mock([Mock::error(401, 'unauthorized')]);
        $client = $mock->client;
        $dumps = [print_r($client, true), var_export($client, true), (string) $client, json_encode($client)];
        ob_start();
        var_dump($client);
        $dumps[] = ob_get_clean();
        try {
            $client->stats();
        } catch (FileshareException $e) {
            $dumps[] = $e->getMessage();
            $dumps[] = (string) $e;
        }
        foreach ($dumps as $dump) {
            self::assertStringNotContainsString(Mock::KEY, (string) $dump);
        }
        self::assertStringContainsString('[redacted]', print_r($client, true));
        // ... but it is sent.
        self::assertSame('Bearer ' . Mock::KEY, $mock->requests[0]['request']->getHeaderLine('Authorization'));
    }

    public function testHeadersAndStatsKeepUnknownFields(): void
    {
        $mock = new Mock([Mock::json(200, [
            'success' => true,
            'stats' => ['total_files' => 1, 'total_size' => 5, 'total_downloads' => 2, 'uploads_today' => 1, 'new_stat' => 7],
            'limits' => ['max_file_size' => 10, 'daily_uploads' => 3, 'requests_per_minute' => 50, 'requests_per_day' => 5000],
            'plan' => 'pro',
            'quota' => ['bytes' => 1],
        ])]);
        $stats = $mock->client->stats();
        self::assertInstanceOf(StatsResult::class, $stats);
        self::assertInstanceOf(Stats::class, $stats->stats);
        self::assertInstanceOf(Limits::class, $stats->limits);
        self::assertInstanceOf(AccountStats::class, $stats->stats, 'the 0.1 name is an alias');
        self::assertInstanceOf(AccountLimits::class, $stats->limits);
        self::assertSame(1, $stats->stats->total_files);
        self::assertSame(10, $stats->limits->max_file_size);
        self::assertSame('pro', $stats->plan);
        self::assertSame(['new_stat' => 7], $stats->stats->extra);
        self::assertSame(['quota' => ['bytes' => 1]], $stats->extra);
        self::assertSame(7, $stats->toArray()['stats']['new_stat']);
        $request = $mock->requests[0]['request'];
        self::assertSame('GET', $request->getMethod());
        self::assertSame(Mock::BASE . '/stats', (string) $request->getUri());
        self::assertSame(Client::USER_AGENT, $request->getHeaderLine('User-Agent'));
        self::assertSame('fileshare-sdk-php/' . Client::VERSION, Client::USER_AGENT);
        // The idle timeout, never a whole-request deadline.
        $options = $mock->requests[0]['options'];
        self::assertSame(0, $options['timeout']);
        self::assertSame(60.0, $options['connect_timeout']);
        self::assertSame(60, $options['curl'][\CURLOPT_LOW_SPEED_TIME]);
        self::assertFalse($options['allow_redirects']);
    }

    public function testRecordsAreReadonlyAndCarryUtcDates(): void
    {
        $mock = new Mock([Mock::json(200, ['success' => true, 'file' => Mock::file('abc', 7) + ['future' => 'x']])]);
        $file = $mock->client->files->get(7);
        self::assertSame(7, $file->file_id);
        self::assertSame('2026-11-22T00:17:19+00:00', $file->uploaded_at->format(\DATE_ATOM));
        self::assertSame('UTC', $file->uploaded_at->getTimezone()->getName());
        self::assertSame(['future' => 'x'], $file->extra);
        self::assertSame(Mock::file('abc', 7) + ['future' => 'x'], json_decode((string) json_encode($file), true));
        $this->expectException(\Error::class);
        /** @phpstan-ignore-next-line */
        $file->file_id = 8;
    }

    public function testFileIdsAreChecked(): void
    {
        $mock = new Mock([]);
        $this->expectException(ConfigurationException::class);
        $mock->client->files->get('1/../stats');
    }

    public function testAnyPsr18Client(): void
    {
        $seen = [];
        $psr18 = new class ($seen) implements ClientInterface {
            /** @param list<RequestInterface> $seen */
            public function __construct(private array &$seen)
            {
            }

            public function sendRequest(RequestInterface $request): ResponseInterface
            {
                $this->seen[] = $request;
                if (\count($this->seen) > 1) {
                    throw new class ('unreachable', $request) extends \RuntimeException implements NetworkExceptionInterface {
                        public function __construct(string $message, private RequestInterface $request)
                        {
                            parent::__construct($message);
                        }

                        public function getRequest(): RequestInterface
                        {
                            return $this->request;
                        }
                    };
                }

                return new Response(200, [], json_encode(['success' => true, 'files' => [Mock::file('x', 3)], 'pagination' => ['page' => 2, 'limit' => 1, 'total' => 3, 'pages' => 3]]));
            }
        };
        $factory = new HttpFactory();
        $client = new Client(['base_url' => Mock::BASE, 'api_key' => Mock::KEY, 'http_client' => $psr18,
            'request_factory' => $factory, 'stream_factory' => $factory, 'max_retries' => 0]);
        $list = $client->files->list(page: 2, limit: 1);
        self::assertSame(3, $list->files[0]->file_id);
        self::assertSame(3, $list->pagination->total);
        self::assertSame(Mock::BASE . '/files?page=2&limit=1', (string) $seen[0]->getUri());
        $this->expectException(APIConnectionException::class);
        $client->files->list();
    }
}
