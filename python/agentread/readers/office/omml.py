"""Office Math (OMML, the `m:oMath` elements of a Word document) as LaTeX, the notation a model
reads and writes best: `$\\frac{a}{b}$` inline, `$$…$$` for a display equation.

The OMML to LaTeX converter on PyPI (dwml) is no longer maintained, and OMML is a small tree of a
few dozen structures: the elements python-docx parsed are walked here with lxml. Each structure
below maps to its LaTeX form; any other element gives its children's text, so nothing is dropped."""

from __future__ import annotations

M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"

# Nesting walked before an equation's deeper structures are given as their text alone: real
# equations nest a few levels; a hostile file nested thousands deep must not exhaust the stack.
MAX_DEPTH = 60

# Large operators (m:nary's m:chr; the integral when absent) and accents (m:acc's m:chr, a
# combining mark; the hat when absent) with their LaTeX names.
_NARY = {"∑": "\\sum", "∏": "\\prod", "∐": "\\coprod", "∫": "\\int", "∬": "\\iint", "∭": "\\iiint",
         "∮": "\\oint", "⋃": "\\bigcup", "⋂": "\\bigcap", "⋁": "\\bigvee", "⋀": "\\bigwedge"}
_ACCENTS = {"\u0302": "\\hat", "\u0303": "\\tilde", "\u0307": "\\dot", "\u0308": "\\ddot", "\u20d7": "\\vec",
            "\u0304": "\\bar", "\u0305": "\\overline", "\u0306": "\\breve", "\u030c": "\\check",
            "\u0301": "\\acute", "\u0300": "\\grave"}
_INVISIBLE = {0x2061: " ", 0x2062: None, 0x2063: None, 0x2064: None}
_FUNCTIONS = {"sin", "cos", "tan", "cot", "sec", "csc", "sinh", "cosh", "tanh", "log", "ln", "exp", "lim",
              "max", "min", "sup", "inf", "det", "arg", "deg", "gcd", "arcsin", "arccos", "arctan"}


def equation(math) -> str:
    """An `m:oMath` or `m:oMathPara` element as delimited LaTeX: display equations on a line of
    their own (the caller's paragraph keeps the line breaks)."""
    if math.tag == M + "oMathPara":
        return "".join(f"\n$${_latex(m, 0)}$$\n" for m in math.iter(M + "oMath"))
    return f"${_latex(math, 0)}$"


def _prop(el, prop: str, name: str, default: str) -> str:
    """An attribute `m:val` of the structure's properties element (e.g. m:dPr/m:begChr)."""
    value = el.find(f"{M}{prop}/{M}{name}")
    return default if value is None else value.get(M + "val", default)


def _part(el, name: str, depth: int) -> str:
    child = el.find(M + name)
    return "" if child is None else _latex(child, depth + 1)


def _group(text: str) -> str:
    """A base a script attaches to, braced unless it is one character."""
    return text if len(text) == 1 else "{" + text + "}"


# Structures written as a base with scripts: each script's LaTeX mark and the child that holds it.
_SCRIPTS = {M + "sSup": (("^", "sup"),), M + "sSub": (("_", "sub"),), M + "sSubSup": (("_", "sub"), ("^", "sup")),
            M + "limLow": (("_", "lim"),), M + "limUpp": (("^", "lim"),)}


def _latex(el, depth: int) -> str:
    if depth > MAX_DEPTH:
        return "".join(t.text or "" for t in el.iter(M + "t"))
    tag = el.tag
    part = lambda name: _part(el, name, depth)  # noqa: E731 - the children by name, converted
    if tag == M + "t":
        # Word writes a function's name and argument with an invisible "function application"
        # between them (sin\u2061θ): a space reads the same.
        return (el.text or "").translate(_INVISIBLE)
    if tag == M + "f":
        return f"\\frac{{{part('num')}}}{{{part('den')}}}"
    if tag in _SCRIPTS:
        return _group(part("e")) + "".join(f"{mark}{{{part(name)}}}" for mark, name in _SCRIPTS[tag])
    if tag == M + "sPre":
        return f"{{}}_{{{part('sub')}}}^{{{part('sup')}}}{part('e')}"
    if tag == M + "rad":
        degree = part("deg")
        return f"\\sqrt{'[' + degree + ']' if degree else ''}{{{part('e')}}}"
    if tag == M + "d":
        inner = _prop(el, "dPr", "sepChr", "|").join(_latex(e, depth + 1) for e in el.iterchildren(M + "e"))
        return f"{_prop(el, 'dPr', 'begChr', '(')}{inner}{_prop(el, 'dPr', 'endChr', ')')}"
    if tag == M + "nary":
        sign = _prop(el, "naryPr", "chr", "∫")
        sub, sup = part("sub"), part("sup")
        return (_NARY.get(sign, sign) + (f"_{{{sub}}}" if sub else "") + (f"^{{{sup}}}" if sup else "")
                + f" {part('e')}")
    if tag == M + "func":
        name = part("fName")
        return ("\\" + name if name in _FUNCTIONS else name) + " " + part("e")
    if tag == M + "acc":
        mark = _prop(el, "accPr", "chr", "\u0302")
        return f"{_ACCENTS[mark]}{{{part('e')}}}" if mark in _ACCENTS else part("e") + mark
    if tag == M + "bar":
        return f"\\{'underline' if _prop(el, 'barPr', 'pos', 'bot') == 'bot' else 'overline'}{{{part('e')}}}"
    if tag == M + "eqArr":
        return "\\begin{aligned}" + " \\\\ ".join(_latex(e, depth + 1) for e in el.iterchildren(M + "e")) \
            + "\\end{aligned}"
    if tag == M + "m":
        rows = (" & ".join(_latex(e, depth + 1) for e in mr.iterchildren(M + "e")) for mr in el.iterchildren(M + "mr"))
        return "\\begin{matrix}" + " \\\\ ".join(rows) + "\\end{matrix}"
    # Runs, arguments (m:e, m:num ...), boxes, phantoms and what is not known: their children, in
    # order, without the properties elements (m:rPr, m:fPr, m:ctrlPr ...).
    return "".join(_latex(child, depth + 1) for child in el
                   if isinstance(child.tag, str) and not child.tag.endswith("Pr"))
