"""Mutation fuzzing of the readers, in-process: sniff + Engine.read over a temp file, every
input watched.

Usage:
    python bench/fuzz.py                       # 10,000 inputs, 2 workers
    python bench/fuzz.py --inputs 1000000      # stop after this many inputs ...
    python bench/fuzz.py --seconds 3600        # ... or after this long, whichever comes first
    python bench/fuzz.py --workers 2 --seed 7 --corpus ../shared/corpus \\
        --crashes /tmp/agentread-fuzz-crashes

What one input is: bytes made from a seed file of the shared corpus or of tests/data/office (or from
nothing) by a few random mutations (bit flips, interesting bytes, inserted, deleted, duplicated or
spliced runs, numbers made huge, truncation; for JSON seeds also structural ones: a node replaced by
a value of the wrong type, nesting), or plain random bytes. An Office seed (a zip) is mostly mutated
inside: one member's bytes mutated (its XML also structurally: an element repeated thousands of
times, nested deep, an entity expansion) and the zip written again with correct checksums, a member
dropped, duplicated or given another's content, or a field of the central directory corrupted; a
plain byte flip of a zip mostly just fails its CRC check. The input is written under a name whose
extension rotates over .txt/.pdf/.png/.ipynb/.json/.bin/.docx/.xlsx/.pptx (half the time the seed's
own), and read with a request drawn from a small set (whole file, an offset/limit window, one
counted from the end, a page or sheet range, an outline, cells, raw). Tesseract is on the PATH for
one input in ten (OCR_EVERY).

What counts:
    crash  Engine.read raised (any exception: the engine must turn every problem with a file into an
           error result), sniff answered a kind the engine does not route, the result could not be
           encoded as the JSON the server sends, it was an `internal` error, or a reader ran out of
           memory (a `too_complex` result from a MemoryError: inputs are a few MB and a worker may
           use 4 GB, so that is a reader multiplying its input a thousandfold, which would take a
           server without a memory limit down).
    hang   one input took longer than --timeout seconds (default 5). Each worker publishes the input
           it is on and when it started; the parent kills a worker stuck past the timeout and starts
           a new one. At the end the first hangs (up to 12) are replayed alone in fresh processes:
           "hangs_confirmed_alone" lists those whose read still takes more CPU time than the timeout
           there (the others were slow only under load), or whose replay does not end.
With --pool, every input is read through the server's worker pool instead (agentread/workers.py:
worker processes forked from a preloaded one, memory and CPU limits), --timeout being the read
deadline: a read stopped there has its worker killed and is counted as killed, not as a hang (a hang
is then the pool not answering at all); a worker that dies (a crash in native code) is a crash.
Tesseract is off the PATH in this mode, and sniff's answers are not checked (both are the in-process
mode's). Every crashing or hanging input is saved to the crashes folder as <kind>-<index><ext> with
a .report beside it (request, exception, traceback). Inputs are a pure function of (--seed, index),
so an index replays with
    python bench/fuzz.py --replay INDEX --seed S
The figures printed at the end: inputs, crashes (distinct by exception and place), hangs,
inputs per second.
"""

from __future__ import annotations

import argparse
import io
import json
import multiprocessing as mp
import os
import random
import re
import resource
import shutil
import sys
import tempfile
import time
import traceback
import warnings
import zipfile
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"
DEFAULT_CRASHES = Path("/tmp/agentread-fuzz-crashes")
EXTENSIONS = (".txt", ".pdf", ".png", ".ipynb", ".json", ".bin", ".docx", ".xlsx", ".pptx")

# The Office readers' seeds: real DOCX, XLSX and PPTX files (and a legacy .xls), kept
# with the tests.
OFFICE_SEEDS = REPO / "tests" / "data" / "office"
OFFICE_SUFFIXES = (".docx", ".xlsx", ".pptx", ".xls")

# Share of inputs grown from an Office seed. Left to a uniform draw they would be one in twelve
# (12 of some 150 seeds); the Office readers are the newest and their formats the most layered (zip,
# XML, relationships).
OFFICE_SEED_SHARE = 0.25

# Share of inputs from a zip seed that are mutated inside the zip rather than as plain bytes.
ZIP_MUTATION_SHARE = 0.75
ZIP_MAGIC = b"PK\x03\x04"

