"""Streaming document readers: turn paths, lists of paths or iterables of `str` into a stream of documents.

This module owns the input side of training, encoding and the CLI: which file formats exist, how a file is cut into
documents, and the error messages for bad input. It never pre-tokenizes or learns anything. A document is a `str`, and
nothing downstream may combine two documents. Everything streams: memory holds at most the largest document plus one
read block, except in doc_mode "file", where the whole file is the document.

Inputs of `iter_documents`:
- a `str` or `os.PathLike`: one file. A bare `str` is always a path; a text that is meant as a document has to be
  wrapped in a list (`iter_documents([text])`).
- any other iterable (list, tuple, generator, an open text file, ...): each `str` item is a document as is, each
  `os.PathLike` item (e.g. `pathlib.Path`) is a file read as above. Paths in a list or tuple are checked before the
  first document is produced, so a typo in the last file name fails fast.

Formats, chosen by the file name (case-insensitive):
- Compression, by the last suffix: `.gz` (gzip), `.bz2`, `.xz` and `.zst` (Zstandard; needs the `zstandard`
  package: `pip install 'fastsw[zstd]'`). The decompressed bytes are read exactly as an uncompressed file.
- `*.jsonl`, `*.ndjson` (also compressed): one JSON object per line. The document is the value of `text_field`
  (default "text"), exactly as stored (no stripping). Blank lines are skipped. A `text_field` given with a
  plain-text file, which has no fields, is ignored for it with an `OptionWarning`.
- `*.parquet` (needs `pyarrow`, the `parquet` extra): the string column `text_field` (default "text"), one
  document per row, read one record batch at a time.
- `*.json` is rejected: a single JSON value is not a corpus.
- anything else (also compressed): UTF-8 text (strict), cut by `doc_mode`:
  - "line" ("auto" without a separator): each line is a document, including its trailing "\\n". Lines split only at
    "\\n", so a "\\r" stays inside the document. Joining the documents gives back the file.
  - "file": the whole file is one document (an empty file gives one empty document).
  - "separator" ("auto" with a separator): the pieces between occurrences of `separator`, which is not part of any
    document. This is `text.split(separator)`, except that a trailing empty piece is dropped, so an empty file gives
    no document and a file that ends with the separator has no empty last document.

Design notes: see docs/internals.md, section "Reading input".
"""

from __future__ import annotations

import bz2
import codecs
import contextlib
import gzip
import io
import itertools
import json
import lzma
import os
import warnings
import re
import zlib
from collections.abc import Iterable, Iterator
from typing import BinaryIO, Optional, Union

from fastsw.notes import OptionWarning

__all__ = ["DOC_MODES", "READ_BLOCK_SIZE", "COMPRESSIONS", "STDIN_FORMATS", "InputError", "open_text"]
__all__ += [
    "iter_documents",
    "iter_document_spans",
    "iter_language_documents",
    "iter_stdin_documents",
    "iter_stdin_lines",
]

PathArg = Union[str, "os.PathLike[str]"]

#: Bytes read at a time in separator mode and while locating invalid UTF-8 (tests make it small).
READ_BLOCK_SIZE = 1 << 20

DOC_MODES = ("auto", "line", "file", "separator")

_JSONL_SUFFIXES = (".jsonl", ".ndjson")
#: Compressed inputs, by their last suffix: the name of the compression in messages.
COMPRESSIONS = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zst": "Zstandard"}
ZSTD_MISSING = "reading .zst files needs the zstandard package: pip install 'fastsw[zstd]' (or pip install zstandard)"
_UNSUPPORTED_COMPRESSION = (".lz4", ".zip", ".7z")
try:  # optional: the "zstd" extra
    import zstandard as _zstd
except ImportError:  # pragma: no cover - depends on the environment
    _zstd = None
