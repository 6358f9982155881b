"""Ask someone without an account for files: an upload request, and what the account's requests received.

    FILESHARE_BASE_URL=https://files.example.com/api/v1 FILESHARE_API_KEY=fsk_... python3 examples/upload_requests.py

Makes an upload request (at most 10 files of 100 MiB each, open for 7 days, each file kept 30
days) and prints its URL for the guest; then lists the account's requests with their counts and the
files each received (``client.upload_requests``; the key needs ``requests:manage``). Closes the
request it made, since this is a demonstration.
"""

from __future__ import annotations

from datetime import timedelta

import fileshare


def main() -> None:
    with fileshare.Client() as client:  # FILESHARE_BASE_URL and FILESHARE_API_KEY
        try:
            request = client.upload_requests.create(
                label="Documents for your application",
                message="Please upload your CV and your certificates (PDF).\nThank you!",
                expires_in=timedelta(days=7),
                max_files=10,
                max_file_size=100 * 1024 * 1024,
                file_expires_in=timedelta(days=30),
            )
        except fileshare.InsufficientScopeError as error:
            print(f"the server refused: the key needs {error.required_scope}")
            return
        print(f"send this link to the guest: {request.url}")
        print(f"  open until {request.expiry:%Y-%m-%d %H:%M} UTC, {request.files_left} files at most")

        for each in client.upload_requests.list()[:10]:
            print(f"#{each.request_id} {each.label!r}: {each.status}, {each.files_received} files, {each.bytes_received} bytes")
            for count, file in enumerate(client.upload_requests.iterate_files(each.request_id, limit=50)):
                if count == 5:
                    print("    …")
                    break
                print(f"    {file.filename} ({file.size} bytes, {file.upload_date})")

        closed = client.upload_requests.close(request.request_id)  # the link takes no more files
        print(f"#{closed.request_id} is now {closed.status}")


if __name__ == "__main__":
    main()
