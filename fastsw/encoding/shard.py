"""A corpus to training-ready token shards: :func:`shard` (``fastsw shard``) and :func:`verify`.

Documents are read by :mod:`fastsw.corpus.readers` (the formats and error messages of every other command), encoded in
batches by the tokenizer's threaded numpy path, framed (an optional BOS token before each document, the end-of-text
token after each) and written as one stream of token ids cut into shards of exactly ``shard_tokens`` tokens (the
last one partial), as llm.c cuts its shards: a document may continue from one shard into the next. The stream is a
function of the documents, the model and the options only, so the shards are byte-identical for any number of
threads, across resumed runs and on a Dask cluster.

Output folder::

    manifest.json               the run: model hash, options, inputs, every complete shard (see below)
    manifest.journal.jsonl      while a run is under way: one line per shard finished since manifest.json was
                                written (an entry of its "shards"); folded into manifest.json at the end
    shard_000000.bin            the ids (format "bin" or "llmc"; "npy": shard_000000.npy)
    shard_000000.idx.npy        uint64: the offset (in tokens) within the shard of each document that starts in it

Formats (all little-endian; dtype uint16 when every id of the model fits, else uint32):

* ``bin``: the ids and nothing else (nanoGPT's ``train.bin``): ``np.memmap(path, dtype, mode="r")``.
* ``llmc``: llm.c's shards: a header of 256 int32 (``[0]`` magic, ``[1]`` version, ``[2]`` number of tokens; the
  rest zero), then the ids. uint16 shards carry llm.c's GPT-2 header (magic 20240520, version 1), uint32 shards its
  Llama 3 header (magic 20240801, version 7).
* ``npy``: a NumPy ``.npy`` file (format 1.0, a 128-byte header), 1-D: ``np.load(path, mmap_mode="r")``.

Every write is atomic: a shard is written to a temporary file, synced and renamed, then one line appended to the
journal (and synced) lists it, so that the cost of listing a shard does not grow with the shards before it; the
manifest (written atomically) takes in the journal when the run ends, and when a run resumes. A run stopped at any
point (Ctrl-C, a crash, a full disk, a bad input line) leaves complete shards, listed exactly by the manifest and
its journal (:func:`read_manifest` reads both; a last journal line cut short by a crash lists nothing); running the
same command again resumes after the last listed shard and writes the same bytes an uninterrupted run writes.

``fastsw.shard`` is the function :func:`shard`; import this module's other names with
``from fastsw.encoding.shard import load_shard, verify, ...``.
"""

from __future__ import annotations

import glob as _glob
import hashlib
import json
import os
import queue
import threading
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from fastsw._types import PathLike
from fastsw.files import OutputError, _write_error, atomic_open, atomic_write_text
from fastsw.notes import OptionWarning
from fastsw.corpus.readers import InputError, iter_document_spans, iter_documents, iter_stdin_documents

if TYPE_CHECKING:
    from fastsw.tokenizer import Tokenizer

__all__ = [
    "shard",
    "verify",
    "read_manifest",
    "load_shard",
    "load_index",
    "resolve_inputs",
    "frame",
    "encode_stream",
    "FORMATS",
    "DEFAULT_SHARD_TOKENS",
    "ShardError",
]

FORMATS = ("bin", "llmc", "npy")
DTYPES = ("uint16", "uint32")
DEFAULT_SHARD_TOKENS = 10**8
#: Characters of text per encoded batch (about 3 batches are in memory at once: read, encoded, written).
DEFAULT_BATCH_CHARS = 8 << 20
MANIFEST = "manifest.json"
JOURNAL = "manifest.journal.jsonl"
MANIFEST_FORMAT = "fastsw-shards"
MANIFEST_VERSION = 1
LLMC_HEADER_INTS = 256
LLMC_HEADERS = {"uint16": (20240520, 1), "uint32": (20240801, 7)}  # llm.c: GPT-2 and Llama 3 shards
NPY_HEADER_BYTES = 128
_INPUT_SUFFIXES = tuple(
    base + comp for base in (".txt", ".jsonl", ".ndjson") for comp in ("", ".gz", ".zst", ".xz", ".bz2")
) + (".parquet",)
_EXT = {"bin": ".bin", "llmc": ".bin", "npy": ".npy"}
#: The input name that means stdin.
STDIN = "-"


class ShardError(ValueError):
    """An output folder that cannot be resumed or verified; the message says what differs and what to do."""


# ---- the one call into the encoder ----------------------------------------------------------------------------------


def encode_arrays(tok, texts: Sequence[str], num_threads: Optional[int]) -> Tuple[np.ndarray, np.ndarray]:
    """``(ids int32, offsets int64)`` of ``texts`` (special-token strings encoded as ordinary text), encoded on
    ``num_threads`` threads by the tokenizer's batch numpy path, which releases the GIL."""
    batch = getattr(tok, "encode_batch_to_numpy", None) or tok.encode_to_numpy
    return batch(texts, disallowed_special=(), num_threads=num_threads)


# ---- framing and formats ------------------------------------------------------------------------------------------


def frame(
    ids: np.ndarray, offsets: np.ndarray, eot: Optional[int] = None, bos: Optional[int] = None
) -> Tuple[np.ndarray, np.ndarray]:
    """The documents ``ids[offsets[i]:offsets[i + 1]]`` laid end to end with ``bos`` before and ``eot`` after each
    (None: none); returns ``(stream, starts)``, ``starts`` (int64) the offset of each
    document's first token (its BOS when there is one) in ``stream``; ``stream`` has the ids' dtype (int32).

        >>> s, starts = frame(np.array([5, 6, 7]), np.array([0, 2, 3]), eot=0)
        >>> s.tolist(), starts.tolist()
        ([5, 6, 0, 7, 0], [0, 3])
    """
    offsets = np.asarray(offsets, np.int64)
    nb, ne = int(bos is not None), int(eot is not None)
    n = len(offsets) - 1
    lengths = np.diff(offsets)
    starts = np.zeros(n + 1, np.int64)
    np.cumsum(lengths + nb + ne, out=starts[1:])
    out = np.empty(int(starts[-1]), np.int64 if max(eot or 0, bos or 0) >= 1 << 31 else np.int32)
    if nb + ne == 0:
        out[:] = ids
    else:  # a mask of the documents' own ids: one boolean-mask copy (a scatter by index is ~15 x slower)
        own = np.ones(len(out), bool)
        if nb:
            own[starts[:-1]] = False
        if ne:
            own[starts[1:] - 1] = False
        out[own] = ids
        if nb:
            out[starts[:-1]] = bos
        if ne:
            out[starts[1:] - 1] = eot
    return out, starts[:-1]


