"""Hostile regular expressions sent to the real server as `find`, beside quick reads.

Usage:
    python bench/hostile_patterns.py                   # the named patterns and 300 generated ones
    python bench/hostile_patterns.py --generated 1000 --seed 2

The workspace is load.py's (text files and a small notebook for the quick reads) and two files to
search: a small one (SMALL_LINES short lines, a line of LONG_RUN "a"s, one of "x"s) and a large
one (about LARGE_MB of lines, the same long lines every LONG_EVERY). The server runs with its
defaults (the 60 s read deadline, two workers). QUICK_READS quick reads (load.py's), 4 in flight,
are timed alone; then every pattern (NAMED, then `--generated` from a seeded generator: counts
near and far past the bounds, groups nested deep, nested repeats, alternations, backreferences,
lookarounds, fuzzy matching, recursion) is sent as `find` with `regex: true` on each of the two
files, PATTERNS_IN_FLIGHT at a time, while the same quick reads go on until the last pattern is
answered. Then the named patterns go once through the MCP server (the SDK's client), and a plain
read after them. Printed as JSON: how the patterns were answered (by error code, or "hits",
"none", "stopped for time"), the slowest answer, answers lost (none within LOST_AFTER past the
deadline), whether the server is alive and answering at the end, its peak memory (VmHWM) before
and after, its workers' peaks (polled), the quick reads' p50 and p99 alone and meanwhile, the MCP
answers, the load average.
"""

from __future__ import annotations

import queue
import random
import threading
import time
from collections import Counter
from pathlib import Path

from common import LOST_AFTER, arguments, load_average, serving, show, temp_folder
from load import make_workspace, quick_beside

# common.py has put tests/ and python/ on the path.
# isort: split
from agentread.cancel import DEFAULT_READ_DEADLINE_SECONDS  # noqa: E402
from rpc import ServerProcess, text_of  # noqa: E402

# Patterns that cost a naive engine gigabytes, the stack, or time without end: a count written out
# hundreds of thousands of times (the first overflows a thread's stack as it compiles), counts
# asking for gigabytes, backtracking through every split of a line, groups nested past the parser,
# repeats of repeats and empty groups whose compiling grows past their counts.
NAMED = [
    "(?:ab|cd){500000}",
    "a{20000000}",
    "a{1000000000}",
    r"(?i)(.?){40}(.?){40}\Z\b\B",
    "(" * 10_000 + "a" + ")" * 10_000,
    "(" * 500 + "a" + ")" * 500,
    "(a*)*b",
    "(x+x+)+y",
    "(a|aa)+$",
    "(a|a?)+b",
    "((a{100}){100}){100}",
    "((a{100}){100})(?#x){1000}",
    "(" * 10 + ")" * 10 + "{1000}",
    "(){1000}",
    "(?:a{1000}){e<=1000}",
    "(?:(?:a|b)*){1000}c",
    "(?:x{999}){999}",
    r"(\w+\s?)+$",
    r"^(([a-z])+.)+[A-Z]([a-z])+$",
]
GENERATED = 300
SEED = 1

SMALL_LINES = 200
LARGE_MB = 64
# A line of "a"s and one of "x"s as long as this: the named backtracking patterns' worst input.
LONG_RUN = 100_000
# In the large file, the long lines come back this many lines apart.
LONG_EVERY = 50_000
# Patterns in flight at once: the server's read threads are four; the rest serve the quick reads.
PATTERNS_IN_FLIGHT = 2
# Quick reads timed alone, before the patterns.
QUICK_READS = 1_000
# How long past the server's read deadline an answer may take before it counts as lost: a search
# stops itself at half the deadline, and a read waits for a thread at most three deadlines.
LOST_PAST_DEADLINE = 3 * DEFAULT_READ_DEADLINE_SECONDS + LOST_AFTER


