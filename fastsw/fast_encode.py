"""The fast encoding path: the driver around :func:`fastsw._encode_kernels._encode_docs`.

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

Design notes
------------
* No pretoken cache that outlives a kernel call (the reference keeps a ``dict``):
  the shortcut is a hash lookup plus a byte compare inside the kernel, and a
  pretoken that misses it is merged once per kernel call (a per-call miss cache,
  see :mod:`fastsw._encode_kernels`). Nothing mutable is shared, so threads can run
  the kernel concurrently on one tokenizer, and timing the same long text twice
  measures the same work twice. Short texts (``tokenizer.SMALL_TEXT``) are the
  exception: a kernel call's set-up (~8 us: unboxing its array arguments, the
  pre-tokenizer's offsets array) costs more than a 30-character sentence encoded
  from the tokenizer's per-pretoken cache (~2 us), so ``Tokenizer.encode*`` use
  that cache and call :meth:`FastEncoder.encode_pieces` once for its misses.
* Batches: :meth:`FastEncoder.encode_to_numpy` and :meth:`FastEncoder.encode_lists`
  (``encode_ordinary_batch``, ``encode_batch``) cut the documents into slices of
  about ``_SLICE_BYTES`` characters (at least one per thread) and encode each
  slice in a thread pool: ``scan_utf8`` (pre-tokenization, UTF-8 and the pretokens'
  byte ends in one Cython call that releases the GIL), one kernel call (``nogil=True``)
  and, for lists, the slice's lists of ints (:meth:`lists_of`, one compiled pass; it
  needs the GIL, so the calling thread builds them, slice by slice as each is ready,
  while the workers go on without the GIL; built inside the workers, they measured
  10-20 % slower on small sets under load: more GIL hand-offs). Before
  (issue #15), each slice held the GIL for a ``pretoken_ends`` call per document (a
  malloc and a copy into a new numpy array), the slice's ``"".join(...).encode()``
  and numpy bookkeeping, and the lists were built after all threads had finished
  (one flat list, then one slice per document, in the calling thread): 2 MB of
  English with o200k_base, quiet machine, 2 threads: 48 MB/s for
  ``encode_ordinary_batch`` against 61 MB/s for ``encode_to_numpy`` and 30 MB/s on one
  thread; the kernel alone, two threads on halves of the documents, scaled 1.51 x
  (hashing, as a control, 1.97 x). After (``bench/bench_encode_batch.py``, 4 MB, load ~2.5):
  ``encode_ordinary_batch`` 2.86 x tiktoken's batch encoder (the former path 2.36 x,
  ``encode_to_numpy`` 3.30 x), 1.97 x fastsw's own one-thread speed; Thai held-out 2.55 x
  (former 2.07 x); under load 6.7, with no idle core, 2.42 x against 2.46 x.
  Threads are enough and no process pool is used.
* Input per slice (``fastsw._pretok.scan_utf8``, its plain twin :func:`pieces_reference`):
  the kernel takes pretoken ends in bytes when they add up to the data's length, so the
  scanner writes byte ends directly and the kernel's code point -> byte walk over the UTF-8
  lead bytes is not needed. The conversion is fused with the UTF-8 encoding: a document with
  at most one non-ASCII code point in eight is copied eight bytes (1-byte ``str`` kind) or
  four code points (2-byte kind) at a time and its ends are moved by the extra bytes of the
  few non-ASCII code points before them; other documents are converted code point by
  code point. Measured (CPU time, busy machine): 0.97 M code points of English with curly
  quotes, scan alone 4.2 ms, scan + conversion 7.0 ms code point by code point, 5.3 ms
  sparse; the former path was ``pretoken_ends`` 4.2 ms + ``str.encode`` 0.7 ms + the
  kernel's walk. A call's fixed cost is 2.6 us (``pretoken_ends``: 0.9 us, but the driver then
  built two more arrays and encoded the text): a fresh ``bytes`` and one ``bytearray``
  as buffers, no typed memoryviews (3.6 us with them).
* Output: :meth:`FastEncoder.to_list` turns the kernel's int32 ids into a list
  of Python ints by copying references from a list of the vocabulary's ints
  (built once) in a compiled loop (``fastsw._pretok.ids_to_list``; its reference
  is ``ndarray.tolist``): no new ``int`` per token. Measured on 119,376 ids (Thai
  held-out, English model): 0.50 ms, against 1.33 ms for the former object-array
  ``take(ids).tolist()`` and 0.71 ms for ``ids.tolist()``; where tokens are nearly
  bytes the list was a quarter of a one-thread encode. Without the extension the
  object-array path is used.
* Where the time goes now, o200k_base, 2 MB of English (254 documents), one thread, CPU
  time on the busy shared machine (ms): ``scan_utf8`` 9, kernel 36 (the whole-pretoken hits,
  92.6 % of the 401,022 pretokens, 12; the 7.4 % that miss, 12.7 % of the bytes, 22: the
  merge loops, :mod:`fastsw._encode_kernels`), ``to_list`` 2, per-call Python ~3; tiktoken
  ~120. Held-out text per language (ms, total / scan / kernel / of which misses-only):
  en 5.6 / 1.3 / 2.7 / 1.5, th 10.2 / 0.8 / 10.3 / 10.2, zh 7.1 / 0.3 / 6.2 / 5.2,
  ko 3.2 / 0.2 / 2.6 / 2.4: outside English the pretokens that miss the shortcut (82-91 %
  of the bytes of th, zh, ko) are nearly all the time.
* Per call (``encode_ordinary`` on a 240-character English sentence, o200k_base): ~10 us, of
  which ``scan_utf8`` 2.4, the kernel call 4.7 (Numba's dispatch of 14 array arguments is
  about half; 15 arguments, 12 of them arrays, since the character table), ``to_list`` 0.6, backend resolution 1.2 (it reads ``FASTSW_PUREPYTHON`` each
  call); the kernel's model arrays are gathered into one tuple once per encoder. Backend
  resolution is now ~0.1 us (:func:`fastsw._config.pure_python` answers "not set" from
  ``os.environ``'s dict: ``os.environ.get`` of an unset name raised and caught a ``KeyError``),
  and :meth:`encode` hands the kernel's ids to ``ids_to_list`` without ``to_list``'s
  conversion (0.3 us). Packing the model arrays (8 then, 9 with the character table) into one argument would save ~0.5 us of
  dispatch per call (measured on a 14- against a 5-argument function), 0.2 % of 10 MB of
  English document by document: not done (every kernel edit would conflict with it).
* Issue #15, second pass: o200k_base one thread on English, document by document (the
  benchmark's ``encode_ordinary`` loop). A/B of the code before and after, each in its own
  process, thread CPU time, best of 3 passes alternating with tiktoken's in the same process,
  10 MB (1,304 documents), shared machine under load 1.5-4, three rounds: fastsw 33.3-34.9 ->
  35.7-41.0 MB/s, fastsw / tiktoken 1.88-1.97 -> 2.07-2.22; cl100k_base 2.70 / 2.82 ->
  3.14 / 2.97; batch (2 threads, wall time) 2.70 -> 2.98 x tiktoken's batch encoder.
  ``bench_tiktoken.py`` (load 2.5-3.7): o200k_base 2.25 x single (44.1 against 19.6 MB/s),
  3.33 x batch; cl100k_base 3.14 x and 5.12 x.
  Where the time went (2 MB, 254 documents, CPU ms): kernel 38.8 = the pretokens that hit the
  shortcut 12.1 (330,269 of <= 8 bytes at ~24 ns, 41,043 longer at ~100 ns) + the 7.4 % that
  miss 22.4 (merge loops, of which 19,814 merged and 9,897 copied from the miss cache: it
  catches all but ~1 % of the repeats within a document) + set-up ~3 us per call; ``scan_utf8``
  10.8 (the o200k matcher ~70 %, the UTF-8 size pass and the ends' conversion the rest);
  ``to_list`` ~3; Python per call ~7 us per document. The "~1 ms not accounted for" on the
  24 held-out documents (4.53 ms against scan 0.99 + kernel 2.38 + to_list 0.17) is the
  measurement: each part timed alone over all documents keeps its own tables in cache;
  interleaved per document, as ``encode_ordinary`` runs them, scan 1.04 + kernel 2.65 +
  to_list 0.37 = 4.06 ms against 4.07 ms for the three calls inline and 4.24 ms for
  ``encode_ordinary`` (the rest, ~7 us per call, is the Python above). Changes: (1) the hit
  path of a model without supermerges no longer loads each single-id pretoken's eligibility
  flags (runs do nothing there): the hits 12.1 -> 10.5 ms, the kernel 38.8 -> 35.2 ms;
  (2) the scanner takes runs of ``a``-``z`` eight code units per step
  (``fastsw._pretok._lower_run``): ``scan_utf8`` 10.8 -> 9.7 ms; (3) the per-call Python
  above. Tried and dropped (same harness): all shortcut lookups of a call in a first pass,
  so their loads overlap (no gain: 10.2 against 9.2 ms on the hits); the token bytes of
  9-16 byte tokens inside the long table's slot instead of a compare against ``tb``
  (slower, 108 against 90 ns: the slot's own cache miss is the cost); in ``_lower_run``,
  ending the run at an ASCII stop from the word itself instead of the class table (no gain).
  A pretoken cache kept across calls would remove most of the 22 ms of misses (most missed
  words repeat across documents) but is ruled out above (no mutable state across calls).
* Scratch: the kernel allocates its merge scratch per call, sized by the call's
  longest pretoken (the tournament tree: 2 P int64, P the power of two above it);
  nothing is kept between calls.
* Where the time goes, per language (issue #14; ``bench/bench_languages.py`` and the
  ablation below). Held-out text, own-language plain BPE 32768 (``simple``), one
  thread, CPU time of the thread in ms, best of 9 interleaved rounds; "merge" is the
  merge loops alone over the pretokens that miss the whole-pretoken shortcut (same
  kernel code, no shortcut or cache), "kernel" the whole kernel call per document:

  ====== ====== ======== ====== ======= ====== ======= ========= ===============
  text   KB     tiktoken fastsw pretok  kernel merge   to_list   bytes missing
  ====== ====== ======== ====== ======= ====== ======= ========= ===============
  en     201    12.47    8.12   0.87    5.01   1.54    1.13      18 %
  zh     71     7.94     7.36   0.21    5.16   3.82    0.65      86 %
  ja     108    10.96    8.59   0.26    6.39   4.72    0.57      74 %
  th     126    13.56    10.91  0.53    9.49   5.66    1.08      78 %
  ko     52     3.33     3.79   0.15    2.21   1.26    0.42      52 %
  th/en  126    5.95     7.26   0.54    4.41   1.62    1.90      96 %
  ====== ====== ======== ====== ======= ====== ======= ========= ===============

  (th/en: Thai text, English model, 0.94 tokens per byte.) Where pretokens are
  long and miss the vocabulary (zh, ja, th), merging is half the time or more: a
  3-byte character costs two merges before any merge across characters, about 0.8
  merges per byte, each two rank-table probes and three tournament-tree leaf
  updates (~50-60 ns per byte on the shared core). The shortcut lookups, the miss
  cache and the per-call set-up are most of the rest of the kernel (~20 %); the
  pre-tokenizer is 2-10 %; the list of Python ints 8-26 % (26 % where tokens are
  nearly bytes). The long-piece loop was the largest cost before the tournament
  tree replaced the rank buckets (ja: 14.7 of 16.1 ms of kernel time were the
  pieces over 24 bytes, ~200 ns per byte; now 2-4 x less, see
  :mod:`fastsw._encode_kernels`).
* Tried and dropped (measured, same harness): a flat array of pair keys with a
  vectorised minimum per merge (AVX-512; 15-25 % slower than the tree from 25
  bytes up); a 4096-entry direct-mapped pair cache in front of the rank table
  (2 x slower: the table's probes are not the bottleneck, instructions are);
  composing each character into its own token before merging *only for characters no
  token crosses partially* (byte-level BPE learns such tokens early: Russian ``" \xd0"``
  is merge 0, Japanese ``"の" + b"\xe5"`` merge 44, Thai has 805, so only 47 % of Chinese
  and ~0 % of Japanese and Thai characters qualified). What replaced it (issue #14, this
  stop): a crossing token matters only if it ranks before the character is finished, per
  side and kind of neighbouring byte, and a space plus a character is a unit of its own --
  the kernels' module note (7), with its proof, coverage and gains (Chinese 1.63 x).
  For callers that can take arrays, ``encode_to_numpy`` skips the list of ints.
* Tried and dropped, the per-token (backtracking) encoder of GitHub's ``bpe`` crate, written in Numba
  over these tables (branch ``backtrack``, commit 271d646; issue #14's suggested anchor): exact (ids
  equal to the merge loops on all 12 languages, own/English/o200k/cl100k models, superword, conflict
  and marker models, Hypothesis and worst cases; models whose tokens are not formed after their
  parts are detected and keep the merge loops), but slower. Speed with the walk for misses over 16
  bytes / speed with the merge loops, whole held-out documents, one thread: own models 0.79-1.08,
  English model 0.46-1.02 (0.46-0.64 on zh/ja/th/my, where pieces become near-byte tokens), o200k_base
  0.70-0.93; per piece length from 5 bytes up and on every worst case but ``"ab" * 500000`` with
  o200k_base. It does fewer steps (per output token 1.1-1.9 longest-match candidates, 0.04-0.31
  pops, 3-5 pair probes, against 3-8 merges), but each step is a chain of dependent L2/L3 accesses
  (prefix hash, token row, spine, pair probe; ns per byte of misses: walk 22-27, pair checks 12-23,
  whole 54-68, merge loops 50-65), while a piece's merge-loop probes are independent and overlap
  and start in the 512 kB direct region. A pair table of canonical splits only (8.9 MB instead of
  17.3 MB for o200k) gained 5-7 %. rs-bpe and bpe-openai run the same method at ~20 MB/s on o200k
  zh/ja/th (fastsw's merge loops 12-15 MB/s), so the method can win with a more compact automaton
  (a double array) and fewer dependent loads; that is what is left to try.
* Byte alphabets (``bytes243``, ``bytes256``) and byte alphabets plus one-byte atoms (the boundary
  markers and caps codes, :class:`fastsw.alphabet.AtomAlphabet` with ``short_only``) have a fast path;
  other alphabets encode with the reference path (``backend="auto"``) or raise (``backend="numba"``).
  With atoms the pieces are not substrings of the text, so the driver passes the kernel the pieces'
  token bytes (:func:`fastsw.alphabet.atom_bytes`) and their ends *in bytes*: the kernel takes ends that
  add up to the data's length as byte offsets, and maps each atom's one-byte code through ``byte_ids``
  like any byte. The kernel is unchanged.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from itertools import chain
from typing import AbstractSet, List, Mapping, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from . import _encode_kernels as K
from ._interrupt import call_kernel
from .alphabet import Alphabet, AtomAlphabet, ByteAlphabet, atom_bytes_packed, check_utf8
from .pretokenize import Pretokenizer

try:  # the compiled id -> int list loop (FastEncoder.to_list); absent in a pure-Python install
    from ._pretok import ids_to_list as _ids_to_list
except ImportError:
    _ids_to_list = None
try:  # a batch's lists in one pass, and the scanner's one-call input (pretoken byte ends + UTF-8) per slice
    from ._pretok import cached_ids as _cached_ids, ids_to_lists as _ids_to_lists, scan_utf8 as _scan_utf8
except ImportError:
    _cached_ids = _ids_to_lists = _scan_utf8 = None

SHORT_LIMIT = 16          # sequences up to this length use the scan loop, longer ones the tournament tree
#: Kernel calls on at least this many UTF-8 bytes from the main thread run in a worker thread (Ctrl-C).
_WORKER_BYTES = 1 << 20
_SLICE_BYTES = 1 << 18    # documents per thread-pool task: about this many characters
_MIN_SLICE = 1 << 13
_ID_LIMIT = (1 << 31) - 1
# Use Pretokenizer.pretoken_ends (the compiled scanner's offsets) when it is available;
# otherwise (or when False) the lengths of Pretokenizer.pretokenize's strings.
USE_PRETOKEN_ENDS = True
# Use fastsw._pretok.scan_utf8 (pretoken byte ends and the UTF-8 of a slice in one GIL-free call) when it is
# available; when False, the per-document path above (for measurements and its twin test).
USE_SCAN_UTF8 = True
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
    :mod:`fastsw.tiktoken_vocab`); :func:`pair_table` takes it in place of the dict."""
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


