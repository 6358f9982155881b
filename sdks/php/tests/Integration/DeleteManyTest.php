<?php

declare(strict_types=1);

namespace Fileshare\Tests\Integration;

use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\NotFoundException;
use Fileshare\Exception\PermissionDeniedException;
use Fileshare\Tests\Support\IntegrationTestCase;
use Fileshare\Tests\Support\Server;
use Fileshare\UploadSource;

/** $client->files->deleteMany() against the real server. */
final class DeleteManyTest extends IntegrationTestCase
{
    private static function upload(string $name, string $account = 'pro', array $options = []): int
    {
        return Server::client($account, $options)->files->upload(UploadSource::fromBytes($name), ['filename' => $name])->file_id;
    }

    public function testDeletesAndNamesTheIdsThatAreNoneOfTheAccounts(): void
    {
        $otherKey = Server::newAccount();
        $theirs = self::upload('theirs.txt', 'pro', ['api_key' => $otherKey]);
        $a = self::upload('a.txt');
        $b = self::upload('b.txt');
        $result = Server::client()->files->deleteMany([$b, 999_999_999, $a, $theirs]);
        self::assertSame([$b, $a], $result->deleted);
        self::assertSame([999_999_999, $theirs], $result->not_found);
        try {
            Server::client()->files->get($a);
            self::fail('no exception');
        } catch (NotFoundException) {
            $this->addToAssertionCount(1);
        }
        self::assertSame($theirs, Server::client('pro', ['api_key' => $otherKey])->files->get($theirs)->file_id);
    }

    public function testTheSameIdempotencyKeyReplaysTheFirstAnswer(): void
    {
        $a = self::upload('c.txt');
        $b = self::upload('d.txt');
        $key = "delete-many-php-$a";
        $first = Server::client()->files->deleteMany([$a, (string) $b], ['idempotency_key' => $key]);
        self::assertSame([$a, $b], $first->deleted);
        $again = Server::client()->files->deleteMany([$a, $b], ['idempotency_key' => $key]);
        self::assertEquals($first, $again);
    }

    public function testNeedsFilesDelete(): void
    {
        $id = self::upload('kept.txt');
        try {
            Server::client('read_only')->files->deleteMany([$id]);
            self::fail('no exception');
        } catch (PermissionDeniedException $e) {
            self::assertSame('insufficient_scope', $e->getErrorCode());
        }
        self::assertSame($id, Server::client()->files->get($id)->file_id);
    }

    public function testRefusesBadIdsBeforeAnyRequest(): void
    {
        foreach ([[], [0], ['abc'], range(1, 101)] as $ids) {
            try {
                Server::client()->files->deleteMany($ids);
                self::fail('no exception for ' . json_encode($ids));
            } catch (ConfigurationException) {
                $this->addToAssertionCount(1);
            }
        }
    }
}