# gzip raises BadGzipFile (an OSError), EOFError, zlib.error; bz2 OSError/EOFError; lzma LZMAError; zstandard ZstdError
_READ_ERRORS = (OSError, EOFError, zlib.error, lzma.LZMAError) + ((_zstd.ZstdError,) if _zstd is not None else ())
# A JSON escape of a UTF-16 surrogate (\uD800..\uDFFF); only such lines can decode to a str with a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_MAGIC_HINTS = (
    (b"\x1f\x8b", "the file looks gzip-compressed: give it a .gz name"),
    (b"BZh", "the file looks bzip2-compressed: give it a .bz2 name"),
    (b"\xfd7zXZ", "the file looks xz-compressed: give it a .xz name"),
    (b"\x28\xb5\x2f\xfd", "the file looks Zstandard-compressed: give it a .zst name"),
    (b"\xff\xfe", "the file looks like UTF-16: convert it to UTF-8"),
    (b"\xfe\xff", "the file looks like UTF-16: convert it to UTF-8"),
)


class InputError(ValueError):
    """Bad input data. The message names the file and the (1-based) line, and says how to fix the input."""


def iter_documents(
    inputs: PathArg | Iterable[str | os.PathLike[str]],
    *,
    text_field: str | None = None,
    doc_mode: str = "auto",
    separator: str | None = None,
) -> Iterator[str]:
    """Return a generator of the documents in `inputs` (see the module docstring for inputs, formats and modes).

    The options are checked now. Paths given directly or in a list or tuple are also checked now (they must exist
    and must not be directories). File contents are read only as the generator is consumed, so a bad line fails
    after the documents before it were produced.
    """
    mode = _resolve_mode(doc_mode, separator)
    if text_field is not None and (not isinstance(text_field, str) or not text_field):
        raise ValueError(f"text_field={text_field!r} must be a non-empty str naming the JSON field that holds the text")
    if isinstance(inputs, (str, os.PathLike)):
        path = _check_path(inputs, bare_str=isinstance(inputs, str))
        return _read_file(path, text_field, mode, separator)
    if isinstance(inputs, (bytes, bytearray, memoryview)):
        raise TypeError(
            "inputs is bytes; pass a path, or decode the text and wrap it in a list: iter_documents([data.decode()])"
        )
    if isinstance(inputs, (list, tuple)):
        for item in inputs:
            if isinstance(item, os.PathLike):
                _check_path(item)
        first = inputs[0] if inputs else None
        if isinstance(first, str) and len(first) < 4096 and "\n" not in first and os.path.isfile(first):
            warnings.warn(
                f"the str {first!r} in the inputs list is read as document text, but it names a file; "
                "wrap file names in pathlib.Path to read them",
                UserWarning,
                stacklevel=3,
            )
    try:
        items = iter(inputs)
    except TypeError:
        raise TypeError(
            f"inputs must be a path, a list of paths or an iterable of str documents, not {type(inputs).__name__}"
        ) from None
    return _read_items(items, text_field, mode, separator)


def open_text(path: PathArg, *, newline: str | None = "\n") -> io.TextIOWrapper:
    """Open a plain or compressed (by a `.gz`, `.bz2`, `.xz` or `.zst` name) file as strict UTF-8 text for reading.

    Lines end only at "\\n" and nothing is translated (`newline="\\n"`; pass another value to change this).
    A missing file, a directory, invalid UTF-8 and broken compressed data all raise `InputError` naming the file
    (and, for invalid UTF-8, the line and byte offset).
    """
    name = _check_path(path, corpus=False)
    gz = _compression(name)
    return _TextFile(_open_binary(name, gz), name, gz, newline)


# ---- drivers ------------------------------------------------------------------------------------------------------


def _resolve_mode(doc_mode: str, separator: str | None) -> str:
    if doc_mode not in DOC_MODES:
        raise ValueError(f"doc_mode={doc_mode!r} is not one of {', '.join(map(repr, DOC_MODES))}")
    if separator is None:
        if doc_mode == "separator":
            raise ValueError("doc_mode='separator' needs separator=..., e.g. separator='\\n\\n\\n'")
        return "line" if doc_mode == "auto" else doc_mode
    if not isinstance(separator, str) or not separator:
        raise ValueError(f"separator={separator!r} must be a non-empty str, e.g. '\\n\\n\\n'")
    try:
        separator.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(f"separator={separator!r} is not valid Unicode text (it has a lone surrogate)") from e
    if doc_mode not in ("auto", "separator"):
        raise ValueError(f"separator= is used only with doc_mode='separator' or 'auto', not doc_mode={doc_mode!r}")
    return "separator"


