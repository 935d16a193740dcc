"""Counting: pretokens and letter runs of a corpus, serial or on all cores, and count files.

This module owns the first stage of training (SPEC section 4, "aggregate pretokens by count", and the letter runs
that section 5 cuts into supermerge candidates). It turns a stream of documents into a :class:`Counts` table; it
never learns merges. :mod:`fastsw.trainers.train` consumes the table, :mod:`fastsw.corpus.readers` produces the documents and
:mod:`fastsw.pretokenizers.pretokenize` splits them.

Two counters, one answer:

* the reference, :class:`CountTable` (:func:`count_corpus_reference`): the plain loop, one dict operation per
  pretoken, that a reader can check. It counts custom patterns, and everything when ``FASTSW_PUREPYTHON`` is set.
* the compiled counter ``fastsw.pretokenizers._pretok.Counter`` (:class:`NativeCountTable`, ``fastsw/pretokenizers/_counter.pxi``): the
  default patterns, one thread per core in :func:`count_corpus`, runs kept packed.

:func:`count_corpus_parallel` sends documents in batches to worker processes; each fills its own table of either
kind, and the tables are merged (letter runs re-indexed by pretoken): the compiled ones by
``Counter.merge_table``, the reference ones by :meth:`Counts.merge`.

All paths give the same multiset of ``(pretoken, count)`` and of ``(letter run as pretoken strings, count)``; the
order of ``Counts.pretokens`` may differ, and training does not depend on it (ties are broken by the profile's
rules on token bytes, never by pretoken order; ``tests/corpus/test_counting.py`` checks this).

Count file format (version 1), written by :meth:`Counts.save`: gzip-compressed UTF-8 JSON Lines.

* line 1, the header: ``{"format": "fastsw-counts", "format_version": 1, "pretokenizer": {...config...},
  "runs": true|false, "documents": D, "bytes": B, "pretokens": P, "letter_runs": R}``, and ``"normalize": "nfc"``
  or ``"nfkc"`` when the documents were normalized before counting (absent: not normalized);
* the next P lines: ``[pretoken, count, has_letter]`` (a JSON string, an integer >= 1, 0 or 1); the line number
  minus 2 is the pretoken's index in this file;
* the next R lines: ``[count, i1, i2, ...]``, a letter run (>= 2 pretoken indices of this file) and its count.

Language columns (a table from :meth:`Counts.from_languages`): the header also holds ``"languages": [L1, L2, ...]``,
``"language_documents"`` and ``"language_bytes"`` (one integer per language), a pretoken row is
``[pretoken, [c1, c2, ...], has_letter]`` and a letter-run row ``[[c1, c2, ...], i1, i2, ...]``: one count per
language (>= 0, summing to >= 1). A table without languages is written exactly as before (no "languages" key), and
such a file loads as a table without languages (one unnamed language).

Rows are in a canonical order: pretokens sorted by code points, letter-run lines sorted as strings. So a file
depends only on the counted text, not on how it was counted (``--workers``, threads).

Pretokens are stored as JSON strings, so every ``str`` round-trips. A lone surrogate (the atoms of the scheme
pre-tokenizers, :mod:`fastsw.alphabet`) is written as its own three bytes (``surrogatepass``), not as a ``\\udXXX``
escape: JSON joins an escaped high surrogate and an escaped low one into one character, which two adjacent atoms
are not (SCRIPT's block and index atoms; files written with escapes still load). Counts are unbounded JSON integers. The file is written to a temporary file and renamed, so a crash never
leaves half a table. Pickle is never used for files (only to send batches between processes).
"""

from __future__ import annotations

import gzip
import json
import math
import multiprocessing
import numbers
import operator
import os
import queue
import sys
import warnings
import zlib
from decimal import Decimal
from fractions import Fraction
from itertools import chain, islice
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from fastsw._config import pure_python
from fastsw._types import PathLike
from fastsw.files import read_head
from fastsw.io.model_file import atomic_open
from fastsw.pretokenizers.base import BasePretokenizer
from fastsw.pretokenizers.pretokenize import LETTER_PATTERN, check_normalize, normalize_text
from fastsw.pretokenizers.pretokenize import Pretokenizer  # noqa: F401 (the examples in the docstrings use it)
from fastsw.pretokenizers.registry import pretokenizer_from_config

__all__ = [
    "Counts",
    "CountTable",
    "count_corpus",
    "count_corpus_reference",
    "count_corpus_parallel",
    "load_counts",
    "default_workers",
    "COUNTS_FORMAT",
    "COUNTS_FORMAT_VERSION",
    "count_languages",
    "int64_overflow",
    "language_weights",
    "scaled_weights",
    "weighted_counts",
]

COUNTS_FORMAT = "fastsw-counts"
COUNTS_FORMAT_VERSION = 1

#: Documents are sent to workers in batches of about this many bytes of text (tests make it small).
BATCH_BYTES = 1 << 18
#: ... and of at most this many documents.
BATCH_DOCS = 4096
#: The compiled counter's batches start at ``BATCH_BYTES`` and double up to this many times it: each batch costs a
#: hand-over between threads (the queue, and the GIL, which the reading thread holds nearly all the time), so a big
#: corpus goes in big batches, while the first, small ones keep every thread busy on a small corpus.
BATCH_GROWTH = 8
#: ``train(workers=None)`` counts on all cores only when its input files hold at least this many bytes on disk.
PARALLEL_MIN_BYTES = 16 << 20
#: The largest count fastsw trains on: counts, and the pair counts summed from them, are 64-bit in the kernels.
MAX_COUNT = (1 << 63) - 1


def _doc_bytes(doc: str) -> int:
    return len(doc) if doc.isascii() else len(doc.encode("utf-8", "surrogatepass"))


# ---- the count table ---------------------------------------------------------------------------------------------


