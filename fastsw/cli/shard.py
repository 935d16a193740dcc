"""``fastsw shard``: a corpus encoded into training-ready token shards (:func:`fastsw.shard`)."""

from __future__ import annotations

import contextlib

from fastsw.cli import common


def add_parser(sub) -> None:
    from fastsw.encoding.shard import DEFAULT_BATCH_CHARS

    p = sub.add_parser(
        "shard",
        help="encode a corpus into training-ready token shards",
        description="Encode the documents of INPUT files, globs or directories with MODEL into shards of token "
        "ids in the folder DIR (flat little-endian ids, llm.c's headered shards or .npy, each with a "
        ".idx.npy of document start offsets) and a manifest.json (model hash, options, inputs, every "
        "shard's tokens, documents, sha256 and the input positions it covers). Running the same "
        "command again resumes an interrupted run; the shards are byte-identical whatever the number "
        "of workers. See fastsw.shard.",
    )
    p.add_argument(
        "inputs",
        nargs="*",
        metavar="INPUT",
        help="files, globs or directories; - for stdin (JSONL when its first line is a JSON object "
        "with the text field, else text; a run from stdin cannot be resumed)",
    )
    p.add_argument("-m", "--model", required=True, metavar="MODEL", help="model file written by 'fastsw train'")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="output folder (created if missing)")
    p.add_argument(
        "--format",
        choices=("bin", "llmc", "npy"),
        default="bin",
        help="bin: flat ids (nanoGPT); llmc: llm.c's 256 x int32 header + ids; npy (default: bin)",
    )
    common.add_id_array_options(
        p,
        prefix="",
        eot_help="token after each document (default: MODEL's <|endoftext|> when it has one); 'none' for no token",
    )
    p.add_argument("--bos", metavar="TOKEN", default=None, help="token before each document (default: none)")
    p.add_argument(
        "--shard-tokens",
        type=common.positive,
        default=10**8,
        metavar="N",
        help="tokens per shard, the last shard partial (default: 100000000)",
    )
    p.add_argument(
        "--workers", type=common.positive, default=None, metavar="N", help="encoder threads (default: all cores)"
    )
    p.add_argument(
        "--batch-mb",
        type=common.positive,
        default=DEFAULT_BATCH_CHARS >> 20,
        metavar="MB",
        help="megabytes (characters) of text per encoded batch; about three batches are in memory "
        f"(default: {DEFAULT_BATCH_CHARS >> 20})",
    )
    p.add_argument(
        "--verify",
        action="store_true",
        help="re-read the shards of DIR and check them against its manifest (encodes nothing)",
    )
    p.add_argument("--no-progress", action="store_true", help="do not draw a progress bar")
    common.add_reading_options(p, stdin_note="")
    common.add_dask_options(p)
    p.set_defaults(func=cmd_shard)


def cmd_shard(args) -> int:
    from fastsw.encoding.shard import shard, verify

    common.check_connect_timeout(args)
    if args.verify:
        m = verify(args.output, common.load_model(args.model))
        common.info(
            f"{args.output}: {common.plural(len(m['shards']), 'shard')} match the manifest"
            + ("" if m.get("complete") else " (the run is not complete: run the command without --verify to resume it)")
        )
        return common.EXIT_OK
    if not args.inputs:
        raise common.CliError("give the INPUT files, globs or directories to shard (or --verify to check DIR)")
    reading = common.reading_kwargs(args, has_inputs=True, without_inputs="")
    eot = None if args.eot == "none" else args.eot
    tok = common.load_model(args.model)
    if eot == "auto" and "<|endoftext|>" not in tok.special_tokens:
        common.info(
            f"note: {args.model} has no <|endoftext|> special token, so no token separates the documents "
            "(the .idx.npy files mark where each starts); give --eot TOKEN to add one"
        )
    dask = args.scheduler is not None or args.dask_local is not None
    with (
        common.progress_stderr(not args.no_progress),
        common.dask_client(args) if dask else contextlib.nullcontext() as c,
    ):
        m = shard(
            args.inputs,
            tok,
            args.output,
            format=args.format,
            dtype=args.dtype,
            eot=eot,
            bos=args.bos,
            shard_tokens=args.shard_tokens,
            workers=args.workers,
            batch_chars=args.batch_mb << 20,
            progress=not args.no_progress,
            client=c,
            **reading,
        )
    common.info(
        f"{args.output}: {common.plural(len(m['shards']), 'shard')}, {m['tokens']:,} tokens, "
        f"{m['documents']:,} documents ({args.format}, {m['options']['dtype']})"
    )
    return common.EXIT_OK