# Every kind sniff may answer; anything else is a crash.
KINDS = ("text", "pdf", "image", "notebook", "office", "legacy_office", "archive", "mail", "rtf", "binary")

# Seeds above this size are left out: an input grown from one costs ten times the average (pypdf
# rebuilding the cross-reference table of a damaged 400 KB PDF, a 700 KB notebook mutated as JSON)
# for little gain; big files are the hostile-file tests' and the benchmarks' to cover.
MAX_SEED_BYTES = 256 << 10

# Tesseract (a separate program, about 0.3 s a page) is found on PATH by one input in this many. A
# page without text is rendered either way; OCR on every such page would cost a sixth of the run's
# time to fuzz a program that is not this project's, while one in ten still runs it thousands of
# times in a long run.
OCR_EVERY = 10
PATH = os.environ.get("PATH", "")
PATH_WITHOUT_TESSERACT = os.pathsep.join(
    d for d in PATH.split(os.pathsep) if not os.path.isfile(os.path.join(d, "tesseract")))

# Each worker may use this much address space; a reader that blows up its memory then fails with
# MemoryError (which the engine must turn into an error result) instead of taking the machine down.
WORKER_MEMORY_BYTES = 4 << 30

REQUESTS = (
    {}, {}, {},
    {"offset": 2, "limit": 3},
    {"offset": 1, "limit": 1},
    {"offset": 50},
    {"offset": -5}, {"offset": -2, "limit": 1},
    {"pages": "1"}, {"pages": "2-"},
    {"cells": "outline"}, {"cells": "1"}, {"cells": "2-3"}, {"cells": "1,3-"},
    {"raw": True},
)
INTERESTING = (b"\x00", b"\xff", b"\x7f", b"\x80", b"\n", b"\r", b"\r\n", b"0", b"9", b"-", b"/", b"(", b")",
               b"<<", b">>", b"[", b"]", b"{", b"}", b"\"", b"\\", b"\xef\xbb\xbf", b"\xfe\xff", b"\x1b[31m")
DEEP = "@@deep@@"
DEEP_LEVELS = 20_000
# Crashing inputs saved per distinct crash (exception and place) and worker: one bug, not ten
# thousand files.
SAVED_PER_SIGNATURE = 3
# Hangs replayed alone at the end (each replay may take the timeout and a cold start, which under
# load takes up to REPLAY_START_SECONDS: importing the readers and loading the seeds).
MAX_HANGS_REPLAYED = 12
REPLAY_START_SECONDS = 30
HUGE_NUMBERS = (b"0", b"-1", b"99999999", b"2147483648", b"18446744073709551616", b"1e308", b"-0", b"3.5")

# An XML element repeated this many times: a sheet of 20,000 rows, a document of 20,000 paragraphs,
# a slide of 20,000 shapes. A grown member stops at MAX_GROWN_MEMBER_BYTES: big enough that a
# reader's cost per element shows, small enough to keep the rate (a whole-file limit is not what is
# being tested here).
XML_REPEATS = (2, 50, 1000, 20_000)
MAX_GROWN_MEMBER_BYTES = 8 << 20
XML_NESTING = (100, 300, 3000)
_ELEMENT_START = re.compile(rb"<([A-Za-z_][\w.:-]*)[\s/>]")
# Element starts looked for in the first this many bytes of a member: bounds the cost of
# a 2 MB part.
XML_SCAN_BYTES = 200_000
# Share of member mutations aimed at an XML part rather than any member (a picture, a thumbnail).
XML_MEMBER_SHARE = 0.9

# An entity expanding to a billion "lol"s: the parsers must refuse it, not expand it.
LAUGHS = (b'<!DOCTYPE l [<!ENTITY l0 "lol">'
          + b"".join(b'<!ENTITY l%d "%s">' % (i, b"&l%d;" % (i - 1) * 10) for i in range(1, 10)) + b"]>")

# Fields of a central directory header (offset in the header, width in bytes) and of the end of
# central directory record, whose damage zipfile and the readers must survive: counts, sizes and
# offsets that lie.
CENTRAL_HEADER_FIELDS = ((10, 2), (16, 4), (20, 4), (24, 4), (28, 2), (30, 2), (32, 2), (42, 4))
END_RECORD_FIELDS = ((8, 2), (10, 2), (12, 4), (16, 4), (20, 2))
FIELD_VALUES = (0, 1, 0x7F, 0xFFFF, 0xFFFFFFFF)


