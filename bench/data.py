"""Benchmark inputs, generated deterministically under a scratch directory (nothing large
is committed).

Each generator writes its file once and reuses it when it is already there with the expected size.
"""

from __future__ import annotations

import compileall
import glob
import io
import os
import random
from pathlib import Path

# The text workload: a 1 GB log of 10M lines. Mostly ~100-byte records; the odd lines that make real
# logs hard are sprinkled through the whole file so that every part of it exercises them.
LOG_LINES = 10_000_000
LONG_LINE_EVERY = 2_003  # a 5,000-character line (a stack dump, a JSON blob)
LONG_LINE_CHARS = 5_000
CRLF_EVERY = 101  # a line ended by CRLF (pasted from Windows)
LONE_CR_EVERY = 7_919  # a line ended by a lone CR (old Mac, progress bars)
INVALID_UTF8_EVERY = 3_001  # a line holding bytes that are not UTF-8
SEED = 20250105

# The image workload: a 20 MB camera-sized JPEG and a 4 MB PNG screenshot-like image.
JPEG_SIDE = (7200, 5400)  # 39 megapixels, noisy enough to weigh ~20 MB at JPEG_QUALITY
JPEG_QUALITY = 90
PNG_SIDE = (3000, 2400)

DEFAULT_DIR = Path(os.environ.get("AGENTREAD_BENCH_DATA", "/tmp/agentread-bench"))


def compile_engine() -> None:
    """Writes agentread's bytecode, as pip does for an installed package and as every peer's already
    is: where PYTHONDONTWRITEBYTECODE is set (or the tree was never imported), each fresh process
    would otherwise compile the engine from source, ~50 ms that no user pays twice."""
    compileall.compile_dir(Path(__file__).resolve().parents[1] / "python" / "agentread", quiet=1)


def log_file(root: Path = DEFAULT_DIR) -> Path:
    path = root / "big.log"
    marker = root / "big.log.done"
    if path.exists() and marker.exists():
        return path
    root.mkdir(parents=True, exist_ok=True)
    rng = random.Random(SEED)
    levels = [b"INFO", b"INFO", b"INFO", b"DEBUG", b"WARN", b"ERROR"]
    words = [w.encode() for w in "request served cache miss hit upstream timeout retry user session token "
             "queue flushed worker started stopped payload bytes shard replica".split()]
    pad = bytes(rng.randrange(97, 123) for _ in range(LONG_LINE_CHARS * 2))
    with open(path, "wb", buffering=1 << 22) as out:
        buf = io.BytesIO()
        for i in range(1, LOG_LINES + 1):
            if i % LONG_LINE_EVERY == 0:
                start = i % LONG_LINE_CHARS
                body = b"blob " + pad[start:start + LONG_LINE_CHARS - 5]
            else:
                body = b"2025-01-05T%02d:%02d:%02d.%03dZ %s worker-%d %s %s %s line=%d latency_ms=%d" % (
                    (i // 360000) % 24, (i // 6000) % 60, (i // 100) % 60, i % 1000, levels[i % 6], i % 97,
                    words[i % 17], words[(i * 7) % 17], words[(i * 13) % 17], i, (i * 2654435761) % 5000)
                if i % INVALID_UTF8_EVERY == 0:
                    body += b" raw=\xff\xfe\xc3("
            if i % LONE_CR_EVERY == 0:
                end = b"\r"
            elif i % CRLF_EVERY == 0:
                end = b"\r\n"
            else:
                end = b"\n"
            buf.write(body)
            buf.write(end)
            if i % 100_000 == 0:
                out.write(buf.getvalue())
                buf = io.BytesIO()
        out.write(buf.getvalue())
    marker.write_text("ok")
    return path


def images(root: Path = DEFAULT_DIR) -> tuple[Path, Path]:
    from PIL import Image

    jpeg, png = root / "photo.jpg", root / "screen.png"
    if jpeg.exists() and png.exists():
        return jpeg, png
    root.mkdir(parents=True, exist_ok=True)
    rng = random.Random(SEED)
    # A smooth gradient plus deterministic noise: photo-like weight for JPEG.
    w, h = JPEG_SIDE
    noise = Image.frombytes("L", (w, h), rng.randbytes(w * h)).convert("RGB")
    grad = Image.linear_gradient("L").resize((w, h)).convert("RGB")
    Image.blend(grad, noise, 0.35).save(jpeg, "JPEG", quality=JPEG_QUALITY)
    # A screenshot-like PNG: flat panels, lines of "text" and a noisy inset to reach ~4 MB.
    w, h = PNG_SIDE
    img = Image.new("RGB", (w, h), (245, 245, 245))
    from PIL import ImageDraw

    draw = ImageDraw.Draw(img)
    for y in range(0, h, 18):
        draw.text((10 + (y % 50), y), "agentread bench %d " % y * 8, fill=(20, 20, 20))
    inset = Image.frombytes("RGB", (1100, 1100), rng.randbytes(1100 * 1100 * 3))
    img.paste(inset, (w - 1150, 50))
    img.save(png, "PNG")
    return jpeg, png


def r_manual() -> Path | None:
    """The R reference manual from Debian's r-doc-pdf (`apt-get install -y r-doc-pdf`), a real
    2,415-page PDF."""
    for pattern in ("/usr/share/R/doc/manual/fullrefman.pdf", "/usr/share/doc/r-doc-pdf/fullrefman.pdf*",
                    "/usr/lib/R/doc/manual/fullrefman.pdf", "/usr/share/**/fullrefman.pdf"):
        found = [p for p in glob.glob(pattern, recursive=True) if p.endswith(".pdf")]
        if found:
            return Path(found[0])
    return None


if __name__ == "__main__":
    import time

    t = time.time()
    print(log_file(), os.path.getsize(log_file()), f"{time.time() - t:.1f}s")
    print(images(), r_manual())
