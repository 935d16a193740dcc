"""Numba kernels for the fast encoding path (SPEC section 7).

Private functions over contiguous numpy arrays only: no Python objects, no I/O.
Pretoken boundaries: the driver passes code-point offsets; when a batch is ASCII
(as many bytes as code points) they are byte offsets as they are, otherwise the
kernel walks the UTF-8 lead bytes.
The driver :mod:`fastsw.fast_encode` builds the tables once per tokenizer and
coerces every input (ids int32, lengths and offsets int64, text uint8), so each
kernel compiles exactly one signature. The reference these kernels must agree
with, id for id, is :meth:`fastsw.tokenizer.Tokenizer.encode_ordinary` with
``backend="python"`` (:func:`fastsw.bpe.apply_merges` per pretoken and per run).

Design notes
------------
* Rank tables: one int64 array. First ``_DIRECT`` = 65536 direct entries, the
  value of pair ``(left, right)`` at ``left << 8 | right`` when both ids are
  below 256 (every pair of atoms: all the initial lookups of a pretoken, one load
  in a 512 kB region instead of a probe of a table of up to 17 MB). Then the pair
  filter (next note), then open addressing with linear probing over interleaved ``(key, value)`` slots for the
  other pairs, so that a probe touches one cache line. Key ``left << 32 | right``
  (-1 = empty slot), value ``rank << 32 | new id`` (-1 = no merge), so comparing
  two values compares ranks first. Ranks are unique per pair (the tokenizer keeps
  the first merge of a duplicated pair), so the smallest value names one pair.
* Pair filter (issue #14): between the direct entries and the hash region, ``_FILTER``
  = 65536 words (2 ** 22 bits, 512 kB) with one bit per hashed pair (the top bits of the
  key times ``_MIX``). A lookup of a pair whose bit is clear answers -1 from that one
  load (L1 or L2) without probing the hash region (1 MB for a 32768 model, 17 MB for
  o200k_base's 446,189 splits: L2 or L3). About half the lookups of the merge loops are
  for pairs with no merge (the two new neighbours of each merged token; the last ones
  always fail); 0.7 % of the bits are set for 30,000 pairs, 10 % for o200k_base. A set
  bit only leads to the usual probe, so the answer is the same. Measured, whole kernel,
  one call per held-out document, CPU time, interleaved rounds (without / with a 2 ** 18-bit
  filter, English model): fi 0.75 / 0.64 ms, hi 0.43 / 0.34, zh 1.71 / 1.50, en 2.43 / 2.24,
  th 2.19 / 2.00, 1 MB of English letters without spaces 58.6 / 49.1. That filter had 82 % of
  its bits set for o200k_base and did nothing there (0.97-1.02); 2 ** 22 bits, against
  2 ** 18: o200k_base zh 0.67, th 0.77, fi 0.85, en 0.91 x the time; English model fi 0.92,
  zh 0.97, letters 0.95; 2 ** 21 was 4-7 % slower than 2 ** 22 and 2 ** 23 no better on
  the English model. (A 4096-entry direct-mapped cache of pairs in front of the table was
  2 x slower (:mod:`fastsw.fast_encode`): it was consulted for every lookup and kept
  values; the filter answers only "no" and is one bit test.)
* Hashes multiply in ``uint64``: Numba gives signed int64 arithmetic LLVM's
  ``nsw`` flag, which makes a wrapping int64 multiply undefined behaviour (LLVM
  folded the hash of a ``(x, x)`` lookup to a constant, a wrong answer).
* Whole-pretoken shortcut, two tables of the reachable tokens. Tokens of at most
  8 bytes (most pretokens of ordinary text): the bytes packed little-endian into
  one int64 key, 16-byte slots ``[key, length << 32 | id (-1 = empty)]``; a hit
  is one key and length compare, with no read of the vocabulary bytes. Longer
  tokens: a hash over 8-byte words, 32-byte slots ``[hash, length << 32 | id,
  offset in tb, 0]``, a hit confirmed by comparing the bytes against the flat
  vocabulary ``tb``. A short piece's key is one 8-byte load and a mask (``_pack8``,
  ``_low_bytes``; the byte loop ``_pack`` only in the last 8 bytes of the data), long
  pieces are hashed and compared eight bytes at a time: the loop over the piece's length,
  whose trip count the branch predictor cannot guess, cost more than the probe. Measured on
  the pretokens of 2 MB of English that hit o200k_base's shortcut (369,086 of 401,022):
  19 -> 12 ms, the whole kernel 47 -> 36 ms. The table's size hardly matters: the short
  table at 2 ** 18 .. 2 ** 21 slots (4-34 MB) took 17.9, 18.9, 19.0 and 19.8 ms before that
  change, so the hit path is bound by instructions, not cache misses.
* Reference counts: Numba increfs and decrefs array arguments and arrays rebound
  inside a loop with atomic instructions; before the changes below they took
  ~28 % of the kernel's time on English text. So the hot loop calls the merge
  loops directly (no dispatcher function with 9 array arguments), and the long
  loop's scratch is allocated once per call (sized by the longest pretoken or
  run), not lazily inside the loop.
* Supermerge runs: per regular id, ``flags`` bit 1 marks eligible tokens (the bits 2 and 4 of
  the sides of a supermerge went with the cross filter, which reads pairs). ``s_bits`` holds two
  32 kB bit sets indexed by one hash of a pair (``_pair_bit``): the pair filter (a
  bit of every supermerge pair; inside a merge loop it spares the hash probe of most
  pairs) and, from ``_CROSS_WORDS`` on, the cross filter: a bit of every pair
  ``(a, b)`` that some supermerge may ever join across
  (:func:`fastsw.fast_encode.cross_pairs`: ``a`` can end its left side, ``b`` begin
  its right side). Where two adjacent tokens of a run are not such a pair, no merge
  ever joins the tokens left of that boundary to those right of it (every merge
  joins two adjacent tokens, and the tokens on both sides keep ending and beginning
  at the boundary), so the two sides merge independently, in the same order, and the
  kernel cuts the run there. A segment is merged when it ends, only if one of its
  pairs passes the pair filter: two tokens one lookup, three ``_merge_three``, more
  the scan loop (``use_bits``) or the long loop. The run's state is updated without
  a branch on the filter bits (they are hard to predict); models without
  supermerges track no runs (a plain BPE model marks most ids eligible; tracking
  them was 7-12 % of its kernel time, fr/en/de/ru held-out, 32768).
  Measured (French held-out, 208 kB, own models of 32768, one thread, CPU ms on the
  busy shared machine): ``encode_ordinary`` per document took 3.58 (plain BPE) against
  4.91-5.03 (BoundlessBPE, 0.70-0.73 x); scan 1.19 / 1.16, kernel 1.80 / 3.01, ``to_list``
  0.15 / 0.13 (fewer tokens). Of the BoundlessBPE kernel, the merges of the runs were
  ~1.0 ms, tracking the runs ~0.3 and the pretokens that miss the shortcut ~0.2 more
  than plain BPE's (its 21,996 regular merges against 32,525: 3,873 multi-token
  pretokens against 3,113, 16.3 % of the bytes against 13.1 %). French runs are long
  and merge a lot: of 42,258 pretokens 31,095 are one eligible token, in 5,629 runs
  of >= 2 (5.3 tokens on average; 5,006 distinct, so no run cache), whose 23,994
  adjacent pairs hold 10,124 supermerge pairs (42 %; the pair filter passed 10,306);
  12,885 cross pairs for 10,529 supermerges cut the runs into segments of 1 (10,719),
  2 (4,569), 3 (1,924) and 4-19 tokens (859). Kernel, interleaved A/B, warm, best of
  12-25 (ms, before -> after): fr BoundlessBPE 3.28-3.34 -> 2.93, en 3.41 -> 3.03;
  plain BPE fr 1.85 -> 1.64, en 2.36 -> 2.08, de 3.00 -> 2.81. Whole ``encode_ordinary``
  (alternating processes, best): fr plain BPE 3.87 -> 3.58, BoundlessBPE 5.12 -> 4.81,
  so the ratio stays ~0.75 (both got faster). ``bench/bench_superword_runs.py`` splits
  the kernel: fr plain BPE 1.67 ms; BoundlessBPE's regular part 1.81, with its runs
  tracked and cut 2.16, merged 2.82. In the kernel, French segments of >= 3 tokens still
  cost ~0.45 ms and those of 2 ~0.29 (~60 ns each), but not in the table probe: one
  read of a fixed slot in its place saved ~0.05 ms, so it is the control flow of
  ending a segment (this machine has no performance counters). Tried and
  dropped: taking each pair's value as the run is collected and merging from the known
  values (slower, 3.10 against 2.93: a branch on the filter bit at every token); one
  helper for the three dispatches (3.75: a call passes each array argument as seven
  words); ``inline="always"`` for ``_merge_three`` (no change). In isolation (the
  runs alone, no regular tables in the caches) merging whole runs took 0.78 ms,
  segment by segment 0.63.
* Miss cache: a pretoken that misses the shortcut is merged once per kernel call
  and later occurrences in the same call copy its ids. The cache is allocated
  per call (direct-mapped, one slot per four pretokens, since only a few per cent
  miss, at most ``2 ** _MISS_CACHE_BITS`` slots, an entry
  overwritten on collision) and points into the call's own text and output, so
  threads share no mutable state. Only pieces of >= 2 ids are cached: they never
  join a supermerge run, so their ids never move once the run before them has
  been flushed.
* Merging one sequence (a pretoken's atomic ids, or a run of eligible
  single-token pretokens for the supermerges) happens in place in the output
  buffer. Short sequences (``n <= short_limit``) keep each adjacent pair's table
  value in a small array, merge the leftmost lowest-rank pair and re-look-up only
  its two neighbours (O(n) per merge, and n is small). Longer ones use a linked
  list (``nxt``/``prv``) and a tournament tree over the pairs (``_merge_tree``):
  leaf i holds ``rank << 32 | i`` for the pair starting at node i, so the root is
  the lowest rank and, among equal ranks, the leftmost position; a merge rewrites
  three leaves (the merged pair's, its right neighbour's, gone, and its left
  neighbour's), each an O(log n) walk up that stops where the minimum is
  unchanged. O(n log n) overall, so ``"a" * 10**6`` or a megabyte-long pretoken is
  never quadratic. It replaced per-rank buckets with a heap of ranks (the first
  version), which cost ~200 ns per byte on the 25-180 byte pretokens of Japanese
  and Thai text: measured per piece length on held-out text, own-language models,
  MB/s of the merge loop alone (scan / buckets / tree): ja 25-48 bytes 12 / 8 / 20,
  49-96 bytes 5 / 7 / 19; th 97-200 bytes 6 / 7 / 20; and for 2-8 byte pieces
  37 / 8 / 25 and 9-16 bytes 24-30 / 8 / 23-27, but 17-24 bytes 16-25 / 8 / 23-30 (so the scan
  loop keeps ``n <= 16``, ``fast_encode.SHORT_LIMIT``).
  A flat array of the same keys with a vectorised minimum per merge (AVX-512)
  was 15-25 % slower than the tree from 25 bytes up. The tree needs 2 P int64 of
  scratch (P the power of two >= n), less than the buckets' 3 n int64 + 9 n int32.
* Why both loops give the reference's answer (the reference applies the lowest
  rank present to all its non-overlapping occurrences left to right, then
  repeats). (1) Both take the lowest rank present and, within it, the leftmost
  position first (a merge keeps its left node, so positions keep their order).
  (2) A merge ``x y -> z`` only creates pairs containing ``z``; every merge whose
  pair contains ``z`` comes later in the merge list than the merge that created
  ``z`` (a merge may only use existing ids), and ranks follow merge order, so a
  new pair always has a *higher* rank than the one being applied. Hence all
  occurrences of rank r that exist when r becomes the minimum are applied before
  any other rank, exactly as the reference applies r to the whole sequence, and
  no occurrence of r appears while r is being applied. (3) Taking equal-rank
  positions left to right, re-reading each position's pair after every merge, is
  the reference's left-to-right non-overlapping scan: in ``a a a`` merging
  positions (0, 1) replaces the pair at (1, 2) by ``z a``, so it is not merged
  as ``a a``. (5) A sequence ``x x ... x`` of n equal ids has one
  pair, ``x x``; the reference replaces its non-overlapping occurrences left to
  right, giving ``z`` n // 2 times and, when n is odd, a final ``x``. The long
  loop does this step in one pass (``_halve_runs``, again while the result is one
  run), then continues from the result as from any other sequence. (Measured:
  ``"a" * 10**6`` took 66 ms in the bucket loop, about 2 ms this way.)
* (6) Rank mode (tiktoken's vocabularies, :mod:`fastsw.tiktoken_vocab`): the table
  holds every two-way split ``(x, y)`` of every token ``t`` as ``(x, y) -> (rank t, t)``,
  so several pairs share one rank (o200k_base: 446,189 splits of 143,514 tokens) and
  the value of a pair is still its concatenation's rank and id. Both loops are
  tiktoken's own algorithm (the leftmost lowest rank, neighbours re-looked-up),
  the tree with O(log n) instead of O(n) per merge: note (2) does not hold (a part
  may rank after the token it forms, 71,370 of o200k's splits, so a merge can
  create a pair of a *lower* rank, which tiktoken merges next), and neither loop
  relies on it; pairs of one rank that are different pairs make the same token,
  so equal keys name equal merges. Note (5)'s arithmetic step is taken only when
  neither ``new x`` nor ``new new`` outranks ``x x``; merge-rule models always take it.
* (7) Whole characters first. A pretoken that misses the shortcut starts from its bytes,
  and a character of 3 bytes costs two merges before any merge across characters (in
  Chinese ~80 % of all merges). So ``_initial_ids`` writes some *units* -- a character of
  2-4 bytes, or a space and one -- as their token at once, when the table built by
  ``_build_char_table`` says this cannot change the ids; both loops then merge the shorter
  sequence. Why it cannot, for a unit ``c`` whose bytes the loops build into one token
  ``T`` alone with steps of ranks ``q1, q2, ...`` (both loops take the lowest rank present,
  leftmost first; that holds in rank mode too): (a) while ``c`` is unfinished, the pair of
  its next step is present, so nothing of a rank above that step's is merged anywhere;
  (b) a merge ``(y, p)`` onto the partial token ``p`` at ``c``'s left end is harmless if
  its rank exceeds every ``q`` up to the step that consumes ``p`` (``p`` is gone before
  that pair can be the lowest), likewise ``(p, y)`` at the right end; (c) every merge with
  ``T`` itself ranks above the last ``q`` (merge-rule models: a merge uses only earlier
  tokens; rank mode: checked, e.g. ``é + y`` may rank before ``é``). With (b) and (c),
  the run from ``T`` makes the same choices as the run from the bytes, minus ``c``'s own
  steps: a pair with ``T`` never undercuts a choice made while ``c`` was unfinished (those
  rank at most the pending ``q``, by (a)), and no pair of a partial is ever chosen. The
  tokens ``y`` that can stand next to ``c`` end (on its left) with the byte before it or
  start (on its right) with the byte after it, so the table keeps (b) and (c) per side and
  per value of that byte (65 classes before a unit: ASCII and the continuation bytes; 52
  after: ASCII and the lead bytes), as bit sets checked against the text's bytes; a
  pretoken's ends have no neighbour. Units whose bytes do not end as one token (rare
  characters) stay bytes. Byte-level BPE learns merges across characters early (Russian
  ``" \xd0"`` is merge 0; Thai ``char + "\xe0\xb8"``), hence the per-byte rule and the
  space-and-character units (a word's first letter after its space). A first version
  with only "ASCII or not" per side took 27 % of Thai and 54 % of Chinese characters
  (o200k_base) whole; per byte value 69 % and 83 %. Tests: hand-worked tables for each
  condition (dropping any one of them from the builder fails a test), random merge and
  rank tables over 1-4 byte characters against ``apply_merges`` and tiktoken's algorithm,
  and the same ids with and without the table on real text. Measured on held-out text
  (``python bench/bench_char_units.py``, quiet machine, load 0.6; merges per byte of
  missed pretokens, bytes -> units; then the one-thread encode per document, CPU time,
  best of 11 interleaved rounds, the same model with / without the table: speed-up):
  own models zh 0.80 -> 0.17, 1.52 x; ja 0.89 -> 0.29, 1.43 x; ko 0.79 -> 0.16, 1.54 x; th
  0.91 -> 0.39, 1.20 x; hi 0.86 -> 0.32, 1.17 x; ru 0.82 -> 0.42, 1.07 x; o200k_base zh 0.73
  -> 0.12, 1.52 x; ko 0.74 -> 0.08, 1.60 x; th 0.84 -> 0.29, 1.23 x. The look-up is
  written out in ``_initial_ids`` (as a helper function it cost 10 ns per byte of Chinese,
  three times as much; unlike ``_tree_set``, whose written-out form gained nothing), and
  ``_initial_ids`` itself is inlined into the kernel (a call per missed pretoken cost
  6.8 -> 1.0 ns per byte of Korean with the English model). Building the table is one
  pass over the pairs and one over the units (o200k_base: 446,189 pairs, ~70 ms, 3.9 MB).
* (8) Few merges (issue #14: a model on text of a script it barely knows, e.g. the English
  model on Thai, where 96 % of the bytes miss the shortcut and a 100-byte piece has zero to
  a few pairs that merge). The tree's set-up (2 P leaves and minima, the linked list, the
  final compaction) was most of the cost. The long loop's first pass (``_tree_leaves``)
  writes the leaves and also counts the pairs that merge, listing their keys; with none it
  returns at once, with at most ``_FEW_PAIRS`` = 16 (and at most a quarter of its length:
  17-24-byte pieces of English letters start with 12-16 and keep making new ones, and the
  hand-over below cost them 20 %) :func:`_merge_few` works on that list
  (the smallest key, a scan of <= 16; merged-away nodes marked -1 in place, so positions
  keep their order and the keys stay valid; one compaction at the end). It is the same
  order as the tree (the smallest ``rank << 32 | position``, the two changed pairs
  re-looked-up), so notes (1)-(6) carry over. After ``_FEW_MERGES`` = 32 merges, or when
  the list outgrows 16, it compacts and hands the rest to the tree, so the cost stays
  O(n log n) (the walks over marked nodes are at most 32 long). Merge loops alone on the
  pieces over 16 bytes, English model, ns per byte (tree / with this path): Thai 25-48
  bytes 12.5 / 8.5, 49-96 9.7 / 5.5, 97+ 8.2 / 3.5.
* Calls between kernels: the helpers of the long loop (``_halve_runs``, ``_merge_tree``,
  ``_tree_leaves``) and the scan loop are compiled ``inline="always"``, and the tree is
  indexed in place (``_tree_set`` takes its size) instead of through a slice. A call
  that passes arrays (and a slice) cost ~50-130 ns each in reference counting, as
  much as the lookups of a 30-byte piece with no merge (English model on Myanmar: the
  long loop per piece 11.7 -> 7.8 ns per byte). The whole kernel, one call per held-out
  document, English model (``_encode_docs`` alone, CPU time, interleaved rounds): th 0.73 x
  the time before note (8), my 0.54 x, zh 0.97 x, hi 0.96 x, fi 1.01 x, ja 0.99 x,
  en 1.00 x. Compiling the kernels takes ~20 s instead of ~15 s (once: ``cache=True``).
"""
from __future__ import annotations

