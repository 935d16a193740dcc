"""The fast encoder for alphabets with three-byte atoms (SCRIPT v3: 1,710 atoms), over the same kernel.

The encoder kernel (:func:`fastsw.encoding.encode_kernels._encode_docs`) reads the pieces as bytes. A byte alphabet's
table ``byte_ids`` maps each of the 256 bytes to its id; a SCRIPT model has 1,953 initial symbols, so its table is
wider: after the 256 bytes, one entry per atom slot, and the kernel reads a three-byte atom code (``F5 ..``, which no
UTF-8 text holds) as the one id ``byte_ids[256 + slot]`` (kernel module note (9)).

A SCRIPT model's text reaches the kernel as UTF-8, its characters unspelled
(:meth:`fastsw.pretokenizers.script_v3.ScriptPretokenizer.text_bytes_batch`: plain SCRIPT's text as it is, with the
pretokens' ends from the grouping kernel; a marker scheme's markers as their atom codes), and the kernel finds each
character in the encoder's table of characters (:func:`wide_chars`, the kernel's ``chars``, which a byte alphabet's
encoder fills with its character table): the token its two atoms (block, index) merge into, or the two atoms when
their pair has no merge; an unlisted character is its bytes (byte fallback). The model's token bytes are given to
the kernel in the same form (``decoding_bytes``: whole characters as UTF-8, an atom on its own as its code), so the
whole-pretoken shortcut and the miss cache compare like with like, and the supermerge runs are found and merged in
the same pass; the byte tokens leave the shortcut (a byte is never a whole pretoken here, and an ASCII byte's text
is now also its character's). Against the spelled form (six bytes of atom codes per character), the kernel reads
half the bytes or less and does one look-up per character instead of two atom codes and a pair probe.

Writing a character's two atoms as their merged token before the merge loop runs is the reference's answer only
where such pairs stand apart from every other merge (:func:`atom_pairs_first`, true of every model the SCRIPT
trainers make); the fast encoder refuses a model where it is not, which then encodes on the reference path. A wide
alphabet under another pre-tokenizer (no SCRIPT characters) reads its pieces' token bytes
(:func:`fastsw.alphabet.atom_bytes_packed`), every atom code one id, and the merge loop merges them.

One text of a plain SCRIPT model (``encode``) is one compiled call,
:func:`fastsw.pretokenizers.script_v3._plain_text_ids`: from the text's UTF-8 it finds the code points, the pretokens
(the grouping kernel of :mod:`fastsw.pretokenizers.script_v3`) and their ids (the encoding kernel), with no numpy
array or kernel call made in Python between them; those fixed costs per text were a quarter to two fifths of the CPU
time of a held-out Chinese document (docs/internals.md, "One call per text"). Its twin is the pieces' route above
(``USE_ONE_CALL = False``); tests compare both with the reference. For a model without supermerges it also cuts a
pretoken between two characters' tokens whose pair no merge joins (:func:`merge_joins`, :func:`join_bits`): the
merges on each side are those of the whole pretoken, and a side that is one token is a hit of the whole-pretoken
shortcut instead of a run through the merge loops.

The reference is the tokenizer's plain-Python path (``encode(..., backend="python")``: the shortcut on the spelled
token bytes, then :func:`fastsw.trainers.bpe.apply_merges` on ``alphabet.initial_ids``); tests compare the two on
corpus text in several languages and on Hypothesis text, for BPE, BoundlessBPE and SuperBPE models.

Design notes: see docs/internals.md, section "Encoding", subsection "SCRIPT v3 models".
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Set, Tuple

import numpy as np

from fastsw.alphabet import N_SHORT_ATOMS, AtomAlphabet, atom_bytes_packed
from fastsw.encoding import encode_fast as fast_encode
from fastsw.encoding import encode_kernels as K
from fastsw.encoding.encode_fast import NO_CHARS, FastEncoder

__all__ = [
    "wide_alphabet",
    "wide_byte_ids",
    "wide_chars",
    "merge_joins",
    "join_bits",
    "atom_pairs_first",
    "WideFastEncoder",
    "warmup",
]

#: Encode one plain SCRIPT text in one compiled call
#: (:func:`fastsw.pretokenizers.script_v3._plain_text_ids`) when that kernel is compiled or in
#: Numba's on-disk cache; when False, the pieces' route (``text_bytes_batch`` and the encoding kernel: for
#: measurements and the tests that compare both).
USE_ONE_CALL = True

#: Atom slots a wide table holds after the 256 bytes (:data:`fastsw.alphabet.N_ATOM_SLOTS`).
_SLOTS = 0x800


def wide_alphabet(alphabet) -> bool:
    """Whether ``alphabet`` has atoms with three-byte codes (and byte fallback): this module's encoder's."""
    return isinstance(alphabet, AtomAlphabet) and alphabet.base is not None and not alphabet.short_only


def _wide_atoms(alphabet) -> Set[int]:
    """The ids of ``alphabet``'s atoms with three-byte codes."""
    return {alphabet.n_base + k for k, a in enumerate(alphabet.atoms) if a.slot >= N_SHORT_ATOMS}


