"""Where the shared corpus of real files is: beside the project, or at $AGENTREAD_CORPUS. A module
of its own, as the suites' conftest.py files share one module name."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("AGENTREAD_CORPUS", REPO.parent / "shared" / "corpus"))
