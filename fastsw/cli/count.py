"""``fastsw count``: count the pretokens (and letter runs) of INPUT files into a count file."""

from __future__ import annotations

import time
from pathlib import Path

from fastsw.cli import common


def add_parser(sub) -> None:
    p = sub.add_parser(
        "count",
        help="count pretokens (and letter runs) of INPUT files into a count file",
        description="Pre-tokenize INPUT files and save the aggregated pretoken and letter-run counts to COUNTS "
        "(gzip-compressed JSON Lines, see fastsw.corpus.counting). Count files of parts of a corpus can be "
        "trained on together: 'fastsw train --from-counts A B ...' gives the model of the whole.",
    )
    p.add_argument(
        "inputs",
        nargs="*",
        metavar="INPUT",
        help="corpus files (.jsonl, .ndjson or text; optionally .gz, .bz2, .xz, .zst), '-' for stdin; "
        "or --lang LANG=PATH",
    )
    p.add_argument(
        "-o", "--output", metavar="COUNTS", required=True, help="where to write the count file; '-' writes it to stdout"
    )
    common.add_text_options(p, default="script", note="")
    p.add_argument(
        "--workers",
        type=common.positive,
        default=None,
        metavar="N",
        help="processes that pre-tokenize and count (default: one thread per core in this "
        "process with the compiled counter, else one process per core); more than the "
        "cores are capped at them, with a note",
    )
    p.add_argument(
        "--no-runs", action="store_true", help="do not collect letter runs (smaller file; enough for --algo bpe only)"
    )
    common.add_dask_options(p)
    p.add_argument("--no-progress", action="store_true", help="do not draw a progress bar")
    common.add_reading_options(p, stdin_note=common.stdin_help(False), stdin=True)
    common.add_language_options(p, weights=False)
    p.set_defaults(func=cmd_count)


def cmd_count(args) -> int:
    from fastsw.corpus.counting import count_corpus, count_corpus_parallel, default_workers, native_counting
    from fastsw.pretokenizers.pretokenize import make_pretokenizer
    from fastsw.progress import Progress
    from fastsw.corpus.readers import iter_documents

    common.check_output_path(args.output, args)
    stdin = common.reads_stdin(args, default=False)
    languages = common.language_args(args, weights=False)
    if stdin and languages:
        raise common.CliError(
            f"INPUT '-' (stdin) does not go with {'--lang' if 'inputs' in languages else '--lang-field'}"
            "; leave one of them out"
        )
    if not args.inputs and not languages and not stdin:
        raise common.CliError("give INPUT files to count ('-' for stdin), or --lang LANG=PATH (repeatable)")
    common.cap_workers(args)
    if stdin and (args.scheduler is not None or args.dask_local is not None):
        raise common.CliError(
            "INPUT '-' (stdin) is counted in this process; --scheduler/--dask-local count INPUT files"
        )
    on_dask = common.dask_check(args)
    reading = {} if stdin else common.reading_kwargs(args, has_inputs=True, without_inputs="")
    if stdin:
        documents = common.stdin_documents(args, keep_newline=True)
    elif on_dask:
        documents = None  # the workers read the INPUT files
    elif "lang_field" in languages:
        from fastsw.corpus.readers import iter_language_documents

        documents = iter_language_documents(
            [Path(p) for p in args.inputs], lang_field=languages["lang_field"], text_field=reading["text_field"]
        )
    elif "inputs" in languages:
        documents = {name: iter_documents(paths, **reading) for name, paths in languages["inputs"].items()}
    else:
        documents = iter_documents([Path(p) for p in args.inputs], **reading)
    progress = not args.no_progress
    with common.progress_stderr(progress):
        pretok = make_pretokenizer(args.pretokenizer)

        def count(documents, label=""):
            threaded = args.workers is None and native_counting(pretok)  # the compiled counter, in this process
            n = args.workers or default_workers()
            unit = "threads" if threaded else "workers"
            bar = Progress("counting" + label + (f" ({n} {unit})" if n > 1 else ""), enabled=progress)
            options = {"collect_runs": not args.no_runs, "progress": bar, "normalize": args.normalize}
            if threaded:
                counts = count_corpus(documents, pretok, threads=n, **options)
            else:
                counts = count_corpus_parallel(documents, pretok, workers=n, **options)
            return counts, bar.close()

        if on_dask:
            from fastsw.corpus.distributed import count as dask_count

            start = time.perf_counter()
            with common.dask_client(args) as client:
                counts = dask_count(
                    client,
                    args.inputs,
                    pretokenizer=pretok,
                    collect_runs=not args.no_runs,
                    normalize=args.normalize,
                    progress=progress,
                    **reading,
                )
            elapsed = time.perf_counter() - start
        elif "lang_field" in languages:
            from fastsw.corpus.counting import count_languages

            bar = Progress("counting", enabled=progress)
            counts = count_languages(
                documents, pretok, collect_runs=not args.no_runs, progress=bar, normalize=args.normalize
            )
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
                raise common.CliError(
                    f"language {name!r} has no text (0 bytes); give it a file with text or leave it out"
                )
    shown = common.save_output(counts.save, args.output)
    runs = f", {common.plural(counts.n_runs, 'distinct letter run')}" if counts.has_runs else " (no letter runs)"
    rate = counts.n_bytes / 1e6 / elapsed if elapsed > 0 else 0.0
    common.info(
        f"counted {common.plural(counts.n_documents, 'document')}, {counts.n_bytes / 1e6:.2f} MB in {elapsed:.1f} s "
        f"({rate:.1f} MB/s): {common.plural(len(counts.pretokens), 'distinct pretoken')}{runs}"
        + (f", languages {', '.join(counts.languages)}" if counts.languages else "")
        + f"; saved to {shown}"
    )
    return common.EXIT_OK
