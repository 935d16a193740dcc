"""The fast encoding path: the driver around :func:`fastsw.encoding.encode_kernels._encode_docs`.

:class:`FastEncoder` is built from an :class:`EncoderTables` (plain data: vocabulary bytes,
rank dicts, shortcut, eligible set, pre-tokenizer; a :class:`fastsw.Tokenizer` builds one on
its first fast encode and keeps the encoder; this module never imports the tokenizer) and
holds them as numpy arrays: the rank tables of the regular merges and of the supermerges,
the whole-pretoken shortcut table of the reachable tokens, the atomic id of every
byte and the eligibility flags. Encoding a batch of documents costs, in Python,
one call of the compiled scanner's ``scan_utf8`` for the whole batch (pretoken ends
in bytes and the UTF-8, GIL released; without the extension or with a custom pattern,
one ``pretokenize`` call per document and the pretokens' lengths via ``map(len, ...)``;
no per-pretoken Python code either way) and one kernel call; the kernel does the
shortcut lookups, the regular merges and the supermerge runs.

The result is identical to the reference (:meth:`fastsw.Tokenizer.encode_ordinary`
with ``backend="python"``); tests assert it on the goldens, real text in every
corpus language, Hypothesis strings and pathological inputs.

Design notes: see docs/internals.md, section "Encoding" (the driver, and the kernel notes it refers to).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from itertools import chain
from typing import AbstractSet, Dict, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple

import numpy as np

from fastsw.encoding import encode_kernels as K
from fastsw._interrupt import call_kernel
from fastsw.alphabet import Alphabet, AtomAlphabet, ByteAlphabet, atom_bytes_packed, check_utf8, fast_supported
from fastsw.pretokenizers.base import BasePretokenizer
from fastsw.pretokenizers.pretokenize import Pretokenizer

try:  # the compiled id -> int list loop (FastEncoder.to_list); absent in a pure-Python install
    from fastsw.pretokenizers._pretok import ids_to_list as _ids_to_list
except ImportError:
    _ids_to_list = None
try:  # a batch's lists in one pass, and the scanner's one-call input (pretoken byte ends + UTF-8) per slice
    from fastsw.pretokenizers._pretok import ids_to_lists as _ids_to_lists, scan_utf8 as _scan_utf8
except ImportError:
    _ids_to_lists = _scan_utf8 = None
try:  # one text to its ids in one compiled call (scan, kernel, list; FastEncoder._one_text), and its text cache
    from fastsw.pretokenizers._pretok import OneText as _OneText, TextCache as _TextCache
except ImportError:
    _OneText = _TextCache = None

SHORT_LIMIT = 16  # sequences up to this length use the scan loop, longer ones the tournament tree
#: Kernel calls on at least this many UTF-8 bytes from the main thread run in a worker thread (Ctrl-C).
_WORKER_BYTES = 1 << 20
_SLICE_BYTES = 1 << 18  # documents per thread-pool task: about this many characters
_MIN_SLICE = 1 << 13
_ID_LIMIT = (1 << 31) - 1
# Use Pretokenizer.pretoken_ends (the compiled scanner's offsets) when it is available;
# otherwise (or when False) the lengths of Pretokenizer.pretokenize's strings.
USE_PRETOKEN_ENDS = True
# Use fastsw.pretokenizers._pretok.scan_utf8 (pretoken byte ends and the UTF-8 of a slice in one GIL-free call) when it is
# available; when False, the per-document path above (for measurements and its twin test).
USE_SCAN_UTF8 = True
# Encode one text (FastEncoder.encode) in one call of the extension's OneText (the kernel behind a C signature,
# fastsw.encoding.c_entry) when it is available; when False, through scan_utf8 and the Numba dispatcher (for
# measurements and the tests that compare both).
USE_ONE_TEXT = True
#: Texts of up to this many characters take the one-call path; longer ones go through :meth:`FastEncoder._kernel`
#: (a call on at least ``_WORKER_BYTES`` runs in a worker thread, for Ctrl-C).
ONE_TEXT_CHARS = _WORKER_BYTES // 4
#: The one-call path's whole-text cache (``fastsw.pretokenizers._pretok.TextCache``): texts held at once, and the
#: most characters of a text it keeps (the tokenizer's short texts).
TEXT_CACHE_TEXTS = 1 << 12
TEXT_CACHE_CHARS = 128
# Start missed pretokens from the character table's units (kernel module note (7)); False: from bytes only (for
# measurements and the tests that compare both).
USE_CHAR_TABLE = True


def _table_size(n: int) -> int:
    size = 8
    while size < 2 * n + 2:
        size <<= 1
    return size


class PairArrays(NamedTuple):
    """A rank table as four equal-length int64 arrays (one entry per pair), for models whose
    ``(left, right) -> (rank, new id)`` dict would be expensive to build (tiktoken's vocabularies:
    :mod:`fastsw.io.tiktoken_vocab`); :func:`pair_table` takes it in place of the dict."""

    lefts: np.ndarray
    rights: np.ndarray
    ranks: np.ndarray
    news: np.ndarray


def pair_arrays(ranks) -> PairArrays:
    """A ``(left, right) -> (rank, new id)`` dict (or a :class:`PairArrays`) as a :class:`PairArrays` of
    contiguous int64 arrays, checked to fit the kernels' 32-bit fields."""
    if isinstance(ranks, PairArrays):
        lefts, rights, rk, news = (np.ascontiguousarray(a, dtype=np.int64) for a in ranks)
    else:
        n = len(ranks)
        lefts = np.fromiter((p[0] for p in ranks), np.int64, n)
        rights = np.fromiter((p[1] for p in ranks), np.int64, n)
        rk = np.fromiter((v[0] for v in ranks.values()), np.int64, n)
        news = np.fromiter((v[1] for v in ranks.values()), np.int64, n)
    if lefts.shape[0] and (max(lefts.max(), rights.max(), news.max()) > _ID_LIMIT or rk.max() > _ID_LIMIT):
        raise ValueError("token ids and ranks must be below 2**31 for the fast path; use backend='python'")
    return PairArrays(lefts, rights, rk, news)