def dtype_for(n_vocab: int, dtype: Optional[str] = None) -> str:
    """``dtype`` (checked: it must hold every id below ``n_vocab``), or the smallest of uint16/uint32 that does.

    >>> dtype_for(50257), dtype_for(200019)
    ('uint16', 'uint32')
    """
    if dtype is None:
        return "uint16" if n_vocab <= 1 << 16 else "uint32"
    if dtype not in DTYPES:
        raise ValueError(f"dtype={dtype!r} is not one of {', '.join(DTYPES)}")
    if n_vocab > np.iinfo(dtype).max + 1:
        raise ValueError(f"dtype={dtype} cannot hold this model's ids (up to {n_vocab - 1}); use uint32")
    return dtype


def header_bytes(fmt: str, dtype: str, tokens: int) -> bytes:
    """The header that precedes ``tokens`` ids of ``dtype`` in a shard of format ``fmt`` (empty for ``bin``).

    >>> len(header_bytes("llmc", "uint16", 10)), len(header_bytes("npy", "uint16", 10))
    (1024, 128)
    """
    if fmt == "bin":
        return b""
    if fmt == "llmc":
        if tokens >= 1 << 31:
            raise ValueError(f"an llm.c shard holds fewer than 2**31 tokens, not {tokens}; lower shard_tokens")
        header = np.zeros(LLMC_HEADER_INTS, "<i4")
        header[0], header[1] = LLMC_HEADERS[dtype]
        header[2] = tokens
        return header.tobytes()
    if fmt == "npy":
        descr = np.dtype(dtype).newbyteorder("<").str
        text = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, tokens)
        body = text.encode("latin1")
        pad = NPY_HEADER_BYTES - 10 - len(body) - 1
        return (
            b"\x93NUMPY\x01\x00" + np.uint16(NPY_HEADER_BYTES - 10).astype("<u2").tobytes() + body + b" " * pad + b"\n"
        )
    raise ValueError(f"format={fmt!r} is not one of {', '.join(FORMATS)}")


def write_ids(stream, ids: np.ndarray, fmt: str, dtype: str) -> None:
    """Write ``ids`` to the binary ``stream`` as one complete file of format ``fmt`` (``bin``: the ids alone, so
    several calls concatenate; ``npy``/``llmc``: header and ids)."""
    data = np.ascontiguousarray(ids, dtype=np.dtype(dtype).newbyteorder("<"))
    stream.write(header_bytes(fmt, dtype, len(data)))
    stream.write(data.tobytes())


def encode_stream(
    documents: Iterable[str],
    tok,
    stream,
    *,
    format: str = "bin",
    dtype: Optional[str] = None,
    eot: Union[str, int, None] = "auto",
    bos: Union[str, int, None] = None,
    workers: Optional[int] = None,
    batch_chars: int = DEFAULT_BATCH_CHARS,
) -> int:
    """Encode ``documents`` and write their ids, framed as :func:`shard` frames them (``bos``/``eot``), to the
    binary ``stream`` as one file of ``format`` ``"bin"`` (written batch by batch) or ``"npy"`` (held until the
    end: its header states the length); returns the number of ids. ``fastsw encode --format bin|npy`` is this.

        >>> import io, fastsw
        >>> tok = fastsw.train(["hello world"] * 3, vocab_size=252, special_tokens=["<|endoftext|>"])
        >>> out = io.BytesIO()
        >>> encode_stream(["hello\\n", "world\\n"], tok, out, format="bin")
        10
        >>> np.frombuffer(out.getvalue(), "<u2")[:3].tolist()
        [251, 10, 252]
    """
    if format not in ("bin", "npy"):
        raise ValueError(f"format={format!r} is not one of 'bin', 'npy'")
    dtype = dtype_for(tok.n_vocab, dtype)
    eot_id = _resolve_eot(tok, eot)
    bos_id = None if bos is None else _token_id(tok, bos, "bos")
    held, total, batch, chars = [], 0, [], 0

    def flush():
        nonlocal total
        ids, offsets = encode_arrays(tok, batch, workers)
        framed = frame(ids, offsets, eot_id, bos_id)[0]
        total += len(framed)
        if format == "bin":
            write_ids(stream, framed, "bin", dtype)
        else:
            held.append(framed)

    for doc in documents:
        batch.append(doc)
        chars += len(doc)
        if chars >= batch_chars:
            flush()
            batch, chars = [], 0
    if batch or not total:
        flush()
    if format == "npy":
        write_ids(stream, np.concatenate(held) if held else np.zeros(0, np.int32), "npy", dtype)
    return total


