"""Shared fixtures: the real-file corpus beside the project, and a real server
process over stdio."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rpc import serving
from shared_corpus import CORPUS

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # the property tests say so themselves
    pass
else:
    # Hypothesis times how long an example, and drawing the first ones, take; the gate must not pass
    # or fail on how fast the machine is. Tests that give their own settings inherit these.
    settings.register_profile("any-speed", deadline=None, suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("any-speed")



@pytest.fixture(autouse=True)
def session_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The command line's session folder, one for each test (its subprocesses inherit it): no test
    writes the user's cache, nor sees another's session."""
    folder = tmp_path_factory.mktemp("session") / "session"
    monkeypatch.setenv("AGENTREAD_SESSION_DIR", str(folder))
    return folder


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not (CORPUS / "expectations.json").is_file():
        pytest.skip(f"the shared corpus is not at {CORPUS} (set AGENTREAD_CORPUS to its folder)")
    return CORPUS


@pytest.fixture(scope="session")
def expectations(corpus: Path) -> dict:
    return json.loads((corpus / "expectations.json").read_text())["files"]


@pytest.fixture
def server(tmp_path: Path):
    """A fresh server process whose workspace is an empty temp folder; stopped after the test."""
    yield from serving(tmp_path)
