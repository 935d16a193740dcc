"""Shared by the whole-run benchmarks: the command that made a result, and the JSON that ``bench/perfpage.py`` reads.

A whole-run script given ``--json OUT`` writes one table or a list of tables, each
``{"title": str, "command": str, "columns": [str], "rows": [[...]], "notes": str}``; a row's cells are numbers or
strings (``None`` for a figure that was not measured). A table may also carry ``"peak_rss_mb"`` when the script
measures peak RSS per row, as one of its columns.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path


def command() -> str:
    """This run's command line as a user would type it from the repository root."""
    script = Path(sys.argv[0]).resolve()
    root = Path(__file__).resolve().parents[1]
    try:
        shown = script.relative_to(root).as_posix()
    except ValueError:
        shown = script.name
    return shlex.join(["python", shown, *sys.argv[1:]])


def table(title: str, columns, rows, notes: str = "") -> dict:
    rows = [list(r) for r in rows]
    for r in rows:
        if len(r) != len(columns):
            raise ValueError(f"{title}: a row has {len(r)} cells for {len(columns)} columns")
    return {"title": title, "command": command(), "columns": list(columns), "rows": rows, "notes": notes}


def write_json(path, tables) -> None:
    """Write ``tables`` (one table or a list) to ``path`` atomically (``-`` is stdout)."""
    text = json.dumps(tables, indent=1, ensure_ascii=False) + "\n"
    if str(path) == "-":
        sys.stdout.write(text)
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def add_arguments(parser, quick: str = "a small run that finishes in a few minutes") -> None:
    """``--quick``, ``--smoke`` and ``--json OUT``, the options every whole-run script takes (read them with
    :func:`parse_args`)."""
    parser.add_argument("--quick", action="store_true", help=quick)
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="tiny inputs, seconds: checks that the script runs and writes its JSON (the figures mean nothing)",
    )
    parser.add_argument("--json", metavar="OUT", help="also write the results as JSON (bench/perfpage.py reads it)")


def parse_args(parser, argv=None):
    """``parser.parse_args(argv)``; ``--smoke`` implies ``--quick`` (a script shrinks its ``--quick`` sizes further
    with :func:`sized`). Also :func:`as_installed`: every whole-run script starts here."""
    args = parser.parse_args(argv)
    as_installed()
    if args.smoke:
        args.quick = True
    return args


def as_installed() -> None:
    """Run fastsw, in this process and the processes it starts, from compiled bytecode, as an installation does.

    ``pip install`` compiles a package's modules, and Python caches those of an editable install on first import;
    the peers' Python modules are compiled where they are installed. With ``PYTHONDONTWRITEBYTECODE`` set, a
    checkout's fastsw would instead be compiled from source again in every process (about 0.1 s of each start),
    a cost no installed fastsw has. So the variable is dropped for the processes a benchmark starts and the
    imported fastsw package is compiled once, before anything is timed."""
    import compileall
    import importlib.util

    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False
    spec = importlib.util.find_spec("fastsw")
    if spec is not None and spec.submodule_search_locations:
        for where in spec.submodule_search_locations:
            compileall.compile_dir(where, quiet=2)  # up-to-date files are left as they are; a read-only one is skipped


def sized(args, full, quick, smoke):
    """The value of a size for this run: ``smoke`` with ``--smoke``, ``quick`` with ``--quick``, else ``full``."""
    return smoke if args.smoke else quick if args.quick else full


def missing_peers(peers) -> list:
    """The peers of ``{peer name: import name}`` that are not installed, each said once on stderr (a run goes on
    without them; its notes say which were left out)."""
    import importlib.util

    missing = [peer for peer, module in peers.items() if importlib.util.find_spec(module) is None]
    for peer in missing:
        print(f"{peer} is not installed ({peers[peer]}): its rows are left out", file=sys.stderr)
    return missing


def rounded(x, digits: int = 2):
    """``x`` to ``digits`` decimals (an int for 0), None stays None."""
    if x is None:
        return None
    return int(round(float(x))) if digits == 0 else round(float(x), digits)