def load_shard(path, dtype: Optional[str] = None) -> np.ndarray:
    """The ids of one shard as a read-only memory map (format from the file: ``.npy``, llm.c header, or raw).
    A raw ``.bin`` needs ``dtype`` unless the folder's ``manifest.json`` names it.

        >>> # ids = load_shard("shards/shard_000000.bin")
    """
    path = Path(path)
    if path.suffix == ".npy":
        return np.load(path, mmap_mode="r")
    fmt = None
    manifest = path.parent / MANIFEST
    if manifest.is_file():
        opts = json.loads(manifest.read_text(encoding="utf-8"))["options"]
        fmt, dtype = opts["format"], dtype or opts["dtype"]
    if fmt is None:
        head = np.fromfile(path, "<i4", count=3)
        for name, (magic, version) in LLMC_HEADERS.items():
            if len(head) == 3 and head[0] == magic and head[1] == version:
                fmt, dtype = "llmc", name
    if dtype is None:
        raise ValueError(f"{path}: a raw .bin shard does not say its dtype; pass dtype='uint16' or 'uint32'")
    offset = LLMC_HEADER_INTS * 4 if fmt == "llmc" else 0
    if os.path.getsize(path) == offset:
        return np.zeros(0, dtype)
    return np.memmap(path, dtype=np.dtype(dtype).newbyteorder("<"), mode="r", offset=offset)


def load_index(shard_path) -> np.ndarray:
    """The uint64 start offsets of the documents that begin in a shard (its ``.idx.npy``)."""
    path = Path(shard_path)
    return np.load(path.with_name(path.name.rsplit(".", 1)[0] + ".idx.npy"))


# ---- inputs -------------------------------------------------------------------------------------------------------


def resolve_inputs(inputs) -> List[str]:
    """The files named by ``inputs`` (a path, a glob or a directory, or a list of them), in order: each glob and
    directory sorted by name, a directory searched recursively for corpus files (``.txt``, ``.jsonl``, ``.ndjson``,
    optionally compressed, and ``.parquet``). A name that matches nothing is an :class:`~fastsw.InputError`."""
    items = [inputs] if isinstance(inputs, (str, os.PathLike)) else list(inputs)
    if not items:
        raise InputError("no inputs given; pass files, globs or directories")
    if STDIN in items:
        if len(items) > 1:
            raise InputError("'-' (stdin) must be the only input; write stdin to a file to shard it with others")
        return [STDIN]
    files: List[str] = []
    for item in items:
        name = os.fsdecode(os.fspath(item))
        if os.path.isdir(name):
            found = sorted(
                str(p) for p in Path(name).rglob("*") if p.is_file() and p.name.lower().endswith(_INPUT_SUFFIXES)
            )
            if not found:
                raise InputError(f"{name}: the directory holds no corpus files ({', '.join(_INPUT_SUFFIXES)})")
            files += found
        elif os.path.exists(name):
            files.append(name)
        elif _glob.has_magic(name):
            found = sorted(p for p in _glob.glob(name, recursive=True) if os.path.isfile(p))
            if not found:
                raise InputError(f"{name}: the pattern matches no file")
            files += found
        else:
            raise InputError(f"{name}: file not found (looked for {os.path.abspath(name)})")
    return files


def _size(path: str) -> int:
    return 0 if path == STDIN else os.path.getsize(path)


def _stdin_spans(text_field=None, **_):
    """stdin's documents as every command reads stdin (JSON Lines when its first line is a JSON object, else
    one document per line), without byte ranges."""
    import sys

    return ((doc, None, None) for doc in iter_stdin_documents(sys.stdin.buffer, text_field=text_field))


def _fingerprint(path: str) -> dict:
    if path == STDIN:
        return {"path": STDIN, "bytes": None, "mtime_ns": None}
    st = os.stat(path)
    return {"path": path, "bytes": st.st_size, "mtime_ns": st.st_mtime_ns}


# ---- the model -----------------------------------------------------------------------------------------------------


def _load_model(model):
    from fastsw.tokenizer import Tokenizer

    if isinstance(model, (str, os.PathLike)):
        return Tokenizer.load(model)
    if not hasattr(model, "encode_to_numpy"):
        raise TypeError(f"model must be a fastsw Tokenizer or the path of a model file, not {type(model).__name__}")
    return model