import warnings

import numpy as np
from numba import njit

# The pair hashes multiply uint64s and are meant to wrap modulo 2**64. Compiled, they do so silently; run as
# plain Python (NUMBA_DISABLE_JIT=1, the kernels' twin test mode) numpy warns on every wrap. Only this module's
# wraps are silenced.
warnings.filterwarnings("ignore", "overflow encountered in scalar multiply", RuntimeWarning, module=__name__)

# Hashing multiplies in uint64: Numba emits signed int64 arithmetic with LLVM's
# ``nsw`` flag, so a wrapping int64 multiply is undefined behaviour that LLVM may
# fold away (it did: a pair lookup of ``(x, x)`` hashed to a constant).
_FNV_OFFSET = np.uint64(0xcbf29ce484222325)
_MIX = np.uint64(0x9E3779B97F4A7C15)
_LOW32 = np.int64(0xFFFFFFFF)
_MISS_CACHE_BITS = 14  # at most 16384 miss-cache slots per kernel call
_DIRECT = 1 << 16  # direct rank-table entries: every pair of ids below 256
_FILTER_BITS = 22  # then a filter of the hashed pairs: 2 ** 22 bits (512 kB) ...
_FILTER = 1 << (_FILTER_BITS - 6)  # ... in this many int64 words
_HASHED = _DIRECT + _FILTER  # then the hash region
_PAIR_BITS = 18  # the supermerge pair filter: a bit set of 2 ** 18 bits (32 kB)
_CROSS_WORDS = 1 << (_PAIR_BITS - 6)  # the cross filter's bits follow the pair filter's in ``s_bits``
_FEW_PAIRS = 16  # a long sequence with at most this many pairs that merge skips the tournament tree
_FEW_MERGES = 32  # ... for at most this many merges (module note (8))


