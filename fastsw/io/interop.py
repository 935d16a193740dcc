"""Interoperability: the authors' model format, tiktoken, HF ``tokenizers``,
and the merge-rule / rank-table conflict detector (SPEC sections 7 and 11).

Free functions over a :class:`fastsw.Tokenizer` (this module imports the tokenizer at module level; the
methods users call, ``Tokenizer.load_paper``, ``tok.save_paper``, ``tok.save_hf``, ..., are defined in the
class and import this module when called):

* :func:`load_paper_model` / :func:`save_paper_model` -- the authors' text
  format (``BoundlessBPE v2 KIND``). Only the ``bytes243`` alphabet (profile
  ``paper``) can be expressed.
* :func:`to_tiktoken` / :func:`write_tiktoken_ranks` -- a ``tiktoken.Encoding``
  or a ``.tiktoken`` rank file for plain BPE models.
* :func:`save_hf` -- an HF ``tokenizer.json``; exact for plain BPE in
  ``simple`` pre-tokenizer mode, the best approximation otherwise.
* :func:`verify_export` -- how often an exported encoder agrees with fastsw.
* :func:`merge_conflicts` -- pieces where a merge-rule encoder (fastsw, HF with
  ``ignore_merges=False``) and a rank-table encoder (tiktoken: merge candidates
  found by looking up concatenated bytes, whole pieces looked up first) disagree.

Decisions (see each function for details):

* Byte alphabets in tiktoken / HF: tiktoken and HF's ByteLevel need every byte.
  The paper alphabet has 243 bytes; the 13 bytes that never occur in UTF-8
  (0xC0, 0xC1, 0xF5-0xFF) get *extra* ids after all fastsw ids (after the
  special tokens): ``n_vocab``, ``n_vocab + 1``, ... in byte order. They never
  occur when encoding a ``str``, so every id fastsw emits is unchanged.
* Rank = fastsw id. tiktoken needs one rank per byte string: two tokens with the
  same bytes (two merges producing the same string) cannot be expressed; this is
  detected (``ValueError``, or ``drop_duplicates=True`` keeps the smallest id).
"""

from __future__ import annotations

import base64
import heapq
import json
import os
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Tuple

from fastsw._types import PathLike
from fastsw.alphabet import BYTE_TO_UNICODE, ByteAlphabet, render, unrender
from fastsw.trainers.bpe import apply_merges
from fastsw.files import atomic_write_text
from fastsw.io.model_file import approximate_error, read_model_text
from fastsw.pretokenizers.pretokenize import DEFAULT_SCRIPT_SPECIFIC_SCRIPTS, Pretokenizer
from fastsw.tokenizer import Tokenizer, rendered_vocab

__all__ = [
    "load_paper_model",
    "save_paper_model",
    "to_tiktoken",
    "write_tiktoken_ranks",
    "tiktoken_ranks",
    "save_hf",
    "hf_tokenizer_json",
    "verify_export",
    "merge_conflicts",
    "rank_table_encode",
    "supported_exports",
]

_KINDS = {"word": "bpe", "boundless": "boundless", "superbpe": "superbpe"}
_KIND_OF_ALGO = {v: k for k, v in _KINDS.items()}
_PAPER_FLAG_DEFAULTS = {"tau": 1.1, "blowup": False}
_BYTES243 = ByteAlphabet("bytes243")


# ---------------------------------------------------------------------------
# The authors' text format
# ---------------------------------------------------------------------------
class _Lines:
    """Line reader that reports file and line number in every error."""

    def __init__(self, path: Path, text: str):
        self.path = path
        self.lines = text.split("\n")
        if self.lines and self.lines[-1] == "":
            self.lines.pop()
        self.i = 0

    def error(self, msg: str, lineno: Optional[int] = None) -> ValueError:
        n = self.i if lineno is None else lineno
        return ValueError(f"{self.path}:{n}: {msg}")

    def next(self, what: str) -> str:
        if self.i >= len(self.lines):
            raise ValueError(f"{self.path}:{self.i + 1}: unexpected end of file, expected {what}")
        line = self.lines[self.i]
        self.i += 1
        return line

    def expect(self, keyword: str) -> None:
        line = self.next(f"{keyword!r}")
        if line.strip() != keyword:
            raise self.error(f"expected {keyword!r}, found {line[:60]!r}")

    def integer(self, what: str) -> int:
        line = self.next(what)
        try:
            value = int(line.strip())
        except ValueError:
            raise self.error(f"expected {what} (an integer), found {line[:60]!r}") from None
        if value < 0:
            raise self.error(f"{what} must not be negative")
        return value

    def json_line(self, what: str) -> dict:
        line = self.next(what)
        try:
            data = json.loads(line)
        except json.JSONDecodeError as e:
            raise self.error(f"invalid JSON for {what}: {e.msg}") from None
        if not isinstance(data, dict):
            raise self.error(f"{what} must be a JSON object")
        return data

    def unrender(self, token: str) -> bytes:
        try:
            return unrender(token)
        except KeyError as e:
            raise self.error(
                f"token {token!r} contains {e.args[0]!r}, which is not in GPT-2's bytes-to-unicode map"
            ) from None


def _table_row(r: "_Lines", what: str, layout: str, k: int, n_text: int) -> List[str]:
    """The next line of a numbered table: ``layout`` names its space-separated fields;
    the first is the row number ``k``, the next ``n_text`` are tokens, the rest integers."""
    line = r.next(what)
    parts = line.split(" ")
    names = layout.split(" ")
    if len(parts) != len(names):
        raise r.error(f"expected '{layout}', found {line[:80]!r}")
    for name, value in zip(names[:1] + names[1 + n_text :], parts[:1] + parts[1 + n_text :]):
        try:
            int(value)
        except ValueError:
            raise r.error(f"{name} must be an integer in {line[:80]!r}") from None
    if int(parts[0]) != k:
        raise r.error(f"{names[0]} {parts[0]} out of order (expected {k})")
    return parts


