<?php

declare(strict_types=1);

namespace Fileshare\Tests\Unit;

use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\ExceptionInterface;
use Fileshare\Exception\FileshareException;
use Fileshare\Exception\WebhookVerificationException as E;
use Fileshare\Model\WebhookEvent;
use Fileshare\Webhooks;
use GuzzleHttp\Psr7\ServerRequest;
use GuzzleHttp\Psr7\Utils;
use PHPUnit\Framework\TestCase;

/** Webhooks::verify(): the Standard Webhooks reference vector and every way a message is refused. */
final class WebhookVerifyTest extends TestCase
{
    // The Standard Webhooks reference test vector.
    private const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    private const ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
    private const TS = 1614265330;
    private const BODY = '{"test": 2432232314}';
    private const SIG = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';
    /** Another valid secret. */
    private const OTHER_SECRET = 'whsec_dGhpcyBpcyBhbm90aGVyIHNlY3JldCBrZXkh';

    /** @return array<string, string> */
    private static function headers(string $signature = self::SIG, int $timestamp = self::TS, string $id = self::ID): array
    {
        return ['webhook-id' => $id, 'webhook-timestamp' => (string) $timestamp, 'webhook-signature' => $signature];
    }

    /**
     * Runs $call and returns the WebhookVerificationException it threw, checking its reason.
     *
     * @param callable(): mixed $call
     */
    private static function refused(string $reason, callable $call, ?string $inMessage = null): E
    {
        try {
            $call();
        } catch (E $e) {
            self::assertSame($reason, $e->getReason(), $e->getMessage());
            if ($inMessage !== null) {
                self::assertStringContainsString($inMessage, $e->getMessage());
            }
            self::assertStringNotContainsString('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', $e->getMessage());

            return $e;
        }
        self::fail("not refused ($reason expected)");
    }

