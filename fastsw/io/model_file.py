"""fastsw's own model file format (version 1).

One UTF-8 JSON object::

    {
      "format": "fastsw",            # magic
      "format_version": 1,
      "algo": "bpe" | "boundless" | "superbpe",
      "profile": "paper" | "hf",
      "alphabet": {"kind": "bytes243"}                # profile paper
                  | {"kind": "bytes256"}              # profile hf
                  | {"kind": "chars", "chars": "...", "byte_fallback": false},   # profile hf
      "pretokenizer": {"mode", "main_pattern", "script_specific_pattern",
                       "script_specific_scripts", "letter_pattern"},
      "merges": [[left_id, right_id, count, is_super], ...],   # rank/id order; count <= 2**63-1 unless
                                        # training.weight_scale is given (weighted counts as big exact ints)
      "special_tokens": {"<|endoftext|>": 2000, ...},
      "normalize": null | "nfc" | "nfkc",   # optional; written only when set, absent = null (lossless)
      "unicode_version": "16.0.0",      # the Unicode version of the pre-tokenizer's classes (fastsw.pretokenizers._unicode);
                                        # absent in older files, which are read with the pinned 16.0.0 tables
      "training": {...}                 # informational: options, timings
    }

:func:`check_model_data` checks every field when a file is loaded.
Merge k creates token id ``len(alphabet) + k``; a token's bytes are its parents'
bytes concatenated, so the file is lossless without storing token strings.
Files are written atomically (:func:`fastsw.files.atomic_open`). Pickle is never used.

This module converts between files and plain data only (:func:`model_to_dict`,
:func:`read_model_json`, :func:`model_kwargs`); :meth:`fastsw.Tokenizer.save` and :meth:`fastsw.Tokenizer.load`
call it, so it never imports the tokenizer. Model kinds with their own fields (MinGram) are read by the
reader :mod:`fastsw.io.model_kinds` registers for their ``algo``.
"""

from __future__ import annotations

import json
from pathlib import Path

from fastsw._types import PathLike
from fastsw.pretokenizers._unicode import UNICODE_VERSION
from fastsw.alphabet import PROFILE_ALPHABETS, alphabet_from_config
from fastsw.files import OutputError, atomic_open, atomic_write_text, resolve_output_path  # noqa: F401 (re-exported)
from fastsw.pretokenizers.pretokenize import NORMALIZATIONS
from fastsw.pretokenizers.registry import pretokenizer_from_config

FORMAT = "fastsw"
FORMAT_VERSION = 1
ALGOS = ("bpe", "boundless", "superbpe")


def model_to_dict(tok) -> dict:
    """The JSON object of a model: ``tok`` is anything with the fields ``algo``, ``profile``,
    ``alphabet``, ``pretokenizer``, ``merges``, ``special_tokens`` and ``training_info``
    (a :class:`fastsw.Tokenizer`), and ``normalize``, written only when it is not None (so a
    lossless model's file is what it was before the field existed)."""
    data = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "algo": tok.algo,
        "profile": tok.profile,
        "alphabet": tok.alphabet.to_config(),
        "pretokenizer": tok.pretokenizer.to_config(),
        "merges": [[m.left, m.right, m.count, int(m.super)] for m in tok.merges],
        "special_tokens": dict(tok.special_tokens),
        "training": tok.training_info,
        "unicode_version": UNICODE_VERSION,
    }
    normalize = getattr(tok, "normalize", None)
    if normalize is not None:
        data["normalize"] = normalize
    return data


def approximate_error(target: str, reasons) -> ValueError:
    """The error of an export or import that would not be exact (every one is refused unless the caller passes
    ``allow_approximate=True``): what would be lost, and how to ask anyway.

        >>> str(approximate_error("a tiktoken encoding of this model", ["it normalizes text"]))
        'a tiktoken encoding of this model would not be exact: it normalizes text. Pass allow_approximate=True to get the closest approximation anyway (then measure it with verify_export)'
    """
    return ValueError(
        f"{target} would not be exact: " + "; ".join(reasons) + ". Pass allow_approximate=True to "
        "get the closest approximation anyway (then measure it with verify_export)"
    )


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


