"""Images on generated files: sizes the model can take, decompression bombs refused from the header,
parts that stay under the byte limit, and damaged files that give a clear answer."""

from __future__ import annotations

import base64
import io
import json
import os
import random
import struct
import sys
import zlib
from pathlib import Path

import pytest
from PIL import Image, ImageChops, ImageStat

from agentread.engine import Engine
from agentread.limits import MAX_IMAGE_BYTES, MAX_IMAGE_PIXELS, MAX_IMAGE_SIDE
from agentread.readers import image as image_module
from agentread.readers.image import DRAFT_FLOOR, _decoded_part, check_png, encode_png
from agentread.request import parse_request
from agentread.result import ImagePart, ReadError
from agentread.workspace import Workspace
from mutate import damage

PROVIDER_MIMES = {"image/png", "image/jpeg", "image/gif", "image/webp"}


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    return Engine(Workspace([str(tmp_path)]))


def read(engine: Engine, **params):
    return engine.read(parse_request(params))


def the_part(result) -> ImagePart:
    assert result.kind == "image", result.text()
    parts = [p for p in result.content if isinstance(p, ImagePart)]
    assert len(parts) == 1
    part = parts[0]
    assert part.mime_type in PROVIDER_MIMES
    data = base64.b64decode(part.data, validate=True)
    assert len(data) <= MAX_IMAGE_BYTES
    with Image.open(io.BytesIO(data)) as img:
        assert img.size == (part.width, part.height)
        assert Image.MIME[img.format] == part.mime_type
    return part


def encoded(img: Image.Image, fmt: str, **kw) -> bytes:
    out = io.BytesIO()
    img.save(out, fmt, **kw)
    return out.getvalue()


def png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def png_chunks(png: bytes) -> list[tuple[bytes, bytes]]:
    found, pos = [], 8
    while pos < len(png):
        (length,) = struct.unpack_from(">I", png, pos)
        found.append((png[pos + 4:pos + 8], png[pos + 8:pos + 8 + length]))
        pos += 12 + length
    return found


def png_of(chunks: list[tuple[bytes, bytes]]) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + b"".join(png_chunk(kind, body) for kind, body in chunks)


def with_pixel_data(png: bytes, stream: bytes) -> bytes:
    """The PNG with its one IDAT chunk's data replaced (the checksum made right)."""
    return png_of([(kind, stream if kind == b"IDAT" else body) for kind, body in png_chunks(png)])


def pixel_data(png: bytes) -> bytes:
    [idat] = [body for kind, body in png_chunks(png) if kind == b"IDAT"]
    return idat


def colour_times_alpha_difference(a: Image.Image, b: Image.Image) -> Image.Image:
    """Where a pixel is all but transparent its colour is noise: images are compared as colour
    times alpha."""
    return ImageChops.difference(a.convert("RGBA").convert("RGBa"), b.convert("RGBA").convert("RGBa"))


