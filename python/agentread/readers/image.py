"""Images: decoded with Pillow, downscaled to what model providers accept, sent as base64
image parts."""

from __future__ import annotations

import io
import os
import struct
import threading
import warnings
from typing import Iterator, NamedTuple

# SIMD base64: an image part is base64 text, 2-3 MB of it for a large one, encoded many times
# faster than by the standard library, and a notebook's plots are decoded from it, several
# times faster too.
import pybase64

# zlib-ng's Python bindings: on PNG rows here they inflate several times faster, and deflate faster,
# than the zlib Python is built against (1.2.13), which is most of proving a notebook's plots whole.
from zlib_ng import zlib_ng

from agentread.limits import MAX_IMAGE_BYTES, MAX_IMAGE_PIXELS, MAX_IMAGE_SIDE
from agentread.readers import Source
from agentread.request import ReadRequest
from agentread.result import ImagePart, ReadError, ReadResult, TextPart

# Formats every provider accepts as they are: sent untouched when already small enough.
PASSTHROUGH_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}

# Formats that hold photographs: re-encoded as JPEG, which keeps them small. Everything else
# (screenshots, plots, icons, scans) is re-encoded as PNG, which keeps edges and text sharp and
# transparency intact.
PHOTO_FORMATS = {"JPEG", "MPO", "HEIF", "AVIF", "WEBP"}

# zlib level for re-encoded PNGs (ours uses zlib-ng, as Pillow's recent wheels do). Its level 1
# compresses a screenshot clearly faster than level 2 or the default 6, for a few more bytes; the
# bytes cost no tokens, and the size limit still applies after it.
PNG_COMPRESS_LEVEL = 1

# A JPEG may be decoded down to this share of the target size (see the draft call).
DRAFT_FLOOR = 0.75

# Resizing first reduces by a whole factor (box filter) down to this multiple of the target, then
# resamples: several times faster than resampling from full size, and indistinguishable at the size
# models look at (Pillow's reducing_gap, done here before the image is cut in bands).
RESIZE_REDUCING_GAP = 3.0
BICUBIC = 3  # Pillow's Resampling.BICUBIC, named here so that Pillow is imported only when an image is read

# Modes Pillow resamples with their colour multiplied by their alpha, so that transparent pixels
# lend no colour.
PREMULTIPLIED = {"RGBA": "RGBa", "LA": "La"}

# Pillow's resampling and zlib's compression let other threads run: a large image is resized and
# compressed in IMAGE_BANDS horizontal bands at once, on a machine of more than one core. The count
# of bands is fixed, so the picture sent is the same on any machine; and with more bands than cores,
# a band heavier than the rest (a photo inset in a screenshot) leaves no core idle: on 2 cores, four
# bands resize and compress a large screenshot markedly faster than one piece, and compress it
# faster than two. Below BANDS_MIN_PIXELS one band is quicker.
IMAGE_BANDS = 4
BANDS_MIN_PIXELS = 1_000_000

# PNG colour types of the modes written without Pillow's encoder (see encode_png).
PNG_COLOR_TYPES = {"L": 0, "RGB": 2, "LA": 4, "RGBA": 6}
# A zlib stream's first two bytes: deflate with a 32 KB window (the level they also name is
# only a hint).
ZLIB_HEADER = b"\x78\x01"

# Channels of each PNG colour type, and the bit depths the standard allows for it.
PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
PNG_DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}

# Chunks that make a PNG more than one still picture or that Pillow reads further (an animation, an
# EXIF orientation, compressed text it may refuse): a PNG holding one goes through Pillow.
PNG_CHUNKS_FOR_PILLOW = {b"acTL", b"eXIf", b"zTXt", b"iTXt"}
# Text chunks Pillow reads an EXIF or XMP orientation from, by their keywords.
PNG_TEXT_FOR_PILLOW = (b"Raw profile type exif", b"exif\0", b"XML:com.adobe.xmp\0")
# Said of a PNG whose every checksum is right and whose pixel data is whole but short: Pillow
# decodes it without a word, the rows it lacks left empty.
PNG_ENDS_EARLY = "its pixel data ends before its last row; the missing rows are shown blank"

