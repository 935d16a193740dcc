"""MinGram's fast driver: the packed corpus and seed tokens as flat arrays (:class:`FastLattice`) for the E-step
and MinGram-PP's scores, and the batch encoder of a :class:`~fastsw.trainers.mingram.MinGramTokenizer`
(:class:`MinGramFastEncoder`), around the Numba kernels of :mod:`fastsw.trainers.mingram_kernels`. The reference
path is :mod:`fastsw.trainers.mingram`, which imports this module only when the numba backend runs (it imports
Numba)."""

from __future__ import annotations

from itertools import chain
from typing import Optional

import numpy as np

from fastsw.encoding.encode_fast import FastEncoder, supported

__all__ = ["FastLattice", "mi_scores_fast", "MinGramFastEncoder"]


class FastLattice:
    """The packed corpus and the seed tokens as flat arrays for :mod:`fastsw.trainers.mingram_kernels`."""

    def __init__(self, sym, offsets, counts, token_atoms, n_sym):
        self.sym = np.ascontiguousarray(sym, dtype=np.int32)
        self.offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        self.counts = np.ascontiguousarray(counts, dtype=np.int64)
        lens = np.fromiter(map(len, token_atoms), np.int64, len(token_atoms))
        self.tok_off = np.zeros(len(token_atoms) + 1, np.int64)
        np.cumsum(lens, out=self.tok_off[1:])
        self.tok_sym = np.fromiter(chain.from_iterable(token_atoms), np.int32, int(self.tok_off[-1]))
        self.tok_len = lens.astype(np.int32)
        self.n_sym = int(n_sym)
        self.n_tokens = len(token_atoms)

    def trie(self, order):
        from fastsw.trainers.mingram_kernels import _build_trie

        return _build_trie(self.tok_sym, self.tok_off, np.ascontiguousarray(order, dtype=np.int64), self.n_sym)

    def e_step(self, order, cost, threads: Optional[int] = None):
        """Usage counts (int64 by token index) of the E-step under ``cost``: the pretokens in slices of about
        equal atoms, one kernel call per slice on a thread pool (the kernel releases the GIL; integer sums, so
        the result does not depend on the slicing)."""
        import os
        from fastsw._interrupt import call_kernel
        from fastsw.trainers.mingram_kernels import _DENSE_ENTRIES, _dense_rows

        keys, vals, node_tok = self.trie(order)
        dense, row = _dense_rows(keys, vals, node_tok.shape[0], self.n_sym, _DENSE_ENTRIES)
        finite = cost[np.isfinite(cost)]
        shortcut = int(bool(finite.size == 0 or ((finite <= 0).all() and (finite > -0.5).all())))
        threads = threads or os.cpu_count() or 1
        n_words = self.offsets.shape[0] - 1
        if n_words < 4096:
            threads = 1
        cuts = np.searchsorted(self.offsets, np.linspace(0, self.offsets[-1], threads + 1)).clip(0, n_words)
        cuts[0], cuts[-1] = 0, n_words
        args = (
            self.sym,
            self.offsets,
            self.counts,
            keys,
            vals,
            dense,
            row,
            self.n_sym,
            node_tok,
            self.tok_len,
            cost,
            self.n_tokens,
        )
        return call_kernel(_e_step_slices, args, cuts, shortcut)

    def segment(self, order, cost):
        from fastsw._interrupt import call_kernel
        from fastsw.trainers.mingram_kernels import _segment_all

        keys, vals, node_tok = self.trie(order)
        return call_kernel(
            _segment_all, self.sym, self.offsets, keys, vals, self.n_sym, node_tok, self.tok_len, cost, stop=False
        )


def _e_step_slices(args, cuts, shortcut, stop):
    """``_e_step`` on each slice ``cuts[i]..cuts[i+1]`` of the pretokens, on threads; their usage summed."""
    from concurrent.futures import ThreadPoolExecutor
    from fastsw.trainers.mingram_kernels import _e_step

    ranges = [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:])]
    if len(ranges) == 1:
        return _e_step(*args, ranges[0][0], ranges[0][1], shortcut, stop)
    with ThreadPoolExecutor(max_workers=len(ranges)) as pool:
        parts = list(pool.map(lambda r: _e_step(*args, r[0], r[1], shortcut, stop), ranges))
    return np.sum(parts, axis=0, dtype=np.int64)


def mi_scores_fast(lat: FastLattice, order, cost, n_atoms):
    """:func:`fastsw.trainers.mingram.mi_scores_reference` with the paths and covers from the kernels' program (covers in numpy-free
    Python over the packed paths would be slow, so the min-cover passes run in the kernel module)."""
    from fastsw._interrupt import call_kernel
    from fastsw.trainers.mingram_kernels import _mi_scores

    keys, vals, node_tok = lat.trie(order)
    lmax = int(lat.tok_len[np.asarray(order, np.int64)].max()) if len(order) else 1
    return call_kernel(
        _mi_scores,
        lat.sym,
        lat.offsets,
        lat.counts,
        keys,
        vals,
        lat.n_sym,
        node_tok,
        lat.tok_len,
        cost,
        int(n_atoms),
        int(lmax),
        lat.n_tokens,
        stop=False,
    )


class MinGramFastEncoder(FastEncoder):
    """:class:`fastsw.encoding.encode_fast.FastEncoder`'s batch driver (pre-tokenization, slices, threads) around
    :func:`fastsw.trainers.mingram_kernels._encode_docs`."""

    def __init__(self, tok):
        import threading

        if not supported(tok.alphabet):
            raise ValueError(
                f"the fast encoder supports byte alphabets only, not {tok.alphabet.kind!r}; use backend='python'"
            )
        from fastsw.trainers.mingram_kernels import _DENSE_ENTRIES, _build_trie, _dense_rows

        self._init_shared(tok.alphabet, tok.pretokenizer, tok.n_vocab, tok.vocab, tok._shortcut)
        self._scratch = threading.local()
        lat = FastLattice(np.zeros(0, np.int32), np.zeros(1, np.int64), [], tok.tokens, len(tok.alphabet))
        every = np.arange(len(tok.tokens), dtype=np.int64)
        self.keys, self.vals, self.node_tok = _build_trie(lat.tok_sym, lat.tok_off, every, lat.n_sym)
        self.dense, self.row = _dense_rows(self.keys, self.vals, self.node_tok.shape[0], lat.n_sym, _DENSE_ENTRIES)
        self.tok_len = lat.tok_len
        self.n_sym = lat.n_sym
        self.cost = np.ascontiguousarray(tok._cost, dtype=np.float64)
        self.shortcut_ok = tok._shortcut_ok

    def _kernel(self, data: bytes, piece_ends, doc_pieces, shortcut, short_limit=None, interruptible: bool = False):
        import threading
        from fastsw._interrupt import call_kernel
        from fastsw.trainers.mingram_kernels import _encode_docs
        from fastsw.encoding.encode_fast import _WORKER_BYTES

        args = (
            np.frombuffer(data or b"\0", np.uint8),
            piece_ends,
            doc_pieces,
            self.byte_ids,
            self.keys,
            self.vals,
            self.dense,
            self.row,
            self.n_sym,
            self.node_tok,
            self.tok_len,
            self.cost,
            self.sc_short,
            self.sc_long,
            self.tb,
            int(bool(shortcut) and self.shortcut_ok),
            int(self.atoms),
        )
        main = threading.current_thread() is threading.main_thread()
        if interruptible or (len(data) >= _WORKER_BYTES and main):
            return call_kernel(_encode_docs, *args, stop=False)
        return _encode_docs(*args)