@njit(cache=True, nogil=True)
def _pair_slot(table, key):
    """Linear probing over the hash region of the int64 rank ``table`` (after the
    ``_DIRECT`` direct entries and the ``_FILTER`` filter words: a power of two of
    ``(key, value)`` slots, key -1 = empty): the slot holding ``key`` or the empty
    slot where it belongs."""
    mask = ((table.shape[0] - _HASHED) >> 1) - 1
    h = np.uint64(key) * _MIX
    h ^= h >> np.uint64(29)
    s = np.int64(h & np.uint64(mask))
    while True:
        k = table[_HASHED + 2 * s]
        if k == key or k == -1:
            return s
        s = (s + 1) & mask


@njit(cache=True, nogil=True)
def _filter_bit(key):
    """The bit (0 .. 64 * _FILTER - 1) of the pair ``key`` in a rank table's filter."""
    return np.int64((np.uint64(key) * _MIX) >> np.uint64(64 - _FILTER_BITS))


@njit(cache=True, nogil=True)
def _pair_lookup(table, left, right):
    """``rank << 32 | new id`` of the merge ``(left, right)``, or -1. Pairs of two
    ids below 256 (every pair of atoms) are one direct load; other pairs whose
    filter bit is clear (most pairs without a merge) one load in the 512 kB filter."""
    if (left | right) < 256:
        return table[(np.int64(left) << 8) | np.int64(right)]
    key = (np.int64(left) << 32) | np.int64(right)
    b = _filter_bit(key)
    if (table[_DIRECT + (b >> 6)] >> (b & 63)) & 1 == 0:
        return np.int64(-1)
    s = _pair_slot(table, key)
    if table[_HASHED + 2 * s] == key:
        return table[_HASHED + 2 * s + 1]
    return np.int64(-1)


@njit(cache=True, nogil=True)
def _build_pair_table(lefts, rights, ranks, news, size):
    """A rank table from int64 ``lefts``, ``rights``, ``ranks``, ``news``: int64
    array of ``_DIRECT`` direct entries (pairs of ids < 256), ``_FILTER`` words of the
    hashed pairs' filter bits, then ``size`` hash slots (power of two, > 2 x entries)
    of two int64."""
    table = np.full(_HASHED + 2 * size, -1, np.int64)
    table[_DIRECT:_HASHED] = 0
    for i in range(lefts.shape[0]):
        if (lefts[i] | rights[i]) < 256:
            d = (lefts[i] << 8) | rights[i]
            if table[d] == -1:
                table[d] = (ranks[i] << 32) | news[i]
            continue
        key = (lefts[i] << 32) | rights[i]
        s = _pair_slot(table, key)
        if table[_HASHED + 2 * s] == -1:
            table[_HASHED + 2 * s] = key
            table[_HASHED + 2 * s + 1] = (ranks[i] << 32) | news[i]
            b = _filter_bit(key)
            table[_DIRECT + (b >> 6)] |= np.int64(1) << (b & 63)
    return table