# Chunks a PNG reader must understand (the first letter of a chunk's name is upper case when it
# must), and at most how many chunks a PNG is walked for without Pillow: a real one has a few dozen,
# or a few hundred IDAT (5 MB in libpng's 8 KB pieces is 640); a hostile one of 400,000 empty chunks
# would hold up the read.
PNG_CRITICAL_CHUNKS = {b"IHDR", b"PLTE", b"IDAT", b"IEND"}
MAX_PNG_CHUNKS = 10_000

# Pixel rows are inflated and checked this many bytes at a time, so a hostile PNG's rows never sit
# whole in memory (a 2000x2000 RGBA image at 16 bits is 32 MB of them). Under the C allocator's
# threshold for mapping fresh pages (128 KB), each piece reuses the memory of the last, where larger
# pieces make a fresh server's first read of a notebook of plots spend time faulting in fresh pages.
PNG_INFLATE_PIECE_BYTES = 1 << 16

# JPEG qualities tried in turn when an image is still over MAX_IMAGE_BYTES after downscaling.
JPEG_QUALITIES = (85, 70, 50)

# Pillow's truncated-image switch is process-wide; decoding under one lock keeps a repair from
# leaking into another thread's decode (and so its "repaired" note from going missing).
_DECODE_LOCK = threading.Lock()
_heif_ready = False
_band_pool = None
_BAND_POOL_LOCK = threading.Lock()


def _pillow():
    """Import Pillow on first use (cold start stays small)."""
    from PIL import Image, ImageFile

    Image.MAX_IMAGE_PIXELS = MAX_IMAGE_PIXELS
    Image.preinit()  # its readers of PNG, JPEG, GIF, BMP and PPM, imported with it, not in the first open
    return Image, ImageFile


def _register_heif(data: bytes) -> None:
    """HEIC and AVIF are ISO media files ("ftyp" at byte 4): only they need pillow_heif,
    whose import costs more than Pillow's own PNG and JPEG readers, so it is loaded when one
    is first read."""
    global _heif_ready
    if not _heif_ready and data[4:8] == b"ftyp":
        try:
            import pillow_heif

            pillow_heif.register_heif_opener()
        except ImportError:  # HEIC and AVIF then fail to decode as any unknown format does
            pass
        _heif_ready = True


def _open(data: bytes):
    Image, _ = _pillow()
    _register_heif(data)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            img = Image.open(io.BytesIO(data))
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise ReadError("image_too_large", "the image declares more than "
                        f"{MAX_IMAGE_PIXELS:,} pixels and is refused as a possible decompression bomb; "
                        "it cannot be read as an image") from None
    except Exception as exc:  # noqa: BLE001 - Pillow raises many types for undecodable input
        raise ReadError("image_undecodable", f"the image could not be decoded ({_reason(exc)}); "
                        "it may be damaged or in a format Pillow cannot read") from None
    if img.width * img.height > MAX_IMAGE_PIXELS:
        raise ReadError("image_too_large", f"the image is {img.width}x{img.height} pixels, over the "
                        f"{MAX_IMAGE_PIXELS:,}-pixel limit for decoding; it cannot be read as an image")
    if img.width < 1 or img.height < 1:
        raise ReadError("image_undecodable", "the image has no pixels (zero width or height)")
    return img


def _reason(exc: Exception) -> str:
    text = str(exc).split("\n")[0]
    if text.startswith("cannot identify image file"):
        return "not a recognised image format"
    return text[:200] or type(exc).__name__


