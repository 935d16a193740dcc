"""``fastsw decode``: lines of token ids back into text."""

from __future__ import annotations

import json
import re
from typing import List

from fastsw.cli import common


def add_parser(sub) -> None:
    p = sub.add_parser(
        "decode",
        help="turn lines of token ids back into text",
        description="Read lines of space-separated token ids (as printed by 'fastsw encode') from INPUT files "
        "or stdin and print the decoded text of each line exactly as it is, adding nothing (the "
        "newline of a line document is part of its ids), or with --jsonl as a JSON object "
        '{"text": ...} per line. Byte sequences that are not valid UTF-8 are shown as U+FFFD.',
    )
    common.add_model_option(p)
    p.add_argument("inputs", nargs="*", metavar="INPUT", help="files of id lines (default, or '-': stdin)")
    p.add_argument("--jsonl", action="store_true", help='print {"text": ...} per document')
    p.set_defaults(func=cmd_decode)


_ID_RE = re.compile(r"[0-9]+")


def cmd_decode(args) -> int:
    from_stdin = not args.inputs or args.inputs == ["-"]
    if common.model_on_stdin(args) and from_stdin:
        raise common.CliError(
            "-m - reads the model from stdin, so the ids cannot come from stdin too; give INPUT files"
        )
    lines = common.text_lines(args.inputs)
    tok = common.load_model(args.model)
    out = common.Output()
    flush_each = from_stdin
    for line, source, number in lines:
        ids: List[int] = []
        for field in line.split():
            if not _ID_RE.fullmatch(field):
                raise common.CliError(
                    f"{source} line {number}: {field[:40]!r} is not a token id "
                    "(expected non-negative integers separated by spaces)"
                )
            tid = int(field)
            problem = tok._id_problem(tid)
            if problem is not None:
                raise common.CliError(f"{source} line {number}: {problem}")
            ids.append(tid)
        text = tok.decode(ids)
        if args.jsonl:
            out.line(json.dumps({"text": text}, ensure_ascii=False))
        else:
            out.write(text)  # the ids own the newlines: nothing is added
        if flush_each:
            out.flush()
    out.flush()
    return common.EXIT_OK