@njit(cache=True, nogil=True)
def _pair_bit(left, right):
    """The filter bit (0 .. 2 ** _PAIR_BITS - 1) of the pair ``(left, right)``."""
    h = ((np.uint64(left) * _MIX) ^ np.uint64(right)) * _MIX
    return np.int64(h >> np.uint64(64 - _PAIR_BITS))


@njit(cache=True, nogil=True)
def _build_pair_bits(lefts, rights):
    """The filter of a rank table's pairs (int64 ``lefts``, ``rights``): uint64
    array of ``2 ** _PAIR_BITS`` bits, the bit of every pair set. A pair whose bit
    is clear has no merge; a set bit may be a collision (about 3 % of the bits are
    set for 7,000 supermerges)."""
    bits = np.zeros(1 << (_PAIR_BITS - 6), np.uint64)
    for i in range(lefts.shape[0]):
        b = _pair_bit(lefts[i], rights[i])
        bits[b >> 6] |= np.uint64(1) << np.uint64(b & 63)
    return bits


_CHAR_KEYS = 0x110000  # the character table's keys: a code point, or 0x110000 + a code point for " " + that character
_CHAR_BLOCKS = (2 * _CHAR_KEYS) >> 8  # its block map: one entry per 256 keys


@njit(cache=True, nogil=True)
def _utf8_char(data, start, end):
    """``(code point, length)`` of the UTF-8 character of 2-4 bytes at uint8 ``data[start:end]`` that ends at or
    before ``end``, or ``(-1, 1)``: ASCII, a byte that cannot start one, too few bytes, a byte that is not a
    continuation, an overlong form, a surrogate or a value above U+10FFFF (every character has one entry)."""
    b = np.int64(data[start])
    if b < 0xC2 or b > 0xF4:
        return np.int64(-1), np.int64(1)
    if b < 0xE0:
        n = 2
        cp = b & 0x1F
    elif b < 0xF0:
        n = 3
        cp = b & 0x0F
    else:
        n = 4
        cp = b & 0x07
    if start + n > end:
        return np.int64(-1), np.int64(1)
    for j in range(1, n):
        c = np.int64(data[start + j])
        if c < 0x80 or c > 0xBF:
            return np.int64(-1), np.int64(1)
        cp = (cp << 6) | (c & 0x3F)
    if (n == 3 and (cp < 0x800 or 0xD800 <= cp <= 0xDFFF)) or (n == 4 and not 0x10000 <= cp <= 0x10FFFF):
        return np.int64(-1), np.int64(1)
    return cp, np.int64(n)


@njit(cache=True, nogil=True)
def _unit_key(data, start, end):
    """The character table's key of the unit that is exactly uint8 ``data[start:end]`` (a character of 2-4 bytes:
    its code point; a space and one: ``_CHAR_KEYS`` + its code point), or -1 when those bytes are not a unit."""
    n = end - start
    if n < 2 or n > 5:
        return np.int64(-1)
    spaced = np.int64(1) if data[start] == 0x20 else np.int64(0)
    cp, size = _utf8_char(data, start + spaced, end)
    if cp < 0 or spaced + size != n:
        return np.int64(-1)
    return cp + spaced * _CHAR_KEYS


def _byte_classes():
    """The classes of the bytes next to a unit, as two uint8 tables by byte value. Before a unit (the last byte of
    the token on its left): 0 for ASCII, 1 + k for the continuation byte 0x80 + k, and 65 for a byte that cannot
    end a character. After a unit (the first byte of the token on its right): 0 for ASCII, 1 + k for the lead
    byte 0xC2 + k, and 52 for a byte that cannot start a character. The last class of each is never allowed."""
    left = np.full(256, 65, np.uint8)
    left[:0x80] = 0
    left[0x80:0xC0] = np.arange(1, 65)
    right = np.full(256, 52, np.uint8)
    right[:0x80] = 0
    right[0xC2:0xF5] = np.arange(1, 52)
    return left, right


_LEFT_CLASS, _RIGHT_CLASS = _byte_classes()
_LEFT_CLASSES = 65  # ASCII and the 64 continuation bytes (class 65: never)
_RIGHT_CLASSES = 52  # ASCII and the 51 lead bytes 0xC2-0xF4 (class 52: never)
# int64 per key in the character table: the unit's id, then the allowed classes before it (3 words of 32 bits)
# and after it (2 words): class c is bit c & 31 of word c >> 5
_RECORD = 6


@njit(cache=True, nogil=True)
def _build_char_table(tb, tb_off, byte_ids, table, lefts, rights, ranks):
    """The table of the units a missed pretoken may start from as their token (module note (7)): one character of
    2-4 bytes, or a space and such a character.

    Reads the flat vocabulary ``tb``/``tb_off`` (int64 offsets, regular ids), int32 ``byte_ids`` (the atomic id of
    every byte), the rank ``table`` and its pairs as int64 ``lefts``, ``rights``, ``ranks``. Returns an int64 array:
    ``_CHAR_BLOCKS`` block entries (the offset in this array of a block of 256 keys, or -1), then the blocks: a
    record of ``_RECORD`` int64 per key: its unit's token id (-1: none), then the classes of byte
    (``_byte_classes``) allowed just before it and just after it, as bits (see ``_RECORD``). A
    unit's key is its character's code point, plus ``_CHAR_KEYS`` after a space. A token is entered when its
    bytes are a unit that the merge loops build into that token alone and some neighbour is allowed; a class is
    allowed when note (7)'s conditions hold for every token on the other side whose edge byte is of that class.
    """
    n_tok = tb_off.shape[0] - 1
    never = np.int64(1) << 62
    # 1. each unit alone, in the merge loops' order (the lowest value, leftmost first), tracing the partial
    #    tokens at its ends with the highest rank used up to the step that consumes each
    n_cand = 0  # tokens whose bytes are a unit (the trace's arrays are sized by them, not by the vocabulary)
    for t in range(n_tok):
        if _unit_key(tb, tb_off[t], tb_off[t + 1]) >= 0:
            n_cand += 1
    unit_tok = np.empty(n_cand, np.int64)
    unit_key = np.empty(n_cand, np.int64)
    ends = np.empty((n_cand, 5, 2, 2), np.int64)  # per unit, up to 5 (token, bound) on its left / right end
    n_ends = np.zeros((n_cand, 2), np.int64)
    need = np.zeros((n_tok, 2), np.bool_)  # tokens whose merges on their left (0) / right (1) side are needed
    n_units = 0
    seq = np.empty(5, np.int64)
    for t in range(n_tok):
        o = tb_off[t]
        n = tb_off[t + 1] - o
        key = _unit_key(tb, o, o + n)
        if key < 0:
            continue
        for j in range(n):
            seq[j] = byte_ids[tb[o + j]]
        u = n_units
        n_ends[u, 0] = 0
        n_ends[u, 1] = 0
        m = n
        top = np.int64(-1)
        while m >= 2:
            best = np.int64(0x7FFFFFFFFFFFFFFF)
            at = -1
            for j in range(m - 1):
                v = _pair_lookup(table, seq[j], seq[j + 1])
                if v >= 0 and v < best:
                    best = v
                    at = j
            if at < 0:
                break
            top = max(top, best >> 32)
            if at == 0:  # the left end's partial is consumed: no merge onto it may rank up to here
                ends[u, n_ends[u, 0], 0, 0] = seq[0]
                ends[u, n_ends[u, 0], 0, 1] = top
                n_ends[u, 0] += 1
            if at == m - 2:  # the right end's partial is consumed
                ends[u, n_ends[u, 1], 1, 0] = seq[m - 1]
                ends[u, n_ends[u, 1], 1, 1] = top
                n_ends[u, 1] += 1
            seq[at] = best & _LOW32
            for j in range(at + 1, m - 1):
                seq[j] = seq[j + 1]
            m -= 1
        if m != 1 or seq[0] != t:
            continue
        for side in range(2):  # no merge with the finished token may rank before its last part is made
            ends[u, n_ends[u, side], side, 0] = t
            ends[u, n_ends[u, side], side, 1] = top
            n_ends[u, side] += 1
            for k in range(n_ends[u, side]):
                need[ends[u, k, side, 0], side] = True
        unit_tok[u] = t
        unit_key[u] = key
        n_units += 1
    # 2. the lowest rank of the merges onto each needed token, per class of the token on the other side
    slot = np.full((n_tok, 2), -1, np.int64)
    n_slots = np.zeros(2, np.int64)
    for t in range(n_tok):
        for side in range(2):
            if need[t, side]:
                slot[t, side] = n_slots[side]
                n_slots[side] += 1
    # side 0: merges (y, token) by the class of y's last byte; side 1: merges (token, y) by y's first byte
    lowest = np.full((2, max(n_slots[0], n_slots[1], 1), _LEFT_CLASSES), never, np.int64)
    for i in range(lefts.shape[0]):
        a = lefts[i]
        b = rights[i]
        if a < 0 or b < 0 or a >= n_tok or b >= n_tok:
            continue
        k = slot[a, 1]  # a unit's right end (a) and what starts on its right (b)
        if k >= 0:
            c = _RIGHT_CLASS[tb[tb_off[b]]]
            if c < _RIGHT_CLASSES and ranks[i] < lowest[1, k, c]:
                lowest[1, k, c] = ranks[i]
        k = slot[b, 0]  # a unit's left end (b) and what ends on its left (a)
        if k >= 0:
            c = _LEFT_CLASS[tb[tb_off[a + 1] - 1]]
            if c < _LEFT_CLASSES and ranks[i] < lowest[0, k, c]:
                lowest[0, k, c] = ranks[i]
    # 3. the units' records: a class of neighbour is allowed if no merge with it ranks up to the end's bound
    records = np.empty(_RECORD * n_units, np.int64)
    keys = np.empty(n_units, np.int64)
    n_kept = 0
    for u in range(n_units):
        r = _RECORD * n_kept
        records[r] = unit_tok[u]
        records[r + 1:r + _RECORD] = 0
        for side in range(2):  # the classes before the unit in words r + 1 .. r + 3, after it in r + 4, r + 5
            for c in range(_LEFT_CLASSES if side == 0 else _RIGHT_CLASSES):
                allowed = True
                for k in range(n_ends[u, side]):
                    if lowest[side, slot[ends[u, k, side, 0], side], c] <= ends[u, k, side, 1]:
                        allowed = False
                if allowed:
                    records[r + 1 + 3 * side + (c >> 5)] |= np.int64(1) << (c & 31)
        if records[r + 1:r + _RECORD].max() == 0:
            continue  # allowed only alone: a whole pretoken, which the shortcut has
        keys[n_kept] = unit_key[u]
        n_kept += 1
    # 4. the lookup: the block map, then blocks of 256 records (one per key; a record's id is -1 for no unit)
    blocks = np.full(_CHAR_BLOCKS, -1, np.int64)
    n_blocks = 0
    for k in range(n_kept):
        if blocks[keys[k] >> 8] < 0:
            blocks[keys[k] >> 8] = _CHAR_BLOCKS + 256 * _RECORD * n_blocks
            n_blocks += 1
    out = np.full(_CHAR_BLOCKS + 256 * _RECORD * n_blocks, -1, np.int64)
    out[:_CHAR_BLOCKS] = blocks
    for k in range(n_kept):
        r = blocks[keys[k] >> 8] + _RECORD * (keys[k] & 255)
        for j in range(_RECORD):
            out[r + j] = records[_RECORD * k + j]
    return out