def _parse_merges(r: _Lines) -> List[Tuple[bytes, bytes, int, int, int]]:
    """``merges N`` + N lines ``INDEX LEFT RIGHT COUNT FLAG`` -> (left, right, count, flag, lineno)."""
    r.expect("merges")
    n = r.integer("the number of merges")
    out = []
    for k in range(n):
        parts = _table_row(r, f"merge {k}", "INDEX LEFT RIGHT COUNT FLAG", k, 2)
        out.append((r.unrender(parts[1]), r.unrender(parts[2]), int(parts[3]), int(parts[4]), r.i))
    r.expect("deletions")
    d = r.integer("the number of deletions")
    if d:
        raise r.error("models with deletions are not supported (fastsw never deletes tokens)")
    return out


def _pretokenizer_from_paper(r: _Lines, cfg: dict, lineno: int) -> Pretokenizer:
    try:
        scripts = cfg["script_specific_scripts"]
        if set(scripts) == set(DEFAULT_SCRIPT_SPECIFIC_SCRIPTS) and len(scripts) == len(
            DEFAULT_SCRIPT_SPECIFIC_SCRIPTS
        ):
            scripts = DEFAULT_SCRIPT_SPECIFIC_SCRIPTS  # same set, fastsw's order: compares equal to the default
        return Pretokenizer(
            mode=cfg.get("fastsw_mode", "script"),
            main_pattern=cfg["main_regex"],
            script_specific_pattern=cfg["script_specific_regex"],
            script_specific_scripts=scripts,
            letter_pattern=cfg["merge_pattern"],
        )
    except KeyError as e:
        raise r.error(f"pre-tokenizer JSON lacks the key {e.args[0]!r}", lineno) from None
    except (ValueError, TypeError) as e:
        raise r.error(f"invalid pre-tokenizer settings: {e}", lineno) from None


def load_paper_model(path: PathLike) -> Tokenizer:
    """Read a model in the authors' text format (SPEC section 11).

    Token ids follow the vocabulary section (regular and super tokens interleave
    in ``boundless`` files): each vocabulary entry after the 243 bytes is matched
    with the next merge of its kind (``IS_SUPER``), and the entry's token must be
    that merge's left + right. Merge operands are resolved to the earliest id with
    those bytes. The vocabulary COUNT and merge FLAG columns are informational
    and kept in ``training_info["paper_model"]``. Errors: ``ValueError`` naming
    the file and line.
    """
    path = Path(path)
    text = read_model_text(path)
    r = _Lines(path, text)
    header = r.next("the header 'BoundlessBPE v2 KIND'").split(" ")
    if len(header) != 3 or header[0] != "BoundlessBPE" or header[1] != "v2" or header[2] not in _KINDS:
        raise r.error(
            f"not a BoundlessBPE model: expected the header 'BoundlessBPE v2 KIND' with KIND one of {', '.join(_KINDS)}"
        )
    algo = _KINDS[header[2]]

    r.expect("vocabulary")
    n = r.integer("the vocabulary size")
    vocab: List[Tuple[bytes, int, bool, int]] = []  # bytes, count, is_super, lineno
    for k in range(n):
        parts = _table_row(r, f"vocabulary entry {k}", "ID TOKEN COUNT IS_SUPER", k, 1)
        count, is_super = int(parts[2]), int(parts[3])
        if is_super not in (0, 1):
            raise r.error(f"IS_SUPER must be 0 or 1, not {is_super}")
        vocab.append((r.unrender(parts[1]), count, bool(is_super), r.i))

    r.expect("special_tokens")
    n_special = r.integer("the number of special tokens")
    specials: Dict[str, int] = {}
    for k in range(n_special):
        line = r.next(f"special token {k}")
        id_text, sep, s = line.partition(" ")
        if not sep or not id_text.isdigit() or not s:
            raise r.error(f"expected 'ID STRING', found {line[:80]!r}")
        specials[s] = int(id_text)

    r.expect("words")
    words_line = r.i + 1
    words_cfg = r.json_line("the pre-tokenizer configuration")
    regular = _parse_merges(r)
    supers: list = []
    super_cfg = None
    if algo != "bpe":
        r.expect("superwords")
        super_cfg = r.json_line("the superword configuration")
        supers = _parse_merges(r)
    while r.i < len(r.lines):
        if r.next("end of file").strip():
            raise r.error("unexpected content after the last section")

    alpha = _BYTES243
    if len(vocab) < len(alpha) or [v[0] for v in vocab[: len(alpha)]] != alpha.tokens:
        raise ValueError(
            f"{path}: the first vocabulary entries are not the 243 UTF-8 bytes (0x00-0xBF, "
            "0xC2-0xF4) in byte order; fastsw can only load models with that alphabet"
        )
    pretok = _pretokenizer_from_paper(r, words_cfg, words_line)

    first_id: Dict[bytes, int] = {}
    for i, t in enumerate(alpha.tokens):
        first_id.setdefault(t, i)
    queues = {False: iter(regular), True: iter(supers)}
    merges = []
    flags = []
    for tid in range(len(alpha), len(vocab)):
        tb, _count, is_super, lineno = vocab[tid]
        m = next(queues[is_super], None)
        if m is None:
            raise r.error(
                f"vocabulary entry {tid} is a {'super' if is_super else 'regular'} token, but the "
                f"{'superwords' if is_super else 'words'} section has no merge left for it",
                lineno,
            )
        left, right, count, flag, mline = m
        if left + right != tb:
            raise r.error(
                f"merge {render(left)} + {render(right)} does not produce vocabulary entry {tid} "
                f"({render(tb)}); merges must follow the vocabulary order",
                mline,
            )
        try:
            lid, rid = first_id[left], first_id[right]
        except KeyError as e:
            raise r.error(f"merge operand {render(e.args[0])!r} is not a token created before it", mline) from None
        merges.append((lid, rid, count, is_super))
        flags.append(flag)
        first_id.setdefault(tb, tid)
    for is_super, q in queues.items():
        if next(q, None) is not None:
            raise ValueError(
                f"{path}: more {'super' if is_super else 'regular'} merges than vocabulary entries of that kind"
            )
    flags_cfg = {
        k: v
        for k, v in words_cfg.items()
        if k not in ("main_regex", "script_specific_regex", "script_specific_scripts", "merge_pattern", "fastsw_mode")
    }
    info = {
        "paper_model": {
            "path": str(path),
            "kind": header[2],
            "flags": flags_cfg,
            "vocab_counts": [v[1] for v in vocab],
            "merge_flags": flags,
            "superwords": super_cfg is not None and {k: v for k, v in super_cfg.items() if k in ("superbpe_mode",)},
        }
    }
    try:
        return Tokenizer(
            alphabet=alpha,
            merges=merges,
            pretokenizer=pretok,
            profile="paper",
            algo=algo,
            special_tokens=specials,
            training_info=info,
        )
    except ValueError as e:
        raise ValueError(f"{path}: invalid model: {e}") from None