class Counts:
    """Aggregated pretokens (and letter runs) of a corpus.

    ``pretokens[i]`` occurs ``counts[i]`` times (Python ints, so never overflowing); ``has_letter[i]`` says whether
    it contains a letter (the pretokenizer's letter pattern); ``letter_runs`` maps runs of pretoken indices
    (maximal runs of >= 2 letter-containing pretokens inside one document) to their counts. ``has_runs`` is False
    when the runs were not collected (plain BPE needs none). ``pretokenizer_config`` is the
    :meth:`~fastsw.pretokenizers.pretokenize.Pretokenizer.to_config` of the pretokenizer that produced the table (None for a
    table built by hand); tables with different configs are never merged or trained together. ``normalize`` is
    the normalization the documents had before counting (None, ``"nfc"`` or ``"nfkc"``); tables with different
    normalizations are never merged either.
    """

    def __init__(
        self, pretokenizer_config: Optional[dict] = None, has_runs: bool = True, normalize: Optional[str] = None
    ):
        self._index: Optional[Dict[str, int]] = {}
        self.pretokens: List[str] = []
        self.counts: List[int] = []
        self.has_letter: List[bool] = []
        self._letter_runs: Dict[Tuple[int, ...], int] = {}
        self._packed_runs = (
            None  # (ids, offsets, counts) numpy arrays from the compiled counter, until asked for a dict
        )
        self._runs_distinct = True  # False: _packed_runs holds runs as read, a run possibly more than once
        self.n_documents = 0
        self.n_bytes = 0
        self.has_runs = has_runs
        self.pretokenizer_config = pretokenizer_config
        self.normalize = check_normalize(normalize)
        self.source: Optional[str] = None  # the file it was loaded from, for error messages
        # language columns (None: one unnamed language, the table as it always was); see from_languages
        self.languages: Optional[List[str]] = None
        self.language_counts: Optional[List[List[int]]] = None  # [language][pretoken index]
        self.language_runs: Optional[List[Dict[Tuple[int, ...], int]]] = None  # [language]{run: count}
        self.language_documents: Optional[List[int]] = None
        self.language_bytes: Optional[List[int]] = None

    def __repr__(self) -> str:
        runs = f"{self.n_runs} letter runs" if self.has_runs else "no letter runs"
        langs = f", languages {', '.join(self.languages)}" if self.languages is not None else ""
        return (
            f"Counts({self.n_documents} documents, {self.n_bytes} bytes, {len(self.pretokens)} distinct "
            f"pretokens, {runs}{langs})"
        )

    @property
    def index(self) -> Dict[str, int]:
        """``{pretoken: its index in pretokens}`` (built on first use for a table from the compiled counter,
        since training never needs it)."""
        if self._index is None:
            self._index = dict(zip(self.pretokens, range(len(self.pretokens))))
        return self._index

    @index.setter
    def index(self, index: Dict[str, int]) -> None:
        self._index = index

    # -- letter runs: a dict, or packed arrays from the compiled counter -------------------------------------------
    @property
    def letter_runs(self) -> Dict[Tuple[int, ...], int]:
        """``{run (tuple of pretoken indices): count}``. A table from the compiled counter keeps its runs packed
        (:meth:`packed_runs`) and builds this dict only when it is asked for."""
        if self._packed_runs is not None:
            self._letter_runs = _runs_to_dict(*self.packed_runs())
            self._packed_runs = None
        return self._letter_runs

    @letter_runs.setter
    def letter_runs(self, runs: Dict[Tuple[int, ...], int]) -> None:
        self._letter_runs = runs
        self._packed_runs = None
        self._runs_distinct = True

    @property
    def n_runs(self) -> int:
        """The number of distinct letter runs."""
        return len(self.packed_runs()[2]) if self._packed_runs is not None else len(self._letter_runs)

    def _set_read_runs(self, runs: Tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        """Letter runs as the compiled counter read them (``Counter.take_raw_runs``: packed, a run possibly
        several times), aggregated only when they are asked for as a table (:meth:`packed_runs`)."""
        self._letter_runs = {}
        self._packed_runs = runs
        self._runs_distinct = False

    def read_runs(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The letter runs packed as :meth:`packed_runs` gives them, except that a run may be there more than
        once (its counts add up): for readers that aggregate anyway, such as the supermerge candidates
        (``fastsw.pretokenizers._pretok.aggregate_runs``), which so skip a pass that hashes every run."""
        if self._packed_runs is not None and not self._runs_distinct:
            return self._packed_runs
        return self.packed_runs()

    def packed_runs(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The letter runs as numpy arrays ``(ids, offsets, counts)``: ``int32`` pretoken indices of all runs
        concatenated, ``int64`` offsets (one more than runs) and ``int64`` counts, in the order of
        :attr:`letter_runs`."""
        if self._packed_runs is not None:
            if not self._runs_distinct:
                from fastsw.pretokenizers._pretok import aggregate_runs

                identity = np.arange(len(self.pretokens), dtype=np.int64)
                self._packed_runs = aggregate_runs(*self._packed_runs, identity)
                self._runs_distinct = True
            return self._packed_runs
        runs = self._letter_runs
        lengths = np.fromiter(map(len, runs), dtype=np.int64, count=len(runs))
        offsets = np.zeros(len(runs) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        ids = np.fromiter(chain.from_iterable(runs), dtype=np.int64, count=int(offsets[-1]))
        if ids.size and (ids.min() < 0 or ids.max() >= len(self.pretokens)):
            raise ValueError("a letter run refers to a pretoken index outside the table")
        counts = np.fromiter(runs.values(), dtype=np.int64, count=len(runs))
        return ids.astype(np.int32), offsets, counts

    # -- comparisons (tests) -----------------------------------------------------------------------------------
    def pretoken_multiset(self) -> Dict[str, int]:
        """``{pretoken: count}``: the table without its order."""
        return dict(zip(self.pretokens, self.counts))

    def run_multiset(self) -> Dict[Tuple[str, ...], int]:
        """``{letter run as a tuple of pretoken strings: count}``: the runs without pretoken indices."""
        p = self.pretokens
        return {tuple(p[i] for i in run): c for run, c in self.letter_runs.items()}

    # -- merging ----------------------------------------------------------------------------------------------
    def merge(self, other: "Counts") -> "Counts":
        """Add ``other``'s counts to this table (in place) and return it.

        Pretokens are matched by string, so letter runs are re-indexed. Both tables must come from the same
        pretokenizer. If either table has no letter runs, the result has none (``has_runs`` False).
        """
        if not isinstance(other, Counts):
            raise TypeError(f"can only merge Counts, not {type(other).__name__}")
        _check_same_pretokenizer(self, other)
        if self.pretokenizer_config is None:
            self.pretokenizer_config = other.pretokenizer_config
        if self.languages is not None or other.languages is not None:
            return self._merge_languages(other)
        runs = (
            (other.packed_runs() if other._packed_runs is not None else other._letter_runs) if other.has_runs else None
        )
        self._merge_parts(other.pretokens, other.counts, other.has_letter, runs, other.n_documents, other.n_bytes)
        return self

    def _merge_parts(self, pretokens, counts, has_letter, runs, n_documents: int, n_bytes: int) -> None:
        """``merge`` of a table given as its parts (a worker's payload): ``counts`` and ``has_letter`` any
        sequences of ints; ``runs`` None (no letter runs), a dict, or packed ``(ids, offsets, counts)`` arrays."""
        if isinstance(counts, np.ndarray):  # a compiled counter's table: sums of numpy ints would stay numpy ints
            counts = counts.tolist()
        if isinstance(runs, tuple):
            runs = _runs_to_dict(*runs)
        index, my_pretokens, my_counts, my_letter = self.index, self.pretokens, self.counts, self.has_letter
        remap = [0] * len(pretokens)
        get_index = index.get
        for j, piece in enumerate(pretokens):
            i = get_index(piece)
            if i is None:
                i = index[piece] = len(my_pretokens)
                my_pretokens.append(piece)
                my_counts.append(counts[j])
                my_letter.append(bool(has_letter[j]))
            else:
                my_counts[i] += counts[j]
            remap[j] = i
        if self.has_runs and runs is not None:
            my_runs = self.letter_runs
            get = remap.__getitem__
            get_count = my_runs.get
            for run, count in runs.items():
                key = tuple(map(get, run))
                my_runs[key] = get_count(key, 0) + count
        else:
            self.has_runs = False
            self.letter_runs = {}
        self.n_documents += n_documents
        self.n_bytes += n_bytes

    # -- language columns -------------------------------------------------------------------------------------
    @classmethod
    def from_languages(cls, tables: Dict[str, "Counts"]) -> "Counts":
        """One table with a count column per language from ``{language: table}`` (tables without languages, same
        pretokenizer). ``counts`` and ``letter_runs`` are the columns' sums (every language with weight 1), so
        the table trains like the concatenated text; :meth:`weighted` applies other weights.

            >>> pretok = Pretokenizer()
            >>> t = Counts.from_languages({"en": count_corpus(["a b"], pretok, collect_runs=True),
            ...                            "de": count_corpus(["b c"], pretok, collect_runs=True)})
            >>> t.languages, t.pretoken_multiset(), t.language_multiset("de")
            (['en', 'de'], {'a': 1, ' b': 1, 'b': 1, ' c': 1}, {'b': 1, ' c': 1})
        """
        if not tables:
            raise ValueError("no languages given; give at least one language and its text")
        parts = list(tables.items())
        first = parts[0][1]
        out = cls(
            pretokenizer_config=first.pretokenizer_config,
            has_runs=all(t.has_runs for _, t in parts),
            normalize=first.normalize,
        )
        for name, t in parts:
            if t.languages is not None:
                raise ValueError(f"the table of language {name!r} already has languages {t.languages}")
            out.merge(t)
        index, n = out.index, len(out.pretokens)
        out.languages = [name for name, _ in parts]
        out.language_counts, out.language_runs = [], []
        for _, t in parts:
            column = [0] * n
            remap = [index[p] for p in t.pretokens]
            for j, c in enumerate(t.counts):
                column[remap[j]] = int(c)
            out.language_counts.append(column)
            if out.has_runs:
                get = remap.__getitem__
                out.language_runs.append({tuple(map(get, run)): c for run, c in t.letter_runs.items()})
        if not out.has_runs:
            out.language_runs = None
        out.language_documents = [t.n_documents for _, t in parts]
        out.language_bytes = [t.n_bytes for _, t in parts]
        return out

    def by_language(self) -> Dict[str, "Counts"]:
        """``{language: its table}`` (tables without languages), the inverse of :meth:`from_languages`."""
        if self.languages is None:
            raise ValueError("the count table has no languages")
        out = {}
        for k, name in enumerate(self.languages):
            t = Counts(pretokenizer_config=self.pretokenizer_config, has_runs=self.has_runs, normalize=self.normalize)
            column = self.language_counts[k]
            keep = [i for i in range(len(self.pretokens)) if column[i]]
            row = {i: r for r, i in enumerate(keep)}
            t.pretokens = [self.pretokens[i] for i in keep]
            t.index = dict(zip(t.pretokens, range(len(keep))))
            t.counts = [column[i] for i in keep]
            t.has_letter = [self.has_letter[i] for i in keep]
            if self.has_runs:
                t.letter_runs = {tuple(row[i] for i in run): c for run, c in self.language_runs[k].items()}
            t.n_documents, t.n_bytes = self.language_documents[k], self.language_bytes[k]
            out[name] = t
        return out

    def language_multiset(self, language: str) -> Dict[str, int]:
        """``{pretoken: count}`` of one language (pretokens it does not contain are left out)."""
        column = self.language_counts[self.languages.index(language)]
        return {p: c for p, c in zip(self.pretokens, column) if c}

    def weighted(self, weights: Dict[str, int]) -> "Counts":
        """A table without languages whose counts are ``sum(weights[L] * count in L)`` over the languages (integer
        weights >= 1, one per language: :func:`scaled_weights` makes them). A weight of 2 counts that language's
        text twice, exactly as if it had been included twice."""
        if self.languages is None:
            raise ValueError("the count table has no languages to weight")
        w = [weights[name] for name in self.languages]
        out = Counts(pretokenizer_config=self.pretokenizer_config, has_runs=self.has_runs, normalize=self.normalize)
        out.pretokens, out.has_letter, out.index = list(self.pretokens), list(self.has_letter), None
        n = len(self.pretokens)
        out.counts = [sum(wk * col[i] for wk, col in zip(w, self.language_counts)) for i in range(n)]
        if self.has_runs:
            runs: Dict[Tuple[int, ...], int] = {}
            for wk, lang_runs in zip(w, self.language_runs):
                for run, c in lang_runs.items():
                    runs[run] = runs.get(run, 0) + wk * c
            out.letter_runs = runs
        out.n_documents = sum(wk * d for wk, d in zip(w, self.language_documents))
        out.n_bytes = sum(wk * b for wk, b in zip(w, self.language_bytes))
        out.source = self.source
        return out

    def _merge_languages(self, other: "Counts") -> "Counts":
        """``merge`` of tables with language columns: languages are matched by name (this table's first, then
        ``other``'s new ones)."""

        def empty(t: Counts) -> bool:  # a table nothing was added to (load_counts starts from one)
            return t.languages is None and not t.pretokens and not t.n_documents

        for t in (self, other):
            if t.languages is None and not empty(t):
                name = t.source or "one of the count tables"
                raise ValueError(
                    f"{name} has no languages, but another table has; count every part with "
                    "languages ('fastsw count --lang LANG=PATH') or every part without"
                )
        mine = {} if empty(self) else self.by_language()
        theirs = {} if empty(other) else other.by_language()
        for name, t in theirs.items():
            if name in mine:
                mine[name].merge(t)
            else:
                mine[name] = t
        merged = Counts.from_languages(mine)
        source = self.source
        self.__dict__.update(merged.__dict__)
        self.source = source
        return self

    # -- files ------------------------------------------------------------------------------------------------
    def save(self, path: PathLike) -> None:
        """Write the table to ``path`` (format in the module docstring; atomic).

        Rows are written in a canonical order (pretokens by code points, letter-run lines as strings), so the
        file depends only on the counted text, never on how it was counted (workers, threads)."""
        header = {
            "format": COUNTS_FORMAT,
            "format_version": COUNTS_FORMAT_VERSION,
            "pretokenizer": self.pretokenizer_config,
            "runs": bool(self.has_runs),
            "documents": self.n_documents,
            "bytes": self.n_bytes,
            "pretokens": len(self.pretokens),
            "letter_runs": self.n_runs if self.has_runs else 0,
        }
        if self.normalize is not None:
            header["normalize"] = self.normalize
        pretokens, counts, letter = self.pretokens, self.counts, self.has_letter
        order = sorted(range(len(pretokens)), key=pretokens.__getitem__)
        if self.languages is not None:
            header.update(
                languages=self.languages, language_documents=self.language_documents, language_bytes=self.language_bytes
            )
            _atomic_write_gzip(path, self._language_lines(header, order))
            return
        lines = (
            [json.dumps(header, ensure_ascii=False)],
            (json.dumps([pretokens[i], int(counts[i]), int(bool(letter[i]))], ensure_ascii=False) for i in order),
            self._run_lines(order) if self.has_runs else (),
        )
        _atomic_write_gzip(path, (line for part in lines for line in part))

    def _language_lines(self, header: dict, order: List[int]):
        """The lines of a table with language columns (format in the module docstring), canonical order."""
        yield json.dumps(header, ensure_ascii=False)
        columns = self.language_counts
        for i in order:
            yield json.dumps(
                [self.pretokens[i], [int(col[i]) for col in columns], int(bool(self.has_letter[i]))], ensure_ascii=False
            )
        if self.has_runs:
            row_of = [0] * len(order)
            for row, i in enumerate(order):
                row_of[i] = row
            lines = [
                json.dumps([[lang_runs.get(run, 0) for lang_runs in self.language_runs], *(row_of[i] for i in run)])
                for run in self.letter_runs
            ]
            lines.sort()
            yield from lines

    def _run_lines(self, order: List[int]) -> List[str]:
        """The letter-run lines, re-indexed to the pretoken rows ``order``, sorted as strings (a canonical
        order: runs are distinct, so their lines are; cheaper than sorting index tuples)."""
        row_of = [0] * len(order)
        for row, i in enumerate(order):
            row_of[i] = row
        # "[c, i1, i2]" as json.dumps writes a list of ints, without its per-call overhead
        if self._packed_runs is None:
            get = row_of.__getitem__
            lines = [f"[{c}, {', '.join(map(str, map(get, run)))}]" for run, c in self._letter_runs.items()]
        else:
            ids, offsets, counts = self.packed_runs()
            flat = list(map(str, np.asarray(row_of, dtype=np.int64)[ids].tolist())) if ids.size else []
            bounds = offsets.tolist()
            lines = [f"[{c}, {', '.join(flat[bounds[k] : bounds[k + 1]])}]" for k, c in enumerate(counts.tolist())]
        lines.sort()
        return lines

    @classmethod
    def load(cls, path: PathLike) -> "Counts":
        """Read a table written by :meth:`save`; a bad file is a ``ValueError`` naming it (and the line)."""
        return _load(Path(path))


def _runs_to_dict(ids, offsets, counts) -> Dict[Tuple[int, ...], int]:
    """Packed letter runs (see :meth:`Counts.packed_runs`) as a dict, in order; a run there more than once (as
    :meth:`Counts.read_runs` and a compiled counter's ``take_raw_runs`` may give them) gets its counts summed."""
    flat, bounds = ids.tolist(), offsets.tolist()
    out: Dict[Tuple[int, ...], int] = {}
    get = out.get
    for k, c in enumerate(counts.tolist()):
        key = tuple(flat[bounds[k] : bounds[k + 1]])
        out[key] = get(key, 0) + c
    return out


def _check_same_pretokenizer(a: Counts, b: Counts) -> None:
    if (
        a.pretokenizer_config is not None
        and b.pretokenizer_config is not None
        and a.pretokenizer_config != b.pretokenizer_config
    ):
        diff = sorted(
            k
            for k in set(a.pretokenizer_config) | set(b.pretokenizer_config)
            if a.pretokenizer_config.get(k) != b.pretokenizer_config.get(k)
        )
        names = " and ".join(s for s in (a.source, b.source) if s) or "the two count tables"
        raise ValueError(
            f"{names} were counted with different pretokenizers (they differ in "
            f"{', '.join(diff)}); count every part with the same --pretokenizer settings"
        )
    if a.normalize != b.normalize:
        names = " and ".join(s for s in (a.source, b.source) if s) or "the two count tables"
        raise ValueError(
            f"{names} were counted with different normalizations ({a.normalize or 'none'} and "
            f"{b.normalize or 'none'}); count every part with the same --normalize setting"
        )


def _atomic_write_gzip(path, lines: Iterable[str]) -> None:
    """Write ``lines`` (each + "\\n") as gzip to ``path`` via a temporary file and ``os.replace``."""
    with atomic_open(path, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=4, mtime=0) as gz:
            block: List[str] = []
            for line in lines:
                block.append(line)
                if len(block) >= 65536:
                    gz.write(_encode_block(block))
                    block = []
            if block:
                gz.write(_encode_block(block))


def _encode_block(block: List[str]) -> bytes:
    # lone surrogates (atoms) as their own bytes: an escaped pair would read back as one character
    return ("\n".join(block) + "\n").encode("utf-8", "surrogatepass")


def _decode_line(data: bytes) -> str:
    """A data line's text for ``json.loads`` (lone surrogates written by :func:`_encode_block` come back as they are)."""
    return data.decode("utf-8", "surrogatepass")


def _is_count(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 1


def _count_too_large(x) -> Optional[str]:
    """The error for a count beyond :data:`MAX_COUNT`, else None."""
    if isinstance(x, int) and x > MAX_COUNT:
        return (
            f"count {x} is larger than 2**63-1 = {MAX_COUNT}, the largest count fastsw trains on "
            "(counts are 64-bit); divide the counts of this table"
        )
    return None


def _load(path: Path) -> Counts:
    magic = read_head(path, 2, "count file")
    if magic != b"\x1f\x8b":
        raise ValueError(f"{path}: not a fastsw count file (not gzip data); write one with 'fastsw count'")
    lineno = 0
    try:
        with gzip.open(path, "rb") as f:
            lineno = 1
            header = json.loads(f.readline())
            if not isinstance(header, dict) or header.get("format") != COUNTS_FORMAT:
                raise ValueError(f'not a fastsw count file (missing "format": "{COUNTS_FORMAT}")')
            version = header.get("format_version")
            if not isinstance(version, int) or isinstance(version, bool):
                raise ValueError("the header has no integer format_version")
            if version > COUNTS_FORMAT_VERSION:
                raise ValueError(
                    f"count format version {version} is newer than this fastsw supports "
                    f"({COUNTS_FORMAT_VERSION}); upgrade fastsw to read it"
                )
            if version < 1:
                raise ValueError(f"unsupported count format version {version}")
            n_pre, n_runs = header.get("pretokens"), header.get("letter_runs")
            n_docs, n_bytes = header.get("documents"), header.get("bytes")
            if not all(
                isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in (n_pre, n_runs, n_docs, n_bytes)
            ):
                raise ValueError("the header needs non-negative integers pretokens, letter_runs, documents, bytes")
            config = header.get("pretokenizer")
            if not isinstance(config, dict):
                raise ValueError("the header has no pretokenizer config")
            pretokenizer_from_config(config)  # validates it
            normalize = header.get("normalize")
            if normalize not in ("nfc", "nfkc", None):
                raise ValueError(f'the header\'s normalize {normalize!r} is not one of "nfc", "nfkc" (or absent)')
            c = Counts(pretokenizer_config=config, has_runs=bool(header.get("runs")), normalize=normalize)
            c.n_documents, c.n_bytes = n_docs, n_bytes
            lines = f.read().split(b"\n")
            if lines[-1] == b"":
                lines.pop()
            if "languages" in header:
                lineno = _load_language_rows(header, lines, n_pre, n_runs, c)
                c.source = str(path)
                return c
            if _load_rows_fast(lines, n_pre, n_runs, c):
                c.source = str(path)
                return c
            # a problem somewhere: read line by line to report where
            rows = iter(lines)
            index, pretokens, counts, letter = c.index, c.pretokens, c.counts, c.has_letter
            for i in range(n_pre):
                lineno += 1
                row = json.loads(_decode_line(next(rows, b"null")))
                if isinstance(row, list) and len(row) == 3 and _count_too_large(row[1]):
                    raise ValueError(_count_too_large(row[1]))
                if not (
                    isinstance(row, list)
                    and len(row) == 3
                    and isinstance(row[0], str)
                    and _is_count(row[1])
                    and row[2] in (0, 1)
                    and not isinstance(row[2], bool)
                ):
                    raise ValueError(
                        "expected [pretoken, count >= 1, has_letter 0/1]"
                        + (" (the file ends early)" if row is None else "")
                    )
                if row[0] in index:
                    raise ValueError(f"pretoken {row[0]!r} appears twice")
                index[row[0]] = i
                pretokens.append(row[0])
                counts.append(row[1])
                letter.append(bool(row[2]))
            runs = c.letter_runs
            for _ in range(n_runs):
                lineno += 1
                row = json.loads(_decode_line(next(rows, b"null")))
                if isinstance(row, list) and row and _count_too_large(row[0]):
                    raise ValueError(_count_too_large(row[0]))
                if not (
                    isinstance(row, list)
                    and len(row) >= 3
                    and _is_count(row[0])
                    and all(
                        isinstance(k, int) and not isinstance(k, bool) and 0 <= k < n_pre and letter[k] for k in row[1:]
                    )
                ):
                    raise ValueError(
                        "expected [count >= 1, i1, i2, ...], a run of >= 2 indices of "
                        "letter pretokens" + (" (the file ends early)" if row is None else "")
                    )
                key = tuple(row[1:])
                if key in runs:
                    raise ValueError("a letter run appears twice")
                runs[key] = row[0]
            lineno += 1
            if next(rows, b"").strip():
                raise ValueError("unexpected data after the last letter run")
    except (OSError, EOFError, zlib.error) as e:
        raise ValueError(f"{path}: cannot read count file, the gzip data is damaged or truncated ({e})") from e
    except _RowError as e:
        raise ValueError(f"{path} line {e.lineno}: invalid count file: {e}") from e
    except json.JSONDecodeError as e:
        raise ValueError(f"{path} line {lineno}: invalid count file (bad JSON: {e.msg})") from e
    except UnicodeDecodeError as e:
        raise ValueError(f"{path} line {lineno}: invalid count file (invalid UTF-8)") from e
    except ValueError as e:
        raise ValueError(f"{path} line {lineno}: invalid count file: {e}") from e
    c.source = str(path)
    return c


class _RowError(ValueError):
    """A bad row of a count file with language columns, and its line number."""

    def __init__(self, lineno: int, message: str):
        super().__init__(message)
        self.lineno = lineno


def _json_row(lines: List[bytes], k: int):
    """Row ``k`` (0-based after the header) parsed, None past the end; bad JSON is a :class:`_RowError`."""
    if k >= len(lines):
        return None
    try:
        return json.loads(_decode_line(lines[k]))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise _RowError(k + 2, f"bad JSON ({e})") from e


def _load_language_rows(header: dict, lines: List[bytes], n_pre: int, n_runs: int, c: Counts) -> int:
    """Fill ``c`` from the rows of a count file with language columns (see the module docstring); a bad row is
    a :class:`_RowError` with its line number."""
    languages = header["languages"]
    if not (
        isinstance(languages, list)
        and languages
        and all(isinstance(x, str) and x for x in languages)
        and len(set(languages)) == len(languages)
    ):
        raise ValueError("the header's languages must be a list of distinct non-empty names")
    n_lang = len(languages)
    per_lang = {}
    for key in ("language_documents", "language_bytes"):
        value = header.get(key)
        if not (isinstance(value, list) and len(value) == n_lang and all(type(x) is int and x >= 0 for x in value)):
            raise ValueError(f"the header needs {key}: a list of {n_lang} non-negative integers")
        per_lang[key] = value

    def counts_of(cell, lineno: int) -> List[int]:
        if not (
            type(cell) is list
            and len(cell) == n_lang
            and all(type(x) is int and x >= 0 for x in cell)
            and sum(cell) >= 1
        ):
            raise _RowError(lineno, f"expected {n_lang} counts >= 0 (one per language, summing to >= 1)")
        if _count_too_large(sum(cell)):
            raise _RowError(lineno, _count_too_large(sum(cell)))
        return cell

    columns: List[List[int]] = [[] for _ in languages]
    index, pretokens, counts, letter = c.index, c.pretokens, c.counts, c.has_letter
    for k in range(n_pre):
        lineno = k + 2
        row = _json_row(lines, k)
        if not (
            isinstance(row, list)
            and len(row) == 3
            and isinstance(row[0], str)
            and row[2] in (0, 1)
            and not isinstance(row[2], bool)
        ):
            raise _RowError(
                lineno,
                "expected [pretoken, [count per language], has_letter 0/1]"
                + (" (the file ends early)" if row is None else ""),
            )
        cell = counts_of(row[1], lineno)
        if row[0] in index:
            raise _RowError(lineno, f"pretoken {row[0]!r} appears twice")
        index[row[0]] = k
        pretokens.append(row[0])
        counts.append(sum(cell))
        letter.append(bool(row[2]))
        for col, x in zip(columns, cell):
            col.append(x)
    lang_runs: List[Dict[Tuple[int, ...], int]] = [{} for _ in languages]
    runs = c.letter_runs
    for k in range(n_pre, n_pre + n_runs):
        lineno = k + 2
        row = _json_row(lines, k)
        if not (
            isinstance(row, list)
            and len(row) >= 3
            and all(type(i) is int and 0 <= i < n_pre and letter[i] for i in row[1:])
        ):
            raise _RowError(
                lineno,
                "expected [[count per language], i1, i2, ...], a run of >= 2 indices of "
                "letter pretokens" + (" (the file ends early)" if row is None else ""),
            )
        cell = counts_of(row[0], lineno)
        key = tuple(row[1:])
        if key in runs:
            raise _RowError(lineno, "a letter run appears twice")
        runs[key] = sum(cell)
        for name, col, d, x in zip(languages, columns, lang_runs, cell):
            if x:
                if not all(col[i] for i in key):
                    raise _RowError(
                        lineno, f"the run has a count in language {name!r}, but one of its pretokens has none there"
                    )
                d[key] = x
    if len(lines) > n_pre + n_runs and any(x.strip() for x in lines[n_pre + n_runs :]):
        raise _RowError(n_pre + n_runs + 2, "unexpected data after the last letter run")
    c.languages, c.language_counts = languages, columns
    c.language_runs = lang_runs if c.has_runs else None
    c.language_documents, c.language_bytes = per_lang["language_documents"], per_lang["language_bytes"]
    return n_pre + n_runs + 1


def _load_rows_fast(lines: List[bytes], n_pre: int, n_runs: int, c: Counts) -> bool:
    """Parse the pretoken and run lines with one ``json.loads`` per block and check them in bulk; fill ``c`` and
    return True, or return False (``c`` untouched) when anything is off, so that the line-by-line reader can
    say which line is wrong."""
    if len(lines) != n_pre + n_runs:
        return False
    try:
        pre = json.loads(_decode_line(b"[" + b",".join(lines[:n_pre]) + b"]"))
        runs = json.loads(_decode_line(b"[" + b",".join(lines[n_pre:]) + b"]"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False
    if len(pre) != n_pre or len(runs) != n_runs:  # a line held more than one row
        return False
    if not all(
        type(r) is list
        and len(r) == 3
        and type(r[0]) is str
        and type(r[1]) is int
        and 1 <= r[1] <= MAX_COUNT
        and type(r[2]) is int
        and 0 <= r[2] <= 1
        for r in pre
    ):
        return False
    pretokens = [r[0] for r in pre]
    index = dict(zip(pretokens, range(n_pre)))
    if len(index) != n_pre:
        return False
    letter = [r[2] == 1 for r in pre]
    if not all(type(r) is list and len(r) >= 3 and type(r[0]) is int and 1 <= r[0] <= MAX_COUNT for r in runs):
        return False
    if not all(type(k) is int and 0 <= k < n_pre and letter[k] for r in runs for k in islice(r, 1, None)):
        return False
    letter_runs = {tuple(islice(r, 1, None)): r[0] for r in runs}
    if len(letter_runs) != n_runs:
        return False
    c.index, c.pretokens, c.counts, c.has_letter = index, pretokens, [r[1] for r in pre], letter
    c.letter_runs = letter_runs
    return True


def load_counts(sources: Union[Counts, PathLike, Sequence[Union[Counts, PathLike]]]) -> Counts:
    """One :class:`Counts` from a ``Counts``, a count file path, or a list of them (merged, in order).

    A list is never modified: loaded or given tables are merged into a new table.
    """
    if isinstance(sources, (Counts, str, os.PathLike)):
        sources = [sources]
    try:
        items = list(sources)
    except TypeError:
        raise TypeError(
            f"from_counts must be a Counts, a count file path or a list of them, not {type(sources).__name__}"
        ) from None
    if not items:
        raise ValueError("from_counts is empty; give at least one count table")
    tables = []
    for item in items:
        if isinstance(item, Counts):
            tables.append(item)
        elif isinstance(item, (str, os.PathLike)):
            tables.append(Counts.load(item))
        else:
            raise TypeError(f"from_counts items must be Counts or count file paths, not {type(item).__name__}")
    if len(tables) == 1:
        return check_count_limits(tables[0])
    first = tables[0]
    out = Counts(pretokenizer_config=first.pretokenizer_config, has_runs=first.has_runs, normalize=first.normalize)
    out.source = first.source
    for t in tables:
        out.merge(t)
    out.source = None
    names = [t.source or f"table {k + 1}" for k, t in enumerate(tables)]
    return check_count_limits(out, what=f"the merged count tables ({', '.join(names)})")


def check_count_limits(counts: Counts, what: Optional[str] = None) -> Counts:
    """Return ``counts`` if fastsw can train on it, else raise ``ValueError``: the pretoken counts, and the
    letter-run counts times their run lengths, must each sum to at most :data:`MAX_COUNT` (``2**63-1``), so that
    no count, and no supermerge candidate's count (run counts summed once per occurrence), overflows the 64-bit
    kernels. A counted corpus is
    far below that; only hand-made or merged tables can reach it. (The merge loops check the pair counts
    they sum: :func:`fastsw.trainers.bpe.check_pair_total`.) :func:`load_counts` calls it on what it returns.

        >>> table = count_corpus(["a b"], Pretokenizer(), collect_runs=True)
        >>> table.counts = [2 ** 62, 2 ** 62]
        >>> check_count_limits(table)
        Traceback (most recent call last):
        ...
        ValueError: the count table: the pretoken counts sum to 9223372036854775808, more than 2**63-1 = ...
    """
    what = what or counts.source or "the count table"
    total = sum(counts.counts)
    if total > MAX_COUNT:
        big = max(range(len(counts.counts)), key=counts.counts.__getitem__)
        raise ValueError(
            f"{what}: the pretoken counts sum to {total}, more than 2**63-1 = {MAX_COUNT}, the "
            f"most fastsw can count (64-bit; the largest is {counts.pretokens[big]!r} with "
            f"{counts.counts[big]}); divide the counts, or train on fewer tables"
        )
    if counts.has_runs:
        # a candidate's count sums its run counts once per occurrence, and a run of n pretokens holds at
        # most n candidate occurrences: bound the sum of count * length (exact Python ints)
        if counts._packed_runs is not None:
            _, offsets, run_counts = counts._packed_runs
            run_total = sum(map(operator.mul, run_counts.tolist(), np.diff(offsets).tolist()))
        else:
            run_total = sum(c * len(run) for run, c in counts._letter_runs.items())
        if run_total > MAX_COUNT:
            raise ValueError(
                f"{what}: the letter-run counts times their lengths sum to {run_total}, more than "
                f"2**63-1 = {MAX_COUNT}, the most fastsw can count in a supermerge candidate (64-bit); "
                "divide the counts, or train on fewer tables"
            )
    return counts


# ---- language weights ------------------------------------------------------------------------------------------
#
# Weights are exact Fractions. Training multiplies each language's counts by its weight times D, the least common
# multiple of the weights' denominators ("scaled integers"): every weighted count is an exact integer, so ties
# stay exact and the unchanged merge loops (both backends) train on them.
#
# Why scaling every count by one constant D > 0 changes no merge choice: each pair count is a sum of pretoken
# (or letter-run) counts, so it is scaled by D too; a merge step takes the pair of largest count, ties broken by
# token bytes/ids, and c1 > c2 <=> D*c1 > D*c2, c1 == c2 <=> D*c1 == D*c2, so every step picks the same pair and
# the words change the same way (the recorded counts are D times as large). The comparisons with a constant are
# "count >= 1" (D*c >= 1 <=> c >= 1 for integers) and, with greedy_split only, min_count = max(c_min,
# min_count_floor), where the floor is compared with the weighted counts: exactly what it is compared with when
# the text is included D times (tests/trainers/test_train_language_weights.py checks weight 2 == text twice).
#
# D can be huge: shares give w = 100000 * p / B, whose denominators are about the languages' byte counts, so D is
# about their product (x1e18 for five languages of 10 kB). Where the scaled counts pass 2**63-1, the factors are
# divided by their gcd (any common factor is free: the choices stay the same), and if they still do not fit, the
# reference path trains on them as exact Python ints (fastsw.train falls back to it from backend="auto"; the
# Numba kernels stay 64-bit). The model's merge counts are the scaled integers, and training_info["weight_scale"]
# says by how much they are scaled (a model file accepts counts beyond 2**63-1 only with it).


def _as_fraction(value, what: str) -> Fraction:
    """``value`` (int, Fraction, Decimal, a decimal or "p/q" string, or a float read as its shortest decimal
    repr) as an exact Fraction."""
    if isinstance(value, bool) or not isinstance(value, (float, numbers.Rational, Decimal, str)):
        raise TypeError(
            f"{what}={value!r} must be a number (int, float, Fraction or a string such as '3/2'), "
            f"not {type(value).__name__}"
        )
    try:
        return Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{what}={value!r} is not a finite number; give e.g. 2, 0.5 or 3/2") from None


def language_weights(
    languages: List[str], language_bytes: List[int], *, weights=None, shares=None
) -> Dict[str, Fraction]:
    """Each language's weight as an exact Fraction: ``weights`` given directly (``{language: w}``, w > 0;
    languages left out weigh 1), or from target byte shares ``{language: p}`` (every language, p > 0, summing
    to exactly 1): ``w = 100000 * p / B`` with ``B`` the language's bytes, so that weighted bytes ``w * B`` are
    proportional to ``p``. Neither: every language weighs 1.

        >>> language_weights(["en", "de"], [1000, 250], shares={"en": "0.8", "de": "0.2"})
        {'en': Fraction(80, 1), 'de': Fraction(80, 1)}
    """
    if weights is not None and shares is not None:
        raise ValueError("give either weights= or shares=, not both")
    given = weights if weights is not None else shares
    what = "weights" if weights is not None else "shares"
    if given is None:
        return {name: Fraction(1) for name in languages}
    if not isinstance(given, dict):
        raise TypeError(f"{what} must be a dict {{language: number}}, not {type(given).__name__}")
    for name in given:
        if name not in languages:
            raise ValueError(
                f"{what} names language {name!r}, which is not one of the languages given "
                f"({', '.join(map(repr, languages))}); give its text, or drop it from {what}"
            )
    values = {name: _as_fraction(v, f"{what}[{name!r}]") for name, v in given.items()}
    for name, v in values.items():
        if v <= 0:
            raise ValueError(
                f"{what}[{name!r}] = {given[name]!r} must be > 0; leave a language out of the inputs to drop it"
            )
    if weights is not None:
        return {name: values.get(name, Fraction(1)) for name in languages}
    missing = [name for name in languages if name not in values]
    if missing:
        raise ValueError(f"shares must give every language a share; missing: {', '.join(map(repr, missing))}")
    total = sum(values.values())
    if total != 1:
        raise ValueError(
            f"shares sum to {total} ({float(total):g}), not 1; give shares that sum to exactly 1 "
            "(e.g. 0.8 and 0.2, or 1/3 and 2/3)"
        )
    return {name: Fraction(100000) * values[name] / b for name, b in zip(languages, language_bytes)}


def scaled_weights(weights: Dict[str, Fraction]) -> Dict[str, int]:
    """The weights times the least common multiple of their denominators: the smallest integers in the same
    proportions whose scale keeps integer weights as they are (``{"en": 1, "de": 2}`` stays as is; ``3/2`` and
    ``1`` become 3 and 2).

        >>> scaled_weights({"en": Fraction(3, 2), "de": Fraction(1)})
        {'en': 3, 'de': 2}
    """
    scale = 1
    for w in weights.values():
        scale = scale * w.denominator // math.gcd(scale, w.denominator)
    return {name: int(w * scale) for name, w in weights.items()}


def weighted_total(values: np.ndarray, counts: np.ndarray) -> int:
    """``Σ values[i] × counts[i]`` over two arrays of non-negative int64, exact: in int64 when a float estimate stays
    below ``2**62``, else in Python ints. Neither sum is a float dot product, which NumPy hands to BLAS: OpenBLAS's
    threads then spin for a while on the cores that the counting and merge kernels use.

        >>> weighted_total(np.array([1, 2, 3]), np.array([4, 5, 6]))
        32
        >>> weighted_total(np.array([2 ** 62, 1]), np.array([4, 1]))  # beyond int64
        18446744073709551617
    """
    estimate = float(np.multiply(values, counts, dtype=np.float64).sum())
    if estimate < 2.0**62:
        return int(np.multiply(values, counts, dtype=np.int64).sum())
    return sum(v * c for v, c in zip(values.tolist(), counts.tolist()))


def int64_overflow(counts: Counts) -> Optional[str]:
    """Why ``counts`` cannot train on the 64-bit kernels (the Numba backend), or None when it can: the pretoken
    counts' sum, a bound on every pair count (``sum(count * (UTF-8 bytes - 1))``: a pretoken starts as at most one
    token per byte in every alphabet) and the letter-run bound of :func:`check_count_limits` must each be at most
    ``2**63-1``. The reference path trains any size exactly on Python ints; :func:`fastsw.train` falls back to it
    for weighted counts that do not fit.

        >>> table = count_corpus(["ab ab"], Pretokenizer(), collect_runs=False)
        >>> int64_overflow(table) is None
        True
        >>> table.counts = [2 ** 62, 2 ** 62]
        >>> int64_overflow(table)
        'the counts can reach 9223372036854775808, more than 2**63-1 = 9223372036854775807'
    """
    try:
        check_count_limits(counts)
    except ValueError:
        total = sum(counts.counts)
        if total > MAX_COUNT:
            return f"the counts can reach {total}, more than 2**63-1 = {MAX_COUNT}"
        return f"the supermerge candidate counts can pass 2**63-1 = {MAX_COUNT}"
    pairs = sum(c * (len(p.encode("utf-8")) - 1) for p, c in zip(counts.pretokens, counts.counts))
    if pairs > MAX_COUNT:
        return f"the pair counts can reach {pairs}, more than 2**63-1 = {MAX_COUNT}"
    return None


def weighted_counts(counts: Counts, *, weights=None, shares=None) -> Tuple[Counts, dict]:
    """``counts`` (a table with languages) with its weights applied (:func:`language_weights`,
    :func:`scaled_weights`, :meth:`Counts.weighted`); and the record for ``training_info``: languages, weights
    (``"p/q"``), the integer factors, the scale (``"p/q"``: every weighted count -- and so every merge count of
    the model -- is ``scale`` times the exact weighted count), bytes per language.

    When the scaled counts do not fit 64 bits (:func:`int64_overflow`), the factors are first divided by their
    greatest common divisor (the same proportions, so the same merges); if they still do not fit, the table holds
    exact big integers, which only the reference path trains on (:func:`fastsw.train` falls back to it).

        >>> c = Counts.from_languages({"en": count_corpus(["ab"], Pretokenizer(), collect_runs=False),
        ...                            "de": count_corpus(["ab ab"], Pretokenizer(), collect_runs=False)})
        >>> table, record = weighted_counts(c, weights={"de": "1/2"})
        >>> table.counts, record["weight_factors"], record["weight_scale"]
        ([3, 1], {'en': 2, 'de': 1}, '2/1')
    """
    fractions = language_weights(counts.languages, counts.language_bytes, weights=weights, shares=shares)
    for name, b in zip(counts.languages, counts.language_bytes):
        if b == 0:
            raise ValueError(f"language {name!r} has no text (0 bytes); give it a file with text or leave it out")
    ints = scaled_weights(fractions)
    table = counts.weighted(ints)
    divisor = math.gcd(*ints.values())
    if divisor > 1 and int64_overflow(table) is not None:
        # only where the old scale overflowed: a model that trained before keeps its counts
        ints = {name: w // divisor for name, w in ints.items()}
        table = counts.weighted(ints)
    first = counts.languages[0]
    scale = ints[first] / fractions[first]
    record = {
        "languages": list(counts.languages),
        "weights": {name: f"{w.numerator}/{w.denominator}" for name, w in fractions.items()},
        "weight_factors": ints,
        "weight_scale": f"{scale.numerator}/{scale.denominator}",
        "language_bytes": dict(zip(counts.languages, counts.language_bytes)),
    }
    return table, record


def count_languages(
    documents: Iterable[Tuple[str, str]],
    pretokenizer: BasePretokenizer,
    *,
    collect_runs: bool,
    progress=None,
    normalize: Optional[str] = None,
) -> Counts:
    """Count ``(language, document)`` pairs in this process into a table with one column per language (in the
    order the languages first appear); each language is counted by its own table of the usual kind (the compiled
    counter, or the reference), so its column equals counting its documents alone. ``normalize`` as in
    :func:`count_corpus`."""
    normalize = check_normalize(normalize)
    tables: Dict[str, object] = {}
    batches: Dict[str, List[str]] = {}
    for lang, doc in documents:
        if normalize is not None:
            doc = normalize_text(doc, normalize)
        batch = batches.get(lang)
        if batch is None:
            tables[lang] = _make_table(pretokenizer, collect_runs)
            batch = batches[lang] = []
        batch.append(doc)
        if len(batch) >= 256:
            tables[lang].add_batch(batch)
            batch.clear()
        if progress is not None:
            progress.update(1, extra="docs")
    for lang, batch in batches.items():
        if batch:
            tables[lang].add_batch(batch)
    if not tables:
        raise ValueError("no document names a language: the inputs hold no documents")
    parts = {}
    for lang, t in tables.items():
        parts[lang] = t.finish()
        parts[lang].normalize = normalize
    return Counts.from_languages(parts)


# ---- the two counters ------------------------------------------------------------------------------------------


class CountTable:
    """The reference counter: a :class:`Counts` being filled with the documents given to :meth:`add`, one plain
    dict operation per pretoken, letter runs cut as they are read. :class:`NativeCountTable` is its compiled twin.

        >>> table = CountTable(Pretokenizer(), collect_runs=True)
        >>> table.add("Hello world, big cat!")
        >>> table.finish().run_multiset()
        {('Hello', ' world'): 1, (' big', ' cat'): 1}
    """

    def __init__(self, pretokenizer: BasePretokenizer, collect_runs: bool, *, pure: Optional[bool] = None):
        if pure is not None:
            warnings.warn(
                "CountTable(pure=...) is deprecated and ignored: a CountTable always counts in plain "
                "Python (the compiled counter is NativeCountTable); drop the argument",
                DeprecationWarning,
                stacklevel=2,
            )
        self.pretokenizer = pretokenizer
        self.collect_runs = bool(collect_runs)
        self.table = Counts(pretokenizer_config=pretokenizer.to_config(), has_runs=self.collect_runs)

    def __getattr__(self, name):
        """The attributes of the table as they were named before (``pretokens``, ``runs``, ...) read :attr:`table`."""
        if name in ("index", "pretokens", "counts", "has_letter", "runs", "n_documents", "n_bytes"):
            return getattr(self.table, "letter_runs" if name == "runs" else name)
        raise AttributeError(f"'CountTable' object has no attribute {name!r}")

    def add(self, doc: str) -> None:
        c, pretokenizer, collect_runs = self.table, self.pretokenizer, self.collect_runs
        index, pretokens, counts, letter, runs = c.index, c.pretokens, c.counts, c.has_letter, c.letter_runs
        # a scheme may forbid a supermerge between two pieces (boundary markers: never two touching markers in
        # one token); a letter run is cut there, as the trainer cuts the candidates (fastsw.pretokenizers.boundary)
        run_break = pretokenizer.run_break if collect_runs else None
        run: List[int] = []
        for piece in pretokenizer.pretokenize(doc):
            i = index.get(piece)
            if i is None:
                i = index[piece] = len(pretokens)
                pretokens.append(piece)
                counts.append(0)
                letter.append(pretokenizer.has_letter(piece))
            counts[i] += 1
            if not collect_runs:
                continue
            if letter[i] and not (run and run_break is not None and run_break(pretokens[run[-1]], piece)):
                run.append(i)
            else:
                if len(run) >= 2:
                    key = tuple(run)
                    runs[key] = runs.get(key, 0) + 1
                run = [i] if letter[i] else []
        if len(run) >= 2:
            key = tuple(run)
            runs[key] = runs.get(key, 0) + 1
        c.n_documents += 1
        c.n_bytes += _doc_bytes(doc)

    def add_batch(self, docs: List[str]) -> None:
        for doc in docs:
            self.add(doc)

    def payload(self):
        """The table's parts as a worker process sends them (runs packed: arrays pickle as plain bytes, a dict
        of tuples element by element); :meth:`merge_payload` adds them to a table."""
        c = self.table
        return c.pretokens, c.counts, c.has_letter, c.packed_runs() if c.has_runs else None, c.n_documents, c.n_bytes

    def merge_payload(self, payload) -> None:
        self.table._merge_parts(*payload)

    def finish(self) -> Counts:
        return self.table


class NativeCountTable:
    """:class:`CountTable`'s compiled twin: ``fastsw.pretokenizers._pretok.Counter`` scans and counts without making a
    ``str`` per pretoken, and without the GIL. Only for the compiled scanner's patterns and the default letter
    test (:func:`native_counting`), or a pre-tokenizer that makes its own compiled counter (``native_counter``:
    the marker schemes' ``fastsw.pretokenizers._pretok.MarkCounter``, a ``Counter`` fed by their compiled segmentation)."""

    def __init__(self, pretokenizer: BasePretokenizer, collect_runs: bool):
        self.pretokenizer = pretokenizer
        self.collect_runs = bool(collect_runs)
        self.counter = pretokenizer.native_counter(self.collect_runs)
        if self.counter is None:
            raise ValueError(f"{pretokenizer!r} has no compiled counter (native_counting is False); use CountTable")

    def add(self, doc: str) -> None:
        self.counter.add_batch([doc])

    def add_batch(self, docs: List[str]) -> None:
        self.counter.add_batch(docs if type(docs) is list else list(docs))

    def payload(self):
        """The table as arrays, to send to another process (the counter gives up its letter runs)."""
        runs = self.counter.take_raw_runs() if self.collect_runs else None
        return (*self.counter.pretokens(), runs, self.counter.n_documents, self.counter.n_bytes)

    def merge_payload(self, payload) -> None:
        self.counter.merge_table(*payload)

    def finish(self) -> Counts:
        pretokens, counts, letter = self.counter.pretokens()
        c = Counts(pretokenizer_config=self.pretokenizer.to_config(), has_runs=self.collect_runs)
        c.pretokens = pretokens
        c.index = None  # built on first use
        c.counts = counts.tolist()
        c.has_letter = (letter != 0).tolist()
        if self.collect_runs:
            c._set_read_runs(self.counter.take_raw_runs())  # no copy: the arrays own the counter's run list
        c.n_documents, c.n_bytes = self.counter.n_documents, self.counter.n_bytes
        return c


def native_counting(pretokenizer: BasePretokenizer) -> bool:
    """Whether :func:`count_corpus` counts with the compiled counter for ``pretokenizer``: the compiled scanner's
    patterns, the default letter test, the extension built and ``FASTSW_PUREPYTHON`` unset."""
    if pure_python() or pretokenizer.letter_pattern != LETTER_PATTERN:
        return False
    return pretokenizer.native_counter(False) is not None


def _make_table(pretokenizer: BasePretokenizer, collect_runs: bool):
    return (
        NativeCountTable(pretokenizer, collect_runs)
        if native_counting(pretokenizer)
        else CountTable(pretokenizer, collect_runs)
    )


def _batches(documents: Iterable[str], batch_chars: int, batch_docs: int, growth: int = 1):
    """``documents`` in lists of at most ``batch_docs`` documents and about ``batch_chars`` code points; with
    ``growth``, ``batch_chars`` doubles after each batch up to ``growth`` times its first value.

    >>> [len(b) for b in _batches(["ab"] * 15, 2, 100, growth=4)]
    [1, 2, 4, 4, 4]
    """
    batch: List[str] = []
    size = 0
    most = batch_chars * growth
    for doc in documents:
        batch.append(doc)
        size += len(doc) if type(doc) is str else 1  # the counter reports a document that is not a str
        if size >= batch_chars or len(batch) >= batch_docs:
            yield batch
            batch, size = [], 0
            batch_chars = min(2 * batch_chars, most)
    if batch:
        yield batch


def count_corpus(
    documents: Iterable[str],
    pretokenizer: BasePretokenizer,
    *,
    collect_runs: bool,
    progress=None,
    threads: Optional[int] = None,
    normalize: Optional[str] = None,
) -> Counts:
    """Stream ``documents`` once in this process; aggregate pretokens (and letter runs if ``collect_runs``).

    With the compiled counter (:func:`native_counting`), ``threads`` threads count (default: all cores): this
    thread reads the documents and hands batches round-robin to the counting threads, which release the GIL;
    their tables are merged in a fixed order, so the result (order included) depends only on the documents and
    ``threads``. Otherwise this thread counts with the reference, :func:`count_corpus_reference`.
    ``normalize`` (None, ``"nfc"``, ``"nfkc"``): each document is normalized first
    (:func:`fastsw.pretokenizers.pretokenize.normalize_text`), and the table records it.
    """
    normalize = check_normalize(normalize)
    if normalize is not None:
        documents = (normalize_text(doc, normalize) for doc in documents)
    if threads is None:
        threads = default_workers()
    if as_integer(threads) is None or threads < 1:
        raise ValueError(f"threads must be a positive integer (or None for all cores), not {threads!r}")
    threads = as_integer(threads)
    if native_counting(pretokenizer):
        counts = _count_native(documents, pretokenizer, collect_runs, progress, threads)
    else:
        counts = count_corpus_reference(documents, pretokenizer, collect_runs=collect_runs, progress=progress)
    counts.normalize = normalize
    return counts


def _count_native(documents, pretokenizer: BasePretokenizer, collect_runs: bool, progress, threads: int) -> Counts:
    from fastsw.corpus.memory import CountingGuard

    tables = [NativeCountTable(pretokenizer, collect_runs) for _ in range(threads)]
    batches = _batches(documents, BATCH_BYTES, BATCH_DOCS, BATCH_GROWTH)
    guard = CountingGuard()  # stops with MemoryLimitError before the tables outgrow the memory

    def report(batch):
        n_bytes = sum(t.counter.n_bytes for t in tables)
        guard.check(n_bytes)
        if progress is not None:
            progress.update(len(batch), extra=f"docs, {n_bytes / 1e6:.1f} MB")

    if threads == 1:
        for batch in batches:
            tables[0].add_batch(batch)
            report(batch)
        return tables[0].finish()

    import threading

    inboxes = [queue.Queue(maxsize=2) for _ in range(threads)]
    errors: List[BaseException] = []

    def work(table, inbox):
        while True:
            batch = inbox.get()
            if batch is None:
                return
            if not errors:  # after an error, drain without counting so that the reader never blocks
                try:
                    table.add_batch(batch)
                except BaseException as e:  # noqa: B902 -- re-raised in the calling thread
                    errors.append(e)

    from fastsw._interrupt import sigint_held

    workers = [
        threading.Thread(target=work, args=(tables[k], inboxes[k]), name=f"fastsw-count-{k}", daemon=True)
        for k in range(threads)
    ]
    try:
        with sigint_held():  # Ctrl-C never lands between starting the threads and the try that ends them
            for w in workers:
                w.start()
        for k, batch in enumerate(batches):
            if errors:
                break
            with sigint_held():  # a KeyboardInterrupt inside put would break the queue's lock (sigint_held)
                inboxes[k % threads].put(batch)
            report(batch)
    finally:
        with sigint_held():
            for inbox in inboxes:
                inbox.put(None)
        for w in workers:
            if w.ident is not None:  # started
                w.join()
    if errors:
        raise errors[0]
    # the reports above ran before the counting threads had counted the last batches: now
    # that they have, the final line gives the whole input
    report([])
    for k in range(1, len(tables)):
        tables[0].counter.merge(tables[k].counter)
        tables[k] = None  # freed before the next merge and before finish() packs the runs (big corpora)
    return tables[0].finish()


def count_corpus_reference(
    documents: Iterable[str], pretokenizer: BasePretokenizer, *, collect_runs: bool, progress=None
) -> Counts:
    """The reference counter (:class:`CountTable`): one dict operation per pretoken, runs cut as they are read."""
    table = CountTable(pretokenizer, collect_runs)
    for doc in documents:
        table.add(doc)
        if progress is not None:
            progress.update(1, extra=f"docs, {table.table.n_bytes / 1e6:.1f} MB")
    return table.finish()


# ---- all cores ------------------------------------------------------------------------------------------------------


def as_integer(value) -> Optional[int]:
    """``value`` as an ``int`` when it is an integer -- any :class:`numbers.Integral` (``int``, ``numpy.int64``, ...)
    except ``bool`` -- else None. How every integer option is read, so that ``numpy`` ints work like ints and the
    result (e.g. in ``training_info``) is a plain ``int``.

        >>> import numpy as np
        >>> as_integer(np.int64(300)), as_integer(True), as_integer(300.0)
        (300, None, None)
    """
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    return None


def capped_workers(workers: int, cores: int, shown: str) -> Tuple[int, Optional[str]]:
    """``workers`` capped at ``cores`` (more processes than cores only add overhead), and the note that says so
    (None when ``workers`` fits). ``shown`` is the option as the user wrote it (``"workers=1000"``,
    ``"--workers 1000"``).

        >>> capped_workers(1000, 2, "workers=1000")
        (2, 'workers=1000 is more than the 2 cores this process may use; counting with 2')
        >>> capped_workers(2, 2, "workers=2")
        (2, None)
    """
    if workers <= cores:
        return workers, None
    return cores, (
        f"{shown} is more than the {cores} core{'' if cores == 1 else 's'} this process may use; counting with {cores}"
    )


def default_workers() -> int:
    """The number of cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _worker(config: dict, collect_runs: bool, tasks, results, worker_id: int) -> None:
    """Worker process: count the batches from ``tasks`` until ``None``, then send the table to ``results``."""
    try:
        table = _make_table(pretokenizer_from_config(config), collect_runs)
        while True:
            batch = tasks.get()
            if batch is None:
                break
            table.add_batch(batch)
        results.put((worker_id, "ok", table.payload()))
    except BaseException as e:  # report everything, including KeyboardInterrupt, then exit
        import traceback

        results.put((worker_id, "error", f"{type(e).__name__}: {e}\n{traceback.format_exc()}"))


class _WorkerPool:
    """Worker processes fed through one bounded task queue; the caller always shuts it down (``close``)."""

    def __init__(self, workers: int, config: dict, collect_runs: bool, start_method: Optional[str]):
        ctx = multiprocessing.get_context(start_method)
        self.tasks = ctx.Queue(maxsize=2 * workers)
        self.results = ctx.Queue()
        self.procs = [
            ctx.Process(
                target=_worker,
                args=(config, collect_runs, self.tasks, self.results, k),
                name=f"fastsw-count-{k}",
                daemon=True,
            )
            for k in range(workers)
        ]
        for p in self.procs:
            p.start()
        self.payloads: Dict[int, object] = {}

    def _check(self) -> None:
        """Raise if a worker reported an error or died."""
        exitcodes = [p.exitcode for p in self.procs]  # before draining: a worker that exited has sent its table
        while True:
            try:
                worker_id, status, payload = self.results.get_nowait()
            except queue.Empty:
                break
            if status == "error":
                raise RuntimeError(f"counting worker {worker_id} failed: {payload}")
            self.payloads[worker_id] = payload
        for k, code in enumerate(exitcodes):
            if code not in (None, 0) or (code == 0 and k not in self.payloads):
                raise RuntimeError(
                    f"counting worker {k} exited unexpectedly (exit code {code}; its error, if any, "
                    "is printed above). Out of memory? Try fewer workers. With the 'spawn' start "
                    "method a calling script needs an  if __name__ == '__main__':  guard"
                )

    def try_put(self, batch) -> bool:
        """Queue ``batch`` if there is room; False when all workers are busy and the queue is full."""
        try:
            self.tasks.put_nowait(batch)
            return True
        except queue.Full:
            self._check()
            return False

    def put(self, batch) -> None:
        while True:
            try:
                self.tasks.put(batch, timeout=0.5)
                return
            except queue.Full:
                self._check()

    def collect(self) -> List[object]:
        for _ in self.procs:
            self.put(None)
        while len(self.payloads) < len(self.procs):
            try:
                worker_id, status, payload = self.results.get(timeout=0.5)
            except queue.Empty:
                self._check()
                continue
            if status == "error":
                raise RuntimeError(f"counting worker {worker_id} failed: {payload}")
            self.payloads[worker_id] = payload
        return [self.payloads[k] for k in range(len(self.procs))]

    def close(self, ok: bool) -> None:
        for p in self.procs:
            if ok:
                p.join(timeout=10)
            if p.is_alive():
                p.terminate()
                p.join()
        self.tasks.close()
        self.results.close()
        self.tasks.cancel_join_thread()


def count_corpus_parallel(
    documents: Iterable[str],
    pretokenizer: BasePretokenizer,
    *,
    collect_runs: bool,
    workers: Optional[int] = None,
    progress=None,
    batch_bytes: Optional[int] = None,
    batch_docs: Optional[int] = None,
    start_method: Optional[str] = None,
    normalize: Optional[str] = None,
) -> Counts:
    """Count ``documents`` on ``workers`` processes (default: all cores); ``workers=1`` counts in this process.

    This process reads the documents and sends them in batches (about ``batch_bytes`` bytes or ``batch_docs``
    documents each) to ``workers - 1`` worker processes through a queue that holds at most two batches per
    worker, so memory stays bounded however large the corpus. When the queue is full (all workers busy), this
    process counts the batch itself, so it is the ``workers``-th counter rather than waiting. Every process fills
    its own table; the tables are merged (re-indexing letter runs by pretoken string). The result equals
    :func:`count_corpus`'s up to the order of the pretokens. ``start_method`` is a :mod:`multiprocessing` start
    method; the default is ``"fork"`` on Linux (fast to start, and a script that calls ``train`` without an
    ``if __name__ == "__main__":`` guard still works) and ``"spawn"`` elsewhere. Workers only pre-tokenize and
    count, so either method gives the same table. ``normalize`` as in :func:`count_corpus` (this process
    normalizes the documents before sending them).
    """
    if workers is None:
        workers = default_workers()
    if as_integer(workers) is None or workers < 1:
        raise ValueError(f"workers must be a positive integer (or None for all cores), not {workers!r}")
    workers = as_integer(workers)
    normalize = check_normalize(normalize)
    if workers == 1:
        return count_corpus(
            documents, pretokenizer, collect_runs=collect_runs, progress=progress, threads=1, normalize=normalize
        )
    if normalize is not None:
        documents = (normalize_text(doc, normalize) for doc in documents)
    batch_bytes = BATCH_BYTES if batch_bytes is None else batch_bytes
    batch_docs = BATCH_DOCS if batch_docs is None else batch_docs
    if start_method is None:
        start_method = "fork" if sys.platform.startswith("linux") else "spawn"
    config = pretokenizer.to_config()
    local = _make_table(pretokenizer, collect_runs)
    pool = _WorkerPool(workers - 1, config, collect_runs, start_method)
    ok = False
    try:
        batch: List[str] = []
        size = n_docs = n_bytes = 0
        for doc in documents:
            batch.append(doc)
            nb = _doc_bytes(doc)
            size += nb
            n_docs += 1
            n_bytes += nb
            if size >= batch_bytes or len(batch) >= batch_docs:
                if not pool.try_put(batch):
                    local.add_batch(batch)
                batch, size = [], 0
            if progress is not None:
                progress.update(1, extra=f"docs, {n_bytes / 1e6:.1f} MB")
        if batch and not pool.try_put(batch):
            local.add_batch(batch)
        payloads = pool.collect()
        ok = True
    finally:
        pool.close(ok)
    for payload in payloads:
        local.merge_payload(payload)
    counts = local.finish()
    counts.normalize = normalize
    return counts
