"""Test helpers: the shared launcher, a connection-cutting proxy, a blocking face for AsyncClient."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Iterator

import httpx

import fileshare

REPO = Path(__file__).resolve().parents[3]
LAUNCHER = REPO / "sdks" / "launcher" / "launch-server.mjs"


class Launcher:
    """``node sdks/launcher/launch-server.mjs``: one JSON line on stdout; closing stdin stops it."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            ["node", str(LAUNCHER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO
        )
        assert self.process.stdout is not None
        self._stderr: list[bytes] = []
        threading.Thread(target=self._drain, daemon=True).start()
        line = self.process.stdout.readline()
        if not line:
            self.process.wait(timeout=10)
            raise RuntimeError(f"the launcher exited ({self.process.returncode}) before it was ready:\n" + self.stderr())
        self.info: dict[str, Any] = json.loads(line)

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._stderr.append(line)

    def stderr(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")

    def stop(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=30)


class CuttingProxy:
    """A TCP proxy in front of the server that can cut the next connection after N bytes."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.upstream_bytes = 0
        self.downstream_bytes = 0
        self.cuts = 0
        self._cut_up: int | None = None
        self._cut_down: int | None = None
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        threading.Thread(target=self._accept, daemon=True).start()

    def cut_upstream_after(self, count: int) -> None:
        self._cut_up = count

    def cut_downstream_after(self, count: int) -> None:
        self._cut_down = count

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            self._sockets.update((client, upstream))
            state = {"up": 0, "down": 0, "cut": False}
            threading.Thread(target=self._pipe, args=(client, upstream, True, state), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, False, state), daemon=True).start()

    def _cut(self, a: socket.socket, b: socket.socket, state: dict[str, Any]) -> None:
        with self._lock:
            if not state["cut"]:
                state["cut"] = True
                self.cuts += 1
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def _pipe(self, src: socket.socket, dst: socket.socket, up: bool, state: dict[str, Any]) -> None:
        key = "up" if up else "down"
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                with self._lock:
                    state[key] += len(data)
                    if up:
                        self.upstream_bytes += len(data)
                    else:
                        self.downstream_bytes += len(data)
                    limit = self._cut_up if up else self._cut_down
                    over = limit is not None and state[key] >= limit
                    if over:
                        if up:
                            self._cut_up = None
                        else:
                            self._cut_down = None
                if over:
                    assert limit is not None
                    keep = len(data) - (state[key] - limit)
                    if not up and keep > 0:
                        dst.sendall(data[:keep])
                    self._cut(src, dst, state)
                    return
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self.listener.close()
        for s in list(self._sockets):
            try:
                s.close()
            except OSError:
                pass


class _Rerouting(httpx.HTTPTransport):
    """Sends every request addressed to ``origin`` to ``to`` instead (the cutting proxy): the grant
    URLs the server answers with are absolute, on its own address."""

    def __init__(self, origin: str, to: str) -> None:
        super().__init__()
        self.origin, self.to = httpx.URL(origin), httpx.URL(to)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.url = _reroute(request.url, self.origin, self.to)
        return super().handle_request(request)


class _AsyncRerouting(httpx.AsyncHTTPTransport):
    def __init__(self, origin: str, to: str) -> None:
        super().__init__()
        self.origin, self.to = httpx.URL(origin), httpx.URL(to)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        request.url = _reroute(request.url, self.origin, self.to)
        return await super().handle_async_request(request)


def _reroute(url: httpx.URL, origin: httpx.URL, to: httpx.URL) -> httpx.URL:
    if (url.host, url.port) == (origin.host, origin.port):
        return url.copy_with(host=to.host, port=to.port)
    return url


def through_proxy(flavour: str, server: dict[str, Any], proxy: CuttingProxy) -> Any:
    """A transport for ``make_client(transport=...)`` that takes every request through ``proxy``."""
    return _Rerouting(server["server_url"], proxy.url) if flavour == "sync" else _AsyncRerouting(server["server_url"], proxy.url)


def fileshare_cli(server: dict[str, Any], *args: str) -> str:
    """``fileshare ARGS...`` (the operator CLI) on the launcher's data folder; its standard output."""
    env = {**os.environ, "FILESHARE_DATA_DIR": server["data_dir"], "FILESHARE_LOG_LEVEL": "warn"}
    for setting in ("FILESHARE_DATABASE_URL", "FILESHARE_REDIS_URL"):
        env.pop(setting, None)
    command = ["node", str(REPO / "bin" / "fileshare.js"), *args]
    out = subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, f"fileshare {' '.join(args[:2])}: {out.stderr}"
    return out.stdout


def new_account(server: dict[str, Any], name: str) -> tuple[int, str]:
    """One more pro account on the launcher's server, made by the CLI; its id and key."""
    out = fileshare_cli(server, "account", "create", "--email", f"{name}@sdk-tests.invalid", "--plan", "pro", "--json")
    created = json.loads(out.strip().splitlines()[-1])
    return int(created["account_id"]), str(created["api_key"])


def create_account(server: dict[str, Any], name: str) -> str:
    """One more pro account on the launcher's server (the ``fileshare`` CLI on its data folder); its key."""
    return new_account(server, name)[1]


@dataclass(frozen=True)
class Exchange:
    """One request as it left the SDK, and what came back (``status`` None: no answer)."""

    method: str
    path: str
    idempotency_key: str | None
    status: int | None
    replayed: bool
    query: str = ""


def _exchange(request: httpx.Request, response: httpx.Response | None) -> Exchange:
    replayed = response is not None and response.headers.get("idempotent-replayed") == "true"
    status = None if response is None else response.status_code
    return Exchange(request.method, request.url.path, request.headers.get("idempotency-key"), status, replayed, request.url.query.decode())


class Recording(httpx.HTTPTransport):
    """A transport that notes every exchange in ``exchanges``."""

    def __init__(self) -> None:
        super().__init__()
        self.exchanges: list[Exchange] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        try:
            response = super().handle_request(request)
        except httpx.TransportError:
            self.exchanges.append(_exchange(request, None))
            raise
        self.exchanges.append(_exchange(request, response))
        return response


class _AsyncRecording(httpx.AsyncHTTPTransport):
    def __init__(self) -> None:
        super().__init__()
        self.exchanges: list[Exchange] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            response = await super().handle_async_request(request)
        except httpx.TransportError:
            self.exchanges.append(_exchange(request, None))
            raise
        self.exchanges.append(_exchange(request, response))
        return response


def recording(flavour: str) -> Any:
    """A transport for ``make_client(transport=...)`` whose ``exchanges`` list every request and answer."""
    return Recording() if flavour == "sync" else _AsyncRecording()


class BlockingAsync:
    """Drives a fileshare.AsyncClient from blocking tests: every call runs on one event loop, so
    the same test body exercises both clients."""

    def __init__(self, client: fileshare.AsyncClient, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.client = client
        self._owns_loop = loop is None
        self.loop = loop or asyncio.new_event_loop()
        self.files = _BlockingCalls(self, client.files)
        self.links = _BlockingCalls(self, client.links)
        self.audit_events = _BlockingCalls(self, client.audit_events)
        self.webhooks = _BlockingCalls(self, client.webhooks)
        self.upload_requests = _BlockingCalls(self, client.upload_requests)

    def with_options(self, **options: Any) -> BlockingAsync:
        return BlockingAsync(self.client.with_options(**options), self.loop)

    @property
    def with_raw_response(self) -> Any:
        raw = self.client.with_raw_response
        owner = self

        class Raw:
            files = _BlockingCalls(owner, raw.files)
            links = _BlockingCalls(owner, raw.links)
            audit_events = _BlockingCalls(owner, raw.audit_events)
            webhooks = _BlockingCalls(owner, raw.webhooks)
            upload_requests = _BlockingCalls(owner, raw.upload_requests)

            def stats(self, **kwargs: Any) -> Any:
                return owner.run(raw.stats(**kwargs))

            def download(self, *args: Any, **kwargs: Any) -> Any:
                return owner.run(raw.download(*args, **kwargs))

            def key(self, **kwargs: Any) -> Any:
                return owner.run(raw.key(**kwargs))

        return Raw()

    def run(self, awaitable: Any) -> Any:
        return self.loop.run_until_complete(awaitable)

    def stats(self, **kwargs: Any) -> fileshare.StatsResult:
        return self.run(self.client.stats(**kwargs))  # type: ignore[no-any-return]

    def key(self, **kwargs: Any) -> fileshare.CurrentKey:
        return self.run(self.client.key(**kwargs))  # type: ignore[no-any-return]

    def download(self, *args: Any, **kwargs: Any) -> fileshare.DownloadResult:
        return self.run(self.client.download(*args, **kwargs))  # type: ignore[no-any-return]

    def resumable_uploads(self) -> fileshare.TusCapabilities:
        return self.run(self.client.resumable_uploads())  # type: ignore[no-any-return]

    def close(self) -> None:
        self.run(self.client.close())
        if self._owns_loop:
            self.loop.close()

    def __enter__(self) -> BlockingAsync:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _BlockingCalls:
    """``client.files``, ``client.links``, ``client.audit_events``, ``client.webhooks`` or
    ``client.upload_requests`` of an AsyncClient, each call run to its end."""

    def __init__(self, owner: BlockingAsync, resource: Any) -> None:
        self.owner = owner
        self.resource = resource

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.resource, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            return self.owner.run(method(*args, **kwargs))

        return call

    def iterate(self, **kwargs: Any) -> Iterator[Any]:
        return self._drive(self.resource.iterate(**kwargs))

    def iterate_deliveries(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        return self._drive(self.resource.iterate_deliveries(*args, **kwargs))

    def iterate_files(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        return self._drive(self.resource.iterate_files(*args, **kwargs))

    def _drive(self, iterator: AsyncIterator[Any]) -> Iterator[Any]:
        async def step() -> Any:
            try:
                return await iterator.__anext__()
            except StopAsyncIteration:
                return None

        while (item := self.owner.run(step())) is not None:
            yield item


def without_waits(client: Any) -> Any:
    """Makes a Client, AsyncClient or BlockingAsync retry at once (no backoff sleeps); returns it."""
    inner = client.client if isinstance(client, BlockingAsync) else client
    if isinstance(inner, fileshare.AsyncClient):

        async def skip(seconds: float) -> None:
            return None

        inner._sleep = skip
    else:
        inner._sleep = lambda seconds: None
    return client


def sparse_file(path: Path, size: int) -> Path:
    with open(path, "wb") as file:
        file.truncate(size)
    return path


def random_bytes(size: int, seed: int) -> bytes:
    import random

    return random.Random(seed).randbytes(size)


def without_env(monkeypatch: Any) -> None:
    for name in ("FILESHARE_BASE_URL", "FILESHARE_API_KEY"):
        monkeypatch.delenv(name, raising=False)



def token_of(request: fileshare.UploadRequest) -> str:
    """The request's token: the last path segment of its url."""
    return request.url.rstrip("/").rsplit("/", 1)[1]


def guest_upload(server: dict[str, Any], token: str, body: bytes, filename: str, grant: str | None = None) -> httpx.Response:
    """A guest's one-request tus upload (creation-with-upload), as the sheet's "Guest uploads" shows."""
    headers = {
        "Tus-Resumable": "1.0.0",
        "Authorization": f"UploadRequest {token}",
        "Upload-Length": str(len(body)),
        "Upload-Metadata": "filename " + base64.b64encode(filename.encode()).decode(),
        "Content-Type": "application/offset+octet-stream",
    }
    if grant is not None:
        headers["Fileshare-Upload-Grant"] = grant
    return httpx.post(f"{server['base_url']}/uploads", headers=headers, content=body, timeout=30)


__all__ = ["Launcher", "CuttingProxy", "BlockingAsync", "through_proxy", "create_account", "new_account", "fileshare_cli", "Exchange", "recording", "without_waits", "sparse_file", "random_bytes", "without_env", "guest_upload", "token_of", "REPO", "os"]