# ---------------------------------------------------------------------------
# Which exports a model supports
# ---------------------------------------------------------------------------
#: The exports, by their Tokenizer method names, and what each writes.
_EXPORT_TARGETS = {
    "save_paper": "the authors' model format",
    "save_hf": "HF tokenizers",
    "save_tiktoken": "tiktoken",
    "to_tiktoken": "tiktoken",
    "merge_conflicts": "merge_conflicts (merge rules against a rank table)",
}


def supported_exports(tok: Tokenizer) -> List[str]:
    """The exports (Tokenizer method names) that can express ``tok``; any other one raises a ``ValueError``
    that says why and lists these.

    * ``save_paper``: a model with merges (BPE, BoundlessBPE, SuperBPE) on the 243-byte alphabet;
    * ``save_hf``: a byte-alphabet model with merges (BPE; others approximately) or a MinGram model (Unigram);
    * ``save_tiktoken`` / ``to_tiktoken``: plain BPE on a byte alphabet, or a tiktoken vocabulary;
    * ``merge_conflicts``: a model with merge rules (not MinGram, not a tiktoken vocabulary).

    No export takes the atomic tokens (boundary markers, caps codes) of the marker pre-tokenizers.

        >>> import fastsw
        >>> supported_exports(fastsw.train(["the cat sat"], algo="bpe", vocab_size=250))
        ['save_paper', 'save_hf', 'save_tiktoken', 'to_tiktoken', 'merge_conflicts']
    """
    ranks = tok.alphabet.kind == "ranks"  # a tiktoken vocabulary: ranks, no merge rules
    text = getattr(tok.alphabet, "atoms", None) is None
    byte = isinstance(tok.alphabet, ByteAlphabet) and text
    merges = not ranks and tok.algo != "mingram"
    out = []
    if merges and byte and tok.alphabet.kind == "bytes243":
        out.append("save_paper")
    if byte and not ranks:
        out.append("save_hf")
    if byte and (ranks or tok.algo == "bpe"):
        out += ["save_tiktoken", "to_tiktoken"]
    if merges:
        out.append("merge_conflicts")
    return out


def _require_export(tok, name: str) -> None:
    """Refuse an export ``tok`` does not support (:func:`supported_exports`) with one ``ValueError``: why, and
    which exports the model supports."""
    supported = supported_exports(tok)
    if name in supported:
        return
    target = _EXPORT_TARGETS[name]
    try:  # the detailed reasons for alphabets these formats cannot express
        if name == "save_paper":
            _check_paper_expressible(tok)
        elif name != "merge_conflicts":
            _check_byte_alphabet(tok, "HF tokenizers" if name == "save_hf" else "tiktoken")
        reason = None
    except ValueError as e:
        reason = str(e).rstrip(".")
    if reason is None:
        if tok.alphabet.kind == "ranks":
            reason = f"{name}: this is a tiktoken vocabulary, a rank table without merge rules, which {target} needs"
        elif tok.algo == "mingram":
            reason = f"{name}: a MinGram model has no merges, which {target} needs (save_hf writes an HF Unigram model)"
        else:
            reason = (
                f"{name}: a {tok.algo} model has supermerges, which join several pretokens into one token; "
                f"{target} merges only inside one regex piece"
            )
    listed = ", ".join(supported) if supported else "no export (use it with fastsw: save/load, encode/decode)"
    raise ValueError(f"{reason}; this model supports {listed}")


def _scheme_name(tok) -> str:
    return tok.pretokenizer.name


def _check_paper_expressible(tok) -> None:
    if getattr(tok.alphabet, "atoms", None) is not None:
        raise ValueError(
            f"the authors' model format has no atomic tokens beyond bytes; this model's pre-tokenizer "
            f"{_scheme_name(tok)} needs them (markers, caps codes), so it cannot be written there"
        )
    if not isinstance(tok.alphabet, ByteAlphabet) or tok.alphabet.kind != "bytes243":
        raise ValueError(
            f"the authors' model format starts from the 243 UTF-8 bytes (alphabet 'bytes243', "
            f"profile 'paper'); this model's alphabet is {tok.alphabet.kind!r}, which it cannot "
            "express"
        )


