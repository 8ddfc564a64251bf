"""The `cells` grammar: which cells a request means, and how to write the cells that come next."""

from __future__ import annotations

import re

from agentread.numbering import amount, span
from agentread.readers.notebook.model import DERIVED_ID_PREFIX, Notebook
from agentread.result import ReadError

OUTLINE = "outline"
# Cell numbers: ASCII digits, at most 9 of them (no notebook has a billion cells; int()
# stays cheap).
_RANGE = re.compile(r"^([0-9]{1,9})?\s*-\s*([0-9]{1,9})?$")
_NUMBER = re.compile(r"^[0-9]{1,9}$")


def select_cells(nb: Notebook, spec: str | None) -> list[int]:
    """0-based positions of the cells `spec` names, in notebook order, each once.

    `spec` is a comma-separated list of items; an item is a cell id (exactly as in the headers),
    an index `4`, a range `2-7` or an open range `5-` (to the last cell). An item that is a cell
    id of this notebook means that id, even when it also looks like a number. None, "" and "all"
    mean every cell.
    """
    total = len(nb.cells)
    if spec is None or spec.strip().lower() in ("", "all"):
        return list(range(total))
    chosen: set[int] = set()
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            continue
        by_id = nb.ids.get(item) or nb.ids.get(DERIVED_ID_PREFIX + item)
        if by_id:
            chosen.update(by_id)
            continue
        first, last = _index_range(item, total)
        if total == 0 or first > total:
            raise ReadError("cell_not_found", f"cell {first} does not exist: the notebook has "
                            f"{_count(total)}; use cells=\"outline\" to list them")
        chosen.update(range(first - 1, min(last, total)))
    return sorted(chosen)


def _index_range(item: str, total: int) -> tuple[int, int]:
    if _NUMBER.match(item):
        first = last = int(item)
    else:
        match = _RANGE.match(item)
        if not match or not (match.group(1) or match.group(2)):
            raise ReadError("cell_not_found" if re.fullmatch(r"[\w~-]+", item) else "invalid_cells",
                            f"{item!r} is neither a cell id of this notebook nor a cell number or range; "
                            "cells takes \"4\", \"2-7\", \"1,4-6\", a cell id, or \"outline\" (lists every "
                            "cell with its id)")
        first = int(match.group(1) or 1)
        last = int(match.group(2)) if match.group(2) else max(total, first)
    if first < 1 or last < first:
        raise ReadError("invalid_cells", f"cell range {item!r} is empty; cells are numbered from 1, "
                        "like lines and pages")
    return first, last


def _count(total: int) -> str:
    return "no cells" if total == 0 else f"{amount(total, 'cell')} ({span(1, total)})"


def format_cells(nb: Notebook, positions: list[int]) -> str:
    """0-based positions (ascending) → the shortest `cells` value naming them: "13-40", "5-6,20"."""
    runs: list[list[int]] = []
    for pos in positions:
        if runs and pos == runs[-1][1]:
            runs[-1][1] = pos + 1
        else:
            runs.append([pos + 1, pos + 1])
    items = []
    for first, last in runs:
        # A lone number that is also some cell's id would be read as that id: write it as
        # a range then.
        lone = f"{first}-{first}" if str(first) in nb.ids else str(first)
        items.append(lone if first == last else f"{first}-{last}")
    return ",".join(items)
