"""Builds the engine's one compiled part, its loops over every byte of a file (counting line ends,
numbering a window's lines, finding where a notebook's image payload stops being plain JSON string
bytes) and over a PDF page's objects and its paths' segments through PDFium's own functions; none
of them parses a file format. Everything else is in pyproject.toml.

Optional: where no C compiler is found the package installs without it and does the same in Python,
several times slower (bench/README.md has the figures each function buys)."""

import os
import sysconfig

from setuptools import Extension, setup

# The stable ABI (abi3): one build serves every CPython from 3.10. Free-threaded builds have
# no stable ABI.
LIMITED_API = not sysconfig.get_config_var("Py_GIL_DISABLED")

setup(
    ext_modules=[Extension(
        "agentread._scan", ["python/agentread/_scan.c"],
        optional=True,
        extra_compile_args=[] if os.name == "nt" else ["-O3"],  # MSVC optimises already and rejects -O3
        define_macros=[("Py_LIMITED_API", "0x030A0000")] if LIMITED_API else [],
        py_limited_api=LIMITED_API,
    )],
    options={"bdist_wheel": {"py_limited_api": "cp310"}} if LIMITED_API else {},
)
