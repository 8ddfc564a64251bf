"""nbformat's validator on the part of a notebook a read shows, its findings in words a
model can act on.

Called only for a notebook the reader found off nbformat 4's layout (model.py), on the notebook's
top level and on each cell shown: "cell 4 (id=ab12): outputs[1] is missing 'output_type'". One
problem is named per place.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from agentread.readers.notebook.clean import clean_output
from agentread.readers.notebook.model import Notebook, Payload

# A problem is told in at most this many characters: a value it quotes is cut, never the
# cell it names.
MAX_PROBLEM_CHARS = 200

# The kinds of cell nbformat 4 defines, each checked against its own definition ("code_cell"...),
# and the path of the one cell of the notebook a cell is checked in.
_CELL_KINDS = ("code", "markdown", "raw")
_IN_THE_CELL = ["cells", 0]
_JSON_TYPES = ((bool, "a boolean"), (int, "an integer"), (float, "a number"), (str, "a string"),
               (list, "an array"), (dict, "an object"), (type(None), "null"))
_SCHEMA_TYPES = {"boolean": "a boolean", "integer": "an integer", "number": "a number", "string": "a string",
                 "array": "an array", "object": "an object", "null": "null"}


def schema_problems(nb: Notebook, positions: Iterable[int]) -> list[str]:
    """What breaks nbformat's schema at the top of `nb` and in its cells at `positions` (0-based),
    one line each."""
    from nbformat.validator import iter_validate

    def check(instance: Any, ref: str | None = None) -> list[tuple[list, Any]]:
        found = iter_validate(instance, ref=ref, version=4, version_minor=nb.minor)
        return _first_per_place([(list(error.relative_path), error) for error in found])

    problems: list[str] = []
    try:
        problems += [_told("the notebook", path, error, nb.minor) for path, error in check({**nb.top, "cells": []})]
    except Exception as exc:  # noqa: BLE001 - the validator meets whatever the file holds; the read goes on
        problems.append(f"the notebook: nbformat's validator could not check it ({type(exc).__name__})")
    for pos in positions:
        cell = nb.cells[pos]
        subject = f"cell {cell.index} (id={cell.id})"
        view = _schema_view(cell.raw)
        kind = view.get("cell_type", "") if isinstance(view, dict) else ""
        if not isinstance(kind, str):  # nbformat's validator fails on it (it adds "_cell" to the type to say more)
            problems.append(f"{subject}: cell_type should be a string, not {_json_type(kind)}")
            continue
        try:
            # Alone in an empty notebook, the cell is checked at once (the compiled schema); only a
            # cell that fails is checked again against its own kind's definition, which names all
            # its problems, not the first.
            found = check({"nbformat": 4, "nbformat_minor": nb.minor, "metadata": {}, "cells": [view]})
            if found and kind in _CELL_KINDS:
                found = [([*_IN_THE_CELL, *path], error) for path, error in check(view, f"{kind}_cell")] or found
            problems += [_told(subject, path[2:], error, nb.minor) for path, error in found]
        except Exception as exc:  # noqa: BLE001 - as above
            problems.append(f"{subject}: nbformat's validator could not check it ({type(exc).__name__})")
    return problems


def _first_per_place(found: list[tuple[list, Any]]) -> list[tuple[list, Any]]:
    """One error per place (a cell that is a string fails both "is an object" and "is one of the
    cell kinds")."""
    seen: set[tuple] = set()
    kept = []
    for path, error in found:
        if tuple(path) not in seen:
            seen.add(tuple(path))
            kept.append((path, error))
    return kept


def _schema_view(raw: Any) -> Any:
    """The cell as nbformat's validator reads it: an image payload left in the file's bytes stands
    as an empty string, which is what the schema asks of it (the payload's own check was made when
    it was set aside)."""
    if not isinstance(raw, dict):
        return raw
    view = dict(raw)
    if isinstance(raw.get("outputs"), list):
        view["outputs"] = [{**output, "data": _bundle_view(output["data"])}
                           if isinstance(output, dict) and isinstance(output.get("data"), dict) else output
                           for output in raw["outputs"]]
    if isinstance(raw.get("attachments"), dict):
        view["attachments"] = {name: _bundle_view(bundle) if isinstance(bundle, dict) else bundle
                               for name, bundle in raw["attachments"].items()}
    return view


def _bundle_view(bundle: dict) -> dict:
    return {mime: "" if isinstance(value, Payload) else value for mime, value in bundle.items()}


def _told(subject: str, path: list, error: Any, minor: int) -> str:
    """"cell 4 (id=ab12): outputs[1] is missing 'output_type'", from one of jsonschema's errors."""
    where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path).lstrip(".")
    predicate = _predicate(path, error, minor)
    if predicate:
        text = f"{subject}: {where} {predicate}" if where else f"{subject} {predicate}"
    else:
        text = f"{subject}: {where + ': ' if where else ''}{error.message}"
    text = clean_output(text).replace("\n", " ")
    return text if len(text) <= MAX_PROBLEM_CHARS else text[:MAX_PROBLEM_CHARS - 1] + "…"


def _predicate(path: list, error: Any, minor: int) -> str | None:
    """The error said as what is wrong with the place ("is missing 'id'"), or None to use
    jsonschema's message."""
    instance, value = error.instance, error.validator_value
    if error.validator == "required" and isinstance(instance, dict):
        return "is missing " + ", ".join(repr(name) for name in value if name not in instance)
    if error.validator == "type":
        expected = " or ".join(_SCHEMA_TYPES.get(name, name) for name in ([value] if isinstance(value, str) else value))
        return f"should be {expected}, not {_json_type(instance)}"
    if error.validator == "additionalProperties" and isinstance(instance, dict):
        known, patterns = error.schema.get("properties", {}), error.schema.get("patternProperties", {})
        extra = [key for key in instance if key not in known and not any(re.search(p, key) for p in patterns)]
        return f"has {', '.join(map(repr, extra))}, which nbformat 4.{minor} does not define"
    kind = "output_type" if len(path) >= 2 and path[-2] == "outputs" else "cell_type" if not path else None
    if error.validator == "oneOf" and kind and isinstance(instance, dict):
        return f"has unknown {kind} {_quoted(instance[kind])}" if kind in instance else f"is missing {kind!r}"
    return None


def _quoted(value: Any) -> str:
    """A value as the model reads it: a string in quotes as it is (escape codes are removed
    with the rest)."""
    return f"'{value}'" if isinstance(value, str) else repr(value)


def _json_type(value: Any) -> str:
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), type(value).__name__)