def _corpus_statistics(tok, corpus: Iterable[str]):
    """Token counts as the authors' trainer leaves them, and which tokens some
    pretoken (regular) or some maximal eligible run (super) encodes to as a
    single token.

    Counts: plain BPE -- the final encoding of the whole corpus; two-phase models
    -- only the tokens of the final encodings of the maximal runs of >= 2
    eligible pretokens (the phase-2 training data), as the encoder itself finds them."""
    counts = [0] * tok.vocab_size
    single = set()
    for doc in corpus:
        for piece in tok.pretokenizer.pretokenize(doc):
            ids = tok.encode_pretoken(piece)
            if len(ids) == 1:
                single.add(ids[0])
        out: List[int] = []  # the encoding, and where each run of >= 2 eligible pretokens landed in it
        runs: List[Tuple[int, int]] = []
        tok._encode_chunk(doc, True, out, runs=runs)
        if tok.algo == "bpe":
            runs = [(0, len(out))]
        else:
            single.update(out[a] for a, b in runs if b - a == 1)
        for a, b in runs:
            for t in out[a:b]:
                counts[t] += 1
    return counts, single


def paper_model_text(tok, corpus: Optional[Iterable[str]] = None) -> str:
    """The text :func:`save_paper_model` writes."""
    _require_export(tok, "save_paper")
    _check_paper_expressible(tok)
    if corpus is not None:
        vocab_counts, single = _corpus_statistics(tok, corpus)
        flag_of = lambda m: int(m.id in single)  # noqa: E731
    else:
        vocab_counts = [0] * tok.vocab_size
        reachable = {i for i in range(tok.vocab_size) if tok.is_reachable(i)}
        # Without the corpus: FLAG 1 for regular merges whose token is reachable (its text is one pretoken
        # and encodes to it): the merge could have made that pretoken one token. Supermerges: 0.
        flag_of = lambda m: int((not m.super) and m.id in reachable)  # noqa: E731
    vocab = tok.vocab
    super_ids = {m.id for m in tok.merges if m.super}
    lines = [f"BoundlessBPE v2 {_KIND_OF_ALGO[tok.algo]}", "vocabulary", str(tok.vocab_size)]
    for tid, tb in enumerate(vocab):
        lines.append(f"{tid} {render(tb)} {vocab_counts[tid]} {int(tid in super_ids)}")
    lines += ["special_tokens", str(len(tok.special_tokens))]
    for s, tid in sorted(tok.special_tokens.items(), key=lambda kv: kv[1]):
        lines.append(f"{tid} {s}")
    pre = tok.pretokenizer
    flags = dict(_PAPER_FLAG_DEFAULTS)
    flags.update(
        {k: v for k, v in tok.training_info.get("paper_model", {}).get("flags", {}).items() if k in ("tau", "blowup")}
    )

    def cfg(is_super: bool, superbpe_mode: bool) -> str:
        d = {
            "tau": flags["tau"],
            "is_super": is_super,
            "superbpe_mode": superbpe_mode,
            "blowup": flags["blowup"],
            "main_regex": pre.main_pattern,
            "script_specific_regex": pre.script_specific_pattern,
            "script_specific_scripts": sorted(pre.script_specific_scripts),
            "merge_pattern": pre.letter_pattern,
        }
        if pre.mode != "script":
            d["fastsw_mode"] = pre.mode  # fastsw extension: the authors' format only knows script chunking
        return json.dumps(d)

    def merge_lines(ms):
        out = ["merges", str(len(ms))]
        for k, m in enumerate(ms):
            out.append(f"{k} {render(vocab[m.left])} {render(vocab[m.right])} {m.count} {flag_of(m)}")
        return out + ["deletions", "0"]

    lines += ["words", cfg(False, False)] + merge_lines([m for m in tok.merges if not m.super])
    if tok.algo != "bpe":
        lines += ["superwords", cfg(True, tok.algo == "superbpe")] + merge_lines([m for m in tok.merges if m.super])
    return "\n".join(lines) + "\n"


def save_paper_model(tok: Tokenizer, path: PathLike, corpus: Optional[Iterable[str]] = None) -> None:
    """Write ``tok`` in the authors' text format (only alphabet ``bytes243``).

    Columns the model itself does not determine:

    * vocabulary COUNT: the trainer's final token frequencies. With ``corpus`` (an
      iterable of documents, e.g. the training documents): for plain BPE the token
      counts of fastsw's encoding of it (identical to the authors' file); for
      two-phase models the token counts of the encoded maximal runs of >= 2
      eligible pretokens only, which is what the authors' trainer keeps (identical
      for SuperBPE; for BoundlessBPE close but not equal, because the authors'
      runs use the phase-1 model's eligibility, whose dropped regular merges are
      not in the model). Without ``corpus``: 0.
    * merge FLAG ("the merge made some pretoken a single token"): with ``corpus``,
      1 iff some pretoken (regular merge) or some maximal run of eligible
      pretokens (supermerge) of the corpus encodes to exactly that token; without
      it, 1 for regular merges whose token is reachable (an upper bound) and 0 for
      supermerges.
    * the trainer flags ``tau`` and ``blowup`` are copied from a loaded paper model,
      else 1.1 and false (they do not affect fastsw).

    A ``simple``-mode pre-tokenizer is written with an extra JSON key
    ``"fastsw_mode": "simple"`` (the authors' format always chunks by script).
    """
    atomic_write_text(path, paper_model_text(tok, corpus))