def _check_path(path: PathArg, *, bare_str: bool = False, corpus: bool = True) -> str:
    """Return the path as a str after checking that it names an existing file (of a corpus format if `corpus`)."""
    name = os.fsdecode(os.fspath(path))
    if os.path.isdir(name):
        raise InputError(f"{name}: is a directory; pass the files in it instead (e.g. {os.path.join(name, '*.jsonl')})")
    if not os.path.exists(name):
        if bare_str:
            shown = repr(name if len(name) <= 60 else name[:57] + "...")
            raise InputError(
                f"{shown}: file not found (looked for {os.path.abspath(name)}); a single str is read as a path, "
                "so to use a text as a document wrap it in a list: iter_documents([text])"
            )
        raise InputError(f"{name}: file not found (looked for {os.path.abspath(name)})")
    if corpus:
        _format(name)
    return name


def _compression(name: str) -> str | None:
    """The compression suffix of a file name (a key of `COMPRESSIONS`), or None."""
    lower = name.lower()
    return next((ext for ext in COMPRESSIONS if lower.endswith(ext)), None)


def _format(name: str) -> tuple[str, str | None]:
    """Return ("jsonl" or "text", the compression suffix or None) from a file name; reject formats that would be
    misread."""
    lower = os.path.basename(name).lower()
    for ext in _UNSUPPORTED_COMPRESSION:
        if lower.endswith(ext):
            raise InputError(
                f"{name}: {ext} files are not supported; decompress it, or recompress it with gzip "
                "(.gz), bzip2 (.bz2), xz (.xz) or Zstandard (.zst)"
            )
    if lower.endswith(".parquet"):
        return "parquet", None
    gz = _compression(lower)
    if gz == ".zst":
        _zstandard()  # a missing package is reported before any file is read
    base = lower[: -len(gz)] if gz else lower
    if base.endswith(_JSONL_SUFFIXES):
        return "jsonl", gz
    if base.endswith(".json"):
        raise InputError(
            f"{name}: a .json file is not read as a corpus; use JSON Lines (one object per line, named .jsonl or "
            ".ndjson), or rename the file to .txt to read it as plain text"
        )
    return "text", gz


def text_field_note(path: str, shown: str) -> Optional[str]:
    """The note for a text field option (``shown`` as the user wrote it) given with the file ``path``: None for
    JSON Lines, which have fields; else that it is ignored for this plain-text file.

        >>> text_field_note("a.jsonl.gz", "text_field='body'") is None
        True
        >>> text_field_note("a.txt", "--text-field body")
        '--text-field body is ignored for a.txt: only .jsonl/.ndjson inputs are JSON objects with fields; a plain-text file is cut into documents by doc_mode'
    """
    if _format(path)[0] in ("jsonl", "parquet"):
        return None
    return (
        f"{shown} is ignored for {path}: only .jsonl/.ndjson inputs are JSON objects with fields; a "
        "plain-text file is cut into documents by doc_mode"
    )


def _read_items(items: Iterator[object], text_field: str | None, mode: str, separator: str | None) -> Iterator[str]:
    for index, item in enumerate(items):
        if isinstance(item, str):
            yield item
        elif isinstance(item, os.PathLike):
            yield from _read_file(_check_path(item), text_field, mode, separator)
        elif isinstance(item, (bytes, bytearray)):
            raise InputError(f"inputs item {index} is bytes, not str; decode it first (item.decode('utf-8'))")
        else:
            raise InputError(
                f"inputs item {index} is {type(item).__name__}; items must be str documents or pathlib.Path files"
            )


