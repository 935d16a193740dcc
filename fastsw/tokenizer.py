"""The `Tokenizer`: a trained model and its encoder/decoder (SPEC section 7).

Encoding a document:

0. Normalize it as in training (``normalize``: None = unchanged, the default; ``"nfc"``; ``"nfkc"``;
   :func:`fastsw.pretokenizers.pretokenize.normalize_text`). Everything after this step, offsets included,
   refers to the normalized text.
1. Pre-tokenize exactly as in training.
2. Each pretoken: if its bytes are a *reachable* regular token (its text,
   pre-tokenized and encoded on its own, yields exactly that token), emit it
   (the whole-pretoken shortcut); otherwise apply regular merges, lowest rank
   first, each on all its non-overlapping occurrences left to right.
3. Each maximal run of >= 2 consecutive pretokens that became one *eligible*
   token (reachable and containing a letter) is merged further with the
   supermerges, lowest rank first, in the same way.

Encoding with and without the shortcut gives the same ids (tests assert it).

Two backends compute the same ids. ``"python"`` is the code in this module, the
readable specification (:func:`fastsw.trainers.bpe.apply_merges` per pretoken and per run,
with a per-pretoken cache). ``"numba"`` is :mod:`fastsw.encoding.encode_fast`: one kernel
call per batch of documents (shortcut lookup, regular merges with a tournament tree
that is never quadratic, supermerge runs); a text of at most ``SMALL_TEXT`` characters
(shortcut on) is one compiled call of the extension's ``OneText``, which looks it up whole in a small cache of
recent short texts first (the kernel's own ids, kept when texts repeat: ``TextCache``, whose twin
:class:`_TextCache` serves encoders without a ``OneText``). The
default ``"auto"`` picks ``"numba"`` for byte alphabets unless the environment
sets ``FASTSW_PUREPYTHON=1``. Choose per tokenizer (``Tokenizer(..., backend=...)``
or the ``backend`` attribute) or per call (``encode*(..., backend=...)``).
"""

from __future__ import annotations

