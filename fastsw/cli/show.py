"""``fastsw show``: the tokens of a text, coloured, or a comparison page."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from fastsw.cli import common


def add_parser(sub) -> None:
    from fastsw.eval.show import DEFAULT_SAMPLE_CHARS

    p = sub.add_parser(
        "show",
        help="see the tokens: the text coloured token by token, or a comparison page (--html)",
        description="Print TEXT (or the text of FILE, or stdin for -) cut into the tokens of each MODEL, one model "
        "under the other: alternating background colours, supermerges underlined in a colour family "
        "of their own, special tokens inverted, markers and caps codes as ¦ ↑ ⇑, bytes of a split "
        "character in hex, newlines and tabs as ↵ →; then a summary line per model (tokens, "
        "bytes/token, chars/token). A TEXT that names an existing file is read as that file. With "
        "--html PAGE, write one self-contained HTML page instead: per language (--text LANG=FILE), "
        "a sample of the text tokenized by every model side by side, a hover card per token, and "
        "'fastsw eval' metrics and charts of the whole texts.",
    )
    p.add_argument(
        "-m",
        "--model",
        action="append",
        required=True,
        metavar="MODEL",
        dest="models",
        help="model file written by 'fastsw train' (repeat -m to compare models)",
    )
    p.add_argument(
        "source",
        nargs="?",
        default=None,
        metavar="TEXT|FILE|-",
        help="the text to show, a file to read, or - for stdin",
    )
    p.add_argument(
        "--text",
        action="append",
        default=[],
        metavar="LANG=FILE",
        dest="texts",
        type=common.lang_path_arg,
        help="a text file and its language, e.g. --text en=test.en.jsonl (repeatable)",
    )
    p.add_argument(
        "--html",
        metavar="PAGE",
        default=None,
        help="write a self-contained comparison page to PAGE instead of printing",
    )
    p.add_argument(
        "--sample-chars",
        type=common.int_arg(1, ">= 1"),
        default=None,
        metavar="N",
        help=f"show at most N characters of each text (default: all in the terminal, {DEFAULT_SAMPLE_CHARS} on a page)",
    )
    p.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colours: auto (default) = only on a terminal and when NO_COLOR is not set",
    )
    p.add_argument("--ids", action="store_true", help="print each token's id under it")
    p.add_argument(
        "--ordinary",
        action="store_true",
        help="encode special-token strings as ordinary text (default: show them as special tokens)",
    )
    p.add_argument("--no-progress", action="store_true", help="do not draw a progress bar (--html)")
    p.set_defaults(func=cmd_show)


def _show_texts(args) -> dict:
    """``{language: path or [text]}`` of ``fastsw show``: the --text files, and TEXT, FILE or stdin as ``text``."""
    texts = common.language_texts(args.texts, check_files=True)
    source = args.source
    if source is None and not texts:
        if args.html is not None or sys.stdin is None or sys.stdin.isatty():
            raise common.CliError(
                "nothing to show: give a TEXT, a FILE, - for stdin"
                + (" or --text LANG=FILE" if args.html is not None else "")
            )
        source = "-"
    if source is not None:
        if "text" in texts:
            raise common.CliError("--text text= and a TEXT argument both name the language 'text'; give one of them")
        if source == "-":
            data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode("utf-8")
            try:
                texts["text"] = [data.decode("utf-8")]
            except UnicodeDecodeError as e:
                raise common.CliError(
                    f"{common.STDIN_NAME}: invalid UTF-8 at byte {e.start} ({e.reason}); the input must be UTF-8 text"
                ) from None
        else:
            texts["text"] = source if os.path.isfile(source) else [source]
    return texts


def cmd_show(args) -> int:
    from fastsw.eval.evaluate import evaluate, tokens_page
    from fastsw.files import atomic_write_text, resolve_output_path
    from fastsw.progress import Progress
    from fastsw.corpus.readers import iter_documents
    from fastsw.eval.show import render_models, use_color

    if args.html is not None:
        resolve_output_path(args.html)  # a bad output path fails before any work
    texts = _show_texts(args)
    if len(set(args.models)) != len(args.models):
        raise common.CliError("a model is given twice with -m; give each model once")
    models = {path: common.load_model(path) for path in args.models}
    allowed = set() if args.ordinary else "all"
    if args.html is None:
        color = use_color(args.color)
        documents = {lang: iter_documents(Path(s)) if isinstance(s, str) else s for lang, s in texts.items()}
        out = common.Output()
        out.write(
            render_models(
                models,
                documents,
                sample_chars=args.sample_chars,
                color=color,
                ids=args.ids,
                allowed_special=allowed,
                headers=bool(args.texts),
            )
        )
        out.flush()
        return common.EXIT_OK
    with common.progress_stderr(not args.no_progress):
        bar = Progress("evaluating", total=len(models) * len(texts), unit=" texts", enabled=not args.no_progress)
        result = evaluate(models, texts, progress=bar)
        bar.close()
    words = ["fastsw", "show", "--html", args.html] + [w for m in args.models for w in ("-m", m)]
    words += [w for lang, path in args.texts for w in ("--text", f"{lang}={path}")]
    words += [] if args.sample_chars is None else ["--sample-chars", args.sample_chars]
    words += (["--ordinary"] if args.ordinary else []) + ([] if args.source is None else ["--", args.source])
    atomic_write_text(
        args.html,
        tokens_page(
            models,
            texts,
            result,
            sample_chars=args.sample_chars,
            command=common.command_line(words),
            allowed_special=allowed,
        ),
    )
    common.info(f"page written to {args.html}")
    return common.EXIT_OK