# ---------------------------------------------------------------------------
# Rank tables (tiktoken) and the conflict detector
# ---------------------------------------------------------------------------
def _check_byte_alphabet(tok, target: str) -> None:
    if getattr(tok.alphabet, "atoms", None) is not None:
        name = "HF tokenizers" if target.startswith("HF") else target
        raise ValueError(
            f"this model cannot be exported to {name}: its pre-tokenizer {_scheme_name(tok)} emits atomic "
            "tokens (boundary markers, caps codes) that are not text, its tokens are built from them, and "
            "its decoder turns marker pairs back into spaces and re-cases words after a caps code; "
            f"{name} has none of these. Use the model with fastsw (save/load, encode/decode), or train "
            "with --pretokenizer script for an exportable model"
        )
    if not isinstance(tok.alphabet, ByteAlphabet):
        raise ValueError(
            f"{target} is byte-level; this model's alphabet is {tok.alphabet.kind!r} "
            "(character-level), which it cannot express"
        )


def _extra_bytes(tok) -> List[int]:
    """Bytes without an id in the model's alphabet (0xC0, 0xC1, 0xF5-0xFF for bytes243)."""
    have = {t[0] for t in tok.alphabet.tokens}
    return [b for b in range(256) if b not in have]


def duplicate_tokens(tok) -> Dict[bytes, List[int]]:
    """Byte strings that more than one token id has (ids ascending)."""
    seen: Dict[bytes, List[int]] = {}
    for tid, tb in enumerate(tok.vocab):
        seen.setdefault(tb, []).append(tid)
    return {b: ids for b, ids in seen.items() if len(ids) > 1}


def tiktoken_ranks(tok: Tokenizer, *, drop_duplicates: bool = False) -> Dict[bytes, int]:
    """``bytes -> rank`` with rank = fastsw id, plus the missing bytes after ``n_vocab``."""
    _check_byte_alphabet(tok, "tiktoken")
    if tok.algo == "mingram":
        raise ValueError(
            "a MinGram model has no merge ranks, so tiktoken (a BPE rank table) cannot express it; "
            "export it with save_hf (an HF Unigram model) instead"
        )
    if tok.algo != "bpe":
        raise ValueError(
            f"a {tok.algo} model has supermerges, which join several pretokens into one token; tiktoken (and any "
            "rank table) merges only inside one regex piece, so it cannot express them. Export a plain BPE "
            "model (algo='bpe')"
        )
    dups = duplicate_tokens(tok)
    if dups and not drop_duplicates:
        shown = ", ".join(f"{render(b)!r}: ids {ids}" for b, ids in list(dups.items())[:5])
        raise ValueError(
            f"{len(dups)} byte strings are produced by more than one token ({shown}); a rank table "
            "holds one rank per byte string. Pass drop_duplicates=True to keep the smallest id "
            "(the others are then never produced)"
        )
    ranks: Dict[bytes, int] = {}
    for tid, tb in enumerate(tok.vocab):
        ranks.setdefault(tb, tid)
    for j, b in enumerate(_extra_bytes(tok)):
        ranks[bytes([b])] = tok.n_vocab + j
    return ranks


def _check_simple(tok, allow_approximate: bool, target: str) -> None:
    """Refuse an export to ``target`` (one regex over the whole text, no normalizer) that would not be exact."""
    reasons = []
    if tok.normalize is not None:
        reasons.append(
            f"this model normalizes text to {tok.normalize.upper()} before encoding and {target} has "
            "no normalizer (normalize the text yourself)"
        )
    if tok.pretokenizer.mode not in ("simple", "none"):
        reasons.append(
            f"this model pre-tokenizes in {tok.pretokenizer.mode!r} mode (script chunking before the "
            f"regex); {target} applies one regex to the whole text and cannot express script chunking"
        )
    if reasons and not allow_approximate:
        raise approximate_error(f"a {target} encoding of this model", reasons)


def _export_pattern(tok) -> str:
    """The one regex an exported tokenizer splits with: the main pattern, or the whole text in ``none`` mode."""
    return r"[\s\S]+" if tok.pretokenizer.mode == "none" else tok.pretokenizer.main_pattern


def to_tiktoken(
    tok: Tokenizer, name: str = "fastsw", *, allow_approximate: bool = False, drop_duplicates: bool = False
) -> Any:
    """A ``tiktoken.Encoding`` for a plain BPE model with a byte alphabet.

    ``pat_str`` is the pre-tokenizer's main pattern (exact only in ``simple``
    mode; ``script`` mode needs ``allow_approximate=True``). Ranks are fastsw ids;
    special tokens keep their ids; bytes missing from the alphabet get ranks
    ``n_vocab, n_vocab + 1, ...`` (they never occur in text). tiktoken looks up
    concatenated bytes and whole pieces in the rank table, so it can differ from
    fastsw's pair rules where :func:`merge_conflicts` reports a conflict.
    """
    import tiktoken

    _require_export(tok, "to_tiktoken")
    ranks = tiktoken_ranks(tok, drop_duplicates=drop_duplicates)  # refuses superword models first
    _check_simple(tok, allow_approximate, "tiktoken")
    return tiktoken.Encoding(
        name=name, pat_str=_export_pattern(tok), mergeable_ranks=ranks, special_tokens=dict(tok.special_tokens)
    )