def load_seeds(corpus: Path) -> list[tuple[str, bytes]]:
    seeds = [("empty.txt", b""), ("tiny.json", b'{"cells": []}'), ("tiny.pdf", b"%PDF-1.4\n%%EOF\n")]
    paths = sorted(corpus.rglob("*")) if corpus.is_dir() else []
    paths += sorted(p for p in OFFICE_SEEDS.iterdir() if p.suffix in OFFICE_SUFFIXES)
    for path in paths:
        if path.is_file() and path.stat().st_size <= MAX_SEED_BYTES and path.name != "expectations.json":
            seeds.append((path.name, path.read_bytes()))
    return seeds


def _is_office(seed: tuple[str, bytes]) -> bool:
    return seed[0].endswith(OFFICE_SUFFIXES)


# ---- mutations
# ------------------------------------------------------------------------------------------

def _json_mutation(data: bytes, rng: random.Random) -> bytes | None:
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return None
    nodes: list[tuple[object, object]] = []  # (container, key)

    def walk(node, depth=0):
        if depth > 30 or len(nodes) > 5000:
            return
        if isinstance(node, dict):
            for k, v in node.items():
                nodes.append((node, k))
                walk(v, depth + 1)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                nodes.append((node, i))
                walk(v, depth + 1)

    walk(doc)
    if not nodes:
        return None
    for _ in range(rng.randint(1, 4)):
        container, key = rng.choice(nodes)
        try:
            old = container[key]
        except (KeyError, IndexError, TypeError):
            continue
        choice = rng.randrange(9)
        new = [None, True, -1, 1.5, 10 ** 30, "x" * rng.randint(0, 300), [], {}, [old, old]][choice]
        if rng.random() < 0.2:
            new = {"nested": [[[[old]]]], "data": {"image/png": "iVBOR" + "A" * rng.randint(0, 2000)}}
        if rng.random() < 0.05:
            new = DEEP if rng.random() < 0.5 else "\x1b[1;31m" * 100
        try:
            container[key] = new
        except (TypeError, IndexError):
            continue
    text = json.dumps(doc)
    # Nesting deeper than json.dumps can write is spliced in as text.
    return text.replace(json.dumps(DEEP), "[" * DEEP_LEVELS + "]" * DEEP_LEVELS).encode("utf-8")


def mutate(data: bytes, rng: random.Random, seeds: list[tuple[str, bytes]]) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 3, 5, 10))):
        op = rng.randrange(10)
        n = len(buf)
        if op == 0 and n:  # bit flips
            for _ in range(rng.randint(1, 8)):
                i = rng.randrange(n)
                buf[i] ^= 1 << rng.randrange(8)
        elif op == 1 and n:  # interesting bytes over some position
            i = rng.randrange(n)
            token = rng.choice(INTERESTING)
            buf[i:i + len(token)] = token
        elif op == 2:  # insert random bytes
            i = rng.randint(0, n)
            buf[i:i] = rng.randbytes(rng.choice((1, 4, 16, 256, 4096)))
        elif op == 3 and n:  # delete a run
            i = rng.randrange(n)
            del buf[i:i + rng.choice((1, 8, 64, 1024, n))]
        elif op == 4 and n:  # duplicate a run somewhere else
            i = rng.randrange(n)
            run = buf[i:i + rng.choice((4, 64, 1024, 16384))]
            j = rng.randint(0, n)
            buf[j:j] = run * rng.choice((1, 2, 16))
        elif op == 5:  # splice with another seed
            other = rng.choice(seeds)[1]
            if other:
                i, j = rng.randint(0, n), rng.randrange(len(other))
                buf[i:] = other[j:j + rng.choice((64, 4096, len(other)))]
        elif op == 6 and n:  # truncate
            del buf[rng.randrange(n):]
        elif op == 7 and n:  # a number made huge, negative or fractional (xref offsets, lengths, counts, sizes)
            matches = list(re.finditer(rb"\d+", bytes(buf[:200_000])))
            if matches:
                m = rng.choice(matches)
                buf[m.start():m.end()] = rng.choice(HUGE_NUMBERS)
        elif op == 8 and n:  # a long repeated run (long lines, runs of CR, deep brackets)
            i = rng.randint(0, n)
            buf[i:i] = rng.choice(INTERESTING) * rng.choice((100, 5000, 70000))
        elif op == 9:
            structural = _json_mutation(bytes(buf), rng)
            if structural is not None:
                buf = bytearray(structural)
    return bytes(buf)


