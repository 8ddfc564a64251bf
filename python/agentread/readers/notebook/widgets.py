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


def widget_states(metadata: Any) -> dict[str, Any]:
    """Model id → saved state entry ({model_name, state, …}), from the notebook's metadata."""
    widgets = metadata.get("widgets") if isinstance(metadata, dict) else None
    saved = widgets.get(_STATE_MIME) if isinstance(widgets, dict) else None
    states = saved.get("state") if isinstance(saved, dict) else None
    return states if isinstance(states, dict) else {}


def describe(view: Any, states: dict[str, Any]) -> str:
    """"IntSliderModel, model 900a…: description "Test:", value 7", or what is known of it."""
    model = view.get("model_id") if isinstance(view, dict) else None
    if not isinstance(model, str):
        return "no model id"
    entry = states.get(model)
    if not isinstance(entry, dict):
        return f"model {model}, its state not saved in the notebook"
    name = entry.get("model_name")
    state = entry.get("state") if isinstance(entry.get("state"), dict) else {}
    fields = [f"{word} {_shown(state[key])}" for key, word in _SHOWN_FIELDS.items()
              if key in state and state[key] not in ("", None, [])]
    fields += [f"{len(state[key])} {word}{'s' if len(state[key]) != 1 else ''}"
               for key, word in _COUNTED_FIELDS.items() if isinstance(state.get(key), list)]
    text = f"{name if isinstance(name, str) else 'widget'}, model {model}"
    return text + (f": {', '.join(fields)}" if fields else "")


def _shown(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except RecursionError:  # a value nested past Python's limit: the raw read shows it
        return "[…]"
    return text if len(text) <= MAX_FIELD_CHARS else text[:MAX_FIELD_CHARS] + "…"
