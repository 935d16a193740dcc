"""tiktoken's own vocabularies (``o200k_base``, ``cl100k_base``, any ``.tiktoken`` rank file) in fastsw.

:meth:`fastsw.Tokenizer.load_tiktoken` reads a rank file (``base64(token) rank`` per line, gzip
accepted) and :meth:`fastsw.Tokenizer.from_tiktoken` takes a ``tiktoken.Encoding``; both return a
:class:`TiktokenTokenizer`, a :class:`fastsw.Tokenizer` in *rank mode* whose ids are tiktoken's,
token for token. Nothing is downloaded: the caller gives the file or the Encoding.

Rank semantics (tiktoken's, not merge rules): a piece that is a token is that token (the whole-piece
shortcut, for every token); otherwise, starting from its bytes, the adjacent pair whose
*concatenated bytes* have the lowest rank is joined, the leftmost on equal ranks, until no
concatenation is a token. A token can be split into two tokens in several ways, so one merge rule
per token would give other ids. Rank mode registers every two-way split: ``(x, y) -> (rank t, t)``
for each token ``t = x + y`` with ``x`` and ``y`` tokens (o200k_base: 446,189 splits, 143,514 tokens
with more than one; cl100k_base: 233,378 and 76,836).

Two paths, one answer: the reference path (``backend="python"``) is
:func:`fastsw.io.interop.rank_table_encode`, tiktoken's loop over byte strings and the rank dict; the
fast path is the encoder kernel of :mod:`fastsw.encoding.encode_fast` with the split table (module note (6)
of :mod:`fastsw.encoding.encode_kernels` says why its loops give tiktoken's order). Tests assert both give
tiktoken's ids on every corpus language, Hypothesis text, special tokens and pathological inputs.

Pre-tokenization: ``pattern="o200k"`` is fastsw's ``GPT4O_PATTERN`` (the same string as tiktoken's),
``"cl100k"`` is :data:`CL100K_PATTERN`, ``"cl100k_legacy"`` its older spelling (Llama 3's), ``"gpt2"`` GPT-2's;
all run on the compiled scanner in ``simple`` mode, and so does any regex that means one of them however it is
spelled (:func:`fastsw.pretokenizers.pretokenize.compiled_pattern`). Any other regex runs on ``regex``; note
that tiktoken drops text its pattern does not match, fastsw keeps it as a pretoken of its own
(``fastsw.pretokenizers.pretokenize.isolated_spans``), so for such patterns the
ids differ exactly where tiktoken loses text.

Design notes: see docs/internals.md, section "tiktoken vocabularies".
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import struct
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, cast

import numpy as np

from fastsw._config import cache_dir
from fastsw._types import PathLike
from fastsw.alphabet import ByteAlphabet, check_utf8
from fastsw.files import atomic_open
from fastsw.io.interop import rank_table_encode
from fastsw.pretokenizers.pretokenize import (
    CL100K_LEGACY_PATTERN,
    CL100K_PATTERN,
    GPT2_PATTERN,
    GPT4O_PATTERN,
    Pretokenizer,
)
from fastsw.tokenizer import Tokenizer

__all__ = [
    "TiktokenTokenizer",
    "load_tiktoken",
    "from_tiktoken",
    "read_rank_file",
    "check_ranks",
    "two_way_splits",
    "two_way_splits_numpy",
    "PATTERNS",
    "SPECIAL_TOKENS",
    "CL100K_PATTERN",
    "O200K_PATTERN",
    "CL100K_LEGACY_PATTERN",
    "GPT2_PATTERN",
    "bpe_openai_rank_file",
    "cache_dir",
    "KNOWN_RANK_FILES",
]

#: tiktoken's o200k_base pattern: fastsw's GPT-4o pattern, the same string.
O200K_PATTERN = GPT4O_PATTERN
#: The pattern names ``pattern=`` accepts (also with ``_base``): tiktoken's o200k_base and cl100k_base,
#: cl100k_base's older spelling (Llama 3's pattern; it cuts a whitespace run with a newline at the text's end
#: differently), and GPT-2's (r50k_base, p50k_base). All run on the compiled scanner.
PATTERNS = {
    "o200k": O200K_PATTERN,
    "cl100k": CL100K_PATTERN,
    "cl100k_legacy": CL100K_LEGACY_PATTERN,
    "gpt2": GPT2_PATTERN,
    "r50k": GPT2_PATTERN,
    "p50k": GPT2_PATTERN,
}
_VOCABULARY_OF = {"cl100k_legacy": "cl100k"}  # a pattern name -> the vocabulary whose special tokens it takes
#: The special tokens of each named encoding (tiktoken_ext.openai_public), used when
#: ``special_tokens=None``.
SPECIAL_TOKENS = {
    "o200k": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    "cl100k": {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    },
    "gpt2": {"<|endoftext|>": 50256},
    "r50k": {"<|endoftext|>": 50256},
    "p50k": {"<|endoftext|>": 50256},
}
#: OpenAI's rank files that fastsw knows, by the SHA-256 of their (uncompressed) content -- the hashes
#: tiktoken_ext.openai_public checks -- with the name of their pattern and special tokens.
KNOWN_RANK_FILES = {
    "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d": "o200k",
    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7": "cl100k",
}
_CACHE_VERSION = 2


# ---------------------------------------------------------------------------
# Rank files
# ---------------------------------------------------------------------------
def read_rank_file(path: PathLike) -> Tuple[List[bytes], bytes]:
    """``(tokens by rank, the file's raw bytes)`` of a ``.tiktoken`` rank file (gzip accepted),
    checked by :func:`check_ranks`; ``ValueError`` naming the file and line for bad input.

    >>> tokens, raw = read_rank_file(bpe_openai_rank_file("cl100k_base"))  # doctest: +SKIP
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise ValueError(f"cannot read the rank file {str(path)!r}: {e.strerror or e}") from None
    return _parse(raw, str(path))[0], raw


def _parse(raw: bytes, where: str) -> Tuple[List[bytes], Optional[Dict[bytes, int]]]:
    """``(tokens by rank, {token: rank} or None)`` of a rank file's bytes (gzip accepted)."""
    data = raw
    if raw[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise ValueError(f"{where}: not a valid gzip file ({e}); give the .tiktoken file or its .gz") from None
    fast = _parse_plain(data)
    if fast is not None:
        return fast
    return _parse_lines(data, where), None


def _parse_lines(data: bytes, where: str) -> List[bytes]:
    """The tokens by rank of a rank file's (uncompressed) bytes, line by line: ``ValueError`` naming the line of
    any fault."""
    pairs: Dict[bytes, int] = {}
    line_of: Dict[bytes, int] = {}
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 2:
            raise ValueError(
                f"{where}, line {number}: expected 'base64-token rank', got {line[:60]!r}; "
                "is this a .tiktoken rank file?"
            )
        b64, rank = fields
        try:
            token = base64.b64decode(b64, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError(
                f"{where}, line {number}: {b64[:60]!r} is not valid base64; each line is 'base64(token bytes) rank'"
            ) from None
        try:
            r = int(rank)
        except ValueError:
            raise ValueError(f"{where}, line {number}: rank {rank[:30]!r} is not an integer") from None
        if token in pairs:
            raise ValueError(
                f"{where}, line {number}: token {token!r} appears twice (also on line "
                f"{line_of[token]}); each token must have exactly one rank"
            )
        pairs[token] = r
        line_of[token] = number
    return check_ranks(pairs, where)


def _parse_plain(data: bytes) -> Optional[Tuple[List[bytes], Dict[bytes, int]]]:
    """The tokens by rank of a rank file written the way tiktoken writes one (``base64 rank``, one space, one
    newline after each line but perhaps the last, strict base64) with its ``{token: rank}`` dict, read in one pass
    of the extension (``parse_rank_lines``), or None for any other file (:func:`_parse` then reads it line by line
    and names what is wrong). Without the extension, :func:`_parse_plain_python`."""
    try:
        from fastsw.pretokenizers._pretok import parse_rank_lines
    except ImportError:  # a pure-Python install
        return _parse_plain_python(data)
    got = parse_rank_lines(data)
    if got is None:
        return None
    tb, tb_off, ranks = got
    n = ranks.shape[0]
    if not np.array_equal(ranks, np.arange(n)):  # lines out of rank order
        offs = tb_off.tolist()
        return _rank_ordered([tb[a:b] for a, b in zip(offs, offs[1:])], ranks)
    tokens, shortcut = _token_list(tb, tb_off)
    lens = np.diff(tb_off)
    if len(shortcut) < n or lens.min() == 0:
        return None
    if len(set(b"".join([tokens[r] for r in np.flatnonzero(lens == 1).tolist()]))) < 256:
        return None
    return tokens, shortcut


def _token_list(tb: bytes, tb_off: np.ndarray) -> Tuple[List[bytes], Dict[bytes, int]]:
    """``(tokens, {token: id})`` of a byte table (token ``t`` is ``tb[tb_off[t]:tb_off[t + 1]]``), the dict as
    long as the list when the tokens are distinct: one loop of the extension (``rank_tokens``), else the slices
    and ``dict(zip(...))``."""
    try:
        from fastsw.pretokenizers._pretok import rank_tokens
    except ImportError:  # a pure-Python install
        offs = tb_off.tolist()
        tokens = [tb[a:b] for a, b in zip(offs, offs[1:])]
        return tokens, dict(zip(tokens, range(len(tokens))))
    return rank_tokens(tb, np.ascontiguousarray(tb_off, np.int64))


def _parse_plain_python(data: bytes) -> Optional[Tuple[List[bytes], Dict[bytes, int]]]:
    """:func:`_parse_plain` with a few whole-file operations of Python (``bytes.split``, ``binascii``): the
    extension's twin."""
    fields = data.split()
    if not fields or len(fields) % 2:
        return None
    parts: List[bytes] = [b""] * (2 * len(fields))
    parts[0::2] = fields
    parts[1::2] = [b" ", b"\n"] * (len(fields) // 2)
    rebuilt = b"".join(parts)
    if data != rebuilt and data != rebuilt[:-1]:
        return None  # other whitespace, a blank line, a line of one or three fields: the line-by-line reader
    numbers = fields[1::2]
    if not all(r.isdigit() and len(r) <= 18 for r in numbers):
        return None  # a sign, an underscore, a rank beyond int64: the line-by-line reader
    a2b = binascii.a2b_base64
    try:
        tokens = [a2b(b64, strict_mode=True) for b64 in fields[0::2]]
        ranks = np.array(list(map(int, numbers)), np.int64)
    except (binascii.Error, ValueError, OverflowError):
        return None
    return _rank_ordered(tokens, ranks)


def _rank_ordered(tokens: List[bytes], ranks: np.ndarray) -> Optional[Tuple[List[bytes], Dict[bytes, int]]]:
    """``(tokens in the order of their ranks, {token: rank})``, when the ranks are ``0 .. n-1`` and the tokens are
    what :func:`check_ranks` asks for (distinct, not empty, every single byte among them); else None, and
    :func:`check_ranks` says what is wrong."""
    ordered = _rank_order(tokens, ranks)
    if ordered is None:
        return None
    shortcut = dict(zip(ordered, range(len(ordered))))
    return (ordered, shortcut) if len(shortcut) == len(ordered) else None  # else two lines give one token


def _rank_order(tokens: List[bytes], ranks: np.ndarray) -> Optional[List[bytes]]:
    """``tokens`` in the order of their ``ranks`` (distinct tokens), when the ranks are ``0 .. n-1``, no token is
    empty and every single byte is a token; else None. The checks of :func:`check_ranks` with whole-array
    operations."""
    n = len(tokens)
    if n == 0 or ranks.shape[0] != n:
        return None
    if not np.array_equal(ranks, np.arange(n)):  # the usual file is in rank order
        order = np.argsort(ranks, kind="stable")
        if not np.array_equal(ranks[order], np.arange(n)):
            return None
        tokens = [tokens[i] for i in order.tolist()]
    lens = np.fromiter(map(len, tokens), np.int64, n)
    if lens.min() == 0:
        return None
    singles = b"".join([tokens[r] for r in np.flatnonzero(lens == 1).tolist()])
    if len(set(singles)) < 256:
        return None
    return tokens


def check_ranks(ranks: Mapping[bytes, int], where: str = "rank table") -> List[bytes]:
    """The tokens of a ``bytes -> rank`` table in rank order, after checking what fastsw's ids rely
    on: ranks are ``0 .. n-1`` (no duplicates, no gaps) and all 256 single bytes are tokens.

    >>> check_ranks({bytes([b]): b for b in range(256)})[:2]
    [b'\\x00', b'\\x01']
    >>> check_ranks({b"a": 0, b"b": 0})
    Traceback (most recent call last):
    ...
    ValueError: rank table: rank 0 is given to two tokens (b'a' and b'b'); ranks must be unique
    """
    if not ranks:
        raise ValueError(f"{where}: no tokens; a rank file has one 'base64-token rank' line per token")
    keys = list(ranks)
    if set(map(type, keys)) == {bytes} and set(map(type, ranks.values())) == {int}:
        try:
            values = np.fromiter(ranks.values(), np.int64, len(keys))
        except OverflowError:
            values = np.zeros(0, np.int64)  # a rank beyond int64: the loop below names it
        fast = _rank_order(keys, values)
        if fast is not None:
            return fast
    tokens: List[Optional[bytes]] = [None] * len(ranks)
    for token, r in ranks.items():
        if not isinstance(token, bytes) or isinstance(r, bool) or not isinstance(r, int):
            raise ValueError(f"{where}: entries must be bytes -> int, got {token!r} -> {r!r}")
        if r < 0:
            raise ValueError(f"{where}: token {token!r} has the negative rank {r}; ranks are 0 .. n-1")
        if r >= len(tokens):
            continue  # a gap below: reported after the loop
        if tokens[r] is not None:
            raise ValueError(
                f"{where}: rank {r} is given to two tokens ({tokens[r]!r} and {token!r}); ranks must be unique"
            )
        tokens[r] = token
    if any(t is None for t in tokens):
        missing = [r for r, t in enumerate(tokens) if t is None]
        extra = sorted(r for r in ranks.values() if r >= len(tokens))
        dup = len(set(ranks.values())) < len(ranks)
        what = (
            f"rank {extra[0]} is given to two tokens"
            if dup and not extra
            else f"the ranks have gaps: {len(missing)} missing below {max(ranks.values())} (first {missing[0]})"
        )
        raise ValueError(
            f"{where}: {what}; fastsw uses ranks as token ids, so they must be 0 .. n-1 (renumber the file)"
        )
    full = cast(List[bytes], tokens)  # every rank has its token
    singles = {t[0] for t in full if len(t) == 1}
    if len(singles) < 256:
        missing_bytes = [b for b in range(256) if b not in singles]
        raise ValueError(
            f"{where}: {256 - len(singles)} single bytes are not tokens (first "
            f"{bytes([missing_bytes[0]])!r}); every byte must be a token, else some text "
            "could not be encoded"
        )
    if any(len(t) == 0 for t in full):
        raise ValueError(f"{where}: the empty byte string is not a token")
    return full


def two_way_splits(tokens: Sequence[bytes], rank_of: Mapping[bytes, int]) -> np.ndarray:
    """Every two-way split of every token: int32 array of shape ``(k, 3)``, rows ``(left, right,
    token)`` (ids = ranks) with ``tokens[left] + tokens[right] == tokens[token]``, by token then split.

    >>> two_way_splits([b"a", b"b", b"ab"], {b"a": 0, b"b": 1, b"ab": 2}).tolist()
    [[0, 1, 2]]
    """
    rows: List[int] = []
    get = rank_of.get
    for t, tb in enumerate(tokens):
        for i in range(1, len(tb)):
            x = get(tb[:i])
            if x is not None:
                y = get(tb[i:])
                if y is not None:
                    rows += (x, y, t)
    return np.array(rows, dtype=np.int32).reshape(-1, 3)


_HASH_BASE = np.uint64(0x100000001B3)
_MIX = np.uint64(0x9E3779B97F4A7C15)  # odd (2**64 / golden ratio): a key's slot is the top bits of key * _MIX


def _hash_table(keys: np.ndarray) -> np.ndarray:
    """An open-addressing table (linear probing) of distinct uint64 ``keys``, built with numpy: each slot holds
    the index of a key or -1; its size is a power of two at least 4 x the keys (probes stay short). Every round
    places, for each slot asked for, one of the keys that ask for it; the others go on to the next slot. Used by
    :func:`_hash_find` (1.2 M lookups among 200k keys: about 4 x sooner than ``np.searchsorted`` on a sorted
    copy, CPU time, min of 5).

    >>> keys = np.array([7, 1 << 40, 3], np.uint64)
    >>> _hash_find(_hash_table(keys), keys, np.array([3, 5, 7], np.uint64)).tolist()
    [2, -1, 0]
    """
    bits = max(int(keys.shape[0] * 4).bit_length(), 4)
    table = np.full(1 << bits, -1, np.int64)
    with np.errstate(over="ignore"):
        slot = ((keys * _MIX) >> np.uint64(64 - bits)).astype(np.int64)
    pending = np.arange(keys.shape[0])
    while pending.shape[0]:
        at = slot[pending]
        free = table[at] == -1
        table[at[free]] = pending[free]  # of several keys asking for one slot, one is written last
        placed = table[at] == pending
        pending = pending[~placed]
        slot[pending] = (slot[pending] + 1) & (table.shape[0] - 1)
    return table


def _hash_find(table: np.ndarray, keys: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """For each of ``queries``, the index of the equal key in ``table`` (:func:`_hash_table` of ``keys``), or -1."""
    bits = table.shape[0].bit_length() - 1
    with np.errstate(over="ignore"):
        slot = ((queries * _MIX) >> np.uint64(64 - bits)).astype(np.int64)
    found = np.full(queries.shape[0], -1, np.int64)
    pending = np.arange(queries.shape[0] if keys.shape[0] else 0)
    while pending.shape[0]:
        entry = table[slot[pending]]
        hit = (entry >= 0) & (keys[entry] == queries[pending])
        found[pending[hit]] = entry[hit]
        pending = pending[(entry >= 0) & ~hit]  # an empty slot ends the search: not there
        slot[pending] = (slot[pending] + 1) & (table.shape[0] - 1)
    return found  # odd: the polynomial hash below is a bijection on each length


def two_way_splits_numpy(tokens: Sequence[bytes]) -> np.ndarray:
    """:func:`two_way_splits` of ``tokens`` (each token's rank is its index), the same array, with numpy: a
    polynomial hash (mod 2**64) of every prefix of every token, each suffix's hash from its prefix's and the
    token's, both looked up among the tokens' hashes (a hash table, :func:`_hash_table`), then every pair found
    checked byte for byte.
    About 2 x sooner than the dict loop on o200k_base (CPU time, min of 3); when two tokens share a hash (never seen), or the byte
    check finds a false match, it returns the dict loop's answer.

    >>> two_way_splits_numpy([b"a", b"b", b"ab", b"ba", b"aba"]).tolist()
    [[0, 1, 2], [1, 0, 3], [0, 3, 4], [2, 0, 4]]
    """
    n = len(tokens)
    lens = np.fromiter(map(len, tokens), np.int64, n)
    if n == 0 or lens.min() == 0:
        return two_way_splits(tokens, {t: r for r, t in enumerate(tokens)})
    off = np.zeros(n + 1, np.int64)
    np.cumsum(lens, out=off[1:])
    vals = np.frombuffer(b"".join(tokens), np.uint8).astype(np.uint64) + np.uint64(1)
    prefix = np.empty_like(vals)  # prefix[j]: the hash of token bytes from its start to j (included)
    starts = off[:-1]
    prefix[starts] = vals[starts]
    with np.errstate(over="ignore"):
        for k in range(1, int(lens.max())):
            idx = starts[lens > k] + k
            prefix[idx] = prefix[idx - 1] * _HASH_BASE + vals[idx]
        powers = np.ones(int(lens.max()) + 1, np.uint64)
        for k in range(1, powers.shape[0]):
            powers[k] = powers[k - 1] * _HASH_BASE
        whole = prefix[off[1:] - 1]
        ordered = np.sort(whole)
        if np.any(ordered[1:] == ordered[:-1]):
            return two_way_splits(tokens, {t: r for r, t in enumerate(tokens)})
        token_of = np.repeat(np.arange(n), lens)
        cut = np.arange(vals.shape[0]) - starts[token_of] + 1  # the prefix's length
        keep = cut < lens[token_of]
        token_of, cut, left_hash = token_of[keep], cut[keep], prefix[keep]
        right_hash = whole[token_of] - left_hash * powers[lens[token_of] - cut]

    table = _hash_table(whole)
    left = _hash_find(table, whole, left_hash)
    has = left >= 0
    token_of, cut, left, right = token_of[has], cut[has], left[has], _hash_find(table, whole, right_hash[has])
    has = (right >= 0) & (lens[left] == cut) & (lens[right] == lens[token_of] - cut)
    left, right, token_of, cut = left[has], right[has], token_of[has], cut[has]
    # byte for byte: position p of the token against position p of left + right
    size = lens[token_of]
    row = np.repeat(np.arange(size.shape[0]), size)
    p = np.arange(row.shape[0]) - np.repeat(np.cumsum(size) - size, size)
    first = p < cut[row]
    source = np.where(first, off[left[row]] + p, off[right[row]] + p - cut[row])
    data = np.frombuffer(b"".join(tokens), np.uint8)
    if not np.array_equal(data[source], data[off[token_of[row]] + p]):
        return two_way_splits(tokens, {t: r for r, t in enumerate(tokens)})
    return np.stack((left, right, token_of), axis=1).astype(np.int32)


# ---------------------------------------------------------------------------
# The cache (keyed by the source's SHA-256)
# ---------------------------------------------------------------------------
_CACHE_MAGIC = b"fastsw tiktoken\n"
#: A cache file's header: magic, version, tokens, token bytes, splits, the source's SHA-256, the SHA-256 of all
#: that follows the header (then ``tb_off`` int64, the splits int32 ``(k, 3)``, the tokens' bytes).
_CACHE_HEADER = struct.Struct("<16s4q32s32s")


def _read_cache(
    path: Path, source: str, tokens: bool = True
) -> Optional[Tuple[Optional[Tuple[List[bytes], Dict[bytes, int]]], np.ndarray]]:
    """``((tokens, {token: rank}), splits)`` from a cache file (the first None unless ``tokens``), or None when it is
    missing or not to be trusted (another version or source, truncated, or its bytes not those that were
    written)."""
    size = _CACHE_HEADER.size
    try:
        raw = path.read_bytes()
        magic, version, n, n_bytes, k, src, digest = _CACHE_HEADER.unpack_from(raw)
    except (OSError, struct.error):
        return None
    if magic != _CACHE_MAGIC or version != _CACHE_VERSION or src != bytes.fromhex(source):
        return None
    if min(n, n_bytes, k) < 0 or len(raw) != size + 8 * (n + 1) + 12 * k + n_bytes:
        return None
    if hashlib.sha256(memoryview(raw)[size:]).digest() != digest:
        return None
    splits = np.frombuffer(raw, np.int32, 3 * k, size + 8 * (n + 1)).reshape(k, 3)
    if not tokens:
        return None, splits
    tb_off = np.frombuffer(raw, np.int64, n + 1, size)
    return _token_list(raw[size + 8 * (n + 1) + 12 * k :], tb_off), splits


def _write_cache(path: Path, source: str, tb: bytes, tb_off: np.ndarray, splits: np.ndarray) -> None:
    """Write the cache file (a temporary file renamed over ``path``: never half of one); a cache that cannot be
    written only costs the build next time."""
    parts = (np.ascontiguousarray(tb_off, np.int64).data, np.ascontiguousarray(splits, np.int32).data, tb)
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part)
    n, k = tb_off.shape[0] - 1, splits.shape[0]
    header = _CACHE_HEADER.pack(_CACHE_MAGIC, _CACHE_VERSION, n, len(tb), k, bytes.fromhex(source), digest.digest())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_open(path, "wb") as f:
            f.write(header)
            for part in parts:
                f.write(part)
    except OSError:
        pass  # an unwritable cache only costs the rebuild next time (OutputError is an OSError)


def _byte_table(tokens: Sequence[bytes]) -> Tuple[bytes, np.ndarray]:
    """``(the tokens' bytes joined, tb_off)``: token ``t`` is ``tb[tb_off[t]:tb_off[t + 1]]``."""
    tb_off = np.zeros(len(tokens) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, tokens), np.int64, len(tokens)), out=tb_off[1:])
    return b"".join(tokens), tb_off


def _splits_of(tokens: Sequence[bytes], tb: bytes, tb_off: np.ndarray) -> np.ndarray:
    """:func:`two_way_splits` of ``tokens`` (``tb``, ``tb_off``: :func:`_byte_table`), the compiled pass of the
    extension (``rank_splits``) where it is built, else :func:`two_way_splits_numpy`."""
    try:
        from fastsw.pretokenizers._pretok import rank_splits
    except ImportError:  # a pure-Python install
        return two_way_splits_numpy(tokens)
    return rank_splits(np.frombuffer(tb, np.uint8), tb_off)


def _cache_path(source: str) -> Path:
    return cache_dir() / f"tiktoken-{source[:40]}.bin"


def _cached_tables(source: str, tokens_fn, use_cache: bool) -> Tuple[List[bytes], np.ndarray, Optional[dict]]:
    """``(tokens, splits, {token: rank} or None)`` for the vocabulary whose SHA-256 is ``source``; ``tokens_fn()``
    parses and checks the source when the cache cannot serve it (``(tokens, the dict or None)``)."""
    path = _cache_path(source)
    if use_cache:
        hit = _read_cache(path, source)
        if hit is not None:
            listed = cast(Tuple[List[bytes], Dict[bytes, int]], hit[0])
            return listed[0], hit[1], listed[1]
    tokens, shortcut = tokens_fn()
    tb, tb_off = _byte_table(tokens)
    splits = _splits_of(tokens, tb, tb_off)
    if use_cache:
        _write_cache(path, source, tb, tb_off, splits)
    return tokens, splits, shortcut


# ---------------------------------------------------------------------------
# The tokenizer in rank mode
# ---------------------------------------------------------------------------
class RankAlphabet(ByteAlphabet):
    """The 256 single bytes of a rank table, each with its rank as id (bytes256 order for
    o200k_base and cl100k_base, any order for other files)."""

    def __init__(self, tokens: Sequence[bytes]):
        self.kind = "ranks"
        self._id_of_byte = [-1] * 256
        lens = np.fromiter(map(len, tokens), np.int64, len(tokens))
        for r in np.flatnonzero(lens == 1).tolist():
            self._id_of_byte[tokens[r][0]] = r
        self.tokens = [bytes([b]) for b in sorted(range(256), key=self._id_of_byte.__getitem__)]

    def to_config(self) -> dict:
        return {"kind": "ranks"}


class TiktokenTokenizer(Tokenizer):
    """A :class:`fastsw.Tokenizer` over a tiktoken vocabulary, in rank mode (module docstring): ids,
    special tokens, ``n_vocab`` and ``eot_token`` are tiktoken's. Build one with
    :meth:`fastsw.Tokenizer.load_tiktoken` or :meth:`fastsw.Tokenizer.from_tiktoken`.

    It has no merge list (``merges`` is empty): ``regular_ranks`` holds every two-way split instead.
    ``save`` is refused: keep the rank file.
    """

    def __init__(
        self,
        tokens: Sequence[bytes],
        splits: np.ndarray,
        pattern: str,
        special_tokens: Optional[Mapping[str, int]] = None,
        *,
        name: str = "tiktoken",
        backend: str = "auto",
        shortcut: Optional[Dict[bytes, int]] = None,
    ):
        """``shortcut``: ``{token bytes: rank}`` of every token, when the caller already holds that dict (taken
        as it is, not copied)."""
        from fastsw._config import resolve_backend

        resolve_backend(backend)
        self.backend = backend
        self.name = name
        self.alphabet = RankAlphabet(tokens)
        self.pretokenizer = Pretokenizer(mode="simple", main_pattern=pattern)
        self.profile = "hf"
        self.algo = "bpe"
        self.normalize = None
        self.training_info = {"source": "tiktoken", "name": name}
        self._merges = ()
        self._token_bytes = tuple(tokens)
        self._splits = splits
        self._regular_ranks_dict = None
        self._super_ranks = {}
        if shortcut is None:
            shortcut = dict(zip(self._token_bytes, range(len(self._token_bytes))))
        self._shortcut = shortcut  # tiktoken's whole-piece lookup
        self._eligible = frozenset()
        n = len(self._token_bytes)
        specials = dict(special_tokens or {})
        for s, tid in specials.items():
            if not isinstance(s, str) or not s:
                raise ValueError(f"special token {s!r}: special tokens are non-empty strings")
            if isinstance(tid, bool) or not isinstance(tid, int) or tid < n:
                raise ValueError(
                    f"special token {s!r} has id {tid!r}, which is taken by the vocabulary "
                    f"(ids 0..{n - 1}); give it an id >= {n}"
                )
        if len(set(specials.values())) < len(specials):
            raise ValueError(f"two special tokens share one id: {specials}")
        self._special_tokens = specials
        self._special_by_id = {tid: s.encode("utf-8") for s, tid in specials.items()}
        self._plans = {}
        self._cache = {}

    def __repr__(self) -> str:
        return f"<fastsw.TiktokenTokenizer {self.name} n_vocab={self.n_vocab}>"

    @property
    def n_vocab(self) -> int:
        """The largest id + 1, special tokens included (tiktoken's ``n_vocab``)."""
        return max([len(self._token_bytes)] + [t + 1 for t in self._special_tokens.values()])

    @property
    def n_regular(self) -> int:
        return len(self._token_bytes) - 256

    @property
    def regular_ranks(self):
        """Read-only ``(left, right) -> (rank, token id)`` of every two-way split (built on first use)."""
        from types import MappingProxyType

        if self._regular_ranks_dict is None:
            s = self._splits
            self._regular_ranks_dict = {(int(x), int(y)): (int(t), int(t)) for x, y, t in s.tolist()}
        return MappingProxyType(self._regular_ranks_dict)

    @property
    def n_splits(self) -> int:
        """The number of two-way splits (446,189 for o200k_base)."""
        return int(self._splits.shape[0])

    def encode_pretoken(self, piece: str, *, shortcut: bool = True) -> List[int]:
        """tiktoken's encoding of one pretoken (the reference path): the piece's own id when it is a
        token (with ``shortcut``), else :func:`fastsw.io.interop.rank_table_encode` over its bytes."""
        try:
            b = piece.encode("utf-8")
        except UnicodeEncodeError:
            check_utf8(piece)
            raise
        if shortcut:
            tid = self._shortcut.get(b)
            if tid is not None:
                return [tid]
        return rank_table_encode(b, self._shortcut)

    def _encoder_tables(self, shortcut=None, eligible=None):
        from fastsw.encoding.encode_fast import EncoderTables, PairArrays

        s = self._splits.astype(np.int64)
        pairs = PairArrays(s[:, 0], s[:, 1], s[:, 2], s[:, 2])
        return EncoderTables(
            self._token_bytes,
            pairs,
            {},
            self._shortcut if shortcut is None else shortcut,
            self._eligible if eligible is None else eligible,
            self.pretokenizer,
            self.alphabet,
            self.n_vocab,
        )

    def save(self, path: PathLike) -> None:
        raise ValueError(
            "a tiktoken vocabulary is not saved as a fastsw model; keep its .tiktoken file "
            "and load it with fastsw.Tokenizer.load_tiktoken(path, pattern=...)"
        )


def _resolve_pattern(pattern: str) -> Tuple[str, Optional[str]]:
    """``(regex, name or None)`` of a ``pattern`` argument."""
    if not isinstance(pattern, str) or not pattern:
        raise ValueError(f"pattern={pattern!r}: pass one of {', '.join(map(repr, PATTERNS))} or a regular expression")
    if pattern in PATTERNS:
        return PATTERNS[pattern], pattern
    base = pattern[:-5] if pattern.endswith("_base") else None
    if base in PATTERNS:
        return PATTERNS[base], base
    for name, regex_ in PATTERNS.items():
        if pattern == regex_:
            return regex_, name
    if pattern.isidentifier():
        raise ValueError(
            f"unknown pattern name {pattern!r}: use one of {', '.join(map(repr, PATTERNS))} or "
            "pass the regular expression itself"
        )
    import regex
    from fastsw.pretokenizers._unicode import compile_pattern

    try:
        compile_pattern(pattern)
    except regex.error as e:
        raise ValueError(
            f"pattern {pattern!r} is not a valid regular expression ({e}); use 'o200k', 'cl100k' or a regex"
        ) from None
    return pattern, None


def _known_file(raw: bytes) -> Optional[str]:
    """The pattern name of one of OpenAI's rank files (:data:`KNOWN_RANK_FILES`), else None."""
    data = raw
    if raw[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(raw)
        except (OSError, EOFError):
            return None  # _parse says what is wrong with it
    return KNOWN_RANK_FILES.get(hashlib.sha256(data).hexdigest())


def load_tiktoken(
    path: PathLike,
    pattern: Optional[str] = None,
    special_tokens: Optional[Mapping[str, int]] = None,
    *,
    backend: str = "auto",
    cache: bool = True,
) -> TiktokenTokenizer:
    """A tokenizer for a ``.tiktoken`` rank file (``base64(token) rank`` per line; gzip accepted),
    with tiktoken's ids.

    ``pattern``: ``"o200k"`` (GPT-4o), ``"cl100k"`` (GPT-4), ``"cl100k_legacy"`` (cl100k_base's older
    spelling, Llama 3's), ``"gpt2"`` (= ``"r50k"``, ``"p50k"``) or a regular expression. It may be left out
    for OpenAI's own o200k_base and cl100k_base files, which are recognised by their content (SHA-256,
    whatever the file is called); any other file needs it. A named pattern that is not the known file's
    own is refused.
    ``special_tokens``: ``{text: id}``; None gives the encoding's own (o200k_base:
    ``<|endoftext|>`` 199999 and ``<|endofprompt|>`` 200018), none for a custom regex; ``{}`` for none.
    ``cache``: keep the expensive tables in :func:`cache_dir` (keyed by the file's SHA-256).

    >>> import fastsw
    >>> from fastsw.io.tiktoken_vocab import bpe_openai_rank_file
    >>> enc = fastsw.Tokenizer.load_tiktoken(bpe_openai_rank_file("cl100k_base"))
    >>> enc.encode("<|endoftext|>", allowed_special="all"), enc.n_vocab
    ([100257], 100277)
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise ValueError(f"cannot read the rank file {str(path)!r}: {e.strerror or e}") from None
    source = hashlib.sha256(raw).hexdigest()
    known = KNOWN_RANK_FILES.get(source) if raw[:2] != b"\x1f\x8b" else _known_file(raw)
    if pattern is None:
        if known is None:
            raise ValueError(
                f"{path}: pattern= is required for this rank file: it is not one of OpenAI's files "
                "that fastsw recognises by their content (o200k_base, cl100k_base); pass "
                "pattern='o200k', 'cl100k' or the regular expression the vocabulary was trained with"
            )
        pattern = known
    regex_, name = _resolve_pattern(pattern)
    if known is not None and name is not None and _VOCABULARY_OF.get(name, name) != known:
        raise ValueError(
            f"{path} is OpenAI's {known}_base, but pattern={pattern!r} is {name}_base's; leave "
            f"pattern out (or pass {known!r}) for {known}_base's ids"
        )
    if known is not None:
        name = known
    tokens, splits, shortcut = _cached_tables(source, lambda: _parse(raw, str(path)), cache)
    if special_tokens is None:
        special_tokens = SPECIAL_TOKENS.get(name, {}) if name else {}
        n = len(tokens)
        if any(t < n for t in special_tokens.values()):
            special_tokens = {}  # another vocabulary read with a named pattern: its ids are taken
    label = path.name.split(".")[0]
    return TiktokenTokenizer(tokens, splits, regex_, special_tokens, name=label, backend=backend, shortcut=shortcut)


def from_tiktoken(enc: Any, *, backend: str = "auto", cache: bool = True) -> TiktokenTokenizer:
    """A tokenizer with the vocabulary, pattern and special tokens of a ``tiktoken.Encoding``, giving
    its ids. The pattern runs on fastsw's compiled scanner when it means o200k_base's, cl100k_base's (in either
    spelling, as Llama 3's) or GPT-2's (r50k_base, p50k_base), however it is spelled
    (:func:`fastsw.pretokenizers.pretokenize.compiled_pattern`); any other runs on ``regex`` with one
    :class:`fastsw.PatternNotCompiledWarning`.

    >>> import tiktoken, fastsw
    >>> from fastsw.io.tiktoken_vocab import bpe_openai_rank_file, CL100K_PATTERN
    >>> ranks = tiktoken.load.load_tiktoken_bpe(str(bpe_openai_rank_file("cl100k_base")))  # doctest: +SKIP
    >>> enc = tiktoken.Encoding("cl100k_base", pat_str=CL100K_PATTERN, mergeable_ranks=ranks,
    ...                         special_tokens={"<|endoftext|>": 100257})  # doctest: +SKIP
    >>> fastsw.Tokenizer.from_tiktoken(enc).encode("hello world") == enc.encode("hello world")  # doctest: +SKIP
    True
    """
    try:
        ranks = enc._mergeable_ranks
        pat = enc._pat_str
        specials = dict(enc._special_tokens)
        name = enc.name
    except AttributeError:
        raise TypeError(
            f"from_tiktoken expects a tiktoken.Encoding, got {type(enc).__name__}; for a "
            ".tiktoken file use Tokenizer.load_tiktoken(path)"
        ) from None
    tokens = check_ranks(ranks, f"tiktoken.Encoding {name!r}")
    tb, tb_off = _byte_table(tokens)
    key = hashlib.sha256(b"ranks\0")  # the content: the tokens in rank order
    key.update(tb_off.data)
    key.update(tb)
    source = key.hexdigest()
    path = _cache_path(source)
    hit = _read_cache(path, source, tokens=False) if cache else None
    if hit is not None:
        splits = hit[1]
    else:
        splits = _splits_of(tokens, tb, tb_off)
        if cache:
            _write_cache(path, source, tb, tb_off, splits)
    regex_, _ = _resolve_pattern(pat)
    # the Encoding's own dict is the shortcut (checked above: every token, its rank): copied, not rebuilt
    shortcut = dict(ranks) if type(ranks) is dict else None
    return TiktokenTokenizer(tokens, splits, regex_, specials, name=name, backend=backend, shortcut=shortcut)


def bpe_openai_rank_file(name: str = "o200k_base") -> Path:
    """The path of a rank file shipped in the ``bpe-openai`` package's ``data/`` folder
    (``o200k_base``, ``cl100k_base``, gzip-compressed; MIT). A test and benchmark helper:
    ``bpe-openai`` is in the ``[test]`` and ``[bench]`` extras, never a runtime dependency."""
    import importlib.util

    # find_spec locates the package without importing it (its 74 MB extension takes seconds to load)
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(
            "the bpe-openai package is not installed; pip install 'fastsw[test]' (or "
            "bpe-openai) for its rank files, or pass your own .tiktoken file"
        )
    root = Path(list(spec.submodule_search_locations)[0]) / "data"
    path = root / f"{name}.tiktoken.gz"
    if not path.is_file():
        raise ValueError(
            f"bpe-openai ships no rank file {name!r}; it has "
            f"{sorted(p.name.split('.')[0] for p in root.glob('*.tiktoken.gz'))}"
        )
    return path