def _xml_mutation(body: bytes, rng: random.Random) -> bytes | None:
    """One structural change to an XML part: an element repeated, its tag nested deep, or an
    entity expansion."""
    starts = list(_ELEMENT_START.finditer(body, 0, XML_SCAN_BYTES))
    if not starts:
        return None
    start = rng.choice(starts)
    name, at = start.group(1), start.start()
    tag_end = body.find(b">", at) + 1
    choice = rng.randrange(3)
    if choice == 0:  # the element, up to the first end tag of its name (sometimes not its own), repeated
        if body[tag_end - 2:tag_end] == b"/>":
            end = tag_end
        else:
            end = body.find(b"</" + name + b">", at)
            if end < 0:
                return None
            end += len(name) + 3
        element = body[at:end]
        times = min(rng.choice(XML_REPEATS), MAX_GROWN_MEMBER_BYTES // len(element))
        return body[:at] + element * times + body[end:]
    if choice == 1:
        depth = rng.choice(XML_NESTING)
        return body[:at] + (b"<" + name + b">") * depth + (b"</" + name + b">") * depth + body[at:]
    declaration = body.find(b"?>") + 2 if body.startswith(b"<?xml") else 0
    return body[:declaration] + LAUGHS + body[declaration:tag_end] + b"&l9;" + body[tag_end:]


def _corrupt_central_directory(data: bytes, rng: random.Random) -> bytes | None:
    """One field of a central directory header, or of the end record, overwritten with a
    value that lies."""
    end = data.rfind(b"PK\x05\x06")
    if end < 0 or end + 22 > len(data):
        return None
    directory = min(int.from_bytes(data[end + 16:end + 20], "little"), end)
    headers = [m.start() for m in re.compile(rb"PK\x01\x02").finditer(data, directory, end)]
    if headers and rng.random() < 0.8:
        at, (offset, width) = rng.choice(headers), rng.choice(CENTRAL_HEADER_FIELDS)
    else:
        at, (offset, width) = end, rng.choice(END_RECORD_FIELDS)
    old = int.from_bytes(data[at + offset:at + offset + width], "little")
    value = rng.choice((*FIELD_VALUES, old + 1, old - 1, old * 2, rng.getrandbits(8 * width)))
    buf = bytearray(data)
    buf[at + offset:at + offset + width] = (value % (1 << 8 * width)).to_bytes(width, "little")
    return bytes(buf)


def _zip_mutation(data: bytes, rng: random.Random, seeds: list[tuple[str, bytes]]) -> bytes | None:
    """One change inside a zip, written back with correct checksums (or with its directory damaged);
    None when `data` is not a zip that opens."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = [(i.filename, i.compress_type, archive.read(i)) for i in archive.infolist()]
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, zlib.error, NotImplementedError, RuntimeError):
        return None
    op = rng.randrange(6)
    if op == 0 or not members:
        return _corrupt_central_directory(data, rng)
    xml = [i for i, (name, _, _) in enumerate(members) if name.endswith((".xml", ".rels"))]
    i = rng.choice(xml) if xml and rng.random() < XML_MEMBER_SHARE else rng.randrange(len(members))
    name, method, body = members[i]
    if op == 1:  # its bytes
        members[i] = (name, method, mutate(body, rng, seeds))
    elif op == 2:  # its XML
        members[i] = (name, method, _xml_mutation(body, rng) or mutate(body, rng, seeds))
    elif op == 3:  # dropped
        del members[i]
    elif op == 4:  # another member's content under its name (a sheet where the workbook should be)
        members[i] = (name, method, rng.choice(members)[2])
    else:  # the same name twice
        members.insert(rng.randint(0, len(members)), members[i])
    out = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(out, "w") as archive:
        warnings.simplefilter("ignore")  # "Duplicate name": meant
        for name, method, body in members:
            # Fastest compression: the readers do not care how well a member is packed,
            # the rate does.
            archive.writestr(zipfile.ZipInfo(name), body, compress_type=method, compresslevel=1)
    return out.getvalue()


def make_input(seed: int, index: int, seeds: list[tuple[str, bytes]]) -> tuple[str, bytes, dict]:
    """Input `index` of run `seed`: (extension, bytes, request params). Pure: replays exactly."""
    rng = random.Random(seed * 1_000_003 + index)
    office = [s for s in seeds if _is_office(s)]
    name, data = rng.choice(office if office and rng.random() < OFFICE_SEED_SHARE else seeds)
    if rng.random() < 0.08:
        data = rng.randbytes(rng.choice((1, 16, 512, 65536)))
    elif data.startswith(ZIP_MAGIC) and rng.random() < ZIP_MUTATION_SHARE:
        for _ in range(rng.choice((1, 1, 2))):
            data = _zip_mutation(data, rng, seeds) or data
    else:
        data = mutate(data, rng, seeds)
    ext = os.path.splitext(name)[1].lower()
    if rng.random() < 0.5 or ext not in EXTENSIONS:
        ext = EXTENSIONS[index % len(EXTENSIONS)]
    return ext, data, dict(rng.choice(REQUESTS))


# ---- one input, and the workers
# -------------------------------------------------------------------------

def check_one(engine, folder: Path, index: int, ext: str, data: bytes, params: dict) -> str | None:
    """Read one input; None when it ended as a clean result, else a description of the crash."""
    from agentread.request import parse_request

    path = folder / f"{index}{ext}"  # a fresh name each time: the readers' caches key by path, mtime and size
    path.write_bytes(data)
    os.environ["PATH"] = PATH if index % OCR_EVERY == 0 else PATH_WITHOUT_TESSERACT
    try:
        return verdict(engine.read(parse_request({"path": str(path), **params})).to_json())
    except Exception:  # noqa: BLE001 - that is what we are here to find
        return traceback.format_exc()
    finally:
        path.unlink(missing_ok=True)


def verdict(result: dict) -> str | None:
    """None for a clean result (JSON the server can send); else what is wrong with it."""
    json.dumps(result, ensure_ascii=False).encode("utf-8")  # raises for what the server could not send
    error = result.get("error") or {}
    if error.get("code") == "internal":
        return "internal error result: " + error["message"]
    if error.get("code") == "too_complex" and "MemoryError" in error["message"]:
        return "memory exhausted: " + error["message"]
    return None


def save(crashes: Path, kind: str, index: int, ext: str, data: bytes, params: dict, detail: str) -> None:
    crashes.mkdir(parents=True, exist_ok=True)
    (crashes / f"{kind}-{index}{ext}").write_bytes(data)
    (crashes / f"{kind}-{index}.report").write_text(f"request: {json.dumps(params)}\n\n{detail}\n")


def _signature(detail: str) -> str:
    """Exception type and the innermost frame: crashes with the same signature are one bug."""
    lines = [ln for ln in detail.strip().splitlines() if ln.strip()]
    frames = [ln.strip() for ln in lines if ln.strip().startswith("File ")]
    ours = [f for f in frames if "/agentread/" in f and "/bench/" not in f]
    message = re.sub(r"\d+", "N", lines[-1][:120]) if lines else "?"
    return f"{message} @ {frames[-1] if frames else '?'} via {ours[-1] if ours else '?'}"


def watch_sniff() -> None:
    """Check sniff's answer where the engine asks for it (once an input): a kind the engine does not
    route would fall through to its last reader, so it is a crash."""
    import agentread.engine

    real = agentread.engine.sniff

    def checked(head: bytes, name: str):
        info = real(head, name)
        if info.kind not in KINDS:
            raise AssertionError(f"sniff returned unknown kind {info.kind!r}")
        return info

    agentread.engine.sniff = checked


def warm_up() -> None:
    """Import every reader before the clock runs: a cold first input would otherwise look
    like a hang."""
    import charset_normalizer  # noqa: F401
    import docx  # noqa: F401
    import openpyxl  # noqa: F401
    import pptx  # noqa: F401
    import pypdf  # noqa: F401
    from PIL import Image  # noqa: F401

    import agentread.readers.image  # noqa: F401
    import agentread.readers.notebook  # noqa: F401
    import agentread.readers.office.docx  # noqa: F401
    import agentread.readers.office.pptx  # noqa: F401
    import agentread.readers.office.xlsx  # noqa: F401
    import agentread.readers.pdf  # noqa: F401

    agentread.readers.image._pillow()


def _cpu_seconds() -> float:
    """CPU time of this process and of the programs it ran (Tesseract)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def confirm_hang(index: int, args) -> bool:
    """Replay a hang alone, in a fresh process with its readers imported: is it slow without the
    load of the other workers (and whatever else the machine runs)? Slow means the read's CPU time
    (Tesseract's included) is over the timeout, or the replay does not end: on a busy machine wall
    time says more about the machine than about the read, and a read that waits without computing
    runs into the replay's own limit."""
    import subprocess

    command = [sys.executable, __file__, "--replay", str(index), "--seed", str(args.seed), "--corpus", args.corpus]
    try:
        done = subprocess.run(command, timeout=args.timeout + REPLAY_START_SECONDS, capture_output=True, text=True)
    except subprocess.TimeoutExpired:
        return True
    took = re.search(r"cpu ([\d.]+) s", done.stdout)
    return took is None or float(took.group(1)) > args.timeout


def worker(wid: int, first: int, stride: int, last: int, seed: int, corpus: str, crashes: str,
           current, started, done, crash_count, signatures) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_BYTES, WORKER_MEMORY_BYTES))
    import logging
    import warnings

    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")  # decoders warn about what they repair; the figures are what count here
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)  # C libraries (libtiff...) write their complaints straight to fd 2
    from agentread.engine import Engine
    from agentread.workspace import Workspace

    seeds = load_seeds(Path(corpus))
    folder = Path(tempfile.mkdtemp(prefix=f"agentread-fuzz-{wid}-"))
    engine = Engine(Workspace([str(folder)]))
    warm_up()
    watch_sniff()
    saved: dict[str, int] = {}
    try:
        for index in range(first, last, stride):
            ext, data, params = make_input(seed, index, seeds)
            current.value, started.value = index, time.monotonic()
            detail = check_one(engine, folder, index, ext, data, params)
            started.value = 0.0
            done.value += 1
            if detail is not None:
                crash_count.value += 1
                sig = _signature(detail)
                saved[sig] = saved.get(sig, 0) + 1
                if saved[sig] <= SAVED_PER_SIGNATURE:
                    save(Path(crashes), "crash", index, ext, data, params, detail)
                signatures.put(sig)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run(args) -> dict:
    import signal

    # A plain `kill` of the parent still stops the workers (the finally below), and still prints
    # the figures.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    ctx = mp.get_context("fork")
    seeds = load_seeds(Path(args.corpus))
    signatures = ctx.Queue()
    slots = []
    t0 = time.monotonic()
    deadline = t0 + args.seconds if args.seconds else float("inf")
    hangs = 0
    hang_indexes = []
    totals = {"done": 0, "crashes": 0}

    def start(wid: int, first: int) -> dict:
        slot = {"wid": wid, "current": ctx.Value("q", -1), "started": ctx.Value("d", 0.0),
                "done": ctx.Value("q", 0), "crashes": ctx.Value("q", 0)}
        slot["proc"] = ctx.Process(target=worker, daemon=True, args=(
            wid, first, args.workers, args.inputs, args.seed, args.corpus, args.crashes, slot["current"],
            slot["started"], slot["done"], slot["crashes"], signatures))
        slot["proc"].start()
        return slot

    def retire(slot: dict) -> None:
        totals["done"] += slot["done"].value
        totals["crashes"] += slot["crashes"].value

    slots = [start(w, w) for w in range(args.workers)]
    last_report = t0
    distinct: dict[str, int] = {}

    def drain() -> None:
        # Kept empty as the run goes: a full pipe would stall the workers' queue threads, and a
        # worker killed while writing into a full pipe would leave half a message in it.
        while True:
            try:
                sig = signatures.get_nowait()
            except Exception:  # noqa: BLE001 - queue.Empty
                return
            distinct[sig] = distinct.get(sig, 0) + 1

    try:
        while slots:
            time.sleep(0.2)
            drain()
            now = time.monotonic()
            for slot in list(slots):
                began = slot["started"].value
                proc = slot["proc"]
                if began and now - began > args.timeout and proc.is_alive():
                    index = slot["current"].value
                    proc.kill()
                    proc.join()
                    hangs += 1
                    hang_indexes.append(index)
                    ext, data, params = make_input(args.seed, index, seeds)
                    save(Path(args.crashes), "hang", index, ext, data, params,
                         f"no answer within {args.timeout} s")
                    retire(slot)
                    slots.remove(slot)
                    if now < deadline:
                        slots.append(start(slot["wid"], index + args.workers))
                elif not proc.is_alive():
                    proc.join()
                    if proc.exitcode not in (0, None) and slot["started"].value:
                        # The worker died mid-input (a segfault in a C extension, say): a crash of
                        # its own kind.
                        index = slot["current"].value
                        ext, data, params = make_input(args.seed, index, seeds)
                        save(Path(args.crashes), "died", index, ext, data, params, f"exit code {proc.exitcode}")
                        signatures.put(f"worker died with exit code {proc.exitcode}")
                        totals["crashes"] += 1
                        retire(slot)
                        slots.remove(slot)
                        slots.append(start(slot["wid"], index + args.workers))
                        continue
                    retire(slot)
                    slots.remove(slot)
            if now > deadline:
                for slot in slots:
                    slot["proc"].kill()
                    slot["proc"].join()
                    retire(slot)
                slots = []
            if now - last_report > args.report_every:
                last_report = now
                done = totals["done"] + sum(s["done"].value for s in slots)
                crashes = totals["crashes"] + sum(s["crashes"].value for s in slots)
                print(f"[{now - t0:7.0f} s] inputs {done:,}  crashes {crashes}  hangs {hangs}  "
                      f"rate {done / (now - t0):,.0f}/s", flush=True)
    except KeyboardInterrupt:
        print("interrupted: figures so far", flush=True)
    finally:
        for slot in slots:
            slot["proc"].kill()
            slot["proc"].join()
            retire(slot)
        slots = []
    elapsed = time.monotonic() - t0
    time.sleep(0.5)
    drain()
    confirmed = [i for i in hang_indexes[:MAX_HANGS_REPLAYED] if confirm_hang(i, args)]
    return {"inputs": totals["done"], "crashes": totals["crashes"], "hangs": hangs, "hang_indexes": hang_indexes,
            "hangs_confirmed_alone": confirmed,
            "seconds": round(elapsed, 1), "rate": round(totals["done"] / elapsed, 1) if elapsed else 0,
            "distinct_crashes": distinct}


