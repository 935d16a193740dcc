"""Model files by their content: :func:`from_file` (``Tokenizer.from_file``, HF's name) reads every format fastsw
loads -- its own JSON models, the authors' text format (:mod:`fastsw.io.interop`), ``.tiktoken`` rank files
(:mod:`fastsw.io.tiktoken_vocab`) and semingram-v1 MinGram files (:mod:`fastsw.trainers.mingram`) -- so this module sits above
them."""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Optional

from fastsw.files import read_head
from fastsw.io.interop import load_paper_model
from fastsw.trainers.mingram import load_semingram
from fastsw.io.tiktoken_vocab import load_tiktoken
from fastsw.tokenizer import Tokenizer

__all__ = ["from_file"]


def from_file(path, *, pattern: Optional[str] = None, special_tokens=None, allow_approximate: bool = False):
    """Load any model file fastsw reads, by its content (HF's name): a fastsw model
    (:meth:`Tokenizer.save`), the authors' text format (``BoundlessBPE v2 ...``,
    :func:`load_paper_model`), a ``.tiktoken`` rank file, optionally gzip-compressed
    (:meth:`Tokenizer.load_tiktoken` with ``pattern`` and ``special_tokens``: OpenAI's o200k_base and
    cl100k_base files are recognised by their content, any other rank file needs ``pattern``), or the MinGram
    seed authors' ``semingram-v1`` JSON (:func:`fastsw.trainers.mingram.load_semingram`, which refuses a file it cannot
    read exactly unless ``allow_approximate=True``). :meth:`fastsw.Tokenizer.from_file` calls it (an example
    there).
    """
    path = Path(path)
    head = read_head(path, 4096, "model file")
    gz = head[:2] == b"\x1f\x8b"
    if gz:  # a gzip-compressed rank file or seed authors' MinGram model
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 4096)
        except zlib.error:
            head = b""
    start = head.lstrip()
    if start.startswith(b"{"):
        if gz:
            return load_semingram(path, allow_approximate=allow_approximate)
        try:
            return Tokenizer.load(path)
        except ValueError as e:
            if "not a fastsw model file" not in str(e):
                raise
            if b"semingram-v1" not in path.read_bytes():
                raise
            return load_semingram(path, allow_approximate=allow_approximate)
    if start.startswith(b"BoundlessBPE"):
        return load_paper_model(path)
    first = start.split(b"\n", 1)[0].split()
    if len(first) == 2 and first[1].isdigit():
        return load_tiktoken(path, pattern=pattern, special_tokens=special_tokens)
    raise ValueError(
        f"{path}: not a model file fastsw can load: expected a fastsw model (JSON), the authors' "
        "format (first line 'BoundlessBPE v2 KIND') or a .tiktoken rank file ('base64-token rank' "
        "lines)"
    )
