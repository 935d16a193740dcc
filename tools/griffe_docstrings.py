"""Griffe extension for the API reference: docstrings written for ``help()`` read well as Markdown.

* doctest examples (lines from ``>>>`` to the next blank line) become fenced ``pycon`` blocks, so their
  prompts are not read as block quotes nor their ``[1][:1]`` as links; outside a Google-style section
  (``Args:``, ``Examples:``, ...) the block is moved to the left margin, where Markdown reads a fence;
* Sphinx roles such as ``:class:`~fastsw.corpus.counting.Counts``` become code spans (``Counts``).
"""

from __future__ import annotations

import re

import griffe

ROLE = re.compile(r":(?:class|meth|func|attr|mod|exc|data|obj):`(~?)([^`]+)`")
SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword Args|Other Parameters|Returns|Return|Yields|"
    r"Raises|Warns|Examples?|Notes?|Warnings?|Attributes|Methods|Functions|Classes|Modules):\s*$"
)


def _role(m: re.Match) -> str:
    target = m.group(2)
    return f"`{target.rsplit('.', 1)[-1] if m.group(1) else target}`"


def markdown_docstring(text: str) -> str:
    out = []
    block = None  # (indent in the docstring, indent written) of the doctest being fenced
    in_fence = in_section = False
    for line in text.splitlines():
        stripped = line.strip()
        indent = line[: len(line) - len(line.lstrip())]
        if stripped and not indent and block is None and not in_fence:
            in_section = SECTION.match(line) is not None
        if stripped.startswith("```") and block is None:
            in_fence = not in_fence
        if block is None and not in_fence and stripped.startswith(">>>"):
            block = (indent, indent if in_section else "")
            out.append(block[1] + "```pycon")
        elif block is not None and not stripped:
            out.append(block[1] + "```")
            block = None
        if block is not None:
            out.append(block[1] + line[len(block[0]) :] if line.startswith(block[0]) else line)
        else:
            out.append(line if in_fence else ROLE.sub(_role, line))
    if block is not None:
        out.append(block[1] + "```")
    return "\n".join(out)


class DocstringsAsMarkdown(griffe.Extension):
    def on_object(self, *, obj, **kwargs) -> None:  # noqa: D102
        if obj.docstring is not None:
            obj.docstring.value = markdown_docstring(obj.docstring.value)
