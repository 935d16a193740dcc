"""``fastsw train``: train a tokenizer and save it as a model file."""

from __future__ import annotations

import contextlib
import functools
import sys
import time
import warnings
from pathlib import Path

from fastsw.cli import common
from fastsw.trainers.base import OptionError
from fastsw.trainers.registry import get_trainer, trainers


def add_parser(sub) -> None:
    p = sub.add_parser(
        "train",
        help="train a tokenizer and save it as a model file",
        description="Train a tokenizer on INPUT files ('-' for stdin; with no INPUT, on the bundled multilingual "
        "sample corpus), or on count files written by 'fastsw count' (--from-counts), and save it to "
        "MODEL ('-o -' writes it to stdout). Progress bars and a summary go to stderr. The options "
        "are grouped by the algorithm they apply to.",
    )
    g = p.add_argument_group("common options")
    g.add_argument(
        "--algo",
        choices=[t.name for t in trainers()],
        default="bpe",
        help="; ".join(f"{t.name}: {t.summary}" for t in trainers()),
    )
    g.add_argument(
        "--vocab-size",
        type=common.positive,
        default=4096,
        metavar="N",
        help="vocabulary size: alphabet + merges, special tokens excluded (default: 4096)",
    )
    g.add_argument(
        "--special-token",
        action="append",
        default=[],
        metavar="TOK",
        dest="special_tokens",
        help="add a special token (repeatable); ids follow the vocabulary",
    )
    g.add_argument(
        "--backend",
        choices=("auto", "numba", "python"),
        default="auto",
        help="merge-loop implementation: numba kernels or the plain-Python reference path "
        "(identical models; default auto = numba unless FASTSW_PUREPYTHON=1)",
    )
    g = p.add_argument_group("BPE rules and text (every algorithm's regular merges)")
    g.add_argument(
        "--profile",
        choices=("paper", "hf"),
        default="paper",
        help="paper: the paper's reference rules, 243-byte alphabet (default); "
        "hf: HF tokenizers' BpeTrainer rules, 256-byte alphabet",
    )
    common.add_text_options(
        g,
        default=None,
        note=". none with --algo bpe, parity-bpe or mingram (it makes no words for "
        "supermerges to join); script-v3 with every --algo but parity-bpe. With "
        "--from-counts the counts' own are used",
    )
    g.add_argument(
        "--alphabet",
        choices=("bytes", "chars"),
        default="bytes",
        help="bytes (default) or chars (characters seen in training; needs --profile hf)",
    )
    g.add_argument(
        "--byte-fallback", action="store_true", help="with --alphabet chars: encode unseen characters as bytes"
    )
    _add_trainer_options(p)
    g = p.add_argument_group("input")
    g.add_argument(
        "inputs",
        nargs="*",
        metavar="INPUT",
        help="corpus files (.jsonl, .ndjson or text; optionally .gz, .bz2, .xz, .zst), or '-' for stdin",
    )
    g.add_argument(
        "--from-counts",
        nargs="+",
        metavar="COUNTS",
        default=None,
        help="train from count files written by 'fastsw count' (several are merged) instead of "
        "INPUT files; gives the same model as training on the counted text",
    )
    g.add_argument(
        "--workers",
        type=common.positive,
        default=None,
        metavar="N",
        help="processes that pre-tokenize and count INPUT files (default: one thread per core "
        "in this process with the compiled counter; otherwise all cores when the INPUT files "
        "hold 16 MB or more, else 1); more than the cores are capped at them, with a note",
    )
    common.add_reading_options(
        p,
        stdin_note="With no INPUT the bundled sample corpus is used and these options "
        "must not be given. " + common.stdin_help(False),
        stdin=True,
    )
    common.add_language_options(p, weights=True)
    common.add_dask_options(p)
    g = p.add_argument_group("output and progress")
    g.add_argument(
        "-o",
        "--output",
        metavar="MODEL",
        required=True,
        help="where to write the model (JSON); '-' writes it to stdout",
    )
    g.add_argument("--no-progress", action="store_true", help="do not draw progress bars")
    p.set_defaults(func=cmd_train)


