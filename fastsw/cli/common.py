"""What the commands of the ``fastsw`` command line share: exit codes, the argument parser class and argument
types, the options several commands take (reading INPUT files, languages, text, Dask), output to stdout, errors,
progress on stderr, reading models and documents."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
from pathlib import Path
from typing import Iterator, List, Sequence, Tuple

from fastsw.corpus.readers import STDIN_FORMATS

__all__ = ["CliError", "parse_escapes"]


EXIT_OK = 0


EXIT_ERROR = 2


EXIT_INTERRUPTED = 130


EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a tool killed by SIGPIPE reports


STDIN_NAME = "<stdin>"


class CliError(ValueError):
    """A user error detected by the CLI itself (reported like any other ValueError)."""


class Parser(argparse.ArgumentParser):
    """argparse with a one-line error message (no usage block) that points at --help."""

    def error(self, message: str):  # type: ignore[override]
        hint = f" (see '{self.prog} --help')"
        print_error(message + hint)
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
            raise ValueError(
                f"the \\{bad[1]} escape needs {word} hex digits (0-9, a-f), as in {example}; got "
                f"{text[m.start() : m.start() + 2 + n]!r}"
            )
        raise ValueError(f"unknown escape {bad!r}; supported: \\n \\r \\t \\0 \\f \\v \\\\ \\xHH \\uHHHH \\UHHHHHHHH")

    return _ESCAPE_RE.sub(replace, text)


def _separator_arg(text: str) -> str:
    try:
        value = parse_escapes(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if not value:
        raise argparse.ArgumentTypeError("the separator must not be empty")
    return value


def int_arg(minimum: int, what: str):
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


def lang_pair(what: str):
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
                raise argparse.ArgumentTypeError(f"{text!r}: {value!r} is not a number (e.g. 2, 0.5 or 3/2)") from None
            if number <= 0:
                raise argparse.ArgumentTypeError(f"{text!r}: the {what.lower()} must be > 0")
        return name, value

    convert.__name__ = f"LANG={what}"
    return convert


#: The help of the repeatable ``LANG=VALUE`` options of :func:`add_language_options`.
_LANG_PAIR_HELP = {
    "--lang": "a file of language LANG (repeatable; several files per language are fine); instead of INPUT files",
    "--weight": "multiply LANG's counts by W > 0 (2, 0.5 or 3/2; exact; 2 = its text twice; default 1; repeatable)",
    "--share": "target byte share of LANG (every language, summing to exactly 1): weight = 100000 * P / bytes of LANG",
}


def add_language_options(p: argparse.ArgumentParser, *, weights: bool) -> None:
    g = p.add_argument_group(
        "languages",
        "Language-tagged input: one count column per language" + (", weighted at training time." if weights else "."),
    )

    def lang_pairs(flag: str, what: str, metavar: str) -> None:
        """The repeatable option ``flag LANG=VALUE``: its ``(LANG, VALUE)`` pairs in ``args.<flag>s``."""
        g.add_argument(
            flag,
            action="append",
            type=lang_pair(what),
            default=None,
            metavar=metavar,
            dest=flag[2:] + "s",
            help=_LANG_PAIR_HELP[flag],
        )

    lang_pairs("--lang", "PATH", "LANG=PATH")
    g.add_argument(
        "--lang-field", metavar="F", default=None, help="INPUT files are JSONL whose field F names each line's language"
    )
    if weights:
        lang_pairs("--weight", "WEIGHT", "LANG=W")
        lang_pairs("--share", "SHARE", "LANG=P")


positive = int_arg(1, "a positive integer")


def _seconds(value: str) -> float:
    """A number of seconds > 0 (argparse type)."""
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds > 0")
    return seconds


def pretokenizer_arg(text: str) -> str:
    """A --pretokenizer value: script, simple, none or a scheme name (boundary[w,p,d]+caps, script-v3, ...),
    checked here so that a wrong name is one error listing the valid ones."""
    from fastsw.pretokenizers.pretokenize import make_pretokenizer

    try:
        make_pretokenizer(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def pretokenizer_name(config) -> str:
    """The --pretokenizer spelling of a stored pre-tokenizer config (a scheme's name, else its mode)."""
    config = config or {}
    return config.get("scheme") or config.get("name") or config.get("mode")


PRETOKENIZER_HELP = (
    "script: script chunking + GPT-4o regex (default); simple: GPT-4o regex only; none: each "
    "document is one pretoken, merges may cross spaces; boundary[w], boundary[w,p], "
    "boundary[w,p,d], optionally +caps, +shift or +upper: explicit boundary markers and caps "
    "codes (seed 002); script-v3, script-v3+boundary[...]: SCRIPT v3 encoding"
)


def add_text_options(p: argparse.ArgumentParser, *, default, note: str) -> None:
    """--pretokenizer and --normalize, as train and count take them."""
    p.add_argument(
        "--pretokenizer", type=pretokenizer_arg, default=default, metavar="NAME", help=PRETOKENIZER_HELP + note
    )
    p.add_argument(
        "--normalize",
        choices=("none", "nfc", "nfkc"),
        default=None,
        help="Unicode normalization of every document before pre-tokenization, recorded in the "
        "output and applied again at encode time: none (lossless, the default), nfc or nfkc; "
        "nothing else is ever changed (no whitespace collapsing, no lowercasing)",
    )


def stdin_help(no_input_too: bool) -> str:
    return (
        "INPUT '-'" + (" (or no INPUT)" if no_input_too else "") + " reads stdin, one document per line, or as "
        "JSON Lines when its first non-blank line is a JSON object (then every non-blank line must be one, "
        "holding --text-field); --stdin-format text or jsonl decides instead."
    )


def add_reading_options(p: argparse.ArgumentParser, *, stdin_note: str, stdin: bool = False) -> None:
    g = p.add_argument_group(
        "reading INPUT files",
        "*.jsonl / *.ndjson: one JSON object per line, the document is --text-field. "
        "Other files are UTF-8 text cut by --doc-mode: 'line' (default; each line, with its "
        "newline, is a document), 'file' (the whole file) or 'separator' (pieces between --separator). "
        "Files may be compressed: .gz, .bz2, .xz, .zst (pip install 'fastsw[zstd]'). " + stdin_note,
    )
    g.add_argument(
        "--text-field",
        metavar="F",
        default=None,
        help="JSON field holding the text in .jsonl inputs and JSON Lines on stdin (default: text)",
    )
    if stdin:
        g.add_argument(
            "--stdin-format",
            choices=STDIN_FORMATS,
            default=None,
            help="how stdin is read: auto (default: JSON Lines when the first non-blank line is a JSON "
            "object, else text), text (one document per line) or jsonl",
        )
    g.add_argument(
        "--doc-mode",
        choices=("line", "file", "separator"),
        default=None,
        help="how plain-text inputs are cut into documents (default: line, or separator when --separator is given)",
    )
    g.add_argument(
        "--separator",
        metavar="STR",
        type=_separator_arg,
        default=None,
        help=r"document separator for --doc-mode separator; escapes such as \n, \t, \\, \xHH, "
        r"\uHHHH are understood, e.g. --separator '\n\n\n'",
    )


def add_model_option(p: argparse.ArgumentParser) -> None:
    """The required ``-m MODEL`` of the commands that read one model and documents or ids (``-`` reads it from
    stdin)."""
    p.add_argument(
        "-m",
        "--model",
        required=True,
        metavar="MODEL",
        help="model file written by 'fastsw train' ('-': read it from stdin, with INPUT files)",
    )


def add_id_array_options(g, *, prefix: str, eot_help: str) -> None:
    """--dtype and --eot of the commands that write token ids as arrays (``encode --format bin/npy``, ``shard``):
    the id type and the token after each document (``auto``: MODEL's ``<|endoftext|>``, ``none``: no token)."""
    g.add_argument(
        "--dtype",
        choices=("uint16", "uint32"),
        default=None,
        help=prefix + "id type (default: uint16 when every id of MODEL fits, else uint32)",
    )
    g.add_argument("--eot", metavar="TOKEN", default="auto", help=eot_help)


def add_dask_options(p: argparse.ArgumentParser) -> None:
    from fastsw.corpus.distributed import CONNECT_TIMEOUT

    group = p.add_argument_group(
        "Dask cluster",
        "count INPUT files (the shards, one task each) on a Dask cluster "
        "(pip install 'fastsw[dask]'; see fastsw.corpus.distributed)",
    )
    g = group.add_mutually_exclusive_group()
    g.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="the address of a running Dask scheduler, e.g. tcp://10.0.0.5:8786 (the workers must "
        "be able to read the INPUT paths)",
    )
    g.add_argument(
        "--dask-local",
        type=positive,
        metavar="N",
        default=None,
        help="start a Dask LocalCluster of N worker processes on this machine for the run",
    )
    group.add_argument(
        "--connect-timeout",
        type=_seconds,
        metavar="SECONDS",
        default=None,
        help=f"how long to wait for the scheduler of --scheduler to answer (default: {CONNECT_TIMEOUT:g})",
    )