@njit(cache=True, nogil=True, inline="always")
def _initial_ids(text, s, e, byte_ids, chars, out, w):
    """Write the atomic ids of the pretoken ``text[s:e]`` at ``out[w:]``: each byte's id, except that a unit (a
    character of 2-4 bytes, or a space and one) found in the table ``chars`` (:func:`_build_char_table`) that
    allows the bytes around it is written as its token (module note (7)). Returns the number of ids written.
    (The table look-up is written out here: as a helper function it cost three times as much.)"""
    if chars.shape[0] <= _CHAR_BLOCKS:  # no character table (atoms, wide alphabets): the bytes
        for i in range(s, e):
            out[w + i - s] = byte_ids[text[i]]
        return e - s
    m = 0
    i = s
    while i < e:
        b = text[i]
        if b >= 0xC2 or (b == 0x20 and i + 2 < e and text[i + 1] >= 0xC2):
            spaced = 1 if b == 0x20 else 0
            cp, n = _utf8_char(text, i + spaced, e)
            if cp >= 0:
                key = cp + spaced * _CHAR_KEYS
                end = i + spaced + n
                blk = chars[key >> 8]
                t = np.int64(-1)
                if blk >= 0:
                    r = blk + _RECORD * (key & 255)
                    t = chars[r]
                    if t >= 0 and i > s:
                        c = np.int64(_LEFT_CLASS[text[i - 1]])
                        if (chars[r + 1 + (c >> 5)] >> (c & 31)) & 1 == 0:
                            t = -1
                    if t >= 0 and end < e:
                        c = np.int64(_RIGHT_CLASS[text[end]])
                        if (chars[r + 4 + (c >> 5)] >> (c & 31)) & 1 == 0:
                            t = -1
                if t >= 0:
                    out[w + m] = t
                    m += 1
                    i = end
                    continue
        out[w + m] = byte_ids[b]
        m += 1
        i += 1
    return m


@njit(cache=True, nogil=True)
def _pack(data, start, n):
    """Up to 8 bytes of uint8 ``data[start:start+n]`` as one little-endian int64."""
    k = np.int64(0)
    for i in range(n):
        k |= np.int64(data[start + i]) << (8 * i)
    return k


@njit(cache=True, nogil=True)
def _pack8(data, start):
    """The 8 bytes of uint8 ``data[start:start+8]`` as one little-endian int64 (the caller has checked that they
    exist): straight-line loads at an unsigned index (no negative-index fix-up), which LLVM combines into one
    8-byte load."""
    p = np.uint64(start)
    return (np.int64(data[p]) | (np.int64(data[p + np.uint64(1)]) << 8) | (np.int64(data[p + np.uint64(2)]) << 16)
            | (np.int64(data[p + np.uint64(3)]) << 24) | (np.int64(data[p + np.uint64(4)]) << 32)
            | (np.int64(data[p + np.uint64(5)]) << 40) | (np.int64(data[p + np.uint64(6)]) << 48)
            | (np.int64(data[p + np.uint64(7)]) << 56))


@njit(cache=True, nogil=True)
def _low_bytes(n):
    """The int64 mask of the low ``1 <= n <= 8`` bytes (``_pack8(..) & _low_bytes(n)`` is ``_pack(.., n)``)."""
    return np.int64(np.uint64(0xFFFFFFFFFFFFFFFF) >> np.uint64(64 - 8 * n))


@njit(cache=True, nogil=True)
def _short_hash(key, n):
    """Hash (int64) of a piece of ``n <= 8`` bytes packed in ``key``."""
    h = (np.uint64(key) + np.uint64(n)) * _MIX
    return np.int64(h ^ (h >> np.uint64(32)))


@njit(cache=True, nogil=True)
def _long_hash(data, start, end):
    """Hash (int64) of uint8 ``data[start:end]`` (any length), eight bytes per step."""
    h = _FNV_OFFSET ^ np.uint64(end - start)
    i = start
    while i + 8 <= end:
        h = (h ^ np.uint64(_pack8(data, i))) * _MIX
        h ^= h >> np.uint64(32)
        i += 8
    if i < end:
        if i + 8 <= data.shape[0]:
            w = _pack8(data, i) & _low_bytes(end - i)
        else:
            w = _pack(data, i, end - i)
        h = (h ^ np.uint64(w)) * _MIX
        h ^= h >> np.uint64(32)
    return np.int64(h)


@njit(cache=True, nogil=True)
def _build_short_table(tb, tb_off, ids, size):
    """The shortcut table of tokens of at most 8 bytes: ``size`` slots (power of
    two, > 2 x entries) of two int64, ``[packed bytes, length << 32 | id]``
    (-1 = empty); see the module notes."""
    sc = np.zeros(2 * size, np.int64)
    for s in range(size):
        sc[2 * s + 1] = -1
    mask = size - 1
    for i in range(ids.shape[0]):
        t = ids[i]
        n = tb_off[t + 1] - tb_off[t]
        key = _pack(tb, tb_off[t], n)
        s = _short_hash(key, n) & mask
        while sc[2 * s + 1] != -1:
            s = (s + 1) & mask
        sc[2 * s] = key
        sc[2 * s + 1] = (n << 32) | np.int64(t)
    return sc


