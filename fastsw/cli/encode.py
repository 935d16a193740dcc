"""``fastsw encode``: token ids of documents, as lines of ids or as one binary array."""

from __future__ import annotations

import sys
from typing import Iterator, List

from fastsw.cli import common


def add_parser(sub) -> None:
    p = sub.add_parser(
        "encode",
        help="print token ids, one line per document",
        description="Encode documents with MODEL and print one line per document: its token ids separated by "
        "single spaces (an empty document gives an empty line). Special-token strings are "
        "encoded as ordinary text. With no INPUT (or INPUT '-'), documents are read from stdin, one "
        "per line, each answered at once: each line with its trailing newline is a document (as in "
        "INPUT files with --doc-mode line), so 'fastsw encode FILE | fastsw decode' prints FILE back; "
        "or JSON Lines (see --stdin-format).",
    )
    common.add_model_option(p)
    p.add_argument("inputs", nargs="*", metavar="INPUT", help="files to encode (default, or '-': stdin)")
    common.add_reading_options(
        p, stdin_note="--doc-mode and --separator apply to INPUT files only. " + common.stdin_help(True), stdin=True
    )
    g = p.add_argument_group(
        "binary output",
        "--format bin or npy writes the ids of all documents as one array "
        "(little-endian; the end-of-text token after each document, as 'fastsw shard' writes "
        "them) to -o FILE or stdout",
    )
    g.add_argument(
        "--format",
        choices=("ids", "bin", "npy"),
        default="ids",
        help="ids: one line of ids per document (default); bin: flat ids; npy: a .npy array",
    )
    g.add_argument("-o", "--output", metavar="FILE", default=None, help="write to FILE instead of stdout")
    common.add_id_array_options(
        g,
        prefix="bin/npy ",
        eot_help="bin/npy: token after each document (default: MODEL's <|endoftext|> when it has one; 'none' for no token)",
    )
    p.set_defaults(func=cmd_encode)


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
        common.check_output_path(args.output, args)
    # a line's newline belongs to its document (as in training), so that 'fastsw decode' can print the decoded
    # text as it is and 'fastsw encode FILE | fastsw decode' gives FILE back
    documents, unit = common.documents(args, without_inputs="stdin is read one document per line", keep_newline=True)
    tok = common.load_model(args.model)
    if args.format != "ids" or args.output is not None:
        return _encode_binary(args, tok, documents)
    out = common.Output()

    def fail(number: int, e: ValueError):
        where = f"{common.STDIN_NAME} line {number}" if unit == "line" else f"document {number}"
        return common.CliError(f"{where}: {e}")

    if unit == "line":  # stdin: each line answered at once (usable as a co-process)
        for number, doc in enumerate(documents, 1):
            try:
                ids = tok.encode_ordinary(doc)
            except ValueError as e:
                raise fail(number, e) from None
            out.line(" ".join(map(str, ids)))
            out.flush()
        return common.EXIT_OK
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
    return common.EXIT_OK


def _encode_binary(args, tok, documents) -> int:
    """encode --format bin|npy (or any format with -o): fastsw.shard's framing, to a file or stdout."""
    from fastsw.files import atomic_open
    from fastsw.encoding.shard import encode_stream

    if args.format == "ids":
        from fastsw.files import atomic_write_text

        atomic_write_text(
            args.output, "".join(" ".join(map(str, ids)) + "\n" for ids in tok.encode_ordinary_batch(list(documents)))
        )
        return common.EXIT_OK
    eot = None if args.eot == "none" else args.eot
    if eot == "auto" and "<|endoftext|>" not in tok.special_tokens:
        common.info(
            f"note: {args.model} has no <|endoftext|> special token, so no token separates the documents; "
            "give --eot TOKEN to add one"
        )
        eot = None
    options = {"format": args.format, "dtype": args.dtype, "eot": eot}
    if args.output is None:
        if sys.stdout.isatty():
            raise common.CliError(f"--format {args.format} writes binary data; redirect stdout or give -o FILE")
        encode_stream(documents, tok, sys.stdout.buffer, **options)
        sys.stdout.flush()
        return common.EXIT_OK
    with atomic_open(args.output, "wb") as f:
        encode_stream(documents, tok, f, **options)
    return common.EXIT_OK