def pair_table(ranks) -> np.ndarray:
    """The int64 rank table (see :mod:`fastsw._encode_kernels`) of a
    ``(left, right) -> (rank, new id)`` dict (or a :class:`PairArrays`)."""
    pairs = pair_arrays(ranks)
    return K._build_pair_table(*pairs, _table_size(pairs.lefts.shape[0]))


#: The kernel's character table when no character may be composed (atoms, wide alphabets).
NO_CHARS = np.full(K._CHAR_BLOCKS, -1, np.int64)


def supported(alphabet: Alphabet) -> bool:
    """Whether a model with ``alphabet`` has a fast encoding path (byte alphabets only)."""
    return isinstance(alphabet, ByteAlphabet) or (isinstance(alphabet, AtomAlphabet) and alphabet.short_only)


class EncoderTables(NamedTuple):
    """What the fast encoder reads of a model, as plain data (``Tokenizer._encoder_tables()``)."""
    token_bytes: Sequence[bytes]                    # by id, special tokens excluded
    regular_ranks: Mapping[Tuple[int, int], Tuple[int, int]]   # (left, right) -> (rank, new id)
    super_ranks: Mapping[Tuple[int, int], Tuple[int, int]]
    shortcut: Mapping[bytes, int]                   # whole-pretoken shortcut: bytes -> reachable token id
    eligible: AbstractSet[int]                      # ids that may take part in a supermerge
    pretokenizer: Pretokenizer
    alphabet: Alphabet                              # a byte alphabet: the atomic id of every byte
    n_vocab: int                                    # all ids, special tokens included