def check_connect_timeout(args) -> None:
    if args.connect_timeout is not None and args.scheduler is None:
        raise CliError(
            "--connect-timeout is how long to wait for the scheduler of --scheduler; give --scheduler "
            "ADDRESS, or leave --connect-timeout out"
        )


def given_flags(*options: Tuple[str, object]) -> List[str]:
    """The flags, in order, of the ``(flag, value)`` options that were given (their value is not None)."""
    return [flag for flag, value in options if value is not None]


def dask_check(args) -> bool:
    """Whether --scheduler/--dask-local was given, after checking the options that do not go with it."""
    check_connect_timeout(args)
    if args.scheduler is None and args.dask_local is None:
        return False
    flag = "--scheduler" if args.scheduler is not None else "--dask-local"
    if not args.inputs:
        raise CliError(f"{flag} counts INPUT files on a Dask cluster; give the INPUT files (the shards)")
    clash = given_flags(
        ("--workers", args.workers),
        ("--lang", args.langs),
        ("--lang-field", args.lang_field),
        ("--from-counts", getattr(args, "from_counts", None)),
        ("--phase1", getattr(args, "phase1", None)),
    )
    if getattr(args, "algo", None) == "parity-bpe":
        clash.append("--algo parity-bpe")
    if clash:
        raise CliError(
            f"{clash[0]} does not go with {flag} (the INPUT files are counted on the Dask cluster, "
            "without languages); leave one of them out"
        )
    from fastsw.corpus.distributed import check_shards

    check_shards(args.inputs)  # before connecting: one format
    return True