def atom_pairs_first(alphabet, regular_ranks) -> bool:
    """Whether merging pairs of three-byte atoms first, as the kernel does, gives the reference's ids for a model
    with ``alphabet`` and ``regular_ranks`` (``(left, right) -> (rank, new id)``): the merges of two such atoms (a
    SCRIPT character: block, index) have lefts that are never the right of a merge and rights that are never the
    left of one, and no other merge has such a left or right. Then no merge but its own ever takes either atom of
    such a pair, so the pair is merged whenever its rank comes, and merging it earlier only makes the pairs of the
    merged token exist earlier, which rank after it (a merge's parts are made before it) and wait for their turn
    as before.

        >>> from fastsw.alphabet import Atom
        >>> a = AtomAlphabet("bytes243", [Atom(8, "b", "b"), Atom(9, "i", "i")])   # ids 243, 244
        >>> atom_pairs_first(a, {(243, 244): (0, 245), (245, 97): (1, 246)})
        True
        >>> atom_pairs_first(a, {(243, 244): (0, 245), (244, 97): (1, 246)})        # 244 is also a left
        False
    """
    wide = _wide_atoms(alphabet)
    pairs = [(x, y) for x, y in regular_ranks if x in wide and y in wide]
    lefts = {x for x, _ in pairs}
    rights = {y for _, y in pairs}
    if lefts & rights:
        return False
    return not any(
        (x in lefts or x in rights or y in lefts or y in rights) and not (x in wide and y in wide)
        for x, y in regular_ranks
    )


def wide_byte_ids(alphabet: AtomAlphabet) -> np.ndarray:
    """The kernel's table for a :func:`wide_alphabet`: int32, 256 + 2,048 entries: each byte's id (a base byte, a
    short atom's one-byte code), then each atom slot's id (-1: no such atom).

        >>> from fastsw.alphabet import Atom
        >>> t = wide_byte_ids(AtomAlphabet("bytes243", [Atom(0, "boundary", "¦"), Atom(9, "x", "x")]))
        >>> t.shape[0], int(t[0xF8]), int(t[256 + 9]), int(t[256 + 10])
        (2304, 243, 244, -1)
    """
    table = np.full(256 + _SLOTS, -1, np.int32)
    table[:256] = [alphabet.id_of_byte(b) for b in range(256)]
    for i, a in enumerate(alphabet.atoms):
        table[256 + a.slot] = alphabet.n_base + i
    return table


