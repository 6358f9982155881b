"""Telling the SDK's errors apart.

    FILESHARE_BASE_URL=... FILESHARE_API_KEY=... python3 examples/error_handling.py
"""

from __future__ import annotations

import fileshare


def main() -> None:
    with fileshare.Client(max_retries=2) as client:
        try:
            client.files.get(987654321)
        except fileshare.NotFoundError as error:
            print(f"not found: {error.code} (request id {error.request_id})")
        try:
            client.files.upload(b"hello", filename="hello.txt")
        except fileshare.LimitExceededError as error:
            if error.code == "daily_upload_limit_exceeded":
                print("no uploads left today; they come back at 00:00 UTC")
            elif error.code == "storage_quota_exceeded":
                usage = client.stats()
                print(f"the account's storage is full: {usage.stats.total_size} of {usage.limits.max_storage} bytes used")
            else:
                print(f"too large for this plan: {error.message}")
        except fileshare.RateLimitError as error:
            print(f"slow down: retry in {error.retry_after} s ({error.rate_limit.remaining} left of {error.rate_limit.limit})")
        except fileshare.AuthenticationError:
            print("the key is wrong, revoked or expired")
        except fileshare.InsufficientScopeError as error:
            print(f"this key may not upload: it lacks the scope {error.required_scope}")
        except fileshare.IpNotAllowedError:
            print("this key may not be used from this address")
        except fileshare.PermissionDeniedError:
            print("this plan has no API access")
        except fileshare.APIConnectionError as error:
            print(f"no answer from the server: {error}")
        except fileshare.FileshareError as error:
            print(f"{type(error).__name__}: {error.status} {error.code}: {error}")
        else:
            for file in client.files.iterate():
                if file.filename == "hello.txt":
                    client.files.delete(file.file_id)


if __name__ == "__main__":
    main()
