"""``fastsw pretokenize``: the pretokens of each document as a JSON array."""

from __future__ import annotations

import json

from fastsw.cli import common


def add_parser(sub) -> None:
    p = sub.add_parser(
        "pretokenize",
        help="print the pretokens of each document as a JSON array",
        description="Split documents into pretokens and print one JSON array of strings per document. With no "
        "INPUT (or INPUT '-'), documents are read from stdin, one per line (without the trailing "
        "newline), or as JSON Lines (see --stdin-format).",
    )
    p.add_argument("inputs", nargs="*", metavar="INPUT", help="files to pre-tokenize (default, or '-': stdin)")
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--pretokenizer",
        type=common.pretokenizer_arg,
        default=None,
        metavar="NAME",
        help=common.PRETOKENIZER_HELP + " (markers and caps codes are shown as ¦ ↑ ⇑)",
    )
    g.add_argument(
        "-m",
        "--model",
        metavar="MODEL",
        default=None,
        help="use the pre-tokenizer stored in MODEL ('-': read it from stdin, with INPUT files)",
    )
    common.add_reading_options(
        p, stdin_note="--doc-mode and --separator apply to INPUT files only. " + common.stdin_help(True), stdin=True
    )
    p.set_defaults(func=cmd_pretokenize)


def cmd_pretokenize(args) -> int:
    from fastsw.pretokenizers.pretokenize import make_pretokenizer

    documents, unit = common.documents(args, without_inputs="stdin is read one document per line")
    from fastsw.pretokenizers.pretokenize import normalize_text

    tok = common.load_model(args.model) if args.model else None
    pretok = tok.pretokenizer if tok else make_pretokenizer(args.pretokenizer or "script")
    form = tok.normalize if tok else None  # a model's documents are normalized before pre-tokenization
    show = pretok.show if pretok.atoms else None  # a scheme's atoms in readable form (markers as ¦ ↑ ⇑)
    out = common.Output()
    flush_each = unit == "line"
    for doc in documents:
        pieces = pretok.pretokenize(normalize_text(doc, form))
        out.line(json.dumps([show(p) for p in pieces] if show else pieces, ensure_ascii=False))
        if flush_each:
            out.flush()
    out.flush()
    return common.EXIT_OK