def wide_chars(alphabet: AtomAlphabet, regular_ranks) -> np.ndarray:
    """The kernel's table of the characters of a SCRIPT model (``alphabet`` with the SCRIPT atoms, its merges
    ``regular_ranks``: ``(left, right) -> (rank, new id)``): per listed code point, the token its two atoms merge
    into, or when their pair has no merge, the two atoms as ``-2 - (block slot << 11 | index slot)`` (the kernel
    reads their ids from :func:`wide_byte_ids`); -1 for a code point that is not listed (its UTF-8 bytes are its
    ids). int64: a map of ``fastsw.encoding.encode_kernels._CHAR_BLOCKS`` entries (one per 256 code points: where
    the block's 256 entries start, -1: none), then the blocks that have a listed character.

        >>> from fastsw.pretokenizers.script_v3 import ScriptPretokenizer, atoms_of_text
        >>> a = ScriptPretokenizer().make_alphabet("paper")
        >>> b, i = (a.n_base + x for x in atoms_of_text("日"))
        >>> t = wide_chars(a, {(b, i): (0, 5000)})
        >>> int(t[t[ord("日") >> 8] + (ord("日") & 255)]), int(t[0xE000 >> 8])
        (5000, -1)
    """
    from fastsw.pretokenizers.script_v3 import SLOTS, table

    t = table()
    cps = np.flatnonzero(t.block_of >= 0)
    slots = np.asarray(SLOTS, np.int64)
    block_slot = slots[t.block_of[cps]]
    index_slot = slots[t.n_blocks + t.index_of[cps]]
    values = -2 - ((block_slot << 11) | index_slot)
    ids = wide_byte_ids(alphabet).astype(np.int64)
    keys = (ids[256 + block_slot] << 32) | ids[256 + index_slot]
    if regular_ranks:
        pairs = np.array([(x << 32) | y for x, y in regular_ranks], np.int64)
        news = np.array([v[1] for v in regular_ranks.values()], np.int64)
        order = np.argsort(pairs)
        pairs, news = pairs[order], news[order]
        at = np.minimum(np.searchsorted(pairs, keys), pairs.shape[0] - 1)
        merged = pairs[at] == keys
        values[merged] = news[at[merged]]
    used = np.unique(cps >> 8)
    out = np.full(K._CHAR_BLOCKS + 256 * used.shape[0], -1, np.int64)
    out[used] = K._CHAR_BLOCKS + 256 * np.arange(used.shape[0], dtype=np.int64)
    out[out[cps >> 8] + (cps & 255)] = values
    return out


def merge_joins(alphabet, regular_ranks) -> Optional[Set[Tuple[int, int]]]:
    """The pairs of units that the merges ``regular_ranks`` (``(left, right) -> (rank, new id)``) of a model with
    the SCRIPT ``alphabet`` join: for each merge but a character's (two three-byte atoms), the last unit of its
    left token and the first unit of its right, units being what the kernel starts a piece from (bytes, atoms,
    the characters' tokens). Two units next to each other in a piece whose pair is not one of these are never
    joined, whatever the rest of the piece: every merge that joins two tokens joins the last unit of one to the
    first of the other. None when some token is made by more than one merge or before its parts (then a token's
    units are not one sequence; no model the trainers make).

        >>> from fastsw.alphabet import Atom
        >>> a = AtomAlphabet("bytes243", [Atom(8, "b", "b"), Atom(9, "i", "i")])   # ids 243, 244
        >>> sorted(merge_joins(a, {(243, 244): (0, 245), (245, 97): (1, 246), (98, 246): (2, 247)}))
        [(98, 245), (245, 97)]
    """
    wide = _wide_atoms(alphabet)
    n_alpha = len(alphabet)
    first: dict = {}
    last: dict = {}
    joins = set()
    pairs = fast_encode.pair_arrays(regular_ranks)
    order = np.argsort(pairs.ranks, kind="stable")
    for left, right, new in zip(pairs.lefts[order].tolist(), pairs.rights[order].tolist(), pairs.news[order].tolist()):
        if new in first or (left >= n_alpha and left not in first) or (right >= n_alpha and right not in first):
            return None
        if left in wide and right in wide:  # a character's token: one unit
            first[new] = last[new] = new
            continue
        joins.add((last.get(left, left), first.get(right, right)))
        first[new], last[new] = first.get(left, left), last.get(right, right)
    return joins