class FastEncoder:
    """The numpy tables of one model (an :class:`EncoderTables`) and the batch encoder. An alphabet with
    three-byte atoms (SCRIPT v3) takes the subclass :class:`fastsw.wide_encode.WideFastEncoder`."""

    _wide = False  # True for WideFastEncoder

    def __init__(self, tables: EncoderTables):
        alphabet = tables.alphabet
        if not (supported(alphabet) or self._wide):
            raise ValueError(f"the fast encoder supports byte alphabets only, not {alphabet.kind!r}; "
                             "use backend='python'")
        self._init_shared(alphabet, tables.pretokenizer, tables.n_vocab, tables.token_bytes, tables.shortcut)
        regular = pair_arrays(tables.regular_ranks)
        self.r_table = pair_table(regular)
        # characters a missed pretoken starts from as their token (module note (7) of the kernels); not with
        # atoms, whose one-byte codes are not UTF-8, nor wide alphabets' per-call codes
        self.chars = (NO_CHARS if self.atoms or self._wide or not USE_CHAR_TABLE else
                      K._build_char_table(self.tb, self.tb_off, self.byte_ids, self.r_table, regular.lefts,
                                          regular.rights, regular.ranks))
        supers = tables.super_ranks
        sup = pair_arrays(supers)
        self.s_table = pair_table(sup)
        x_lefts, x_rights = cross_pairs(supers)
        # the pair filter, then the cross filter (K._CROSS_WORDS on): one array, one kernel argument
        self.s_bits = np.concatenate((K._build_pair_bits(sup.lefts, sup.rights),
                                      K._build_pair_bits(x_lefts, x_rights)))
        self.use_super = int(bool(supers))
        # per id: 1 eligible (a run of eligible single-token pretokens may take supermerges)
        self.flags = np.zeros(max(len(tables.token_bytes), 1), np.uint8)
        self.flags[np.fromiter(tables.eligible, np.int64, len(tables.eligible))] |= 1

    # -- one kernel call ---------------------------------------------------------
    def _init_shared(self, alphabet: Alphabet, pretokenizer, n_vocab: int, token_bytes: Sequence[bytes],
                     shortcut: Mapping[bytes, int]) -> None:
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
        self.sc_short = K._build_short_table(self.tb, self.tb_off, shortcut_ids[short],
                                             _table_size(int(short.sum())))
        self.sc_long = K._build_long_table(self.tb, self.tb_off, shortcut_ids[~short],
                                           _table_size(int((~short).sum())))
        self._id_objects = None
        self._id_list = None
        self._kernel_tables = None

    def encode_docs(self, texts: Sequence[str], shortcut: bool = True,
                    short_limit: int = SHORT_LIMIT) -> Tuple[np.ndarray, np.ndarray]:
        """Encode ``texts`` (already checked to be ``str``) in one kernel call;
        returns ``(ids int32, offsets int64)``."""
        pretok = self.pretokenizer
        if self.atoms:
            direct = getattr(pretok, "token_bytes_batch", None)  # markers: the pieces' bytes without their strs
            got = direct(texts) if direct is not None else None
            if got is not None:
                return self._kernel(got[0], got[1], got[2], shortcut, short_limit)
            return self._encode_pieces_of([pretok.pretokenize(t) for t in texts], shortcut, short_limit)
        scanner = self._slice_scanner()
        if scanner is not None:
            return self._kernel(*self._scan(scanner, texts), shortcut, short_limit)
        if USE_PRETOKEN_ENDS and getattr(pretok, "uses_native", False):
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
            raise RuntimeError("the pre-tokenizer's pretokens do not concatenate back to the text; "
                               "this is a bug in the pre-tokenizer (encode with backend='python')")
        try:
            data = "".join(texts).encode("utf-8")
        except UnicodeEncodeError:
            for t in texts:
                check_utf8(t)
            raise
        return self._kernel(data, piece_ends, doc_pieces, shortcut, short_limit)

    def _slice_scanner(self):
        """The compiled scanner whose :func:`fastsw._pretok.scan_utf8` gives the kernel's input in one call (the
        default patterns with the extension built), or None (then the per-document path of :meth:`encode_docs`)."""
        if _scan_utf8 is None or not USE_SCAN_UTF8 or not USE_PRETOKEN_ENDS:
            return None
        scanner = self.__dict__.get("_scanner")
        if scanner is None:  # found once per encoder (False: none); the switches above are read per call
            pretok = self.pretokenizer
            scanner = False
            # a subclass's kernel (MinGram's) reads code-point ends; atoms are not substrings of the text
            if (not self.atoms and type(self)._kernel is FastEncoder._kernel and isinstance(pretok, Pretokenizer)
                    and pretok.uses_native):
                scanner = pretok._any_scanner()
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

    def _kernel(self, data, piece_ends, doc_pieces, shortcut, short_limit=SHORT_LIMIT,
                interruptible: bool = False):
        """One call of the kernel on UTF-8 ``data`` with this model's tables. ``interruptible`` calls, and
        every call on at least ``_WORKER_BYTES`` from the main thread, go through
        :func:`fastsw._interrupt.call_kernel` (a worker thread), so Ctrl-C is a plain KeyboardInterrupt once
        the call returns (the call is bounded by its input: no stop flag to poll); a kernel run in the main
        thread could surface the signal inside a Numba callback as a chained SystemError. Small calls stay in
        the calling thread: a thread start (~50 us) would be most of their time."""
        # read-only view of the bytes (no copy); never empty, so one signature (scan_utf8's array: never empty)
        text = data if isinstance(data, np.ndarray) else np.frombuffer(data or b"\0", np.uint8)
        tables = self._kernel_tables
        if tables is None:  # the model's arrays, gathered once (a short text's call is a few microseconds)
            tables = self._kernel_tables = (self.byte_ids, self.sc_short, self.sc_long, self.tb, self.r_table,
                                            self.s_table, self.s_bits, self.flags, self.chars)
        args = (text, piece_ends, doc_pieces, *tables, int(bool(shortcut)), self.use_super, int(short_limit))
        if interruptible or (len(data) >= _WORKER_BYTES and threading.current_thread() is threading.main_thread()):
            return call_kernel(K._encode_docs, *args, stop=False)
        return K._encode_docs(*args)

    def encode_pieces(self, pieces: Sequence[str], shortcut: bool = False,
                      interruptible: bool = False) -> Tuple[np.ndarray, np.ndarray]:
        """Each of ``pieces`` (checked ``str``) taken as one whole pretoken, without
        running the pre-tokenizer: ``(ids int32, offsets int64)`` as in
        :meth:`encode_docs`. For callers that already know each piece is one
        pretoken (the tokenizer's reachability check, with ``interruptible=True`` since
        training runs it; the short-text path's cache misses)."""
        n = len(pieces)
        if self.atoms:
            return self._encode_pieces_of([[p] for p in pieces], shortcut, interruptible=interruptible)
        piece_ends = np.fromiter(map(len, pieces), np.int64, n)
        doc_pieces = np.arange(n + 1, dtype=np.int64)
        return self._kernel("".join(pieces).encode("utf-8"), piece_ends, doc_pieces, shortcut,
                            interruptible=interruptible)

    def _encode_pieces_of(self, docs: Sequence[Sequence[str]], shortcut: bool, short_limit: int = SHORT_LIMIT,
                          interruptible: bool = False) -> Tuple[np.ndarray, np.ndarray]:
        """One kernel call over documents given as their pieces (atoms as lone surrogates): the data is the
        pieces' token bytes and each piece's end is given in bytes from its document's start."""
        n_pieces = np.fromiter(map(len, docs), np.int64, len(docs))
        data, lengths = atom_bytes_packed(list(chain.from_iterable(docs)))  # no codec error handler per atom
        cum = np.cumsum(lengths)
        before = np.concatenate((np.zeros(1, np.int64), cum))[np.cumsum(n_pieces) - n_pieces]
        piece_ends = np.ascontiguousarray(cum - np.repeat(before, n_pieces), dtype=np.int64)
        doc_pieces = np.zeros(len(docs) + 1, np.int64)
        np.cumsum(n_pieces, out=doc_pieces[1:])
        return self._kernel(data.tobytes(), piece_ends, doc_pieces, shortcut, short_limit,
                            interruptible=interruptible)

    def encode(self, text: str, shortcut: bool = True) -> List[int]:
        """One document (a checked ``str``) as a list of ids: :meth:`encode_docs`
        without its per-batch bookkeeping, which dominates on short texts."""
        pretok = self.pretokenizer
        scanner = self._slice_scanner()
        if scanner is not None:
            ids = self._kernel(*self._scan(scanner, [text]), shortcut)[0]
            objects = self._id_list
            if objects is not None:  # the kernel's ids are contiguous int32: to_list's conversion is not needed
                return _ids_to_list(ids, objects)
            return self.to_list(ids)
        if not (USE_PRETOKEN_ENDS and getattr(pretok, "uses_native", False)):
            return self.to_list(self.encode_docs([text], shortcut)[0])
        ends = pretok.pretoken_ends(text)
        n = ends.shape[0]
        if (ends[n - 1] if n else 0) != len(text):
            raise RuntimeError("the pre-tokenizer's pretokens do not concatenate back to the text; "
                               "this is a bug in the pre-tokenizer (encode with backend='python')")
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            check_utf8(text)
            raise
        ids, _ = self._kernel(data, np.ascontiguousarray(ends, dtype=np.int64), np.array((0, n), np.int64), shortcut)
        return self.to_list(ids)

    def cached_ids(self, text: str, cache: dict):
        """The ids of a short ``text`` (a checked ``str``) from the tokenizer's per-pretoken cache, or None when a
        pretoken is not cached or there is no compiled scanner (``fastsw._pretok.cached_ids``; the caller's Python
        loop is its reference). For models without supermerges."""
        scanner = self._slice_scanner()
        if scanner is None or _cached_ids is None:
            return None
        return _cached_ids(scanner, text, cache)

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
        one compiled pass (``fastsw._pretok.ids_to_lists``) over the shared ints of :meth:`to_list`."""
        if _ids_to_lists is not None:
            if self._id_list is None:
                self.to_list(ids[:0])
            return _ids_to_lists(np.ascontiguousarray(ids, dtype=np.int32),
                                 np.ascontiguousarray(offsets, dtype=np.int64), self._id_list)
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

    def encode_to_numpy(self, texts: Sequence[str], num_threads=None,
                        shortcut: bool = True) -> Tuple[np.ndarray, np.ndarray]:
        """All ``texts`` as ``(ids int32, offsets int64)`` using ``num_threads``
        threads (None: all cores; the caller has checked it, see ``Tokenizer.encode_to_numpy``)."""
        texts = list(texts)
        parts = self._run_slices(texts, num_threads, lambda a, b: self.encode_docs(texts[a:b], shortcut))
        return _concat(parts, len(texts))

    def encode_lists(self, texts: Sequence[str], num_threads=None, shortcut: bool = True) -> List[List[int]]:
        """All ``texts`` as lists of ids (``encode_ordinary_batch``), threads as in :meth:`encode_to_numpy`. The
        calling thread builds each slice's lists (:meth:`lists_of`; that needs the GIL) as soon as the slice is
        encoded, while the workers scan and merge the next slices without the GIL."""
        texts = list(texts)
        parts = self._run_slices(texts, num_threads, lambda a, b: self.encode_docs(texts[a:b], shortcut),
                                 lambda part: self.lists_of(*part))
        return parts[0] if len(parts) == 1 else list(chain.from_iterable(parts))


def cross_pairs(supers: Mapping[Tuple[int, int], Tuple[int, int]]) -> Tuple[np.ndarray, np.ndarray]:
    """The pairs ``(a, b)`` of ids that a supermerge may ever join across, as int64 ``(lefts, rights)``: for
    every supermerge ``(l, r)``, each id ``a`` that can end ``l`` and each ``b`` that can begin ``r``. A token
    ends with itself and, when a supermerge ``(x, y)`` makes it, with whatever can end ``y`` (begins: ``x``).
    So when two adjacent tokens of a run are not such a pair, no merge of the run ever joins the tokens left of
    that boundary to those right of it (every merge joins two adjacent tokens, and the tokens' ends stay at the
    boundary), and the two sides merge independently: the kernel cuts its supermerge runs there (see
    :mod:`fastsw._encode_kernels`). Computed to a fixpoint, so the order of the merges does not matter.

    >>> [a.tolist() for a in cross_pairs({(5, 6): (0, 9), (9, 7): (1, 10)})]
    [[5, 6, 9], [6, 7, 7]]
    """
    ends = {}    # id -> the ids that can end it (itself left out)
    begins = {}  # id -> the ids that can begin it
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
    pairs = set()
    for left, right in supers:
        for a in ends.get(left, set()) | {left}:
            for b in begins.get(right, set()) | {right}:
                pairs.add((a, b))
    pairs = sorted(pairs)
    return (np.fromiter((p[0] for p in pairs), np.int64, len(pairs)),
            np.fromiter((p[1] for p in pairs), np.int64, len(pairs)))


def pieces_reference(pretokenizer: Pretokenizer, texts: Sequence[str]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The plain-Python twin of :func:`fastsw._pretok.scan_utf8` (the kernel's input for a slice of documents):
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
        offsets[d + 1:d + k + 1] = part_off[1:] + base
        d += k
        base += part_ids.shape[0]
    return np.ascontiguousarray(ids, dtype=np.int32), offsets


def encoder_for(tok) -> FastEncoder:
    """The tokenizer's :class:`FastEncoder` (built on first use; the old name of ``tok._fast()``)."""
    return tok._fast()