def _read_file(
    path: str, text_field: str | None, mode: str, separator: str | None, spans: bool = False
) -> Iterator[str]:
    """The documents of one file; ``text_field`` None means the default ("text"), and given with a plain-text
    file it is ignored with an :class:`~fastsw.notes.OptionWarning`. With ``spans``, ``(document, start, end)``
    as :func:`iter_document_spans` describes them."""
    fmt, gz = _format(path)
    if fmt == "jsonl":
        yield from _jsonl_documents(path, gz, text_field or "text", spans=spans)
        return
    if fmt == "parquet":
        if spans:
            yield from ((text, None, None) for text in _parquet_documents(path, text_field or "text"))
        else:
            yield from _parquet_documents(path, text_field or "text")
        return
    if text_field is not None:
        warnings.warn(text_field_note(path, f"text_field={text_field!r}"), OptionWarning, stacklevel=2)
    if mode == "line":
        yield from _line_documents(path, gz, spans)
    elif mode == "file":
        yield from _file_document(path, gz, spans)
    else:
        assert separator is not None  # guaranteed by _resolve_mode
        yield from _separator_documents(path, gz, separator, spans)


def iter_document_spans(
    path: PathArg, *, text_field: str | None = None, doc_mode: str = "auto", separator: str | None = None
) -> Iterator[tuple[str, Optional[int], Optional[int]]]:
    """Return a generator of ``(document, start, end)`` for the one file ``path``, read as :func:`iter_documents`
    reads it. For an uncompressed text or JSONL file, ``start:end`` is the document's byte range in the file (a
    JSONL document's whole line, with its "\\n" and any blank lines before it; a text line with its "\\n"); for a
    compressed file both are how far the compressed file has been read when the document is produced (a measure
    of progress, not the document's range); for parquet both are None.

        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "docs.txt"
        >>> _ = path.write_text("hello\\nwörld\\n", encoding="utf-8")
        >>> list(iter_document_spans(path))
        [('hello\\n', 0, 6), ('wörld\\n', 6, 13)]
    """
    mode = _resolve_mode(doc_mode, separator)
    if text_field is not None and (not isinstance(text_field, str) or not text_field):
        raise ValueError(f"text_field={text_field!r} must be a non-empty str naming the JSON field that holds the text")
    name = _check_path(path, bare_str=isinstance(path, str))
    return _read_file(name, text_field, mode, separator, spans=True)


# ---- readers: bytes in, documents out -----------------------------------------------------------------------------


def iter_language_documents(
    inputs: PathArg | Iterable[PathArg], *, lang_field: str, text_field: str | None = None
) -> Iterator[tuple[str, str]]:
    """Return a generator of `(language, document)` from JSONL files whose every line names its language in the
    field `lang_field` (a non-empty string) and holds its text in `text_field` (default "text").

    `inputs` is one path or a list of paths (checked now); a plain-text file has no fields and is an `InputError`.

        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "docs.jsonl"
        >>> _ = path.write_text('{"text": "hello", "lang": "en"}\\n{"text": "hallo", "lang": "de"}\\n')
        >>> list(iter_language_documents(path, lang_field="lang"))
        [('en', 'hello'), ('de', 'hallo')]
    """
    if not isinstance(lang_field, str) or not lang_field:
        raise ValueError(
            f"lang_field={lang_field!r} must be a non-empty str naming the JSON field that holds the language"
        )
    if text_field is not None and (not isinstance(text_field, str) or not text_field):
        raise ValueError(f"text_field={text_field!r} must be a non-empty str naming the JSON field that holds the text")
    items = [inputs] if isinstance(inputs, (str, os.PathLike)) else list(inputs)
    paths = []
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"with lang_field, inputs must be JSONL file paths, not {type(item).__name__}")
        path = _check_path(item)
        if _format(path)[0] != "jsonl":
            raise InputError(
                f"{path}: lang_field={lang_field!r} (--lang-field) needs JSON Lines files "
                "(.jsonl/.ndjson, optionally .gz), whose lines have fields; name each plain-text "
                "file's language with --lang LANG=PATH (a dict in Python) instead"
            )
        paths.append(path)
    return _language_documents(paths, lang_field, text_field or "text")


def _language_documents(paths: list, lang_field: str, text_field: str) -> Iterator[tuple[str, str]]:
    for path in paths:
        yield from _jsonl_documents(path, _format(path)[1], text_field, lang_field)