# ---- through the server's worker pool
# -------------------------------------------------------------------

# A read the pool has not answered this long after its deadline is a hang of the pool itself.
POOL_HANG_GRACE = 10.0


def run_pool(args) -> dict:
    """Every input read through the server's worker pool (agentread/workers.py), --workers worker
    processes with twice as many reads in flight and --timeout as the read deadline: a read the pool
    stops at its deadline (its worker killed) is counted as killed, not as a hang; a worker that
    dies is a crash."""
    import asyncio

    return asyncio.run(_fuzz_pool(args, load_seeds(Path(args.corpus))))


async def _fuzz_pool(args, seeds: list[tuple[str, bytes]]) -> dict:
    import asyncio

    from agentread.engine import Engine
    from agentread.request import InvalidParams, parse_request
    from agentread.result import ReadError
    from agentread.serve.workers import Limits, ReaderFailed, WorkerDied, WorkerPool
    from agentread.workspace import Workspace

    os.environ["PATH"] = PATH_WITHOUT_TESSERACT  # the workers inherit it: OCR is the in-process mode's to fuzz
    os.dup2(os.open(os.devnull, os.O_WRONLY), 2)  # and this: C libraries (libtiff...) complain on fd 2
    pool = WorkerPool(Limits(workers=args.workers, memory_mb=WORKER_MEMORY_BYTES >> 20))
    folder = Path(tempfile.mkdtemp(prefix="agentread-fuzz-pool-"))
    engine = Engine(Workspace([str(folder)]))
    counts = {"inputs": 0, "crashes": 0, "killed_at_deadline": 0, "hangs": 0}
    distinct: dict[str, int] = {}
    hang_indexes: list[int] = []
    indexes = iter(range(args.inputs))
    t0 = time.monotonic()
    stop = t0 + args.seconds if args.seconds else float("inf")
    last_report = [t0]

    async def one(index: int) -> str | None:
        ext, data, params = make_input(args.seed, index, seeds)
        path = folder / f"{index}{ext}"
        path.write_bytes(data)
        began = time.monotonic()
        try:
            plan = engine.plan(parse_request({"path": str(path), **params}))  # as the server plans it
            result = await asyncio.wait_for(pool.read(plan, args.timeout), args.timeout + POOL_HANG_GRACE)
            return verdict(result.to_json())
        except ReadError:  # refused before any reader ran (an empty file...): an answer, as the server gives it
            return None
        except asyncio.TimeoutError:
            if time.monotonic() - began < args.timeout + POOL_HANG_GRACE:
                counts["killed_at_deadline"] += 1
                return None
            counts["hangs"] += 1
            hang_indexes.append(index)
            save(Path(args.crashes), "hang", index, ext, data, params, "the pool did not answer")
            return None
        except WorkerDied as exc:
            return f"worker died: {exc.how}"
        except ReaderFailed as exc:
            return exc.trace
        except InvalidParams:
            return traceback.format_exc()
        finally:
            path.unlink(missing_ok=True)

    async def lane() -> None:
        for index in indexes:
            if time.monotonic() > stop:
                return
            detail = await one(index)
            counts["inputs"] += 1
            if detail is not None:
                counts["crashes"] += 1
                sig = _signature(detail)
                distinct[sig] = distinct.get(sig, 0) + 1
                if distinct[sig] <= SAVED_PER_SIGNATURE:
                    ext, data, params = make_input(args.seed, index, seeds)
                    save(Path(args.crashes), "crash", index, ext, data, params, detail)
            now = time.monotonic()
            if now - last_report[0] > args.report_every:
                last_report[0] = now
                print(f"[{now - t0:7.0f} s] inputs {counts['inputs']:,}  crashes {counts['crashes']}  killed "
                      f"{counts['killed_at_deadline']}  hangs {counts['hangs']}  rate "
                      f"{counts['inputs'] / (now - t0):,.0f}/s", flush=True)

    try:
        await asyncio.gather(*(lane() for _ in range(2 * args.workers)))
    finally:
        pool.close()
        shutil.rmtree(folder, ignore_errors=True)
    elapsed = time.monotonic() - t0
    return {**counts, "hang_indexes": hang_indexes, "seconds": round(elapsed, 1),
            "rate": round(counts["inputs"] / elapsed, 1) if elapsed else 0, "distinct_crashes": distinct}


