"""fastsw's own model file format (version 1).

One UTF-8 JSON object::

    {
      "format": "fastsw",            # magic
      "format_version": 1,
      "algo": "bpe" | "boundless" | "superbpe",
      "profile": "paper" | "hf",
      "alphabet": {"kind": "bytes243"} | {"kind": "bytes256"}
                  | {"kind": "chars", "chars": "...", "byte_fallback": false},
      "pretokenizer": {"mode", "main_pattern", "script_specific_pattern",
                       "script_specific_scripts", "letter_pattern"},
      "merges": [[left_id, right_id, count, is_super], ...],   # rank/id order
      "special_tokens": {"<|endoftext|>": 2000, ...},
      "training": {...}                 # informational: options, timings
    }

Merge k creates token id ``len(alphabet) + k``; a token's bytes are its parents'
bytes concatenated, so the file is lossless without storing token strings.
Files are written to a temporary file in the same directory and renamed, so a
crash never leaves half a model. Pickle is never used.
"""
from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

from .alphabet import alphabet_from_config
from .pretokenize import Pretokenizer

FORMAT = "fastsw"
FORMAT_VERSION = 1


@contextlib.contextmanager
def atomic_open(path, mode: str = "w"):
    """Open a temporary file next to ``path`` for writing (``"w"`` UTF-8 text or
    ``"wb"``); on a clean exit it is synced, given the permissions a plain ``open``
    would (mkstemp makes 0600) and renamed over ``path``. On any error it is removed,
    so ``path`` is either the old file or the complete new one."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with (os.fdopen(fd, mode, encoding="utf-8") if "b" not in mode else os.fdopen(fd, mode)) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_text(path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_open`)."""
    with atomic_open(path, "w") as f:
        f.write(text)


def model_to_dict(tok) -> dict:
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "algo": tok.algo,
        "profile": tok.profile,
        "alphabet": tok.alphabet.to_config(),
        "pretokenizer": tok.pretokenizer.to_config(),
        "merges": [[m.left, m.right, m.count, int(m.super)] for m in tok.merges],
        "special_tokens": dict(tok.special_tokens),
        "training": tok.training_info,
    }


def save_model(tok, path) -> None:
    text = json.dumps(model_to_dict(tok), ensure_ascii=False, separators=(",", ":"))
    atomic_write_text(path, text + "\n")


def read_model_text(path: Path) -> str:
    """A model file's text; a missing or unreadable file is a ``ValueError`` naming it."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"{path}: model file not found") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: cannot read model file ({e})") from e


def load_model(path):
    from .tokenizer import Tokenizer

    path = Path(path)
    raw = read_model_text(path)
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not a fastsw model (invalid or truncated JSON at line {e.lineno}, "
                         f"column {e.colno}: {e.msg})") from e
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path}: not a fastsw model file (missing \"format\": \"fastsw\")")
    version = data.get("format_version")
    if not isinstance(version, int):
        raise ValueError(f"{path}: model file has no integer format_version")
    if version > FORMAT_VERSION:
        raise ValueError(f"{path}: model format version {version} is newer than this fastsw supports "
                         f"({FORMAT_VERSION}); upgrade fastsw to load it")
    if version < 1:
        raise ValueError(f"{path}: unsupported model format version {version}")
    try:
        merges = data["merges"]
        if not isinstance(merges, list) or not all(
                isinstance(m, list) and len(m) == 4 and all(isinstance(x, int) for x in m) for m in merges):
            raise ValueError("\"merges\" must be a list of [left, right, count, is_super] integers")
        return Tokenizer(
            alphabet=alphabet_from_config(data["alphabet"]),
            merges=merges,
            pretokenizer=Pretokenizer.from_config(data["pretokenizer"]),
            profile=data["profile"],
            algo=data["algo"],
            special_tokens=data.get("special_tokens") or {},
            training_info=data.get("training") or {},
        )
    except KeyError as e:
        raise ValueError(f"{path}: model file is missing the field {e.args[0]!r}") from e
    except (ValueError, TypeError) as e:
        raise ValueError(f"{path}: invalid model file: {e}") from e