def _jsonl_documents(
    path: str, gz: str | None, text_field: str, lang_field: str | None = None, spans: bool = False
) -> Iterator[str]:
    """The documents of a JSONL file; with `lang_field`, `(language, document)` pairs; with `spans`,
    `(document, start, end)` (see `iter_document_spans`)."""
    with _open_binary(path, gz) as f, _reading(path, gz):
        if not spans:
            for lineno, raw in enumerate(f, 1):
                if raw.isspace():
                    continue
                yield _jsonl_line(_decode(raw, path, gz), path, lineno, text_field, lang_field)
            return
        tell = _stored_position(f, gz)
        start = end = 0
        for lineno, raw in enumerate(f, 1):
            end += len(raw)
            if raw.isspace():
                continue
            text = _jsonl_line(_decode(raw, path, gz), path, lineno, text_field)
            if gz:
                start = end = tell()
            yield text, start, end
            start = end


def _jsonl_line(line: str, path: str, lineno: int, text_field: str, lang_field: str | None = None, hint: str = ""):
    """The document of one JSON Lines line (``(language, document)`` with `lang_field`); bad lines are an
    `InputError` naming ``path`` and ``lineno`` (``hint`` is added to the message of a line that is no object)."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        raise InputError(
            f"{path} line {lineno}: invalid JSON ({e.msg} at column {e.colno}); each line must be one JSON object"
            + hint
        ) from e
    if not isinstance(obj, dict):
        raise InputError(
            f"{path} line {lineno}: expected a JSON object with a {json.dumps(text_field)} field, "
            f"got {_json_kind(obj)}" + hint
        )
    if text_field not in obj:
        fields = ", ".join(json.dumps(k, ensure_ascii=False) for k in list(obj)[:20])
        more = ", ..." if len(obj) > 20 else ""
        raise InputError(
            f"{path} line {lineno}: no field {json.dumps(text_field)} (fields: {fields or 'none'}{more}); "
            "use --text-field (text_field= in Python) to name the field that holds the text"
        )
    text = obj[text_field]
    if not isinstance(text, str):
        raise InputError(
            f"{path} line {lineno}: field {json.dumps(text_field)} is {_json_kind(text)}, not a string; "
            "every document must be a JSON string"
        )
    if _SURROGATE_ESCAPE.search(line):
        _check_surrogates(text, path, lineno, text_field)
    if lang_field is None:
        return text
    lang = obj.get(lang_field)
    if not isinstance(lang, str) or not lang:
        raise InputError(
            f"{path} line {lineno}: field {json.dumps(lang_field)} "
            f"{'is missing' if lang is None else 'is empty' if lang == '' else 'is ' + _json_kind(lang)}; "
            "with --lang-field "
            "(lang_field= in Python) every line must name its language as a non-empty string"
        )
    return lang, text


def _parquet_documents(path: str, text_field: str) -> Iterator[str]:
    """The string column ``text_field`` of a parquet file, read one record batch at a time (pyarrow)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(f"{path}: reading parquet needs pyarrow; pip install 'fastsw[parquet]'") from None
    try:
        f = pq.ParquetFile(path)
    except Exception as e:  # pyarrow raises ArrowInvalid (a ValueError) or OSError for a damaged file
        raise InputError(f"{path}: cannot read it as parquet ({e})") from e
    names = f.schema_arrow.names
    if text_field not in names:
        fields = ", ".join(json.dumps(k, ensure_ascii=False) for k in names[:20])
        raise InputError(
            f"{path}: no column {json.dumps(text_field)} (columns: {fields or 'none'}); use "
            "--text-field (text_field= in Python) to name the column that holds the text"
        )
    row = 0
    for batch in f.iter_batches(batch_size=1024, columns=[text_field]):
        column = batch.column(0)
        values = column.to_pylist()
        for text in values:
            row += 1
            if not isinstance(text, str):
                raise InputError(
                    f"{path} row {row}: column {json.dumps(text_field)} is "
                    f"{_json_kind(text)}, not a string; every document must be a string"
                )
            yield text


