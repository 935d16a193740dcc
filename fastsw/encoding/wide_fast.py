"""The fast encoder for alphabets with three-byte atoms (SCRIPT v3: 1,710 atoms), over the same kernel.

The encoder kernel (:func:`fastsw.encoding.encode_kernels._encode_docs`) reads the pieces' token bytes: the UTF-8 of
their characters with each atom as its code (:func:`fastsw.alphabet.atom_bytes`). A byte alphabet's table
``byte_ids`` maps each of the 256 bytes to its id; a SCRIPT model has 1,953 initial symbols, so its table is wider:
after the 256 bytes, one entry per atom slot, and the kernel reads a three-byte atom code (``F5 ..``, which no UTF-8
text holds) as the one id ``byte_ids[256 + slot]`` (kernel module note (9)). Everything else is the byte path's: the
whole-pretoken shortcut and the miss cache compare the pieces' token bytes with the model's token bytes, and the
supermerge runs are found and merged in the same pass.

Two atoms whose pair has a merge are written as the merged token before the merge loop runs (a SCRIPT character:
its block and index atoms), found in a rank table of those pairs alone (the kernel's ``chars``, which a byte
alphabet's encoder fills with its character table). That is the reference's answer only where such pairs stand apart from every other merge
(:func:`atom_pairs_first`, true of every model the SCRIPT trainers make); the fast encoder refuses a model where
it is not, which then encodes on the reference path.

The pieces' token bytes come from the pre-tokenizer in one call when it has the compiled route
(:meth:`fastsw.pretokenizers.script_v3.ScriptPretokenizer.token_bytes_batch`: every code point's spelled bytes from
one table, no ``str`` per pretoken); otherwise from its pieces (:func:`fastsw.alphabet.atom_bytes_packed`).

The reference is the tokenizer's plain-Python path (``encode(..., backend="python")``: the shortcut on the same
token bytes, then :func:`fastsw.trainers.bpe.apply_merges` on ``alphabet.initial_ids``); tests compare the two on
corpus text in several languages and on Hypothesis text, for BPE, BoundlessBPE and SuperBPE models.

Design notes: see docs/internals.md, section "Encoding", subsection "SCRIPT v3 models".
"""

from __future__ import annotations

from typing import Set

import numpy as np

from fastsw.alphabet import N_SHORT_ATOMS, AtomAlphabet
from fastsw.encoding.encode_fast import FastEncoder, pair_table

__all__ = ["wide_alphabet", "wide_byte_ids", "atom_pairs_first", "WideFastEncoder"]

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


class WideFastEncoder(FastEncoder):
    """:class:`fastsw.encoding.encode_fast.FastEncoder` for a :func:`wide_alphabet`: the same tables, calls and
    results; only the kernel's byte table is wider (:func:`wide_byte_ids`)."""

    _wide = True

    def __init__(self, tables):
        if not atom_pairs_first(tables.alphabet, tables.regular_ranks):
            raise ValueError(
                "this model merges atoms in a way the fast encoder does not take (see "
                "fastsw.encoding.wide_fast.atom_pairs_first); use backend='python'"
            )
        super().__init__(tables)
        self.byte_ids = wide_byte_ids(tables.alphabet)
        # the kernel's table of the characters (two atoms whose pair merges) for a wide byte table: their pairs alone
        wide = _wide_atoms(tables.alphabet)
        self.chars = pair_table({p: v for p, v in tables.regular_ranks.items() if p[0] in wide and p[1] in wide})
        self._kernel_tables = None