def ranked_by_ids(pairs: PairArrays) -> PairArrays:
    """``pairs`` with each merge's new id as its rank when that keeps their order: every rank distinct and the new
    ids increasing with it (BoundlessBPE, SuperBPE: regular and supermerge tokens take turns in the id space, so
    neither table's new ids are its ranks plus one same difference). The merge loops only compare ranks, so the
    order is all that counts, and the rank table then takes the compact layout (kernel module notes: the rank
    tables), half the memory: the lookups of the merge loops and of the supermerge runs miss the caches less.
    Pairs whose new ids already are their ranks plus one difference (plain BPE, tiktoken's vocabularies), or
    whose order the new ids do not keep, are returned as they are. The character table is built from the same
    ranks as the rank table (:class:`FastEncoder`), so its rank bounds compare like with like.

    >>> ranked_by_ids(PairArrays(*(np.array(a) for a in ([1, 2, 3], [4, 5, 6], [1, 0, 2], [9, 7, 12])))).ranks.tolist()
    [9, 7, 12]
    """
    ranks, news = pairs.ranks, pairs.news
    if ranks.shape[0] == 0 or np.all(news - ranks == news[0] - ranks[0]):
        return pairs
    order = np.argsort(ranks, kind="stable")
    if np.all(np.diff(ranks[order]) > 0) and np.all(np.diff(news[order]) > 0):
        return PairArrays(pairs.lefts, pairs.rights, news, news)
    return pairs


def pair_table(ranks, hash_direct: bool = False) -> np.ndarray:
    """The int64 rank table (see :mod:`fastsw.encoding.encode_kernels`) of a
    ``(left, right) -> (rank, new id)`` dict (or a :class:`PairArrays`). ``hash_direct``: the pairs of direct entries
    are hashed too, so that ``_pair_probe`` finds every pair (the supermerge table)."""
    pairs = pair_arrays(ranks)
    return K._build_pair_table(*pairs, _table_size(pairs.lefts.shape[0]), int(hash_direct))


def mark_eligible(table: np.ndarray, stride: int, flags: np.ndarray) -> None:
    """Set the eligible bit (``encode_kernels._ELIGIBLE_SHIFT``) in the value of every entry of the shortcut
    ``table`` (``stride`` int64 per slot: 2 for the short table, 4 for the long one) whose token's ``flags & 1``
    is set, in place. The kernel then reads a pretoken's eligibility from the entry that gives its id."""
    meta = table[1::stride]  # a view: (length << 32) | value, or -1 for an empty slot
    used = np.flatnonzero(meta != -1)
    ids = meta[used] & K._ID_MASK
    meta[used] |= (flags[ids].astype(np.int64) & 1) << K._ELIGIBLE_SHIFT


#: The kernel's character table when no character may be composed (atoms, wide alphabets).
NO_CHARS = np.full(K._CHAR_BLOCKS, -1, np.int64)


supported = fast_supported  # the old name


class EncoderTables(NamedTuple):
    """What the fast encoder reads of a model, as plain data (``Tokenizer._encoder_tables()``)."""

    token_bytes: Sequence[bytes]  # by id, special tokens excluded
    regular_ranks: Mapping[Tuple[int, int], Tuple[int, int]]  # (left, right) -> (rank, new id)
    super_ranks: Mapping[Tuple[int, int], Tuple[int, int]]
    shortcut: Mapping[bytes, int]  # whole-pretoken shortcut: bytes -> reachable token id
    eligible: AbstractSet[int]  # ids that may take part in a supermerge
    pretokenizer: BasePretokenizer
    alphabet: Alphabet  # a byte alphabet: the atomic id of every byte
    n_vocab: int  # all ids, special tokens included


