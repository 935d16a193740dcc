"""The ``fastsw`` command line: train, count, encode, decode, pretokenize, inspect, eval, show, shard.

Run ``fastsw --help`` or ``fastsw COMMAND --help``. Also available as ``python -m fastsw``.

Conventions shared by every command: INPUT ``-`` is stdin (lines of text, or JSON Lines when the first non-blank
line is a JSON object; ``--stdin-format`` decides instead) and ``-o -`` is stdout; ``-m MODEL`` names the model
wherever one is read (``-m -``: from stdin); INPUT files may be ``.gz``, ``.bz2``, ``.xz`` or ``.zst``.

Exit codes: 0 success, 2 bad arguments or bad input (one ``fastsw: error: ...`` line on stderr, no traceback),
130 interrupted (Ctrl-C), 141 output pipe closed early (e.g. ``| head``; nothing is printed).
Unexpected exceptions (bugs) keep their traceback.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import re
import sys
import time
import warnings
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple

from fastsw import __version__
from fastsw.notes import OptionWarning
from fastsw.corpus.readers import STDIN_FORMATS

__all__ = ["main", "build_parser", "CliError", "parse_escapes"]

EXIT_OK = 0
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a tool killed by SIGPIPE reports

STDIN_NAME = "<stdin>"


class CliError(ValueError):
    """A user error detected by the CLI itself (reported like any other ValueError)."""


# ---- argument parsing -----------------------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error message (no usage block) that points at --help."""

    def error(self, message: str):  # type: ignore[override]
        hint = f" (see '{self.prog} --help')"
        _print_error(message + hint)
        raise SystemExit(EXIT_ERROR)


_ESCAPE_RE = re.compile(
    r"\\(?:(?P<simple>[\\nrt0fv])|x(?P<x>[0-9A-Fa-f]{2})|u(?P<u>[0-9A-Fa-f]{4})|U(?P<U>[0-9A-Fa-f]{8})|(?P<bad>.?))",
    re.DOTALL,
)
_HEX_ESCAPES = {"x": (2, "two", "\\x04"), "u": (4, "four", "\\u00e9"), "U": (8, "eight", "\\U0001F642")}
_SIMPLE_ESCAPES = {"\\": "\\", "n": "\n", "r": "\r", "t": "\t", "0": "\0", "f": "\f", "v": "\v"}


def parse_escapes(text: str) -> str:
    r"""Replace the backslash escapes ``\n \r \t \0 \f \v \\ \xHH \uHHHH \UHHHHHHHH`` in ``text``.

    Any other backslash sequence raises ``ValueError`` (so a typo is not silently taken literally).
    """

    def replace(m: re.Match) -> str:
        if m.group("simple") is not None:
            return _SIMPLE_ESCAPES[m.group("simple")]
        for name in ("x", "u", "U"):
            digits = m.group(name)
            if digits is not None:
                code = int(digits, 16)
                if code > 0x10FFFF:
                    raise ValueError(f"escape {m.group(0)!r} is beyond U+10FFFF")
                return chr(code)
        bad = m.group(0)
        if bad == "\\":
            raise ValueError("a lone backslash at the end; write \\\\ for a backslash")
        if bad[1:] in _HEX_ESCAPES:
            n, word, example = _HEX_ESCAPES[bad[1:]]
            raise ValueError(f"the \\{bad[1]} escape needs {word} hex digits (0-9, a-f), as in {example}; got "
                             f"{text[m.start():m.start() + 2 + n]!r}")
        raise ValueError(
            f"unknown escape {bad!r}; supported: \\n \\r \\t \\0 \\f \\v \\\\ \\xHH \\uHHHH \\UHHHHHHHH"
        )

    return _ESCAPE_RE.sub(replace, text)


