"""The fast encoder for alphabets with three-byte atoms (SCRIPT v3: 1,710 atoms), over the unchanged kernel.

The encoder kernel (:func:`fastsw.encoding.encode_kernels._encode_docs`) reads one byte per initial symbol and maps it
through a 256-entry table (``byte_ids``) to the symbol's id. A SCRIPT model has 1,953 initial symbols, but one call
rarely sees more than 256 of them: so this driver gives each call its own one-byte codes. The pieces are spelled
once (:func:`fastsw.alphabet.atom_bytes_packed`) and read as initial ids (a three-byte atom code ``F5 ..`` is one
id); each call's distinct ids get the bytes ``0..k-1`` and the call's ``byte_ids`` maps them back. What depends on
the bytes being the model's own is switched off: the whole-pretoken shortcut gets empty tables (it only ever skips
merges that would give the same ids), so every lookup misses into the kernel's miss cache, which compares the
call's own bytes (a repeated piece copies the ids of its first occurrence).

Two passes, both the kernel:

1. **Regular merges, one piece at a time.** Every piece is its own document, so the kernel's document offsets give
   each piece's ids; consecutive pieces share a call while their distinct initial ids fit in 256 (one call for a
   batch of English). A piece with more than 256 distinct ids on its own (a run of 128 distinct Han characters)
   takes the reference's :func:`fastsw.trainers.bpe.apply_merges`.
2. **Supermerges** (only for a model that has them). The pieces' ids from pass 1 are the input, one byte code per
   distinct token: the kernel re-applies the regular merges, which change nothing (a BPE result has no mergeable
   pair left), and applies the supermerges to the runs of single-token eligible pieces, exactly as in one pass. A
   call holds whole documents while their distinct tokens fit; a longer document is cut only between two pieces
   one of which is not a single eligible token, where no run continues; a run with more than 256 distinct tokens
   alone takes :func:`fastsw.trainers.bpe.apply_merges` with the supermerges, which is what the reference does with a run.

The reference is the tokenizer's plain-Python path (``encode(..., backend="python")``); tests compare the two on
corpus text in several languages and on Hypothesis text, for BPE, BoundlessBPE and SuperBPE models.

Design notes: see docs/internals.md, section "Encoding", subsection "SCRIPT v3 models".
"""
from __future__ import annotations

import threading
from itertools import chain
from typing import List, Sequence, Tuple

import numpy as np

from fastsw.encoding import encode_kernels as K
from fastsw._interrupt import call_kernel
from fastsw.alphabet import AtomAlphabet, atom_bytes_packed
from fastsw.trainers.bpe import apply_merges
from fastsw.encoding.encode_fast import NO_CHARS, SHORT_LIMIT, FastEncoder, _WORKER_BYTES, _table_size

__all__ = ["wide_alphabet", "WideFastEncoder"]

_CODES = 256


def wide_alphabet(alphabet) -> bool:
    """Whether ``alphabet`` has atoms with three-byte codes (and byte fallback): this module's encoder's."""
    return isinstance(alphabet, AtomAlphabet) and alphabet.base is not None and not alphabet.short_only


def _distinct(ids: np.ndarray) -> np.ndarray:
    """The distinct values of ``ids`` (non-negative token ids), sorted: a count per id instead of a sort."""
    return np.flatnonzero(np.bincount(ids)) if ids.size else ids[:0]