def replay(args) -> None:
    from agentread.engine import Engine
    from agentread.workspace import Workspace

    seeds = load_seeds(Path(args.corpus))
    ext, data, params = make_input(args.seed, args.replay, seeds)
    folder = Path(tempfile.mkdtemp(prefix="agentread-replay-"))
    warm_up()
    watch_sniff()
    wall, cpu = time.monotonic(), _cpu_seconds()
    detail = check_one(Engine(Workspace([str(folder)])), folder, args.replay, ext, data, params)
    print(f"input {args.replay}: {ext}, {len(data):,} bytes, request {params}, cpu {_cpu_seconds() - cpu:.2f} s, "
          f"wall {time.monotonic() - wall:.2f} s -> {detail or 'clean result'}")
    shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=0, help="stop after this long (0: no time limit)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds per input before it is a hang")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    parser.add_argument("--crashes", default=str(DEFAULT_CRASHES))
    parser.add_argument("--report-every", type=float, default=60.0)
    parser.add_argument("--replay", type=int, default=None, help="run one input by index, in this process")
    parser.add_argument("--pool", action="store_true",
                        help="read through the server's worker pool, --timeout its read deadline")
    args = parser.parse_args()
    if args.replay is not None:
        replay(args)
        return
    figures = run_pool(args) if args.pool else run(args)
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
