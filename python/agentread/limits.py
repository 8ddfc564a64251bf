"""Every number that shapes what the model receives, with the reason for it."""

# A window of text per call. 2000 lines is what agents are used to from `cat -n`-style read tools,
# and what a model can take in one go without crowding its context.
MAX_LINES = 2000

# About 50 KB of rendered text per call: roughly 12-15k tokens, a large but affordable share
# of a context.
MAX_OUTPUT_BYTES = 50_000

# The smallest reply a caller may ask for (`maxBytes`): less cannot hold a window's closing line and
# a useful part of a file; a smaller value is raised to it.
MIN_REPLY_BYTES = 2_000

# Of a reply limit the caller sets (`maxBytes`), the part kept for the lines that frame a window
# (a header, the closing line with the call that continues), which readers add on top of their
# text budget.
REPLY_FRAME_BYTES = 600

# A single line longer than this is cut with a marker: minified files and hex dumps would otherwise
# spend the whole budget on one line the model cannot use.
MAX_LINE_CHARS = 2000

# At most this many PDF pages are extracted per call; longer ranges continue through `next`.
MAX_PDF_PAGES = 20

# Images are downscaled to this many pixels on the long side: the largest size model providers
# accept without rescaling themselves.
MAX_IMAGE_SIDE = 2000

# Encoded image parts above this size are re-encoded smaller: providers reject images
# over about 5 MB.
MAX_IMAGE_BYTES = 5 * 1024 * 1024

# Images that would decode to more pixels than this are refused as decompression bombs (about
# 400 MB RGBA).
MAX_IMAGE_PIXELS = 100_000_000

# Images one reply attaches, and their encoded bytes in all: a plot costs a model roughly 1-2k
# tokens, so ten cost about what MAX_OUTPUT_BYTES of text does, and the bytes keep a reply well
# under the request size providers accept even when every image is near MAX_IMAGE_BYTES.
MAX_REPLY_IMAGES = 10
MAX_REPLY_IMAGE_BYTES = 10 << 20

# Directory listings show at most this many entries; the rest are counted, not listed.
MAX_DIR_ENTRIES = 500

# Bytes looked at to decide what a file is: enough for every magic number filetype knows and for a
# fair text/binary and encoding guess, small enough to cost nothing.
SNIFF_BYTES = 65536

# A message too large for a server is skipped this many bytes at a time, never held whole.
MESSAGE_SKIP_BYTES = 1 << 20
