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

import os
import sys
import warnings
from typing import Optional, Sequence

from fastsw import __version__
from fastsw.cli import count, decode, encode, pretokenize, shard, show, train
from fastsw.cli import eval as eval_command, inspect as inspect_command
from fastsw.cli.common import (
    EXIT_BROKEN_PIPE,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    CliError,
    Parser,
    print_error,
    parse_escapes,
)
from fastsw.notes import OptionWarning

__all__ = ["main", "build_parser", "CliError", "parse_escapes"]

#: The commands in the order ``fastsw --help`` lists them; each module adds its parser (``add_parser``).
COMMANDS = (train, count, encode, shard, decode, pretokenize, inspect_command, eval_command, show)


def build_parser():
    parser = Parser(
        prog="fastsw",
        description="Train and use BPE, BoundlessBPE and SuperBPE (superword) tokenizers.",
        epilog="Run 'fastsw COMMAND --help' for the options of a command. Errors exit with status 2.",
    )
    parser.add_argument("--version", action="version", version=f"fastsw {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


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
        print_error(
            "missing COMMAND: one of train, count, encode, decode, pretokenize, inspect, eval, show, shard "
            "(see 'fastsw --help')"
        )
        return EXIT_ERROR
    try:
        with warnings.catch_warnings():
            # options the library warns about are reported by the CLI itself, as notes
            # (reading_kwargs, cap_workers), before the work starts
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
        print_error(str(e))
        return EXIT_ERROR
    except OSError as e:
        if e.filename is not None and e.strerror:
            print_error(f"{e.filename}: {e.strerror}")
        else:
            print_error(str(e) or type(e).__name__)
        return EXIT_ERROR