def model_fields(*own: str) -> tuple:
    """The top-level fields of a model file whose algorithm adds the fields ``own`` (BPE: ``merges``), in the order
    error messages list them."""
    return ("format", "format_version", "algo", "profile", "alphabet", "pretokenizer", *own) + _LAST_FIELDS


_LAST_FIELDS = ("special_tokens", "normalize", "training", "unicode_version")
_FIELDS = model_fields("merges")
_ALPHABET_SETTINGS = {
    "bytes243": ("kind",),
    "bytes256": ("kind",),
    "chars": ("kind", "chars", "byte_fallback"),
    "atoms": ("kind", "base", "atoms"),
}
_PRETOKENIZER_STRINGS = ("mode", "main_pattern", "script_specific_pattern", "letter_pattern")
_INT64_MAX = 2**63 - 1


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _json_type(x) -> str:
    """The JSON name of a parsed value's type, for messages."""
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "a boolean"
    return {dict: "an object", list: "an array", str: "a string", int: "an integer", float: "a number"}[type(x)]


def check_model_data(path, data: dict) -> None:
    """Schema check of a parsed model file (after its format and version): types and
    ranges of every field, merges that only use earlier ids, an alphabet that goes with
    the profile, special token ids right after the vocabulary. Every failure is one
    ``ValueError("PATH: field X: ...")``, so a damaged or hand-edited file never loads
    with silently different ids.

        >>> check_model_data("m.json", {"format": "fastsw", "format_version": 1, "algo": "bpe",  # doctest: +ELLIPSIS
        ...     "profile": "paper", "alphabet": {"kind": "bytes256"}, "pretokenizer": {}, "merges": []})
        Traceback (most recent call last):
        ValueError: m.json: field alphabet.kind: 'bytes256' does not go with profile 'paper' (which uses bytes243); ...
    """

    def bad(field: str, problem: str) -> ValueError:
        return ValueError(f"{path}: field {field}: {problem}")

    for field in data:
        if field not in _FIELDS:
            raise bad(field, f"unknown field; a fastsw model has {', '.join(_FIELDS)}")
    for field in ("algo", "profile", "alphabet", "pretokenizer", "merges"):
        if field not in data:
            raise bad(field, "missing; the file is incomplete, save the model again")
    algo, profile, alphabet = data["algo"], data["profile"], data["alphabet"]
    if algo not in ALGOS:
        raise bad("algo", f"{algo!r} is not one of {', '.join(ALGOS)}")
    if profile not in PROFILE_ALPHABETS:
        raise bad("profile", f"{profile!r} is not one of {', '.join(PROFILE_ALPHABETS)}")

    if not isinstance(alphabet, dict):
        raise bad("alphabet", f'must be an object such as {{"kind": "bytes243"}}, not {_json_type(alphabet)}')
    kind = alphabet.get("kind")
    if kind not in _ALPHABET_SETTINGS:
        raise bad("alphabet.kind", f"{kind!r} is not one of {', '.join(_ALPHABET_SETTINGS)}")
    if kind not in PROFILE_ALPHABETS[profile]:
        byte_kinds = [k for k in PROFILE_ALPHABETS[profile] if k != "atoms"]  # atoms: any profile's bytes + atoms
        raise bad(
            "alphabet.kind",
            f"{kind!r} does not go with profile {profile!r} (which uses "
            f"{' or '.join(byte_kinds)}); every id would mean another "
            "token, so the file was damaged or edited",
        )
    for key in alphabet:
        if key not in _ALPHABET_SETTINGS[kind]:
            raise bad(f"alphabet.{key}", f"unknown setting for a {kind} alphabet")
    n_alphabet = 243 if kind == "bytes243" else 256
    if kind == "chars":
        chars, fallback = alphabet.get("chars"), alphabet.get("byte_fallback", False)
        if not isinstance(chars, str):
            raise bad("alphabet.chars", f"must be a string of the alphabet's characters, not {_json_type(chars)}")
        if any(a >= b for a, b in zip(chars, chars[1:])):
            raise bad("alphabet.chars", "must hold each character once, in code point order (ids follow it)")
        if not isinstance(fallback, bool):
            raise bad("alphabet.byte_fallback", f"must be true or false, not {_json_type(fallback)}")
        n_alphabet = len(chars) + (256 if fallback else 0)
    if kind == "atoms":  # a byte alphabet (or none) and atoms beyond bytes (fastsw.alphabet.AtomAlphabet)
        base, atoms = alphabet.get("base"), alphabet.get("atoms")
        if base not in (None, PROFILE_ALPHABETS[profile][0]):
            raise bad(
                "alphabet.base",
                f"{base!r} does not go with profile {profile!r} (which uses {PROFILE_ALPHABETS[profile][0]!r} or null)",
            )
        if not isinstance(atoms, list):
            raise bad("alphabet.atoms", f"must be an array of [slot, name, shown], not {_json_type(atoms)}")
        n_alphabet = (0 if base is None else 243 if base == "bytes243" else 256) + len(atoms)

    pretokenizer = data["pretokenizer"]
    if not isinstance(pretokenizer, dict):
        raise bad("pretokenizer", f"must be an object of pre-tokenizer settings, not {_json_type(pretokenizer)}")
    for key in _PRETOKENIZER_STRINGS:
        if key in pretokenizer and not isinstance(pretokenizer[key], str):
            raise bad(f"pretokenizer.{key}", f"must be a string, not {_json_type(pretokenizer[key])}")
    scripts = pretokenizer.get("script_specific_scripts", [])
    if not isinstance(scripts, list) or not all(isinstance(x, str) for x in scripts):
        raise bad("pretokenizer.script_specific_scripts", "must be an array of Unicode script names")

    normalize = data.get("normalize")
    if normalize not in NORMALIZATIONS:
        raise bad(
            "normalize",
            f'{json.dumps(normalize, ensure_ascii=False)} is not one of null, "nfc", '
            '"nfkc"; the text would be normalized differently than in training',
        )

    merges = data["merges"]
    if not isinstance(merges, list):
        raise bad("merges", f"must be an array of [left, right, count, is_super], not {_json_type(merges)}")
    # Counts beyond 2**63-1 only in a model trained on weighted counts scaled to big exact integers (the
    # training record says by how much: weight_scale; fastsw.corpus.counting.weighted_counts)
    training = data.get("training")
    max_count = None if isinstance(training, dict) and "weight_scale" in training else _INT64_MAX
    # One fast test per merge (measured: 72 ms for 130k merges, a fifth of json.loads), the diagnosis after it.
    seen: dict = {}  # (left, right, is_super) -> the merge that made it: a pair is merged once
    for k, m in enumerate(merges):
        own = n_alphabet + k
        if type(m) is list and len(m) == 4:
            left, right, count, is_super = m
            if (
                type(left) is int
                and type(right) is int
                and type(count) is int
                and type(is_super) is int
                and 0 <= left < own
                and 0 <= right < own
                and 0 <= count
                and (max_count is None or count <= max_count)
                and (is_super == 0 or is_super == 1)
            ):
                first = seen.setdefault((left, right, is_super), k)
                if first != k:
                    raise bad(
                        f"merges[{k}]",
                        f"repeats merges[{first}] (the {'super' if is_super else ''}merge of "
                        f"ids {left} and {right}); a pair is merged once, so the file was "
                        "damaged or edited",
                    )
                continue
        if not (isinstance(m, list) and len(m) == 4 and all(_is_int(x) for x in m)):
            raise bad(f"merges[{k}]", f"must be [left, right, count, is_super] integers, not {json.dumps(m)}")
        if not (0 <= left < own and 0 <= right < own):
            raise bad(
                f"merges[{k}]",
                f"token ids ({left}, {right}) do not exist yet; merge {k} creates id {own} "
                f"and may only use ids 0..{own - 1}",
            )
        if count < 0 or (max_count is not None and count > max_count):
            raise bad(
                f"merges[{k}]",
                f"count {count} is outside 0..2**63-1 (larger counts only in a model trained "
                "with language weights, whose training record gives weight_scale)",
            )
        if is_super not in (0, 1):
            raise bad(f"merges[{k}]", f"is_super must be 0 or 1, not {is_super}")

    specials = data.get("special_tokens", {})
    if not isinstance(specials, dict):
        raise bad("special_tokens", f"must be an object {{token: id}}, not {_json_type(specials)}")
    for token, tid in specials.items():
        if not token:
            raise bad("special_tokens", "a special token cannot be the empty string")
        if not _is_int(tid):
            raise bad(
                f"special_tokens[{json.dumps(token, ensure_ascii=False)}]",
                f"the id must be an integer, not {_json_type(tid)}",
            )
    n_vocab = n_alphabet + len(merges)
    if sorted(specials.values()) != list(range(n_vocab, n_vocab + len(specials))):
        raise bad(
            "special_tokens",
            f"ids must be {n_vocab}..{n_vocab + len(specials) - 1}, right after the "
            f"{n_vocab}-token vocabulary, without gaps or repeats",
        )
    training = data.get("training", {})
    if not isinstance(training, dict):
        raise bad("training", f"must be an object, not {_json_type(training)}")