def _load(img, data: bytes):
    """Decode pixels; a truncated file is repaired where the decoder can (grey where data
    is missing)."""
    _, ImageFile = _pillow()
    with _DECODE_LOCK:
        try:
            if img.format == "PNG":
                # Pillow loads a PNG whose data stops short without complaint; verify reads
                # every chunk.
                _open(data).verify()
            img.load()
            return img, None
        except (OSError, SyntaxError) as exc:  # Pillow's PNG verify raises SyntaxError
            if not _looks_truncated(exc):
                raise ReadError("image_undecodable", f"the image could not be decoded ({_reason(exc)})") from None
        ImageFile.LOAD_TRUNCATED_IMAGES = True
        try:
            again = _open(data)
            if getattr(again, "draft", None) and img.format == "JPEG":
                again.draft("RGB", img.size)
            again.load()
            return again, "the file is truncated; the missing part of the image is shown blank"
        except Exception as exc:  # noqa: BLE001
            raise ReadError("image_undecodable", f"the image is truncated and could not be repaired "
                            f"({_reason(exc)})") from None
        finally:
            ImageFile.LOAD_TRUNCATED_IMAGES = False


def _orientation(img) -> int | None:
    try:
        return img.getexif().get(0x0112)  # the EXIF Orientation tag
    except Exception:  # noqa: BLE001 - a broken EXIF block is no reason to refuse the picture
        return None


def _orientation_swaps(before: tuple[int, int], after: tuple[int, int]) -> bool:
    return (before[0] >= before[1]) != (after[0] >= after[1])


def _looks_truncated(exc: Exception) -> bool:
    text = str(exc).lower()
    return any(word in text for word in ("truncated", "premature", "incomplete", "broken"))


def _fit(width: int, height: int) -> tuple[int, int]:
    scale = min(1.0, MAX_IMAGE_SIDE / max(width, height))
    return max(1, round(width * scale)), max(1, round(height * scale))


def _downscale(img):
    """At most MAX_IMAGE_SIDE on the long side."""
    if max(img.size) <= MAX_IMAGE_SIDE:
        return img
    if img.mode in ("P", "1"):  # resampling needs real colour values (Pillow would fall back to nearest)
        img = img.convert("RGBA" if img.mode == "P" and "transparency" in img.info else
                          "RGB" if img.mode == "P" else "L")
    mode = img.mode
    if mode in PREMULTIPLIED:  # as Pillow's resize does; here once, not in every band
        img = img.convert(PREMULTIPLIED[mode])
    target = _fit(*img.size)
    factor = _reduction(img.size, target)
    if factor > 1:  # whole, so that every band resamples the same reduced pixels
        img = img.reduce(factor)
    return _resize(img, mode, target)


def _reduction(size: tuple[int, int], target: tuple[int, int]) -> int:
    """The whole factor an image is reduced by (box filter) before it is resampled."""
    return int(min(size[0] / target[0], size[1] / target[1]) / RESIZE_REDUCING_GAP)


def _resize(img, mode: str, target: tuple[int, int]):
    """An image (its colour times its alpha, for a mode in PREMULTIPLIED) resized to
    `target` in bands."""
    width, height = target
    cuts = _band_cuts(height, width * height)
    scale = img.height / height

    def band(i: int):
        # The output's rows cuts[i] to cuts[i + 1], from their box in the source: the filter still
        # reads the source rows around the box, so the bands meet without a seam. BICUBIC keeps text
        # in screenshots sharp.
        box = (0, cuts[i] * scale, img.width, cuts[i + 1] * scale)
        out = img.resize((width, cuts[i + 1] - cuts[i]), resample=BICUBIC, box=box)
        return out.convert(mode) if mode in PREMULTIPLIED else out

    bands = _in_bands(band, len(cuts) - 1)
    if len(bands) == 1:
        return bands[0]
    Image, _ = _pillow()
    out = Image.new(mode, target, None)  # not filled: the bands cover it
    for top, piece in zip(cuts, bands):
        out.paste(piece, (0, top))
    return out


