"""The SDK's logger, ``logging.getLogger("fileshare")``, and ``FILESHARE_LOG``.

The SDK logs each request and answer (method, URL, status, request id, time) at DEBUG, and each
retry and resumption at INFO, like any library: nothing shows unless the application configures
logging (``logging.basicConfig(level=logging.DEBUG)``) or sets ``FILESHARE_LOG=debug`` or ``info``,
which gives the logger a handler to standard error. No header is logged, so neither is the key.
"""

from __future__ import annotations

import logging
import os

logger = logging.getLogger("fileshare")
"""Every line the SDK logs goes here."""

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO}
_handler: logging.Handler | None = None


def setup_logging() -> None:
    """Honours ``FILESHARE_LOG`` (``debug`` or ``info``; anything else changes nothing). Every
    client's constructor calls it, so the variable may be set any time before."""
    global _handler
    level = _LEVELS.get(os.environ.get("FILESHARE_LOG", "").strip().lower())
    if level is None:
        return
    logger.setLevel(level)
    if _handler is None:
        _handler = logging.StreamHandler()
        _handler.setFormatter(logging.Formatter("[%(asctime)s %(name)s %(levelname)s] %(message)s"))
        logger.addHandler(_handler)