    public function testTheReferenceVector(): void
    {
        $event = Webhooks::verify(self::BODY, self::headers(), self::SECRET, now: self::TS);
        self::assertInstanceOf(WebhookEvent::class, $event);
        self::assertSame(self::ID, $event->message_id);
        self::assertSame(['test' => 2432232314], $event->extra, 'a body without type, timestamp and data keeps its fields in extra');
        self::assertSame('', $event->type);
        self::assertSame('', $event->timestamp);
        self::assertNull($event->time);
        self::assertSame([], $event->data);
        self::assertSame(self::SIG, Webhooks::sign(self::SECRET, self::ID, self::TS, self::BODY));
        // The secret without its prefix is the same key.
        self::assertSame(self::ID, Webhooks::verify(self::BODY, self::headers(), 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', now: self::TS)->message_id);
    }

    public function testHeadersInEveryForm(): void
    {
        $forms = [
            'mixed case' => ['Webhook-Id' => self::ID, 'WEBHOOK-TIMESTAMP' => (string) self::TS, 'Webhook-Signature' => self::SIG],
            'lists' => ['webhook-id' => [self::ID], 'webhook-timestamp' => [self::TS], 'webhook-signature' => [self::SIG], 'host' => ['x']],
            'an int timestamp' => ['webhook-id' => self::ID, 'webhook-timestamp' => self::TS, 'webhook-signature' => self::SIG],
            '$_SERVER' => ['HTTP_WEBHOOK_ID' => self::ID, 'HTTP_WEBHOOK_TIMESTAMP' => (string) self::TS, 'HTTP_WEBHOOK_SIGNATURE' => self::SIG,
                'REQUEST_METHOD' => 'POST', 'argv' => []],
            'a signature per header line' => ['webhook-id' => self::ID, 'webhook-timestamp' => (string) self::TS,
                'webhook-signature' => ['v1,AAAA', self::SIG]],
            'an iterable (a framework\'s header bag)' => new \ArrayIterator(['webhook-id' => [self::ID],
                'webhook-timestamp' => [(string) self::TS], 'webhook-signature' => [self::SIG]]),
            'a PSR-7 request' => new ServerRequest('POST', '/hooks', ['Webhook-ID' => self::ID, 'webhook-timestamp' => (string) self::TS,
                'WEBHOOK-signature' => self::SIG], self::BODY),
        ];
        foreach ($forms as $name => $headers) {
            self::assertSame(2432232314, Webhooks::verify(self::BODY, $headers, self::SECRET, now: self::TS)->extra['test'], $name);
        }
        // The body as a PSR-7 stream, read from its start whatever its position.
        $stream = Utils::streamFor(self::BODY);
        $stream->read(5);
        self::assertSame(self::ID, Webhooks::verify($stream, self::headers(), self::SECRET, now: self::TS)->message_id);
        $request = new ServerRequest('POST', '/hooks', self::headers(), self::BODY);
        self::assertSame(self::ID, Webhooks::verify($request->getBody(), $request, self::SECRET, now: self::TS)->message_id);
    }

    public function testATamperedBody(): void
    {
        self::refused(E::REASON_NO_MATCHING_SIGNATURE, fn () => Webhooks::verify('{"test": 2432232315}', self::headers(), self::SECRET, now: self::TS),
            'no signature matches (1 v1 signature checked)');
        // Re-encoded JSON is another body.
        self::refused(E::REASON_NO_MATCHING_SIGNATURE, fn () => Webhooks::verify('{"test":2432232314}', self::headers(), self::SECRET, now: self::TS));
        // So is another id or timestamp (within the tolerance).
        self::refused(E::REASON_NO_MATCHING_SIGNATURE, fn () => Webhooks::verify(self::BODY, self::headers(id: 'msg_other'), self::SECRET, now: self::TS));
        self::refused(E::REASON_NO_MATCHING_SIGNATURE, fn () => Webhooks::verify(self::BODY, self::headers(timestamp: self::TS + 1), self::SECRET, now: self::TS));
    }

    public function testAWrongSecret(): void
    {
        self::refused(E::REASON_NO_MATCHING_SIGNATURE, fn () => Webhooks::verify(self::BODY, self::headers(), self::OTHER_SECRET, now: self::TS),
            'another secret');
    }

    public function testABadSecret(): void
    {
        foreach (['', 'whsec_', 'whsec_not base64!', 'whsec_@@@@', 'not-a-secret'] as $secret) {
            self::refused(E::REASON_INVALID_SECRET, fn () => Webhooks::verify(self::BODY, self::headers(), $secret, now: self::TS), 'whsec_');
        }
        self::refused(E::REASON_INVALID_SECRET, fn () => Webhooks::sign('whsec_!', self::ID, self::TS, self::BODY));
    }

    public function testTheTimestampWithinFiveMinutesEitherWay(): void
    {
        foreach ([self::TS - 300, self::TS + 300] as $now) {
            self::assertSame(self::ID, Webhooks::verify(self::BODY, self::headers(), self::SECRET, now: $now)->message_id, "now $now");
        }
        // The message is 301 s old, or 301 s in the future.
        $old = self::refused(E::REASON_TIMESTAMP_TOO_OLD, fn () => Webhooks::verify(self::BODY, self::headers(), self::SECRET, now: self::TS + 301),
            '301 s before now (tolerance 300 s)');
        self::assertNull($old->getStatus());
        self::refused(E::REASON_TIMESTAMP_TOO_NEW, fn () => Webhooks::verify(self::BODY, self::headers(), self::SECRET, now: self::TS - 301),
            '301 s after now');
        // A message signed 301 s ago with its own timestamp is refused although its signature is good.
        $ts = self::TS - 301;
        self::refused(E::REASON_TIMESTAMP_TOO_OLD, fn () => Webhooks::verify(self::BODY,
            self::headers(Webhooks::sign(self::SECRET, self::ID, $ts, self::BODY), $ts), self::SECRET, now: self::TS));
        // Another tolerance, and now as a date-time.
        self::assertSame(self::ID, Webhooks::verify(self::BODY, self::headers(), self::SECRET, tolerance: 600, now: self::TS + 600)->message_id);
        self::refused(E::REASON_TIMESTAMP_TOO_OLD, fn () => Webhooks::verify(self::BODY, self::headers(), self::SECRET, tolerance: 0, now: self::TS + 1));
        self::assertSame(self::ID, Webhooks::verify(self::BODY, self::headers(), self::SECRET, now: new \DateTimeImmutable('@' . (self::TS + 299)))->message_id);
        $this->expectException(ConfigurationException::class);
        Webhooks::verify(self::BODY, self::headers(), self::SECRET, tolerance: -1, now: self::TS);
    }

    public function testTheClockByDefault(): void
    {
        $now = time();
        $body = '{"type":"webhook.test","timestamp":"2026-11-27T10:00:00.000Z","data":{"webhook_id":3}}';
        $event = Webhooks::verify($body, self::headers(Webhooks::sign(self::SECRET, 'msg_now', $now, $body), $now, 'msg_now'), self::SECRET);
        self::assertSame('webhook.test', $event->type);
        self::refused(E::REASON_TIMESTAMP_TOO_OLD, fn () => Webhooks::verify(self::BODY, self::headers(), self::SECRET));
    }

    public function testTwoSignaturesOnlyTheSecondMatching(): void
    {
        $old = Webhooks::sign(self::OTHER_SECRET, self::ID, self::TS, self::BODY);
        self::assertSame(self::ID, Webhooks::verify(self::BODY, self::headers("$old " . self::SIG), self::SECRET, now: self::TS)->message_id);
        self::assertSame(self::ID, Webhooks::verify(self::BODY, self::headers('v1,bm90IHRoaXMgb25l ' . self::SIG), self::SECRET, now: self::TS)->message_id);
        self::assertSame(self::ID, Webhooks::verify(self::BODY, self::headers("  v1,%%%  \t" . self::SIG . ' '), self::SECRET, now: self::TS)->message_id,
            'extra spaces, and an entry that is not base64');
        // Each matches its own secret (a rotation: the new and the previous secret both sign).
        self::assertSame(self::ID, Webhooks::verify(self::BODY, self::headers(self::SIG . " $old"), self::OTHER_SECRET, now: self::TS)->message_id);
        // Neither matches a third secret.
        self::refused(E::REASON_NO_MATCHING_SIGNATURE, fn () => Webhooks::verify(self::BODY, self::headers("$old v1,bm90IHRoaXMgb25l"),
            self::SECRET, now: self::TS), '2 v1 signatures checked');
    }

    public function testOtherVersionsAreIgnored(): void
    {
        $v2 = 'v2' . substr(self::SIG, 2);
        self::assertSame(self::ID, Webhooks::verify(self::BODY, self::headers("$v2 v1a,xyz " . self::SIG), self::SECRET, now: self::TS)->message_id);
        // The right bytes under another version do not count.
        self::refused(E::REASON_NO_MATCHING_SIGNATURE, fn () => Webhooks::verify(self::BODY, self::headers($v2), self::SECRET, now: self::TS),
            'no v1 signature');
        self::refused(E::REASON_NO_MATCHING_SIGNATURE, fn () => Webhooks::verify(self::BODY, self::headers(substr(self::SIG, 3)), self::SECRET, now: self::TS),
            'no v1 signature');
    }

    public function testMissingHeaders(): void
    {
        foreach (['webhook-id', 'webhook-timestamp', 'webhook-signature'] as $name) {
            $headers = self::headers();
            unset($headers[$name]);
            self::refused(E::REASON_MISSING_HEADER, fn () => Webhooks::verify(self::BODY, $headers, self::SECRET, now: self::TS), "no $name header");
            $headers[$name] = '  ';
            self::refused(E::REASON_MISSING_HEADER, fn () => Webhooks::verify(self::BODY, $headers, self::SECRET, now: self::TS), "no $name header");
            $headers[$name] = [];
            self::refused(E::REASON_MISSING_HEADER, fn () => Webhooks::verify(self::BODY, $headers, self::SECRET, now: self::TS), "no $name header");
        }
        self::refused(E::REASON_MISSING_HEADER, fn () => Webhooks::verify(self::BODY, [], self::SECRET, now: self::TS));
        self::refused(E::REASON_MISSING_HEADER, fn () => Webhooks::verify(self::BODY, new ServerRequest('POST', '/'), self::SECRET, now: self::TS));
    }

    public function testMalformedHeaders(): void
    {
        foreach (['soon', '1614265330.5', '-1614265330', '2021-02-25T15:02:10Z', '99999999999999999999'] as $ts) {
            self::refused(E::REASON_INVALID_HEADER, fn () => Webhooks::verify(self::BODY, ['webhook-timestamp' => $ts] + self::headers(), self::SECRET,
                now: self::TS), 'webhook-timestamp is not unix seconds');
        }
        self::refused(E::REASON_INVALID_HEADER, fn () => Webhooks::verify(self::BODY, ['webhook-id' => [self::ID, 'msg_other']] + self::headers(),
            self::SECRET, now: self::TS), 'more than one webhook-id');
        // The same value twice is one value.
        self::assertSame(self::ID, Webhooks::verify(self::BODY, ['webhook-id' => [self::ID, self::ID]] + self::headers(), self::SECRET, now: self::TS)->message_id);
    }

    public function testABodyThatIsNotAJsonObject(): void
    {
        foreach (['not json', '', '[1,2]', '"text"', '42', '{"a":'] as $body) {
            $headers = self::headers(Webhooks::sign(self::SECRET, self::ID, self::TS, $body));
            self::refused(E::REASON_INVALID_BODY, fn () => Webhooks::verify($body, $headers, self::SECRET, now: self::TS), 'the body is not');
        }
        $body = ' {} ';
        $event = Webhooks::verify($body, self::headers(Webhooks::sign(self::SECRET, self::ID, self::TS, $body)), self::SECRET, now: self::TS);
        self::assertSame([], $event->extra);
    }

    public function testAFileshareEvent(): void
    {
        $file = ['file_id' => 7, 'filename' => 'a.txt', 'size' => 3, 'upload_date' => '2026-11-27 10:00:00', 'download_count' => 0,
            'public_link' => 'https://files.test/download/tok', 'content_type' => 'text/plain', 'sha256' => str_repeat('a', 64), 'expires_at' => null];
        $body = json_encode(['type' => 'file.uploaded', 'timestamp' => '2026-11-27T10:00:00.000Z', 'data' => $file], \JSON_UNESCAPED_SLASHES);
        $now = 1795773600; // 2026-11-27T10:00:00Z
        $event = Webhooks::verify($body, self::headers(Webhooks::sign(self::SECRET, 'msg_2', $now, $body), $now, 'msg_2'), self::SECRET, now: $now);
        self::assertSame(WebhookEvent::FILE_UPLOADED, $event->type);
        self::assertSame('2026-11-27T10:00:00.000Z', $event->timestamp);
        self::assertSame('2026-11-27T10:00:00+00:00', $event->time?->format(\DATE_ATOM));
        self::assertSame($file, $event->data);
        self::assertSame('msg_2', $event->message_id);
        self::assertSame([], $event->extra);
        self::assertSame($body, json_encode($event, \JSON_UNESCAPED_SLASHES), 'json_encode gives the body back');
        self::assertSame(7, \Fileshare\Model\FileRecord::fromArray($event->data)->file_id);
        self::assertContains('link.downloaded', WebhookEvent::TYPES);
        self::assertContains(WebhookEvent::UPLOAD_REQUEST_FILE_RECEIVED, WebhookEvent::TYPES);
        self::assertContains(WebhookEvent::UPLOAD_REQUEST_FULL, WebhookEvent::TYPES);
        self::assertCount(11, WebhookEvent::TYPES);

        $body = '{"type":"webhook.test","timestamp":"2026-11-27T10:00:00.000Z","data":{},"attempt":2}';
        $event = Webhooks::verify($body, self::headers(Webhooks::sign(self::SECRET, 'msg_3', $now, $body), $now, 'msg_3'), self::SECRET, now: $now);
        self::assertSame(['attempt' => 2], $event->extra);
        self::assertSame($body, json_encode($event), 'an empty data stays an object');
    }

    public function testTheExceptionIsAFileshareException(): void
    {
        $e = self::refused(E::REASON_MISSING_HEADER, fn () => Webhooks::verify(self::BODY, [], self::SECRET));
        self::assertInstanceOf(FileshareException::class, $e);
        self::assertInstanceOf(ExceptionInterface::class, $e);
        self::assertNull($e->getStatus());
        self::assertNull($e->getErrorCode());
        self::assertNull($e->getRequestId());
        self::assertSame(0, $e->getCode());
        // The secret is a sensitive parameter: not in the trace's arguments.
        self::assertStringNotContainsString('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', $e->getTraceAsString());
    }
}