# ---- the trainers' options: flags generated from their config fields ----------------------------------------------

#: The flags of train()'s own options whose flag is not ``--`` + the name with ``-`` for ``_``.
_COMMON_FLAGS = {
    "special_tokens": "--special-token",
    "weights": "--weight",
    "shares": "--share",
    "inputs": "INPUT",
    "from_counts": "--from-counts",
}


def _fields() -> dict:
    """Every registered trainer's option fields by name (the first trainer that declares a name gives its field)."""
    out: dict = {}
    for trainer in trainers():
        for field in trainer.Config.options():
            out.setdefault(field.name, field)
    return out


def flag_of(name: str) -> str:
    """The command-line flag of option ``name`` of :func:`fastsw.train` (the one place that maps them)."""
    field = _fields().get(name)
    if field is not None and field.metadata.get("flag"):
        return field.metadata["flag"]
    return _COMMON_FLAGS.get(name) or "--" + name.replace("_", "-")


def _metavar_of(name: str):
    field = _fields().get(name)
    return field.metadata.get("metavar") if field is not None else None


def _cli_error(e: OptionError) -> common.CliError:
    """An option error of the library in flag words."""
    return common.CliError(e.render(flag_of, _metavar_of))


def _add_trainer_options(p) -> None:
    """A ``--help`` group per trainer config class (in ``help_order``) with a flag per field it declares."""
    groups: dict = {}
    for trainer in trainers():
        for klass in trainer.Config.__mro__:
            for field in getattr(klass, "__dataclass_fields__", {}).values():
                if "doc" not in field.metadata:
                    continue
                owner = field.metadata.get("group") or next(
                    c for c in reversed(trainer.Config.__mro__) if field.name in getattr(c, "__annotations__", {})
                )
                groups.setdefault(owner, {}).setdefault(field.name, field)
    for klass in sorted(groups, key=lambda c: c.help_order):
        g = p.add_argument_group(klass.help_title or klass.__name__, klass.help_text or None)
        moved_in = sorted(groups[klass].values(), key=lambda f: f.metadata.get("group") is None)  # e.g. --phase1
        for field in moved_in:
            meta, kwargs = field.metadata, {"dest": field.name, "help": field.metadata["doc"]}
            if field.default is False:
                kwargs["action"] = "store_true"
            else:
                kwargs.update(default=None, metavar=meta.get("metavar"), choices=meta.get("choices"))
                if meta.get("action") == "append":
                    kwargs["action"] = "append"
                    metavar = meta.get("metavar") or ""
                    kwargs["type"] = (
                        common.lang_pair("PATH")
                        if metavar.endswith("=PATH")
                        else common.lang_pair("RATIO")
                        if metavar.startswith("LANG=")
                        else str
                    )
                else:
                    kwargs["type"] = meta.get("type") or (type(field.default) if field.default is not None else str)
                if kwargs["choices"] is not None:
                    kwargs.pop("metavar")
            g.add_argument(flag_of(field.name), **kwargs)


def _trainer_options(args) -> dict:
    """The trainers' options given on the command line, as train() keywords (a flag not given is left out)."""
    out = {}
    for name in _fields():
        value = getattr(args, name, None)
        if value is not None and value is not False and name not in ("dev", "ratios"):
            out[name] = value
    return out


