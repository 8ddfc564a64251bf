"""What the user sees in the editor: an open notebook's cells (synced over LSP) and the outputs the extension
sends for cells run since the last save (LSP does not sync outputs), merged into one nbformat v4 notebook."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


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


def merge(disk: dict[str, Any] | None, live: LiveNotebook) -> dict[str, Any]:
    """The saved notebook's metadata and outputs under the editor's cells. Saved outputs are matched to live
    cells by cell id, else by position when the cell's source is unchanged."""
    saved_cells = [c for c in (disk or {}).get("cells", []) if isinstance(c, dict)]
    by_id = {c.get("id"): c for c in saved_cells if isinstance(c.get("id"), str)}
    cells = []
    for index, cell in enumerate(live.cells):
        cell_id = cell.metadata.get("id") if isinstance(cell.metadata.get("id"), str) else None
        saved = by_id.get(cell_id) if cell_id else None
        if saved is None and index < len(saved_cells):
            candidate = saved_cells[index]
            if _source(candidate) == cell.source:
                saved = candidate
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
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": metadata, "cells": cells}


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def live_notebook_bytes(disk_bytes: bytes | None, live: LiveNotebook) -> bytes:
    try:
        disk = json.loads(disk_bytes) if disk_bytes else None
    except ValueError:
        disk = None  # the saved file is broken; the editor's cells are still readable
    if disk is not None and not isinstance(disk, dict):
        disk = None
    if disk is not None and disk.get("nbformat") != 4:
        disk = None  # a v3 file on disk: its outputs cannot be matched, the editor's cells stand alone
    return json.dumps(merge(disk, live)).encode("utf-8")
