"""Uploads files with a Python HTTP client and reports what each attempt saw, as JSON.

Usage: /usr/bin/python3 python_upload.py httpx|requests
Reads one job a line on standard input, {"url", "api_key", "path", "count"}, uploads the file
`count` times, and answers each job with one line: the list of what the attempts saw, each the
answer's status and error code, or the exception's class name when the client saw no answer at all
(the failure the refused-body handling exists to prevent). One process serves every job, so the
interpreter and the library load once per test file, not once per case.
"""
import json
import sys

client_name = sys.argv[1]

if client_name == "httpx":
    import httpx

    # A fresh connection per attempt, as a fresh process would have: no pooled socket hides a reset.
    def upload(url, headers, path):
        with open(path, "rb") as file, httpx.Client(timeout=30) as client:
            return client.post(url, headers=headers, files={"file": ("upload.bin", file)})
else:
    import requests

    def upload(url, headers, path):
        with open(path, "rb") as file, requests.Session() as session:
            return session.post(url, headers=headers, files={"file": ("upload.bin", file)}, timeout=30)

for line in sys.stdin:
    job = json.loads(line)
    headers = {"Authorization": f"Bearer {job['api_key']}"}
    seen = []
    for _ in range(job["count"]):
        try:
            response = upload(job["url"], headers, job["path"])
            code = response.json().get("error", {}).get("code") if response.status_code >= 400 else None
            seen.append({"status": response.status_code, "code": code})
        except Exception as error:  # noqa: BLE001 - any failure is what we report
            seen.append({"error": type(error).__name__})
    print(json.dumps(seen), flush=True)