def join_bits(alphabet, regular_ranks) -> np.ndarray:
    """The bit set (uint64, :func:`fastsw.encoding.encode_kernels._build_pair_bits`) of the :func:`merge_joins`
    of a SCRIPT model, which the one-call path cuts its pretokens by
    (:func:`fastsw.pretokenizers.script_v3._cut_ends`); empty (no cuts) when they are None. A set bit may be a
    collision, which only leaves a pretoken uncut."""
    joins = merge_joins(alphabet, regular_ranks)
    if joins is None:
        return np.zeros(0, np.uint64)
    pairs = np.array(sorted(joins), np.int64).reshape(-1, 2)
    return K._build_pair_bits(np.ascontiguousarray(pairs[:, 0]), np.ascontiguousarray(pairs[:, 1]))


_compiling = None  # the process compiling _plain_text_ids into Numba's on-disk cache (started once)
_on_disk = False  # whether it is there (looked up again only when that process has ended)


def _one_call_ready() -> bool:
    """Whether :func:`fastsw.pretokenizers.script_v3._plain_text_ids` runs without compiling first (compiled here,
    or in Numba's on-disk cache). When it does not, a background process compiles it (:func:`warmup`, started
    once), and encoders take the pieces' route (the same ids) until it has ended: a first SCRIPT text never waits
    seconds for a compilation. False when the kernels run as plain Python (``NUMBA_DISABLE_JIT=1``): the pieces'
    route is then the twin."""
    global _compiling, _on_disk
    from fastsw.pretokenizers.script_v3 import _plain_text_ids

    if not hasattr(_plain_text_ids, "signatures"):
        return False
    if _plain_text_ids.signatures or _on_disk:
        return True
    if _compiling is not None and _compiling.poll() is None:
        return False  # still compiling: no look at the disk per call
    from fastsw._compiling import in_disk_cache, start

    _on_disk = in_disk_cache(_plain_text_ids)
    if not _on_disk and _compiling is None:
        _compiling = start(f"{__name__}:warmup")
    return _on_disk


def warmup() -> None:
    """Compile (or load from Numba's on-disk cache) :func:`fastsw.pretokenizers.script_v3._plain_text_ids`, the
    one-call path of plain SCRIPT models, with the one signature the encoder calls it with."""
    from fastsw.encoding.encode_fast import EncoderTables
    from fastsw.pretokenizers import script_v3 as sv

    pretok = sv.ScriptPretokenizer()
    alphabet = pretok.make_alphabet("paper")
    tokens = list(alphabet.tokens)  # the atoms alone: no merges
    shortcut = {t: i for i, t in enumerate(tokens)}
    tables = EncoderTables(tokens, {}, {}, shortcut, frozenset(), pretok, alphabet, len(tokens))
    WideFastEncoder(tables).encode("日本 ab", compile=True)