def write_tiktoken_ranks(tok: Tokenizer, path: PathLike, *, drop_duplicates: bool = False) -> None:
    """Write a ``.tiktoken`` file (``base64(token) rank`` per line, rank order),
    readable by ``tiktoken.load.load_tiktoken_bpe``. Special tokens and the
    pre-tokenizer regex are not part of this format."""
    _require_export(tok, "save_tiktoken")
    ranks = tiktoken_ranks(tok, drop_duplicates=drop_duplicates)
    lines = [f"{base64.b64encode(b).decode('ascii')} {r}" for b, r in sorted(ranks.items(), key=lambda kv: kv[1])]
    atomic_write_text(path, "\n".join(lines) + "\n")


def rank_table_encode(piece: bytes, ranks: Dict[bytes, int], *, whole_piece: bool = False) -> List[int]:
    """tiktoken's algorithm: repeatedly join the adjacent pair whose concatenated
    bytes have the lowest rank (leftmost on ties). ``whole_piece``: return the
    piece's own rank first if it has one (tiktoken and HF ``ignore_merges``)."""
    if whole_piece and piece in ranks:
        return [ranks[piece]]
    return _rank_table_encode_atoms([piece[i : i + 1] for i in range(len(piece))], ranks)


def merge_conflicts(tok: Tokenizer) -> List[dict]:
    """Pieces on which a merge-rule encoder (fastsw; HF ``ignore_merges=False``)
    and a rank-table encoder (tiktoken) would disagree (seed 001's ``abc``/``xabc``).

    Every vocabulary token's bytes are encoded both ways (regular merges only).
    Each conflict is a dict with ``kind``, ``id``, ``token`` (bytes), ``rendered``,
    ``merge_rule_ids``, ``rank_table_ids`` and ``is_pretoken`` (the token's text is
    one pretoken on its own, so it can occur as a whole piece):

    * ``"duplicate_bytes"``: more than one id has these bytes (``ids`` lists them);
      a rank table or an HF vocab keeps only one.
    * ``"unreachable_token"``: the merge rules do not encode the token's own bytes
      to it (``abc`` when the rules are a+b, b+c, a+bc). An encoder that looks whole
      pieces up first (tiktoken, HF ``ignore_merges=True``) returns the token for
      such a piece; fastsw does not. Matters only when ``is_pretoken``.
    * ``"rank_table_differs"``: the rank-table encoding of the token's bytes
      (without the whole-piece lookup) differs from the merge-rule encoding, so
      any piece containing these bytes may be encoded differently (``xabc`` ->
      ``x|abc`` by tiktoken, ``x|ab|c`` by the rules).

    Supermerges are not checked (no rank table can express them). Returns [] for
    a model where both encoders agree on every piece.
    """
    _require_export(tok, "merge_conflicts")
    alpha = tok.alphabet
    vocab = tok.vocab
    n_alpha = len(alpha)
    ranks: Dict[bytes, int] = {}
    for tid, tb in enumerate(vocab):
        if tid >= n_alpha and tok.merges[tid - n_alpha].super:
            continue
        ranks.setdefault(tb, tid)
    byte_level = isinstance(alpha, ByteAlphabet)
    out: List[dict] = []
    for tb, ids in duplicate_tokens(tok).items():
        out.append(_conflict("duplicate_bytes", tok, ids[0], tb, None, None, ids=ids))
    for m in tok.merges:
        if m.super:
            continue
        tb = vocab[m.id]
        try:
            text = tb.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None:
            try:
                rule = apply_merges(alpha.initial_ids(text), tok.regular_ranks)
            except ValueError:
                rule = None
        else:
            # Not valid UTF-8 on its own: encode its atomic tokens (byte alphabets only).
            rule = apply_merges([alpha.id_of_byte(b) for b in tb], tok.regular_ranks) if byte_level else None  # type: ignore[attr-defined]
        if rule is None:
            continue
        if byte_level:
            table = rank_table_encode(tb, ranks)
        else:
            table = _rank_table_encode_atoms([vocab[i] for i in alpha.initial_ids(text)], ranks)
        is_pretoken = text is not None and len(tok.pretokenizer.pretokenize(text)) == 1
        if rule != [m.id]:
            out.append(_conflict("unreachable_token", tok, m.id, tb, rule, table, is_pretoken=is_pretoken))
        if table != rule:
            out.append(_conflict("rank_table_differs", tok, m.id, tb, rule, table, is_pretoken=is_pretoken))
    return out


def _rank_table_encode_atoms(parts: List[bytes], ranks: Dict[bytes, int]) -> List[int]:
    """Join adjacent parts by the lowest rank of their concatenation, leftmost on ties (tiktoken's rule).

    The plain twin of the encoding kernel's long loop (:mod:`fastsw.encoding.encode_kernels`, ``_merge_tree``):
    the parts form a linked list (``nxt``/``prv``) and the pairs wait in a heap of
    ``(rank, position, version)``; positions keep their order (a merge keeps its left part), so the
    smallest entry is the lowest rank, leftmost first. A merge bumps the version of the merged part
    and of its left neighbour (their pairs changed) and of the part it swallowed, so a popped entry
    whose version is old is skipped. Each merge costs O(log n): ``"a" * 10**6`` is never quadratic.

        >>> ranks = {b"a": 0, b"b": 1, b"ab": 2, b"aa": 3, b"aab": 4}
        >>> _rank_table_encode_atoms([b"a", b"a", b"b"], ranks)  # ab (2) before aa (3), then nothing joins a+ab
        [0, 2]
    """
    parts = list(parts)
    n = len(parts)
    nxt = list(range(1, n + 1))
    prv = list(range(-1, n - 1))
    version = [0] * n
    heap = []
    for i in range(n - 1):
        r = ranks.get(parts[i] + parts[i + 1])
        if r is not None:
            heap.append((r, i, 0))
    heapq.heapify(heap)

    def push(i):  # the pair starting at part i, if it has a rank
        version[i] += 1
        j = nxt[i]
        if j < n:
            r = ranks.get(parts[i] + parts[j])
            if r is not None:
                heapq.heappush(heap, (r, i, version[i]))

    while heap:
        _, i, v = heapq.heappop(heap)
        if v != version[i]:
            continue  # part i or its right neighbour changed since this entry was pushed
        j = nxt[i]
        parts[i] += parts[j]
        version[j] += 1  # part j is gone
        nxt[i] = nxt[j]
        if nxt[i] < n:
            prv[nxt[i]] = i
        push(i)
        if prv[i] >= 0:
            push(prv[i])
    out = []
    i = 0
    while i < n:
        out.append(ranks[parts[i]])
        i = nxt[i]
    return out


