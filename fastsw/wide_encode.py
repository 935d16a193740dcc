"""The fast encoder for alphabets with three-byte atoms (SCRIPT v3: 1,710 atoms), over the same kernel.

The encoder kernel (:func:`fastsw._encode_kernels._encode_docs`) reads the pieces' token bytes: the UTF-8 of their
characters with each atom as its code (:func:`fastsw.alphabet.atom_bytes`). A byte alphabet's table ``byte_ids``
maps each of the 256 bytes to its id; a SCRIPT model has 1,953 initial symbols, so its table is wider: after the
256 bytes, one entry per atom slot, and the kernel reads a three-byte atom code (``F5 ..``, which no UTF-8 text
holds) as the one id ``byte_ids[256 + slot]`` (kernel module note (9)). Everything else is the byte path's: the
whole-pretoken shortcut and the miss cache compare the pieces' token bytes with the model's token bytes, and the
supermerge runs are found and merged in the same pass.

The pieces' token bytes come from the pre-tokenizer in one call when it has the compiled route
(:meth:`fastsw.script_v3.ScriptPretokenizer.token_bytes_batch`: every code point's spelled bytes from one table, no
``str`` per pretoken); otherwise from its pieces (:func:`fastsw.alphabet.atom_bytes_packed`).

The reference is the tokenizer's plain-Python path (``encode(..., backend="python")``: the shortcut on the same
token bytes, then :func:`fastsw.bpe.apply_merges` on ``alphabet.initial_ids``); tests compare the two on corpus text
in several languages and on Hypothesis text, for BPE, BoundlessBPE and SuperBPE models.

Design notes: see docs/internals.md, section "Encoding", subsection "SCRIPT v3 models".
"""
from __future__ import annotations

import numpy as np

from .alphabet import AtomAlphabet
from .fast_encode import FastEncoder

__all__ = ["wide_alphabet", "wide_byte_ids", "WideFastEncoder"]

#: Atom slots a wide table holds after the 256 bytes (:data:`fastsw.alphabet.N_ATOM_SLOTS`).
_SLOTS = 0x800


def wide_alphabet(alphabet) -> bool:
    """Whether ``alphabet`` has atoms with three-byte codes (and byte fallback): this module's encoder's."""
    return isinstance(alphabet, AtomAlphabet) and alphabet.base is not None and not alphabet.short_only


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
    """:class:`fastsw.fast_encode.FastEncoder` for a :func:`wide_alphabet`: the same tables, calls and results; only
    the kernel's byte table is wider (:func:`wide_byte_ids`)."""

    _wide = True

    def __init__(self, tables):
        super().__init__(tables)
        self.byte_ids = wide_byte_ids(tables.alphabet)
        self._kernel_tables = None