#: The kernels a :class:`FastEncoder` runs: its tables' builders and the encoder (one signature each).
KERNELS = (K._encode_docs, K._build_pair_table, K._build_short_table, K._build_long_table, K._build_pair_bits,
           K._build_char_table)

_on_disk: Optional[bool] = None  # whether Numba's on-disk cache holds every kernel (looked up once)


def _in_disk_cache(kernel) -> bool:
    """Whether Numba's on-disk cache holds ``kernel`` compiled for this machine from this source (its index
    has an entry whose key, signature apart, is the one this process would look up). Numba's cache keeps no
    public query for this; where its layout differs, the answer is ``False`` (the caller then takes the
    plain-Python twin, which gives the same ids)."""
    try:
        cache = kernel._cache
        codegen = kernel.targetctx.codegen()
        return any(cache._index_key(key[0], codegen) == key for key in cache._cache_file._load_index())
    except Exception:  # noqa: BLE001 - any other Numba: "not known to be cached"
        return False


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
    if _on_disk is None:
        _on_disk = all(_in_disk_cache(k) for k in KERNELS)
    return _on_disk


def warmup() -> None:
    """Compile (or load from Numba's on-disk cache) the encoding kernels, one signature each."""
    # a + a -> 243, aa + a -> 244 (regular); aaa + aaa -> 245 (super); aa and aaa reachable and eligible
    alphabet = ByteAlphabet("bytes243")
    tables = EncoderTables(list(alphabet.tokens) + [b"aa", b"aaa", b"aaaaaa"],
                           {(97, 97): (0, 243), (243, 97): (1, 244)}, {(244, 244): (0, 245)},
                           {b"aa": 243, b"aaa": 244}, frozenset((243, 244)), Pretokenizer(), alphabet, 246)
    FastEncoder(tables).encode_docs(["aaa aaa", ""])