def _band_cuts(rows: int, pixels: int) -> list[int]:
    """Where the bands of an image of `rows` rows and `pixels` pixels start and end: one band for
    a small one."""
    count = min(IMAGE_BANDS, rows) if pixels >= BANDS_MIN_PIXELS else 1
    return [rows * i // count for i in range(count + 1)]


def _in_bands(work, count: int) -> list:
    """work(0) ... work(count - 1), on the band threads when the machine has more than one core."""
    global _band_pool
    if count == 1 or (os.cpu_count() or 1) == 1:
        return [work(i) for i in range(count)]
    with _BAND_POOL_LOCK:
        if _band_pool is None:
            from concurrent.futures import ThreadPoolExecutor

            _band_pool = ThreadPoolExecutor(IMAGE_BANDS, thread_name_prefix="image-band")
    bands = [_band_pool.submit(work, i) for i in range(count)]
    return [band.result() for band in bands]


def _encode(img) -> tuple[bytes, str]:
    """PNG keeps transparency and line art exact; JPEG keeps photos small. Fall back to JPEG
    when too big."""
    if img.format not in PHOTO_FORMATS:
        encoded = encode_png(img)
        if encoded is None or len(encoded) > MAX_IMAGE_BYTES:
            out = io.BytesIO()  # Pillow's filtered rows: slower, and smaller on photographs
            img.save(out, "PNG", compress_level=PNG_COMPRESS_LEVEL)
            encoded = out.getvalue()
        if len(encoded) <= MAX_IMAGE_BYTES:
            return encoded, "image/png"
    rgb = img if img.mode == "RGB" else img.convert("RGB")
    for quality in JPEG_QUALITIES:
        out = io.BytesIO()
        rgb.save(out, "JPEG", quality=quality)
        if out.tell() <= MAX_IMAGE_BYTES:
            break
    return out.getvalue(), "image/jpeg"


def encode_png(img) -> bytes | None:
    """A PNG of an 8-bit grey, grey+alpha, RGB or RGBA image with its rows unfiltered; None for
    other modes.

    Pillow's encoder tries every PNG row filter on every row, which costs as much as compressing: a
    screenshot takes far more CPU time there and comes out larger. Unfiltered rows compress as well
    wherever pixels repeat (screenshots, plots, text); photographs come out larger, and one too
    large for the size limit is encoded again by Pillow."""
    color_type = PNG_COLOR_TYPES.get(img.mode)
    if color_type is None:
        return None
    pixels = memoryview(img.tobytes())
    cuts = _band_cuts(img.height, img.width * img.height)
    stride = len(pixels) // img.height
    last = len(cuts) - 2

    def band(i: int) -> tuple[bytes, bytes]:
        # Each row preceded by its filter type, 0 (none).
        rows = b"".join([b"\0" + pixels[at:at + stride] for at in range(cuts[i] * stride, cuts[i + 1] * stride,
                                                                          stride)])
        return rows, _deflated(rows, i == last)

    return _png_file(img.width, img.height, color_type, _in_bands(band, last + 1))


def _deflated(rows: bytes, last: bool) -> bytes:
    """A band's rows as PNG stores them, deflated: raw deflate ending on a byte boundary (a sync
    flush), so the bands joined under one zlib header are one stream; the last one ends it."""
    deflate = zlib_ng.compressobj(PNG_COMPRESS_LEVEL, zlib_ng.DEFLATED, -zlib_ng.MAX_WBITS)
    return deflate.compress(rows) + deflate.flush(zlib_ng.Z_FINISH if last else zlib_ng.Z_SYNC_FLUSH)


def _png_file(width: int, height: int, color_type: int, bands: list[tuple[bytes, bytes]]) -> bytes:
    """A PNG of 8-bit rows from its bands: each (its rows as PNG stores them, those deflated
    by _deflated)."""
    checksum = 1  # the zlib stream ends with the Adler-32 of all the rows
    for rows, _ in bands:
        checksum = zlib_ng.adler32(rows, checksum)
    idat = b"".join([ZLIB_HEADER, *(deflated for _, deflated in bands), struct.pack(">I", checksum)])
    header = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return b"".join((b"\x89PNG\r\n\x1a\n", _png_chunk(b"IHDR", header), _png_chunk(b"IDAT", idat),
                     _png_chunk(b"IEND", b"")))


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    checksum = zlib_ng.crc32(body, zlib_ng.crc32(kind))
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", checksum)


def image_part(data: bytes) -> tuple[ImagePart, str | None]:
    """Encoded image bytes → an image part the model can take, and a note on anything done to it."""
    try:
        return _image_part(data)
    except (ReadError, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - Pillow's decoders fail in many ways on damaged files
        raise ReadError("image_undecodable", f"the image could not be decoded ({_reason(exc)}); it may be "
                        "damaged or in a variant Pillow cannot read") from None


def _image_part(data: bytes) -> tuple[ImagePart, str | None]:
    size, damage = check_png(data) if len(data) <= MAX_IMAGE_BYTES else (None, None)
    if size:
        # Most images read (plots in notebooks, screenshots) are such PNGs: proven whole without
        # Pillow, whose import and decode cost more than the read, and sent as they are.
        return ImagePart("image/png", pybase64.b64encode_as_string(data), *size), None
    return _decoded_part(data, damage)


def check_png(data: bytes) -> tuple[tuple[int, int] | None, str | None]:
    """(size, None) for a PNG of at most MAX_IMAGE_SIDE proven whole: every chunk's checksum right,
    its pixel data inflating to exactly the rows its header declares, each row with a valid filter,
    and nothing Pillow would read further. Its other chunks are not parsed: readers skip a malformed
    one that they need not understand. (None, note) when it is whole but a reader would refuse it or
    show less than it holds, and Pillow would not notice: pixel data that ends before the last row,
    a malformed palette, a chunk readers must understand and do not; it is then sent as Pillow
    decodes it. (None, None) for anything else, left to Pillow to decode, repair or refuse: damage
    it finds itself, interlaced rows, the chunks above."""
    if not data.startswith(b"\x89PNG\r\n\x1a\n") or len(data) < 33 \
            or max(struct.unpack_from(">II", data, 16)) > MAX_IMAGE_SIDE:
        return None, None  # a larger one is decoded to be downscaled anyway
    png = _png_layout(data)
    if png is None:
        return None, None
    if png.refused:
        return None, f"re-encoded: it holds chunks PNG readers must understand and do not ({', '.join(png.refused)})"
    # Whole RGB entries, at least one, at most what a palette image's bit depth can index.
    most = 3 * (1 << png.depth if png.color == 3 and png.depth < 8 else 256)
    if len(png.palettes) > 1 or any(not length or length % 3 or length > most for length in png.palettes):
        return None, "re-encoded: its palette chunk is malformed"
    try:
        whole = _rows_whole(png)
    except _PngEndsEarly:
        return None, PNG_ENDS_EARLY
    return ((png.width, png.height), None) if whole else (None, None)


class _Png(NamedTuple):
    width: int
    height: int
    depth: int
    color: int
    idat: list[bytes]  # the pixel data's pieces, one per IDAT chunk
    chunks: list[bytes]  # every chunk's type, in order
    palettes: list[int]  # the length of each PLTE chunk
    refused: list[str]  # chunks a reader must understand and does not

    @property
    def stride(self) -> int:
        return 1 + (self.width * self.depth * PNG_CHANNELS[self.color] + 7) // 8  # a filter byte, then pixels


class _PngEndsEarly(Exception):
    """The pixel data ends, whole, before the last row."""


class _PngBroken(Exception):
    """The pixel data is not what the header declares."""


def _png_layout(data: bytes) -> _Png | None:
    """The chunks of a non-interlaced PNG whose every checksum is right and that holds nothing
    Pillow reads further (see check_png); None for anything else."""
    if not data.startswith(b"\x89PNG\r\n\x1a\n") or data[12:16] != b"IHDR" or len(data) < 33:
        return None
    width, height, depth, color, *methods = struct.unpack_from(">IIBBBBB", data, 16)
    if width < 1 or height < 1 or methods != [0, 0, 0] or depth not in PNG_DEPTHS.get(color, ()):
        return None
    pos, chunks, idat, palettes = 8, [], [], []
    while pos + 12 <= len(data) and chunks[-1:] != [b"IEND"] and len(chunks) < MAX_PNG_CHUNKS:
        length, kind = struct.unpack_from(">I4s", data, pos)
        end = pos + 8 + length
        if end + 4 > len(data) or not kind.isalpha() or kind in PNG_CHUNKS_FOR_PILLOW \
                or zlib_ng.crc32(data[pos + 4:end]) != struct.unpack_from(">I", data, end)[0] \
                or (kind == b"IHDR" and (chunks or length != 13)) \
                or (kind == b"tEXt" and data.startswith(PNG_TEXT_FOR_PILLOW, pos + 8)) \
                or (kind == b"IDAT" and idat and chunks[-1] != b"IDAT"):  # pixel data comes in one run
            return None
        if kind == b"IDAT":
            idat.append(data[pos + 8:end])
        elif kind == b"PLTE":
            palettes.append(length)
        chunks.append(kind)
        pos = end + 4
    if pos != len(data) or chunks[-1:] != [b"IEND"] or not idat \
            or (color == 3 and b"PLTE" not in chunks[:chunks.index(b"IDAT")]):
        return None
    refused = sorted({k.decode("ascii") for k in chunks if k[:1].isupper() and k not in PNG_CRITICAL_CHUNKS})
    return _Png(width, height, depth, color, idat, chunks, palettes, refused)


def _rows_whole(png: _Png) -> bool:
    """Whether the PNG's pixel data inflates to exactly the rows its header declares, each
    of a filter type the standard defines. Raises _PngEndsEarly where it ends, whole, before
    the last row."""
    try:
        return all(max(rows[::png.stride]) <= 4 for rows in _png_rows(png))
    except (_PngBroken, zlib_ng.error):
        return False


def _ends_early(png: _Png) -> bool:
    """Whether the PNG's pixel data ends, whole, before its last row."""
    try:
        _rows_whole(png)
    except _PngEndsEarly:
        return True
    return False


def _png_rows(png: _Png) -> Iterator[bytes]:
    """The PNG's rows still filtered, inflated a piece of rows at a time (so that a hostile PNG's
    rows never sit whole in memory). Raises _PngEndsEarly or _PngBroken (or zlib's error) where its
    pixel data is not exactly them."""
    row = png.stride
    rows_at_once = max(1, PNG_INFLATE_PIECE_BYTES // row)
    inflate, stream, fed = zlib_ng.decompressobj(), memoryview(b"".join(png.idat)), 0
    # The compressed data is fed a piece at a time too: zlib copies what a call leaves unconsumed,
    # which would make a copy of the whole stream per piece of rows. `tail` is what was fed and not
    # yet inflated.
    tail = b""
    for first in range(0, png.height, rows_at_once):
        want, parts, got = min(rows_at_once, png.height - first) * row, [], 0
        while got < want and not inflate.eof and (tail or fed < len(stream)):
            if not tail:
                tail, fed = stream[fed:fed + PNG_INFLATE_PIECE_BYTES], fed + PNG_INFLATE_PIECE_BYTES
            parts.append(inflate.decompress(tail, want - got))
            got += len(parts[-1])
            tail = inflate.unconsumed_tail
        if got != want:
            raise _PngEndsEarly if inflate.eof and not inflate.unused_data and fed >= len(stream) else _PngBroken
        yield b"".join(parts)  # one part, most often: joined without a copy
    if inflate.decompress(bytes(tail) + stream[fed:], 1) or not inflate.eof or inflate.unused_data:
        raise _PngBroken


def _decoded_part(data: bytes, damage: str | None = None) -> tuple[ImagePart, str | None]:
    """Decoded by Pillow; `damage` is what is known wrong with the file that Pillow
    does not notice."""
    img = _open(data)
    fmt, size = img.format, img.size
    if fmt == "WMF":  # EMF too: Pillow reads a metafile's size anywhere, but draws one only on Windows
        try:
            img.load()
        except OSError:
            kind = "EMF" if data[40:44] == b" EMF" else "WMF"
            raise ReadError("image_undecodable", f"it is a Windows metafile ({kind}, {size[0]}x{size[1]}), which "
                            "Pillow draws only on Windows; ask the user for a PNG export to see it") from None
    frames = getattr(img, "n_frames", 1)
    # A camera photo stored sideways with an EXIF orientation tag must reach the model upright.
    # (Pillow decodes a whole PNG to look for one: a PNG whose chunks were walked holds none.)
    png = _png_layout(data) if fmt == "PNG" else None
    rotated = png is None and _orientation(img) not in (None, 1)
    # Pixel data that ends before the last row Pillow decodes without a word, the missing rows
    # blank: a PNG too large to send is checked for it as check_png checks the others, at the cost
    # of inflating its pixel data once more.
    if png and max(size) > MAX_IMAGE_SIDE and _ends_early(png):
        damage = PNG_ENDS_EARLY
    if fmt in PASSTHROUGH_FORMATS and max(size) <= MAX_IMAGE_SIDE and len(data) <= MAX_IMAGE_BYTES \
            and not rotated:
        # Still decode once: a truncated or broken file must not reach the model as if
        # it were whole.
        loaded, note = _load(img, data)
        if note is None and damage is None:
            return ImagePart(PASSTHROUGH_FORMATS[fmt], pybase64.b64encode_as_string(data), *size), None
        img = loaded
    else:
        if fmt == "JPEG":
            # The decoder scales by 1/2, 1/4 or 1/8 while decoding, several times faster than
            # resizing after. Accepting DRAFT_FLOOR of the target lets it pick the deeper cut: a
            # photo may arrive a little under MAX_IMAGE_SIDE (7200 px → 1800, not 3600 → 2000),
            # still more than models look at.
            width, height = _fit(*size)
            img.draft("RGB", (max(1, int(width * DRAFT_FLOOR)), max(1, int(height * DRAFT_FLOOR))))
        img, note = _load(img, data)
    notes = [note or damage] if note or damage else []
    if frames > 1:
        notes.append(f"first of {frames} frames shown")
    if img.mode not in ("RGB", "RGBA", "L", "LA", "P", "1"):
        img = img.convert("RGBA" if "A" in img.mode else "RGB")
    img = _downscale(img)  # before turning upright: the turn then moves the small image, not the large one
    if rotated:
        from PIL import ImageOps

        img = ImageOps.exif_transpose(img)
        notes.append("turned upright as its EXIF orientation says")
        if _orientation_swaps(size, img.size):
            size = size[1], size[0]
    if img.size not in (size, (size[1], size[0])):
        notes.append(_smaller(size))
    img.format = fmt
    encoded, mime = _encode(img)
    part = ImagePart(mime, pybase64.b64encode_as_string(encoded), img.width, img.height)
    return part, "; ".join(notes) or None


def _smaller(size: tuple[int, int]) -> str:
    return f"downscaled from {size[0]}x{size[1]}"


def read(source: Source, request: ReadRequest) -> ReadResult:
    """The reader seam's image reader."""
    return read_image(source.whole(), request, source.path, source.description)


def read_image(data: bytes, request: ReadRequest, path: str, detected: str) -> ReadResult:
    part, note = image_part(data)
    summary = f"Image {detected}, {len(data):,} bytes, sent as {part.mime_type} {part.width}x{part.height}"
    if note:
        summary += f" ({note})"
    return ReadResult(kind="image", path=path, content=[TextPart(summary + "."), part])