def _conflict(kind, tok, tid, tb, rule, table, **extra) -> dict:
    d = {"kind": kind, "id": tid, "token": tb, "rendered": render(tb), "merge_rule_ids": rule, "rank_table_ids": table}
    d.setdefault("is_pretoken", None)
    d.update(extra)
    return d


# ---------------------------------------------------------------------------
# HF tokenizers
# ---------------------------------------------------------------------------
def hf_tokenizer_json(tok: Tokenizer, *, ignore_merges: Optional[bool] = None) -> dict:
    """The ``tokenizer.json`` content :func:`save_hf` writes, as a dict."""
    _require_export(tok, "save_hf")
    if tok.algo == "mingram":  # a Unigram model with scores score_delta * lp - 1 (fastsw.trainers.mingram)
        return hf_unigram_json(tok)
    _check_byte_alphabet(tok, "HF's ByteLevel pre-tokenizer")
    vocab = tok.vocab
    dups = duplicate_tokens(tok)
    hf_vocab = rendered_vocab(tok)
    for j, b in enumerate(_extra_bytes(tok)):
        hf_vocab[BYTE_TO_UNICODE[b]] = tok.n_vocab + j
    for s, tid in tok.special_tokens.items():
        hf_vocab[s] = tid  # HF keeps an added token's id only if the model's vocab has it
    merges = []
    seen_pairs = set()
    for m in tok.merges:
        if m.super:
            continue  # supermerges cross pieces: HF's BPE model never sees them (their tokens stay in the vocab)
        pair = (render(vocab[m.left]), render(vocab[m.right]))
        if pair in seen_pairs or vocab[m.id] in dups and hf_vocab[render(vocab[m.id])] != m.id:
            continue
        seen_pairs.add(pair)
        merges.append(list(pair))
    if ignore_merges is None:
        # Whole-piece lookup is safe iff every token that can be a whole piece is reachable.
        ignore_merges = (
            not any(c["kind"] in ("unreachable_token", "duplicate_bytes") for c in merge_conflicts(tok))
            and tok.algo == "bpe"
        )
    model = {
        "type": "BPE",
        "dropout": None,
        "unk_token": None,
        "continuing_subword_prefix": None,
        "end_of_word_suffix": None,
        "fuse_unk": False,
        "byte_fallback": False,
        "ignore_merges": bool(ignore_merges),
        "vocab": hf_vocab,
        "merges": merges,
    }
    return _hf_document(tok, model)


#: Why an HF ``Unigram`` export of a MinGram model (:mod:`fastsw.trainers.mingram`) is approximate (``save_hf`` says so).
MINGRAM_HF_REASONS = (
    "HF's Unigram breaks exact score ties toward the earliest start ('aaa' -> [a, aa]); MinGram's "
    "program toward the latest ('aaa' -> [aa, a]) (MINGRAM.md 3)",
    "HF's Viterbi has no 1e-12 tie tolerance: paths within 1e-12 of each other can differ",
)


def hf_unigram_json(tok) -> dict:
    """An HF ``tokenizer.json`` whose model is ``Unigram`` with piece scores ``score_delta * lp - 1`` (the same
    objective: fewest tokens, then the highest unigram likelihood), over the same byte-level pieces as
    fastsw's BPE export (Split by the main regex, ByteLevel). Piece index = fastsw id; bytes a byte alphabet
    lacks follow ``n_vocab`` so that HF can segment every text."""
    if not isinstance(tok.alphabet, ByteAlphabet):
        raise ValueError(f"HF's ByteLevel pre-tokenizer needs a byte alphabet, not {tok.alphabet.kind!r}")
    vocab = [[render(tb), tok.score_delta * lp - 1.0] for tb, lp in zip(tok.vocab, tok.log_probs)]
    for s, _ in sorted(tok.special_tokens.items(), key=lambda kv: kv[1]):
        vocab.append([s, -1e9])
    floor = tok.score_delta * min(tok.log_probs, default=0.0) - 1.0
    for b in _extra_bytes(tok):
        vocab.append([BYTE_TO_UNICODE[b], floor])
    return _hf_document(tok, {"type": "Unigram", "unk_id": None, "vocab": vocab, "byte_fallback": False})


def hf_export_losses(tok) -> List[str]:
    """What an HF ``tokenizer.json`` of ``tok`` cannot express (empty: the export is exact)."""
    reasons = []
    if tok.pretokenizer.mode not in ("simple", "none"):
        reasons.append(
            f"pre-tokenizer mode {tok.pretokenizer.mode!r}: script chunking is not expressible (HF "
            "splits the whole text with the main regex)"
        )
    if tok.algo == "mingram":
        reasons.extend(MINGRAM_HF_REASONS)
    elif tok.algo != "bpe":
        reasons.append(
            f"{tok.algo} model: its {tok.n_super} supermerges are not expressible (their tokens stay in "
            "the vocabulary but are never produced)"
        )
    if tok.algo != "mingram" and duplicate_tokens(tok):
        reasons.append("some byte strings belong to several tokens; only the smallest id is kept")
    return reasons


