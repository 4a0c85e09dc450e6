"""Reads docstrings as the plain text they are written in.

The package's docstrings (the native ones from the nanobind bindings above all) are written for
``help()``: formulas such as ``|x|``, ``2*x`` or ``x_i`` and indented continuation lines would
be misread as reStructuredText markup (substitutions, emphasis, references, block quotes).
Before autodoc renders a docstring this extension escapes those characters outside literal spans
and makes indentation structural: an indented block after a line ending in ``:`` (``Example:``)
becomes a literal block, ``*``/``-`` items become a list, other indented blocks and ``>>>``
examples are set off by blank lines. Double-backtick literals, interpreted text and roles
(``:class:`x```), a docstring's own ``::`` literal blocks and explicit directives are kept.
"""

from __future__ import annotations

import re
from typing import List

# Spans kept verbatim: ``literal``, :role:`text`, `interpreted`.
_SPAN = re.compile(r"``.+?``|:[\w:.-]+:`[^`]+`|`[^`]+`", re.S)
_TRAILING_UNDERSCORE = re.compile(r"(?<=\w)_(?!\w)")


def _escape_text(text: str) -> str:
    text = text.replace("\\", "\\\\")
    text = text.replace("*", r"\*").replace("|", r"\|")
    text = _TRAILING_UNDERSCORE.sub(r"\\_", text)
    # A lone backtick (no closing one on the line) would open a literal that never ends.
    return text.replace("`", r"\`")


def escape_text(line: str) -> str:
    out, pos = [], 0
    for m in _SPAN.finditer(line):
        out.append(_escape_text(line[pos : m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_escape_text(line[pos:]))
    return "".join(out)


_BULLET = re.compile(r"^(\s*)([-*+]|\d+[.)]) +(?=\S)")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


_ESC = "\x00"  # marks a line of running text (escaped in paragraph runs at the end)


def plain_to_rst(lines: List[str]) -> List[str]:
    out = _structure(lines)
    result: List[str] = []
    run: List[str] = []

    def flush():
        if run:
            # A ``literal`` may continue on the next line: escape the paragraph as one text.
            result.extend(escape_text("\n".join(run)).split("\n"))
            run.clear()

    for line in out:
        if line.startswith(_ESC):
            run.append(line[1:])
        else:
            flush()
            result.append(line)
    flush()
    return result


def _structure(lines: List[str]) -> List[str]:
    out: List[str] = []
    literal_indent = None  # inside a literal block (after '::'): lines indented deeper than this
    keep_indent = None  # inside the body of an explicit directive
    list_indent = None  # inside a bullet list: the indentation of its markers
    pending_literal = None  # indentation of a line that ended in '::' (a literal block follows)
    prev = ""
    for raw in lines:
        line = raw.rstrip()
        blank = not line.strip()
        ind = _indent(line)
        if literal_indent is not None:
            if blank or ind > literal_indent:
                out.append(line)
                prev = line
                continue
            literal_indent = None
            if out and out[-1].strip():
                out.append("")
        if keep_indent is not None and not blank and ind <= keep_indent:
            keep_indent = None
        if pending_literal is not None and not blank:
            if ind > pending_literal:
                # The docstring's own literal block (after '::'): verbatim.
                literal_indent, pending_literal = pending_literal, None
                if out and out[-1].strip():
                    out.append("")
                out.append(line)
                prev = line
                continue
            pending_literal = None
        if blank:
            out.append("")
            prev = ""
            continue
        if list_indent is not None and prev == "" and ind <= list_indent and not _BULLET.match(line):
            list_indent = None
        stripped = line.strip()
        if stripped.startswith(">>>") or (stripped.startswith("...") and prev.strip().startswith((">>>", "..."))):
            if prev.strip() and not prev.strip().startswith((">>>", "...")):
                out.append("")
            out.append(line)
            prev = line
            continue
        if prev.strip().startswith((">>>", "...")) and not stripped.startswith((">>>", "...")):
            # Output of a doctest line is shown verbatim, as in the interpreter.
            if ind >= _indent(prev):
                out.append(line)
                prev = line
                continue
            out.append("")
        if keep_indent is None and stripped.startswith(".. "):
            # An explicit directive written in reST: kept as is, its body escaped like text.
            keep_indent = ind
            out.append(line)
            prev = line
            continue
        bullet = _BULLET.match(line)
        if bullet:
            if prev.strip() and list_indent is None:
                out.append("")
            list_indent = ind
            marker = "-" if bullet.group(2) in "*+" else bullet.group(2)
            out.append(_ESC + bullet.group(1) + marker + " " + line[bullet.end():])
            prev = line
            continue
        if list_indent is not None:
            if ind > list_indent:
                # A continuation line of the item: indented under its text.
                out.append(_ESC + " " * (list_indent + 2) + stripped)
                prev = line
                continue
            list_indent = None
            if out and out[-1].strip():
                out.append("")
            out.append(_ESC + line)
            prev = line
            continue
        if keep_indent is not None:
            out.append(_ESC + line)
            prev = line
            continue
        if prev.strip() and ind > _indent(prev):
            if prev.rstrip().endswith(":") and not prev.rstrip().endswith("::"):
                out[-1] = out[-1] + ":"
                out.append("")
                literal_indent = _indent(prev)
                out.append(line)
                prev = line
                continue
            out.append("")
        elif prev.strip() and ind < _indent(prev):
            out.append("")
        out.append(_ESC + line)
        if line.rstrip().endswith("::"):
            pending_literal = ind
        prev = line
    return out


def _process(app, what, name, obj, options, lines):
    lines[:] = plain_to_rst(list(lines))


def setup(app):
    # Before other handlers of the event (default priority 500).
    app.connect("autodoc-process-docstring", _process, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