def read_model_json(path: PathLike) -> dict:
    """Read a fastsw model file's JSON object and check its header (format, format version, Unicode version);
    the fields of its ``algo`` are checked by :func:`model_kwargs` or the reader of its model kind
    (:mod:`fastsw.io.model_kinds`). Every failure is a ``ValueError`` naming the file."""
    path = Path(path)
    raw = read_model_text(path)
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ValueError(
            f"{path}: not a fastsw model (invalid or truncated JSON at line {e.lineno}, column {e.colno}: {e.msg})"
        ) from e
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f'{path}: not a fastsw model file (missing "format": "fastsw")')
    version = data.get("format_version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise ValueError(f"{path}: model file has no integer format_version")
    if version > FORMAT_VERSION:
        raise ValueError(
            f"{path}: model format version {version} is newer than this fastsw supports "
            f"({FORMAT_VERSION}); upgrade fastsw to load it"
        )
    if version < 1:
        raise ValueError(f"{path}: unsupported model format version {version}")
    unicode_version = data.get("unicode_version", UNICODE_VERSION)
    if unicode_version != UNICODE_VERSION:
        raise ValueError(
            f"{path}: the model was made with the Unicode {unicode_version!r} classes, but this fastsw "
            f"pre-tokenizes with Unicode {UNICODE_VERSION}; load it with the fastsw that saved it"
        )
    return data


def load_model_data(path: PathLike) -> dict:
    """Read and check a BPE-family model file: the keyword arguments of :class:`fastsw.Tokenizer`
    (``alphabet``, ``merges``, ``pretokenizer``, ``profile``, ``algo``, ``special_tokens``,
    ``training_info``) as plain data. Every failure is a ``ValueError`` naming the file."""
    return model_kwargs(path, read_model_json(path))


def model_kwargs(path: PathLike, data: dict) -> dict:
    """The :class:`fastsw.Tokenizer` keyword arguments of a BPE-family model file's JSON object (read by
    :func:`read_model_json`), every field checked (:func:`check_model_data`)."""
    check_model_data(path, data)
    try:
        pretokenizer = pretokenizer_from_config(data["pretokenizer"])
    except ValueError as e:
        raise ValueError(f"{path}: field pretokenizer: {e}") from e
    try:
        alphabet = alphabet_from_config(data["alphabet"])
    except (ValueError, TypeError) as e:
        raise ValueError(f"{path}: invalid model file: {e}") from e
    kwargs = {
        "alphabet": alphabet,
        "merges": data["merges"],
        "pretokenizer": pretokenizer,
        "profile": data["profile"],
        "algo": data["algo"],
        "special_tokens": data.get("special_tokens", {}),
        "training_info": data.get("training", {}),
    }
    if data.get("normalize") is not None:
        kwargs["normalize"] = data["normalize"]
    return kwargs
