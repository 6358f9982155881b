<?php

declare(strict_types=1);

namespace Fileshare\Model;

/** What Files::deleteMany() did: the API's `deleted` and `not_found`, each in the order given. */
final readonly class BulkDeleteResult
{
    /**
     * @param list<int> $deleted   the ids deleted by this call
     * @param list<int> $not_found the ids that name none of your files (never one, another account's, deleted already or expired)
     */
    public function __construct(
        public array $deleted,
        public array $not_found,
    ) {
    }
}