def png_claiming(width: int, height: int) -> bytes:
    """A PNG whose header (with a correct CRC) declares width x height, followed by a
    token of data."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    idat = zlib.compress(b"\x00" + b"\x00" * 30)
    return b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IDAT", idat) + png_chunk(b"IEND", b"")


# --- decompression bombs
# ----------------------------------------------------------------------------------

@pytest.mark.parametrize("width,height", [(100_000, 100_000), (20_000, 20_000), (11_000, 10_000)])
def test_decompression_bomb_is_refused_from_its_header(tmp_path: Path, engine: Engine, width: int, height: int):
    assert width * height > MAX_IMAGE_PIXELS
    (tmp_path / "bomb.png").write_bytes(png_claiming(width, height))
    result = read(engine, path="bomb.png")
    assert result.is_error and result.error.code == "image_too_large", result.text()
    assert result.text().startswith("Error:")


def test_header_just_under_the_limit_is_not_called_a_bomb(tmp_path: Path, engine: Engine):
    (tmp_path / "tall.png").write_bytes(png_claiming(10, MAX_IMAGE_PIXELS // 10))
    result = read(engine, path="tall.png")
    assert not (result.is_error and result.error.code == "image_too_large")


# --- sizes
# ------------------------------------------------------------------------------------------------

def test_a_huge_photo_is_scaled_while_decoding_and_stays_near_the_cap(tmp_path: Path, engine: Engine):
    img = Image.linear_gradient("L").resize((7200, 5400)).convert("RGB")
    (tmp_path / "huge.jpg").write_bytes(encoded(img, "JPEG", quality=80))
    result = read(engine, path="huge.jpg")
    part = the_part(result)
    assert (part.width, part.height) == (1800, 1350)  # the decoder's 1/4 cut, no resampling after
    assert "downscaled from 7200x5400" in result.text()


def test_a_big_photo_is_downscaled(tmp_path: Path, engine: Engine):
    img = Image.linear_gradient("L").resize((5000, 3000)).convert("RGB")
    (tmp_path / "big.jpg").write_bytes(encoded(img, "JPEG", quality=80))
    result = read(engine, path="big.jpg")
    part = the_part(result)
    assert (part.width, part.height) == (MAX_IMAGE_SIDE, 1200) and part.mime_type == "image/jpeg"
    assert "5000x3000" in result.text()


def test_tall_png_keeps_its_aspect(tmp_path: Path, engine: Engine):
    img = Image.new("RGBA", (700, 4900), (0, 128, 255, 100))
    (tmp_path / "tall.png").write_bytes(encoded(img, "PNG"))
    part = the_part(read(engine, path="tall.png"))
    assert part.height == MAX_IMAGE_SIDE and abs(part.width - round(700 * MAX_IMAGE_SIDE / 4900)) <= 1
    assert part.mime_type == "image/png"
    with Image.open(io.BytesIO(base64.b64decode(part.data))) as back:
        assert "A" in back.mode  # transparency survives


def test_a_big_palette_image_is_averaged_in_colour(tmp_path: Path, engine: Engine):
    img = Image.new("P", (4000, 100))
    img.putpalette([0, 0, 0, 255, 255, 255] + [0] * 762)
    img.putdata([x % 2 for x in range(4000)] * 100)  # alternate black and white columns
    (tmp_path / "stripes.png").write_bytes(encoded(img, "PNG"))
    part = the_part(read(engine, path="stripes.png"))
    with Image.open(io.BytesIO(base64.b64decode(part.data))) as back:
        assert part.width == 2000 and back.convert("RGB").getpixel((10, 10)) == (128, 128, 128)


@pytest.fixture(params=[1, 3], ids=["one core", "three cores"])
def cores(request, monkeypatch) -> int:
    """Large images are resized and compressed in bands on the machine's cores; small
    ones too, here."""
    monkeypatch.setattr(image_module.os, "cpu_count", lambda: request.param)
    monkeypatch.setattr(image_module, "BANDS_MIN_PIXELS", 0)
    return request.param


@pytest.mark.parametrize("mode", ["L", "LA", "RGB", "RGBA"])
def test_the_png_writer_keeps_every_pixel(mode: str, cores: int):
    img = Image.frombytes(mode, (37, 23), os.urandom(37 * 23 * len(mode)))
    encoded = encode_png(img)
    assert len(image_module._band_cuts(23, 37 * 23)) - 1 == image_module.IMAGE_BANDS
    with Image.open(io.BytesIO(encoded)) as back:
        back.load()
        assert back.mode == mode and back.size == img.size and back.tobytes() == img.tobytes()
    rows = zlib.decompress(pixel_data(encoded))  # one zlib stream, its Adler-32 checked over all the bands
    assert rows[::37 * len(mode) + 1] == b"\0" * 23


@pytest.mark.parametrize("mode,size", [("RGB", (2999, 1201)), ("RGBA", (2100, 2100)), ("LA", (2500, 900)),
                                       ("L", (900, 4700)), ("RGB", (12100, 300)), ("RGBA", (12500, 400))])
def test_resizing_in_bands_is_resizing_whole(mode: str, size: tuple[int, int], cores: int):
    """Blocks of noise, the hardest case: the bands meet without a seam and the picture is Pillow's
    resize of the whole image but for rounding (a band's box in the source is a float); it is the
    same on any number of cores."""
    rng = random.Random(5)
    img = Image.frombytes(mode, (60, 40), rng.randbytes(60 * 40 * len(mode))).resize(size, Image.NEAREST)
    whole = img.resize(image_module._fit(*size), resample=Image.BICUBIC, reducing_gap=image_module.RESIZE_REDUCING_GAP)
    banded = image_module._downscale(img)
    assert banded.size == whole.size and banded.mode == mode
    difference = colour_times_alpha_difference(banded, whole)
    assert max(high for _, high in difference.getextrema()) <= 12  # a band out of place differs by up to 255
    assert sum(ImageStat.Stat(difference).mean) / 4 < 0.01
    if cores == 3:
        image_module.os.cpu_count = lambda: 1
        assert image_module._downscale(img).tobytes() == banded.tobytes()


def test_noisy_image_part_stays_under_the_byte_limit(tmp_path: Path, engine: Engine):
    img = Image.frombytes("RGB", (1500, 1500), os.urandom(1500 * 1500 * 3))
    data = encoded(img, "PNG", compress_level=1)
    assert len(data) > MAX_IMAGE_BYTES  # noise does not compress: the file itself is too big to send
    (tmp_path / "noise.png").write_bytes(data)
    part = the_part(read(engine, path="noise.png"))
    assert len(base64.b64decode(part.data)) <= MAX_IMAGE_BYTES
    assert max(part.width, part.height) <= MAX_IMAGE_SIDE


def test_small_png_is_sent_untouched(tmp_path: Path, engine: Engine):
    data = encoded(Image.new("RGB", (40, 30), (1, 2, 3)), "PNG")
    (tmp_path / "small.png").write_bytes(data)
    part = the_part(read(engine, path="small.png"))
    assert base64.b64decode(part.data) == data and (part.width, part.height) == (40, 30)


@pytest.mark.parametrize("fmt,mode,name", [("BMP", "RGB", "x.bmp"), ("TIFF", "CMYK", "x.tif"),
                                           ("JPEG", "CMYK", "x.jpg"), ("PNG", "I;16", "x.png"),
                                           ("PNG", "P", "p.png"), ("WEBP", "RGBA", "x.webp"),
                                           ("GIF", "P", "x.gif"), ("PNG", "LA", "la.png")])
def test_modes_and_formats_become_sendable_parts(tmp_path: Path, engine: Engine, fmt, mode, name):
    img = Image.new(mode, (64, 48))
    (tmp_path / name).write_bytes(encoded(img, fmt))
    part = the_part(read(engine, path=name))
    assert (part.width, part.height) == (64, 48)


def test_animated_gif(tmp_path: Path, engine: Engine):
    """Small enough: sent as it is, every frame. Too big: re-encoded from the first frame,
    and it says so."""
    for name, size in (("small.gif", (20, 10)), ("wide.gif", (2400, 100))):
        frames = [Image.new("RGB", size, (60 * i, 255 - 60 * i, 0)) for i in range(4)]
        data = encoded(frames[0], "GIF", save_all=True, append_images=frames[1:])
        with Image.open(io.BytesIO(data)) as check:
            assert check.n_frames == 4
        (tmp_path / name).write_bytes(data)
    small = the_part(read(engine, path="small.gif"))
    assert base64.b64decode(small.data) == (tmp_path / "small.gif").read_bytes()
    wide = read(engine, path="wide.gif")
    assert the_part(wide).width == MAX_IMAGE_SIDE
    assert "first of 4 frames" in wide.text()


# --- damaged files
# ----------------------------------------------------------------------------------------

def test_a_truncated_photo_is_repaired_and_says_so(tmp_path: Path, engine: Engine):
    img = Image.radial_gradient("L").resize((300, 200)).convert("RGB")
    data = encoded(img, "JPEG", quality=90)
    (tmp_path / "cut.jpg").write_bytes(data[: len(data) * 2 // 3])
    result = read(engine, path="cut.jpg")
    part = the_part(result)
    assert (part.width, part.height) == (300, 200)
    assert "truncated" in result.text()


def test_truncated_png_is_a_repair_or_a_clear_error(tmp_path: Path, engine: Engine):
    img = Image.frombytes("RGB", (200, 200), os.urandom(200 * 200 * 3))
    data = encoded(img, "PNG")
    (tmp_path / "cut.png").write_bytes(data[: len(data) // 2])
    result = read(engine, path="cut.png")
    if result.is_error:
        assert result.error.code == "image_undecodable" and result.text().startswith("Error:")
    else:
        assert "truncated" in result.text() and the_part(result).width == 200


def test_garbage_after_image_magic_is_a_clear_error(tmp_path: Path, engine: Engine):
    (tmp_path / "fake.png").write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(500))
    (tmp_path / "fake.jpg").write_bytes(b"\xff\xd8\xff\xe0" + os.urandom(500))
    for name in ("fake.png", "fake.jpg"):
        result = read(engine, path=name)
        assert result.is_error and result.error.code == "image_undecodable", result.text()
        assert result.text().startswith("Error:")


def test_image_through_the_server(tmp_path: Path, server):
    img = Image.new("RGB", (2500, 500), (10, 200, 30))
    (tmp_path / "wide.png").write_bytes(encoded(img, "PNG"))
    result = server.read(path="wide.png")
    assert result["kind"] == "image" and not result["isError"]
    [image] = [p for p in result["content"] if p["type"] == "image"]
    assert (image["width"], image["height"]) == (MAX_IMAGE_SIDE, 400) and image["mimeType"] == "image/png"
    with Image.open(io.BytesIO(base64.b64decode(image["data"]))) as back:
        assert back.size == (MAX_IMAGE_SIDE, 400)


def test_exif_orientation_survives_downscaling(tmp_path: Path, engine: Engine):
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise to display
    (tmp_path / "phone.jpg").write_bytes(encoded(Image.new("RGB", (3000, 2000)), "JPEG", exif=exif.tobytes()))
    part = the_part(read(engine, path="phone.jpg"))
    # Upright (portrait), 2:3 kept; the decoder's 1/2 cut may leave it under the cap
    # (image.DRAFT_FLOOR).
    assert part.height > part.width and abs(part.width * 3 - part.height * 2) <= 3
    assert MAX_IMAGE_SIDE * DRAFT_FLOOR <= part.height <= MAX_IMAGE_SIDE


def test_heic_is_converted_and_its_reader_loads_only_for_it(tmp_path: Path):
    pillow_heif = pytest.importorskip("pillow_heif")
    heic = io.BytesIO()
    pillow_heif.from_pillow(Image.new("RGB", (640, 480), (10, 200, 30))).save(heic, format="HEIF", quality=90)
    (tmp_path / "photo.heic").write_bytes(heic.getvalue())
    # A JPEG: it goes through Pillow, as a HEIF file does (a small whole PNG is sent without
    # Pillow at all).
    (tmp_path / "photo.jpg").write_bytes(encoded(Image.new("RGB", (64, 48), (128, 0, 0)), "JPEG"))
    # A fresh process: which readers a read imports shows only there.
    script = """
import sys
from agentread.engine import Engine
from agentread.request import parse_request
from agentread.workspace import Workspace
engine = Engine(Workspace([sys.argv[1]]))
assert not engine.read(parse_request({"path": "photo.jpg"})).is_error
print("pillow_heif" in sys.modules)
result = engine.read(parse_request({"path": "photo.heic"}))
print(result.text())
print([(p.mime_type, p.width, p.height) for p in result.content if hasattr(p, "mime_type")])
"""
    import subprocess

    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=True)
    after_photo, text, parts = done.stdout.strip().splitlines()[0], done.stdout, done.stdout.strip().splitlines()[-1]
    assert after_photo == "False"  # a JPEG does not load the HEIF reader
    assert "Image image/heic" in text and "sent as image/jpeg 640x480" in text
    assert parts == "[('image/jpeg', 640, 480)]"


# --- PNGs proven whole without Pillow
# ---------------------------------------------------------------------

def pillows_part(data: bytes):
    """What the Pillow path (decode, repair or refuse) makes of these bytes."""
    try:
        part, note = _decoded_part(data)
    except ReadError as exc:
        return exc.code
    return part.mime_type, part.data, part.width, part.height, note


def notebook_pngs(corpus: Path) -> list[bytes]:
    found = []
    for path in sorted((corpus / "notebooks").rglob("*.ipynb")):
        try:
            cells = json.loads(path.read_bytes())["cells"]
        except (ValueError, KeyError, TypeError):
            continue
        for output in (o for c in cells if isinstance(c, dict) for o in c.get("outputs") or []):
            payload = (output.get("data") or {}).get("image/png") if isinstance(output, dict) else None
            try:
                found.append(base64.b64decode("".join(payload)))
            except (TypeError, ValueError):  # the corpus holds damaged payloads too; read_notebook says so
                continue
    return found


def test_intact_pngs_are_sent_as_pillow_would_send_them(corpus: Path):
    """Every plot in the corpus notebooks and PNGs of every colour type and depth: those that Pillow
    decodes whole and would send untouched are proven whole without it, and sent the same; the rest
    (damaged, too large) are left to Pillow."""
    made = [encoded(Image.frombytes(mode, (61, 37), random.Random(7).randbytes(61 * 37 * 4)[:61 * 37 * n]), "PNG")
            for mode, n in (("L", 1), ("LA", 2), ("RGB", 3), ("RGBA", 4))]
    made += [encoded(Image.new(mode, (61, 37), 1), "PNG") for mode in ("1", "P", "I;16")]
    plots = notebook_pngs(corpus)
    assert len(plots) > 100
    for data in made + plots:
        untouched = ("image/png", base64.b64encode(data).decode("ascii"))
        decoded = pillows_part(data)
        if isinstance(decoded, tuple) and decoded[:2] == untouched and decoded[4] is None:
            assert check_png(data) == (decoded[2:4], None)
        else:
            assert check_png(data)[0] is None


def recrc(data: bytes) -> bytes:
    """The same chunks with their checksums made right again, so that only what is inside
    them is wrong."""
    out, pos = [data[:8]], 8
    while pos + 12 <= len(data):
        length, kind = struct.unpack_from(">I4s", data, pos)
        out.append(png_chunk(kind, data[pos + 8:pos + 8 + length]))
        pos += 12 + length
    return b"".join(out) + data[pos:]


def test_a_damaged_png_is_never_taken_for_whole():
    """Bytes flipped, cut, repeated or dropped, with the chunk checksums made right again or not:
    whatever the check without Pillow accepts, Pillow decodes whole and sends untouched too."""
    accepted = 0
    for seed in range(400):
        rng = random.Random(seed)
        img = Image.radial_gradient("L").resize((90, 60)).convert(rng.choice(["L", "RGB", "RGBA", "P"]))
        data = bytearray(encoded(img, "PNG"))
        damage(data, rng, start=8)  # after the signature
        damaged = recrc(bytes(data)) if rng.random() < 0.7 else bytes(data)
        size, _ = check_png(damaged)
        if size:
            accepted += 1
            assert pillows_part(damaged) == ("image/png", base64.b64encode(damaged).decode("ascii"), *size, None), seed
    assert 0 < accepted < 200  # some damage is harmless (in text chunks, after the end); most is not


@pytest.mark.parametrize("width", [120, 2100], ids=["full size", "downscaled"])
def test_pixel_data_that_stops_short_is_caught_though_every_checksum_is_right(tmp_path: Path, engine: Engine,
                                                                              width: int):
    """Pillow decodes such a PNG without complaint, the rows after the data's end left blank."""
    stride = width * 3
    img = Image.frombytes("RGB", (width, 80), random.Random(3).randbytes(stride * 80))
    rows = b"".join(b"\0" + img.tobytes()[y * stride:(y + 1) * stride] for y in range(80))
    short = zlib.compress(rows[: len(rows) // 2])  # a whole zlib stream, of half the rows
    data = png_of([(b"IHDR", struct.pack(">IIBBBBB", width, 80, 8, 2, 0, 0, 0)), (b"IDAT", short), (b"IEND", b"")])
    (tmp_path / "short.png").write_bytes(data)
    result = read(engine, path="short.png")
    assert image_module.PNG_ENDS_EARLY in result.text()
    part = the_part(result)
    assert base64.b64decode(part.data) != data, "what is sent is the decoded picture, not the file as if whole"
    with Image.open(io.BytesIO(base64.b64decode(part.data))) as back:
        whole = img.resize(back.size, Image.BICUBIC) if back.size != img.size else img
        top = (0, 0, back.width, back.height * 3 // 8)  # the rows that were there, clear of where they end
        difference = ImageChops.difference(back.convert("RGB").crop(top), whole.crop(top))
        assert max(high for _, high in difference.getextrema()) <= (1 if back.size != img.size else 0)


def test_reading_a_notebook_of_plots_does_not_load_pillow(tmp_path: Path):
    """Pillow's import and format plugins cost more than reading a notebook of plots: PNGs proven
    whole are sent without it (a fresh process shows which modules a read imports)."""
    plot = base64.b64encode(encoded(Image.radial_gradient("L").resize((300, 200)), "PNG")).decode()
    cell = {"cell_type": "code", "id": "a", "metadata": {}, "execution_count": 1, "source": "plot()",
            "outputs": [{"output_type": "display_data", "metadata": {}, "data": {"image/png": plot}}]}
    (tmp_path / "plots.ipynb").write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                                                      "cells": [cell]}))
    script = """
import sys
from agentread.engine import Engine
from agentread.request import parse_request
from agentread.workspace import Workspace
result = Engine(Workspace([sys.argv[1]])).read(parse_request({"path": "plots.ipynb"}))
print([(p.mime_type, p.width, p.height) for p in result.content if hasattr(p, "mime_type")], "PIL" in sys.modules)
"""
    import subprocess

    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[('image/png', 300, 200)] False"


def test_reads_at_once_share_the_band_threads_and_agree(monkeypatch):
    """As the server's read workers do: several large images read at once, each resized and
    compressed in bands on the one pool, come out as each does read alone."""
    monkeypatch.setattr(image_module, "_band_pool", None)
    rng = random.Random(9)
    images = [encoded(Image.frombytes("RGB", (40, 30), rng.randbytes(40 * 30 * 3)).resize((2600, 1300)), "PNG")
              for _ in range(4)]
    alone = [image_module.image_part(data)[0] for data in images]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as readers:
        together = list(readers.map(lambda data: image_module.image_part(data)[0], images))
    assert together == alone and all((p.width, p.height) == (2000, 1000) for p in alone)


@pytest.mark.parametrize("case", ["unknown critical chunk", "palette of a partial entry", "empty palette",
                                  "two palettes"])
def test_a_png_readers_refuse_is_sent_re_encoded(tmp_path: Path, engine: Engine, case: str):
    """Pillow reads these; libpng, as model providers may use, refuses them: never sent
    as they are."""
    palette = png_chunks(encoded(Image.new("P", (30, 20), 1), "PNG"))
    rgb = png_chunks(encoded(Image.new("RGB", (30, 20), (1, 2, 3)), "PNG"))
    chunks = {"unknown critical chunk": rgb[:1] + [(b"ABCD", b"x")] + rgb[1:],
              "palette of a partial entry": [(k, b + b"\0" if k == b"PLTE" else b) for k, b in palette],
              "empty palette": [(k, b"" if k == b"PLTE" else b) for k, b in palette],
              "two palettes": [c for k, b in palette for c in ([(k, b)] * (2 if k == b"PLTE" else 1))]}[case]
    data = png_of(chunks)
    (tmp_path / "odd.png").write_bytes(data)
    result = read(engine, path="odd.png")
    part = the_part(result)
    assert base64.b64decode(part.data) != data and (part.width, part.height) == (30, 20)
    assert "re-encoded:" in result.text()


def test_a_png_of_countless_chunks_is_left_to_pillow_at_once():
    data = png_of(png_chunks(encoded(Image.new("RGB", (30, 20)), "PNG"))[:1] + [(b"tEXt", b"")] * 20_000
                  + png_chunks(encoded(Image.new("RGB", (30, 20)), "PNG"))[1:])
    assert check_png(data) == (None, None)  # the walk stops at MAX_PNG_CHUNKS
    part, note = image_module.image_part(data)
    assert (part.width, part.height, note) == (30, 20, None)


# --- large images, decoded by Pillow
# --------------------------------------------------------------------------

def test_a_thin_strip_is_downscaled_along_its_length():
    """128,000x2 to 2,000x1: 64 times along, under 6 times across, so not reduced first."""
    strip = Image.linear_gradient("L").resize((128_000, 2))
    part, note = image_module.image_part(encoded(strip, "PNG"))
    assert (part.width, part.height, note) == (2000, 1, "downscaled from 128000x2")


def test_a_damaged_large_png_is_repaired_or_refused_with_a_clear_error(tmp_path: Path, engine: Engine):
    """Bytes flipped, cut, repeated or dropped in the rows or in their compressed stream of a PNG
    too large to send, the checksums made right again so that only the pixel data is wrong: a
    picture of the size sent (repaired, or whole-but-short and said so), or an image_undecodable
    error that says what to do."""
    data = encoded(Image.radial_gradient("L").resize((2100, 30)).convert("RGB"), "PNG")  # in one IDAT chunk
    outcomes = set()
    for seed in range(SEEDS_OF_DAMAGE):
        rng = random.Random(seed)
        in_rows = rng.random() < 0.6
        target = bytearray(zlib.decompress(pixel_data(data)) if in_rows else pixel_data(data))
        damage(target, rng)
        (tmp_path / "damaged.png").write_bytes(with_pixel_data(data, zlib.compress(target) if in_rows
                                                               else bytes(target)))
        result = read(engine, path="damaged.png")
        if result.is_error:
            assert result.error.code == "image_undecodable" and result.text().startswith("Error:"), seed
            outcomes.add("refused")
        else:
            part = the_part(result)
            assert (part.width, part.height) == (2000, 29), seed
            outcomes.add("read")
    assert outcomes == {"read", "refused"}  # flipped pixels are still pixels; a broken stream is not


SEEDS_OF_DAMAGE = 60


@pytest.mark.parametrize("keyword", [b"exif", b"Raw profile type exif", b"XML:com.adobe.xmp"])
def test_a_large_png_turned_by_a_text_chunk_is_turned_upright(tmp_path: Path, engine: Engine, keyword: bytes):
    """Pillow reads an orientation from these text chunks too: such a PNG is left to
    it, and turned."""
    exif = Image.Exif()
    exif[0x0112] = 6  # turned 90 degrees: shown upright, 3000 wide becomes 2000 high once downscaled
    raw = exif.tobytes()
    if keyword == b"XML:com.adobe.xmp":
        text = (b'<x:xmpmeta xmlns:x="adobe:ns:meta/">'
                b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
                b'<rdf:Description xmlns:tiff="http://ns.adobe.com/tiff/1.0/" tiff:Orientation="6"/>'
                b'</rdf:RDF></x:xmpmeta>')
    elif keyword == b"exif":
        text = raw
    else:  # as ImageMagick writes it: hex after a header line
        text = b"\nexif\n" + str(len(raw) + 6).encode() + b"\n" + (b"Exif\0\0" + raw).hex().encode()
    data = encoded(Image.new("RGB", (3000, 200), (10, 20, 30)), "PNG")
    chunks = png_chunks(data)
    data = png_of(chunks[:1] + [(b"tEXt", keyword + b"\0" + text)] + chunks[1:])
    (tmp_path / "turned.png").write_bytes(data)
    result = read(engine, path="turned.png")
    part = the_part(result)
    assert (part.width, part.height) == (133, 2000) and "turned upright" in result.text()