import operator
import threading
import warnings
from collections import namedtuple
from pathlib import Path
from types import MappingProxyType
from typing import (
    TYPE_CHECKING,
    AbstractSet,
    Any,
    Collection,
    Dict,
    Iterable,
    List,
    Literal,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

import re

from fastsw._config import gc_paused, pure_python, resolve_backend
from fastsw._types import PathLike
from fastsw.alphabet import ATOM_ERRORS, Alphabet, atom_text, check_utf8, decode_with_atoms, get_profile, render
from fastsw.trainers.bpe import apply_merges
from fastsw.io.model_file import ALGOS, model_kwargs, read_model_json, save_model
from fastsw.pretokenizers.pretokenize import Pretokenizer, check_normalize, normalize_text

if TYPE_CHECKING:
    import numpy

    from fastsw.eval.show import TokenView

Merge = namedtuple("Merge", ["id", "left", "right", "count", "super"])
Merge.__doc__ = (
    "One merge: the token ``id`` it creates from ``left`` + ``right`` (ids), its count, and whether it is a supermerge."
)

_CACHE_LIMIT = 1 << 16
# Texts up to this many characters are looked up whole in a small cache first on the numba backend (the one
# compiled call's TextCache, or :class:`_TextCache`); a text that misses it is encoded by the kernel, as a longer
# text is.
SMALL_TEXT = 128
_TEXT_CACHE_LIMIT = 1 << 12  # texts held at once
# Short texts the plain-Python twin encodes before the fast encoder is built (Tokenizer._small_encoder).
_TWIN_CALLS = 256


class _TextCache(dict):
    """Short texts -> their ids (tuples), for the numba backend's short-text path when the fast encoder has no
    one-call ``OneText`` (the kernel's ids, put here by that path); the twin of the extension's ``TextCache``,
    which the one call keeps (tests hold both to one rule). A text is kept the second time it is seen: the first
    time it only goes into ``seen`` (a set of texts, cleared when it holds ``4 * _TEXT_CACHE_LIMIT``), so a stream
    of distinct texts costs a dict and a set lookup per call (~0.1 us against the kernel call's few us) and never the copy of its ids, and a text that
    repeats is a dict lookup from its second call on. At most ``_TEXT_CACHE_LIMIT`` texts; when full it is
    cleared (the texts that still repeat come back on their next two calls).

    >>> c = _TextCache(); c.remember("hi", [1, 2]); c.get("hi")
    >>> c.remember("hi", [1, 2]); c.get("hi")
    (1, 2)
    """

    __slots__ = ("seen",)

    def __init__(self):
        super().__init__()
        self.seen = set()

    def remember(self, text: str, ids: List[int]) -> None:
        """Note ``text``, whose ids (the kernel's) are ``ids``; keep them if it was noted before."""
        seen = self.seen
        if text not in seen:
            if len(seen) >= 4 * _TEXT_CACHE_LIMIT:
                seen.clear()
            seen.add(text)
            return
        if len(self) >= _TEXT_CACHE_LIMIT:
            self.clear()
        self[text] = tuple(ids)


class _SpecialCheck:
    """The disallowed special tokens of a call's options (:meth:`Tokenizer._special_plan`): ``search(text)`` is
    the regex's, asked only when the text holds the first character of one of them (a ``str`` search in C; most
    texts hold none, and a regex search cost a short text's call more than its encoding).

    >>> c = _SpecialCheck(re.compile("<eos>|<pad>"), {"<eos>", "<pad>"}); c.search("a < b"), c.search("x<pad>").start()
    (None, 1)
    """

    __slots__ = ("regex", "firsts")

    def __init__(self, regex, strings):
        self.regex = regex
        self.firsts = tuple(sorted({s[0] for s in strings}))

    def search(self, text: str):
        for c in self.firsts:
            if c in text:
                return self.regex.search(text)
        return None


_NO_SPECIALS: AbstractSet[str] = frozenset()  # encode's default allowed_special (its fast path knows it by identity)

_FAST_LOCK = threading.Lock()  # one FastEncoder per tokenizer, even when threads ask at once


def _token_id(t) -> int:
    """A token id argument as an ``int``: ints and numpy integers, not ``1.5`` or ``"1"``."""
    try:
        return operator.index(t)
    except TypeError:
        raise TypeError(f"token ids must be integers, got {t!r} ({type(t).__name__})") from None


def _check_num_threads(num_threads) -> Optional[int]:
    """``num_threads`` checked: None (all cores) or an int >= 1."""
    if num_threads is None:
        return None
    if isinstance(num_threads, bool) or not isinstance(num_threads, int):
        raise TypeError(f"num_threads={num_threads!r} must be an int >= 1 (or None for all cores)")
    if num_threads < 1:
        raise ValueError(f"num_threads={num_threads} must be >= 1 (or None for all cores)")
    return num_threads


class Tokenizer:
    """A trained BPE / BoundlessBPE / SuperBPE model.

    Build one with :func:`fastsw.train` or :meth:`Tokenizer.load`. Token ids:
    the alphabet's atomic tokens first, then one id per merge in creation order,
    then the special tokens. ``normalize`` (None, ``"nfc"`` or ``"nfkc"``) is applied to
    every text before encoding; the encoders' results then refer to the normalized text.
    """

    def __init__(
        self,
        *,
        alphabet: Alphabet,
        merges: Sequence,
        pretokenizer: Pretokenizer,
        profile: str = "paper",
        algo: str = "bpe",
        special_tokens: Optional[Dict[str, int]] = None,
        training_info: Optional[dict] = None,
        backend: str = "auto",
        normalize: Optional[str] = None,
        _reachability: Optional[tuple] = None,
    ):
        if algo not in ALGOS:
            raise ValueError(f"algo {algo!r} is not one of {', '.join(ALGOS)}")
        self._init_settings(alphabet, pretokenizer, profile, backend, normalize, training_info)
        self.algo = algo
        with gc_paused():
            self._build(merges, special_tokens, _reachability)

    def _init_settings(
        self,
        alphabet: Alphabet,
        pretokenizer: Pretokenizer,
        profile: str,
        backend: str,
        normalize: Optional[str],
        training_info: Optional[dict],
    ) -> None:
        """The settings every model class shares (checked here once; subclasses call it too)."""
        get_profile(profile)
        resolve_backend(backend)
        self.backend = backend
        self.alphabet = alphabet
        self.pretokenizer = pretokenizer
        self.profile = profile
        self.normalize = check_normalize(normalize)
        self.training_info = dict(training_info or {})

    def _set_special_tokens(self, special_tokens: Optional[Dict[str, int]], n_tokens: int) -> None:
        """Check and keep the special tokens (ids right after the ``n_tokens`` tokens, no gaps, none empty)."""
        specials = dict(special_tokens or {})
        for i, (s, tid) in enumerate(sorted(specials.items(), key=lambda kv: kv[1])):
            if tid != n_tokens + i:
                raise ValueError("special token ids must follow the vocabulary without gaps")
            if not s:
                raise ValueError("a special token cannot be the empty string")
        self._special_tokens = specials
        self._special_by_id = {tid: s.encode("utf-8") for s, tid in specials.items()}

    def _build(self, merges, special_tokens, reachability=None) -> None:
        """The token table, rank tables, special tokens and the shortcut table."""
        n_alpha = len(self.alphabet)
        token_bytes: List[bytes] = list(self.alphabet.tokens)
        merge_list = []
        self._regular_ranks: Dict[Tuple[int, int], Tuple[int, int]] = {}  # (left, right) -> (rank, new id)
        self._super_ranks: Dict[Tuple[int, int], Tuple[int, int]] = {}
        for k, m in enumerate(merges):
            left, right, count, is_super = (int(m[0]), int(m[1]), int(m[2]), bool(m[3]))
            new_id = n_alpha + k
            if not (0 <= left < new_id and 0 <= right < new_id):
                raise ValueError(f"merge {k} refers to token ids ({left}, {right}) that do not exist yet")
            token_bytes.append(token_bytes[left] + token_bytes[right])
            merge_list.append(Merge(new_id, left, right, count, is_super))
            ranks = self._super_ranks if is_super else self._regular_ranks
            ranks.setdefault((left, right), (len(ranks), new_id))
        self._merges = tuple(merge_list)
        self._token_bytes = tuple(token_bytes)
        self._set_special_tokens(special_tokens, len(token_bytes))
        self._plans: Dict[tuple, tuple] = {}  # (allowed_special, disallowed_special) -> _special_plan
        self._cache: Dict[str, List[int]] = {}
        if reachability is not None:
            self._shortcut, self._eligible = self._reachable_from(reachability)
        else:
            self._shortcut, self._eligible = self._reachable_tokens()

    # -- read-only views ------------------------------------------------------
    @property
    def merges(self) -> tuple:
        """All merges in id order, as `Merge` named tuples."""
        return self._merges

    @property
    def vocab(self) -> tuple:
        """Token bytes by id (without special tokens)."""
        return self._token_bytes

    @property
    def vocab_size(self) -> int:
        """Alphabet plus merges (special tokens excluded)."""
        return len(self._token_bytes)

    @property
    def n_vocab(self) -> int:
        """All ids, special tokens included (tiktoken's name)."""
        return len(self._token_bytes) + len(self._special_tokens)

    @property
    def special_tokens(self):
        return MappingProxyType(self._special_tokens)

    @property
    def n_regular(self) -> int:
        return sum(not m.super for m in self._merges)

    @property
    def n_super(self) -> int:
        return sum(m.super for m in self._merges)

    def __repr__(self) -> str:
        return (
            f"<fastsw.Tokenizer algo={self.algo} profile={self.profile} vocab_size={self.vocab_size} "
            f"regular={self.n_regular} super={self.n_super}>"
        )

    # -- reachability and eligibility ------------------------------------------
    def reachability(self) -> tuple:
        """This model's reachable and eligible regular tokens by *regular rank id* (an
        alphabet token's id, or ``n_alphabet + k`` for the k-th regular merge):
        ``(shortcut bytes -> rank id, eligible rank ids)``. They depend only on the
        alphabet, the regular merges in order and the pre-tokenizer, so a model whose regular
        merges are a prefix of these, plus supermerges (the trained superword models), can take
        them (``Tokenizer(..., _reachability=...)``) instead of encoding every token again."""
        rank = self._regular_rank_ids()
        back = {tid: r for r, tid in enumerate(rank)}
        return ({b: back[tid] for b, tid in self._shortcut.items()}, frozenset(back[t] for t in self._eligible))

    def _regular_rank_ids(self) -> List[int]:
        """Token id of each regular rank id (alphabet tokens, then regular merges in order)."""
        n_alpha = len(self.alphabet)
        return list(range(n_alpha)) + [m.id for m in self._merges if not m.super]

    def _reachable_from(self, reachability):
        # A token of a prefix of the regular merges is reachable with the prefix exactly
        # when it is with all of them: the encoding of its text only ever applies merges
        # of lower rank (the tokens of its own derivation), so ranks beyond are dropped.
        shortcut_ranks, eligible_ranks = reachability
        rank = self._regular_rank_ids()
        n = len(rank)
        shortcut = {b: rank[r] for b, r in shortcut_ranks.items() if r < n}
        if any(self._token_bytes[tid] != b for b, tid in shortcut.items()):
            raise ValueError("_reachability comes from a model with other regular merges")
        return shortcut, frozenset(rank[r] for r in eligible_ranks if r < n)

    def _reachable_tokens(self):
        """Map bytes -> id of every reachable regular token, and the set of
        eligible ids (reachable and containing a letter).

        A regular token is reachable when its text is one pretoken and the regular
        merges turn that pretoken into the token. On the numba backend the merges
        run for all candidate tokens in one kernel call (no shortcut); on the python
        backend with ``apply_merges``. Tests assert both give the same sets.
        """
        pretok = self.pretokenizer
        n_alpha = len(self.alphabet)
        # a token's text: its UTF-8, with atoms (markers, SCRIPT tokens) as lone surrogates (fastsw.alphabet)
        to_text = atom_text if hasattr(self.alphabet, "atoms") else lambda b: b.decode("utf-8")
        # a scheme with atoms (markers, SCRIPT) makes pieces that are not substrings of any one text, so every piece
        # counts and the regular merges alone decide (the shortcut stays exact: a piece whose bytes are a token the
        # merges make from those bytes is that token either way)
        any_piece = bool(pretok.atoms)
        candidates = []  # (id, bytes, text) of regular tokens whose text is one pretoken
        for tid, tb in enumerate(self._token_bytes):
            if tid >= n_alpha and self._merges[tid - n_alpha].super:
                continue
            try:
                text = to_text(tb)
            except UnicodeDecodeError:
                continue
            if any_piece or len(pretok.pretokenize(text)) == 1:  # text can be a whole pretoken
                candidates.append((tid, tb, text))
        # The kernel check runs ~10 times faster than apply_merges, but where the kernels are not compiled
        # yet (a fresh install) compiling them costs far more than apply_merges over every token
        # (docs/internals.md, "Cold start"): then the reference path, with the same answer.
        if self._resolve_backend(None) == "numba" and candidates and self._fast_ready():
            # no shortcut yet (it is what this computes); each candidate is one pretoken already
            ids, offsets = self._encoder_class()(self._encoder_tables({}, frozenset())).encode_pieces(
                [text for _, _, text in candidates], interruptible=True
            )
            single = (offsets[1:] - offsets[:-1]) == 1
            reachable = [
                c
                for c, one, first in zip(candidates, single.tolist(), ids[offsets[:-1]].tolist())
                if one and first == c[0]
            ]
        else:
            reachable = []
            for c in candidates:
                try:
                    if apply_merges(self.alphabet.initial_ids(c[2]), self._regular_ranks) == [c[0]]:
                        reachable.append(c)
                except ValueError:  # a character outside a character-level alphabet
                    pass
        shortcut = {tb: tid for tid, tb, _ in reachable}
        eligible = frozenset(tid for tid, _, text in reachable if pretok.has_letter(text))
        return shortcut, eligible

    def is_eligible(self, token_id: int) -> bool:
        """Whether a token may take part in a supermerge (reachable, contains a letter)."""
        return token_id in self._eligible

    def is_reachable(self, token_id: int) -> bool:
        """Whether a regular token's text, pre-tokenized and encoded on its own, is that token."""
        return self._shortcut.get(self._token_bytes[token_id]) == token_id

    @property
    def regular_ranks(self):
        """Read-only ``(left, right) -> (rank, new id)`` of the regular merges."""
        return MappingProxyType(self._regular_ranks)

    @property
    def super_ranks(self):
        """Read-only ``(left, right) -> (rank, new id)`` of the supermerges."""
        return MappingProxyType(self._super_ranks)

    def apply_supermerges(self, run: Sequence[int]) -> List[int]:
        """Supermerges applied to a run of eligible single-token pretokens' ids."""
        return apply_merges(run, self._super_ranks) if self._super_ranks else list(run)

    # -- encoding ---------------------------------------------------------------
    def _resolve_backend(self, backend: Optional[str], work: Optional[int] = None) -> str:
        """``"python"`` or ``"numba"`` for a call's ``backend`` (None: the tokenizer's). With ``work`` (the call's
        characters), ``"auto"`` also asks :meth:`_kernels_for` whether the kernels can serve the call now."""
        if backend is None:
            backend = getattr(self, "backend", "auto")
        if backend == "auto" and resolve_backend(backend) == "numba":
            if not self._fast_supported():
                return "python"
            if work is not None and "_fast_encoder" not in self.__dict__ and not self._kernels_for(work):
                return "python"
            return "numba"
        return resolve_backend(backend)

    @staticmethod
    def _kernels_for(work: int) -> bool:
        """Whether a call of ``work`` characters takes the kernels. When they are neither compiled nor in Numba's
        on-disk cache (a fresh install), a background process compiles them
        (:func:`fastsw.encoding.encode_fast.compile_in_background`) and, until it ends, calls of at most
        ``fast_encode.TWIN_WORK`` characters take the plain-Python twin (same ids, no pause); a larger call
        waits for it (its kernel time then dwarfs what the twin would take)."""
        from fastsw.encoding import encode_fast as fast_encode

        if fast_encode.kernels_ready():
            return True
        process = fast_encode.compile_in_background()
        if work <= fast_encode.TWIN_WORK:
            return False
        process.wait()  # then the kernels load from the cache (or compile here, if that process failed)
        return True

    def _fast_ready(self, backend: Optional[str] = None) -> bool:
        """Whether the fast encoder can run without compiling its kernels first (see
        :func:`fastsw.encoding.encode_fast.kernels_ready`); always with ``backend="numba"`` asked for by the call or the
        tokenizer. Where it cannot, the small jobs that the reference does quicker than a compilation
        take the reference (same ids)."""
        if "_fast_encoder" in self.__dict__ or "numba" in (backend, getattr(self, "backend", "auto")):
            return True
        from fastsw.encoding.encode_fast import kernels_ready

        return kernels_ready()

    def _fast_supported(self) -> bool:
        supported = self.__dict__.get("_fast_ok")
        if supported is None:
            from fastsw.alphabet import fast_supported

            supported = fast_supported(self.alphabet)
            if not supported and type(self)._new_fast_encoder is Tokenizer._new_fast_encoder:
                from fastsw.encoding.wide_fast import atom_pairs_first, wide_alphabet  # three-byte atoms too

                supported = wide_alphabet(self.alphabet) and atom_pairs_first(self.alphabet, self._regular_ranks)
            self._fast_ok = supported
        return supported

    def _encoder_tables(self, shortcut=None, eligible=None):
        """The plain tables the fast encoder is built from (:class:`fastsw.encoding.encode_fast.EncoderTables`);
        ``shortcut`` and ``eligible`` default to this model's."""
        from fastsw.encoding.encode_fast import EncoderTables

        return EncoderTables(
            self._token_bytes,
            self._regular_ranks,
            self._super_ranks,
            self._shortcut if shortcut is None else shortcut,
            self._eligible if eligible is None else eligible,
            self.pretokenizer,
            self.alphabet,
            self.n_vocab,
        )

    def __getstate__(self):
        """Pickled without its fast encoder (compiled tables, rebuilt on first use after unpickling), so a
        tokenizer that has encoded pickles for worker processes (``Dataset.map(num_proc=N)``, Dask)."""
        state = self.__dict__.copy()
        state.pop("_fast_encoder", None)
        return state

    def _fast(self):
        """This tokenizer's :class:`fastsw.encoding.encode_fast.FastEncoder`, built on first use (thread-safe)."""
        enc = self.__dict__.get("_fast_encoder")
        if enc is None:
            with _FAST_LOCK:
                enc = self.__dict__.get("_fast_encoder")
                if enc is None:
                    enc = self._fast_encoder = self._new_fast_encoder()
        return enc

    def _new_fast_encoder(self):
        """A new fast encoder of this model (:meth:`_fast` builds it once; model classes override this)."""
        return self._encoder_class()(self._encoder_tables())

    def _encoder_class(self):
        """:class:`fastsw.encoding.encode_fast.FastEncoder`, or for three-byte atoms (SCRIPT v3) its subclass
        :class:`fastsw.encoding.wide_fast.WideFastEncoder` (the same kernel with a wider byte table)."""
        from fastsw.encoding.wide_fast import WideFastEncoder, wide_alphabet

        if wide_alphabet(self.alphabet):
            return WideFastEncoder
        from fastsw.encoding.encode_fast import FastEncoder

        return FastEncoder

    @staticmethod
    def _plain(text):
        """A ``str`` subclass (``numpy.str_``, which ``np.array(texts)`` holds, or any other) as the plain ``str``
        it holds, so that both paths take it; anything else is returned unchanged (and refused by the checks)."""
        return str.__str__(text) if isinstance(text, str) and type(text) is not str else text

    @staticmethod
    def _check_type(text) -> None:
        if not isinstance(text, str):
            raise TypeError(f"encode expects str, got {type(text).__name__}")

    def _check_text(self, text) -> None:
        self._check_type(text)
        check_utf8(text)

    def encode_pretoken(self, piece: str, *, shortcut: bool = True) -> List[int]:
        """Regular merges applied to one pretoken."""
        if shortcut:
            tid = self._shortcut.get(piece.encode("utf-8", ATOM_ERRORS))
            if tid is not None:
                return [tid]
        return apply_merges(self.alphabet.initial_ids(piece), self._regular_ranks)

    def _encode_chunk(self, text: str, shortcut: bool, out: List[int], runs=None) -> None:
        """Append the ids of ``text`` (no special tokens) to ``out`` (the reference path, with its per-pretoken
        cache). ``runs``: see :meth:`_flush_run`."""
        run: List[int] = []
        eligible = self._eligible
        cache = self._cache
        for piece in self.pretokenizer.pretokenize(text):
            ids = cache.get(piece) if shortcut else None
            if ids is None:
                ids = self.encode_pretoken(piece, shortcut=shortcut)
                if shortcut:
                    if len(cache) >= _CACHE_LIMIT:
                        cache.clear()
                    cache[piece] = ids
            if len(ids) == 1 and ids[0] in eligible:
                run.append(ids[0])
                continue
            self._flush_run(run, out, runs)
            run = []
            out.extend(ids)
        self._flush_run(run, out, runs)

    def _flush_run(self, run: List[int], out: List[int], runs: Optional[list] = None) -> None:
        """Append a run of eligible single-token pretokens' ids to ``out``, supermerged when it
        has >= 2; ``runs`` (if given) gets the ``(start, end)`` in ``out`` of each such run."""
        start = len(out)
        if len(run) >= 2 and self._super_ranks:
            out.extend(apply_merges(run, self._super_ranks))
        else:
            out.extend(run)
        if runs is not None and len(run) >= 2:
            runs.append((start, len(out)))

    def encode_ordinary(self, text: str, *, shortcut: bool = True, backend: Optional[str] = None) -> List[int]:
        """Encode ``text`` treating special-token strings as ordinary text.

        ``backend``: ``"python"`` (the reference), ``"numba"`` or ``"auto"``; None
        uses the tokenizer's ``backend`` attribute. All give the same ids.
        """
        if type(text) is not str:
            text = self._plain(text)
        elif shortcut and backend is None and len(text) <= SMALL_TEXT:
            one = self._one_call()
            if one is not None:
                ids = one.encode(text, True)
                if ids is not None:  # (None: a lone surrogate, which the path below reports)
                    return ids
        if self.normalize is not None and isinstance(text, str):
            text = normalize_text(text, self.normalize)
        if self._resolve_backend(backend) == "numba":
            if shortcut and type(text) is str and len(text) <= SMALL_TEXT:
                return self._encode_small(text, backend)
            self._check_type(text)
            if self._resolve_backend(backend, len(text)) == "numba":  # (a fresh install: maybe the twin, below)
                # the fast driver encodes to UTF-8 once and reports a lone surrogate via _check_text
                return self._fast().encode(text, shortcut)
        self._check_text(text)
        out: List[int] = []
        self._encode_chunk(text, shortcut, out)
        return out

    def _one_call(self):
        """The fast encoder's ``OneText`` (one compiled call: scan, kernel, list of ids) for a short text encoded
        with the defaults (shortcut on, the tokenizer's backend), once the fast encoder is built and has one and
        the text may take it as it is (no normalization, the backend not "python"); else None (the general path).
        It is the answer :meth:`_resolve_backend` and :meth:`_encode_small` would give, without their calls or
        the whole-text cache's lookups: on a short text those cost as much as the scan."""
        fast = self.__dict__.get("_fast_encoder")
        if fast is not None and self.normalize is None:
            one = fast.__dict__.get("_one")
            if one and getattr(self, "backend", "auto") != "python" and not pure_python():
                return one
        return None

    def _encode_small(self, text: str, backend: Optional[str]) -> List[int]:
        """A short ``str`` on the numba backend, shortcut on: from the whole-text cache, else one kernel call (the
        long texts' path; its ids go into the cache). While the kernels are not compiled (a fresh install), the
        plain-Python twin with its per-pretoken cache: same ids, far sooner than a compilation."""
        texts = self.__dict__.get("_texts")
        if texts is None:
            texts = self._texts = _TextCache()
        ids = texts.get(text)
        if ids is not None:
            return list(ids)
        fast = self.__dict__.get("_fast_encoder")
        if fast is None:  # once built (the usual case) this costs what self._fast() did
            fast = self._small_encoder(backend)
            if fast is None:
                self._check_text(text)
                out: List[int] = []
                self._encode_chunk(text, True, out)
                self._twin_calls = self.__dict__.get("_twin_calls", 0) + 1
                return out
        ids = fast.encode(text, True)  # a lone surrogate: the same error as _check_text's
        texts.remember(text, ids)
        return ids

    def _small_encoder(self, backend: Optional[str]):
        """The fast encoder for a short text, or None for the plain-Python twin (same ids). The twin serves short
        texts while the kernels are not compiled (:meth:`_fast_ready`), and, unless ``backend="numba"`` is asked,
        for the first ``_TWIN_CALLS`` short texts: building the fast encoder (importing Numba, loading the kernels
        from its cache, the model's tables) takes a few tenths of a second, which a process that encodes a few
        short texts never needs to pay, and the twin's first calls cost far less (a few ms in all)."""
        if "numba" not in (backend, getattr(self, "backend", "auto")):
            if self.__dict__.get("_twin_calls", 0) < _TWIN_CALLS:
                return None
        return self._fast() if self._fast_ready(backend) else None

    def encode(
        self,
        text: str,
        *,
        allowed_special: Union[Literal["all"], AbstractSet[str]] = _NO_SPECIALS,
        disallowed_special: Union[Literal["all"], Collection[str]] = "all",
        shortcut: bool = True,
        backend: Optional[str] = None,
    ) -> List[int]:
        """Encode ``text`` with tiktoken's special-token conventions.

        ``allowed_special``: special tokens to encode as their id (``"all"`` for all).
        ``disallowed_special``: special tokens whose appearance in ``text`` raises
        ``ValueError`` (default ``"all"`` = every special token not allowed). Pass
        ``disallowed_special=()`` to encode them as ordinary text. As in tiktoken, the
        check searches ``text`` for each disallowed string, also inside an allowed one
        (``"<s>x"`` raises when ``"<s>"`` is disallowed, even if ``"<s>x"`` is allowed).
        Where allowed special tokens overlap, the leftmost, then longest, is taken.
        ``backend`` as in :meth:`encode_ordinary`. With ``normalize`` set, the text is
        normalized first and special tokens are found in the normalized text.
        """
        if type(text) is not str:
            text = self._plain(text)
        elif (
            allowed_special is _NO_SPECIALS
            and type(disallowed_special) is str
            and disallowed_special == "all"
            and shortcut
            and backend is None
            and len(text) <= SMALL_TEXT
        ):
            # a short text with the default options: the one compiled call (as encode_ordinary's), which refuses
            # (False) a text holding the first character of a special token; such a text takes the check below
            one = self._one_call()
            if one is not None:
                stops = self.__dict__.get("_stops")
                if stops is None:
                    found = self._special_plan(_NO_SPECIALS, "all")[0]
                    stops = self._stops = "".join(found.firsts) if found is not None else ""
                ids = one.encode(text, True, stops)
                if type(ids) is list:
                    return ids
        if self.normalize is not None and isinstance(text, str):
            text = normalize_text(text, self.normalize)
        check, split = self._special_plan(allowed_special, disallowed_special)
        if check is not None:
            if type(text) is not str:
                self._check_type(text)
            self._check_disallowed(check, text)
        if split is None:
            return self.encode_ordinary(text, shortcut=shortcut, backend=backend)
        return self._encode_allowed(text, split, shortcut, backend)

    def _encode_allowed(self, text: str, split, shortcut: bool, backend: Optional[str]) -> List[int]:
        """``text`` (already checked for disallowed special tokens) cut at the allowed
        special tokens that ``split`` finds (None: none allowed); supermerge runs never
        cross a special token."""
        if split is None:
            return self.encode_ordinary(text, shortcut=shortcut, backend=backend)
        self._check_text(text)
        asked, backend = backend, self._resolve_backend(backend, len(text))
        segments = self._special_segments(text, split)
        if backend == "numba" and not (shortcut and len(text) <= SMALL_TEXT and not self._fast_ready(asked)):
            enc = self._fast()
            ids, offsets = enc.encode_docs([seg for seg, _ in segments], shortcut)
            if len(segments) == 1:
                return enc.to_list(ids)
            out: List[int] = []
            for k, (_, special) in enumerate(segments):
                out.extend(enc.to_list(ids[offsets[k] : offsets[k + 1]]))
                if special is not None:
                    out.append(special)
            return out
        out = []
        for seg, special in segments:
            self._encode_chunk(seg, shortcut, out)
            if special is not None:
                out.append(special)
        return out

    def _special_plan(self, allowed_special, disallowed_special):
        """Check a call's special-token options once per distinct pair (cached):
        ``(check of the disallowed strings (a _SpecialCheck) or None, regex of the allowed ones or None)``,
        each alternation longest first."""
        plans = self._plans
        try:  # the defaults (and any other hashable pair) as given: no normalised key to build per call
            plan = plans.get((allowed_special, disallowed_special))
        except TypeError:  # a set or a list
            plan = None
        if plan is not None:
            return plan
        key = (
            allowed_special if isinstance(allowed_special, str) else frozenset(allowed_special),
            disallowed_special if isinstance(disallowed_special, str) else frozenset(disallowed_special),
        )
        plan = plans.get(key)
        if plan is not None:
            return plan
        specials = frozenset(self._special_tokens)
        allowed, disallowed = key
        for name, value in (("allowed_special", allowed), ("disallowed_special", disallowed)):
            if isinstance(value, str):
                if value != "all":
                    raise TypeError(
                        f"{name}={value!r}: pass 'all' or a set of special-token strings, e.g. {name}={{{value!r}}}"
                    )
            else:
                bad = [s for s in value if not isinstance(s, str)]
                if bad:
                    raise TypeError(f"{name} must hold special-token strings, not {bad[0]!r}")
                unknown = value - specials
                if unknown:
                    raise ValueError(
                        f"{name} names tokens this model does not have: {sorted(unknown)}; "
                        f"its special tokens are {sorted(specials) or 'none'}"
                    )
        allowed = specials if allowed == "all" else allowed
        disallowed = (specials - allowed) if disallowed == "all" else disallowed

        def alternation(strings):
            if not strings:
                return None
            # literal strings: the standard library's engine finds them ~3 x sooner than ``regex`` (same matches)
            return re.compile("|".join(re.escape(s) for s in sorted(strings, key=lambda s: (-len(s), s))))

        plan = (_SpecialCheck(alternation(disallowed), disallowed) if disallowed else None, alternation(allowed))
        if len(plans) >= 64:
            plans.clear()
        plans[key] = plan
        try:
            plans[(allowed_special, disallowed_special)] = plan
        except TypeError:
            pass
        return plan

    @staticmethod
    def _check_disallowed(check, text: str, where: str = "text") -> None:
        m = check.search(text)
        if m is not None:
            raise ValueError(
                f"{where} contains the special token {m.group()!r} at position {m.start()}, which is "
                f"disallowed; pass allowed_special={{{m.group()!r}}} to encode it as a special token, "
                "or disallowed_special=() to encode it as ordinary text"
            )

    def _special_segments(self, text: str, split):
        """``[(segment, special id or None)]``: the ordinary text between the allowed
        special tokens that ``split`` finds, each followed by the id of the special
        token that ends it (None at the end)."""
        segments: List[Tuple[str, Optional[int]]] = []
        start = 0
        for m in split.finditer(text):
            segments.append((text[start : m.start()], self._special_tokens[m.group()]))
            start = m.end()
        segments.append((text[start:], None))
        return segments

    def _batch_texts(self, texts, method: str) -> List[str]:
        """A batch argument as a list of ``str``; a bare ``str`` (or bytes) is rejected."""
        if isinstance(texts, (str, bytes, bytearray)):
            raise TypeError(
                f"{method} expects a list of str, got a single {type(texts).__name__}; wrap one text as [text]"
            )
        texts = [self._plain(t) for t in texts]
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise TypeError(f"{method} expects a list of str, but texts[{i}] is {type(t).__name__}")
        return texts

    def encode_batch(
        self,
        texts: Iterable[str],
        *,
        num_threads: Optional[int] = None,
        allowed_special: Union[Literal["all"], AbstractSet[str]] = frozenset(),
        disallowed_special: Union[Literal["all"], Collection[str]] = "all",
        shortcut: bool = True,
        backend: Optional[str] = None,
    ) -> List[List[int]]:
        """:meth:`encode` for each text, in order (same keyword options). On the numba
        backend the texts are encoded by :meth:`encode_batch_to_numpy` on ``num_threads``
        threads (None: all cores).

        >>> tok.encode_batch(["hello world", "goodbye"]) == [tok.encode("hello world"), tok.encode("goodbye")]
        True
        """
        texts = self._batch_texts(texts, "encode_batch")
        if self.normalize is not None:
            texts = [normalize_text(t, self.normalize) for t in texts]
        if self._resolve_backend(backend, sum(map(len, texts))) == "numba":
            check, split = self._special_plan(allowed_special, disallowed_special)
            if split is None:  # no special token to cut at: lists built slice by slice as the threads finish
                _check_num_threads(num_threads)
                if check is not None:
                    for i, t in enumerate(texts):
                        self._check_disallowed(check, t, f"texts[{i}]")
                return self._fast().encode_lists(texts, num_threads, shortcut)
            return self._split(
                *self.encode_batch_to_numpy(
                    texts,
                    allowed_special=allowed_special,
                    disallowed_special=disallowed_special,
                    num_threads=num_threads,
                    shortcut=shortcut,
                    backend="numba",
                )
            )
        _check_num_threads(num_threads)
        check, split = self._special_plan(allowed_special, disallowed_special)
        for i, t in enumerate(texts):
            if check is not None:
                self._check_disallowed(check, t, f"texts[{i}]")
        return [self._encode_allowed(t, split, shortcut, "python") for t in texts]

    def encode_ordinary_batch(
        self,
        texts: Iterable[str],
        *,
        num_threads: Optional[int] = None,
        shortcut: bool = True,
        backend: Optional[str] = None,
    ) -> List[List[int]]:
        """``encode_ordinary`` for each text, in order (threads as in :meth:`encode_batch`)."""
        texts = self._batch_texts(texts, "encode_ordinary_batch")
        _check_num_threads(num_threads)
        if self._resolve_backend(backend, sum(map(len, texts))) == "numba":
            if self.normalize is not None:
                texts = [normalize_text(t, self.normalize) for t in texts]
            return self._fast().encode_lists(texts, num_threads, shortcut)
        return [self.encode_ordinary(t, shortcut=shortcut, backend=backend) for t in texts]

    def _split(self, ids, offsets) -> List[List[int]]:
        return self._fast().lists_of(ids, offsets)

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: Union[Literal["all"], AbstractSet[str]] = frozenset(),
        disallowed_special: Union[Literal["all"], Collection[str]] = "all",
        num_threads: Optional[int] = None,
        shortcut: bool = True,
        backend: Optional[str] = None,
    ) -> "numpy.ndarray":
        """:meth:`encode` of one text as a 1-D ``numpy.uint32`` array, as tiktoken's
        ``Encoding.encode_to_numpy`` (same special-token options). A long text on the
        numba backend is encoded in slices on ``num_threads`` threads (None: all cores).

        For a batch of texts use :meth:`encode_batch_to_numpy`; passing a list or tuple
        here still returns its ``(ids, offsets)`` but is deprecated.

        >>> arr = tok.encode_to_numpy("hello world")
        >>> arr.dtype.name, arr.tolist() == tok.encode("hello world")
        ('uint32', True)
        """
        import numpy as np

        if isinstance(text, (list, tuple)):
            warnings.warn(
                "encode_to_numpy(texts) with a list of texts is deprecated: it now encodes one text "
                "to a uint32 array, as tiktoken's; use encode_batch_to_numpy(texts) for (ids, offsets)",
                DeprecationWarning,
                stacklevel=2,
            )
            return self.encode_batch_to_numpy(
                text,
                allowed_special=allowed_special,
                disallowed_special=disallowed_special,
                num_threads=num_threads,
                shortcut=shortcut,
                backend=backend,
            )
        self._check_type(text)
        if len(text) <= SMALL_TEXT or self._resolve_backend(backend) != "numba":
            return np.array(
                self.encode(
                    text,
                    allowed_special=allowed_special,
                    disallowed_special=disallowed_special,
                    shortcut=shortcut,
                    backend=backend,
                ),
                dtype=np.uint32,
            )
        ids, _ = self.encode_batch_to_numpy(
            [text],
            allowed_special=allowed_special,
            disallowed_special=disallowed_special,
            num_threads=num_threads,
            shortcut=shortcut,
            backend=backend,
        )
        return ids.astype(np.uint32)

    def encode_batch_to_numpy(
        self,
        texts: Iterable[str],
        *,
        allowed_special: Union[Literal["all"], AbstractSet[str]] = frozenset(),
        disallowed_special: Union[Literal["all"], Collection[str]] = "all",
        num_threads: Optional[int] = None,
        shortcut: bool = True,
        backend: Optional[str] = None,
    ) -> Tuple["numpy.ndarray", "numpy.ndarray"]:
        """:meth:`encode` of every text as numpy arrays: ``(ids, offsets)``, ids int32
        and offsets int64 with ``len(texts) + 1`` entries, text ``i`` being
        ``ids[offsets[i]:offsets[i + 1]]``. Special tokens as in :meth:`encode`
        (``disallowed_special=()`` encodes them as ordinary text). The numba backend
        encodes slices of the batch on ``num_threads`` threads (None: all cores).

        >>> ids, offsets = tok.encode_batch_to_numpy(["hello world", "<|endoftext|>"], allowed_special="all")
        >>> ids[offsets[1]:offsets[2]].tolist() == [tok.eot_token]
        True
        """
        import numpy as np

        texts = self._batch_texts(texts, "encode_batch_to_numpy")
        if self.normalize is not None:
            texts = [normalize_text(t, self.normalize) for t in texts]
        _check_num_threads(num_threads)
        check, split = self._special_plan(allowed_special, disallowed_special)
        if check is not None:
            for i, t in enumerate(texts):
                self._check_disallowed(check, t, f"texts[{i}]")
        if self._resolve_backend(backend, sum(map(len, texts))) == "numba":
            fast = self._fast()
            if split is None:
                return fast.encode_to_numpy(texts, num_threads, shortcut)
            return self._encode_segments_to_numpy(texts, split, num_threads, shortcut)
        encoded = [self._encode_allowed(t, split, shortcut, "python") for t in texts]
        offsets = np.zeros(len(texts) + 1, np.int64)
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
        ids = np.fromiter((i for e in encoded for i in e), np.int32, int(offsets[-1]))
        return ids, offsets

    def _encode_segments_to_numpy(self, texts: List[str], split, num_threads, shortcut: bool):
        """The numba path of :meth:`encode_batch_to_numpy` with allowed special tokens: every
        text's segments encoded as one batch, the special ids put back in between."""
        import numpy as np

        segments, specials, first = [], [], [0]
        for t in texts:
            for seg, special in self._special_segments(t, split):
                segments.append(seg)
                specials.append(-1 if special is None else special)
            first.append(len(segments))
        seg_ids, seg_off = self._fast().encode_to_numpy(segments, num_threads, shortcut)
        special_ids = np.array(specials, np.int64)
        has = special_ids >= 0
        # each segment's ids, then its special id if it has one
        ends = np.cumsum(np.diff(seg_off) + has)
        ids = np.empty(int(ends[-1]) if len(ends) else 0, np.int32)
        at_special = np.zeros(ids.shape[0], bool)
        at_special[ends[has] - 1] = True
        ids[at_special] = special_ids[has]
        ids[~at_special] = seg_ids
        bounds = np.concatenate((np.zeros(1, np.int64), ends))
        return ids, np.ascontiguousarray(bounds[np.array(first, np.int64)], dtype=np.int64)

    # -- decoding ---------------------------------------------------------------
    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The concatenated bytes of the tokens (special tokens as their text). For a model whose
        pre-tokenizer emits atoms (boundary markers, caps codes; :mod:`fastsw.pretokenizers.boundary`), the UTF-8 of the
        decoded text, invalid bytes kept as they are (``surrogateescape``)."""
        if hasattr(self.alphabet, "atoms"):
            return self.decode(ids, errors="surrogateescape").encode("utf-8", "surrogateescape")
        return self._token_bytes_of(ids)

    def _token_bytes_of(self, ids: Iterable[int], token_bytes=None) -> bytes:
        token_bytes = self._token_bytes if token_bytes is None else token_bytes
        n = len(token_bytes)
        parts = []
        for t in ids:
            t = _token_id(t)
            if 0 <= t < n:
                parts.append(token_bytes[t])
            elif t in self._special_by_id:
                parts.append(self._special_by_id[t])
            else:
                raise ValueError(self._id_problem(t))
        return b"".join(parts)

    def _decoding_bytes(self):
        """Each token's bytes as :meth:`decode` reads them, made once: the pre-tokenizer's ``decoding_bytes``
        (SCRIPT: block/index atoms back to characters; the token bytes themselves for the others)."""
        table = self.__dict__.get("_dec_bytes")
        if table is None:
            table = self._dec_bytes = self.pretokenizer.decoding_bytes(self._token_bytes)
        return table

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """Decode to ``str``. A token sequence that is not valid UTF-8 (a prefix of a
        multi-byte character, for example) follows ``errors`` as in
        ``bytes.decode``: ``"replace"`` (default, U+FFFD, as tiktoken does),
        ``"strict"`` (raise ``UnicodeDecodeError``), ``"ignore"``, ...
        ``decode(encode(text)) == text`` for every ``str`` that has a UTF-8 encoding.
        Ids must be integers (``int`` or numpy integers); ``1.5`` or ``"1"`` raise ``TypeError``.
        A model with atoms (a marker scheme) decodes them with its pre-tokenizer's inverse
        (``pretokenizer.decode_text``: markers back to spaces, caps codes re-case their span).
        """
        if hasattr(self.alphabet, "atoms"):
            data = self._token_bytes_of(ids, self._decoding_bytes())
            return self.pretokenizer.decode_text(decode_with_atoms(data, errors))  # type: ignore[attr-defined]
        return self._token_bytes_of(ids).decode("utf-8", errors)

    def decode_batch(self, batch: Iterable[Iterable[int]], *, errors: str = "replace") -> List[str]:
        """:meth:`decode` of each id sequence, in order (tiktoken's name).

        >>> tok.decode_batch(tok.encode_batch(["hello", "world"]))
        ['hello', 'world']
        """
        return [self.decode(ids, errors) for ids in batch]

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token id (a special token's text as UTF-8); ``KeyError``
        for an id outside the model, as in tiktoken.

        >>> tok.decode_single_token_bytes(tok.encode_single_token(" the"))
        b' the'
        """
        t = _token_id(token)
        if 0 <= t < len(self._token_bytes):
            return self._token_bytes[t]
        if t in self._special_by_id:
            return self._special_by_id[t]
        raise KeyError(self._id_problem(t))

    def _id_problem(self, t: int) -> Optional[str]:
        """Why ``t`` is not a token id of this model (None when it is one): beyond the ids, or in the gap
        between the vocabulary and the special tokens (o200k_base: 199998, 200000..200017)."""
        n = len(self._token_bytes)
        if 0 <= t < n or t in self._special_by_id:
            return None
        if n <= t < self.n_vocab:
            specials = sorted(self._special_by_id)
            shown = ", ".join(map(str, specials[:6])) + (", ..." if len(specials) > 6 else "")
            return (
                f"token id {t} is not assigned in this model: the vocabulary is 0..{n - 1} and the special "
                f"tokens are {shown}; the ids in between have no token"
            )
        return f"token id {t} is not in this model (valid ids: 0..{self.n_vocab - 1})"

    # -- single tokens (tiktoken and HF names) -----------------------------------
    def encode_single_token(self, text_or_bytes: Union[str, bytes]) -> int:
        """The id of the token whose bytes are ``text_or_bytes`` (a ``str`` is taken
        as UTF-8), else of the special token with that text; ``KeyError`` when it is
        neither, as in tiktoken. Where two ids share the same bytes, the one that
        encoding those bytes alone gives, else the smallest.

        >>> tok.decode([tok.encode_single_token("<|endoftext|>")])
        '<|endoftext|>'
        """
        if isinstance(text_or_bytes, str):
            key = text_or_bytes.encode("utf-8", "surrogatepass")
        elif isinstance(text_or_bytes, (bytes, bytearray)):
            key = bytes(text_or_bytes)
        else:
            raise TypeError(f"encode_single_token expects str or bytes, got {type(text_or_bytes).__name__}")
        tid = self._shortcut.get(key)
        if tid is None:
            tid = self._ids_by_bytes().get(key)
        if tid is None:
            try:
                tid = self._special_tokens.get(key.decode("utf-8"))
            except UnicodeDecodeError:
                pass
        if tid is None:
            raise KeyError(f"{text_or_bytes!r} is not a single token of this model; use encode() for text")
        return tid

    def _ids_by_bytes(self) -> Dict[bytes, int]:
        table = self.__dict__.get("_id_of_bytes")
        if table is None:
            table = {}
            for tid, tb in enumerate(self._token_bytes):
                table.setdefault(tb, tid)
            self._id_of_bytes = table
        return table

    @property
    def eot_token(self) -> int:
        """The id of the ``<|endoftext|>`` special token (tiktoken's name);
        ``AttributeError`` when the model has none.

        >>> tok.decode([tok.eot_token])
        '<|endoftext|>'
        """
        tid = self._special_tokens.get("<|endoftext|>")
        if tid is None:
            raise AttributeError(
                "this model has no '<|endoftext|>' special token; train it with "
                "special_tokens=['<|endoftext|>'] to get eot_token"
            )
        return tid

    def get_vocab(self) -> Dict[str, int]:
        """Token string -> id for every id, as HF's ``Tokenizer.get_vocab()``: a
        token's bytes in GPT-2's byte-level rendering (``b" the"`` is ``"Ġthe"``), the
        same strings as the vocabulary of :meth:`save_hf`'s ``tokenizer.json``; special
        tokens as their text. Where ids share the same bytes, the smallest is kept.

        >>> tok.get_vocab()["Ġthe"] == tok.encode_single_token(" the")
        True
        """
        vocab = self.__dict__.get("_hf_vocab")
        if vocab is None:
            vocab = rendered_vocab(self)
            vocab.update(self._special_tokens)
            self._hf_vocab = vocab
        return dict(vocab)

    def token_to_id(self, token: str) -> Optional[int]:
        """The id of a token string in :meth:`get_vocab`'s rendering (HF's name), or
        None when the model has no such token.

        >>> tok.token_to_id("Ġthe") == tok.encode_single_token(" the")
        True
        """
        if not isinstance(token, str):
            raise TypeError(
                f"token_to_id expects a token string such as 'Ġthe', got {type(token).__name__}; "
                "for bytes use encode_single_token"
            )
        if "_hf_vocab" not in self.__dict__:
            self.get_vocab()
        return self._hf_vocab.get(token)

    def id_to_token(self, token_id: int) -> Optional[str]:
        """The token string of an id in :meth:`get_vocab`'s rendering (HF's name), or
        None for an id outside the model.

        >>> tok.id_to_token(tok.encode_single_token(" the"))
        'Ġthe'
        """
        t = _token_id(token_id)
        if 0 <= t < len(self._token_bytes):
            return render(self._token_bytes[t])
        special = self._special_by_id.get(t)
        return None if special is None else special.decode("utf-8")

    def encode_with_offsets(self, text: str, **kwargs) -> Tuple[List[int], List[int]]:
        """:meth:`encode` (same keyword options) and the character offset in ``text``
        where each token starts, as tiktoken's ``decode_with_offsets`` and HF's
        ``Encoding.offsets`` starts; a token that starts inside a character (part of
        a multi-byte character's UTF-8) gets that character's offset. For a model with
        ``normalize`` set the offsets refer to the normalized text
        (``fastsw.pretokenizers.pretokenize.normalize_text(text, tok.normalize)``), not to ``text``.

        >>> tok.encode_with_offsets("héllo wörld")[1][:1]
        [0]
        """
        self._check_offsets_supported("encode_with_offsets")
        ids = self.encode(text, **kwargs)
        return ids, self._offsets_of(ids)

    def _check_offsets_supported(self, method: str) -> None:
        if self.pretokenizer.token_offsets is not None:
            return
        if hasattr(self.alphabet, "atoms") and self._token_widths() is None:  # (SCRIPT alone has offsets: widths)
            raise ValueError(
                f"{method} needs tokens that are pieces of the text; this model's pre-tokenizer "
                f"{self.pretokenizer!r} rewrites it (markers for spaces, caps codes), so a token has no "
                "offset in the text; use encode and decode"
            )

    def _offsets_of(self, ids: List[int]) -> List[int]:
        """The character offset where each token of ``ids`` starts in their decoded text (tiktoken's rule: a
        token that starts inside a character gets that character's offset, never below 0)."""
        rule = self.pretokenizer.token_offsets
        if (
            rule is not None
        ):  # markers (fastsw.pretokenizers.boundary): a marker pair stands for a space, other atoms for nothing
            return rule(ids, self._token_bytes, self._special_by_id)
        token_bytes = self._token_bytes
        n = len(token_bytes)
        widths = self._token_widths()
        offsets = []
        chars = 0
        for t in ids:
            if widths is not None and t < n:  # a pre-tokenizer's atoms (SCRIPT: a character is two of them)
                inside, width = widths[t]
            else:
                tb = token_bytes[t] if t < n else self._special_by_id[t]
                inside, width = 0x80 <= tb[0] < 0xC0, len(tb) - sum(0x80 <= b < 0xC0 for b in tb)
            offsets.append(max(0, chars - 1) if inside else chars)
            chars += width
        return offsets

    def decode_tokens_bytes(self, tokens: Iterable[int]) -> List[bytes]:
        """The bytes of each token, as tiktoken's ``decode_tokens_bytes``
        (:meth:`decode_single_token_bytes` of each id; ``KeyError`` for an id outside the model).

        >>> tok.decode_tokens_bytes(tok.encode("hello world")) == [tok.vocab[t] for t in tok.encode("hello world")]
        True
        """
        return [self.decode_single_token_bytes(t) for t in tokens]

    def decode_with_offsets(self, tokens: Iterable[int]) -> Tuple[str, List[int]]:
        """The decoded text and the character offset in it where each token starts, as tiktoken's
        ``decode_with_offsets``: a token that starts inside a character (a UTF-8 continuation byte) gets
        that character's offset. The bytes must be valid UTF-8 (``UnicodeDecodeError`` otherwise, as in
        tiktoken); ``KeyError`` for an id outside the model.

        >>> text, offsets = tok.decode_with_offsets(tok.encode("héllo wörld"))
        >>> text, offsets == tok.encode_with_offsets("héllo wörld")[1]
        ('héllo wörld', True)
        """
        ids = [_token_id(t) for t in tokens]
        for t in ids:
            if not (0 <= t < len(self._token_bytes) or t in self._special_by_id):
                raise KeyError(f"token id {t} is not in this model (valid ids: 0..{self.n_vocab - 1})")
        self._check_offsets_supported("decode_with_offsets")
        return self.decode(ids, errors="strict"), self._offsets_of(ids)

    @property
    def special_tokens_set(self) -> set:
        """The special tokens' texts (tiktoken's name).

        >>> sorted(tok.special_tokens_set)
        ['<|endoftext|>']
        """
        return set(self._special_tokens)

    @property
    def max_token_value(self) -> int:
        """The largest token id, special tokens included (tiktoken's name; ``n_vocab - 1``).

        >>> tok.max_token_value == tok.n_vocab - 1
        True
        """
        return self.n_vocab - 1

    def show(self, text: Union[str, Sequence[str]], **kwargs: Any) -> "TokenView":
        """See the tokens of ``text`` (a ``str`` or a list of them): a :class:`fastsw.eval.show.TokenView`, drawn as
        HTML in Jupyter (hover a token for its id, bytes, merge rank and training count), ``str()`` the
        terminal view without colour (tokens separated by ``│``, supermerges in ``⟪ ⟫``), ``.to_terminal(color=True)``
        with ANSI colours, ``.spans`` the :class:`fastsw.eval.show.TokenSpan` of every token. Special-token strings are
        shown as special tokens (``allowed_special=set()`` encodes them as ordinary text); ``label`` names the
        model on the view.

        >>> "".join(span.text for span in tok.show("hello world").spans[0])
        'hello world'
        """
        from fastsw.eval.show import TokenView

        return TokenView(self, text, **kwargs)

    def _token_widths(self):
        """Per token ``(starts inside a character, characters it ends)`` from the pre-tokenizer's ``token_widths``
        (made once), or None: then :meth:`encode_with_offsets` reads the UTF-8 bytes."""
        if "_widths" not in self.__dict__:
            self._widths = self.pretokenizer.token_widths(self._token_bytes)
        return self._widths

    # -- persistence: fastsw's model file here; the other formats are functions of fastsw.io, imported when called
    # (those modules build Tokenizers, so they import this one; tests/test_imports.py lists these delegations)
    def save(self, path: PathLike) -> None:
        """Write the model to ``path`` (fastsw's JSON model format, atomically); :meth:`load` reads it.

        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "model.json"
        >>> tok.save(path)
        >>> fastsw.Tokenizer.load(path).merges == tok.merges
        True
        """
        save_model(self, path)

    @classmethod
    def load(cls, path: PathLike) -> "Tokenizer":
        """Read a model written by :meth:`save` (any model kind: a MinGram file gives a
        :class:`fastsw.trainers.mingram.MinGramTokenizer`). An example: :meth:`save`.
        """
        from fastsw.io.model_kinds import model_kind

        data = read_model_json(path)
        kind = model_kind(data.get("algo"))
        if kind is None:
            kwargs = model_kwargs(path, data)
        else:  # a model kind with its own class and fields (fastsw.io.model_kinds lists them)
            cls, kwargs = kind.cls, kind.read(path, data)
        try:
            return cls(**kwargs)
        except (ValueError, TypeError) as e:
            raise ValueError(f"{Path(path)}: invalid model file: {e}") from e

    @staticmethod
    def from_file(
        path: PathLike,
        *,
        pattern: Optional[str] = None,
        special_tokens: Optional[Mapping[str, int]] = None,
        allow_approximate: bool = False,
    ) -> "Tokenizer":
        """Load any model file fastsw reads, by its content (HF's name): a fastsw model, the authors' text
        format, a ``.tiktoken`` rank file (``pattern`` and ``special_tokens`` as in :meth:`load_tiktoken`) or a
        ``semingram-v1`` MinGram file (refused where it cannot be read exactly unless ``allow_approximate=True``).
        See :func:`fastsw.io.formats.from_file`.

        >>> import pathlib, tempfile
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> tok.save(folder / "model.json")
        >>> tok.save_tiktoken(folder / "ranks.tiktoken")
        >>> pattern = tok.pretokenizer.main_pattern
        >>> [fastsw.Tokenizer.from_file(folder / name, pattern=pattern).encode("hello world")
        ...  for name in ("model.json", "ranks.tiktoken")] == [tok.encode("hello world")] * 2
        True
        """
        from fastsw.io.formats import from_file

        return from_file(path, pattern=pattern, special_tokens=special_tokens, allow_approximate=allow_approximate)

    # The signature of fastsw.io.tiktoken_vocab.load_tiktoken, restated (the one duplicate pair of this module,
    # kept): the class is the entry users know from tiktoken, and a `**options` pass-through would hide `backend`
    # and `cache` from help(), the docs and mypy. The module cannot be imported here at class definition (it
    # imports this one).
    @staticmethod
    def load_tiktoken(
        path: PathLike,
        pattern: Optional[str] = None,
        special_tokens: Optional[Mapping[str, int]] = None,
        *,
        backend: str = "auto",
        cache: bool = True,
    ) -> "Tokenizer":
        """A tokenizer for a ``.tiktoken`` rank file (gzip accepted) with tiktoken's ids: a
        :class:`fastsw.io.tiktoken_vocab.TiktokenTokenizer`. OpenAI's o200k_base and cl100k_base files are
        recognised by their content; any other rank file needs its ``pattern``. See
        :func:`fastsw.io.tiktoken_vocab.load_tiktoken`.

        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "ranks.tiktoken"
        >>> tok.save_tiktoken(path)
        >>> ranks = fastsw.Tokenizer.load_tiktoken(path, pattern=tok.pretokenizer.main_pattern)
        >>> ranks.encode("hello world") == tok.encode("hello world")
        True
        """
        from fastsw.io.tiktoken_vocab import load_tiktoken

        return load_tiktoken(path, pattern, special_tokens, backend=backend, cache=cache)

    @staticmethod
    def from_tiktoken(enc: Any, *, backend: str = "auto", cache: bool = True) -> "Tokenizer":
        """A tokenizer with the vocabulary, pattern and special tokens of a ``tiktoken.Encoding``, giving its ids
        (a :class:`fastsw.io.tiktoken_vocab.TiktokenTokenizer`). See :func:`fastsw.io.tiktoken_vocab.from_tiktoken`.

        >>> enc = tok.to_tiktoken()  # or tiktoken.get_encoding("o200k_base")
        >>> fastsw.Tokenizer.from_tiktoken(enc).encode("hello world") == enc.encode("hello world")
        True
        """
        from fastsw.io.tiktoken_vocab import from_tiktoken

        return from_tiktoken(enc, backend=backend, cache=cache)

    @classmethod
    def load_paper(cls, path: PathLike) -> "Tokenizer":
        """Read a model in the authors' text format (``BoundlessBPE v2 KIND``).
        See :func:`fastsw.io.interop.load_paper_model`."""
        from fastsw.io.interop import load_paper_model

        return load_paper_model(path)

    def save_paper(self, path: PathLike, corpus: Optional[Iterable[str]] = None) -> None:
        """Write the model in the authors' text format (alphabet ``bytes243``, profile ``paper``, only);
        ``corpus`` fills the count columns. See :func:`fastsw.io.interop.save_paper_model`."""
        from fastsw.io.interop import save_paper_model

        save_paper_model(self, path, corpus)

    def to_tiktoken(
        self, name: str = "fastsw", *, allow_approximate: bool = False, drop_duplicates: bool = False
    ) -> Any:
        """A ``tiktoken.Encoding`` for a plain BPE model with a byte alphabet (exact in ``simple``
        pre-tokenizer mode; other modes are refused unless ``allow_approximate=True``).
        See :func:`fastsw.io.interop.to_tiktoken`.

        >>> enc = tok.to_tiktoken()
        >>> enc.encode("hello world") == tok.encode("hello world")
        True
        """
        from fastsw.io.interop import to_tiktoken

        return to_tiktoken(self, name, allow_approximate=allow_approximate, drop_duplicates=drop_duplicates)

    def save_tiktoken(self, path: PathLike, *, drop_duplicates: bool = False) -> None:
        """Write a ``.tiktoken`` rank file (``base64(token) rank`` per line), readable by
        ``tiktoken.load.load_tiktoken_bpe``. See :func:`fastsw.io.interop.write_tiktoken_ranks`."""
        from fastsw.io.interop import write_tiktoken_ranks

        write_tiktoken_ranks(self, path, drop_duplicates=drop_duplicates)

    def save_hf(self, path: PathLike, *, ignore_merges: Optional[bool] = None, allow_approximate: bool = False) -> dict:
        """Write an HF ``tokenizer.json`` (``tokenizers.Tokenizer.from_file`` loads it); returns
        ``{"exact": bool, "reasons": [what is not exact]}``. Exact for plain BPE in ``simple`` mode; other
        models are refused unless ``allow_approximate=True``. See :func:`fastsw.io.interop.save_hf`.

        >>> import pathlib, tempfile
        >>> tok.save_hf(pathlib.Path(tempfile.mkdtemp()) / "tokenizer.json")
        {'exact': True, 'reasons': []}
        """
        from fastsw.io.interop import save_hf

        return save_hf(self, path, ignore_merges=ignore_merges, allow_approximate=allow_approximate)

    def verify_export(self, exported: Any, texts: Iterable[str]) -> dict:
        """How often an exported encoder (a ``tiktoken.Encoding``, an HF ``tokenizers.Tokenizer`` or a path to
        its file) agrees with this tokenizer on ``texts``. See :func:`fastsw.io.interop.verify_export`."""
        from fastsw.io.interop import verify_export

        return verify_export(self, exported, texts)

    def merge_conflicts(self) -> List[dict]:
        """Pieces on which a merge-rule encoder (fastsw, HF) and a rank-table encoder (tiktoken) disagree.
        See :func:`fastsw.io.interop.merge_conflicts`."""
        from fastsw.io.interop import merge_conflicts

        return merge_conflicts(self)


def rendered_vocab(tok) -> Dict[str, int]:
    """Each token's GPT-2 byte-level rendering -> its id, special tokens left out;
    where ids share the same bytes, the smallest (HF's vocab is a map)."""
    out: Dict[str, int] = {}
    for tid, tb in enumerate(tok.vocab):
        out.setdefault(render(tb), tid)
    return out
