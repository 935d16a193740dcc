"""``fastsw eval``: models compared per language (compression, Rényi efficiency, Gini)."""

from __future__ import annotations

import os

from fastsw.cli import common


def add_parser(sub) -> None:
    p = sub.add_parser(
        "eval",
        help="compare models per language: compression, Rényi efficiency, Gini",
        description="Encode every --text with every MODEL and print a markdown table (one row per model and "
        "language: documents, bytes, characters, tokens, bytes/token, chars/token, docs/token, Rényi "
        "efficiency, token ratio to the reference language) and the Gini coefficient of each model "
        "across languages: of token counts when the texts are parallel (same number of documents), "
        "else of tokens per byte. The reference language is en when an en text is given, else the "
        'first. With --json, one JSON object {"models": [{"model", "languages": {LANG: '
        '{metric: value}}, "gini", "gini_of", ...}], ...} instead, models in the order given.',
    )
    several = {"nargs": "+", "action": "extend", "required": True}  # -m A B, or -m A -m B (likewise --text)
    p.add_argument(
        "-m",
        "--model",
        **several,
        metavar="MODEL",
        dest="models",
        help="model files written by 'fastsw train' (several, or -m repeated)",
    )
    p.add_argument(
        "--text",
        **several,
        metavar="LANG=PATH",
        dest="texts",
        type=common.lang_path_arg,
        help="an evaluation text and its language, e.g. --text en=test.en.jsonl "
        "de=test.de.jsonl (repeatable; each language once)",
    )
    p.add_argument("--json", action="store_true", help="print the result as one JSON object instead of tables")
    p.add_argument(
        "--report",
        metavar="DIR",
        default=None,
        help="also write report.md, report.json, PNG charts and tokens.html (the texts' tokens, as "
        "'fastsw show --html' draws them) into DIR (needs matplotlib)",
    )
    p.add_argument("--alpha", type=float, default=2.5, metavar="A", help="order of the Rényi efficiency (default: 2.5)")
    p.add_argument("--no-progress", action="store_true", help="do not draw a progress bar")
    common.add_reading_options(p, stdin_note="They apply to every --text file.")
    p.set_defaults(func=cmd_eval)


def cmd_eval(args) -> int:
    from fastsw.eval.evaluate import MATPLOTLIB_MISSING, evaluate, markdown_table, to_json, write_report
    from fastsw.progress import Progress

    texts = common.language_texts(args.texts, check_files=False)
    if args.alpha <= 0 or args.alpha != args.alpha:
        raise common.CliError(f"--alpha {args.alpha} must be a number > 0 (1 for Shannon entropy)")
    if args.report is not None:
        if os.path.exists(args.report) and not os.path.isdir(args.report):
            raise common.CliError(
                f"--report {args.report} exists and is not a directory; give a directory for the report"
            )
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise common.CliError(MATPLOTLIB_MISSING) from None
    args.inputs = list(texts.values())
    reading = common.reading_kwargs(args, has_inputs=True, without_inputs="")
    for lang, path in texts.items():  # fail on a missing file before any model is loaded
        common.check_text_file(lang, path)
    progress = not args.no_progress
    with common.progress_stderr(progress):
        bar = Progress("evaluating", total=len(args.models) * len(texts), unit=" texts", enabled=progress)
        models = args.models  # loaded here for --report, whose tokens.html shows them (fastsw.eval.show)
        if args.report is not None and len(set(models)) == len(models):
            models = {path: common.load_model(path) for path in models}
        result = evaluate(models, texts, alpha=args.alpha, reading=reading, progress=bar)
        bar.close()
    if args.report is not None:
        pages = {}
        if isinstance(models, dict):  # the tokens of every model on every text (fastsw.eval.show)
            from fastsw.eval.evaluate import tokens_page

            words = ["fastsw", "eval"] + [w for m in models for w in ("-m", m)] + ["--report", args.report]
            words += [w for lang, path in texts.items() for w in ("--text", f"{lang}={path}")]
            pages["tokens.html"] = tokens_page(
                models, texts, result, reading=reading, command=common.command_line(words)
            )
        write_report(result, args.report, pages=pages)
    out = common.Output()
    out.write(to_json(result) + "\n" if args.json else markdown_table(result))
    out.flush()
    if args.report is not None:
        common.info(f"report written to {args.report}")
    return common.EXIT_OK
