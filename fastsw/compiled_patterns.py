r"""Which pre-tokenizer patterns run on the compiled scanner, recognised by what they do, not by how they are spelled.

The compiled scanner (``fastsw._pretok``) knows five patterns, each written once in :mod:`fastsw.pretokenize`:
GPT-4o's (``GPT4O_PATTERN``, tiktoken's o200k_base), cl100k_base's as tiktoken spells it today
(``CL100K_PATTERN``), cl100k_base's older spelling (``CL100K_LEGACY_PATTERN``: older tiktoken releases and Llama 3's
tokenizer; it cuts a whitespace run at the text's end differently, so it is a pattern of its own), GPT-2's
(``GPT2_PATTERN``: r50k_base and p50k_base) and the script-specific one of the ``script`` mode. A regular expression
spelled differently runs there too when it cuts text exactly as one of them does; :func:`compiled_pattern` decides.

How it decides (a comparison of behaviour, since two spellings of one meaning can differ in every character):

1. A spelling seen before (the reference spellings above, tiktoken's own current spellings of GPT-2's pattern,
   and any pattern recognised earlier in the process) is looked up.
2. A pattern whose meaning depends on the installed ``regex`` (a property fastsw does not pin, such as a script
   name, or ``\w``, ``\b``, ``\X``, POSIX classes) is never recognised: its classes are not the pinned ones the
   scanner reads.
3. Otherwise the pattern (compiled as the ``regex`` path compiles it, :func:`fastsw._unicode.compile_pattern`) and
   each candidate reference must give the same pieces (:func:`fastsw.pretokenize.split_isolated`) on every probe
   text, and the first candidate that does is the answer. The probes (:func:`probe_texts`) cover both things a
   pattern can tell apart:

   * *characters*: the pattern's classes are built from the pinned general categories, White_Space and the
     characters it names, so two code points with the same category and White_Space value that it does not name
     are alike to it, except for case folding under ``(?i)``. (The probes run the pattern compiled by ``regex``
     without the pinning, ten times faster, so they only use code points to which the installed ``regex`` gives
     the pinned category and White_Space value: on them both compilations agree.) The probe alphabet holds, for each (category,
     White_Space) pair of the pinned Unicode version, a code point with a case mapping and one without, every code
     point the pattern names (escaped or literal) with its two neighbours, one code point of each category between
     two consecutive named code points (the inside of a range), and the characters the references name (space,
     ``\r``, ``\n``, ``'``, ``/``, the contraction letters and everything that folds to them);
   * *structure*: every string of up to 3 code points over the references' own alphabet (one code point per
     class of the scanner's table, plus the named characters), every string of up to 2 over the whole probe
     alphabet, each character in runs of 1 to 9, 32 and 100, and seeded random texts of up to 64 code points over
     the whole alphabet; each probe is a whole text (the text's start and end are where ``$`` and ``(?!\S)``
     differ), and all of them are also joined into one long text.

   The characters are covered exhaustively in that sense; the structure is sampled (a pattern that differs only
   on, say, a run of 40 digits would need a probe that has one). The references' differences from one another
   are all caught by strings of 3 code points, which the probes hold exhaustively. The answer is kept for the
   process.

Anything not recognised runs on the ``regex`` path; :class:`fastsw.notes.PatternNotCompiledWarning` says so once
per pattern and process.
"""
from __future__ import annotations

import functools
import itertools
import threading
import unicodedata
from typing import Dict, List, Optional, Tuple

import numpy as np
import regex

from . import pretokenize as _pt
from ._unicode import CATEGORIES, category_table, compile_pattern, contraction_folds, pin_pattern, pretoken_table, \
    white_space_table

__all__ = ["COMPILED_PATTERNS", "compiled_pattern", "scanner_pattern_id", "probe_texts"]

#: name -> (reference spelling, ``fastsw._pretok.Scanner`` pattern id); ``specific`` only with script chunks.
COMPILED_PATTERNS: Dict[str, Tuple[str, int]] = {
    "o200k": (_pt.GPT4O_PATTERN, 0),
    "cl100k": (_pt.CL100K_PATTERN, 1),
    "cl100k_legacy": (_pt.CL100K_LEGACY_PATTERN, 2),
    "gpt2": (_pt.GPT2_PATTERN, 3),
    "specific": (_pt.SCRIPT_SPECIFIC_PATTERN, 0),
}