@njit(cache=True, nogil=True)
def _build_long_table(tb, tb_off, ids, size):
    """The shortcut table of tokens longer than 8 bytes: ``size`` slots (power of
    two, > 2 x entries) of four int64 ``[hash, length << 32 | id (-1 = empty),
    offset in tb, 0]``; see the module notes."""
    sc = np.zeros(4 * size, np.int64)
    for s in range(size):
        sc[4 * s + 1] = -1
    mask = size - 1
    for i in range(ids.shape[0]):
        t = ids[i]
        h = _long_hash(tb, tb_off[t], tb_off[t + 1])
        s = (h ^ (h >> 31)) & mask
        while sc[4 * s + 1] != -1:
            s = (s + 1) & mask
        sc[4 * s] = h
        sc[4 * s + 1] = ((tb_off[t + 1] - tb_off[t]) << 32) | np.int64(t)
        sc[4 * s + 2] = tb_off[t]
    return sc


@njit(cache=True, nogil=True)
def _short_lookup(sc, key, n, h):
    """The id of the reachable token of ``n <= 8`` bytes packed in ``key`` (hash
    ``h``), or -1."""
    mask = (sc.shape[0] >> 1) - 1
    s = h & mask
    want = np.int64(n) << 32
    while True:
        meta = sc[2 * s + 1]
        if meta == -1:
            return np.int32(-1)
        if sc[2 * s] == key and (meta & ~_LOW32) == want:
            return np.int32(meta & _LOW32)
        s = (s + 1) & mask


@njit(cache=True, nogil=True)
def _long_lookup(sc, tb, text, start, end, h):
    """The id of the reachable token spelled by uint8 ``text[start:end]`` (longer
    than 8 bytes, hash ``h``), or -1."""
    mask = (sc.shape[0] >> 2) - 1
    s = (h ^ (h >> 31)) & mask
    n = end - start
    while True:
        meta = sc[4 * s + 1]
        if meta == -1:
            return np.int32(-1)
        if sc[4 * s] == h and (meta >> 32) == n:
            t = np.int32(meta & _LOW32)
            o = sc[4 * s + 2]
            same = True
            i = 0
            while i + 8 <= n:  # eight bytes per compare, then the tail
                if _pack8(tb, o + i) != _pack8(text, start + i):
                    same = False
                    break
                i += 8
            if same:
                for j in range(i, n):
                    if tb[o + j] != text[start + j]:
                        same = False
                        break
            if same:
                return t
        s = (s + 1) & mask


@njit(cache=True, nogil=True)
def _filtered_lookup(table, bits, use_bits, left, right):
    """``_pair_lookup``, first testing the pair's bit in the filter ``bits`` when
    ``use_bits`` (a clear bit: no merge, without probing the table)."""
    if use_bits:
        b = _pair_bit(left, right)
        if (bits[b >> 6] >> np.uint64(b & 63)) & np.uint64(1) == 0:
            return np.int64(-1)
    return _pair_lookup(table, left, right)


@njit(cache=True, nogil=True, inline="always")
def _merge_scan(buf, a, n, table, ranks, bits, use_bits):
    """Merges on int32 ``buf[a:a+n]`` in place for short sequences; int64 ``ranks``
    (>= n) is scratch holding the table value of each adjacent pair. Each step
    merges the leftmost pair of lowest rank and re-looks-up only its two
    neighbours; by the module notes this is the reference's order. With
    ``use_bits``, lookups go through the pair filter ``bits`` first (the
    supermerges: most adjacent pairs of a run have none). Returns the new length."""
    none = np.int64(0x7FFFFFFFFFFFFFFF)
    for i in range(n - 1):
        v = _filtered_lookup(table, bits, use_bits, buf[a + i], buf[a + i + 1])
        ranks[i] = v if v >= 0 else none
    while n >= 2:
        best = none
        at = -1
        for i in range(n - 1):
            if ranks[i] < best:
                best = ranks[i]
                at = i
        if at < 0:
            break
        buf[a + at] = np.int32(best & _LOW32)
        for i in range(at + 1, n - 1):
            buf[a + i] = buf[a + i + 1]
            ranks[i] = ranks[i + 1]
        n -= 1
        if at + 1 < n:
            v = _filtered_lookup(table, bits, use_bits, buf[a + at], buf[a + at + 1])
            ranks[at] = v if v >= 0 else none
        else:
            ranks[at] = none
        if at > 0:
            v = _filtered_lookup(table, bits, use_bits, buf[a + at - 1], buf[a + at])
            ranks[at - 1] = v if v >= 0 else none
    return n


@njit(cache=True, nogil=True)
def _merge_three(buf, a, table, bits):
    """The merges of int32 ``buf[a:a+3]`` in place (the order of :func:`_merge_scan`, lookups through the pair
    filter ``bits``), without its scratch and loops: the lower of the two pairs (the left one on a tie), then the
    one pair left. For the supermerge segments of three tokens. Returns the new length."""
    v1 = _filtered_lookup(table, bits, 1, buf[a], buf[a + 1])
    v2 = _filtered_lookup(table, bits, 1, buf[a + 1], buf[a + 2])
    if v1 < 0 and v2 < 0:
        return 3
    if v2 < 0 or (v1 >= 0 and v1 <= v2):
        buf[a] = np.int32(v1 & _LOW32)
        buf[a + 1] = buf[a + 2]
    else:
        buf[a + 1] = np.int32(v2 & _LOW32)
    v = _filtered_lookup(table, bits, 1, buf[a], buf[a + 1])
    if v < 0:
        return 2
    buf[a] = np.int32(v & _LOW32)
    return 1


@njit(cache=True, nogil=True)
def _tree_set(tree, size, leaf, key):
    """Set leaf ``leaf`` of the tournament tree ``tree`` (int64, leaves from
    ``size``) to ``key`` and restore the minima above it, stopping
    where an ancestor already holds the new minimum."""
    k = size + leaf
    tree[k] = key
    while k > 1:
        sib = tree[k ^ 1]
        k >>= 1
        m = key if key < sib else sib
        if tree[k] == m:
            break
        tree[k] = m
        key = m


@njit(cache=True, nogil=True, inline="always")
def _tree_leaves(buf, a, n, table, t, size, nid):
    """The leaves of the tournament tree ``t`` (``t[size + i]``, ``rank << 32 | i`` or
    INT64_MAX) and ``nid`` from one lookup per pair of int32 ``buf[a:a+n]``; the key of
    each pair that merges is also written to ``t[0], t[1], ...`` in order (the few-pairs
    list of :func:`_merge_few`; ``n <= size``, so it never reaches the leaves). Returns
    how many pairs merge."""
    none = np.int64(0x7FFFFFFFFFFFFFFF)
    c = 0
    for i in range(n - 1):
        v = _pair_lookup(table, buf[a + i], buf[a + i + 1])
        if v >= 0:
            key = ((v >> 32) << 32) | i
            t[size + i] = key
            t[c] = key
            c += 1
            nid[i] = np.int32(v & _LOW32)
        else:
            t[size + i] = none
    return c