STDIN_NAME = "<stdin>"
#: Values of ``iter_stdin_documents(fmt=...)`` (the CLI's ``--stdin-format``).
STDIN_FORMATS = ("auto", "text", "jsonl")


def iter_stdin_documents(
    stream: BinaryIO, *, fmt: str = "auto", text_field: str | None = None, keep_newline: bool = True
) -> Iterator[str]:
    """The documents of a stream of lines (the CLI's stdin), strict UTF-8, one line at a time (so a co-process
    gets each answer before it writes the next line).

    ``fmt``: ``"text"``: each line is a document, with its "\\n" if ``keep_newline``. ``"jsonl"``: every non-blank
    line is a JSON object whose ``text_field`` (default "text") is the document; blank lines are skipped.
    ``"auto"`` (default): JSON Lines when the first non-blank line is a JSON object (it starts with ``{`` and
    parses as one), else text; a later line of a JSON Lines stream that is not a JSON object is then an error
    that says to pass ``fmt="text"`` (``--stdin-format text``).

        >>> import io
        >>> list(iter_stdin_documents(io.BytesIO(b'{"text": "a b"}\\n\\n{"text": "c"}\\n')))
        ['a b', 'c']
        >>> list(iter_stdin_documents(io.BytesIO(b"a b\\nc\\n"), keep_newline=False))
        ['a b', 'c']
    """
    if fmt not in STDIN_FORMATS:
        raise ValueError(f"fmt={fmt!r} is not one of {', '.join(map(repr, STDIN_FORMATS))}")
    if text_field is not None and (not isinstance(text_field, str) or not text_field):
        raise ValueError(f"text_field={text_field!r} must be a non-empty str naming the JSON field that holds the text")
    detected = fmt == "auto"
    lines = iter_stdin_lines(stream)
    held = []  # blank lines before the first non-blank one (documents if the stream is text)
    for lineno, line in lines:
        if line.strip():
            if fmt == "auto":
                fmt = "jsonl" if line.lstrip().startswith("{") and _is_json_object(line) else "text"
            lines = itertools.chain([(lineno, line)], lines)
            break
        if fmt != "jsonl":
            held.append((lineno, line))
    if fmt == "jsonl":
        hint = (
            (
                "; stdin is read as JSON Lines because its first line is a JSON object: pass --stdin-format text "
                "(fmt='text') to read it as text"
            )
            if detected
            else ""
        )
        for lineno, line in lines:
            if line.strip():
                yield _jsonl_line(line, STDIN_NAME, lineno, text_field or "text", hint=hint)
        return
    for _lineno, line in itertools.chain(held, lines):
        yield line if keep_newline or not line.endswith("\n") else line[:-1]