def model_hash(tok) -> str:
    """sha256 of the model's canonical serialisation: its model file's JSON (keys sorted) followed by every
    token's bytes in id order, each after its length (a model built from a rank file has its vocabulary there,
    not in merges). A model loaded from a file and the same model in memory hash alike."""
    from fastsw._config import gc_paused
    from fastsw.io.model_file import model_to_dict

    with gc_paused():  # a list per merge: the collector's passes over the model's objects cost ~5 x the work
        text = json.dumps(model_to_dict(tok), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    h = hashlib.sha256(text.encode("utf-8"))
    vocab = tok.vocab
    h.update(np.array([len(b) for b in vocab], "<u4").tobytes())
    h.update(b"".join(vocab))
    return h.hexdigest()


def _token_id(tok, token, what: str) -> int:
    if isinstance(token, (int, np.integer)) and not isinstance(token, bool):
        if not 0 <= token < tok.n_vocab:
            raise ValueError(f"{what}={token} is not an id of this model (0..{tok.n_vocab - 1})")
        return int(token)
    if not isinstance(token, str) or not token:
        raise ValueError(f"{what}={token!r} must be a token's text (e.g. '<|endoftext|>') or an id")
    special = tok.special_tokens.get(token)
    if special is not None:
        return special
    try:
        return tok.encode_single_token(token)
    except (KeyError, ValueError):
        specials = ", ".join(sorted(tok.special_tokens)) or "none"
        raise ValueError(f"{what}={token!r} is not one token of this model (special tokens: {specials})") from None


def _resolve_eot(tok, eot) -> Optional[int]:
    if eot == "auto":
        tid = tok.special_tokens.get("<|endoftext|>")
        if tid is None:
            warnings.warn(
                "the model has no '<|endoftext|>' special token, so no end-of-text token separates the "
                "documents (the .idx.npy files still mark where each one starts); pass eot=TOKEN "
                "(--eot TOKEN) to put one after each document",
                OptionWarning,
                stacklevel=3,
            )
        return tid
    if eot is None:
        return None
    return _token_id(tok, eot, "eot")


# ---- reading: documents with their positions ------------------------------------------------------------------------


class _Batch:
    """Documents read and where they come from: ``files``/``docs`` each document's file and number in it,
    ``begins``/``ends`` its byte range in an uncompressed file (-1 in a compressed or parquet file), and
    ``done_bytes`` how many bytes of all the inputs (as stored) have been read when the batch is complete."""

    __slots__ = ("texts", "files", "docs", "begins", "ends", "chars", "done_bytes")

    def __init__(self):
        self.texts: List[str] = []
        self.files: List[int] = []
        self.docs: List[int] = []
        self.begins: List[int] = []
        self.ends: List[int] = []
        self.chars = 0
        self.done_bytes = 0

    def positions(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return (
            np.array(self.files, np.int64),
            np.array(self.docs, np.int64),
            np.array(self.begins, np.int64),
            np.array(self.ends, np.int64),
        )


_END = object()


def _ranged(path: str) -> bool:
    """Whether a file's documents have byte ranges (an uncompressed text or JSONL file)."""
    return path != STDIN and not path.lower().endswith((".gz", ".zst", ".xz", ".bz2", ".parquet"))


def _read_batches(
    files: List[str], start: Tuple[int, int], reading: dict, batch_chars: int, stop: threading.Event
) -> Iterator[_Batch]:
    """Batches of documents from ``files``, starting at document ``start[1]`` of file ``start[0]``."""
    batch = _Batch()
    done = sum(_size(f) for f in files[: start[0]])
    for fi in range(start[0], len(files)):
        skip = start[1] if fi == start[0] else 0
        ranged = _ranged(files[fi])
        documents = _stdin_spans(**reading) if files[fi] == STDIN else iter_document_spans(files[fi], **reading)
        di = -1
        while True:
            try:
                doc, begin, end = next(documents)
            except StopIteration:
                break
            except InputError:  # the documents before the bad one still make their complete shards
                if batch.texts:
                    yield batch
                raise
            di += 1
            if di < skip:
                continue
            batch.texts.append(doc)
            batch.files.append(fi)
            batch.docs.append(di)
            batch.begins.append(begin if ranged else -1)
            batch.ends.append(end if ranged else -1)
            batch.chars += len(doc)
            if batch.chars >= batch_chars:
                batch.done_bytes = done + (end or 0)
                yield batch
                if stop.is_set():
                    return
                batch = _Batch()
        done += _size(files[fi])
    batch.done_bytes = done
    if batch.texts:
        yield batch


# ---- writing ------------------------------------------------------------------------------------------------------


class _Writer:
    """Cuts the framed stream into shards and keeps the manifest in step (runs in the writer thread)."""

    def __init__(self, out_dir: Path, manifest: dict, fmt: str, dtype: str, shard_tokens: int, skip: int):
        self.dir = out_dir
        self.manifest = manifest
        self.fmt, self.dtype, self.size = fmt, np.dtype(dtype).newbyteorder("<"), shard_tokens
        self.skip = skip  # tokens of the first document that earlier shards hold already
        self.index = len(manifest["shards"])
        self.cm = self.f = None
        self.filled = 0
        self.hash = None
        self.starts: List[np.ndarray] = []
        self.covers: dict = {}
        self.start_pos = None
        self.tokens_total = sum(s["tokens"] for s in manifest["shards"])
        self.docs_total = sum(s["documents"] for s in manifest["shards"])

    def _open(self, pos):
        self.cm = atomic_open(self.dir / _shard_name(self.index, self.fmt), "wb")
        self.f = self.cm.__enter__()
        head = header_bytes(self.fmt, str(self.dtype.newbyteorder("=")), self.size)
        self.f.write(head)
        self.hash = hashlib.sha256(head)
        self.filled = 0
        self.starts = []
        self.covers = {}
        self.start_pos = pos

    def add(
        self,
        stream: np.ndarray,
        starts: np.ndarray,
        files: np.ndarray,
        docs: np.ndarray,
        begins: np.ndarray,
        ends: np.ndarray,
    ) -> None:
        """Append a framed batch: ``stream`` the ids, ``starts`` each document's offset in it, ``files``/``docs``
        each document's file and number in its file, ``begins``/``ends`` its byte range (-1: none)."""
        at = 0
        if self.skip:
            at = self.skip
            self.skip = 0
        n = len(stream)
        while at < n:
            if self.f is None:
                self._open(self._position(at, stream, starts, files, docs))
            take = min(self.size - self.filled, n - at)
            chunk = stream[at : at + take].astype(self.dtype)
            data = chunk.tobytes()
            self.f.write(data)
            self.hash.update(data)
            lo = np.searchsorted(starts, at)
            # an empty document (no BOS/EOT) at the end of the batch belongs here unless the shard is full
            hi = np.searchsorted(
                starts, at + take, "right" if at + take == n and take < self.size - self.filled else "left"
            )
            self.starts.append((starts[lo:hi] - at + self.filled).astype(np.uint64))
            self._cover(
                max(int(np.searchsorted(starts, at, "right")) - 1, 0),
                max(int(np.searchsorted(starts, at + take, "left")), 1),
                files,
                docs,
                begins,
                ends,
            )
            self.filled += take
            at += take
            if self.filled == self.size:
                self._close(self._position(at, stream, starts, files, docs))

    def _cover(self, lo: int, hi: int, files, docs, begins, ends) -> None:
        """Add documents ``lo:hi`` of a batch (the ones with tokens in the open shard) to its input ranges."""
        fs = files[lo:hi]
        for f in np.unique(fs).tolist():
            sel = fs == f
            d, b, e = docs[lo:hi][sel], begins[lo:hi][sel], ends[lo:hi][sel]
            new = [int(d.min()), int(d.max()) + 1, int(b.min()), int(e.max())]
            old = self.covers.get(f)
            self.covers[f] = (
                new
                if old is None
                else [min(old[0], new[0]), max(old[1], new[1]), min(old[2], new[2]), max(old[3], new[3])]
            )

    def _inputs(self) -> List[dict]:
        return [
            {"file": f, "documents": [d0, d1], "bytes": [b0, b1] if b0 >= 0 else None}
            for f, (d0, d1, b0, b1) in sorted(self.covers.items())
        ]

    @staticmethod
    def _position(at: int, stream, starts, files, docs) -> dict:
        """The input position of stream offset ``at``: the document it falls in and the token within it."""
        if at >= len(stream):  # after the batch's last document
            return {"file": int(files[-1]), "document": int(docs[-1]) + 1, "token": 0}
        i = int(np.searchsorted(starts, at, "right")) - 1
        return {"file": int(files[i]), "document": int(docs[i]), "token": int(at - starts[i])}

    def _close(self, end: dict) -> None:
        starts = np.concatenate(self.starts) if self.starts else np.zeros(0, np.uint64)
        if self.filled != self.size:  # the last, partial shard: its real header
            head = header_bytes(self.fmt, str(self.dtype.newbyteorder("=")), self.filled)
            if head:
                self.f.seek(0)
                self.f.write(head)
                self.f.seek(0, os.SEEK_END)
                self.hash = None
        self.cm.__exit__(None, None, None)
        self.cm = self.f = None
        name = _shard_name(self.index, self.fmt)
        digest = self.hash.hexdigest() if self.hash is not None else _sha256_file(self.dir / name)
        idx_name = name.rsplit(".", 1)[0] + ".idx.npy"
        entry = {
            "path": name,
            "tokens": self.filled,
            "documents": len(starts),
            "sha256": digest,
            "index": idx_name,
            "index_sha256": None,
            "start": self.start_pos,
            "end": end,
            "inputs": self._inputs(),
        }
        self.manifest["shards"].append(entry)
        try:
            with atomic_open(self.dir / idx_name, "wb") as f:
                np.save(f, starts)
            entry["index_sha256"] = _sha256_file(self.dir / idx_name)
            _append_journal(self.dir, entry)
        except BaseException:  # the shard is not listed: remove it, so that only listed shards are in the folder
            self.manifest["shards"].pop()
            for unlisted in (name, idx_name):
                (self.dir / unlisted).unlink(missing_ok=True)
            raise
        self.tokens_total += self.filled
        self.docs_total += len(starts)
        self.index += 1

    def finish(self, end: Optional[dict]) -> None:
        if self.f is not None and self.filled:
            self._close(end)
        self.abort()
        self.manifest["complete"] = True
        self.manifest["tokens"] = self.tokens_total
        self.manifest["documents"] = self.docs_total
        _write_manifest(self.dir, self.manifest)
        (self.dir / JOURNAL).unlink(missing_ok=True)  # manifest.json lists all its shards now

    def abort(self) -> None:
        if self.cm is not None:
            cm, self.cm, self.f = self.cm, None, None
            try:
                raise KeyboardInterrupt  # discards the temporary file
            except KeyboardInterrupt as e:
                cm.__exit__(type(e), e, e.__traceback__)


def _sha256_file(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 22):
            h.update(block)
    return h.hexdigest()


def _write_manifest(out_dir: Path, manifest: dict) -> None:
    atomic_write_text(out_dir / MANIFEST, json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")


def _shard_name(k: int, fmt: str) -> str:
    return f"shard_{k:06d}{_EXT[fmt]}"


def _append_journal(out_dir: Path, entry: dict) -> None:
    """List one finished shard: its manifest entry as one line appended to the journal and synced (a failed write
    is cut off again, so the journal holds whole lines only)."""
    path = out_dir / JOURNAL
    line = (json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    except OSError as e:
        raise _write_error(str(path), str(out_dir), e) from e
    try:
        size = os.fstat(fd).st_size
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except BaseException as e:
            os.ftruncate(fd, size)
            if not size:
                path.unlink(missing_ok=True)
            if isinstance(e, OSError):
                raise _write_error(str(path), str(out_dir), e) from e
            raise
    finally:
        os.close(fd)


def _fold_journal(out_dir: Path, manifest: dict) -> dict:
    """``manifest`` with the shards its folder's journal lists after them appended. A last line without its newline
    (a write cut short by a crash) lists nothing; lines of shards the manifest already lists (the journal of a run
    stopped between writing the manifest and removing the journal) are passed over."""
    path = out_dir / JOURNAL
    try:
        lines = path.read_bytes().split(b"\n")
    except FileNotFoundError:
        return manifest
    lines.pop()  # b"" after the last newline, or a line cut short
    shards = list(manifest["shards"])
    listed = {s["path"]: s for s in shards}
    fmt = manifest["options"]["format"]
    for n, line in enumerate(lines, 1):
        try:
            entry = json.loads(line)
            name = entry["path"]
        except (ValueError, TypeError, KeyError):
            raise ShardError(
                f"{path}: line {n} is not a shard's entry; the folder is damaged, delete it to start over"
            ) from None
        if listed.get(name) == entry:
            continue
        if name != _shard_name(len(shards), fmt):
            raise ShardError(
                f"{path}: line {n} lists {name}, but the next shard is {_shard_name(len(shards), fmt)}; the "
                "folder is damaged, delete it to start over"
            )
        shards.append(entry)
        listed[name] = entry
    return {**manifest, "shards": shards}


def read_manifest(out_dir) -> dict:
    """The manifest of a shard folder: ``manifest.json``, with the shards that its journal lists while a run is under
    way (or was stopped) appended, so that ``["shards"]`` lists every complete shard.

        >>> # m = read_manifest("shards"); len(m["shards"]), m["complete"]
    """
    out = Path(out_dir)
    path = out / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ShardError(f"{path}: no manifest; is {out} a folder written by fastsw shard?") from None
    except ValueError as e:
        raise ShardError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        raise ShardError(f"{path}: not a fastsw shard manifest")
    return _fold_journal(out, manifest)


# ---- resuming -----------------------------------------------------------------------------------------------------


def _clean_temporaries(out_dir: Path) -> None:
    for p in out_dir.glob(".shard_*.tmp"):
        p.unlink(missing_ok=True)
    for p in out_dir.glob(f".{MANIFEST}.*.tmp"):
        p.unlink(missing_ok=True)


def _prepare(out_dir: Path, fresh: dict, files: List[str]) -> dict:
    """The manifest to continue: the folder's own when it was made with the same model, options and inputs
    (its listed shards checked), else a fresh one for an empty folder."""
    path = out_dir / MANIFEST
    if path.exists() and STDIN in files:
        raise ShardError(
            f"{out_dir}: a run that reads stdin ('-') cannot be resumed (stdin cannot be read again "
            "from where the last shard ended); shard stdin into a new folder, or write it to a file "
            "and shard the file, which can be resumed"
        )
    if not path.exists():
        ours = [p for p in out_dir.iterdir() if not p.name.startswith(".shard_")]
        if ours:
            raise ShardError(
                f"{out_dir}: the folder is not empty and holds no {MANIFEST}; choose a new or empty "
                "folder for the shards"
            )
        return fresh
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
        if old.get("format") != MANIFEST_FORMAT:
            raise ValueError("not a fastsw shard manifest")
    except (ValueError, OSError) as e:
        raise ShardError(f"{path}: cannot read the manifest ({e}); choose a new folder") from None
    for key in ("model", "options"):
        if old.get(key) != fresh[key]:
            what = next(
                (k for k in set(old.get(key, {})) | set(fresh[key]) if old.get(key, {}).get(k) != fresh[key].get(k)),
                key,
            )
            raise ShardError(
                f"{out_dir}: its shards were made with another {key} ({what}: "
                f"{old.get(key, {}).get(what)!r}, now {fresh[key].get(what)!r}); rerun with the same "
                "settings to resume, or choose a new folder"
            )
    if [i["path"] for i in old["inputs"]] != [i["path"] for i in fresh["inputs"]]:
        raise ShardError(
            f"{out_dir}: its shards were made from other inputs ({len(old['inputs'])} files, now "
            f"{len(files)}); rerun with the same inputs to resume, or choose a new folder"
        )
    old = _fold_journal(out_dir, old)
    resume = old["shards"][-1]["end"] if old["shards"] else {"file": 0, "document": 0, "token": 0}
    for k, (was, now) in enumerate(zip(old["inputs"], fresh["inputs"])):
        covered = k < resume["file"] or (k == resume["file"] and (resume["document"] or resume["token"]))
        if covered and (was["bytes"], was["mtime_ns"]) != (now["bytes"], now["mtime_ns"]):
            raise ShardError(
                f"{now['path']}: the file changed since its shards were written; choose a new folder "
                "(or delete this one) to start over"
            )
    for s in old["shards"]:
        p = out_dir / s["path"]
        if not p.is_file():
            raise ShardError(f"{p}: a shard listed in the manifest is missing; delete the folder to start over")
    old["inputs"] = fresh["inputs"]
    return old


# ---- the pipeline -------------------------------------------------------------------------------------------------


def shard(
    inputs: Union[PathLike, Sequence[PathLike]],
    model: Union["Tokenizer", PathLike],
    out_dir: PathLike,
    *,
    format: str = "bin",
    dtype: Optional[str] = None,
    eot: Union[str, int, None] = "auto",
    bos: Union[str, int, None] = None,
    shard_tokens: int = DEFAULT_SHARD_TOKENS,
    workers: Optional[int] = None,
    text_field: Optional[str] = None,
    doc_mode: str = "auto",
    separator: Optional[str] = None,
    batch_chars: int = DEFAULT_BATCH_CHARS,
    progress: bool = False,
    client: Any = None,
) -> dict:
    """Encode the documents of ``inputs`` with ``model`` into token shards in the folder ``out_dir``; returns the
    manifest (also written to ``out_dir/manifest.json``).

    ``inputs``: files, globs or directories (see :func:`resolve_inputs`), read as every fastsw command reads them
    (``text_field``, ``doc_mode``, ``separator``). ``model``: a :class:`~fastsw.Tokenizer` or a model file.
    ``format``: ``"bin"``, ``"llmc"`` or ``"npy"`` (see the module docstring). ``dtype``: ``"uint16"`` or
    ``"uint32"`` (default the smallest that holds every id). ``eot``: the token after each document (a token's
    text or id; ``"auto"``, the default, is the model's ``<|endoftext|>`` when it has one; None for none); ``bos``:
    a token before each document. ``shard_tokens``: tokens per shard (the last one partial). ``workers``: encoder
    threads (None: all cores). ``batch_chars`` bounds memory: about three batches of that many characters are held
    at once. ``client``: a ``dask.distributed.Client``; then each input file is encoded by one task on the
    cluster (the workers must be able to read the input paths) and the shards are written here, byte-identical
    to a local run (see :func:`fastsw.corpus.distributed.connect`). Running it again on the same folder with the same arguments resumes an interrupted run (or does
    nothing when it is complete).

        >>> import fastsw, tempfile, pathlib
        >>> tok = fastsw.train(["hello world"] * 3, vocab_size=252, special_tokens=["<|endoftext|>"])
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "a.txt").write_text("hello\\nworld\\n")
        >>> m = fastsw.shard(d / "a.txt", tok, d / "out", shard_tokens=4)
        >>> [s["tokens"] for s in m["shards"]], m["documents"]
        ([4, 4, 2], 2)
    """
    if format not in FORMATS:
        raise ValueError(f"format={format!r} is not one of {', '.join(FORMATS)}")
    if isinstance(shard_tokens, bool) or not isinstance(shard_tokens, (int, np.integer)) or shard_tokens < 1:
        raise ValueError(f"shard_tokens={shard_tokens!r} must be an int >= 1")
    if format == "llmc" and shard_tokens >= 1 << 31:
        raise ValueError(f"shard_tokens={shard_tokens} is too large for llm.c shards (fewer than 2**31 tokens)")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers={workers!r} must be an int >= 1 (or None for all cores)")
    tok = _load_model(model)
    dtype = dtype_for(tok.n_vocab, dtype)
    eot_id = _resolve_eot(tok, eot)
    bos_id = None if bos is None else _token_id(tok, bos, "bos")
    files = resolve_inputs(inputs)
    reading = {"text_field": text_field, "doc_mode": doc_mode, "separator": separator}
    for f in files:  # fail on a format the reader refuses before anything is written
        if f == STDIN:
            if client is not None:
                raise ValueError("stdin ('-') cannot be sharded on a Dask cluster; write it to a file first")
            iter_documents([], **reading)  # checks the options
        else:
            iter_documents(f, **reading)
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(
            str(out), f"cannot create the folder ({e.strerror}); choose a writable path", e.errno or 0
        ) from e
    if not os.access(out, os.W_OK | os.X_OK):
        raise OutputError(str(out), "permission denied: the folder is not writable; choose a writable folder", 13)
    fresh = {
        "format": MANIFEST_FORMAT,
        "version": MANIFEST_VERSION,
        "model": {"sha256": model_hash(tok), "n_vocab": tok.n_vocab},
        "options": {
            "format": format,
            "dtype": dtype,
            "eot": eot_id,
            "bos": bos_id,
            "shard_tokens": int(shard_tokens),
            "text_field": text_field or "text",
            "doc_mode": doc_mode,
            "separator": separator,
        },
        "inputs": [_fingerprint(f) for f in files],
        "shards": [],
        "complete": False,
    }
    _clean_temporaries(out)
    manifest = _prepare(out, fresh, files)
    if not manifest.get("complete"):
        _write_manifest(out, manifest)  # fails now on an unwritable folder or a full disk; takes in the journal
    (out / JOURNAL).unlink(missing_ok=True)
    if manifest.get("complete"):
        return manifest
    resume = manifest["shards"][-1]["end"] if manifest["shards"] else {"file": 0, "document": 0, "token": 0}
    writer = _Writer(out, manifest, format, dtype, int(shard_tokens), resume["token"])
    _run(
        files,
        (resume["file"], resume["document"]),
        reading,
        tok,
        writer,
        eot_id,
        bos_id,
        workers,
        batch_chars,
        progress,
        client,
    )
    return manifest


class _Stop(Exception):
    """The writer failed: the producer stops."""


def _local_items(files, start, reading, tok, eot_id, bos_id, workers, batch_chars, stop: threading.Event):
    """Framed batches, read by a reader thread (a bounded queue ahead) and encoded here on ``workers`` threads."""
    read_q: "queue.Queue" = queue.Queue(maxsize=2)
    halt = threading.Event()

    def reader():
        try:
            for batch in _read_batches(files, start, reading, batch_chars, halt):
                if not _put(read_q, batch, halt):
                    return
            _put(read_q, _END, halt)
        except BaseException as e:  # noqa: B902 -- handed to the encoding thread
            _put(read_q, e, halt)

    thread = threading.Thread(target=reader, name="fastsw-shard-reader", daemon=True)
    thread.start()
    try:
        while True:
            try:
                item = read_q.get(timeout=0.1)
            except queue.Empty:
                if stop.is_set():
                    raise _Stop() from None
                continue
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            ids, offsets = encode_arrays(tok, item.texts, workers)
            stream, starts = frame(ids, offsets, eot_id, bos_id)
            yield (stream, starts, *item.positions(), item.done_bytes)
    finally:
        halt.set()
        thread.join(1.0)  # a reader blocked in a slow read is left behind (a daemon thread)


def _encode_file(path: str, fi: int, first_doc: int, tok, reading: dict, eot_id, bos_id, batch_chars: int):
    """One Dask task: the framed stream of file ``path`` from its document ``first_doc`` on."""
    parts = []
    for batch in _read_batches([path], (0, first_doc), reading, batch_chars, threading.Event()):
        ids, offsets = encode_arrays(tok, batch.texts, 1)
        parts.append((*frame(ids, offsets, eot_id, bos_id), *batch.positions()[1:]))
    if not parts:
        return (np.zeros(0, np.int32),) + (np.zeros(0, np.int64),) * 4
    bases = np.cumsum([0] + [len(p[0]) for p in parts[:-1]])
    return (
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] + b for p, b in zip(parts, bases)]),
        *(np.concatenate([p[k] for p in parts]) for k in (2, 3, 4)),
    )


def _model_of(tok):
    """The model a worker encodes with (one Dask task per run, which the encoding tasks depend on)."""
    return tok


def _dask_items(client, files, start, reading, tok, eot_id, bos_id, batch_chars, stop: threading.Event):
    """Framed files, one Dask task each, taken in file order (a window of tasks ahead). A task whose worker dies is
    run again by Dask, and each file's result is taken once: no document is lost or repeated."""
    run = os.urandom(6).hex()  # the task keys of this run
    # The model as a task's result, not scattered data: Dask drops the extra copies of a key no waiting task needs
    # (its active memory manager), so a scattered model soon has one copy, and the death of the worker holding it
    # would lose it for good (scattered data cannot be recomputed) and cancel every task of the run. A task's result
    # is computed again on another worker.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"(?s).*large graph", category=UserWarning)
        remote = client.submit(_model_of, tok, key=f"fastsw-shard-{run}-model", pure=False)
    window = 2 * max(1, len(client.scheduler_info().get("workers", {})))
    pending: list = []
    order = iter(range(start[0], len(files)))
    done_bytes = sum(os.path.getsize(f) for f in files[: start[0]])

    def submit():
        fi = next(order, None)
        if fi is not None:
            first = start[1] if fi == start[0] else 0
            pending.append(
                (
                    fi,
                    client.submit(
                        _encode_file,
                        files[fi],
                        fi,
                        first,
                        remote,
                        reading,
                        eot_id,
                        bos_id,
                        batch_chars,
                        key=f"fastsw-shard-{run}-file{fi}",
                        retries=0,
                    ),
                )
            )

    for _ in range(window):
        submit()
    try:
        while pending:
            fi, future = pending.pop(0)
            submit()
            stream, starts, docs, begins, ends = future.result()
            done_bytes += os.path.getsize(files[fi])
            if len(starts):
                yield stream, starts, np.full(len(starts), fi, np.int64), docs, begins, ends, done_bytes
            if stop.is_set():
                raise _Stop()
    finally:
        for _, future in pending:
            future.cancel()


def _eta(secs: float, done: int, total: int) -> str:
    """``", ETA N s"`` from the input bytes read so far in ``secs`` (``done`` of ``total``), or "" when unknown
    (nothing read yet, or stdin).

        >>> _eta(10.0, 25, 100)
        ', ETA 30 s'
    """
    if done <= 0 or total <= 0 or done > total:
        return ""
    return f", ETA {secs * (total - done) / done:.0f} s"


def _put(q, item, stop: threading.Event) -> bool:
    while not stop.is_set():
        try:
            q.put(item, timeout=0.1)
            return True
        except queue.Full:
            pass
    return False


def _run(
    files, start, reading, tok, writer: _Writer, eot_id, bos_id, workers, batch_chars, progress, client=None
) -> None:
    """A producer of framed batches (local threads, or Dask tasks) -> the writer thread."""
    from fastsw.progress import Progress

    stop = threading.Event()
    write_q: "queue.Queue" = queue.Queue(maxsize=2)
    failure: List[BaseException] = []
    last_end: List[Optional[dict]] = [None]

    def write():
        try:
            while True:
                item = write_q.get()
                if item is _END:
                    writer.finish(last_end[0])
                    return
                if item is None:  # abort: complete shards stay, the open one is dropped
                    writer.abort()
                    return
                stream, starts, fi, di, begins, ends = item
                writer.add(stream, starts, fi, di, begins, ends)
                last_end[0] = {"file": int(fi[-1]), "document": int(di[-1]) + 1, "token": 0}
        except BaseException as e:  # noqa: B902 -- handed to the main thread
            failure.append(e)
            writer.abort()
            stop.set()

    if client is None:
        items = _local_items(files, start, reading, tok, eot_id, bos_id, workers, batch_chars, stop)
    else:
        items = _dask_items(client, files, start, reading, tok, eot_id, bos_id, batch_chars, stop)
    total_bytes = sum(_size(f) for f in files)
    base = sum(_size(f) for f in files[: start[0]])  # read by an earlier run
    bar = Progress("shard", enabled=progress)
    t0 = time.perf_counter()
    thread = threading.Thread(target=write, name="fastsw-shard-writer", daemon=True)
    thread.start()
    tokens = 0
    try:
        try:
            for stream, starts, fi, di, begins, ends, done in items:
                if not _put(write_q, (stream, starts, fi, di, begins, ends), stop):
                    break
                tokens += len(stream)
                if progress:
                    secs = max(time.perf_counter() - t0, 1e-9)
                    bar.update(
                        len(starts),
                        extra=(
                            f"documents, {(done - base) / 1e6 / secs:.1f} MB/s read, {tokens / secs / 1e6:.2f} M "
                            f"tokens/s, {writer.index} shards" + _eta(secs, done - base, total_bytes - base)
                        ),
                    )
        except _Stop:
            pass
        if failure:
            raise failure[0]
        _put(write_q, _END, stop)
        while thread.is_alive():
            thread.join(0.1)
        if failure:
            raise failure[0]
    except BaseException:
        if thread.is_alive() and not stop.is_set():
            _put(write_q, None, stop)
        stop.set()
        thread.join()  # the writer ends after its current write: only complete shards stay
        items.close()
        if progress and bar.tty:
            bar.stream.write("\n")
        raise
    if progress:
        bar.close()


# ---- verifying ----------------------------------------------------------------------------------------------------


def verify(out_dir, model=None) -> dict:
    """Re-read every shard and index listed in ``out_dir/manifest.json`` and check sizes, headers and sha256
    checksums (and, given ``model``, that the shards were made with it); returns the manifest, raises
    :class:`ShardError` naming the first shard that does not match."""
    out = Path(out_dir)
    path = out / MANIFEST
    manifest = read_manifest(out)
    if model is not None and model_hash(_load_model(model)) != manifest["model"]["sha256"]:
        raise ShardError(f"{out}: its shards were made with another model (the manifest's model sha256 differs)")
    opts = manifest["options"]
    itemsize = np.dtype(opts["dtype"]).itemsize
    head = len(header_bytes(opts["format"], opts["dtype"], 0))
    for s in manifest["shards"]:
        p = out / s["path"]
        if not p.is_file():
            raise ShardError(f"{p}: missing")
        size = p.stat().st_size
        if size != head + s["tokens"] * itemsize:
            raise ShardError(
                f"{p}: {size} bytes, the manifest says {s['tokens']} tokens ({head + s['tokens'] * itemsize} bytes)"
            )
        with open(p, "rb") as f:
            if f.read(head) != header_bytes(opts["format"], opts["dtype"], s["tokens"]):
                raise ShardError(f"{p}: the header does not match the manifest")
        if _sha256_file(p) != s["sha256"]:
            raise ShardError(f"{p}: sha256 checksum mismatch; the file changed or is damaged")
        q = out / s["index"]
        if not q.is_file() or _sha256_file(q) != s["index_sha256"]:
            raise ShardError(f"{q}: missing or its sha256 checksum does not match")
        if len(np.load(q)) != s["documents"]:
            raise ShardError(f"{q}: the number of documents does not match the manifest")
    if manifest.get("complete") and manifest.get("tokens") != sum(s["tokens"] for s in manifest["shards"]):
        raise ShardError(f"{path}: the total number of tokens does not match the shards")
    return manifest
