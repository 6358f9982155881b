"""Share one file several ways: a link for one person (3 downloads, 7 days, a password), a plain
link, and a lifetime for the file itself; download through the password; rotate; revoke.

    python3 examples/share_links.py [PATH]
"""

from __future__ import annotations

import secrets
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

import fileshare


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else folder / "report.txt"
    if len(sys.argv) == 1:
        source.write_text("Quarterly report\n" * 1000)
    password = secrets.token_urlsafe(12)

    with fileshare.Client() as client:  # FILESHARE_BASE_URL and FILESHARE_API_KEY
        file = client.files.upload(source, expires_in=timedelta(days=30))
        print(f"uploaded #{file.file_id}, gone at {file.expiry} (UTC); default link {file.public_link}")

        link = client.links.create(
            file.file_id, label="for the auditors", expires_in=timedelta(days=7), max_downloads=3, password=password
        )
        print(f"link #{link.link_id} {link.url}: {link.downloads_left} downloads, until {link.expiry}")
        plain = client.links.create(file.file_id, label="team")

        try:
            client.download(link.url, folder / "copy.txt", password="not the password")
        except fileshare.AuthenticationError as error:
            print(f"wrong password refused ({error.code}); nothing was counted")
        result = client.download(link, folder / "copy.txt", password=password)
        link = client.links.get(link.link_id)
        print(f"downloaded {result.size} bytes through the link: {link.download_count} of {link.max_downloads} used")

        link = client.links.update(link.link_id, max_downloads=None)  # lift the limit, keep the rest
        rotated = client.links.rotate(link.link_id)
        print(f"rotated: {link.url} is dead, {rotated.url} works (still {rotated.download_count} download)")
        client.links.delete(plain.link_id)

        for each in client.links.list(file.file_id):
            kind = "default" if each.default else each.label
            print(f"  #{each.link_id:<5} {each.status:<8} {each.download_count} downloads  {kind}")

        client.files.update(file.file_id, expires_at=None)  # keep the file after all
        client.files.delete(file.file_id)


if __name__ == "__main__":
    main()