@njit(cache=True, nogil=True)
def _merge_few(buf, a, n, table, cand, c, nid):
    """Merges on int32 ``buf[a:a+n]`` while few pairs merge (module note (8)): ``cand[:c]``
    (int64) lists the keys ``rank << 32 | i`` of the pairs that merge, ``nid[i]`` their new
    ids. Each step takes the smallest key (the lowest rank, leftmost), marks the right node
    gone (-1 in ``buf``, positions never move) and looks up the merged node's two new
    pairs; at the end the nodes left are compacted. Stops early, compacted, when the list
    would outgrow ``_FEW_PAIRS`` or after ``_FEW_MERGES`` merges (each walk over gone
    nodes stays short). Returns ``n' << 1 | done``: the new length and 1 when no pair is
    left, 0 when the caller must go on with the tree. Relies on every id in ``buf[a:a+n]`` being >= 0 (true: a
    text's bytes and every merge map to ids), since -1 is the mark of a gone node."""
    done = 1
    gone = 0
    while c > 0:
        q = 0
        for r in range(1, c):
            if cand[r] < cand[q]:
                q = r
        i = np.int64(cand[q] & _LOW32)
        new = nid[i]
        j = i + 1
        while buf[a + j] < 0:
            j += 1
        buf[a + i] = new
        buf[a + j] = -1
        gone += 1
        m = j + 1
        while m < n and buf[a + m] < 0:
            m += 1
        p = i - 1
        while p >= 0 and buf[a + p] < 0:
            p -= 1
        # drop the merged pair, the one on its left (changed) and the one on its right (gone)
        w = 0
        for r in range(c):
            pos = cand[r] & _LOW32
            if pos != i and pos != p and pos != j:
                cand[w] = cand[r]
                w += 1
        c = w
        if m < n:
            v = _pair_lookup(table, new, buf[a + m])
            if v >= 0:
                cand[c] = ((v >> 32) << 32) | i
                nid[i] = np.int32(v & _LOW32)
                c += 1
        if p >= 0:
            v = _pair_lookup(table, buf[a + p], new)
            if v >= 0:
                cand[c] = ((v >> 32) << 32) | p
                nid[p] = np.int32(v & _LOW32)
                c += 1
        if c > _FEW_PAIRS or gone >= _FEW_MERGES:
            done = 0 if c > 0 else 1
            break
    w = a
    for k in range(a, a + n):
        if buf[k] >= 0:
            buf[w] = buf[k]
            w += 1
    return ((w - a) << 1) | done


@njit(cache=True, nogil=True, inline="always")
def _merge_tree(buf, a, n, table, nxt, prv, tree, nid):
    """Merges on int32 ``buf[a:a+n]`` in place (the order of ``_merge_scan``: the
    lowest rank, leftmost first), with the pairs' keys in a tournament tree: a
    merge costs three O(log n) leaf updates instead of an O(n) scan and shift.
    When at most ``_FEW_PAIRS`` pairs (and a quarter of them) merge at the start, :func:`_merge_few` works on
    their list instead and builds no tree unless it stops early (module note (8)).

    Scratch: int32 ``nxt``/``prv``/``nid`` (>= n: the linked list of nodes, the new
    id of each node's pair) and int64 ``tree`` (2 P entries, P a power of two >= n;
    only the first 2 P' are used, P' the power of two >= n). Leaf i holds the pair
    starting at node i as ``rank << 32 | i`` (so equal ranks compare leftmost
    first), or INT64_MAX when there is no merge or node i is gone. Returns the
    new length.
    """
    if n < 2:
        return n
    none = np.int64(0x7FFFFFFFFFFFFFFF)
    size = 1
    while size < n:
        size <<= 1
    t = tree  # the first 2 * size entries (a slice would cost a reference count per call)
    c = _tree_leaves(buf, a, n, table, t, size, nid)
    if c <= _FEW_PAIRS and 4 * c <= n:
        if c == 0:
            return n
        got = _merge_few(buf, a, n, table, t, np.int64(c), nid)  # c may be typed the literal 0: one signature
        n = got >> 1
        if (got & 1) != 0 or n < 2:
            return n
        size = 1
        while size < n:
            size <<= 1
        _tree_leaves(buf, a, n, table, t, size, nid)
    for i in range(n - 1, size):
        t[size + i] = none
    for k in range(size - 1, 0, -1):
        x = t[2 * k]
        y = t[2 * k + 1]
        t[k] = x if x < y else y
    for i in range(n):
        nxt[i] = i + 1
        prv[i] = i - 1
    while t[1] != none:
        i = np.int64(t[1] & _LOW32)
        j = nxt[i]
        new = nid[i]
        buf[a + i] = new
        m = nxt[j]
        nxt[i] = m
        _tree_set(t, size, j, none)
        key = none
        if m < n:
            prv[m] = i
            v = _pair_lookup(table, new, buf[a + m])
            if v >= 0:
                key = ((v >> 32) << 32) | i
                nid[i] = np.int32(v & _LOW32)
        _tree_set(t, size, i, key)
        p = prv[i]
        if p >= 0:
            key = none
            v = _pair_lookup(table, buf[a + p], new)
            if v >= 0:
                key = ((v >> 32) << 32) | p
                nid[p] = np.int32(v & _LOW32)
            _tree_set(t, size, p, key)
    w = a
    i = 0
    while i < n:
        buf[w] = buf[a + i]
        w += 1
        i = nxt[i]
    return w - a


@njit(cache=True, nogil=True, inline="always")
def _halve_runs(buf, a, n, table):
    """Module note (5): while int32 ``buf[a:a+n]`` is one id ``x`` repeated, apply the
    merge of ``x x`` arithmetically (``n // 2`` new ids, then ``x`` when n is odd).
    Returns the new length (unchanged when the sequence is not one repeated id)."""
    while n >= 2:
        x = buf[a]
        for i in range(1, n):
            if buf[a + i] != x:
                return n
        v = _pair_lookup(table, x, x)
        if v < 0:
            return n
        new = np.int32(v & _LOW32)
        # rank mode (module note (6)): the step is the reference's only if neither pair it makes
        # (new x, new new) has a lower rank than x x; otherwise the general loop decides
        v2 = _pair_lookup(table, new, x)
        v3 = _pair_lookup(table, new, new)
        if (v2 >= 0 and v2 < v) or (v3 >= 0 and v3 < v):
            return n
        half = n >> 1
        for i in range(half):
            buf[a + i] = new
        if n & 1:
            buf[a + half] = x
        n = half + (n & 1)
    return n


@njit(cache=True, nogil=True)
def _merge_long(buf, a, n, table, nxt, prv, tree, nid):
    """Merges on a long int32 ``buf[a:a+n]`` in place: the arithmetic step of a
    sequence of one repeated id (:func:`_halve_runs`), then the tournament tree
    (:func:`_merge_tree`, same scratch). Returns the new length."""
    n = _halve_runs(buf, a, n, table)
    return _merge_tree(buf, a, n, table, nxt, prv, tree, nid)


@njit(cache=True, nogil=True)
def _tree_size(n):
    """Entries of the ``tree`` scratch of :func:`_merge_tree` for sequences of up to ``n`` ids."""
    size = 1
    while size < n:
        size <<= 1
    return 2 * size


@njit(cache=True, nogil=True)
def _merge(buf, a, n, table, short_limit, ranks, nxt, prv, tree, nid):
    """Merges on int32 ``buf[a:a+n]`` in place: the scan loop up to ``short_limit``
    (int64 scratch ``ranks`` >= n), the long loop above (scratch as in
    ``_merge_tree``). Returns the new length."""
    if n < 2:
        return n
    if n <= short_limit:
        return _merge_scan(buf, a, n, table, ranks, ranks, 0)
    return _merge_long(buf, a, n, table, nxt, prv, tree, nid)


@njit(cache=True, nogil=True)
def _merge_one(ids, table, short_limit):
    """Merges applied to a copy of int32 ``ids`` (for tests and single runs)."""
    n = ids.shape[0]
    buf = ids.copy()
    cap = max(n, 1)
    m = _merge(buf, 0, n, table, short_limit, np.empty(cap, np.int64), np.empty(cap, np.int32),
               np.empty(cap, np.int32), np.empty(_tree_size(cap), np.int64), np.empty(cap, np.int32))
    return buf[:m].copy()


