"""Large baseline JPEGs decoded at 1/4 or 1/8 on two cores (agentread/jpeg.py, _jpeg.c): the picture Pillow's
scaled decode gives, the same bits however the scan is split between the halves, and every JPEG it does not
take, damaged or of another kind, left to Pillow."""

from __future__ import annotations

import base64
import io
import random
import struct
from pathlib import Path

import pytest
from PIL import Image, ImageChops, ImageStat

from agentread import jpeg
from agentread.engine import Engine
from agentread.request import parse_request
from agentread.workspace import Workspace
from mutate import damage

pytestmark = pytest.mark.skipif(jpeg.jpeg_scaled is None, reason="the C helpers were not built")


def photo(size: tuple[int, int], seed: int = 1) -> Image.Image:
    """Photo-like: smooth gradients in colour, under some noise, so that every block has detail."""
    rng = random.Random(seed)
    w, h = size
    noise = Image.frombytes("RGB", (w // 4 + 1, h // 4 + 1), rng.randbytes((w // 4 + 1) * (h // 4 + 1) * 3))
    base = Image.merge("RGB", [Image.linear_gradient("L").resize(size), Image.radial_gradient("L").resize(size),
                               Image.linear_gradient("L").rotate(90).resize(size)])
    return Image.blend(base, noise.resize(size, Image.BICUBIC), 0.3)


def encoded(img: Image.Image, **kw) -> bytes:
    out = io.BytesIO()
    img.save(out, "JPEG", **kw)
    return out.getvalue()


def pillows(data: bytes, n: int) -> Image.Image:
    """Pillow's decode at n/8 (its draft picks the scale from the size asked for, rounded down)."""
    img = Image.open(io.BytesIO(data))
    img.draft(img.mode, (img.width * n // 8, img.height * n // 8))
    return img.convert("RGB" if img.mode != "L" else "L")


def decoded(data: bytes, n: int, threads: int = 2, split: int = 0) -> tuple[bytes, int] | None:
    """(pixels, the MCU where the halves met: all of them when they did not)."""
    width, height, components, tables, start = jpeg._frame(data)
    return jpeg.jpeg_scaled(data, start, tables, components, width, height, n, threads, split)


def mcus(data: bytes) -> int:
    width, height, components, _, _ = jpeg._frame(data)
    wide, high = components[:2] if len(components) > jpeg.COMPONENT_BYTES else (1, 1)  # the luma's sampling
    return -(-width // (8 * wide)) * -(-height // (8 * high))


def error(image: Image.Image, source: Image.Image) -> float:
    """How far a decoded picture is from its source averaged down to the same size, per channel."""
    reference = source.resize(image.size, Image.BOX)
    return sum(ImageStat.Stat(ImageChops.difference(image, reference)).mean) / len(image.mode)


@pytest.mark.parametrize("mode,subsampling,size", [("RGB", 2, (1603, 1201)), ("RGB", 1, (1280, 961)),
                                                   ("RGB", 0, (999, 1400)), ("L", 0, (1205, 803))],
                         ids=["4:2:0", "4:2:2", "4:4:4", "grey"])
@pytest.mark.parametrize("n", [2, 1], ids=["quarter", "eighth"])
def test_the_picture_is_as_good_as_pillows_scaled_decode(mode: str, subsampling: int, size: tuple[int, int],
                                                         n: int):
    """libjpeg scales a block by an inverse DCT of fewer points, this by averaging the full one over each
    output: the same picture within a level on average, and no further from the source. Where chroma is
    halved across only (4:2:2), libjpeg decodes it at the luma's scale and stretches it, and this decodes it
    to the luma's grid: closer to the source there."""
    source = photo(size).convert(mode)
    data = encoded(source, quality=90, subsampling=subsampling)
    scaled_size = ((size[0] * n + 7) // 8, (size[1] * n + 7) // 8)
    ours = jpeg.scaled(data, size, scaled_size)
    assert ours is not None and ours.size == scaled_size and ours.mode == mode
    theirs = pillows(data, n)
    assert theirs.size == scaled_size
    assert error(ours, source) <= error(theirs, source) + 0.05
    if subsampling != 1:
        assert sum(ImageStat.Stat(ImageChops.difference(ours, theirs)).mean) / len(mode) < 1.0


@pytest.mark.parametrize("subsampling", [2, 0])
def test_the_halves_give_the_same_bits_wherever_the_scan_is_split(subsampling: int):
    """However far into the scan the second half starts (a byte in a block, in an MCU, near either end), it
    falls into step with the first half's codes and the picture is the one decoded in one piece."""
    data = encoded(photo((1203, 907), seed=subsampling), quality=95, subsampling=subsampling)
    whole, alone = decoded(data, 2, threads=1)
    assert alone == mcus(data)  # one thread: no halves to meet
    scan = len(data) - jpeg._frame(data)[4]
    rng = random.Random(3)
    splits = [1, 2, 3, 100, scan // 2, scan - 40, scan - 3] + [rng.randrange(1, scan) for _ in range(40)]
    met = []
    for split in splits:
        pixels, meeting = decoded(data, 2, threads=2, split=split)
        assert pixels == whole, split
        met.append(meeting < mcus(data))
    assert sum(met) >= len(splits) - 3  # near the very end there may be no MCU left to meet in
    assert decoded(data, 1, threads=2)[0] == decoded(data, 1, threads=1)[0]


def test_a_damaged_jpeg_is_decoded_or_left_to_pillow():
    """Bytes flipped, cut, repeated or dropped anywhere: an image of the size asked for, or None (Pillow then
    repairs or refuses it); never an error. A read outside the data shows under the sanitizers (bench/README)."""
    data = encoded(photo((803, 601)), quality=85)
    size, left = (803, 601), 0  # one core or two: the halves' joining is covered above
    for seed in range(SEEDS_OF_DAMAGE):
        rng = random.Random(seed)
        damaged = bytearray(data)
        damage(damaged, rng, start=2)  # after the start-of-image marker
        ours = jpeg.scaled(bytes(damaged), size, (201, 151))
        if ours is None:
            left += 1
        else:
            assert ours.size == (201, 151)
    assert 0 < left < SEEDS_OF_DAMAGE


SEEDS_OF_DAMAGE = 600


def cut_out(data: bytes, marker: int) -> bytes:
    """The JPEG without its segments of this marker."""
    pos, out = 2, bytearray(data[:2])
    while data[pos] == 0xFF and data[pos + 1] != 0xDA:
        (length,) = struct.unpack_from(">H", data, pos + 2)
        if data[pos + 1] != marker:
            out += data[pos:pos + 2 + length]
        pos += 2 + length
    return bytes(out + data[pos:])


def segment(data: bytes, marker: int) -> bytes:
    """The body of the JPEG's first segment of this marker."""
    pos = 2
    while data[pos + 1] != marker:
        pos += 2 + struct.unpack_from(">H", data, pos + 2)[0]
    return data[pos + 4:pos + 2 + struct.unpack_from(">H", data, pos + 2)[0]]


def resampled(data: bytes, sampling: int) -> bytes:
    """A one-component JPEG whose frame says this sampling for it."""
    at = data.index(bytes((0xFF, 0xC0)))
    return data[:at + 11] + bytes((sampling,)) + data[at + 12:]


def with_segment(data: bytes, marker: int, body: bytes) -> bytes:
    return data[:2] + bytes((0xFF, marker)) + struct.pack(">H", len(body) + 2) + body + data[2:]


@pytest.mark.parametrize("kind", ["progressive", "restart markers", "CMYK", "Adobe marker", "RGB identifiers",
                                  "truncated", "needs a larger scale", "no end of image", "a second frame",
                                  "a second scan", "sampling libjpeg refuses"])
def test_what_this_does_not_decode_is_left_to_pillow(kind: str):
    source = photo((960, 720))
    data = {
        "progressive": lambda: encoded(source, progressive=True),
        "restart markers": lambda: encoded(source, restart_marker_blocks=4),
        "CMYK": lambda: encoded(source.convert("CMYK")),
        "Adobe marker": lambda: with_segment(encoded(source), 0xEE, b"Adobe\0\x64\0\0\0\0\x01"),
        "RGB identifiers": lambda: encoded(source, keep_rgb=True),
        "truncated": lambda: encoded(source)[:-5000],
        "needs a larger scale": lambda: encoded(source),
        "no end of image": lambda: encoded(source)[:-2],
        "a second frame": lambda: with_segment(encoded(source), 0xC0, segment(encoded(source), 0xC0)),
        "a second scan": lambda: encoded(source)[:-2] + bytes((0xFF, 0xDA)) + segment(encoded(source), 0xDA)
                                 + b"\x12\x34\xff\xd9",
        "sampling libjpeg refuses": lambda: resampled(encoded(source.convert("L")), 0x55),
    }[kind]()
    least = (480, 360) if kind == "needs a larger scale" else (120, 90)
    assert jpeg.scaled(data, (960, 720), least) is None


def test_a_large_jpeg_read_is_decoded_here_and_turned_upright(tmp_path: Path, monkeypatch):
    """Through the engine: a 6,400 px photo comes out at 1,600 px, as Pillow's path sends it; its EXIF
    orientation is still applied."""
    source = photo((6400, 2400))
    exif = Image.Exif()
    exif[0x0112] = 6
    (tmp_path / "photo.jpg").write_bytes(encoded(source, quality=85, exif=exif.tobytes()))
    engine = Engine(Workspace([str(tmp_path)]))
    called = []
    scaled = jpeg.scaled
    monkeypatch.setattr(jpeg, "scaled", lambda *args: called.append(1) or scaled(*args))
    ours = engine.read(parse_request({"path": "photo.jpg"}))
    monkeypatch.setattr(jpeg, "jpeg_scaled", None)  # as where the C helpers were not built
    theirs = engine.read(parse_request({"path": "photo.jpg"}))
    assert called and ours.content[0].text == theirs.content[0].text
    assert "turned upright" in ours.content[0].text and (ours.content[1].width, ours.content[1].height) == (600, 1600)
    with Image.open(io.BytesIO(base64.b64decode(ours.content[1].data))) as a, \
            Image.open(io.BytesIO(base64.b64decode(theirs.content[1].data))) as b:
        assert sum(ImageStat.Stat(ImageChops.difference(a, b)).mean) / 3 < 2.0


def test_hostile_tables_and_scan_data_are_decoded_or_left_to_pillow():
    """Huffman tables of random code counts and symbols, quantisers of any value, scan data of random bytes:
    never an error. A read outside the data shows under the sanitizers (bench/README): the decoder reads zeros
    past the data's end, and checks after each MCU whether it ran past it."""
    data = encoded(photo((803, 601)), quality=85)
    width, height, components, tables, start = jpeg._frame(data)
    decoded_any = 0
    for seed in range(SEEDS_OF_HOSTILITY):
        rng = random.Random(seed)
        t, c, scan = bytearray(tables), bytearray(components), data[start:]
        for _ in range(rng.randint(1, 4)):
            part = rng.choice(["counts", "symbols", "quantiser", "scan"])
            if part == "counts":
                t[rng.randrange(4) * 272 + rng.randrange(16)] = rng.randrange(256)
            elif part == "symbols":
                t[rng.randrange(4) * 272 + 16 + rng.randrange(256)] = rng.randrange(256)
            elif part == "quantiser":
                c[rng.randrange(len(c) // 132) * 132 + 4 + rng.randrange(128)] = rng.randrange(256)
            else:
                scan = rng.randbytes(rng.randrange(1, len(scan)))
        for threads in (1, 2):
            result = jpeg.jpeg_scaled(data[:start] + scan, start, bytes(t), bytes(c), width, height, 2, threads, 0)
            if result is not None:
                decoded_any += 1
                assert len(result[0]) == 201 * 151 * 3
    assert decoded_any > 0


SEEDS_OF_HOSTILITY = 300


def test_components_sharing_their_tables_and_junk_before_the_end_decode_as_in_one_piece():
    """Components with the same Huffman tables give the second half no way to tell which block of an MCU it is
    on (here a grey scan read as three components of a third of its width): one thread decodes it. Junk
    bytes before the end, which libjpeg skips, stop the second half without losing what it decoded."""
    grey = encoded(photo((2400, 800)).convert("L"), quality=90)
    _, _, component, tables, start = jpeg._frame(grey)
    three = bytes((1, 1, 0, 0)) + component[4:]
    shared = [jpeg.jpeg_scaled(grey, start, tables, three * 3, 800, 800, 2, threads, 0) for threads in (1, 2)]
    assert shared[0] is not None and shared[0] == shared[1] == (shared[0][0], 100 * 100)  # no meeting tried
    colour = encoded(photo((1603, 1201)), quality=90)
    junk = colour[:-2] + bytes(random.Random(4).randrange(255) for _ in range(200)) + colour[-2:]
    (halves, met), (alone, _) = decoded(junk, 2, threads=2), decoded(junk, 2, threads=1)
    assert halves == alone == decoded(colour, 2, threads=1)[0] and met < mcus(junk)
