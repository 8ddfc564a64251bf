"""SmartArt's text as nested list lines, from its diagram data part (`dgm:dataModel`): the model
Word and PowerPoint edit. The drawing part beside it is only a picture of that model, cached by
the application that saved the file and absent from files other tools write.

The model is a list of points (`dgm:pt`) and the connections between them (`dgm:cxn`): the root
point (type `doc`) is the parent of the top items, each connection of the default type (`parOf`)
makes its source the parent of its destination, in the order `srcOrd` gives. Points of the
transition and presentation types carry the layout's shapes, not the user's text.
"""

from __future__ import annotations

DGM = "{http://schemas.openxmlformats.org/drawingml/2006/diagram}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"

# Point types that hold text the user typed: items (the default) and assistants.
TEXT_POINTS = {"node", "asst"}


def smartart_lines(model) -> list[str]:
    """The items of a `dgm:dataModel` element, one line each, `- ` marked and indented two spaces
    a level, in the order the diagram shows them; items without text are left out."""
    points = {}
    order = []
    root = None
    for pt in model.iter(DGM + "pt"):
        kind = pt.get("type", "node")
        if kind == "doc" and root is None:
            root = pt.get("modelId")
        elif kind in TEXT_POINTS:
            points[pt.get("modelId")] = _text(pt)
            order.append(pt.get("modelId"))
    children: dict[str, list[tuple[int, str]]] = {}
    for cxn in model.iter(DGM + "cxn"):
        if cxn.get("type", "parOf") == "parOf" and cxn.get("destId") in points:
            order_key = cxn.get("srcOrd", "0")
            children.setdefault(cxn.get("srcId"), []).append(
                (int(order_key) if order_key.isdigit() else 0, cxn.get("destId")))
    lines: list[str] = []
    seen: set[str] = set()
    # Depth first from the root, with a stack (a damaged model may nest as deep as it has points).
    stack = [(point, 0) for _, point in sorted(children.get(root, []), reverse=True)]
    while stack:
        point, depth = stack.pop()
        if point in seen:
            continue
        seen.add(point)
        if points[point]:
            lines.append("  " * depth + "- " + points[point])
        stack += [(child, depth + 1) for _, child in sorted(children.get(point, []), reverse=True)]
    # Items no connection reaches from the root (a model without its connections) follow, flat.
    lines += ["- " + points[p] for p in order if p not in seen and points[p]]
    return lines


def _text(pt) -> str:
    """A point's text: its paragraphs joined by a space."""
    body = pt.find(DGM + "t")
    if body is None:
        return ""
    paragraphs = ("".join(t.text or "" for t in p.iter(A + "t")).strip() for p in body.iter(A + "p"))
    return " ".join(p for p in paragraphs if p)