@njit(cache=True, nogil=True)
def _encode_docs(text, piece_ends, doc_pieces, byte_ids, sc_short, sc_long, tb,
                 r_table, s_table, s_bits, flags, chars, use_shortcut, use_super, short_limit):
    """Encode a batch of documents.

    Reads: uint8 ``text`` (the documents' UTF-8 bytes, concatenated), int64
    ``piece_ends`` (each pretoken's end offset in code points from the start of
    its document, all documents in order; the driver has checked that each
    document's last end is its length), int64 ``doc_pieces`` (n_docs + 1 offsets
    into ``piece_ends``), int32
    ``byte_ids`` (256: atomic id of each byte), the two shortcut tables and the
    flat vocabulary ``tb``, the rank tables, uint8 ``flags`` per regular id (1:
    eligible), the
    character table ``chars`` (:func:`_build_char_table`; ``_CHAR_BLOCKS`` entries of
    -1: none) and int64 switches. ``s_bits`` is the supermerges' pair filter
    (:func:`_build_pair_bits`) followed by the cross filter (the module notes): runs
    are cut where the cross filter says no supermerge can join the two sides, and a
    segment none of whose pairs passes the pair filter is left as it is. Returns
    ``(ids int32, offsets int64 of n_docs + 1)``; document d's ids are
    ``ids[offsets[d]:offsets[d + 1]]`` (``ids`` is a view of the output buffer).
    Supermerge runs never cross documents.
    """
    n_pieces = piece_ends.shape[0]
    n_text = text.shape[0]
    n_docs = doc_pieces.shape[0] - 1
    # byte boundaries of the pretokens (code points -> bytes by the UTF-8 lead bytes;
    # for ASCII text, code points are bytes)
    bounds = np.empty(n_pieces + 1, np.int64)
    bounds[0] = 0
    longest = 1
    n_chars = 0
    for d in range(n_docs):
        if doc_pieces[d + 1] > doc_pieces[d]:
            n_chars += piece_ends[doc_pieces[d + 1] - 1]
        if doc_pieces[d + 1] - doc_pieces[d] > longest:
            longest = doc_pieces[d + 1] - doc_pieces[d]
    pos = 0
    if n_chars == text.shape[0]:
        for d in range(n_docs):
            prev_end = 0
            for k in range(doc_pieces[d], doc_pieces[d + 1]):
                e = piece_ends[k]
                if e - prev_end > longest:
                    longest = e - prev_end
                bounds[k + 1] = pos + e
                prev_end = e
            pos += prev_end
    else:
        for d in range(n_docs):
            prev_end = 0
            for k in range(doc_pieces[d], doc_pieces[d + 1]):
                start = pos
                for _ in range(piece_ends[k] - prev_end):
                    b = text[pos]
                    if b < 0x80:
                        pos += 1
                    elif b < 0xE0:
                        pos += 2
                    elif b < 0xF0:
                        pos += 3
                    else:
                        pos += 4
                prev_end = piece_ends[k]
                bounds[k + 1] = pos
                if pos - start > longest:
                    longest = pos - start
    heap = np.empty(min(longest, max(short_limit, 1)), np.int64)  # the scan loop's pair values
    if longest > short_limit:
        nxt = np.empty(longest, np.int32)
        prv = np.empty(longest, np.int32)
        nid = np.empty(longest, np.int32)
        tree = np.empty(_tree_size(longest), np.int64)
    else:
        nxt = np.empty(1, np.int32)
        prv = np.empty(1, np.int32)
        nid = np.empty(1, np.int32)
        tree = np.empty(2, np.int64)
    out = np.empty(max(pos, 1), np.int32)
    out_off = np.zeros(n_docs + 1, np.int64)
    # miss cache (see the module notes): direct-mapped by hash; per slot the
    # hash, the piece's byte start and length, and where its ids sit in ``out``
    mc_bits = 6
    while mc_bits < _MISS_CACHE_BITS and (4 << mc_bits) < n_pieces:
        mc_bits += 1
    mc_mask = (1 << mc_bits) - 1
    mc = np.full(4 << mc_bits, -1, np.int64)
    # np.int64(0), not 0: a variable holding the literal 0 on some path would make the helpers it is passed to
    # compile once more for the literal (Numba specialises calls on literal arguments)
    w = np.int64(0)
    for d in range(n_docs):
        run_start = w
        run_len = np.int64(0)
        run_can = 0  # 1: some adjacent pair of the run may have a supermerge
        for k in range(doc_pieces[d], doc_pieces[d + 1]):
            s = bounds[k]
            e = bounds[k + 1]
            n = np.int64(0)
            cached = False
            slot = 0
            h = np.int64(0)
            if use_shortcut:
                if e - s <= 8:
                    if s + 8 <= n_text:  # one 8-byte load and a mask: no loop over the piece's length
                        key = _pack8(text, s) & _low_bytes(e - s)
                    else:
                        key = _pack(text, s, e - s)
                    h = _short_hash(key, e - s)
                    t = _short_lookup(sc_short, key, e - s, h)
                else:
                    h = _long_hash(text, s, e)
                    t = _long_lookup(sc_long, tb, text, s, e, h)
                if t >= 0:
                    out[w] = t
                    n = 1
                else:
                    slot = 4 * ((h ^ (h >> 29)) & mc_mask)
                    if mc[slot] == h and mc[slot + 2] == e - s:
                        o = mc[slot + 1]
                        cached = True
                        for i in range(e - s):
                            if text[o + i] != text[s + i]:
                                cached = False
                                break
                        if cached:
                            n = mc[slot + 3] >> 32
                            src = mc[slot + 3] & _LOW32
                            for i in range(n):
                                out[w + i] = out[src + i]
            if n == 0:
                n = _initial_ids(text, s, e, byte_ids, chars, out, w)
                if n <= short_limit:
                    n = _merge_scan(out, w, n, r_table, heap, s_bits, 0)
                else:
                    n = _merge_long(out, w, n, r_table, nxt, prv, tree, nid)
            # one eligible token: it joins the run (models without supermerges have no runs: a plain BPE model
            # marks most ids eligible, and tracking their runs cost it 7-12 % of the kernel's time)
            one = use_super != 0 and n == 1 and (flags[out[w]] & 1) != 0
            soft = 0
            pair = 0
            if one:
                # a segment of the run goes on unless no supermerge can ever join its two sides (module notes);
                # no branch on the filter bits (they are hard to predict): the state is updated arithmetically
                b = _pair_bit(out[max(w - 1, 0)], out[w])
                sh = np.uint64(b & 63)
                soft = np.int64((s_bits[_CROSS_WORDS + (b >> 6)] >> sh) & np.uint64(1)) & np.int64(run_len > 0)
                pair = np.int64((s_bits[b >> 6] >> sh) & np.uint64(1))
            if run_can > soft:  # the segment before ends here and may have a supermerge
                if run_len == 2:  # most often: one lookup, no call
                    v = _pair_lookup(s_table, out[run_start], out[run_start + 1])
                    m = 2
                    if v >= 0:
                        out[run_start] = np.int32(v & _LOW32)
                        m = 1
                elif run_len == 3:
                    m = _merge_three(out, run_start, s_table, s_bits)
                elif run_len <= short_limit:
                    m = _merge_scan(out, run_start, run_len, s_table, heap, s_bits, 1)
                else:
                    m = _merge_long(out, run_start, run_len, s_table, nxt, prv, tree, nid)
                if m < run_len:
                    dst = run_start + m
                    for i in range(n):
                        out[dst + i] = out[w + i]
                    w = dst
            if one:
                run_can = soft & (run_can | pair)
                run_start = run_start if soft else w
                run_len = run_len * soft + 1
                w += 1
                continue
            run_len = 0
            run_can = 0
            if use_shortcut and n >= 2 and not cached and w <= _LOW32:
                # ids at out[w:w+n] stay put from here on (later runs start after them)
                mc[slot] = h
                mc[slot + 1] = s
                mc[slot + 2] = e - s
                mc[slot + 3] = (np.int64(n) << 32) | w
            w += n
        if run_can:
            # the segment at the document's end: the same dispatch as in the loop, written out again on purpose
            # (moving both into one helper call measured ~9 % slower on superword models, 35.2 -> 38.4 ms per
            # 2 MB; a call passes each array as seven words)
            if run_len == 2:
                v = _pair_lookup(s_table, out[run_start], out[run_start + 1])
                m = 2
                if v >= 0:
                    out[run_start] = np.int32(v & _LOW32)
                    m = 1
            elif run_len == 3:
                m = _merge_three(out, run_start, s_table, s_bits)
            elif run_len <= short_limit:
                m = _merge_scan(out, run_start, run_len, s_table, heap, s_bits, 1)
            else:
                m = _merge_long(out, run_start, run_len, s_table, nxt, prv, tree, nid)
            w = run_start + m
        out_off[d + 1] = w
    return out[:w], out_off
