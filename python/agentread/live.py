"""What the user sees in the editor: an open notebook's cells (synced over LSP) and the outputs the
extension sends for cells run since the last save (LSP does not sync outputs), merged into one
nbformat v4 notebook (an nbformat NotebookNode; a saved file of an older version is upgraded by
nbformat to match its outputs)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agentread.result import ReadError


@dataclass(frozen=True)
class LiveCell:
    kind: str  # code | markdown
    source: str
    language: str | None = None
    execution_count: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    outputs: list[dict[str, Any]] | None = None  # None: the editor sent none; keep the saved ones


@dataclass(frozen=True)
class LiveNotebook:
    cells: tuple[LiveCell, ...]
    changed_at: float  # wall-clock time of the last edit the server saw (seconds since the epoch)
    outputs_from_editor: bool  # the extension supplied outputs for this version


def merge(disk: dict[str, Any] | None, live: LiveNotebook) -> Any:
    """The saved notebook's metadata and outputs under the editor's cells, as an nbformat v4
    NotebookNode. Saved outputs are matched to live cells by cell id, else by position when the
    cell's source is unchanged."""
    import nbformat

    from agentread.readers.notebook.model import IDS_FROM_MINOR

    stored = (disk or {}).get("cells")
    saved_cells = [c for c in stored if isinstance(c, dict)] if isinstance(stored, list) else []
    by_id = {c.get("id"): c for c in saved_cells if isinstance(c.get("id"), str)}
    cells = []
    for index, cell in enumerate(live.cells):
        cell_id = cell.metadata.get("id") if isinstance(cell.metadata.get("id"), str) else None
        saved = by_id.get(cell_id) if cell_id else None
        if saved is None and index < len(saved_cells) and _source(saved_cells[index]) == cell.source:
            saved = saved_cells[index]
        # Built as a dict and made a node by from_dict, not by new_code_cell and the like: those
        # check every cell against the schema as it is made, a cost on every cell of every read, and
        # draw an id for a cell that has none, where the reader derives one that stays the same from
        # read to read.
        entry: dict[str, Any] = {"cell_type": cell.kind, "source": cell.source,
                                 "metadata": cell.metadata.get("metadata", {}) if isinstance(
                                     cell.metadata.get("metadata"), dict) else {}}
        if cell_id:
            entry["id"] = cell_id
        elif saved is not None and isinstance(saved.get("id"), str):
            entry["id"] = saved["id"]
        if cell.kind == "code":
            if cell.outputs is not None:
                entry["outputs"] = cell.outputs
            else:
                entry["outputs"] = saved.get("outputs", []) if saved is not None else []
            entry["execution_count"] = (cell.execution_count if cell.execution_count is not None
                                        else (saved or {}).get("execution_count"))
        if saved is not None and "attachments" in saved:
            entry["attachments"] = saved["attachments"]
        cells.append(entry)
    metadata = dict((disk or {}).get("metadata", {})) if isinstance((disk or {}).get("metadata"), dict) else {}
    language = next((c.language for c in live.cells if c.kind == "code" and c.language), None)
    if language and "language_info" not in metadata:
        metadata["language_info"] = {"name": language}
    # Cell ids came with nbformat 4.5: without any, the editor shows an older notebook (the reader
    # derives ids).
    minor = nbformat.v4.nbformat_minor if any("id" in entry for entry in cells) else IDS_FROM_MINOR - 1
    return nbformat.from_dict({"nbformat": nbformat.v4.nbformat, "nbformat_minor": minor, "metadata": metadata,
                               "cells": cells})


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def saved_notebook(disk_bytes: bytes | None) -> dict[str, Any] | None:
    """The notebook saved on disk as nbformat 4 (an older version upgraded by nbformat, without the
    ids its upgrade draws), or None when it cannot be read: the editor's cells then stand alone."""
    from agentread.readers.notebook.model import upgrade  # the notebook reader, loaded only when a notebook is read

    try:
        disk = json.loads(disk_bytes) if disk_bytes else None
    except ValueError:
        return None
    if not isinstance(disk, dict):
        return None
    major = disk.get("nbformat")
    if major == 4 or type(major) is not int or not 1 <= major < 4:
        return disk if major == 4 else None
    try:
        disk = upgrade(disk, major, [])
    except ReadError:
        return None
    for cell in disk.cells:
        cell.pop("id", None)
    return disk


def live_notebook_bytes(disk_bytes: bytes | None, live: LiveNotebook) -> bytes:
    return json.dumps(merge(saved_notebook(disk_bytes), live)).encode("utf-8")