def _separator_arg(text: str) -> str:
    try:
        value = parse_escapes(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if not value:
        raise argparse.ArgumentTypeError("the separator must not be empty")
    return value


def _int_arg(minimum: int, what: str):
    def convert(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} must be {what}")
        return value

    convert.__name__ = "int"
    return convert


def _lang_pair(what: str):
    """argparse type of ``LANG=VALUE`` options: ``(LANG, VALUE)``; ``what`` names VALUE in messages."""
    def convert(text: str) -> Tuple[str, str]:
        name, eq, value = text.partition("=")
        if not eq or not name or not value:
            example = "de.txt" if what == "PATH" else "2"
            raise argparse.ArgumentTypeError(f"{text!r} is not LANG={what}, e.g. de={example}")
        if what != "PATH":
            from fractions import Fraction
            try:
                number = Fraction(value)
            except (ValueError, ZeroDivisionError):
                raise argparse.ArgumentTypeError(f"{text!r}: {value!r} is not a number (e.g. 2, 0.5 or 3/2)") \
                    from None
            if number <= 0:
                raise argparse.ArgumentTypeError(f"{text!r}: the {what.lower()} must be > 0")
        return name, value

    convert.__name__ = f"LANG={what}"
    return convert


def _lang_free_number(flag: str):
    """argparse type of a number > 0 given as 2, 0.5 or 3/2: a ``Fraction`` (exact)."""
    def convert(text: str):
        from fractions import Fraction
        try:
            number = Fraction(text)
        except (ValueError, ZeroDivisionError):
            raise argparse.ArgumentTypeError(f"{text!r} is not a number (e.g. 2, 0.5 or 3/2)") from None
        if number <= 0:
            raise argparse.ArgumentTypeError(f"{text!r} must be > 0")
        return number

    convert.__name__ = "number"
    return convert


def _parity_args(args, languages: dict) -> dict:
    """train()'s parity-aware options from --phase1/--dev/--ratio/..., checked with CLI wording before any text
    is read: ``{}`` when phase 1 is plain BPE."""
    parity = args.algo == "parity-bpe" or args.phase1 == "parity-bpe"
    flags = (("--dev", args.devs), ("--ratio", args.ratios), ("--global-merges", args.global_merges),
             ("--parity-variant", args.parity_variant), ("--window", args.window), ("--alpha", args.alpha),
             ("--min-frequency", args.min_frequency), ("--parity-exhausted", args.parity_exhausted))
    if args.phase1 is not None and args.algo in ("bpe", "parity-bpe"):
        raise CliError(f"--phase1 chooses the phase 1 of --algo boundless or superbpe (got --algo {args.algo}); "
                       "for a plain parity-aware model use --algo parity-bpe")
    if not parity:
        for flag, value in flags:
            if value is not None:
                raise CliError(f"{flag} applies to parity-aware BPE; add --algo parity-bpe (or --phase1 parity-bpe "
                               "with --algo boundless/superbpe)")
        return {}
    if "lang_field" not in languages and "inputs" not in languages and args.from_counts is None:
        raise CliError("parity-aware BPE trains on one text per language: give --lang LANG=PATH for each "
                       "language (or --lang-field F, or --from-counts files counted with --lang)")
    if args.devs is not None and args.ratios is not None:
        raise CliError("give either --dev LANG=PATH (multi-parallel dev texts) or --ratio LANG=R (target "
                       "compression ratios), not both")
    if args.devs is None and args.ratios is None:
        raise CliError("parity-aware BPE needs --dev LANG=PATH for every language (multi-parallel dev texts) or "
                       "--ratio LANG=R for every language (target compression ratios)")
    if args.parity_variant != "window":
        for flag, value in (("--window", args.window), ("--alpha", args.alpha)):
            if value is not None:
                raise CliError(f"{flag} applies to --parity-variant window; add it or leave {flag} out")
    out: dict = {}
    known = list(languages["inputs"]) if "inputs" in languages else None
    if args.devs is not None:
        dev: dict = {}
        for name, path in args.devs:
            if known is not None and name not in known:
                raise CliError(f"--dev {name}={path}: no --lang {name}=PATH was given (languages: "
                               f"{', '.join(known)}); every dev language needs its training text")
            dev.setdefault(name, []).append(Path(path))
        out["dev"] = dev
    else:
        from fractions import Fraction
        ratios: dict = {}
        for name, value in args.ratios:
            if name in ratios:
                raise CliError(f"--ratio {name}=... is given twice")
            if known is not None and name not in known:
                raise CliError(f"--ratio {name}={value}: no --lang {name}=PATH was given (languages: "
                               f"{', '.join(known)})")
            ratios[name] = Fraction(value)
        out["ratios"] = ratios
    for name in ("global_merges", "parity_variant", "window", "alpha", "min_frequency", "parity_exhausted"):
        if getattr(args, name) is not None:
            out[name] = getattr(args, name)
    if args.phase1 is not None:
        out["phase1"] = args.phase1
    return out


def _add_language_options(p: argparse.ArgumentParser, *, weights: bool) -> None:
    g = p.add_argument_group("languages", "Language-tagged input: one count column per language"
                             + (", weighted at training time." if weights else "."))
    g.add_argument("--lang", action="append", type=_lang_pair("PATH"), default=None, metavar="LANG=PATH",
                   dest="langs", help="a file of language LANG (repeatable; several files per language are fine); "
                                      "instead of INPUT files")
    g.add_argument("--lang-field", metavar="F", default=None,
                   help="INPUT files are JSONL whose field F names each line's language")
    if weights:
        g.add_argument("--weight", action="append", type=_lang_pair("WEIGHT"), default=None, metavar="LANG=W",
                       dest="weights", help="multiply LANG's counts by W > 0 (2, 0.5 or 3/2; exact; 2 = its text "
                                            "twice; default 1; repeatable)")
        g.add_argument("--share", action="append", type=_lang_pair("SHARE"), default=None, metavar="LANG=P",
                       dest="shares", help="target byte share of LANG (every language, summing to exactly 1): "
                                           "weight = 100000 * P / bytes of LANG")


_positive = _int_arg(1, "a positive integer")
_non_negative = _int_arg(0, "0 or more")


def _seconds(value: str) -> float:
    """A number of seconds > 0 (argparse type)."""
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds > 0")
    return seconds
_at_least_two = _int_arg(2, "2 or more")


def _pretokenizer_arg(text: str) -> str:
    """A --pretokenizer value: script, simple, none or a scheme name (boundary[w,p,d]+caps, script-v3, ...),
    checked here so that a wrong name is one error listing the valid ones."""
    from fastsw.pretokenizers.pretokenize import make_pretokenizer
    try:
        make_pretokenizer(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def _pretokenizer_name(config) -> str:
    """The --pretokenizer spelling of a stored pre-tokenizer config (a scheme's name, else its mode)."""
    config = config or {}
    return config.get("scheme") or config.get("name") or config.get("mode")


_PRETOKENIZER_HELP = ("script: script chunking + GPT-4o regex (default); simple: GPT-4o regex only; none: each "
                      "document is one pretoken, merges may cross spaces; boundary[w], boundary[w,p], "
                      "boundary[w,p,d], optionally +caps, +shift or +upper: explicit boundary markers and caps "
                      "codes (seed 002); script-v3, script-v3+boundary[...]: SCRIPT v3 encoding")


def _add_text_options(p: argparse.ArgumentParser, *, default, note: str) -> None:
    """--pretokenizer and --normalize, as train and count take them."""
    p.add_argument("--pretokenizer", type=_pretokenizer_arg, default=default, metavar="NAME",
                   help=_PRETOKENIZER_HELP + note)
    p.add_argument("--normalize", choices=("none", "nfc", "nfkc"), default=None,
                   help="Unicode normalization of every document before pre-tokenization, recorded in the "
                        "output and applied again at encode time: none (lossless, the default), nfc or nfkc; "
                        "nothing else is ever changed (no whitespace collapsing, no lowercasing)")


def _stdin_help(no_input_too: bool) -> str:
    return ("INPUT '-'" + (" (or no INPUT)" if no_input_too else "") + " reads stdin, one document per line, or as "
            "JSON Lines when its first non-blank line is a JSON object (then every non-blank line must be one, "
            "holding --text-field); --stdin-format text or jsonl decides instead.")


def _add_reading_options(p: argparse.ArgumentParser, *, stdin_note: str, stdin: bool = False) -> None:
    g = p.add_argument_group(
        "reading INPUT files",
        "*.jsonl / *.ndjson: one JSON object per line, the document is --text-field. "
        "Other files are UTF-8 text cut by --doc-mode: 'line' (default; each line, with its "
        "newline, is a document), 'file' (the whole file) or 'separator' (pieces between --separator). "
        "Files may be compressed: .gz, .bz2, .xz, .zst (pip install 'fastsw[zstd]'). "
        + stdin_note,
    )
    g.add_argument("--text-field", metavar="F", default=None,
                   help="JSON field holding the text in .jsonl inputs and JSON Lines on stdin (default: text)")
    if stdin:
        g.add_argument("--stdin-format", choices=STDIN_FORMATS, default=None,
                       help="how stdin is read: auto (default: JSON Lines when the first non-blank line is a JSON "
                            "object, else text), text (one document per line) or jsonl")
    g.add_argument("--doc-mode", choices=("line", "file", "separator"), default=None,
                   help="how plain-text inputs are cut into documents (default: line, or separator when "
                        "--separator is given)")
    g.add_argument("--separator", metavar="STR", type=_separator_arg, default=None,
                   help=r"document separator for --doc-mode separator; escapes such as \n, \t, \\, \xHH, "
                        r"\uHHHH are understood, e.g. --separator '\n\n\n'")


def _add_dask_options(p: argparse.ArgumentParser) -> None:
    from fastsw.corpus.distributed import CONNECT_TIMEOUT

    group = p.add_argument_group("Dask cluster", "count INPUT files (the shards, one task each) on a Dask cluster "
                                 "(pip install 'fastsw[dask]'; see fastsw.corpus.distributed)")
    g = group.add_mutually_exclusive_group()
    g.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="the address of a running Dask scheduler, e.g. tcp://10.0.0.5:8786 (the workers must "
                        "be able to read the INPUT paths)")
    g.add_argument("--dask-local", type=_positive, metavar="N", default=None,
                   help="start a Dask LocalCluster of N worker processes on this machine for the run")
    group.add_argument("--connect-timeout", type=_seconds, metavar="SECONDS", default=None,
                       help=f"how long to wait for the scheduler of --scheduler to answer (default: "
                            f"{CONNECT_TIMEOUT:g})")


def _check_connect_timeout(args) -> None:
    if args.connect_timeout is not None and args.scheduler is None:
        raise CliError("--connect-timeout is how long to wait for the scheduler of --scheduler; give --scheduler "
                       "ADDRESS, or leave --connect-timeout out")


def _dask_check(args) -> bool:
    """Whether --scheduler/--dask-local was given, after checking the options that do not go with it."""
    _check_connect_timeout(args)
    if args.scheduler is None and args.dask_local is None:
        return False
    flag = "--scheduler" if args.scheduler is not None else "--dask-local"
    if not args.inputs:
        raise CliError(f"{flag} counts INPUT files on a Dask cluster; give the INPUT files (the shards)")
    clash = [name for name, value in (("--workers", args.workers), ("--lang", args.langs),
                                      ("--lang-field", args.lang_field),
                                      ("--from-counts", getattr(args, "from_counts", None)),
                                      ("--phase1", getattr(args, "phase1", None)))
             if value is not None]
    if getattr(args, "algo", None) == "parity-bpe":
        clash.append("--algo parity-bpe")
    if clash:
        raise CliError(f"{clash[0]} does not go with {flag} (the INPUT files are counted on the Dask cluster, "
                       "without languages); leave one of them out")
    from fastsw.corpus.distributed import check_shards

    check_shards(args.inputs)  # before connecting: one format
    return True


def _dask_client(args):
    """A Dask client for --scheduler/--dask-local (fastsw.corpus.distributed.connect)."""
    from fastsw.corpus.distributed import CONNECT_TIMEOUT, connect

    return connect(args.scheduler, local_workers=args.dask_local, timeout=args.connect_timeout or CONNECT_TIMEOUT)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="fastsw",
        description="Train and use BPE, BoundlessBPE and SuperBPE (superword) tokenizers.",
        epilog="Run 'fastsw COMMAND --help' for the options of a command. Errors exit with status 2.",
    )
    parser.add_argument("--version", action="version", version=f"fastsw {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    # -- train
    p = sub.add_parser(
        "train", help="train a tokenizer and save it as a model file",
        description="Train a tokenizer on INPUT files ('-' for stdin; with no INPUT, on the bundled multilingual "
                    "sample corpus), or on count files written by 'fastsw count' (--from-counts), and save it to "
                    "MODEL ('-o -' writes it to stdout). Progress bars and a summary go to stderr. The options "
                    "are grouped by the algorithm they apply to.",
    )
    g = p.add_argument_group("common options")
    g.add_argument("--algo", choices=("bpe", "boundless", "superbpe", "parity-bpe", "mingram"), default="bpe",
                   help="bpe: regular merges only (default, as fastsw.train()); boundless: BoundlessBPE decides "
                        "the supermerges itself; superbpe: --supermerges S fixed supermerges; parity-bpe: "
                        "parity-aware BPE (--lang texts and --dev or --ratio; a plain BPE model); mingram: MinGram "
                        "(a BPE seed pruned to the minimum-token-count vocabulary)")
    g.add_argument("--vocab-size", type=_positive, default=4096, metavar="N",
                   help="vocabulary size: alphabet + merges, special tokens excluded (default: 4096)")
    g.add_argument("--special-token", action="append", default=[], metavar="TOK", dest="special_tokens",
                   help="add a special token (repeatable); ids follow the vocabulary")
    g.add_argument("--backend", choices=("auto", "numba", "python"), default="auto",
                   help="merge-loop implementation: numba kernels or the plain-Python reference path "
                        "(identical models; default auto = numba unless FASTSW_PUREPYTHON=1)")
    g = p.add_argument_group("BPE rules and text (every algorithm's regular merges)")
    g.add_argument("--profile", choices=("paper", "hf"), default="paper",
                   help="paper: the paper's reference rules, 243-byte alphabet (default); "
                        "hf: HF tokenizers' BpeTrainer rules, 256-byte alphabet")
    _add_text_options(g, default=None, note=". none with --algo bpe, parity-bpe or mingram (it makes no words for "
                                            "supermerges to join); script-v3 with every --algo but parity-bpe. With "
                                            "--from-counts the counts' own are used")
    g.add_argument("--alphabet", choices=("bytes", "chars"), default="bytes",
                   help="bytes (default) or chars (characters seen in training; needs --profile hf)")
    g.add_argument("--byte-fallback", action="store_true",
                   help="with --alphabet chars: encode unseen characters as bytes")
    g = p.add_argument_group("SuperBPE", "--algo superbpe: phase 1 learns --vocab-size minus S regular merges, "
                             "phase 2 S supermerges")
    g.add_argument("--supermerges", type=_positive, default=None, metavar="S",
                   help="number of supermerges (--algo superbpe only; must be < --vocab-size)")
    g = p.add_argument_group("BoundlessBPE and SuperBPE supermerge candidates",
                             "--algo boundless (Algorithm 1 decides the split itself) or superbpe")
    g.add_argument("--greedy-split", action="store_true",
                   help="split supermerge candidates into frequent n-grams (boundless/superbpe)")
    g.add_argument("--min-count-floor", type=_non_negative, default=None, metavar="N",
                   help="with --greedy-split: lower bound of the n-gram min count (default: 15)")
    g.add_argument("--max-ngram-len", type=_at_least_two, default=None, metavar="N",
                   help="with --greedy-split: longest n-gram (default: 30)")
    g = p.add_argument_group("parity-aware BPE", "--algo parity-bpe, or --phase1 parity-bpe with --algo boundless/"
                             "superbpe: each merge comes from the language that is worst off (needs --lang).")
    g.add_argument("--phase1", choices=("bpe", "parity-bpe"), default=None,
                   help="phase-1 trainer of --algo boundless/superbpe (default: bpe)")
    g.add_argument("--dev", action="append", type=_lang_pair("PATH"), default=None, metavar="LANG=PATH",
                   dest="devs", help="multi-parallel dev text of LANG (one per --lang language, the same number of "
                                     "documents each; several files per language are read in order): each merge "
                                     "comes from the language whose dev text needs the most tokens")
    g.add_argument("--ratio", action="append", type=_lang_pair("RATIO"), default=None, metavar="LANG=R",
                   dest="ratios", help="target compression ratio R > 0 of LANG (one per --lang language), instead "
                                       "of --dev: each merge comes from the language furthest below its target")
    g.add_argument("--global-merges", type=_non_negative, default=None, metavar="N",
                   help="hybrid: the first N merges are ordinary BPE on the summed counts (default: 0)")
    g.add_argument("--parity-variant", choices=("base", "window"), default=None,
                   help="base (default) or window: a language chosen too often in the last --window steps is "
                        "passed over")
    g.add_argument("--window", type=_positive, default=None, metavar="W",
                   help="with --parity-variant window: steps remembered (default: 100)")
    g.add_argument("--alpha", type=_lang_free_number("--alpha"), default=None, metavar="A",
                   help="with --parity-variant window: a language may take at most A / (languages) of the "
                        "window (default: 2)")
    g.add_argument("--min-frequency", type=_positive, default=None, metavar="F",
                   help="a language whose best pair occurs fewer than F times is exhausted (default: 2)")
    g.add_argument("--parity-exhausted", choices=("skip", "stop"), default=None,
                   help="skip (default): pass an exhausted language over and go on with the others until the "
                        "vocabulary is reached; stop: stop training there (the published script's rule)")
    g = p.add_argument_group("MinGram", "--algo mingram: a BPE seed of floor((N - alphabet) * overshoot) merges, "
                             "Hard EM on the minimum-token-count path, one flat prune to --vocab-size")
    g.add_argument("--overshoot", type=float, default=None, metavar="F",
                   help="seed size factor >= 1 (default 1.1, the seed authors' code; their paper grids used 1.15)")
    g.add_argument("--em-iterations", type=_positive, default=None, metavar="K", help="E/M steps per round (default 2)")
    g.add_argument("--score-delta", type=float, default=None, metavar="D",
                   help="path score sum(D * log_prob - 1) (default 1e-5; 0 = pure minimum token count)")
    g.add_argument("--prune-criterion", choices=("usage_count", "mi"), default=None,
                   help="flat prune by usage count (default) or MinGram-PP's extra-token cost (mi)")
    g.add_argument("--refill", action="store_true",
                   help="re-add the best dropped tokens when the model ends below --vocab-size (the seed authors' "
                        "code does not)")
    g = p.add_argument_group("input")
    g.add_argument("inputs", nargs="*", metavar="INPUT",
                   help="corpus files (.jsonl, .ndjson or text; optionally .gz, .bz2, .xz, .zst), or '-' for "
                        "stdin")
    g.add_argument("--from-counts", nargs="+", metavar="COUNTS", default=None,
                   help="train from count files written by 'fastsw count' (several are merged) instead of "
                        "INPUT files; gives the same model as training on the counted text")
    g.add_argument("--workers", type=_positive, default=None, metavar="N",
                   help="processes that pre-tokenize and count INPUT files (default: one thread per core "
                        "in this process with the compiled counter; otherwise all cores when the INPUT files "
                        "hold 16 MB or more, else 1); more than the cores are capped at them, with a note")
    _add_reading_options(p, stdin_note="With no INPUT the bundled sample corpus is used and these options "
                                       "must not be given. " + _stdin_help(False), stdin=True)
    _add_language_options(p, weights=True)
    _add_dask_options(p)
    g = p.add_argument_group("output and progress")
    g.add_argument("-o", "--output", metavar="MODEL", required=True,
                   help="where to write the model (JSON); '-' writes it to stdout")
    g.add_argument("--no-progress", action="store_true", help="do not draw progress bars")
    p.set_defaults(func=cmd_train)

    # -- count
    p = sub.add_parser(
        "count", help="count pretokens (and letter runs) of INPUT files into a count file",
        description="Pre-tokenize INPUT files and save the aggregated pretoken and letter-run counts to COUNTS "
                    "(gzip-compressed JSON Lines, see fastsw.corpus.counting). Count files of parts of a corpus can be "
                    "trained on together: 'fastsw train --from-counts A B ...' gives the model of the whole.",
    )
    p.add_argument("inputs", nargs="*", metavar="INPUT",
                   help="corpus files (.jsonl, .ndjson or text; optionally .gz, .bz2, .xz, .zst), '-' for stdin; "
                        "or --lang LANG=PATH")
    p.add_argument("-o", "--output", metavar="COUNTS", required=True,
                   help="where to write the count file; '-' writes it to stdout")
    _add_text_options(p, default="script", note="")
    p.add_argument("--workers", type=_positive, default=None, metavar="N",
                   help="processes that pre-tokenize and count (default: one thread per core in this "
                        "process with the compiled counter, else one process per core); more than the "
                        "cores are capped at them, with a note")
    p.add_argument("--no-runs", action="store_true",
                   help="do not collect letter runs (smaller file; enough for --algo bpe only)")
    _add_dask_options(p)
    p.add_argument("--no-progress", action="store_true", help="do not draw a progress bar")
    _add_reading_options(p, stdin_note=_stdin_help(False), stdin=True)
    _add_language_options(p, weights=False)
    p.set_defaults(func=cmd_count)

    # -- encode
    p = sub.add_parser(
        "encode", help="print token ids, one line per document",
        description="Encode documents with MODEL and print one line per document: its token ids separated by "
                    "single spaces (an empty document gives an empty line). Special-token strings are "
                    "encoded as ordinary text. With no INPUT (or INPUT '-'), documents are read from stdin, one "
                    "per line, each answered at once: each line with its trailing newline is a document (as in "
                    "INPUT files with --doc-mode line), so 'fastsw encode FILE | fastsw decode' prints FILE back; "
                    "or JSON Lines (see --stdin-format).",
    )
    p.add_argument("-m", "--model", required=True, metavar="MODEL",
                   help="model file written by 'fastsw train' ('-': read it from stdin, with INPUT files)")
    p.add_argument("inputs", nargs="*", metavar="INPUT", help="files to encode (default, or '-': stdin)")
    _add_reading_options(p, stdin_note="--doc-mode and --separator apply to INPUT files only. " + _stdin_help(True),
                         stdin=True)
    g = p.add_argument_group("binary output", "--format bin or npy writes the ids of all documents as one array "
                             "(little-endian; the end-of-text token after each document, as 'fastsw shard' writes "
                             "them) to -o FILE or stdout")
    g.add_argument("--format", choices=("ids", "bin", "npy"), default="ids",
                   help="ids: one line of ids per document (default); bin: flat ids; npy: a .npy array")
    g.add_argument("-o", "--output", metavar="FILE", default=None, help="write to FILE instead of stdout")
    g.add_argument("--dtype", choices=("uint16", "uint32"), default=None,
                   help="bin/npy id type (default: uint16 when every id of MODEL fits, else uint32)")
    g.add_argument("--eot", metavar="TOKEN", default="auto",
                   help="bin/npy: token after each document (default: MODEL's <|endoftext|> when it has one; "
                        "'none' for no token)")
    p.set_defaults(func=cmd_encode)

    # -- shard
    p = sub.add_parser(
        "shard", help="encode a corpus into training-ready token shards",
        description="Encode the documents of INPUT files, globs or directories with MODEL into shards of token "
                    "ids in the folder DIR (flat little-endian ids, llm.c's headered shards or .npy, each with a "
                    ".idx.npy of document start offsets) and a manifest.json (model hash, options, inputs, every "
                    "shard's tokens, documents, sha256 and the input positions it covers). Running the same "
                    "command again resumes an interrupted run; the shards are byte-identical whatever the number "
                    "of workers. See fastsw.shard.",
    )
    p.add_argument("inputs", nargs="*", metavar="INPUT",
                   help="files, globs or directories; - for stdin (JSONL when its first line is a JSON object "
                        "with the text field, else text; a run from stdin cannot be resumed)")
    p.add_argument("-m", "--model", required=True, metavar="MODEL", help="model file written by 'fastsw train'")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="output folder (created if missing)")
    p.add_argument("--format", choices=("bin", "llmc", "npy"), default="bin",
                   help="bin: flat ids (nanoGPT); llmc: llm.c's 256 x int32 header + ids; npy (default: bin)")
    p.add_argument("--dtype", choices=("uint16", "uint32"), default=None,
                   help="id type (default: uint16 when every id of MODEL fits, else uint32)")
    p.add_argument("--eot", metavar="TOKEN", default="auto",
                   help="token after each document (default: MODEL's <|endoftext|> when it has one); "
                        "'none' for no token")
    p.add_argument("--bos", metavar="TOKEN", default=None, help="token before each document (default: none)")
    p.add_argument("--shard-tokens", type=_positive, default=10 ** 8, metavar="N",
                   help="tokens per shard, the last shard partial (default: 100000000)")
    p.add_argument("--workers", type=_positive, default=None, metavar="N",
                   help="encoder threads (default: all cores)")
    p.add_argument("--batch-mb", type=_positive, default=8, metavar="MB",
                   help="megabytes (characters) of text per encoded batch; about three batches are in memory "
                        "(default: 8)")
    p.add_argument("--verify", action="store_true",
                   help="re-read the shards of DIR and check them against its manifest (encodes nothing)")
    p.add_argument("--no-progress", action="store_true", help="do not draw a progress bar")
    _add_reading_options(p, stdin_note="")
    _add_dask_options(p)
    p.set_defaults(func=cmd_shard)

    # -- decode
    p = sub.add_parser(
        "decode", help="turn lines of token ids back into text",
        description="Read lines of space-separated token ids (as printed by 'fastsw encode') from INPUT files "
                    "or stdin and print the decoded text of each line exactly as it is, adding nothing (the "
                    "newline of a line document is part of its ids), or with --jsonl as a JSON object "
                    "{\"text\": ...} per line. Byte sequences that are not valid UTF-8 are shown as U+FFFD.",
    )
    p.add_argument("-m", "--model", required=True, metavar="MODEL",
                   help="model file written by 'fastsw train' ('-': read it from stdin, with INPUT files)")
    p.add_argument("inputs", nargs="*", metavar="INPUT", help="files of id lines (default, or '-': stdin)")
    p.add_argument("--jsonl", action="store_true", help='print {"text": ...} per document')
    p.set_defaults(func=cmd_decode)

    # -- pretokenize
    p = sub.add_parser(
        "pretokenize", help="print the pretokens of each document as a JSON array",
        description="Split documents into pretokens and print one JSON array of strings per document. With no "
                    "INPUT (or INPUT '-'), documents are read from stdin, one per line (without the trailing "
                    "newline), or as JSON Lines (see --stdin-format).",
    )
    p.add_argument("inputs", nargs="*", metavar="INPUT", help="files to pre-tokenize (default, or '-': stdin)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--pretokenizer", type=_pretokenizer_arg, default=None, metavar="NAME",
                   help=_PRETOKENIZER_HELP + " (markers and caps codes are shown as ¦ ↑ ⇑)")
    g.add_argument("-m", "--model", metavar="MODEL", default=None,
                   help="use the pre-tokenizer stored in MODEL ('-': read it from stdin, with INPUT files)")
    _add_reading_options(p, stdin_note="--doc-mode and --separator apply to INPUT files only. " + _stdin_help(True),
                         stdin=True)
    p.set_defaults(func=cmd_pretokenize)

    # -- inspect
    p = sub.add_parser(
        "inspect", help="describe a model file",
        description="Print a short summary of MODEL, or with --json an object "
                    '{"algo", "profile", "vocab_size", "merges": [{"id", "left", "right", "count", "super"}]} '
                    "where left/right are the lowercase hex of the merged tokens' bytes, merges in id order.",
    )
    p.add_argument("model_path", nargs="?", metavar="MODEL", default=None,
                   help="model file written by 'fastsw train' (or give it as -m MODEL, as every command takes it)")
    p.add_argument("-m", "--model", metavar="MODEL", default=None, help="the model file ('-': read it from stdin)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_inspect)

    # -- eval
    p = sub.add_parser(
        "eval", help="compare models per language: compression, Rényi efficiency, Gini",
        description="Encode every --text with every MODEL and print a markdown table (one row per model and "
                    "language: documents, bytes, characters, tokens, bytes/token, chars/token, docs/token, Rényi "
                    "efficiency, token ratio to the reference language) and the Gini coefficient of each model "
                    "across languages: of token counts when the texts are parallel (same number of documents), "
                    "else of tokens per byte. The reference language is en when an en text is given, else the "
                    "first. With --json, one JSON object {\"models\": [{\"model\", \"languages\": {LANG: "
                    "{metric: value}}, \"gini\", \"gini_of\", ...}], ...} instead, models in the order given.",
    )
    p.add_argument("-m", "--model", nargs="+", action="extend", required=True, metavar="MODEL", dest="models",
                   help="model files written by 'fastsw train' (several, or -m repeated)")
    p.add_argument("--text", nargs="+", action="extend", required=True, metavar="LANG=PATH", dest="texts",
                   type=_lang_path_arg, help="an evaluation text and its language, e.g. --text en=test.en.jsonl "
                                             "de=test.de.jsonl (repeatable; each language once)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object instead of tables")
    p.add_argument("--report", metavar="DIR", default=None,
                   help="also write report.md, report.json, PNG charts and tokens.html (the texts' tokens, as "
                        "'fastsw show --html' draws them) into DIR (needs matplotlib)")
    p.add_argument("--alpha", type=float, default=2.5, metavar="A",
                   help="order of the Rényi efficiency (default: 2.5)")
    p.add_argument("--no-progress", action="store_true", help="do not draw a progress bar")
    _add_reading_options(p, stdin_note="They apply to every --text file.")
    p.set_defaults(func=cmd_eval)

    # -- show
    from fastsw.eval.show import DEFAULT_SAMPLE_CHARS
    p = sub.add_parser(
        "show", help="see the tokens: the text coloured token by token, or a comparison page (--html)",
        description="Print TEXT (or the text of FILE, or stdin for -) cut into the tokens of each MODEL, one model "
                    "under the other: alternating background colours, supermerges underlined in a colour family "
                    "of their own, special tokens inverted, markers and caps codes as ¦ ↑ ⇑, bytes of a split "
                    "character in hex, newlines and tabs as ↵ →; then a summary line per model (tokens, "
                    "bytes/token, chars/token). A TEXT that names an existing file is read as that file. With "
                    "--html PAGE, write one self-contained HTML page instead: per language (--text LANG=FILE), "
                    "a sample of the text tokenized by every model side by side, a hover card per token, and "
                    "'fastsw eval' metrics and charts of the whole texts.",
    )
    p.add_argument("-m", "--model", action="append", required=True, metavar="MODEL", dest="models",
                   help="model file written by 'fastsw train' (repeat -m to compare models)")
    p.add_argument("source", nargs="?", default=None, metavar="TEXT|FILE|-",
                   help="the text to show, a file to read, or - for stdin")
    p.add_argument("--text", action="append", default=[], metavar="LANG=FILE", dest="texts", type=_lang_path_arg,
                   help="a text file and its language, e.g. --text en=test.en.jsonl (repeatable)")
    p.add_argument("--html", metavar="PAGE", default=None,
                   help="write a self-contained comparison page to PAGE instead of printing")
    p.add_argument("--sample-chars", type=_int_arg(1, ">= 1"), default=None, metavar="N",
                   help="show at most N characters of each text (default: all in the terminal, "
                        f"{DEFAULT_SAMPLE_CHARS} on a page)")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colours: auto (default) = only on a terminal and when NO_COLOR is not set")
    p.add_argument("--ids", action="store_true", help="print each token's id under it")
    p.add_argument("--ordinary", action="store_true",
                   help="encode special-token strings as ordinary text (default: show them as special tokens)")
    p.add_argument("--no-progress", action="store_true", help="do not draw a progress bar (--html)")
    p.set_defaults(func=cmd_show)
    return parser


# ---- output ----------------------------------------------------------------------------------------------------------


class _Output:
    """Writes UTF-8 lines to stdout's binary buffer (independent of the locale), or to a text stream without one."""

    def __init__(self, stream=None):
        self.text = stream if stream is not None else sys.stdout
        self.binary = getattr(self.text, "buffer", None)
        if self.binary is not None:
            self.text.flush()

    def line(self, text: str) -> None:
        self.write(text + "\n")

    def write(self, text: str) -> None:
        if self.binary is not None:
            self.binary.write(text.encode("utf-8"))
        else:
            self.text.write(text)

    def flush(self) -> None:
        if self.binary is not None:
            self.binary.flush()
        else:
            self.text.flush()


def _one_line(message: str) -> str:
    return " ".join(str(message).split("\n")).strip() or "unknown error"


def _print_error(message: str) -> None:
    try:
        sys.stderr.write(f"fastsw: error: {_one_line(message)}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _info(message: str) -> None:
    sys.stderr.write(f"fastsw: {message}\n")
    sys.stderr.flush()


class _LineTracker:
    """Wraps stderr while progress bars are drawn, remembering whether the cursor is in the middle of a line,
    so that an error message after an interrupted bar starts on a line of its own."""

    def __init__(self, stream):
        self._stream = stream
        self.mid_line = False

    def write(self, s: str) -> int:
        if s:
            self.mid_line = not s.endswith("\n")
        return self._stream.write(s)

    def __getattr__(self, name):
        return getattr(self._stream, name)


@contextlib.contextmanager
def _progress_stderr(enabled: bool):
    """stderr while progress bars are drawn (``enabled``): an error or interrupt after an unfinished bar line
    starts on a line of its own."""
    real = sys.stderr
    tracker = _LineTracker(real)
    try:
        if enabled:
            sys.stderr = tracker
        yield
    except BaseException:
        if tracker.mid_line:
            real.write("\n")
        raise
    finally:
        sys.stderr = real


# ---- helpers ------------------------------------------------------------------------------------------------------


def _reading_kwargs(args, *, has_inputs: bool, without_inputs: str) -> dict:
    """iter_documents options from --text-field/--doc-mode/--separator, checked with CLI wording."""
    given = [flag for flag, value in (("--text-field", args.text_field), ("--doc-mode", args.doc_mode),
                                      ("--separator", args.separator)) if value is not None]
    if not has_inputs:
        if given:
            raise CliError(f"{given[0]} applies to INPUT files, but no INPUT was given ({without_inputs})")
        return {}
    doc_mode = args.doc_mode or "auto"
    if doc_mode == "separator" and args.separator is None:
        raise CliError(r"--doc-mode separator needs --separator STR, e.g. --separator '\n\n\n'")
    if args.separator is not None and doc_mode not in ("auto", "separator"):
        raise CliError(f"--separator is used only with --doc-mode separator, not --doc-mode {doc_mode}")
    if args.text_field is not None and not args.text_field:
        raise CliError("--text-field must not be empty")
    if args.text_field is not None:
        from fastsw.corpus.readers import text_field_note

        for name in args.inputs:
            if name == "-":  # stdin: JSONL or text is known only once it is read
                continue
            note = text_field_note(name, f"--text-field {args.text_field}")
            if note:
                _info(f"note: {note}")
    return {"text_field": args.text_field, "doc_mode": doc_mode, "separator": args.separator}


def _reads_stdin(args, *, default: bool) -> bool:
    """Whether the documents come from stdin: INPUT ``-`` (alone), or no INPUT when ``default``. ``-`` is taken out
    of ``args.inputs``; ``--stdin-format`` without stdin is an error."""
    if "-" in args.inputs:
        if len(args.inputs) > 1:
            raise CliError("INPUT '-' (stdin) cannot be combined with INPUT files; give either '-' or the files")
        args.inputs = []
        stdin = True
    else:
        stdin = default and not args.inputs
    if not stdin and getattr(args, "stdin_format", None) is not None:
        raise CliError("--stdin-format applies to stdin (INPUT '-'); INPUT files are read by their names")
    return stdin


def _stdin_documents(args, *, keep_newline: bool) -> Iterator[str]:
    """The documents on stdin (readers.iter_stdin_documents), after refusing the options of INPUT files."""
    from fastsw.corpus.readers import iter_stdin_documents

    for flag, value in (("--doc-mode", args.doc_mode), ("--separator", args.separator)):
        if value is not None:
            raise CliError(f"{flag} applies to INPUT files; stdin is read one document per line, or as JSON Lines "
                           "(--stdin-format)")
    if args.text_field is not None and not args.text_field:
        raise CliError("--text-field must not be empty")
    if _model_on_stdin(args):
        raise CliError("-m - reads the model from stdin, so the documents cannot come from stdin too; give INPUT "
                       "files")
    return iter_stdin_documents(sys.stdin, fmt=args.stdin_format or "auto", text_field=args.text_field,
                                keep_newline=keep_newline)


def _model_on_stdin(args) -> bool:
    return getattr(args, "model", None) == "-"


def _documents(args, *, without_inputs: str, keep_newline: bool = False) -> Tuple[Iterator[str], str]:
    """The documents of INPUT files, or of stdin (INPUT ``-`` or none; lines with their "\\n" if ``keep_newline``,
    or JSON Lines); and a label for error messages ("document"/"line")."""
    from fastsw.corpus.readers import iter_documents

    if _reads_stdin(args, default=True):
        return _stdin_documents(args, keep_newline=keep_newline), "line"
    kwargs = _reading_kwargs(args, has_inputs=True, without_inputs=without_inputs)
    return iter_documents([Path(p) for p in args.inputs], **kwargs), "document"


def _text_lines(inputs: Sequence[str]) -> Iterator[Tuple[str, str, int]]:
    """(line, source name, 1-based number) of text files, or of stdin when there are none (or INPUT ``-``)."""
    if "-" in inputs and len(inputs) > 1:
        raise CliError("INPUT '-' (stdin) cannot be combined with INPUT files; give either '-' or the files")
    if not inputs or list(inputs) == ["-"]:
        from fastsw.corpus.readers import iter_stdin_lines

        for number, line in iter_stdin_lines(sys.stdin):
            yield line, STDIN_NAME, number
        return
    from fastsw.corpus.readers import open_text

    files = [str(p) for p in inputs]
    for name in files:  # fail fast on a missing file or a directory, before any output
        if not os.path.exists(name) or os.path.isdir(name):
            open_text(name).close()  # raises the reader's InputError naming the file
    for name in files:
        with open_text(name) as f:
            for number, line in enumerate(f, 1):
                yield line, name, number


def _load(path: str):
    """The model of ``-m MODEL``; ``-`` reads it from stdin."""
    from fastsw.tokenizer import Tokenizer

    if path != "-":
        return Tokenizer.load(path)
    import tempfile

    data = sys.stdin.buffer.read() if getattr(sys.stdin, "buffer", None) is not None else \
        sys.stdin.read().encode("utf-8")
    if not data.strip():
        raise CliError("-m -: stdin is empty; pipe a model file in (e.g. cat model.json | fastsw inspect -m -)")
    with tempfile.TemporaryDirectory(prefix="fastsw-") as tmp:
        path = os.path.join(tmp, "model.json")
        with open(path, "wb") as f:
            f.write(data)
        try:
            return Tokenizer.load(path)
        except ValueError as e:
            raise CliError(str(e).replace(path, STDIN_NAME)) from None


def _write_to_stdout(save) -> None:
    """``save(path)`` into a temporary file, then its bytes to stdout (``-o -``): a failed save writes nothing."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="fastsw-") as tmp:
        path = os.path.join(tmp, "out")
        save(path)
        sys.stdout.flush()
        out = getattr(sys.stdout, "buffer", None)
        with open(path, "rb") as f:
            if out is None:
                sys.stdout.write(f.read().decode("utf-8"))
            else:
                shutil.copyfileobj(f, out)
        sys.stdout.flush()


def _save(save, output: str) -> str:
    """Write with ``save`` to the path ``output``, or to stdout for ``-``; the name shown in the summary."""
    if output == "-":
        _write_to_stdout(save)
        return "<stdout>"
    save(output)
    return output


def _input_paths(args) -> List[str]:
    """Every file the command reads: INPUT, --lang, --from-counts and --dev paths."""
    paths = list(args.inputs or ())
    paths += getattr(args, "from_counts", None) or ()
    paths += [path for _, path in (getattr(args, "langs", None) or ())]
    paths += [path for _, path in (getattr(args, "devs", None) or ())]
    return paths


def _check_output_path(path: str, args) -> None:
    """Fail before any corpus is read on an -o that the writer would refuse (the rule is model_io's), or that
    is one of the files the command reads."""
    from fastsw.files import check_not_an_input, resolve_output_path

    if not path:
        raise CliError("-o/--output must not be empty")
    if path == "-":  # stdout
        return
    resolve_output_path(path)
    check_not_an_input(path, _input_paths(args))


def _check_train_options(args) -> None:
    """Cheap checks, in CLI wording, done before any corpus is read."""
    from fastsw.alphabet import default_alphabet
    from fastsw.trainers.train import MAX_VOCAB_SIZE

    if args.pretokenizer == "none" and args.algo not in ("bpe", "parity-bpe", "mingram"):
        raise CliError(f"--algo {args.algo} needs a pre-tokenizer that splits documents into words (supermerges "
                       "join runs of pretokens); --pretokenizer none makes one pretoken per document: add "
                       "--algo bpe, or use --pretokenizer script")
    if args.algo == "superbpe":
        if args.supermerges is None:
            raise CliError("--algo superbpe needs --supermerges S, the number of supermerges "
                           "(phase 1 then learns --vocab-size minus S tokens)")
        if args.supermerges >= args.vocab_size:
            raise CliError(f"--supermerges {args.supermerges} must be smaller than --vocab-size {args.vocab_size}")
    elif args.supermerges is not None:
        raise CliError(f"--supermerges is used only with --algo superbpe (got --algo {args.algo}); "
                       "BoundlessBPE decides the number of supermerges itself")
    if args.greedy_split and args.algo in ("bpe", "parity-bpe", "mingram"):
        raise CliError("--greedy-split splits supermerge candidates; use it with --algo boundless or superbpe")
    for flag, value in (("--min-count-floor", args.min_count_floor), ("--max-ngram-len", args.max_ngram_len)):
        if value is not None and not args.greedy_split:
            raise CliError(f"{flag} is used only with --greedy-split")
    if args.alphabet == "chars" and args.profile != "hf":
        raise CliError("--alphabet chars follows the hf rules; add --profile hf")
    if args.byte_fallback and args.alphabet != "chars":
        raise CliError("--byte-fallback is used only with --alphabet chars (a byte alphabet covers every text)")
    if len(set(args.special_tokens)) != len(args.special_tokens):
        raise CliError("--special-token values must be distinct")
    if any(not s for s in args.special_tokens):
        raise CliError("--special-token must not be empty")
    if args.vocab_size > MAX_VOCAB_SIZE:
        raise CliError(f"--vocab-size {args.vocab_size} is beyond 2**63-1, the largest fastsw accepts; use a smaller "
                       "one (any size beyond what the corpus can reach gives the same model, with a note that pairs "
                       "ran out)")
    if args.alphabet == "bytes":
        n_alpha = len(default_alphabet(args.profile))
        if args.vocab_size < n_alpha:
            raise CliError(f"--vocab-size {args.vocab_size} is smaller than the {n_alpha}-token byte alphabet of "
                           f"--profile {args.profile}; use --vocab-size {n_alpha + 1} or more")
        if args.algo == "superbpe" and args.vocab_size - args.supermerges < n_alpha:
            raise CliError(f"--vocab-size minus --supermerges ({args.vocab_size - args.supermerges}) is smaller "
                           f"than the {n_alpha}-token byte alphabet of --profile {args.profile}; the regular "
                           "vocabulary must hold the alphabet")
    mingram = {"overshoot": args.overshoot, "em_iterations": args.em_iterations, "score_delta": args.score_delta,
               "prune_criterion": args.prune_criterion}
    if args.algo != "mingram":
        for flag, value in (("--overshoot", args.overshoot), ("--em-iterations", args.em_iterations),
                            ("--score-delta", args.score_delta), ("--prune-criterion", args.prune_criterion),
                            ("--refill", args.refill or None)):
            if value is not None:
                raise CliError(f"{flag} applies to MinGram; add --algo mingram")
    else:
        from fastsw.trainers.mingram import check_mingram_options
        try:
            check_mingram_options(**mingram)
        except ValueError as e:
            raise CliError(str(e).replace("overshoot=", "--overshoot ").replace("em_iterations", "--em-iterations")
                           .replace("score_delta", "--score-delta")) from None
    if args.from_counts is not None:
        if args.inputs:
            raise CliError("give either INPUT files or --from-counts COUNTS, not both")
        if args.workers is not None:
            raise CliError("--workers applies to counting INPUT files; with --from-counts nothing is counted")
    _check_output_path(args.output, args)


def _language_args(args, *, weights: bool) -> dict:
    """train()'s language options from --lang/--lang-field (and --weight/--share), checked with CLI wording:
    ``{}`` without them, else ``inputs`` (a dict for --lang), ``lang_field``, ``weights``, ``shares``."""
    out: dict = {}
    from_counts = getattr(args, "from_counts", None) is not None
    if args.langs is not None:
        if args.inputs:
            raise CliError("give either INPUT files or --lang LANG=PATH, not both (name every file's language)")
        if args.lang_field is not None:
            raise CliError("give either --lang LANG=PATH or --lang-field F, not both")
        if from_counts:
            raise CliError("--lang applies to text; count files from 'fastsw count --lang' hold their languages")
        files: dict = {}
        for name, path in args.langs:
            files.setdefault(name, []).append(Path(path))
        out["inputs"] = files
    if args.lang_field is not None:
        if not args.lang_field:
            raise CliError("--lang-field must not be empty")
        if from_counts:
            raise CliError("--lang-field applies to JSONL text; count files hold their languages")
        if not args.inputs:
            raise CliError("--lang-field F reads INPUT JSONL files whose field F names the language; give them")
        if args.workers is not None:
            raise CliError("--workers does not apply to --lang-field, which counts the languages in this process")
        out["lang_field"] = args.lang_field
    if not weights:
        return out
    if args.weights is not None and args.shares is not None:
        raise CliError("give either --weight or --share, not both")
    for flag, given in (("--weight", args.weights), ("--share", args.shares)):
        if given is None:
            continue
        if not out and not from_counts:
            raise CliError(f"{flag} weights languages: name them with --lang LANG=PATH (or --lang-field F, or "
                           "--from-counts files counted with --lang)")
        values: dict = {}
        for name, value in given:
            if name in values:
                raise CliError(f"{flag} {name}=... is given twice")
            if "inputs" in out and name not in out["inputs"]:
                raise CliError(f"{flag} {name}={value}: no --lang {name}=PATH was given (languages: "
                               f"{', '.join(out['inputs'])})")
            values[name] = value
        out["weights" if flag == "--weight" else "shares"] = values
    return out


def _cap_workers(args) -> None:
    """--workers beyond the cores: use the cores, with a note (train() would warn)."""
    from fastsw.corpus.counting import capped_workers, default_workers

    if args.workers is not None:
        args.workers, note = capped_workers(args.workers, default_workers(), f"--workers {args.workers}")
        if note:
            _info(f"note: {note}")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _render(token: bytes) -> str:
    try:
        return json.dumps(token.decode("utf-8"), ensure_ascii=False)
    except UnicodeDecodeError:
        return repr(token)


def _atom_renderer(show):
    """:func:`_render` for a model with atoms: a token whose bytes are text and whole atoms is shown with its atoms
    in readable form (``show``)."""
    from fastsw.alphabet import atom_text

    def render(token: bytes) -> str:
        try:
            return json.dumps(show(atom_text(token)), ensure_ascii=False)
        except UnicodeDecodeError:
            return repr(token)
    return render


# ---- commands -----------------------------------------------------------------------------------------------------


def _mingram_args(args) -> dict:
    return {"overshoot": args.overshoot, "em_iterations": args.em_iterations, "score_delta": args.score_delta,
            "prune_criterion": args.prune_criterion}


def cmd_train(args) -> int:
    from fastsw.notes import VocabularyNotReachedWarning
    from fastsw.trainers.train import train

    stdin = _reads_stdin(args, default=False)
    if stdin:
        for flag, value in (("--from-counts", args.from_counts), ("--lang", args.langs),
                            ("--lang-field", args.lang_field), ("--scheduler", args.scheduler),
                            ("--dask-local", args.dask_local)):
            if value is not None:
                raise CliError(f"INPUT '-' (stdin) does not go with {flag}; leave one of them out")
    _check_train_options(args)
    languages = _language_args(args, weights=True)
    parity = _parity_args(args, languages)
    _cap_workers(args)
    on_dask = _dask_check(args)
    source: dict
    if on_dask:  # the shards are counted on a Dask cluster (fastsw.corpus.distributed.train)
        source = _reading_kwargs(args, has_inputs=True, without_inputs="")
    elif "inputs" in languages:  # --lang LANG=PATH
        source = {"workers": args.workers, **_reading_kwargs(args, has_inputs=True, without_inputs=""), **languages}
    elif args.from_counts is not None:
        from fastsw.corpus.counting import load_counts

        _reading_kwargs(args, has_inputs=False, without_inputs="--from-counts reads count files")
        counts = load_counts(args.from_counts)
        if args.algo not in ("bpe", "parity-bpe", "mingram") and not counts.has_runs:
            names = ", ".join(args.from_counts)
            raise CliError(f"--algo {args.algo} needs letter runs, but {names} "
                           f"{'was' if len(args.from_counts) == 1 else 'were (in part)'} counted with --no-runs; "
                           "count again without --no-runs, or use --algo bpe")
        if args.pretokenizer is not None and _pretokenizer_name(counts.pretokenizer_config) != args.pretokenizer:
            raise CliError(f"--pretokenizer {args.pretokenizer} differs from the pretokenizer of the count files "
                           f"(mode {_pretokenizer_name(counts.pretokenizer_config)}); leave --pretokenizer out "
                           "with --from-counts")
        if args.normalize is not None and (None if args.normalize == "none" else args.normalize) != counts.normalize:
            raise CliError(f"--normalize {args.normalize} differs from the normalization of the count files "
                           f"({counts.normalize or 'none'}); leave --normalize out with --from-counts")
        if (counts.pretokenizer_config or {}).get("mode") == "none" and args.algo not in ("bpe", "parity-bpe",
                                                                                          "mingram"):
            raise CliError(f"--algo {args.algo} needs a pre-tokenizer that splits documents into words; the count "
                           "files were made with --pretokenizer none (one pretoken per document): add --algo bpe")
        source = {"from_counts": counts, **languages}
    elif stdin:
        source = {"inputs": _stdin_documents(args, keep_newline=True), "workers": args.workers}
    elif args.inputs:
        source = {"inputs": [Path(p) for p in args.inputs], "workers": args.workers,
                  **_reading_kwargs(args, has_inputs=True, without_inputs=""), **languages}
    else:
        from fastsw.corpus.sample import SAMPLE_DIR, SEPARATOR, sample_files

        _reading_kwargs(args, has_inputs=False, without_inputs="training on the bundled sample corpus")
        files = sample_files()
        source = {"inputs": files, "workers": args.workers, "doc_mode": "separator", "separator": SEPARATOR}
        _info(f"no INPUT given: training on the bundled sample corpus ({len(files)} files in {SAMPLE_DIR})")

    progress = not args.no_progress
    start = time.perf_counter()
    with _progress_stderr(progress):
        with warnings.catch_warnings():  # the summary prints these notes
            warnings.simplefilter("ignore", VocabularyNotReachedWarning)
            with (_dask_client(args) if on_dask else contextlib.nullcontext()) as client:
                if on_dask:
                    from fastsw.corpus.distributed import train as dask_train

                    train = functools.partial(dask_train, client, args.inputs)
                tok = train(
                    algo=args.algo, vocab_size=args.vocab_size, supermerges=args.supermerges,
                    profile=args.profile, pretokenizer=args.pretokenizer, normalize=args.normalize,
                    alphabet=args.alphabet,
                    byte_fallback=args.byte_fallback, greedy_split=args.greedy_split,
                    min_count_floor=15 if args.min_count_floor is None else args.min_count_floor,
                    max_ngram_len=30 if args.max_ngram_len is None else args.max_ngram_len,
                    special_tokens=args.special_tokens, progress=progress, backend=args.backend, **source,
                    **parity,
                    **({"refill": args.refill, **{k: v for k, v in _mingram_args(args).items() if v is not None}}
                       if args.algo == "mingram" else {}),
                )
    if tok.training_info.get("backend_note"):  # train() warned it; the CLI reports the library's warnings as notes
        _info(f"note: {tok.training_info['backend_note']}")
    shown = _save(tok.save, args.output)
    elapsed = time.perf_counter() - start
    _print_summary(tok, shown, elapsed)
    return EXIT_OK


def cmd_count(args) -> int:
    from fastsw.corpus.counting import count_corpus, count_corpus_parallel, default_workers, native_counting
    from fastsw.pretokenizers.pretokenize import make_pretokenizer
    from fastsw.progress import Progress
    from fastsw.corpus.readers import iter_documents

    _check_output_path(args.output, args)
    stdin = _reads_stdin(args, default=False)
    languages = _language_args(args, weights=False)
    if stdin and languages:
        raise CliError(f"INPUT '-' (stdin) does not go with {'--lang' if 'inputs' in languages else '--lang-field'}"
                       "; leave one of them out")
    if not args.inputs and not languages and not stdin:
        raise CliError("give INPUT files to count ('-' for stdin), or --lang LANG=PATH (repeatable)")
    _cap_workers(args)
    if stdin and (args.scheduler is not None or args.dask_local is not None):
        raise CliError("INPUT '-' (stdin) is counted in this process; --scheduler/--dask-local count INPUT files")
    on_dask = _dask_check(args)
    reading = {} if stdin else _reading_kwargs(args, has_inputs=True, without_inputs="")
    if stdin:
        documents = _stdin_documents(args, keep_newline=True)
    elif on_dask:
        documents = None  # the workers read the INPUT files
    elif "lang_field" in languages:
        from fastsw.corpus.readers import iter_language_documents

        documents = iter_language_documents([Path(p) for p in args.inputs], lang_field=languages["lang_field"],
                                            text_field=reading["text_field"])
    elif "inputs" in languages:
        documents = {name: iter_documents(paths, **reading) for name, paths in languages["inputs"].items()}
    else:
        documents = iter_documents([Path(p) for p in args.inputs], **reading)
    progress = not args.no_progress
    with _progress_stderr(progress):
        pretok = make_pretokenizer(args.pretokenizer)

        def count(documents, label=""):
            if args.workers is None and native_counting(pretok):
                threads = default_workers()
                bar = Progress("counting" + label + (f" ({threads} threads)" if threads > 1 else ""),
                               enabled=progress)
                counts = count_corpus(documents, pretok, collect_runs=not args.no_runs, progress=bar,
                                      threads=threads, normalize=args.normalize)
            else:
                workers = args.workers or default_workers()
                bar = Progress("counting" + label + (f" ({workers} workers)" if workers > 1 else ""),
                               enabled=progress)
                counts = count_corpus_parallel(documents, pretok, collect_runs=not args.no_runs, workers=workers,
                                               progress=bar, normalize=args.normalize)
            return counts, bar.close()

        if on_dask:
            from fastsw.corpus.distributed import count as dask_count

            start = time.perf_counter()
            with _dask_client(args) as client:
                counts = dask_count(client, args.inputs, pretokenizer=pretok, collect_runs=not args.no_runs,
                                    normalize=args.normalize, progress=progress, **reading)
            elapsed = time.perf_counter() - start
        elif "lang_field" in languages:
            from fastsw.corpus.counting import count_languages

            bar = Progress("counting", enabled=progress)
            counts = count_languages(documents, pretok, collect_runs=not args.no_runs, progress=bar,
                                     normalize=args.normalize)
            elapsed = bar.close()
        elif "inputs" in languages:
            from fastsw.corpus.counting import Counts

            tables, elapsed = {}, 0.0
            for name, docs in documents.items():
                tables[name], seconds = count(docs, f" {name}")
                elapsed += seconds
            counts = Counts.from_languages(tables)
        else:
            counts, elapsed = count(documents)
        for name, b in zip(counts.languages or (), counts.language_bytes or ()):
            if b == 0:
                raise CliError(f"language {name!r} has no text (0 bytes); give it a file with text or leave it out")
    shown = _save(counts.save, args.output)
    runs = f", {_plural(counts.n_runs, 'distinct letter run')}" if counts.has_runs else " (no letter runs)"
    rate = counts.n_bytes / 1e6 / elapsed if elapsed > 0 else 0.0
    _info(f"counted {_plural(counts.n_documents, 'document')}, {counts.n_bytes / 1e6:.2f} MB in {elapsed:.1f} s "
          f"({rate:.1f} MB/s): {_plural(len(counts.pretokens), 'distinct pretoken')}{runs}"
          + (f", languages {', '.join(counts.languages)}" if counts.languages else "") + f"; saved to {shown}")
    return EXIT_OK


def _print_summary(tok, output: str, elapsed: float) -> None:
    info = tok.training_info
    n_alpha = len(tok.alphabet)
    lines = [
        f"trained {(info.get('options') or {}).get('algo', tok.algo)} (profile {tok.profile}) in {elapsed:.1f} s",
        f"  vocabulary:  {tok.vocab_size} tokens = {n_alpha} alphabet + {tok.n_regular} regular merges "
        f"+ {tok.n_super} supermerges"
        + (f" (+ {len(tok.special_tokens)} special tokens)" if tok.special_tokens else ""),
        f"  corpus:      {_plural(info.get('documents', 0), 'document')}, {info.get('bytes', 0) / 1e6:.2f} MB",
    ]
    if tok.algo == "mingram":
        lines[1] = (f"  vocabulary:  {tok.vocab_size} tokens = {n_alpha} alphabet + {tok.vocab_size - n_alpha} learned "
                    f"(MinGram from a {info['mingram']['seed_size']}-token BPE seed)"
                    + (f" (+ {len(tok.special_tokens)} special tokens)" if tok.special_tokens else ""))
    seconds = info.get("seconds") or {}
    if seconds:
        lines.append("  seconds:     " + ", ".join(f"{stage} {s:.2f}" for stage, s in seconds.items()))
    for note in info.get("notes") or ():
        lines.append(f"  note:        {note}")
    lines.append(f"  saved to:    {output}")
    sys.stderr.write("fastsw: " + "\n".join(lines) + "\n")
    sys.stderr.flush()


# cmd_encode hands INPUT documents to the encoder in batches of at most this many documents or characters
# (one encode_batch_to_numpy call each instead of one encode per line: ~8 us of set-up per call).
ENCODE_BATCH_DOCS = 4096
ENCODE_BATCH_CHARS = 1 << 20


def _batches(documents: Iterator[str]) -> Iterator[List[str]]:
    batch: List[str] = []
    chars = 0
    for doc in documents:
        batch.append(doc)
        chars += len(doc)
        if len(batch) >= ENCODE_BATCH_DOCS or chars >= ENCODE_BATCH_CHARS:
            yield batch
            batch, chars = [], 0
    if batch:
        yield batch


def cmd_encode(args) -> int:
    import numpy as np

    if args.output is not None:
        _check_output_path(args.output, args)
    # a line's newline belongs to its document (as in training), so that 'fastsw decode' can print the decoded
    # text as it is and 'fastsw encode FILE | fastsw decode' gives FILE back
    documents, unit = _documents(args, without_inputs="stdin is read one document per line", keep_newline=True)
    tok = _load(args.model)
    if args.format != "ids" or args.output is not None:
        return _encode_binary(args, tok, documents)
    out = _Output()

    def fail(number: int, e: ValueError):
        where = f"{STDIN_NAME} line {number}" if unit == "line" else f"document {number}"
        return CliError(f"{where}: {e}")

    if unit == "line":  # stdin: each line answered at once (usable as a co-process)
        for number, doc in enumerate(documents, 1):
            try:
                ids = tok.encode_ordinary(doc)
            except ValueError as e:
                raise fail(number, e) from None
            out.line(" ".join(map(str, ids)))
            out.flush()
        return EXIT_OK
    id_strings = np.array([str(i) for i in range(tok.n_vocab)], dtype=object)  # str(id), made once
    first = 1
    for batch in _batches(documents):
        try:
            ids, offsets = tok.encode_batch_to_numpy(batch, disallowed_special=())
        except ValueError:
            for number, doc in enumerate(batch, first):  # name the document
                try:
                    tok.encode_ordinary(doc)
                except ValueError as e:
                    raise fail(number, e) from None
            raise
        flat = id_strings.take(ids).tolist()
        bounds = offsets.tolist()
        out.write("".join(" ".join(flat[a:b]) + "\n" for a, b in zip(bounds, bounds[1:])))
        first += len(batch)
    out.flush()
    return EXIT_OK


def cmd_shard(args) -> int:
    from fastsw.encoding.shard import shard, verify

    _check_connect_timeout(args)
    if args.verify:
        m = verify(args.output, _load(args.model))
        _info(f"{args.output}: {_plural(len(m['shards']), 'shard')} match the manifest"
              + ("" if m.get("complete") else " (the run is not complete: run the command without --verify "
                                               "to resume it)"))
        return EXIT_OK
    if not args.inputs:
        raise CliError("give the INPUT files, globs or directories to shard (or --verify to check DIR)")
    reading = _reading_kwargs(args, has_inputs=True, without_inputs="")
    eot = None if args.eot == "none" else args.eot
    tok = _load(args.model)
    if eot == "auto" and "<|endoftext|>" not in tok.special_tokens:
        _info(f"note: {args.model} has no <|endoftext|> special token, so no token separates the documents "
              "(the .idx.npy files mark where each starts); give --eot TOKEN to add one")
    dask = args.scheduler is not None or args.dask_local is not None
    with _progress_stderr(not args.no_progress), (_dask_client(args) if dask else contextlib.nullcontext()) as c:
        m = shard(args.inputs, tok, args.output, format=args.format, dtype=args.dtype, eot=eot, bos=args.bos,
                  shard_tokens=args.shard_tokens, workers=args.workers, batch_chars=args.batch_mb << 20,
                  progress=not args.no_progress, client=c, **reading)
    _info(f"{args.output}: {_plural(len(m['shards']), 'shard')}, {m['tokens']:,} tokens, "
          f"{m['documents']:,} documents ({args.format}, {m['options']['dtype']})")
    return EXIT_OK


def _encode_binary(args, tok, documents) -> int:
    """encode --format bin|npy (or any format with -o): fastsw.shard's framing, to a file or stdout."""
    from fastsw.files import atomic_open
    from fastsw.encoding.shard import encode_stream

    if args.format == "ids":
        from fastsw.files import atomic_write_text

        atomic_write_text(args.output, "".join(" ".join(map(str, ids)) + "\n" for ids in
                                               tok.encode_ordinary_batch(list(documents))))
        return EXIT_OK
    eot = None if args.eot == "none" else args.eot
    if eot == "auto" and "<|endoftext|>" not in tok.special_tokens:
        _info(f"note: {args.model} has no <|endoftext|> special token, so no token separates the documents; "
              "give --eot TOKEN to add one")
        eot = None
    options = {"format": args.format, "dtype": args.dtype, "eot": eot}
    if args.output is None:
        if sys.stdout.isatty():
            raise CliError(f"--format {args.format} writes binary data; redirect stdout or give -o FILE")
        encode_stream(documents, tok, sys.stdout.buffer, **options)
        sys.stdout.flush()
        return EXIT_OK
    with atomic_open(args.output, "wb") as f:
        encode_stream(documents, tok, f, **options)
    return EXIT_OK


_ID_RE = re.compile(r"[0-9]+")


def cmd_decode(args) -> int:
    from_stdin = not args.inputs or args.inputs == ["-"]
    if _model_on_stdin(args) and from_stdin:
        raise CliError("-m - reads the model from stdin, so the ids cannot come from stdin too; give INPUT files")
    lines = _text_lines(args.inputs)
    tok = _load(args.model)
    out = _Output()
    flush_each = from_stdin
    for line, source, number in lines:
        ids: List[int] = []
        for field in line.split():
            if not _ID_RE.fullmatch(field):
                raise CliError(f"{source} line {number}: {field[:40]!r} is not a token id "
                               "(expected non-negative integers separated by spaces)")
            tid = int(field)
            problem = tok._id_problem(tid)
            if problem is not None:
                raise CliError(f"{source} line {number}: {problem}")
            ids.append(tid)
        text = tok.decode(ids)
        if args.jsonl:
            out.line(json.dumps({"text": text}, ensure_ascii=False))
        else:
            out.write(text)  # the ids own the newlines: nothing is added
        if flush_each:
            out.flush()
    out.flush()
    return EXIT_OK


def cmd_pretokenize(args) -> int:
    from fastsw.pretokenizers.pretokenize import make_pretokenizer

    documents, unit = _documents(args, without_inputs="stdin is read one document per line")
    from fastsw.pretokenizers.pretokenize import normalize_text

    tok = _load(args.model) if args.model else None
    pretok = tok.pretokenizer if tok else make_pretokenizer(args.pretokenizer or "script")
    form = tok.normalize if tok else None  # a model's documents are normalized before pre-tokenization
    show = pretok.show if pretok.atoms else None  # a scheme's atoms in readable form (markers as ¦ ↑ ⇑)
    out = _Output()
    flush_each = unit == "line"
    for doc in documents:
        pieces = pretok.pretokenize(normalize_text(doc, form))
        out.line(json.dumps([show(p) for p in pieces] if show else pieces, ensure_ascii=False))
        if flush_each:
            out.flush()
    out.flush()
    return EXIT_OK


def cmd_inspect(args) -> int:
    from fastsw.eval.duplication import model_duplication

    if args.model is not None and args.model_path is not None:
        raise CliError(f"give the model once: as MODEL ({args.model_path}) or as -m MODEL ({args.model})")
    args.model = args.model if args.model is not None else args.model_path
    if args.model is None:
        raise CliError("give the model to inspect: fastsw inspect -m MODEL (or fastsw inspect MODEL)")
    tok = _load(args.model)
    out = _Output()
    vocab = tok.vocab
    if args.json and tok.algo == "mingram":  # {"algo", "vocab_size", "tokens": [{"id", "hex", "log_prob"}]}
        out.line(json.dumps(tok.inspect_json(), ensure_ascii=False))
        out.flush()
        return EXIT_OK
    if args.json:
        data = {
            "algo": tok.algo,
            "profile": tok.profile,
            "vocab_size": tok.vocab_size,
            "merges": [{"id": m.id, "left": vocab[m.left].hex(), "right": vocab[m.right].hex(),
                        "count": m.count, "super": m.super} for m in tok.merges],
        }
        out.line(json.dumps(data, ensure_ascii=False))
        out.flush()
        return EXIT_OK
    info = tok.training_info
    lines = [
        f"model:          {STDIN_NAME if args.model == '-' else args.model}",
        f"algo:           {tok.algo}",
        f"profile:        {tok.profile}",
        f"alphabet:       {tok.alphabet.kind} ({len(tok.alphabet)} tokens)",
        f"pretokenizer:   {_pretokenizer_name(tok.pretokenizer.to_config())}",
    ] + ([f"normalize:      {tok.normalize}"] if tok.normalize else []) + [
        f"vocab size:     {tok.vocab_size} ({tok.n_regular} regular merges, {tok.n_super} supermerges)",
        "special tokens: " + (", ".join(f"{_render(s.encode('utf-8'))}={i}" for s, i in
                                        sorted(tok.special_tokens.items(), key=lambda kv: kv[1])) or "none"),
    ]
    if "documents" in info:
        lines.append(f"trained on:     {_plural(info['documents'], 'document')}, {info.get('bytes', 0) / 1e6:.2f} MB")
    dup = model_duplication(tok)  # seed 002 Table 5
    lines.append(f"duplication:    {100 * dup['space']:.1f} % of entries differ from another only by a leading "
                 f"space, {100 * dup['case']:.1f} % only by case")
    if tok.algo == "mingram":
        k = next(i for i, text in enumerate(lines) if text.startswith("vocab size:"))
        lines[k] = f"vocab size:     {tok.vocab_size} (MinGram, score_delta {tok.score_delta})"
        best = sorted(range(tok.vocab_size), key=lambda i: -tok.log_probs[i])[:10]
        lines.append(f"{len(best)} most probable tokens:")
        render = _render
        if hasattr(tok.alphabet, "atoms"):  # atoms (markers) as ¦ ↑ ⇑
            render = _atom_renderer(tok.pretokenizer.show)
        lines += [f"  {i:>6}: {render(vocab[i])}  (log_prob {tok.log_probs[i]:.4f})" for i in best]
        for text in lines:
            out.line(text)
        out.flush()
        return EXIT_OK
    shown = tok.merges[:10]
    render = _render
    if hasattr(tok.alphabet, "atoms"):  # atoms (markers) as ¦ ↑ ⇑
        render = _atom_renderer(tok.pretokenizer.show)
    lines.append(f"first {len(shown)} merges:" if shown else "merges:         none")
    for m in shown:
        kind = "  [super]" if m.super else ""
        lines.append(f"  {m.id:>6}: {render(vocab[m.left])} + {render(vocab[m.right])} -> "
                     f"{render(vocab[m.id])}  (count {m.count}){kind}")
    for text in lines:
        out.line(text)
    out.flush()
    return EXIT_OK


def _lang_path_arg(text: str) -> Tuple[str, str]:
    lang, sep, path = text.partition("=")
    if not sep or not lang or not path:
        raise argparse.ArgumentTypeError(f"{text!r} is not LANG=PATH; write e.g. --text en=test.en.jsonl")
    return lang, path


def cmd_eval(args) -> int:
    from fastsw.eval.evaluate import MATPLOTLIB_MISSING, evaluate, markdown_table, to_json, write_report
    from fastsw.progress import Progress

    texts = {}
    for lang, path in args.texts:
        if lang in texts:
            raise CliError(f"--text {lang}= is given twice ({texts[lang]} and {path}); give each language once")
        texts[lang] = path
    if args.alpha <= 0 or args.alpha != args.alpha:
        raise CliError(f"--alpha {args.alpha} must be a number > 0 (1 for Shannon entropy)")
    if args.report is not None:
        if os.path.exists(args.report) and not os.path.isdir(args.report):
            raise CliError(f"--report {args.report} exists and is not a directory; give a directory for the report")
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise CliError(MATPLOTLIB_MISSING) from None
    args.inputs = list(texts.values())
    reading = _reading_kwargs(args, has_inputs=True, without_inputs="")
    for lang, path in texts.items():  # fail on a missing file before any model is loaded
        if not os.path.isfile(path):
            what = "is a directory" if os.path.isdir(path) else "does not exist"
            raise CliError(f"--text {lang}={path}: the file {what}; give an existing text file")
    progress = not args.no_progress
    with _progress_stderr(progress):
        bar = Progress("evaluating", total=len(args.models) * len(texts), unit=" texts", enabled=progress)
        models = args.models  # loaded here for --report, whose tokens.html shows them (fastsw.eval.show)
        if args.report is not None and len(set(models)) == len(models):
            models = {path: _load(path) for path in models}
        result = evaluate(models, texts, alpha=args.alpha, reading=reading, progress=bar)
        bar.close()
    if args.report is not None:
        pages = {}
        if isinstance(models, dict):  # the tokens of every model on every text (fastsw.eval.show)
            from fastsw.eval.evaluate import tokens_page
            words = ["fastsw", "eval"] + [w for m in models for w in ("-m", m)] + ["--report", args.report]
            words += [w for lang, path in texts.items() for w in ("--text", f"{lang}={path}")]
            pages["tokens.html"] = tokens_page(models, texts, result, reading=reading, command=_command(words))
        write_report(result, args.report, pages=pages)
    out = _Output()
    out.write(to_json(result) + "\n" if args.json else markdown_table(result))
    out.flush()
    if args.report is not None:
        _info(f"report written to {args.report}")
    return EXIT_OK


def _command(words: Sequence[str]) -> str:
    import shlex
    return " ".join(shlex.quote(str(w)) for w in words)


def _show_texts(args) -> dict:
    """``{language: path or [text]}`` of ``fastsw show``: the --text files, and TEXT, FILE or stdin as ``text``."""
    texts = {}
    for lang, path in args.texts:
        if lang in texts:
            raise CliError(f"--text {lang}= is given twice ({texts[lang]} and {path}); give each language once")
        if not os.path.isfile(path):
            what = "is a directory" if os.path.isdir(path) else "does not exist"
            raise CliError(f"--text {lang}={path}: the file {what}; give an existing text file")
        texts[lang] = path
    source = args.source
    if source is None and not texts:
        if args.html is not None or sys.stdin is None or sys.stdin.isatty():
            raise CliError("nothing to show: give a TEXT, a FILE, - for stdin"
                           + (" or --text LANG=FILE" if args.html is not None else ""))
        source = "-"
    if source is not None:
        if "text" in texts:
            raise CliError("--text text= and a TEXT argument both name the language 'text'; give one of them")
        if source == "-":
            data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode("utf-8")
            try:
                texts["text"] = [data.decode("utf-8")]
            except UnicodeDecodeError as e:
                raise CliError(f"{STDIN_NAME}: invalid UTF-8 at byte {e.start} ({e.reason}); the input must be "
                               "UTF-8 text") from None
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
        raise CliError("a model is given twice with -m; give each model once")
    models = {path: _load(path) for path in args.models}
    allowed = set() if args.ordinary else "all"
    if args.html is None:
        color = use_color(args.color)
        documents = {lang: iter_documents(Path(s)) if isinstance(s, str) else s for lang, s in texts.items()}
        out = _Output()
        out.write(render_models(models, documents, sample_chars=args.sample_chars, color=color, ids=args.ids,
                                allowed_special=allowed, headers=bool(args.texts)))
        out.flush()
        return EXIT_OK
    with _progress_stderr(not args.no_progress):
        bar = Progress("evaluating", total=len(models) * len(texts), unit=" texts", enabled=not args.no_progress)
        result = evaluate(models, texts, progress=bar)
        bar.close()
    words = ["fastsw", "show", "--html", args.html] + [w for m in args.models for w in ("-m", m)]
    words += [w for lang, path in args.texts for w in ("--text", f"{lang}={path}")]
    words += ([] if args.sample_chars is None else ["--sample-chars", args.sample_chars])
    words += (["--ordinary"] if args.ordinary else []) + ([] if args.source is None else ["--", args.source])
    atomic_write_text(args.html, tokens_page(models, texts, result, sample_chars=args.sample_chars,
                                             command=_command(words), allowed_special=allowed))
    _info(f"page written to {args.html}")
    return EXIT_OK


# ---- entry point -----------------------------------------------------------------------------------------------------


def _silence_stdout() -> None:
    """After EPIPE: point stdout at /dev/null so that the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        finally:
            os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``) and return the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version, or an argument error already reported
        return e.code if isinstance(e.code, int) else (0 if e.code is None else EXIT_ERROR)
    if args.command is None:
        _print_error("missing COMMAND: one of train, count, encode, decode, pretokenize, inspect, eval, show, shard "
                     "(see 'fastsw --help')")
        return EXIT_ERROR
    try:
        with warnings.catch_warnings():
            # options the library warns about are reported by the CLI itself, as notes
            # (_reading_kwargs, _cap_workers), before the work starts
            warnings.simplefilter("ignore", OptionWarning)
            return args.func(args)
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        try:
            sys.stderr.write("fastsw: interrupted\n")
        except (OSError, ValueError):
            pass
        return EXIT_INTERRUPTED
    except ValueError as e:  # InputError, CliError, the library's argument checks, bad model files
        _print_error(str(e))
        return EXIT_ERROR
    except OSError as e:
        if e.filename is not None and e.strerror:
            _print_error(f"{e.filename}: {e.strerror}")
        else:
            _print_error(str(e) or type(e).__name__)
        return EXIT_ERROR
