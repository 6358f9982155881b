from __future__ import annotations

import os
from typing import Any, Callable, Iterator
from urllib.parse import urlparse

import pytest

import fileshare
from helpers import REPO, BlockingAsync, CuttingProxy, Launcher, create_account


@pytest.fixture(scope="session")
def server() -> Iterator[dict[str, Any]]:
    """One real server for the session, from the shared launcher (needs the root's dist/ built)."""
    if not (REPO / "dist" / "server.js").exists():
        pytest.fail("dist/server.js is missing: run `npm run build` at the repository root first")
    launcher = Launcher()
    try:
        yield launcher.info
    finally:
        code = launcher.stop()
        assert code == 0, f"the launcher stopped with {code}:\n{launcher.stderr()[-3000:]}"


@pytest.fixture(scope="session")
def proxy(server: dict[str, Any]) -> Iterator[CuttingProxy]:
    target = urlparse(server["server_url"])
    assert target.hostname is not None and target.port is not None
    cutting = CuttingProxy(target.hostname, target.port)
    yield cutting
    cutting.close()


@pytest.fixture(scope="session")
def other_key(server: dict[str, Any]) -> str:
    """The key of another pro account, whose files and links the "pro" account must not see."""
    return create_account(server, "other")


@pytest.fixture(params=["sync", "async"])
def flavour(request: pytest.FixtureRequest) -> str:
    return str(request.param)


Factory = Callable[..., Any]


@pytest.fixture
def make_client(server: dict[str, Any], flavour: str) -> Iterator[Factory]:
    """``make_client("pro", max_retries=0)``: a Client, or an AsyncClient behind a blocking face."""
    made: list[Any] = []

    def make(account: str | None = "pro", **options: Any) -> Any:
        options.setdefault("base_url", server["base_url"])
        if account is not None:
            options.setdefault("api_key", server["keys"][account])
        if flavour == "sync":
            client: Any = fileshare.Client(**options)
        else:
            client = BlockingAsync(fileshare.AsyncClient(**options))
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("FILESHARE_BASE_URL", "FILESHARE_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("FILESHARE_SLOW_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="slow: set FILESHARE_SLOW_TESTS=1")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