class WideFastEncoder(FastEncoder):
    """:class:`fastsw.encoding.encode_fast.FastEncoder` for a :func:`wide_alphabet` (``FastEncoder(tables)`` makes one):
    the same tables, calls and results; the pieces go through the kernel with per-call one-byte codes."""

    _wide = True

    def __init__(self, tables):
        super().__init__(tables)
        alphabet = tables.alphabet
        self.regular_ranks = tables.regular_ranks
        self.super_ranks = tables.super_ranks
        self.alphabet = alphabet
        # empty shortcut tables: every lookup misses, so the kernel's miss cache (keyed by the call's own bytes:
        # a repeated piece copies its ids) runs, while the model's shortcut, keyed by its real bytes, cannot match
        empty = np.zeros(0, np.int32)
        self.no_short = K._build_short_table(self.tb, self.tb_off, empty, _table_size(0))
        self.no_long = K._build_long_table(self.tb, self.tb_off, empty, _table_size(0))
        self.slot_ids = np.full(0x800, -1, np.int32)  # atom slot -> id
        for i, a in enumerate(alphabet.atoms):
            self.slot_ids[a.slot] = alphabet.n_base + i

    # -- the FastEncoder interface -------------------------------------------------------------------------------
    def encode_docs(self, texts: Sequence[str], shortcut: bool = True,
                    short_limit: int = SHORT_LIMIT) -> Tuple[np.ndarray, np.ndarray]:
        # the pre-tokenizer's own initial ids (SCRIPT: read per code point, no spelled str) when it has them
        got = self.pretokenizer.initial_symbols(texts, self.slot_ids)
        if got is not None:
            return self._encode_symbols(*got, short_limit, False)
        return self._encode_pieces_of([self.pretokenizer.pretokenize(t) for t in texts], shortcut, short_limit)

    def encode_pieces(self, pieces: Sequence[str], shortcut: bool = False,
                      interruptible: bool = False) -> Tuple[np.ndarray, np.ndarray]:
        return self._encode_pieces_of([[p] for p in pieces], shortcut, interruptible=interruptible)

    def encode(self, text: str, shortcut: bool = True) -> List[int]:
        return self.to_list(self.encode_docs([text], shortcut)[0])

    # -- the two passes ------------------------------------------------------------------------------------------
    def _initial(self, pieces: List[str]) -> Tuple[np.ndarray, np.ndarray]:
        """``(ids int32, offsets int64)``: each piece's initial ids (``alphabet.initial_ids``), all pieces at once."""
        data, lengths = atom_bytes_packed(pieces)
        ids = self.byte_ids[data]
        lead = np.flatnonzero(data == 0xF5)  # a three-byte atom code (UTF-8 never uses F5)
        if lead.size:
            ids[lead] = self.slot_ids[((data[lead + 1].astype(np.int64) & 0x3F) << 6) | (data[lead + 2] & 0x3F)]
            keep = np.ones(data.shape[0], bool)
            keep[lead + 1] = False
            keep[lead + 2] = False
            owner = np.searchsorted(np.cumsum(lengths), lead, side="right")
            ids = ids[keep]
            lengths = lengths - 2 * np.bincount(owner, minlength=lengths.shape[0])
        offsets = np.zeros(len(pieces) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        if ids.size and ids.min() < 0:  # a symbol outside the alphabet: the reference's error
            bad = int(np.searchsorted(offsets, int(np.flatnonzero(ids < 0)[0]), side="right")) - 1
            self.alphabet.initial_ids(pieces[bad])
            raise ValueError(f"pretoken {pieces[bad]!r} has a symbol outside the alphabet")
        return ids.astype(np.int32), offsets

    def _call(self, symbols: np.ndarray, unit_ends: np.ndarray, doc_units: np.ndarray, use_super: int,
              short_limit: int, interruptible: bool) -> Tuple[np.ndarray, np.ndarray]:
        """One kernel call over ``symbols`` (ids, at most 256 distinct) given per-call byte codes."""
        codes = _distinct(symbols)
        byte_ids = np.full(_CODES, -1, np.int32)
        byte_ids[:codes.shape[0]] = codes
        code_of = np.zeros(int(codes[-1]) + 1 if codes.size else 1, np.uint8)
        code_of[codes] = np.arange(codes.shape[0])
        text = code_of[symbols] if symbols.size else np.zeros(1, np.uint8)
        text.flags.writeable = False  # the type the driver's read-only view of UTF-8 has: one kernel signature
        args = (text, np.ascontiguousarray(unit_ends, np.int64), np.ascontiguousarray(doc_units, np.int64),
                byte_ids, self.no_short, self.no_long, self.tb, self.r_table, self.s_table, self.s_bits, self.flags,
                NO_CHARS, 1, int(use_super), int(short_limit))
        if interruptible or (symbols.shape[0] >= _WORKER_BYTES
                             and threading.current_thread() is threading.main_thread()):
            ids, offsets = call_kernel(K._encode_docs, *args, stop=False)
        else:
            ids, offsets = K._encode_docs(*args)
        return np.array(ids), offsets

    def _encode_units(self, symbols, offsets, groups, use_super, ranks, short_limit, interruptible, fits=False):
        """Encode units (``symbols[offsets[u]:offsets[u + 1]]``) in calls of at most 256 distinct symbols.
        ``groups``: ``(first unit, last unit + 1, is a run)`` in order; a group is one document of the call (its
        units its pieces) when ``use_super``, else every unit is its own document. A group is never cut; a group
        with more than 256 distinct symbols goes through ``apply_merges(..., ranks)`` unit by unit (pass 1), or
        as one run when it is one (pass 2; else it is one piece, kept). ``fits``: all symbols are known to fit in
        one call. Returns ``(ids, lengths)``: all ids, and how many belong to each unit (pass 1) or group (pass
        2)."""
        ids_parts: List[np.ndarray] = []
        len_parts: List[np.ndarray] = []
        pending: List[Tuple[int, int]] = []
        seen: set = set()

        def flush():
            if not pending:
                return
            a, b = pending[0][0], pending[-1][1]
            sym = symbols[offsets[a]:offsets[b]]
            lengths = np.diff(offsets[a:b + 1])
            if use_super:  # one document per group, its units as pieces
                doc_units = np.zeros(len(pending) + 1, np.int64)
                np.cumsum([g1 - g0 for g0, g1 in pending], out=doc_units[1:])
                ends = np.concatenate([np.cumsum(lengths[g0 - a:g1 - a]) for g0, g1 in pending])
            else:  # one document per unit
                doc_units = np.arange(b - a + 1, dtype=np.int64)
                ends = lengths
            ids, doc_off = self._call(sym, ends, doc_units, use_super, short_limit, interruptible)
            ids_parts.append(ids)
            len_parts.append(np.diff(doc_off))
            pending.clear()
            seen.clear()

        def alone(seq):
            ids_parts.append(np.array(seq, np.int32))
            len_parts.append(np.array([len(seq)], np.int64))

        for g0, g1, is_run in groups:
            distinct = set() if fits else set(symbols[offsets[g0]:offsets[g1]].tolist())
            if len(distinct) > _CODES:
                flush()
                if not use_super:
                    for u in range(g0, g1):
                        alone(apply_merges(symbols[offsets[u]:offsets[u + 1]].tolist(), ranks))
                    continue
                seq = symbols[offsets[g0]:offsets[g1]].tolist()
                if is_run and g1 - g0 >= 2:  # a run of single eligible tokens: the reference's supermerges
                    seq = apply_merges(seq, ranks)
                alone(seq)  # else one piece: its tokens as they are
                continue
            if len(seen | distinct) > _CODES:
                flush()
            pending.append((g0, g1))
            seen |= distinct
        flush()
        if not ids_parts:
            return np.zeros(0, np.int32), np.zeros(0, np.int64)
        return np.concatenate(ids_parts).astype(np.int32), np.concatenate(len_parts)

    def _encode_pieces_of(self, docs: Sequence[Sequence[str]], shortcut: bool, short_limit: int = SHORT_LIMIT,
                          interruptible: bool = False) -> Tuple[np.ndarray, np.ndarray]:
        symbols, offsets = self._initial(list(chain.from_iterable(docs)))
        return self._encode_symbols(symbols, offsets, list(map(len, docs)), short_limit, interruptible)

    def _encode_symbols(self, symbols: np.ndarray, offsets: np.ndarray, n_pieces: Sequence[int], short_limit: int,
                        interruptible: bool) -> Tuple[np.ndarray, np.ndarray]:
        """The two passes over pieces given as initial ids (``symbols[offsets[k]:offsets[k + 1]]``), ``n_pieces``
        of them per document."""
        n_docs = len(n_pieces)
        doc_pieces = np.zeros(n_docs + 1, np.int64)
        np.cumsum(np.asarray(n_pieces, np.int64), out=doc_pieces[1:])
        n_all = int(doc_pieces[-1])
        # pass 1: regular merges, piece by piece
        fits = _distinct(symbols).shape[0] <= _CODES
        if fits:
            groups = [(0, n_all, False)] if n_all else []
        else:
            groups = [(u, u + 1, False) for u in range(n_all)]
        tokens, lengths = self._encode_units(symbols, offsets, groups, 0, self.regular_ranks, short_limit,
                                             interruptible, fits)
        t_off = np.zeros(n_all + 1, np.int64)
        np.cumsum(lengths, out=t_off[1:])
        if not self.use_super or not n_all:
            out_off = t_off[doc_pieces]
            return tokens, out_off
        # pass 2: supermerges over the documents' pieces (groups: whole documents, or a long document cut where no
        # run continues)
        single = (lengths == 1) & ((self.flags[tokens[t_off[:-1]]] & 1) != 0)
        groups = []
        for d in range(n_docs):
            a, b = int(doc_pieces[d]), int(doc_pieces[d + 1])
            if a == b:
                continue
            if _distinct(tokens[t_off[a]:t_off[b]]).shape[0] <= _CODES:
                groups.append((a, b, d, False))
                continue
            start = a
            for u in range(a + 1, b + 1):  # cut where the piece before or after is not a single eligible token
                if u == b or not (single[u - 1] and single[u]):
                    groups.append((start, u, d, bool(single[start:u].all())))
                    start = u
        ids, group_len = self._encode_units(tokens, t_off, [(g0, g1, run) for g0, g1, _, run in groups], 1,
                                            self.super_ranks, short_limit, interruptible)
        out_off = np.zeros(n_docs + 1, np.int64)
        np.add.at(out_off, np.array([d + 1 for _, _, d, _ in groups], np.int64), group_len)
        np.cumsum(out_off, out=out_off)
        return ids, out_off