def _parity_args(args, languages: dict) -> dict:
    """train()'s dev= and ratios= from --dev LANG=PATH and --ratio LANG=R (each language named by --lang when the
    texts are given that way); the rules of the options themselves are train()'s."""
    out: dict = {}
    known = list(languages["inputs"]) if "inputs" in languages else None
    if args.dev is not None:
        dev: dict = {}
        for name, path in args.dev:
            if known is not None and name not in known:
                raise common.CliError(
                    f"--dev {name}={path}: no --lang {name}=PATH was given (languages: "
                    f"{', '.join(known)}); every dev language needs its training text"
                )
            dev.setdefault(name, []).append(Path(path))
        out["dev"] = dev
    if args.ratios is not None:
        from fractions import Fraction

        ratios: dict = {}
        for name, value in args.ratios:
            if name in ratios:
                raise common.CliError(f"--ratio {name}=... is given twice")
            if known is not None and name not in known:
                raise common.CliError(
                    f"--ratio {name}={value}: no --lang {name}=PATH was given (languages: {', '.join(known)})"
                )
            ratios[name] = Fraction(value)
        out["ratios"] = ratios
    return out


def cmd_train(args) -> int:
    from fastsw.notes import VocabularyNotReachedWarning
    from fastsw.trainers.train import resolve, train

    stdin = common.reads_stdin(args, default=False)
    if stdin:
        clash = common.given_flags(
            ("--from-counts", args.from_counts),
            ("--lang", args.langs),
            ("--lang-field", args.lang_field),
            ("--scheduler", args.scheduler),
            ("--dask-local", args.dask_local),
        )
        if clash:
            raise common.CliError(f"INPUT '-' (stdin) does not go with {clash[0]}; leave one of them out")
    languages = common.language_args(args, weights=True)
    options = {**_trainer_options(args), **_parity_args(args, languages)}
    basics = dict(
        algo=args.algo,
        vocab_size=args.vocab_size,
        profile=args.profile,
        alphabet=args.alphabet,
        byte_fallback=args.byte_fallback,
        special_tokens=args.special_tokens,
    )
    try:  # train()'s own check of every option, before anything is read
        trainer, _ = resolve(
            **basics, weights=languages.get("weights"), shares=languages.get("shares"), options=options
        )
    except OptionError as e:
        raise _cli_error(e) from None
    if trainer.parity() is not None and not ({"inputs", "lang_field"} & set(languages)) and args.from_counts is None:
        raise common.CliError(
            "parity-aware BPE trains on one text per language: give --lang LANG=PATH for each "
            "language (or --lang-field F, or --from-counts files counted with --lang)"
        )
    if args.from_counts is not None:
        if args.inputs:
            raise common.CliError("give either INPUT files or --from-counts COUNTS, not both")
        if args.workers is not None:
            raise common.CliError("--workers applies to counting INPUT files; with --from-counts nothing is counted")
    common.check_output_path(args.output, args)
    common.cap_workers(args)
    on_dask = common.dask_check(args)
    source: dict
    if on_dask:  # the shards are counted on a Dask cluster (fastsw.corpus.distributed.train)
        source = common.reading_kwargs(args, has_inputs=True, without_inputs="")
    elif "inputs" in languages:  # --lang LANG=PATH
        source = {
            "workers": args.workers,
            **common.reading_kwargs(args, has_inputs=True, without_inputs=""),
            **languages,
        }
    elif args.from_counts is not None:
        from fastsw.corpus.counting import load_counts

        common.reading_kwargs(args, has_inputs=False, without_inputs="--from-counts reads count files")
        counts = load_counts(args.from_counts)
        if get_trainer(args.algo).needs_runs and not counts.has_runs:
            names = ", ".join(args.from_counts)
            raise common.CliError(
                f"--algo {args.algo} needs letter runs, but {names} "
                f"{'was' if len(args.from_counts) == 1 else 'were (in part)'} counted with --no-runs; "
                "count again without --no-runs, or use --algo bpe"
            )
        if args.pretokenizer is not None and common.pretokenizer_name(counts.pretokenizer_config) != args.pretokenizer:
            raise common.CliError(
                f"--pretokenizer {args.pretokenizer} differs from the pretokenizer of the count files "
                f"(mode {common.pretokenizer_name(counts.pretokenizer_config)}); leave --pretokenizer out "
                "with --from-counts"
            )
        if args.normalize is not None and (None if args.normalize == "none" else args.normalize) != counts.normalize:
            raise common.CliError(
                f"--normalize {args.normalize} differs from the normalization of the count files "
                f"({counts.normalize or 'none'}); leave --normalize out with --from-counts"
            )
        source = {"from_counts": counts, **languages}
    elif stdin:
        source = {"inputs": common.stdin_documents(args, keep_newline=True), "workers": args.workers}
    elif args.inputs:
        source = {
            "inputs": [Path(p) for p in args.inputs],
            "workers": args.workers,
            **common.reading_kwargs(args, has_inputs=True, without_inputs=""),
            **languages,
        }
    else:
        from fastsw.corpus.sample import SAMPLE_DIR, SEPARATOR, sample_files

        common.reading_kwargs(args, has_inputs=False, without_inputs="training on the bundled sample corpus")
        files = sample_files()
        source = {"inputs": files, "workers": args.workers, "doc_mode": "separator", "separator": SEPARATOR}
        common.info(f"no INPUT given: training on the bundled sample corpus ({len(files)} files in {SAMPLE_DIR})")

    progress = not args.no_progress
    start = time.perf_counter()
    with common.progress_stderr(progress):
        with warnings.catch_warnings():  # the summary prints these notes
            warnings.simplefilter("ignore", VocabularyNotReachedWarning)
            with common.dask_client(args) if on_dask else contextlib.nullcontext() as client:
                run = train
                if on_dask:
                    from fastsw.corpus.distributed import train as dask_train

                    run = functools.partial(dask_train, client, args.inputs)
                try:
                    tok = run(
                        **basics,
                        pretokenizer=args.pretokenizer,
                        normalize=args.normalize,
                        progress=progress,
                        backend=args.backend,
                        **source,
                        **options,
                    )
                except OptionError as e:
                    raise _cli_error(e) from None
    if tok.training_info.get("backend_note"):  # train() warned it; the CLI reports the library's warnings as notes
        common.info(f"note: {tok.training_info['backend_note']}")
    shown = common.save_output(tok.save, args.output)
    elapsed = time.perf_counter() - start
    _print_summary(tok, shown, elapsed)
    return common.EXIT_OK