# Other spellings known to mean one of them (step 1); the tests prove each with the probes and on the corpus.
_KNOWN: Dict[str, Optional[str]] = {spelling: name for name, (spelling, _) in COMPILED_PATTERNS.items()}
_KNOWN[r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""] = "gpt2"  # tiktoken's
_REJECTED = set()  # (pattern, candidates) found to mean none of the candidates
_LOCK = threading.Lock()

# escapes whose meaning regex decides (step 2); \p{..} of unpinned properties come from pin_pattern
_UNPINNED = regex.compile(r"\\[wWbBXRGKAzZ]|\[:\^?[a-z]+:\]|\(\?[a-zA-Z]*[wfrvV]")
_NAMED_ESCAPE = regex.compile(r"\\(?:x\{([0-9A-Fa-f]+)\}|x([0-9A-Fa-f]{2})|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})"
                              r"|N\{([^}]*)\}|0([0-7]{0,2})|([tnrfvae]))")
_ESCAPE_CHARS = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "v": "\v", "a": "\a", "e": "\x1b"}
_REFERENCE_CHARS = " \t\n\r'/0123456789aAzZ"


def compiled_pattern(pattern: str, *, candidates=("o200k", "cl100k", "cl100k_legacy", "gpt2")) -> Optional[str]:
    """The name (a key of :data:`COMPILED_PATTERNS`) of the compiled pattern that ``pattern`` means, among
    ``candidates``, or None (then the ``regex`` path runs it). See the module docstring for how it decides.

        >>> compiled_pattern(r"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+")
        'gpt2'
        >>> compiled_pattern(r"'(?:s|t|re|ve|m|ll|d)| ?\\pL+| ?\\pN+| ?[^\\s\\pL\\pN]+|\\s+(?!\\S)|\\s+")  # spelled anew
        'gpt2'
        >>> compiled_pattern(r"\\w+|\\W") is None
        True
    """
    candidates = tuple(candidates)
    known = _KNOWN.get(pattern)
    if known is not None:
        return known if known in candidates else None
    if (pattern, candidates) in _REJECTED:
        return None
    with _LOCK:
        name = _recognise(pattern, candidates)
        if name is None:
            _REJECTED.add((pattern, candidates))
        else:
            _KNOWN[pattern] = name
    return name


def scanner_pattern_id(name: str) -> int:
    """The ``fastsw._pretok.Scanner`` pattern id of a name of :data:`COMPILED_PATTERNS`."""
    return COMPILED_PATTERNS[name][1]


def _recognise(pattern: str, candidates) -> Optional[str]:
    try:
        pinned, unpinned = pin_pattern(pattern)
    except Exception:  # noqa: BLE001 - not a pattern fastsw can read: the regex path reports it
        return None
    if unpinned or _UNPINNED.search(pattern):
        return None
    try:
        compile_pattern(pattern)  # the regex path's compilation must succeed
        compiled = regex.compile(pattern)  # on the probes' code points the same classes, ten times faster
    except regex.error:
        return None
    left = [name for name in candidates if name in COMPILED_PATTERNS]
    for text in probe_texts(pattern):
        got = _pt.split_isolated(compiled, text)
        left = [name for name in left if _reference_pieces(name, text) == got]
        if not left:
            return None
    return left[0]


def _reference_pieces(name: str, text: str) -> List[str]:
    """The pieces of ``text`` under the reference ``name``: from its compiled scanner (equal to ``regex`` on the
    reference spelling: the tests prove it), else from ``regex``."""
    scanner = _reference_scanner(name)
    if scanner is not None:
        return scanner.pretokenize(text)
    return _pt.split_isolated(compile_pattern(COMPILED_PATTERNS[name][0]), text)


@functools.lru_cache(maxsize=None)
def _reference_scanner(name: str):
    if name == "specific" or not _pt.HAVE_NATIVE_PRETOKENIZER:
        return None
    tables = _pt._native_tables()
    if tables is None:
        return None
    from ._unicode import script_table
    return _pt._pretok.Scanner(*tables, script_table(), np.zeros(256, np.uint8), False, COMPILED_PATTERNS[name][1])


def _named_code_points(pattern: str) -> List[int]:
    """Every code point ``pattern`` names: its literal characters and its escapes (``\\x..``, ``\\u....``,
    ``\\N{..}``, ``\\n``, ...)."""
    out = {ord(c) for c in pattern}
    for m in _NAMED_ESCAPE.finditer(pattern):
        hexes = m.group(1) or m.group(2) or m.group(3) or m.group(4)
        try:
            if hexes:
                out.add(int(hexes, 16))
            elif m.group(5) is not None:
                out.add(ord(unicodedata.lookup(m.group(5))))
            elif m.group(6) is not None:
                out.add(int(m.group(6) or "0", 8))
            else:
                out.add(ord(_ESCAPE_CHARS[m.group(7)]))
        except (KeyError, ValueError):
            continue
    return sorted(c for c in out if c < 0x110000)


