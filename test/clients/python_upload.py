"""Uploads one file N times with a Python HTTP client and prints what each attempt saw, as JSON.

Usage: /usr/bin/python3 python_upload.py httpx|requests URL API_KEY PATH COUNT
Each line of the output list is the answer's status and error code, or the exception's class name
when the client saw no answer at all (the failure the refused-body handling exists to prevent).
"""
import json
import sys

client_name, url, api_key, path, count = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
headers = {"Authorization": f"Bearer {api_key}"}
seen = []

if client_name == "httpx":
    import httpx

    # A fresh connection per attempt, as a fresh process would have: no pooled socket hides a reset.
    def upload():
        with open(path, "rb") as file, httpx.Client(timeout=30) as client:
            return client.post(url, headers=headers, files={"file": ("upload.bin", file)})
else:
    import requests

    def upload():
        with open(path, "rb") as file, requests.Session() as session:
            return session.post(url, headers=headers, files={"file": ("upload.bin", file)}, timeout=30)

for _ in range(count):
    try:
        response = upload()
        code = response.json().get("error", {}).get("code") if response.status_code >= 400 else None
        seen.append({"status": response.status_code, "code": code})
    except Exception as error:  # noqa: BLE001 - any failure is what we report
        seen.append({"error": type(error).__name__})

print(json.dumps(seen))