def _is_json_object(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except json.JSONDecodeError:
        return False


def iter_stdin_lines(stream) -> Iterator[tuple[int, str]]:
    """(1-based number, line with its "\\n") of a binary stream (or of a text stream's bytes), strict UTF-8; a text
    stream without bytes is read as it is; None (no stdin) has no lines."""
    if stream is None:
        return
    if isinstance(stream, io.TextIOBase) and getattr(stream, "buffer", None) is None:
        yield from enumerate(stream, 1)  # a text stream without bytes (e.g. io.StringIO)
        return
    stream = getattr(stream, "buffer", stream)
    for number, raw in enumerate(stream, 1):
        try:
            yield number, raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(
                f"{STDIN_NAME} line {number}: invalid UTF-8 at byte {e.start} of the line "
                f"({e.reason}); the input must be UTF-8 text"
            ) from None


def _line_documents(path: str, gz: str | None, spans: bool = False) -> Iterator[str]:
    with _open_binary(path, gz) as f, _reading(path, gz):
        if not spans:
            for raw in f:  # binary files split only at b"\n" and keep it
                doc = _decode(raw, path, gz)
                yield doc
            return
        tell = _stored_position(f, gz)
        end = 0
        for raw in f:
            doc = _decode(raw, path, gz)
            start, end = end, end + len(raw)
            yield (doc, tell(), tell()) if gz else (doc, start, end)


def _file_document(path: str, gz: str | None, spans: bool = False) -> Iterator[str]:
    with _open_binary(path, gz) as f, _reading(path, gz):
        data = f.read()
        end = _stored_position(f, gz)() if gz else len(data)
    doc = _decode(data, path, gz)
    yield (doc, end if gz else 0, end) if spans else doc


def _stored_position(f, gz: str | None):
    """A function giving how many bytes of the file as stored have been read (for a compressed file, the
    compressed bytes consumed, read-ahead included; 0 where the decompressor does not say)."""
    raw = getattr(f, "fileobj", None) or getattr(f, "_fp", None)  # gzip; bz2 and lzma
    if raw is None:  # zstd: the BufferedReader over _ZstdReader
        raw = getattr(getattr(f, "raw", None), "_file", None)
    if not gz or raw is None:
        return lambda: 0
    return raw.tell


def _separator_documents(path: str, gz: str | None, separator: str, spans: bool = False) -> Iterator[str]:
    sep = separator.encode("utf-8")
    width = len(sep)
    block_size = READ_BLOCK_SIZE
    buf = bytearray()
    scan = 0  # no separator starts before this position of buf
    base = 0  # the file offset of buf[0]
    with _open_binary(path, gz) as f, _reading(path, gz):
        tell = _stored_position(f, gz)
        while block := f.read(block_size):
            buf += block
            start = 0
            while (i := buf.find(sep, max(scan, start))) >= 0:
                doc = _decode(buf[start:i], path, gz)
                if spans:  # a document's range ends with its separator
                    yield (doc, tell(), tell()) if gz else (doc, base + start, base + i + width)
                else:
                    yield doc
                start = i + width
            del buf[:start]
            base += start
            scan = max(0, len(buf) - width + 1)
        end = tell() if gz else base + len(buf)
    if buf:
        doc = _decode(buf, path, gz)
        yield (doc, end if gz else base, end) if spans else doc


# ---- helpers ------------------------------------------------------------------------------------------------------


def _zstandard():
    """The zstandard module; its absence is an `InputError` naming the extra to install."""
    if _zstd is None:
        raise InputError(ZSTD_MISSING)
    return _zstd


class _ZstdReader(io.RawIOBase):
    """The decompressed bytes of a Zstandard file, frame after frame; a file that ends inside a frame is an
    `OSError` (zstandard's own stream reader stops there without a word)."""

    def __init__(self, path: str) -> None:
        self._context = _zstandard().ZstdDecompressor()
        self._file = open(path, "rb")
        self._frame = self._context.decompressobj()
        self._in_frame = False  # bytes of the current frame were fed
        self._out = b""
        self._pos = 0  # bytes of _out already returned

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while self._pos == len(self._out):
            chunk = self._file.read(READ_BLOCK_SIZE)
            if not chunk:
                if self._in_frame:
                    raise OSError("the data ends inside a Zstandard frame (truncated file)")
                return 0
            out = [self._frame.decompress(chunk)]
            self._in_frame = True
            while self._frame.eof:  # a frame ended: what follows it starts the next one
                rest = self._frame.unused_data
                self._frame = self._context.decompressobj()
                self._in_frame = bool(rest)
                if not rest:
                    break
                out.append(self._frame.decompress(rest))
            self._out, self._pos = b"".join(out), 0
        n = min(len(buffer), len(self._out) - self._pos)
        buffer[:n] = memoryview(self._out)[self._pos : self._pos + n]
        self._pos += n
        return n

    def close(self) -> None:
        if not self.closed:
            self._file.close()
        super().close()


def _open_binary(path: str, gz: str | None) -> BinaryIO:
    try:
        if gz == ".zst":
            return io.BufferedReader(_ZstdReader(path), READ_BLOCK_SIZE)  # type: ignore[return-value]
        opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(gz or "", open)
        return opener(path, "rb")  # type: ignore[return-value]
    except FileNotFoundError as e:
        raise InputError(f"{path}: file not found (looked for {os.path.abspath(path)})") from e
    except IsADirectoryError as e:
        raise InputError(f"{path}: is a directory; pass the files in it instead") from e
    except OSError as e:
        raise InputError(f"{path}: cannot open ({e.strerror or e})") from e


@contextlib.contextmanager
def _reading(path: str, gz: str | None) -> Iterator[None]:
    """Turn I/O and gzip errors raised while reading `path` into an InputError naming the file."""
    try:
        yield
    except _READ_ERRORS as e:
        raise _read_error(path, gz, e) from e


def _read_error(path: str, gz: str | None, err: BaseException) -> InputError:
    if gz:
        kind = COMPRESSIONS[gz]
        return InputError(
            f"{path}: cannot read {kind} data ({err}); is the file complete and really {kind}-compressed?"
        )
    return InputError(f"{path}: read error ({err})")


def _decode(data: bytes | bytearray, path: str, gz: str | None) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _utf8_error(path, gz, e) from e


def _utf8_error(path: str, gz: str | None, err: UnicodeDecodeError) -> InputError:
    found = _find_invalid_utf8(path, gz)
    if found is None:  # the file changed since it was read; report what we know
        return InputError(f"{path}: invalid UTF-8 ({err.reason}); the file must be UTF-8 text")
    offset, line, reason, bad, head = found
    where = "byte offset (decompressed)" if gz else "byte offset"
    hint = "convert it to UTF-8 (e.g. iconv -f latin1 -t utf-8) or fix these bytes"
    if offset < 4:
        hint = next((h for magic, h in _MAGIC_HINTS if head.startswith(magic)), hint)
    return InputError(
        f"{path} line {line}: invalid UTF-8 at {where} {offset} ({reason}: {bad.hex(' ')}); "
        f"the file must be UTF-8 text: {hint}"
    )


def _find_invalid_utf8(path: str, gz: str | None) -> tuple[int, int, str, bytes, bytes] | None:
    """Scan `path` for its first invalid UTF-8 sequence: (byte offset, 1-based line, reason, bad bytes, first bytes)."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    pos = 0
    line = 1
    head = b""
    with _open_binary(path, gz) as f, _reading(path, gz):
        while True:
            block = f.read(READ_BLOCK_SIZE)
            if not head:
                head = block[:4]
            try:
                decoder.decode(block, final=not block)
            except UnicodeDecodeError as e:
                data = e.object  # bytes held back from the previous block + this block
                offset = pos - (len(data) - len(block)) + e.start
                # The held-back bytes are an incomplete multi-byte sequence, so they hold no b"\n".
                line += data[: e.start].count(b"\n")
                return offset, line, e.reason, bytes(data[e.start : e.end]), head
            if not block:
                return None
            line += block.count(b"\n")
            pos += len(block)


def _check_surrogates(text: str, path: str, lineno: int, text_field: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InputError(
            f"{path} line {lineno}: field {json.dumps(text_field)} has a lone surrogate \\u{ord(text[e.start]):04x} "
            f"at character {e.start}, which is not valid Unicode text; fix or remove that escape"
        ) from e


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


class _TextFile(io.TextIOWrapper):
    """A strict UTF-8 TextIOWrapper whose decoding and gzip errors name the file (the reader behind `open_text`)."""

    def __init__(self, buffer: BinaryIO, path: str, gz: str | None, newline: str | None) -> None:
        super().__init__(buffer, encoding="utf-8", errors="strict", newline=newline)
        self._source = (path, gz)

    def _wrap(self, err: Exception) -> InputError:
        if isinstance(err, UnicodeDecodeError):
            return _utf8_error(*self._source, err)
        return _read_error(*self._source, err)

    def read(self, size: int | None = -1) -> str:
        try:
            return super().read(size)
        except (UnicodeDecodeError, *_READ_ERRORS) as e:
            raise self._wrap(e) from e

    def readline(self, size: int | None = -1) -> str:
        try:
            return super().readline(size)
        except (UnicodeDecodeError, *_READ_ERRORS) as e:
            raise self._wrap(e) from e

    def __next__(self) -> str:
        try:
            return super().__next__()
        except (UnicodeDecodeError, *_READ_ERRORS) as e:
            raise self._wrap(e) from e