def dask_client(args):
    """A Dask client for --scheduler/--dask-local (fastsw.corpus.distributed.connect)."""
    from fastsw.corpus.distributed import CONNECT_TIMEOUT, connect

    return connect(args.scheduler, local_workers=args.dask_local, timeout=args.connect_timeout or CONNECT_TIMEOUT)


class Output:
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


def print_error(message: str) -> None:
    try:
        sys.stderr.write(f"fastsw: error: {_one_line(message)}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def info(message: str) -> None:
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
def progress_stderr(enabled: bool):
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


def reading_kwargs(args, *, has_inputs: bool, without_inputs: str) -> dict:
    """iter_documents options from --text-field/--doc-mode/--separator, checked with CLI wording."""
    given = given_flags(
        ("--text-field", args.text_field), ("--doc-mode", args.doc_mode), ("--separator", args.separator)
    )
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
                info(f"note: {note}")
    return {"text_field": args.text_field, "doc_mode": doc_mode, "separator": args.separator}


def reads_stdin(args, *, default: bool) -> bool:
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


def stdin_documents(args, *, keep_newline: bool) -> Iterator[str]:
    """The documents on stdin (readers.iter_stdin_documents), after refusing the options of INPUT files."""
    from fastsw.corpus.readers import iter_stdin_documents

    for flag, value in (("--doc-mode", args.doc_mode), ("--separator", args.separator)):
        if value is not None:
            raise CliError(
                f"{flag} applies to INPUT files; stdin is read one document per line, or as JSON Lines (--stdin-format)"
            )
    if args.text_field is not None and not args.text_field:
        raise CliError("--text-field must not be empty")
    if model_on_stdin(args):
        raise CliError("-m - reads the model from stdin, so the documents cannot come from stdin too; give INPUT files")
    return iter_stdin_documents(
        sys.stdin, fmt=args.stdin_format or "auto", text_field=args.text_field, keep_newline=keep_newline
    )


def model_on_stdin(args) -> bool:
    return getattr(args, "model", None) == "-"


def documents(args, *, without_inputs: str, keep_newline: bool = False) -> Tuple[Iterator[str], str]:
    """The documents of INPUT files, or of stdin (INPUT ``-`` or none; lines with their "\\n" if ``keep_newline``,
    or JSON Lines); and a label for error messages ("document"/"line")."""
    from fastsw.corpus.readers import iter_documents

    if reads_stdin(args, default=True):
        return stdin_documents(args, keep_newline=keep_newline), "line"
    kwargs = reading_kwargs(args, has_inputs=True, without_inputs=without_inputs)
    return iter_documents([Path(p) for p in args.inputs], **kwargs), "document"


def text_lines(inputs: Sequence[str]) -> Iterator[Tuple[str, str, int]]:
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


def load_model(path: str):
    """The model of ``-m MODEL``; ``-`` reads it from stdin."""
    from fastsw.tokenizer import Tokenizer

    if path != "-":
        return Tokenizer.load(path)
    import tempfile

    data = (
        sys.stdin.buffer.read() if getattr(sys.stdin, "buffer", None) is not None else sys.stdin.read().encode("utf-8")
    )
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


def save_output(save, output: str) -> str:
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


def check_output_path(path: str, args) -> None:
    """Fail before any corpus is read on an -o that the writer would refuse (the rule is model_io's), or that
    is one of the files the command reads."""
    from fastsw.files import check_not_an_input, resolve_output_path

    if not path:
        raise CliError("-o/--output must not be empty")
    if path == "-":  # stdout
        return
    resolve_output_path(path)
    check_not_an_input(path, _input_paths(args))


def language_args(args, *, weights: bool) -> dict:
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
            raise CliError(
                f"{flag} weights languages: name them with --lang LANG=PATH (or --lang-field F, or "
                "--from-counts files counted with --lang)"
            )
        values: dict = {}
        for name, value in given:
            if name in values:
                raise CliError(f"{flag} {name}=... is given twice")
            if "inputs" in out and name not in out["inputs"]:
                raise CliError(
                    f"{flag} {name}={value}: no --lang {name}=PATH was given (languages: {', '.join(out['inputs'])})"
                )
            values[name] = value
        out["weights" if flag == "--weight" else "shares"] = values
    return out


def cap_workers(args) -> None:
    """--workers beyond the cores: use the cores, with a note (train() would warn)."""
    from fastsw.corpus.counting import capped_workers, default_workers

    if args.workers is not None:
        args.workers, note = capped_workers(args.workers, default_workers(), f"--workers {args.workers}")
        if note:
            info(f"note: {note}")


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def render(token: bytes) -> str:
    try:
        return json.dumps(token.decode("utf-8"), ensure_ascii=False)
    except UnicodeDecodeError:
        return repr(token)


def atom_renderer(show):
    """:func:`render` for a model with atoms: a token whose bytes are text and whole atoms is shown with its atoms
    in readable form (``show``)."""
    from fastsw.alphabet import atom_text

    def render(token: bytes) -> str:
        try:
            return json.dumps(show(atom_text(token)), ensure_ascii=False)
        except UnicodeDecodeError:
            return repr(token)

    return render


def lang_path_arg(text: str) -> Tuple[str, str]:
    lang, sep, path = text.partition("=")
    if not sep or not lang or not path:
        raise argparse.ArgumentTypeError(f"{text!r} is not LANG=PATH; write e.g. --text en=test.en.jsonl")
    return lang, path


def language_texts(pairs: Sequence[Tuple[str, str]], *, check_files: bool) -> dict:
    """``{LANG: PATH}`` of ``--text LANG=PATH`` options, each language once; with ``check_files`` each PATH must
    name an existing file (:func:`check_text_file`), checked as the options are read."""
    texts: dict = {}
    for lang, path in pairs:
        if lang in texts:
            raise CliError(f"--text {lang}= is given twice ({texts[lang]} and {path}); give each language once")
        if check_files:
            check_text_file(lang, path)
        texts[lang] = path
    return texts


def check_text_file(lang: str, path: str) -> None:
    """``--text LANG=PATH`` names an existing file (not a directory)."""
    if not os.path.isfile(path):
        what = "is a directory" if os.path.isdir(path) else "does not exist"
        raise CliError(f"--text {lang}={path}: the file {what}; give an existing text file")


def command_line(words: Sequence[str]) -> str:
    import shlex

    return " ".join(shlex.quote(str(w)) for w in words)