class WideFastEncoder(FastEncoder):
    """:class:`fastsw.encoding.encode_fast.FastEncoder` for a :func:`wide_alphabet`: the same tables, calls and
    results; the kernel's byte table is wider (:func:`wide_byte_ids`), and a SCRIPT model's text reaches the kernel
    as UTF-8 (:meth:`fastsw.pretokenizers.script_v3.ScriptPretokenizer.text_bytes_batch`), each character found in
    its table of characters (:func:`wide_chars`), and its tokens' bytes with their characters as UTF-8 too
    (``decoding_bytes``), so that the whole-pretoken shortcut and the miss cache compare like with like."""

    _wide = True

    def __init__(self, tables):
        if not atom_pairs_first(tables.alphabet, tables.regular_ranks):
            raise ValueError(
                "this model merges atoms in a way the fast encoder does not take (see "
                "fastsw.encoding.wide_fast.atom_pairs_first); use backend='python'"
            )
        from fastsw.pretokenizers.script_v3 import ScriptPretokenizer

        self._script = isinstance(tables.pretokenizer, ScriptPretokenizer)
        if self._script:  # a character's two atoms are one unit of text, its UTF-8 (module docstring)
            n_base = tables.alphabet.n_base
            tables = tables._replace(
                token_bytes=tables.pretokenizer.decoding_bytes(tables.token_bytes),
                # a byte token is never a whole pretoken (a listed character is its atoms, an unlisted one more than
                # one byte); its byte is now also an ASCII character's text
                shortcut={b: t for b, t in tables.shortcut.items() if t >= n_base},
            )
        super().__init__(tables)
        self.byte_ids = wide_byte_ids(tables.alphabet)
        # the kernel's table of the characters; without SCRIPT's, the kernel reads every atom code as one id
        self.chars = wide_chars(tables.alphabet, tables.regular_ranks) if self._script else NO_CHARS
        self._kernel_tables = None
        # plain SCRIPT (no inner marker scheme, nothing dropped): one compiled call per text (script_v3's
        # _plain_text_ids)
        self._plain = self._script and tables.pretokenizer.inner is None and not tables.pretokenizer.drop_unlisted
        self._one_call: Optional[tuple] = None  # (kernel, tables, switches): _find_one_call, on first use
        # the pairs of characters' tokens that some merge joins: the one call cuts pretokens between others (a
        # model with supermerges keeps its pretokens whole: its runs are of whole pretokens)
        no_cuts = not self._plain or self.use_super
        self.joins = np.zeros(0, np.uint64) if no_cuts else join_bits(tables.alphabet, tables.regular_ranks)

    def encode(self, text: str, shortcut: bool = True, compile: bool = False) -> List[int]:
        """One document as a list of ids. A plain SCRIPT model's text takes one compiled call
        (:func:`fastsw.pretokenizers.script_v3._plain_text_ids`: its code points, pretokens and ids), once that
        kernel is compiled or in
        Numba's on-disk cache (``compile``: compile it now if not); otherwise, and for other models,
        :meth:`fastsw.encoding.encode_fast.FastEncoder.encode`."""
        if not (self._plain and USE_ONE_CALL and text) or len(text) > fast_encode.ONE_TEXT_CHARS:
            return super().encode(text, shortcut)
        one = self._one_call
        if one is None:
            if not (_one_call_ready() or (compile and hasattr(K._encode_docs, "signatures"))):
                return super().encode(text, shortcut)
            one = self._one_call = self._find_one_call()
        try:
            data = np.frombuffer(text.encode("utf-8"), np.uint8)
        except UnicodeEncodeError:
            self.pretokenizer._text(text)  # raises the pre-tokenizer's error for the lone surrogate
            raise
        entry, tables, switches = one
        ids = entry(data, *tables, int(bool(shortcut)), *switches)
        return self.to_list(ids) if fast_encode._ids_to_list is None else fast_encode._ids_to_list(ids, self._id_list)

    def _find_one_call(self) -> tuple:
        """``(kernel, tables, switches)`` of :func:`fastsw.pretokenizers.script_v3._plain_text_ids` for this model:
        its arguments before and after
        ``shortcut``; the kernel is its compiled entry point (no type checks per call) where Numba gives one, else
        the dispatcher."""
        from fastsw.pretokenizers import script_v3 as sv
        from fastsw.pretokenizers.boundary import class_table

        self.to_list(np.zeros(0, np.int32))  # the shared ints
        t = class_table()
        tables = (t.cls, t.kind, sv._NO_STOP, self.joins, *self._gather_tables())
        switches = (self.use_super, fast_encode.SHORT_LIMIT)
        args = (np.frombuffer(b"a", np.uint8), *tables, 1, *switches)
        sv._plain_text_ids(*args)  # compiled or loaded here (the caller has asked for it, or it is cached)
        return fast_encode._entry_point(sv._plain_text_ids, args) or sv._plain_text_ids, tables, switches

    def _token_bytes(self, texts: Sequence[str]):
        if self._script:
            return self.pretokenizer.text_bytes_batch(texts)
        return super()._token_bytes(texts)

    def _pieces_bytes(self, pieces: List[str]) -> Tuple[np.ndarray, np.ndarray]:  # type: ignore[override]
        if self._script:  # spelled pieces: their characters back to UTF-8, other atoms kept
            from fastsw.pretokenizers.script_v3 import unspell

            pieces = [unspell(p, broken=None) for p in pieces]
        return atom_bytes_packed(pieces)
