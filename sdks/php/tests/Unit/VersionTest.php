<?php

declare(strict_types=1);

namespace Fileshare\Tests\Unit;

use Fileshare\Client;
use PHPUnit\Framework\TestCase;

/** The version is one: Client::VERSION, the user agent, CHANGELOG.md's newest entry, composer.json's branch alias. */
final class VersionTest extends TestCase
{
    public function testTheVersionMatchesTheManifestAndTheChangelog(): void
    {
        $root = \dirname(__DIR__, 2);
        self::assertMatchesRegularExpression('/^\d+\.\d+\.\d+$/', Client::VERSION);
        self::assertSame('fileshare-sdk-php/' . Client::VERSION, Client::USER_AGENT);

        preg_match('/^## (\d+\.\d+\.\d+)/m', (string) file_get_contents("$root/CHANGELOG.md"), $m);
        self::assertSame(Client::VERSION, $m[1] ?? null, 'the newest CHANGELOG entry');

        $composer = json_decode((string) file_get_contents("$root/composer.json"), true, flags: \JSON_THROW_ON_ERROR);
        self::assertArrayNotHasKey('version', $composer, 'Composer takes the version from the tag (or the branch alias)');
        [$major, $minor] = explode('.', Client::VERSION);
        self::assertSame("$major.$minor.x-dev", $composer['extra']['branch-alias']['dev-main']);
        self::assertSame('fileshare/sdk', $composer['name']);
        foreach (['authors', 'homepage', 'support', 'license'] as $field) {
            self::assertNotEmpty($composer[$field] ?? null, $field);
        }
    }
}
