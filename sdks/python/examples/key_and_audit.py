"""What the key may do, and what happened to the account lately.

    FILESHARE_BASE_URL=https://files.example.com/api/v1 FILESHARE_API_KEY=fsk_... python3 examples/key_and_audit.py

Prints the key's scopes and allowed addresses (``client.key()``), then the account's audit events
of the last day, newest first (``client.audit_events.iterate``; the key needs ``audit:read``).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import fileshare


def main() -> None:
    with fileshare.Client() as client:  # FILESHARE_BASE_URL and FILESHARE_API_KEY
        key = client.key()
        where = ", ".join(key.allowed_ips) or "anywhere"
        expiry = key.expiry.isoformat() if key.expiry else "never"
        print(f"key #{key.key_id} {key.name!r} ({key.prefix}…) on a {key.plan} account, expires {expiry}, usable from {where}")
        print(f"scopes: {' '.join(key.scopes)}")

        if "audit:read" not in key.scopes:
            print("this key cannot read the audit log (it lacks audit:read)")
            return
        since = datetime.now(timezone.utc) - timedelta(days=1)
        try:
            for count, event in enumerate(client.audit_events.iterate(limit=50, since=since)):
                if count == 20:
                    print("  …")
                    break
                actor = event.actor.name or event.actor.type
                target = f"{event.target.type} {event.target.id}" if event.target else "-"
                print(f"  {event.at}  {event.action:<16} by {actor:<12} on {target:<10} from {event.ip or '?'}  {dict(event.details)}")
        except fileshare.InsufficientScopeError as error:
            print(f"the server refused: the key needs {error.required_scope}")


if __name__ == "__main__":
    main()
