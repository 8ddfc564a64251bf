"""Fixtures of the differential suite: one JSON-RPC server on the third-party files a module."""

from __future__ import annotations

import pytest
from harness import THIRDPARTY, rpc_server


@pytest.fixture(scope="module")
def rpc():
    """A JSON-RPC server whose workspace is .thirdparty/; `rpc(params)` reads through it."""
    if not THIRDPARTY.is_dir():
        pytest.skip(f"{THIRDPARTY} is absent: run ./scripts/fetch-thirdparty (scripts/test does)")
    server = rpc_server()
    yield lambda params: server.read(**params)
    server.close()