class FastEncoder:
    """The numpy tables of one model (an :class:`EncoderTables`) and the batch encoder. An alphabet with
    three-byte atoms (SCRIPT v3) takes the subclass :class:`fastsw.encoding.wide_fast.WideFastEncoder`."""

    _wide = False  # True for WideFastEncoder

    def __init__(self, tables: EncoderTables):
        alphabet = tables.alphabet
        if not (supported(alphabet) or self._wide):
            raise ValueError(
                f"the fast encoder supports byte alphabets only, not {alphabet.kind!r}; use backend='python'"
            )
        self._init_shared(alphabet, tables.pretokenizer, tables.n_vocab, tables.token_bytes, tables.shortcut)
        regular = ranked_by_ids(pair_arrays(tables.regular_ranks))
        self.r_table = pair_table(regular)
        # characters a missed pretoken starts from as their token (module note (7) of the kernels); not with
        # atoms, whose codes are not UTF-8 (wide alphabets' included)
        self.chars = (
            NO_CHARS
            if self.atoms or self._wide or not USE_CHAR_TABLE
            else K._build_char_table(
                self.tb, self.tb_off, self.byte_ids, self.r_table, regular.lefts, regular.rights, regular.ranks
            )
        )
        supers = tables.super_ranks
        sup = ranked_by_ids(pair_arrays(supers))
        # every supermerge pair hashed: the runs' probes read the hash region alone (kernels: _pair_probe)
        self.s_table = pair_table(sup, hash_direct=True)
        x_lefts, x_rights = cross_pairs(supers)
        # the pair filter, then the cross filter (K._CROSS_WORDS on): one array, one kernel argument
        self.s_bits = np.concatenate((K._build_pair_bits(sup.lefts, sup.rights), K._build_pair_bits(x_lefts, x_rights)))
        self.use_super = int(bool(supers))
        # per id: 1 eligible (a run of eligible single-token pretokens may take supermerges)
        self.flags = np.zeros(max(len(tables.token_bytes), 1), np.uint8)
        self.flags[np.fromiter(tables.eligible, np.int64, len(tables.eligible))] |= 1
        if self.use_super:  # the shortcut entries carry the flag too (encode_kernels._ID_MASK)
            mark_eligible(self.sc_short, 2, self.flags)
            mark_eligible(self.sc_long, 4, self.flags)

    # -- one kernel call ---------------------------------------------------------
    def _init_shared(
        self,
        alphabet: Alphabet,
        pretokenizer,
        n_vocab: int,
        token_bytes: Sequence[bytes],
        shortcut: Mapping[bytes, int],
    ) -> None:
        """What every encoder over these kernels' byte tables holds (this class and MinGram's subclass, which has
        its own merge tables): the pre-tokenizer, the byte -> atomic id table, the token bytes (``tb``,
        ``tb_off``), the whole-pretoken shortcut tables and the id-to-``int`` caches of :meth:`to_list`."""
        self.pretokenizer = pretokenizer
        self.atoms = isinstance(alphabet, AtomAlphabet)  # pieces as token bytes, ends in bytes
        self.n_vocab = n_vocab
        self.byte_ids = np.array([alphabet.id_of_byte(b) for b in range(256)], dtype=np.int32)
        lens = np.fromiter(map(len, token_bytes), np.int64, len(token_bytes))
        self.tb_off = np.zeros(len(token_bytes) + 1, np.int64)
        np.cumsum(lens, out=self.tb_off[1:])
        self.tb = np.frombuffer(b"".join(token_bytes) or b"\0", np.uint8).copy()
        shortcut_ids = np.fromiter(shortcut.values(), np.int32, len(shortcut))
        short = lens[shortcut_ids] <= 8
        self.sc_short = K._build_short_table(self.tb, self.tb_off, shortcut_ids[short], _table_size(int(short.sum())))
        self.sc_long = K._build_long_table(self.tb, self.tb_off, shortcut_ids[~short], _table_size(int((~short).sum())))
        self._id_objects = None
        self._id_list = None
        self._kernel_tables = None

    def encode_docs(
        self, texts: Sequence[str], shortcut: bool = True, short_limit: int = SHORT_LIMIT
    ) -> Tuple[np.ndarray, np.ndarray]:
        """Encode ``texts`` (already checked to be ``str``) in one kernel call;
        returns ``(ids int32, offsets int64)``."""
        pretok = self.pretokenizer
        if self.atoms:
            got = self._token_bytes(texts)  # markers, SCRIPT v3: the pieces' bytes without their strs
            if got is not None:
                return self._kernel(got[0], got[1], got[2], shortcut, short_limit)
            return self._encode_pieces_of([pretok.pretokenize(t) for t in texts], shortcut, short_limit)
        scanner = self._slice_scanner()
        if scanner is not None:
            return self._kernel(*self._scan(scanner, texts), shortcut, short_limit)
        if USE_PRETOKEN_ENDS and pretok.uses_native:
            # the compiled scanner's end offsets: no str object per pretoken
            ends = [pretok.pretoken_ends(t) for t in texts]
            n_pieces = np.fromiter(map(len, ends), np.int64, len(ends))
            piece_ends = ends[0] if len(ends) == 1 else (np.concatenate(ends) if ends else np.zeros(0, np.int64))
        else:
            pieces = [pretok.pretokenize(t) for t in texts]
            n_pieces = np.fromiter(map(len, pieces), np.int64, len(pieces))
            cum = np.cumsum(np.fromiter(map(len, chain.from_iterable(pieces)), np.int64, int(n_pieces.sum())))
            before = np.concatenate((np.zeros(1, np.int64), cum))[np.cumsum(n_pieces) - n_pieces]
            piece_ends = cum - np.repeat(before, n_pieces)
        piece_ends = np.ascontiguousarray(piece_ends, dtype=np.int64)
        doc_pieces = np.zeros(len(texts) + 1, np.int64)
        np.cumsum(n_pieces, out=doc_pieces[1:])
        # each document's pretokens must end at its length (else the kernel would misread bytes)
        has = n_pieces > 0
        last = np.zeros(len(texts), np.int64)
        last[has] = piece_ends[doc_pieces[1:][has] - 1]
        if not np.array_equal(last, np.fromiter(map(len, texts), np.int64, len(texts))):
            raise RuntimeError(
                "the pre-tokenizer's pretokens do not concatenate back to the text; "
                "this is a bug in the pre-tokenizer (encode with backend='python')"
            )
        try:
            data = "".join(texts).encode("utf-8")
        except UnicodeEncodeError:
            for t in texts:
                check_utf8(t)
            raise
        return self._kernel(data, piece_ends, doc_pieces, shortcut, short_limit)

    def _token_bytes(self, texts: Sequence[str]):
        """The kernel's input for ``texts`` of a model with atoms from its pre-tokenizer in one call
        (``token_bytes_batch``), or None (then the pieces' route, :meth:`_pieces_bytes`)."""
        return self.pretokenizer.token_bytes_batch(texts)

    @staticmethod
    def _pieces_bytes(pieces: List[str]) -> Tuple[np.ndarray, np.ndarray]:
        """The kernel's bytes of ``pieces`` of a model with atoms (atoms as lone surrogates) and each piece's length
        in them (:func:`fastsw.alphabet.atom_bytes_packed`: no codec error handler per atom)."""
        return atom_bytes_packed(pieces)

    def _slice_scanner(self):
        """The compiled scanner whose :func:`fastsw.pretokenizers._pretok.scan_utf8` gives the kernel's input in one call (the
        default patterns with the extension built), or None (then the per-document path of :meth:`encode_docs`)."""
        if _scan_utf8 is None or not USE_SCAN_UTF8 or not USE_PRETOKEN_ENDS:
            return None
        scanner = self.__dict__.get("_scanner")
        if scanner is None:  # found once per encoder (False: none); the switches above are read per call
            pretok = self.pretokenizer
            scanner = False
            # a subclass's kernel (MinGram's) reads code-point ends; atoms are not substrings of the text
            if not self.atoms and type(self)._kernel is FastEncoder._kernel:
                found = pretok.native_scanner()
                scanner = False if found is None else found
            self._scanner = scanner
        return scanner or None

    @staticmethod
    def _scan(scanner, texts):
        """``(UTF-8 bytes, pretoken byte ends, doc_pieces)`` of ``texts`` (``scan_utf8``, GIL released); a lone
        surrogate gets :func:`fastsw.alphabet.check_utf8`'s error."""
        got = _scan_utf8(scanner, texts if isinstance(texts, list) else list(texts))
        if got is None:
            for t in texts:
                check_utf8(t)
            raise UnicodeEncodeError("utf-8", "", 0, 1, "a text is not encodable as UTF-8")
        return got

    def _kernel(self, data, piece_ends, doc_pieces, shortcut, short_limit=SHORT_LIMIT, interruptible: bool = False):
        """One call of the kernel on UTF-8 ``data`` with this model's tables. ``interruptible`` calls, and
        every call on at least ``_WORKER_BYTES`` from the main thread, go through
        :func:`fastsw._interrupt.call_kernel` (a worker thread), so Ctrl-C is a plain KeyboardInterrupt once
        the call returns (the call is bounded by its input: no stop flag to poll); a kernel run in the main
        thread could surface the signal inside a Numba callback as a chained SystemError. Small calls stay in
        the calling thread: a thread start (~50 us) would be most of their time."""
        # read-only view of the bytes (no copy); never empty, so one signature (scan_utf8's array: never empty)
        text = data if isinstance(data, np.ndarray) else np.frombuffer(data or b"\0", np.uint8)
        tables = self._kernel_tables or self._gather_tables()
        args = (text, piece_ends, doc_pieces, *tables, int(bool(shortcut)), self.use_super, int(short_limit))
        if interruptible or (len(data) >= _WORKER_BYTES and threading.current_thread() is threading.main_thread()):
            return call_kernel(K._encode_docs, *args, stop=False)
        return K._encode_docs(*args)

    def _gather_tables(self) -> tuple:
        """The model's arrays in the kernel's order, gathered once (a short text's call is a few microseconds)."""
        tables = self._kernel_tables = (
            self.byte_ids,
            self.sc_short,
            self.sc_long,
            self.tb,
            self.r_table,
            self.s_table,
            self.s_bits,
            self.flags,
            self.chars,
        )
        return tables

    def _one_text(self):
        """The extension's ``OneText`` for this model (one compiled call per text: scan, kernel, list of ids), or
        False: no compiled scanner for the pattern, another kernel (MinGram's, wide alphabets), no extension, the
        kernels run as plain Python, or the kernel's C entry (:mod:`fastsw.encoding.c_entry`) not yet in Numba's
        on-disk cache (a fresh install: the background compilation puts it there, and a later process takes it;
        compiling it here would pause this call for seconds). Found once per encoder."""
        one = False
        scanner = self._slice_scanner()
        if scanner and _OneText is not None and not self._wide and type(self)._kernel is FastEncoder._kernel:
            from fastsw.encoding import c_entry

            address = c_entry.address()
            if address is not None:
                self.to_list(np.zeros(0, np.int32))  # the shared ints
                cache = _TextCache(TEXT_CACHE_TEXTS, TEXT_CACHE_CHARS)
                one = _OneText(
                    scanner, address, self._gather_tables(), self._id_list, self.use_super, SHORT_LIMIT, cache
                )
        self._one = one
        return one

    def _kernel_direct(self, data: np.ndarray, piece_ends: np.ndarray, doc_pieces: np.ndarray, shortcut) -> np.ndarray:
        """:meth:`_kernel`'s ids for the arrays of :func:`fastsw._pretok.scan_utf8` (always the same types), called
        through the kernel's compiled entry point once the dispatcher has compiled or loaded it: the dispatcher's
        type check of fifteen arguments (a read-only array takes its slow path) is most of a short text's call."""
        entry = self.__dict__.get("_entry")
        tables = self._kernel_tables
        if entry is None or tables is None or data.shape[0] >= _WORKER_BYTES:
            ids = self._kernel(data, piece_ends, doc_pieces, shortcut)[0]
            if entry is None and self._kernel_tables is not None:
                self._entry = _entry_point(
                    K._encode_docs, (data, piece_ends, doc_pieces, *self._kernel_tables, 1, self.use_super, SHORT_LIMIT)
                )
            return ids
        if entry is False:
            return self._kernel(data, piece_ends, doc_pieces, shortcut)[0]
        return entry(data, piece_ends, doc_pieces, *tables, int(bool(shortcut)), self.use_super, SHORT_LIMIT)[0]

    def encode_pieces(
        self, pieces: Sequence[str], shortcut: bool = False, interruptible: bool = False
    ) -> Tuple[np.ndarray, np.ndarray]:
        """Each of ``pieces`` (checked ``str``) taken as one whole pretoken, without
        running the pre-tokenizer: ``(ids int32, offsets int64)`` as in
        :meth:`encode_docs`. For callers that already know each piece is one
        pretoken (the tokenizer's reachability check, with ``interruptible=True`` since
        training runs it)."""
        n = len(pieces)
        if self.atoms:
            return self._encode_pieces_of([[p] for p in pieces], shortcut, interruptible=interruptible)
        piece_ends = np.fromiter(map(len, pieces), np.int64, n)
        doc_pieces = np.arange(n + 1, dtype=np.int64)
        return self._kernel(
            "".join(pieces).encode("utf-8"), piece_ends, doc_pieces, shortcut, interruptible=interruptible
        )

    def _encode_pieces_of(
        self, docs: Sequence[Sequence[str]], shortcut: bool, short_limit: int = SHORT_LIMIT, interruptible: bool = False
    ) -> Tuple[np.ndarray, np.ndarray]:
        """One kernel call over documents given as their pieces (atoms as lone surrogates): the data is the
        pieces' token bytes and each piece's end is given in bytes from its document's start."""
        n_pieces = np.fromiter(map(len, docs), np.int64, len(docs))
        data, lengths = self._pieces_bytes(list(chain.from_iterable(docs)))
        cum = np.cumsum(lengths)
        before = np.concatenate((np.zeros(1, np.int64), cum))[np.cumsum(n_pieces) - n_pieces]
        piece_ends = np.ascontiguousarray(cum - np.repeat(before, n_pieces), dtype=np.int64)
        doc_pieces = np.zeros(len(docs) + 1, np.int64)
        np.cumsum(n_pieces, out=doc_pieces[1:])
        return self._kernel(data.tobytes(), piece_ends, doc_pieces, shortcut, short_limit, interruptible=interruptible)

    def encode(self, text: str, shortcut: bool = True) -> List[int]:
        """One document (a checked ``str``) as a list of ids: :meth:`encode_docs`
        without its per-batch bookkeeping, which dominates on short texts."""
        one = self.__dict__.get("_one")
        if one is None:
            one = self._one_text()
        if one and len(text) <= ONE_TEXT_CHARS and USE_ONE_TEXT and USE_SCAN_UTF8 and USE_PRETOKEN_ENDS:
            ids = one.encode(text, shortcut)
            if ids is None:  # a lone surrogate: _scan reports it
                self._scan(self._slice_scanner(), [text])
            return ids
        scanner = self.__dict__.get("_scanner")
        if scanner is None:
            scanner = self._slice_scanner()
        if scanner and USE_SCAN_UTF8 and USE_PRETOKEN_ENDS:  # (the switches are read per call)
            got = _scan_utf8(scanner, [text])
            if got is None:  # a lone surrogate: _scan reports it
                self._scan(scanner, [text])
            ids = self._kernel_direct(got[0], got[1], got[2], shortcut)
            objects = self._id_list
            if objects is not None:  # the kernel's ids are contiguous int32: to_list's conversion is not needed
                return _ids_to_list(ids, objects)
            return self.to_list(ids)
        pretok = self.pretokenizer
        # markers, SCRIPT v3: the pieces' token bytes in one call, the kernel's entry point (this class's kernel;
        # MinGram's takes the batch path below)
        if self.atoms and type(self)._kernel is FastEncoder._kernel:
            got = self._token_bytes([text])
            if got is not None:
                data = got[0] if isinstance(got[0], np.ndarray) else np.frombuffer(got[0] or b"\0", np.uint8)
                return self.to_list(self._kernel_direct(data, got[1], got[2], shortcut))
        if not (USE_PRETOKEN_ENDS and pretok.uses_native):
            return self.to_list(self.encode_docs([text], shortcut)[0])
        ends = pretok.pretoken_ends(text)
        n = ends.shape[0]
        if (ends[n - 1] if n else 0) != len(text):
            raise RuntimeError(
                "the pre-tokenizer's pretokens do not concatenate back to the text; "
                "this is a bug in the pre-tokenizer (encode with backend='python')"
            )
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            check_utf8(text)
            raise
        ids, _ = self._kernel(data, np.ascontiguousarray(ends, dtype=np.int64), np.array((0, n), np.int64), shortcut)
        return self.to_list(ids)

    def to_list(self, ids: np.ndarray) -> List[int]:
        """``ids.tolist()`` for token ids of this model (special tokens included), faster: the Python ``int``
        of every id is made once (an object array) and shared, so a call copies
        references instead of allocating (and later freeing) one ``int`` per token."""
        if _ids_to_list is not None:
            objects = self._id_list
            if objects is None:
                objects = self._id_list = list(range(max(self.n_vocab, 1)))
            # the compiled loop: one reference copy per token (its reference is ids.tolist())
            return _ids_to_list(np.ascontiguousarray(ids, dtype=np.int32), objects)
        objects = self._id_objects
        if objects is None:
            objects = self._id_objects = np.array(range(max(self.n_vocab, 1)), dtype=object)
        return objects.take(ids).tolist()

    def lists_of(self, ids: np.ndarray, offsets: np.ndarray) -> List[List[int]]:
        """Document d's ids ``ids[offsets[d]:offsets[d + 1]]`` as a list of Python ints, for every document:
        one compiled pass (``fastsw.pretokenizers._pretok.ids_to_lists``) over the shared ints of :meth:`to_list`."""
        if _ids_to_lists is not None:
            if self._id_list is None:
                self.to_list(ids[:0])
            return _ids_to_lists(
                np.ascontiguousarray(ids, dtype=np.int32), np.ascontiguousarray(offsets, dtype=np.int64), self._id_list
            )
        flat = self.to_list(ids)
        bounds = offsets.tolist()
        return [flat[a:b] for a, b in zip(bounds, bounds[1:])]

    # -- batches -----------------------------------------------------------------
    def _run_slices(self, texts: Sequence[str], num_threads, work, finish=None) -> list:
        """``work(a, b)`` on consecutive slices ``texts[a:b]`` of about ``_SLICE_BYTES`` characters (at least one
        per thread when the batch is small) on ``num_threads`` threads (None: all cores; the caller has checked
        it); the results in order, each passed through ``finish`` (if given) in the calling thread as soon as it
        is ready, while the workers go on with the next slices."""
        for t in texts:
            if not isinstance(t, str):
                raise TypeError(f"encode expects str, got {type(t).__name__}")
        threads = num_threads or os.cpu_count() or 1
        total = sum(map(len, texts))
        slices = _slices(texts, max(min(_SLICE_BYTES, -(-total // threads)), _MIN_SLICE))
        finish = finish or (lambda part: part)
        if threads == 1 or len(slices) <= 1:
            return [finish(work(a, b)) for a, b in slices]
        with ThreadPoolExecutor(max_workers=min(threads, len(slices))) as pool:
            return [finish(part) for part in pool.map(lambda ab: work(*ab), slices)]

    def encode_to_numpy(
        self, texts: Sequence[str], num_threads=None, shortcut: bool = True
    ) -> Tuple[np.ndarray, np.ndarray]:
        """All ``texts`` as ``(ids int32, offsets int64)`` using ``num_threads``
        threads (None: all cores; the caller has checked it, see ``Tokenizer.encode_batch_to_numpy``)."""
        texts = list(texts)
        parts = self._run_slices(texts, num_threads, lambda a, b: self.encode_docs(texts[a:b], shortcut))
        return _concat(parts, len(texts))

    def encode_lists(self, texts: Sequence[str], num_threads=None, shortcut: bool = True) -> List[List[int]]:
        """All ``texts`` as lists of ids (``encode_ordinary_batch``), threads as in :meth:`encode_to_numpy`. The
        calling thread builds each slice's lists (:meth:`lists_of`; that needs the GIL) as soon as the slice is
        encoded, while the workers scan and merge the next slices without the GIL."""
        texts = list(texts)
        parts = self._run_slices(
            texts, num_threads, lambda a, b: self.encode_docs(texts[a:b], shortcut), lambda part: self.lists_of(*part)
        )
        return parts[0] if len(parts) == 1 else list(chain.from_iterable(parts))


def _entry_point(kernel, args):
    """The compiled entry point of Numba ``kernel`` for the types of ``args`` (it takes the same arguments and skips
    the dispatcher's type resolution; the caller passes arguments of exactly these types), or ``False`` when the
    kernel is not compiled for them or Numba keeps its overloads otherwise (then the caller calls ``kernel``)."""
    try:
        from numba import typeof

        return kernel.overloads[tuple(typeof(a) for a in args)].entry_point
    except Exception:  # noqa: BLE001 - NUMBA_DISABLE_JIT, another Numba: the dispatcher serves every call
        return False


def cross_pairs(supers: Mapping[Tuple[int, int], Tuple[int, int]]) -> Tuple[np.ndarray, np.ndarray]:
    """The pairs ``(a, b)`` of ids that a supermerge may ever join across, as int64 ``(lefts, rights)``: for
    every supermerge ``(l, r)``, each id ``a`` that can end ``l`` and each ``b`` that can begin ``r``. A token
    ends with itself and, when a supermerge ``(x, y)`` makes it, with whatever can end ``y`` (begins: ``x``).
    So when two adjacent tokens of a run are not such a pair, no merge of the run ever joins the tokens left of
    that boundary to those right of it (every merge joins two adjacent tokens, and the tokens' ends stay at the
    boundary), and the two sides merge independently: the kernel cuts its supermerge runs there (see
    :mod:`fastsw.encoding.encode_kernels`). Computed to a fixpoint, so the order of the merges does not matter.

    >>> [a.tolist() for a in cross_pairs({(5, 6): (0, 9), (9, 7): (1, 10)})]
    [[5, 6, 9], [6, 7, 7]]
    """
    ends: Dict[int, Set[int]] = {}  # id -> the ids that can end it (itself left out)
    begins: Dict[int, Set[int]] = {}  # id -> the ids that can begin it
    changed = True
    while changed:
        changed = False
        for (left, right), (_, new) in supers.items():
            for table, part in ((ends, right), (begins, left)):
                got = table.setdefault(new, set())
                more = {part} | table.get(part, set())
                if not more <= got:
                    got |= more
                    changed = True
    found = set()
    for left, right in supers:
        for a in ends.get(left, set()) | {left}:
            for b in begins.get(right, set()) | {right}:
                found.add((a, b))
    pairs = sorted(found)
    return (
        np.fromiter((p[0] for p in pairs), np.int64, len(pairs)),
        np.fromiter((p[1] for p in pairs), np.int64, len(pairs)),
    )


def pieces_reference(pretokenizer: Pretokenizer, texts: Sequence[str]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The plain-Python twin of :func:`fastsw.pretokenizers._pretok.scan_utf8` (the kernel's input for a slice of documents):
    ``(UTF-8 bytes uint8, each pretoken's end in bytes from its document's start int64, doc_pieces int64)`` from
    :meth:`Pretokenizer.pretokenize_reference` (``regex``) and ``str.encode``. Tests assert equal arrays."""
    ends: List[int] = []
    doc_pieces = [0]
    for t in texts:
        pos = 0
        for piece in pretokenizer.pretokenize_reference(t):
            pos += len(piece.encode("utf-8"))
            ends.append(pos)
        doc_pieces.append(len(ends))
    data = "".join(texts).encode("utf-8")
    return (np.frombuffer(data or b"\0", np.uint8), np.array(ends, np.int64), np.array(doc_pieces, np.int64))


def _slices(texts: Sequence[str], target: int):
    """Consecutive ``(start, end)`` ranges of about ``target`` characters each."""
    out = []
    start, size = 0, 0
    for i, t in enumerate(texts):
        size += len(t)
        if size >= target:
            out.append((start, i + 1))
            start, size = i + 1, 0
    if start < len(texts) or not out:
        out.append((start, len(texts)))
    return out


def _concat(parts, n_docs: int) -> Tuple[np.ndarray, np.ndarray]:
    ids = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int32)
    offsets = np.zeros(n_docs + 1, np.int64)
    d, base = 0, 0
    for part_ids, part_off in parts:
        k = part_off.shape[0] - 1
        offsets[d + 1 : d + k + 1] = part_off[1:] + base
        d += k
        base += part_ids.shape[0]
    return np.ascontiguousarray(ids, dtype=np.int32), offsets


def encoder_for(tok) -> FastEncoder:
    """The tokenizer's :class:`FastEncoder` (built on first use; the old name of ``tok._fast()``)."""
    return tok._fast()


#: The kernels a :class:`FastEncoder` runs: its tables' builders and the encoder (one signature each).
KERNELS = (
    K._encode_docs,
    K._build_pair_table,
    K._build_short_table,
    K._build_long_table,
    K._build_pair_bits,
    K._build_char_table,
)

_on_disk: Optional[bool] = None  # whether Numba's on-disk cache holds every kernel (looked up once)


#: Characters of text (a call's total) that the plain-Python twin encodes while the kernels compile in the
#: background (about a second of its work); a larger call waits for the compilation (Tokenizer._kernels_for).
TWIN_WORK = 1 << 18
_background = None  # the process compiling the kernels into Numba's on-disk cache (compile_in_background)


def compile_in_background():
    """Start, once per process, a process that compiles the encoding kernels into Numba's on-disk cache
    (:func:`warmup`, through :func:`fastsw._compiling.start`), and return it (a ``subprocess.Popen``).
    While it runs, the tokenizer's twin serves calls of up to ``TWIN_WORK`` characters; when it ends,
    :func:`kernels_ready` finds the kernels on disk and loading them takes a fraction of a second."""
    global _background
    if _background is None:
        from fastsw import _compiling

        _background = _compiling.start(f"{__name__}:warmup")
    return _background


def kernels_ready() -> bool:
    """Whether the encoding kernels run without compiling first: compiled in this process, or in Numba's
    on-disk cache. The first run after installing compiles them (many seconds, see "Cold start" in
    docs/internals.md; a later run loads them in a fraction of a second), so work that the plain-Python twin
    does in far less time (a model's reachability check, a short text) takes the twin while this is
    ``False``; the first longer text compiles the kernels.

    >>> isinstance(kernels_ready(), bool)
    True
    """
    global _on_disk
    if not all(hasattr(k, "signatures") for k in KERNELS):
        return True  # NUMBA_DISABLE_JIT=1: plain Python functions, nothing compiles
    if all(k.signatures for k in KERNELS):
        return True
    if not _on_disk and _background is not None and _background.poll() is not None:
        _on_disk = None  # the background compilation has ended: look again
    if _on_disk is None:
        from fastsw._compiling import in_disk_cache

        _on_disk = all(in_disk_cache(k) for k in KERNELS)
    return _on_disk


def warmup() -> None:
    """Compile (or load from Numba's on-disk cache) the encoding kernels, one signature each."""
    # a + a -> 243, aa + a -> 244 (regular); aaa + aaa -> 245 (super); aa and aaa reachable and eligible
    alphabet = ByteAlphabet("bytes243")
    tables = EncoderTables(
        list(alphabet.tokens) + [b"aa", b"aaa", b"aaaaaa"],
        {(97, 97): (0, 243), (243, 97): (1, 244)},
        {(244, 244): (0, 245)},
        {b"aa": 243, b"aaa": 244},
        frozenset((243, 244)),
        Pretokenizer(),
        alphabet,
        246,
    )
    FastEncoder(tables).encode_docs(["aaa aaa", ""])
    from fastsw.encoding import c_entry

    c_entry.address(compile=True)  # the kernel's C entry for one text (FastEncoder._one_text)
