"""An interactive widget output named with what it holds: its model, and the state the notebook
saved for it (Jupyter keeps every widget's last state in the notebook's metadata, under
`widgets`)."""

from __future__ import annotations

import json
from typing import Any

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
_STATE_MIME = "application/vnd.jupyter.widget-state+json"

# The parts of a widget's state that say what it shows: its label, its value, its choices, and how
# many widgets or outputs it holds; the rest (layout, style, flags) is presentation.
_SHOWN_FIELDS = {"description": "description", "value": "value", "_options_labels": "options"}
_COUNTED_FIELDS = {"children": "child widget", "outputs": "output"}
# A field's value shown this long at most (a long text value, a list of choices).
MAX_FIELD_CHARS = 80
# A container's children described (each by its model, description and value), one level down: a
# progress bar is a box of three; a dashboard of many is counted past these.
MAX_CHILDREN_LISTED = 10
# How a container names a child: its model id after this prefix.
_MODEL_REFERENCE = "IPY_MODEL_"


def widget_states(metadata: Any) -> dict[str, Any]:
    """Model id → saved state entry ({model_name, state, …}), from the notebook's metadata: under
    `state` as Jupyter saves them, or directly under the mime type as Colab does."""
    widgets = metadata.get("widgets") if isinstance(metadata, dict) else None
    saved = widgets.get(_STATE_MIME) if isinstance(widgets, dict) else None
    if not isinstance(saved, dict):
        return {}
    return saved["state"] if isinstance(saved.get("state"), dict) else saved


def describe(view: Any, states: dict[str, Any]) -> str:
    """"IntSliderModel, model 900a…: description "Test:", value 7", or what is known of it."""
    model = view.get("model_id") if isinstance(view, dict) else None
    if not isinstance(model, str):
        return "no model id"
    entry = states.get(model)
    if not isinstance(entry, dict):
        return f"model {model}, its state not saved in the notebook"
    fields = _fields(entry, states)
    return f"{_name(entry)}, model {model}" + (f": {', '.join(fields)}" if fields else "")


def _name(entry: dict) -> str:
    return entry["model_name"] if isinstance(entry.get("model_name"), str) else "widget"


def _fields(entry: dict, states: dict[str, Any] | None) -> list[str]:
    """What a widget shows (its label, value, choices), then how many widgets and outputs it holds;
    with `states`, its children too, each by what it shows (one level down: theirs are counted)."""
    state = entry["state"] if isinstance(entry.get("state"), dict) else {}
    fields = [f"{word} {_shown(state[key])}" for key, word in _SHOWN_FIELDS.items()
              if key in state and state[key] not in ("", None, [])]
    for key, word in _COUNTED_FIELDS.items():
        items = state.get(key)
        if not isinstance(items, list):
            continue
        fields.append(f"{len(items)} {word}{'s' if len(items) != 1 else ''}")
        if key == "children" and items and states is not None:
            listed = [_child(child, states) for child in items[:MAX_CHILDREN_LISTED]]
            fields[-1] += f" ({'; '.join(listed)}{', …' if len(items) > MAX_CHILDREN_LISTED else ''})"
    return fields


def _child(reference: Any, states: dict[str, Any]) -> str:
    """A container's child, "IPY_MODEL_<id>", by its model and what it shows."""
    model = reference.removeprefix(_MODEL_REFERENCE) if isinstance(reference, str) else None
    entry = states.get(model) if model else None
    if not isinstance(entry, dict):
        return "a widget whose state is not saved"
    fields = _fields(entry, None)
    return _name(entry) + (f" {', '.join(fields)}" if fields else "")


def _shown(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except RecursionError:  # a value nested past Python's limit: the raw read shows it
        return "[…]"
    return text if len(text) <= MAX_FIELD_CHARS else text[:MAX_FIELD_CHARS] + "…"