def _print_summary(tok, output: str, elapsed: float) -> None:
    info = tok.training_info
    n_alpha = len(tok.alphabet)
    lines = [
        f"trained {(info.get('options') or {}).get('algo', tok.algo)} (profile {tok.profile}) in {elapsed:.1f} s",
        f"  vocabulary:  {tok.vocab_size} tokens = {n_alpha} alphabet + {tok.n_regular} regular merges "
        f"+ {tok.n_super} supermerges"
        + (f" (+ {len(tok.special_tokens)} special tokens)" if tok.special_tokens else ""),
        f"  corpus:      {common.plural(info.get('documents', 0), 'document')}, {info.get('bytes', 0) / 1e6:.2f} MB",
    ]
    if tok.algo == "mingram":
        lines[1] = (
            f"  vocabulary:  {tok.vocab_size} tokens = {n_alpha} alphabet + {tok.vocab_size - n_alpha} learned "
            f"(MinGram from a {info['mingram']['seed_size']}-token BPE seed)"
            + (f" (+ {len(tok.special_tokens)} special tokens)" if tok.special_tokens else "")
        )
    seconds = info.get("seconds") or {}
    if seconds:
        lines.append("  seconds:     " + ", ".join(f"{stage} {s:.2f}" for stage, s in seconds.items()))
    for note in info.get("notes") or ():
        lines.append(f"  note:        {note}")
    lines.append(f"  saved to:    {output}")
    sys.stderr.write("fastsw: " + "\n".join(lines) + "\n")
    sys.stderr.flush()
