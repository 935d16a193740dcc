"""Griffe extension for the API reference: docstrings written for ``help()`` read well as Markdown.

* doctest examples (lines from ``>>>`` to the next blank line) become fenced ``pycon`` blocks, so their
  prompts are not read as block quotes nor their ``[1][:1]`` as links (examples indented by four spaces or
  more already are Markdown code blocks);
* Sphinx roles such as ``:class:`~fastsw.counting.Counts``` become code spans (``Counts``).
"""
from __future__ import annotations

import re

import griffe

ROLE = re.compile(r":(?:class|meth|func|attr|mod|exc|data|obj):`(~?)([^`]+)`")


def _role(m: re.Match) -> str:
    target = m.group(2)
    return f"`{target.rsplit('.', 1)[-1] if m.group(1) else target}`"


def markdown_docstring(text: str) -> str:
    out = []
    fence_indent = None
    in_fence = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            in_fence = not in_fence
        indent = line[: len(line) - len(line.lstrip())]
        if fence_indent is None and not in_fence and stripped.startswith(">>>") and len(indent) < 4:
            fence_indent = indent
            out.append(fence_indent + "```pycon")
        elif fence_indent is not None and not stripped:
            out.append(fence_indent + "```")
            fence_indent = None
        out.append(line if fence_indent is not None or in_fence else ROLE.sub(_role, line))
    if fence_indent is not None:
        out.append(fence_indent + "```")
    return "\n".join(out)


class DocstringsAsMarkdown(griffe.Extension):
    def on_object(self, *, obj, **kwargs) -> None:  # noqa: D102
        if obj.docstring is not None:
            obj.docstring.value = markdown_docstring(obj.docstring.value)