@functools.lru_cache(maxsize=1)
def _class_representatives() -> Tuple[str, str]:
    """``(core, classes)``: one code point per class of the scanner's table (``pretoken_table``), and per (general
    category, White_Space) pair of the pinned Unicode version its first and last code point and, in the Basic
    Multilingual Plane, one with a case mapping and one without (``(?i)`` tells those apart)."""
    table = pretoken_table()
    _, first = np.unique(table, return_index=True)
    core = "".join(chr(int(c)) for c in first)
    key = category_table().astype(np.int32) * 2 + white_space_table()
    key[0xD800:0xE000] = -1  # surrogates are no text
    _, first = np.unique(key, return_index=True)
    _, last = np.unique(key[::-1], return_index=True)
    picks = dict.fromkeys(int(c) for c in first if key[c] >= 0)
    picks.update(dict.fromkeys(0x10FFFF - int(c) for c in last if key[0x10FFFF - c] >= 0))
    seen = set()
    for cp in range(0x10000):
        if 0xD800 <= cp < 0xE000:
            continue
        ch = chr(cp)
        k = (int(key[cp]), ch.lower() != ch or ch.upper() != ch or ch.casefold() != ch)
        if k not in seen:
            seen.add(k)
            picks[cp] = None
    return core, "".join(chr(c) for c in picks)


def _alphabets(pattern: str) -> Tuple[List[str], List[str]]:
    """``(core, full)``: the references' alphabet (one code point per class of the scanner's table and the
    characters the references name) and the whole probe alphabet (module docstring)."""
    cats = category_table()
    table_core, classes = _class_representatives()
    core = dict.fromkeys(_REFERENCE_CHARS + table_core)
    full = dict.fromkeys(list(core) + list(classes) + list(_CONTRACTION_CHARS()))
    named = _named_code_points(pattern)
    for c in named:
        for d in (c - 1, c, c + 1):
            if 0 <= d < 0x110000 and not 0xD800 <= d < 0xE000:
                full[chr(d)] = None
    for a, b in zip(named, named[1:]):  # the inside of what may be a range: one code point per category
        if b - a > 2:
            _, idx = np.unique(cats[a + 1:b], return_index=True)
            for i in idx:
                cp = a + 1 + int(i)
                if not 0xD800 <= cp < 0xE000:
                    full[chr(cp)] = None
    return [c for c in core if _agrees(c)], [c for c in full if _agrees(c)]


def _agrees(ch: str) -> bool:
    """Whether the installed ``regex`` gives ``ch`` the pinned general category and White_Space value (the probes
    run the pattern unpinned, which is the same on such code points and much faster)."""
    cp = ord(ch)
    if 0xD800 <= cp < 0xE000:
        return False
    return (regex.match(r"\p{gc=%s}" % CATEGORIES[category_table()[cp]], ch) is not None
            and (regex.match(r"\s", ch) is not None) == bool(white_space_table()[cp]))


def _CONTRACTION_CHARS() -> str:
    """The contraction letters in both cases and every code point that folds to one of them."""
    return "sdmtlvreSDMTLVRE" + "".join(chr(int(c)) for c in contraction_folds()[0])


def probe_texts(pattern: str):
    """The probe texts for ``pattern`` (a generator; the module docstring describes them)."""
    core, full = _alphabets(pattern)
    every = []
    for n in (1, 2, 3):
        for t in itertools.product(core, repeat=n):
            every.append("".join(t))
    letters = _CONTRACTION_CHARS() + "'ax "
    every.extend("'" + a + b for a in letters for b in letters)
    every.extend(a + b for a in full for b in core)
    every.extend(b + a for a in full for b in core)
    every.extend(c * n for c in full for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 32, 100))
    rng = np.random.default_rng(8)
    picks = rng.integers(0, len(full), size=(2000, 64)).tolist()
    every.extend("".join(map(full.__getitem__, row[:n])) for row, n in zip(picks, rng.integers(4, 65, 2000).tolist()))
    yield "".join(every[::7])  # one long text first: most differences show in it, and then cheaply
    yield from every
    yield "".join(every)