def save_hf(
    tok: Tokenizer, path: PathLike, *, ignore_merges: Optional[bool] = None, allow_approximate: bool = False
) -> dict:
    """Write an HF ``tokenizer.json`` (loadable by ``tokenizers.Tokenizer.from_file``).

    BPE model: vocab = GPT-2 rendered token -> fastsw id (plus the bytes missing
    from the alphabet after ``n_vocab``), merges = the regular merges as pairs
    (HF's pair rules are fastsw's); pre-tokenizer Split(main regex, isolated) +
    ByteLevel(no prefix space, no regex); decoder ByteLevel; special tokens as
    added tokens with their ids. ``ignore_merges`` (whole-piece vocab lookup)
    defaults to True exactly when :func:`merge_conflicts` finds no unreachable or
    duplicate token (then it is only faster). A MinGram model is written as an HF
    ``Unigram`` model.

    Exact for plain BPE in ``simple`` (or ``none``) mode. Any other model is refused
    with a ``ValueError`` saying what the file would lose (script chunking,
    supermerges, MinGram's tie rule, duplicate tokens), unless ``allow_approximate=True``:
    then the best approximation is written (no script chunking; supermerges dropped,
    their tokens kept in the vocab so ids still decode); check it with :func:`verify_export`.
    Returns ``{"exact": bool, "reasons": [what is not exact]}``.
    """
    data = hf_tokenizer_json(tok, ignore_merges=ignore_merges)  # refuses what HF cannot hold at all first
    reasons = hf_export_losses(tok)
    if reasons and not allow_approximate:
        raise approximate_error("an HF tokenizer.json of this model", reasons)
    atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=1) + "\n")
    return {"exact": not reasons, "reasons": reasons}


# ---------------------------------------------------------------------------
# Verification
# ---------------------------------------------------------------------------
def _export_encoder(exported):
    """A function text -> ids for a tokenizer.json path, a .tiktoken path is not
    enough (no regex), so: a path to tokenizer.json, a ``tokenizers.Tokenizer``
    or a ``tiktoken.Encoding``."""
    try:
        import tiktoken

        if isinstance(exported, tiktoken.Encoding):
            return lambda t: exported.encode_ordinary(t)
    except ImportError:  # pragma: no cover
        pass
    import tokenizers

    if isinstance(exported, (str, os.PathLike)):
        path = os.fspath(exported)
        try:
            exported = tokenizers.Tokenizer.from_file(path)
        except Exception as e:  # tokenizers raises a bare Exception for a missing, unreadable or non-HF file
            hint = (
                " (a .tiktoken rank file has no pre-tokenizer regex: pass tok.to_tiktoken() instead)"
                if path.endswith(".tiktoken")
                else ""
            )
            raise ValueError(
                f"{path}: not a loadable HF tokenizer.json ({e}); verify_export accepts the path of a "
                "tokenizer.json (as written by save_hf), a tokenizers.Tokenizer or a tiktoken.Encoding" + hint
            ) from e
    if isinstance(exported, tokenizers.Tokenizer):
        return lambda t: exported.encode(t, add_special_tokens=False).ids
    raise TypeError(
        "verify_export expects a tokenizer.json path, a tokenizers.Tokenizer or a tiktoken.Encoding, "
        f"not {type(exported).__name__}"
    )


def verify_export(tok: Tokenizer, exported: Any, texts: Iterable[str]) -> dict:
    """Compare fastsw's encoding with an exported encoder on ``texts``.

    Returns ``{"documents", "identical_documents", "agreement"`` (share of
    documents with identical ids; 1.0 for no documents), ``"fastsw_tokens"``,
    ``"export_tokens"``, ``"token_count_difference"`` (export - fastsw),
    ``"roundtrip_ok"`` (the export decodes back to each text, via fastsw's
    vocabulary), ``"first_difference"`` (None or the first differing document's
    index, position and the two id windows)}``.
    """
    encode = _export_encoder(exported)
    n = same = mine_total = theirs_total = 0
    roundtrip_ok = True
    first = None
    for idx, text in enumerate(texts):
        mine = tok.encode_ordinary(text)
        theirs = list(encode(text))
        n += 1
        mine_total += len(mine)
        theirs_total += len(theirs)
        if mine == theirs:
            same += 1
        elif first is None:
            pos = next((i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b), min(len(mine), len(theirs)))
            first = {"document": idx, "position": pos, "fastsw": mine[pos : pos + 8], "export": theirs[pos : pos + 8]}
        try:
            if tok.decode_bytes(t for t in theirs if t < tok.n_vocab) != text.encode("utf-8"):
                roundtrip_ok = False
        except ValueError:
            roundtrip_ok = False
    return {
        "documents": n,
        "identical_documents": same,
        "agreement": (same / n) if n else 1.0,
        "fastsw_tokens": mine_total,
        "export_tokens": theirs_total,
        "token_count_difference": theirs_total - mine_total,
        "roundtrip_ok": roundtrip_ok,
        "first_difference": first,
    }


def _hf_document(tok, model: dict) -> dict:
    """An HF ``tokenizer.json`` around ``model``: the special tokens, normalizer, byte-level pre-tokenizer with the
    model's pattern, and decoder that every export shares."""
    added = [
        {
            "id": tid,
            "content": s,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for s, tid in sorted(tok.special_tokens.items(), key=lambda kv: kv[1])
    ]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": tok.normalize.upper()} if tok.normalize else None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": _export_pattern(tok)}, "behavior": "Isolated", "invert": False},
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
            ],
        },
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": model,
    }
