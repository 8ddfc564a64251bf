"""Large baseline JPEGs decoded at 1/8 or 1/4 of their size on two cores by the C helper (_jpeg.c), which says
why; image.py falls back to Pillow for every JPEG this does not take."""

from __future__ import annotations

import os
import struct

try:  # compiled with the package (setup.py); without it Pillow decodes every JPEG
    from agentread._scan import jpeg_scaled
except ImportError:
    jpeg_scaled = None

# Markers: start of a baseline or an extended Huffman frame; the others start frames of kinds left to Pillow
# (progressive, lossless, arithmetic coding).
BASELINE_FRAMES = {0xC0, 0xC1}
OTHER_FRAMES = {0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
DHT, DQT, DRI, SOS, APP14 = 0xC4, 0xDB, 0xDD, 0xDA, 0xEE
# Component identifiers libjpeg takes for RGB rather than YCbCr.
RGB_IDS = (ord("R"), ord("G"), ord("B"))
# A component as the C helper takes it: sampling across and down, DC and AC tables, 64 16-bit quantisers.
COMPONENT_BYTES = 4 + 64 * 2


def scaled(data: bytes, size: tuple[int, int], least: tuple[int, int]):
    """The JPEG's pixels at 1/8 or 1/4 of its size, the smaller that is at least `least`, as a Pillow image;
    None for one this does not decode (progressive, restart markers, CMYK, RGB, 12-bit, other sampling), for
    one that needs a larger scale, or for damage: Pillow decodes, repairs or refuses those."""
    if jpeg_scaled is None:
        return None
    n = next((n for n in (1, 2) if _scaled(size[0], n) >= least[0] and _scaled(size[1], n) >= least[1]), None)
    frame = _frame(data) if n else None
    if frame is None:
        return None
    width, height, components, tables, start = frame
    if (width, height) != size:
        return None
    threads = 2 if (os.cpu_count() or 1) > 1 else 1
    decoded = jpeg_scaled(data, start, tables, components, width, height, n, threads, 0)
    if decoded is None:
        return None
    pixels, _ = decoded
    from PIL import Image

    mode = "RGB" if len(components) > COMPONENT_BYTES else "L"
    return Image.frombytes(mode, (_scaled(width, n), _scaled(height, n)), pixels)


def _scaled(side: int, n: int) -> int:
    """A side at n/8, rounded up, as libjpeg scales it."""
    return (side * n + 7) // 8


def _frame(data: bytes):
    """(width, height, components, tables, where the scan's data starts) of a baseline JPEG of one scan holding
    every component, in the C helper's layout; None for anything else."""
    pos, quant, huff, frame = 2, {}, {}, None
    while pos + 4 <= len(data) and data[pos] == 0xFF:
        marker = data[pos + 1]
        if marker == 0xFF:  # fill bytes before a marker
            pos += 1
            continue
        (length,) = struct.unpack_from(">H", data, pos + 2)
        body = data[pos + 4:pos + 2 + length]
        if length < 2 or len(body) != length - 2 or marker in OTHER_FRAMES or marker == APP14:
            return None  # an Adobe marker may say RGB or CMYK
        if marker == DQT:
            at = 0
            while at + 65 <= len(body) and body[at] >> 4 == 0:  # 8-bit tables only
                quant[body[at] & 15] = body[at + 1:at + 65]
                at += 65
            if at != len(body):
                return None
        elif marker == DHT:
            at = 0
            while at + 17 <= len(body):
                count = sum(body[at + 1:at + 17])
                if at + 17 + count > len(body) or count > 256 or body[at] & 15 > 1 or body[at] >> 4 > 1:
                    return None
                symbols = body[at + 17:at + 17 + count]
                huff[body[at] >> 4, body[at] & 15] = body[at + 1:at + 17] + symbols.ljust(256, b"\0")
                at += 17 + count
            if at != len(body):
                return None
        elif marker == DRI:
            if body[:2] != b"\0\0":
                return None  # restart markers
        elif marker in BASELINE_FRAMES:
            if len(body) < 6 or body[0] != 8 or frame is not None:
                return None  # 12-bit, or a second frame (libjpeg refuses it)
            height, width, count = struct.unpack_from(">HHB", body, 1)
            if count not in (1, 3) or len(body) != 6 + 3 * count or not width or not height:
                return None  # a height of 0 is given later, by a DNL marker
            frame = width, height, [tuple(body[6 + 3 * k:9 + 3 * k]) for k in range(count)]
            if any(not 1 <= sampling >> 4 <= 4 or not 1 <= sampling & 15 <= 4 or table > 3
                   for _, sampling, table in frame[2]):
                return None  # what libjpeg refuses; the C helper takes less still
        elif marker == SOS:
            if frame is None or not body or body[0] != len(frame[2]) or len(body) != 4 + 2 * body[0] \
                    or body[-3:] != b"\0\x3f\0" or tuple(c[0] for c in frame[2]) == RGB_IDS:
                return None  # one scan of every component, whole: not progressive
            components = b""
            for k, (ident, sampling, table) in enumerate(frame[2]):
                selector = body[1 + 2 * k:3 + 2 * k]
                if selector[0] != ident or table not in quant:
                    return None
                components += bytes((sampling >> 4, sampling & 15, selector[1] >> 4, selector[1] & 15))
                components += struct.pack("<64H", *quant[table])
            tables = b"".join(huff.get(key, bytes(272)) for key in ((0, 0), (0, 1), (1, 0), (1, 1)))
            return frame[0], frame[1], components, tables, pos + 2 + length
        pos += 2 + length
    return None
