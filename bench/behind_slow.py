"""A small PDF page read through the real server, alone and behind six slow PDF reads.

    python bench/behind_slow.py [--rounds 5]

Starts the server (`agentread serve`, its defaults) on a workspace holding a 3-page PDF and, for
each round, six fresh copies of the fuzz-found PDF whose page PDFium takes seconds on
(tests/data/hostile/pdfium-slow-page.pdf). Each round reads page 1 of the small PDF alone, then
sends a `find` in each of the six copies (a search reads the slow page; fresh copies, so that
nothing of an earlier round is warm) and, at once, page 1 of the small PDF again, timing its answer
from its send; then waits for the six. Prints each round's times and the medians as JSON. Not part
of the test run.
"""

from __future__ import annotations

import shutil
import statistics
import time

from common import REPO, arguments, serving, show, temp_folder

# common.py has put tests/ and python/ on the path.
# isort: split
from builders import build_pdf  # noqa: E402
from rpc import ServerProcess, text_of  # noqa: E402

SLOW_PDF = REPO / "tests" / "data" / "hostile" / "pdfium-slow-page.pdf"
SLOW_READS = 6
ROUNDS = 5
# How long the slow reads of a round may take before the bench gives up on them (only a stuck
# server takes this long).
SLOW_WAIT = 300.0


def small_page(server: ServerProcess) -> float:
    """Page 1 of small.pdf: ms from its send to its answer."""
    started = time.perf_counter()
    result = server.read(path="small.pdf", pages="1")
    took = (time.perf_counter() - started) * 1000
    assert "small page 1" in text_of(result), result
    return took


def run(rounds: int) -> dict:
    with temp_folder("agentread-behind-") as folder:
        (folder / "small.pdf").write_bytes(build_pdf([f"small page {n}" for n in (1, 2, 3)]))
        for r in range(rounds):
            for n in range(SLOW_READS):
                shutil.copy(SLOW_PDF, folder / f"slow-{r}-{n}.pdf")
        with serving(folder) as server:
            small_page(server)  # the workers started, the small PDF warm
            alone, behind, slow_codes = [], [], []
            for r in range(rounds):
                alone.append(small_page(server))
                slow = [server.send("agentread/read", {"path": f"slow-{r}-{n}.pdf", "find": "zzzq"})
                        for n in range(SLOW_READS)]
                behind.append(small_page(server))
                for msg_id in slow:
                    result = server.wait(msg_id, timeout=SLOW_WAIT)["result"]
                    slow_codes.append((result.get("error") or {}).get("code", "ok"))
    return {"alone_ms": [round(t, 2) for t in alone], "behind_ms": [round(t, 2) for t in behind],
            "alone_median_ms": round(statistics.median(alone), 2),
            "behind_median_ms": round(statistics.median(behind), 2),
            "ratio": round(statistics.median(behind) / statistics.median(alone), 2),
            "slow_answers": {code: slow_codes.count(code) for code in set(slow_codes)}}


def main() -> None:
    show(run(arguments(__doc__, rounds=ROUNDS).rounds))


if __name__ == "__main__":
    main()