def make_files(folder: Path) -> None:
    long_lines = "a" * LONG_RUN + "\n" + "x" * LONG_RUN + "\n"
    prose = [f"line {n}: abcd cdab the quick brown fox, value_{n} = {n * 7}\n" for n in range(SMALL_LINES)]
    half = SMALL_LINES // 2
    (folder / "small.txt").write_text("".join(prose[:half]) + long_lines + "".join(prose[half:]))
    block = "".join(f"2026-11-27 12:00:{n % 60:02} INFO worker {n % 13} handled request {n} abcd\n"
                    for n in range(LONG_EVERY)) + long_lines
    with open(folder / "large.txt", "w") as f:
        for _ in range(max(1, (LARGE_MB << 20) // len(block))):
            f.write(block)


def generated(count: int, seed: int) -> list[str]:
    """`count` random patterns, the same for a seed: items drawn from atoms, sets, escapes, groups
    of every kind and nested, counts within and past the bounds, the package's fuzzy matching and
    recursion; some valid, some not, some past a bound."""
    rng = random.Random(seed)
    atoms = ["a", "b", "x", ".", r"\w", r"\s", r"\d", r"\b", "^", "$", r"\Z", r"\A", "[a-z]", "[^x]", r"\p{L}",
             "[[a-z]--[aeiou]]", "(?V1)", "(?i)", r"\1", r"\g<1>", "(?R)", "(?1)", "", "|", "(?#c)", "\\"]
    counts = ["*", "+", "?", "*?", "++", "{2}", "{0,}", "{40}", "{,5}", "{e<=3}", "{e<=100}", "{i<=2,d<=2}"]
    large = ["{999}", "{1000}", "{1001}", "{65535}", "{100000}", "{2,1000}"]
    opens = ["(", "(?:", "(?>", "(?=", "(?!", "(?<=", "(?<!", "(?P<n>", "(?|", "(?i:", "(?(1)"]

    def item(depth: int) -> str:
        roll = rng.random()
        if depth < 12 and roll < 0.45:
            inner = "".join(item(depth + 1) for _ in range(rng.randint(1, 3)))
            if rng.random() < 0.3:
                inner += "|" + "".join(item(depth + 1) for _ in range(rng.randint(1, 2)))
            text = rng.choice(opens) + inner + ")"
        else:
            text = rng.choice(atoms)
        roll = rng.random()
        return text + (rng.choice(large) if roll < 0.1 else rng.choice(counts) if roll < 0.5 else "")

    patterns = []
    for _ in range(count):
        pattern = "".join(item(0) for _ in range(rng.randint(1, 4)))
        if rng.random() < 0.1:  # a run of groups nested hundreds deep around it
            depth = rng.choice([50, 101, 300, 999])
            pattern = "(" * depth + pattern + ")" * depth
        patterns.append(pattern)
    return patterns


def outcome(answer: dict) -> str:
    """How a find was answered: its error code (JSON-RPC's as a number), or hits, none, or stopped
    for time."""
    if "error" in answer:
        return str(answer["error"]["code"])
    result = answer["result"]
    if result.get("isError"):
        return result["error"]["code"]
    if "the search stopped there for time" in text_of(result):
        return "stopped for time"
    return "hits" if (result.get("shown") or {}).get("hits") else "none"


def attack(server: ServerProcess, finds: list[dict]) -> tuple[Counter, list[float], int]:
    """Each find, PATTERNS_IN_FLIGHT at a time: (answers by outcome, each one's seconds, lost)."""
    outcomes: Counter = Counter()
    times: list[float] = []
    lost = 0
    todo: queue.Queue = queue.Queue()
    for params in finds:
        todo.put(params)
    lock = threading.Lock()

    def run() -> None:
        nonlocal lost
        while True:
            try:
                params = todo.get_nowait()
            except queue.Empty:
                return
            started = time.perf_counter()
            try:
                answer = server.request("agentread/read", params, timeout=LOST_PAST_DEADLINE)
            except queue.Empty:
                with lock:
                    lost += 1
                continue
            with lock:
                times.append(time.perf_counter() - started)
                outcomes[outcome(answer)] += 1

    threads = [threading.Thread(target=run) for _ in range(PATTERNS_IN_FLIGHT)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return outcomes, times, lost


def through_mcp(folder: Path) -> dict:
    """The named patterns on the small file through the MCP server, then a plain read: the answers
    by outcome (`error` for an error result), and whether the read after them answered."""
    from mcp_client import run, texts

    async def calls(client):
        outcomes: Counter = Counter()
        for pattern in NAMED:
            answer = await client.call_tool("read", {"path": "small.txt", "find": pattern, "regex": True})
            outcomes["error" if answer.is_error else "answered"] += 1
        after = await client.call_tool("read", {"path": "small.txt", "limit": 1})
        return {"answers": dict(outcomes), "read_after": not after.is_error and "line 0" in texts(after)}

    return run({}, "--root", str(folder), calls=calls)


def run(generated_count: int, seed: int) -> dict:
    with temp_folder("agentread-hostile-patterns-") as folder:
        make_workspace(folder)
        make_files(folder)
        with serving(folder) as server:
            return beside_patterns(server, folder, NAMED + generated(generated_count, seed))


def beside_patterns(server: ServerProcess, folder: Path, patterns: list[str]) -> dict:
    finds = [{"path": name, "find": pattern, "regex": True} for pattern in patterns
             for name in ("small.txt", "large.txt")]
    results: list = []
    started: list[float] = []

    def start():
        started.append(time.perf_counter())
        done = threading.Event()
        threading.Thread(target=lambda: (results.append(attack(server, finds)), done.set())).start()
        return done.is_set

    figures = quick_beside(server, QUICK_READS, start, medians=True)
    seconds = time.perf_counter() - started[0]
    outcomes, times, lost = results[0]
    alive = server.proc.poll() is None
    after = server.request("agentread/read", {"path": "small.txt", "limit": 1}, timeout=LOST_AFTER)
    return {"patterns": len(patterns), "finds": len(finds), "large_mb": round((folder / "large.txt").stat().st_size
                                                                             / 2**20),
            "answers": dict(outcomes.most_common()), "lost": lost, "seconds": round(seconds),
            "slowest_answer_s": round(max(times), 1), "server_alive": alive,
            "server_answers_after": "line 0" in text_of(after.get("result") or {"content": []}),
            **figures, "mcp": through_mcp(folder), "load_average_at_end": load_average()}


def main() -> None:
    args = arguments(__doc__, generated=GENERATED, seed=SEED)
    show(run(args.generated, args.seed))


if __name__ == "__main__":
    main()
