"""Pre-tokenization: split a document into pretokens (SPEC section 2).

This module owns the regular expressions and the `Pretokenizer`, the object that
turns one document (a ``str``) into its list of pretokens. Phase-1 merges never
cross a pretoken boundary; supermerges (phase 2) join runs of whole pretokens.

Three modes:

* ``"script"`` (default): the document is first cut into script chunks
  (:mod:`fastsw.pretokenizers.chunking`), then each chunk is matched with ``GPT4O_PATTERN``, or
  with ``SCRIPT_SPECIFIC_PATTERN`` (one letter per pretoken) when the chunk's
  script is one of ``script_specific_scripts``.
* ``"simple"``: ``GPT4O_PATTERN`` over the whole document, no chunking.
* ``"none"``: the whole document is one pretoken (merges may cross spaces; seed 001's toy
  experiment). The patterns are kept in the config but unused; an empty document has no pretoken.

Normalization (SPEC section 8, seed 001) is not part of the pre-tokenizer: :func:`normalize_text`
is the one place it is written, and the trainer and the tokenizer apply it to each document
*before* pre-tokenization. ``None`` (the default) changes nothing; ``"nfc"`` / ``"nfkc"`` apply
that Unicode normal form and nothing else (no whitespace collapsing, no lowercasing).

A pattern need not match every character: the text between two matches (and before the first,
after the last) is a pretoken too, so no text is ever lost; this is HF ``tokenizers``'
``Split(pattern, behavior="isolated")`` (:func:`isolated_spans`, the one place the rule is written).
The default patterns match every character, so for them the pretokens are exactly the matches.

Two paths, one answer: :meth:`Pretokenizer.pretokenize_reference` runs ``regex`` and is
the readable specification; :meth:`Pretokenizer.pretokenize` uses the compiled scanner
``fastsw.pretokenizers._pretok`` (about an order of magnitude faster) when both patterns are the defaults, the
extension is built and ``FASTSW_PUREPYTHON`` is not ``"1"`` (``HAVE_NATIVE_PRETOKENIZER``), and
falls back to the reference otherwise, e.g. for custom patterns (with one
:class:`fastsw.PatternNotCompiledWarning` per pattern).  Both give identical pretokens
(tests check this on the shared corpora and on adversarial Unicode).  tiktoken's other patterns in ``simple``
mode -- cl100k_base's (``CL100K_PATTERN``), its older spelling (``CL100K_LEGACY_PATTERN``, Llama 3's) and GPT-2's
(``GPT2_PATTERN``, r50k_base and p50k_base) -- have compiled scanners of their own
(``fastsw/pretokenizers/_cl100k.pxi``) for ``pretokenize`` and ``pretoken_ends``; the compiled counter keeps to the
default patterns. A pattern is matched to a compiled scanner by what it does, not by its spelling
(:func:`compiled_pattern`).

A pretokenizer is described by a plain dict (:meth:`Pretokenizer.to_config`) that
is stored in model files, so a loaded model pre-tokenizes exactly as it was
trained. :class:`Pretokenizer` is the regex family of the pre-tokenizer interface
(:class:`fastsw.pretokenizers.base.BasePretokenizer`), registered as ``script``, ``simple`` and
``none`` (:mod:`fastsw.pretokenizers.registry`).
"""

from __future__ import annotations

import functools
import itertools
import threading
import unicodedata
import warnings
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np
import regex

from fastsw._config import pure_python
from fastsw.pretokenizers.base import LETTER_PATTERN, BasePretokenizer
from fastsw.pretokenizers.chunking import script_chunks
from fastsw.pretokenizers._unicode import (
    CATEGORIES,
    category_table,
    compile_pattern,
    contraction_folds,
    pin_pattern,
    pretoken_table,
    script_id,
    script_table,
    white_space_table,
)
from fastsw.pretokenizers.registry import make_pretokenizer  # noqa: F401 (defined in the registry; importable here)

# The contraction suffixes use the ASCII apostrophe, as in tiktoken's o200k pattern.
_CONTRACTIONS = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?"

GPT4O_PATTERN = "|".join(
    [
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+" + _CONTRACTIONS,
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*" + _CONTRACTIONS,
        r"\p{N}{1,3}",
        r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
        r"\s*[\r\n]+",
        r"\s+(?!\S)",
        r"\s+",
    ]
)

# tiktoken's cl100k_base (GPT-4) pattern; in "simple" mode it runs on the compiled scanner too
# (fastsw/pretokenizers/_cl100k.pxi), as do the two below. Used by fastsw.io.tiktoken_vocab.
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)

# cl100k_base's pattern as older tiktoken releases spell it, and Llama 3's tokenizer: the same pretokens as
# CL100K_PATTERN except a whitespace run with a newline at the text's end ("a\n  " is "a", "\n", "  " here, and
# "a", "\n  " there). It has a compiled scanner of its own too.
CL100K_LEGACY_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"""
    r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

# GPT-2's pattern (tiktoken's r50k_base and p50k_base; nanoGPT, llm.c): a compiled scanner of its own too.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# The first two (word) branches replaced by one letter with an optional leading
# space and trailing combining marks: each character becomes its own pretoken.
SCRIPT_SPECIFIC_PATTERN = "|".join(
    [
        r" ?\p{L}\p{M}*",
        r"\p{N}{1,3}",
        r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
        r"\s*[\r\n]+",
        r"\s+(?!\S)",
        r"\s+",
    ]
)

DEFAULT_SCRIPT_SPECIFIC_SCRIPTS = ("Han", "Hiragana", "Katakana", "Thai", "Myanmar", "Khmer", "Lao")

#: the patterns fastsw ships (valid by construction), whose ``regex`` form a Pretokenizer compiles on first use
_BUILTIN_PATTERNS = frozenset(
    (GPT4O_PATTERN, CL100K_PATTERN, CL100K_LEGACY_PATTERN, GPT2_PATTERN, SCRIPT_SPECIFIC_PATTERN, LETTER_PATTERN)
)

MODES = ("script", "simple", "none")

#: The normalization options: None (lossless, the default), "nfc", "nfkc".
NORMALIZATIONS = (None, "nfc", "nfkc")

try:
    from fastsw.pretokenizers import _pretok
except ImportError as _missing:
    _pretok = None
    if not pure_python():  # asked for the pure-Python paths, the user loses nothing
        from fastsw.notes import ExtensionMissingWarning

        warnings.warn(
            f"fastsw's compiled extension fastsw.pretokenizers._pretok cannot be imported ({_missing}); fastsw runs on "
            "its pure-Python paths instead: the same results, several times slower. Reinstall fastsw "
            "(pip install --force-reinstall fastsw), or in a source checkout build it with 'python "
            "setup.py build_ext --inplace'; set FASTSW_PUREPYTHON=1 to choose the pure-Python paths "
            "without this warning",
            ExtensionMissingWarning,
            stacklevel=2,
        )

#: True when :meth:`Pretokenizer.pretokenize` can use the compiled scanner for the default patterns.
HAVE_NATIVE_PRETOKENIZER = _pretok is not None and not pure_python()


def isolated_spans(pattern: "regex.Pattern", text: str) -> Iterator[Tuple[int, int]]:
    r"""The pieces of ``text`` cut by ``pattern``, as ``(start, end)`` code point spans, in order.

    Each non-empty match is a piece, and so is each non-empty gap of unmatched text between two
    matches, before the first match and after the last one: the pieces concatenate back to ``text``.
    A gap is one piece however long it is; an empty match makes no piece but ends the gap before it.
    This is HF ``tokenizers``' ``Split(Regex(pattern), behavior="isolated")``.

    >>> import regex
    >>> [("hello world, x"[s:e]) for s, e in isolated_spans(regex.compile(r"\w+"), "hello world, x")]
    ['hello', ' ', 'world', ', ', 'x']
    """
    prev = 0  # end of the last match
    for m in pattern.finditer(text):
        start, end = m.span()
        if start > prev:
            yield prev, start
        if end > start:
            yield start, end
        prev = end
    if prev < len(text):
        yield prev, len(text)


def split_isolated(pattern: "regex.Pattern", text: str) -> List[str]:
    """The pieces of :func:`isolated_spans` as strings.

    Design note: see docs/internals.md, section "Pre-tokenization".

    >>> import regex
    >>> split_isolated(regex.compile(r"[a-z]+"), "ab, cd!")
    ['ab', ', ', 'cd', '!']
    """
    if pattern.groups == 0:
        pieces = pattern.findall(text)
        if sum(map(len, pieces)) == len(text) and "" not in pieces:
            return pieces
    return [text[start:end] for start, end in isolated_spans(pattern, text)]


def check_normalize(value, what: str = "normalize"):
    """``value`` as a normalization option: None (also spelled ``"none"``), ``"nfc"`` or ``"nfkc"``
    (any case). Anything else is a ``ValueError`` naming ``what``.

        >>> check_normalize("NFC"), check_normalize("none"), check_normalize(None)
        ('nfc', None, None)
    """
    if value is None:
        return None
    if isinstance(value, str) and value.lower() in ("none", "nfc", "nfkc"):
        return None if value.lower() == "none" else value.lower()
    raise ValueError(f"{what}={value!r} is not a normalization; use None (lossless, the default), 'nfc' or 'nfkc'")


def normalize_text(text: str, form) -> str:
    """``text`` in the Unicode normal form ``form`` (``"nfc"``/``"nfkc"``), or unchanged for None.
    Nothing else is changed: no whitespace collapsing, no lowercasing.

        >>> normalize_text("e\u0301", "nfc"), normalize_text("\ufb01", "nfkc"), normalize_text("\ufb01", None)
        ('é', 'fi', 'ﬁ')
    """
    if form is None:
        return text
    return unicodedata.normalize(_FORMS[form], text)  # type: ignore[arg-type]  # _FORMS holds NFC and NFKC


_FORMS = {"nfc": "NFC", "nfkc": "NFKC"}


def _native_tables():
    """``(table, fold_cps, fold_letters)`` for ``fastsw.pretokenizers._pretok``, or None if regex's Unicode breaks
    an assumption of the scanner (then the reference path is used; see ``pretoken_table``)."""
    global _NATIVE_TABLES
    if _NATIVE_TABLES is None:
        from fastsw.pretokenizers._unicode import contraction_folds, pretoken_table

        try:
            table = pretoken_table()
            fold_cps, fold_letters = contraction_folds()
            _NATIVE_TABLES = (table, fold_cps, fold_letters)
        except RuntimeError as e:
            import warnings

            warnings.warn(f"fastsw: native pre-tokenizer disabled, using regex: {e}", RuntimeWarning, stacklevel=3)
            _NATIVE_TABLES = False
    return _NATIVE_TABLES or None


_NATIVE_TABLES = None
_UNKNOWN = object()
_WARNED: set = set()  # the patterns PatternNotCompiledWarning was given for


def _warn_not_compiled(pretok: "Pretokenizer") -> None:
    """One :class:`fastsw.PatternNotCompiledWarning` per pattern and process."""
    key = (pretok.mode, pretok.main_pattern, pretok.script_specific_pattern if pretok.mode == "script" else None)
    if key in _WARNED:
        return
    _WARNED.add(key)
    from fastsw.notes import PatternNotCompiledWarning

    what = (
        f"the pattern {pretok.main_pattern!r}"
        if pretok.mode == "simple"
        else f"the patterns {pretok.main_pattern!r} and {pretok.script_specific_pattern!r} (script mode)"
    )
    warnings.warn(
        f"fastsw runs {what} on the regex path, not on its compiled scanner: the same pretokens, several "
        "times slower. The compiled scanner runs GPT-4o's (o200k_base), cl100k_base's (either spelling, as "
        "Llama 3's) and GPT-2's (r50k_base, p50k_base) patterns however they are spelled, in mode "
        "'simple' (GPT-4o's with the script-specific pattern in mode 'script'). Silence this with "
        "warnings.filterwarnings('ignore', category=fastsw.PatternNotCompiledWarning)",
        PatternNotCompiledWarning,
        stacklevel=3,
    )


class Pretokenizer(BasePretokenizer):
    """Split documents into pretokens with regular expressions (the ``script``, ``simple`` and ``none`` modes).

    Parameters (keyword-only):
        mode: ``"script"`` (script chunking, default), ``"simple"`` or ``"none"`` (the whole
            document is one pretoken).
        main_pattern: regex for chunks of ordinary scripts (default GPT-4o). It need not
            match every character: unmatched text becomes pretokens too (:func:`isolated_spans`).
        script_specific_pattern: regex for chunks of the script-specific scripts (same rule).
        script_specific_scripts: Unicode script names that use the second regex.
        letter_pattern: the eligibility test of phase 2 (``regex.search``).
    """

    def __init__(
        self,
        *,
        mode: str = "script",
        main_pattern: str = GPT4O_PATTERN,
        script_specific_pattern: str = SCRIPT_SPECIFIC_PATTERN,
        script_specific_scripts: Optional[Sequence[str]] = None,
        letter_pattern: str = LETTER_PATTERN,
    ):
        if mode not in MODES:
            raise ValueError(f"pretokenizer mode {mode!r} is not one of {', '.join(MODES)}")
        if script_specific_scripts is None:
            script_specific_scripts = DEFAULT_SCRIPT_SPECIFIC_SCRIPTS
        if isinstance(script_specific_scripts, str):
            raise ValueError("script_specific_scripts must be a list of script names, not one string")
        self.mode = mode
        self.main_pattern = main_pattern
        self.script_specific_pattern = script_specific_pattern
        self.script_specific_scripts = tuple(script_specific_scripts)
        self.letter_pattern = letter_pattern
        self._regexes = {}  # attribute -> compiled pattern, compiled on first use (see _regex)
        for name, pattern in (
            ("_main", main_pattern),
            ("_specific", script_specific_pattern),
            ("_letter", letter_pattern),
        ):
            if pattern not in _BUILTIN_PATTERNS:  # a user's pattern is checked now, not at its first use
                try:
                    self._regexes[name] = compile_pattern(pattern)
                except regex.error as e:
                    raise ValueError(f"invalid pre-tokenizer regex: {e}") from e
        self._specific_ids = frozenset(script_id(name) for name in self.script_specific_scripts)
        self._specific_mask = np.zeros(256, dtype=np.uint8)  # script id -> 1 if script-specific
        self._specific_mask[list(self._specific_ids)] = 1
        self._pattern_id = _UNKNOWN  # the compiled scanner's pattern for these patterns, None for regex (_scanner_id)
        self._scanner = None  # the fastsw.pretokenizers._pretok.Scanner, made on first use

    def _regex(self, name: str, pattern: str):
        compiled = self._regexes.get(name)
        if compiled is None:
            compiled = self._regexes[name] = compile_pattern(pattern)
        return compiled

    # The ``regex`` forms of the patterns, compiled on first use: the compiled scanner and counter never need
    # them, and compiling the pinned GPT-4o pattern alone takes about 0.3 s, a tenth of training 50 MB.
    @property
    def _main(self):
        return self._regex("_main", self.main_pattern)

    @property
    def _specific(self):
        return self._regex("_specific", self.script_specific_pattern)

    @property
    def _letter(self):
        return self._regex("_letter", self.letter_pattern)

    # -- configuration ----------------------------------------------------
    def to_config(self) -> dict:
        """A JSON-serialisable description; ``Pretokenizer.from_config`` inverts it."""
        return {
            "mode": self.mode,
            "main_pattern": self.main_pattern,
            "script_specific_pattern": self.script_specific_pattern,
            "script_specific_scripts": list(self.script_specific_scripts),
            "letter_pattern": self.letter_pattern,
        }

    @classmethod
    def from_config(cls, config: dict) -> "BasePretokenizer":
        """The pre-tokenizer :meth:`to_config` described; the config of another family (its ``mode``) is read by
        that family (:func:`fastsw.pretokenizers.registry.pretokenizer_from_config`)."""
        from fastsw.pretokenizers.registry import _family_for_mode, pretokenizer_from_config

        mode = config.get("mode", "script")
        if mode not in MODES and isinstance(mode, str) and _family_for_mode(mode) not in (None, cls):
            return pretokenizer_from_config(config)
        known = {"mode", "main_pattern", "script_specific_pattern", "script_specific_scripts", "letter_pattern"}
        unknown = set(config) - known
        if unknown:
            raise ValueError(f"unknown pre-tokenizer settings: {', '.join(sorted(unknown))}")
        return cls(**config)

    @classmethod
    def from_name(cls, name: str) -> "Pretokenizer":
        """``Pretokenizer(mode=name)`` for ``"script"``, ``"simple"`` or ``"none"``."""
        if name not in MODES:
            from fastsw.pretokenizers.registry import valid_names_message

            raise ValueError(f"unknown pre-tokenizer {name!r}; {valid_names_message()}")
        return cls(mode=name)

    def __eq__(self, other) -> bool:
        return isinstance(other, Pretokenizer) and self.to_config() == other.to_config()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Pretokenizer(mode={self.mode!r}, scripts={list(self.script_specific_scripts)!r})"

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_scanner"] = None  # the compiled scanner is rebuilt on first use after unpickling
        return state

    @property
    def splits_text(self) -> bool:  # type: ignore[override]
        """False in ``none`` mode (a document is one pretoken)."""
        return self.mode != "none"

    # -- splitting ----------------------------------------------------------
    def native_scanner(self) -> Optional[Any]:
        """The compiled scanner of :meth:`pretokenize` (GPT-4o's patterns, or cl100k_base's in ``simple`` mode),
        or None (custom patterns, ``none`` mode, no extension, ``FASTSW_PUREPYTHON=1``)."""
        return self._any_scanner()

    def native_counter(self, collect_runs: bool) -> Optional[Any]:
        """The compiled counter (``fastsw.pretokenizers._pretok.Counter``) for the default patterns and letter
        test, or None."""
        if pure_python() or self.letter_pattern != LETTER_PATTERN:
            return None
        scanner = self._get_scanner()
        if scanner is None:
            return None
        return _pretok.Counter(scanner, bool(collect_runs))

    def _scanner_id(self):
        """The ``fastsw.pretokenizers._pretok.Scanner`` pattern id for these patterns, or None (the ``regex`` path):
        in ``simple`` mode GPT-4o's, cl100k_base's (either spelling) or GPT-2's pattern, in ``script`` mode GPT-4o's
        with the script-specific one, each recognised by what it does however it is spelled
        (:func:`compiled_pattern`)."""
        if self._pattern_id is _UNKNOWN:
            pid = None
            if HAVE_NATIVE_PRETOKENIZER and self.mode == "simple":
                name = compiled_pattern(self.main_pattern)
                pid = None if name is None else scanner_pattern_id(name)
            elif HAVE_NATIVE_PRETOKENIZER and self.mode == "script":
                if (
                    compiled_pattern(self.main_pattern, candidates=("o200k",)) is not None
                    and compiled_pattern(self.script_specific_pattern, candidates=("specific",)) is not None
                ):
                    pid = 0
            self._pattern_id = pid
        return self._pattern_id

    def _any_scanner(self):
        """The compiled scanner of :meth:`pretokenize` (any of its patterns), or None."""
        if self._scanner is None:
            pid = self._scanner_id()
            if pid is None:
                return None
            tables = _native_tables()
            if tables is None:
                self._pattern_id = None
                return None
            self._scanner = _pretok.Scanner(*tables, script_table(), self._specific_mask, self.mode == "script", pid)
        return self._scanner

    def _get_scanner(self):
        """The compiled scanner when it runs GPT-4o's pattern (the one the compiled counter knows), else None."""
        scanner = self._any_scanner()
        return scanner if scanner is not None and self._pattern_id == 0 else None

    def pretokenize(self, text: str) -> List[str]:
        """The pretokens of one document, in order; they concatenate back to ``text``.

        Identical to :meth:`pretokenize_reference`; uses the compiled scanner when it can, else ``regex`` with
        one :class:`fastsw.PatternNotCompiledWarning` per pattern and process.
        """
        scanner = self._scanner or self._any_scanner()
        if scanner is None:
            if self._pattern_id is None and HAVE_NATIVE_PRETOKENIZER and self.mode != "none":
                _warn_not_compiled(self)
            return self.pretokenize_reference(text)
        return scanner.pretokenize(text)

    def pretokenize_reference(self, text: str) -> List[str]:
        """The ``regex`` path: the readable specification that the compiled scanner must match.

        Each script chunk (the whole text in ``simple`` mode) is cut by :func:`split_isolated`: the
        matches and the unmatched text between them, so the pretokens concatenate back to ``text``.
        In ``none`` mode the whole text is one pretoken.
        """
        if self.mode == "none":
            return [text] if text else []
        if self.mode == "simple":
            return split_isolated(self._main, text)
        out: List[str] = []
        for start, end, script in script_chunks(text):
            pattern = self._specific if script in self._specific_ids else self._main
            out.extend(split_isolated(pattern, text[start:end]))
        return out

    def has_letter(self, piece: str) -> bool:
        """Phase-2 letter test: does ``piece`` contain a match of the letter pattern?"""
        return self._letter.search(piece) is not None


# -- which patterns run on the compiled scanner ------------------------------------------------------------------
# Which pre-tokenizer patterns run on the compiled scanner, recognised by what they do, not by how they are spelled.
#
# The compiled scanner (``fastsw.pretokenizers._pretok``) knows five patterns, each written once above: GPT-4o's
# (``GPT4O_PATTERN``, tiktoken's o200k_base), cl100k_base's as tiktoken spells it today (``CL100K_PATTERN``),
# cl100k_base's older spelling (``CL100K_LEGACY_PATTERN``: older tiktoken releases and Llama 3's tokenizer; it cuts a
# whitespace run at the text's end differently, so it is a pattern of its own), GPT-2's (``GPT2_PATTERN``: r50k_base
# and p50k_base) and the script-specific one of the ``script`` mode. A regular expression spelled differently runs
# there too when it cuts text exactly as one of them does; :func:`compiled_pattern` decides.
#
# How it decides (a comparison of behaviour, since two spellings of one meaning can differ in every character):
#
# 1. A spelling seen before (the reference spellings above, tiktoken's own current spellings of GPT-2's pattern, and
#    any pattern recognised earlier in the process) is looked up.
# 2. A pattern whose meaning depends on the installed ``regex`` (a property fastsw does not pin, such as a script
#    name, or ``\w``, ``\b``, ``\X``, POSIX classes) is never recognised: its classes are not the pinned ones the
#    scanner reads.
# 3. Otherwise the pattern (compiled as the ``regex`` path compiles it, ``compile_pattern``) and each candidate
#    reference must give the same pieces (:func:`split_isolated`) on every probe text, and the first candidate that
#    does is the answer. The probes (:func:`probe_texts`) cover both things a pattern can tell apart:
#
#    * *characters*: the pattern's classes are built from the pinned general categories, White_Space and the
#      characters it names, so two code points with the same category and White_Space value that it does not name are
#      alike to it, except for case folding under ``(?i)``. (The probes run the pattern compiled by ``regex`` without
#      the pinning, ten times faster, so they only use code points to which the installed ``regex`` gives the pinned
#      category and White_Space value: on them both compilations agree.) The probe alphabet holds, for each (category,
#      White_Space) pair of the pinned Unicode version, a code point with a case mapping and one without, every code
#      point the pattern names (escaped or literal) with its two neighbours, one code point of each category between
#      two consecutive named code points (the inside of a range), and the characters the references name (space,
#      ``\r``, ``\n``, ``'``, ``/``, the contraction letters and everything that folds to them);
#    * *structure*: every string of up to 3 code points over the references' own alphabet (one code point per class of
#      the scanner's table, plus the named characters), every string of up to 2 over the whole probe alphabet, each
#      character in runs of 1 to 9, 32 and 100, and seeded random texts of up to 64 code points over the whole
#      alphabet; each probe is a whole text (the text's start and end are where ``$`` and ``(?!\S)`` differ), and all
#      of them are also joined into one long text.
#
#    The characters are covered exhaustively in that sense; the structure is sampled (a pattern that differs only on,
#    say, a run of 40 digits would need a probe that has one). The references' differences from one another are all
#    caught by strings of 3 code points, which the probes hold exhaustively. The answer is kept for the process.
#
# Anything not recognised runs on the ``regex`` path; :class:`fastsw.notes.PatternNotCompiledWarning` says so once per
# pattern and process.

#: name -> (reference spelling, ``Scanner`` pattern id of ``fastsw.pretokenizers._pretok``); ``specific`` only with
#: script chunks.
COMPILED_PATTERNS: Dict[str, Tuple[str, int]] = {
    "o200k": (GPT4O_PATTERN, 0),
    "cl100k": (CL100K_PATTERN, 1),
    "cl100k_legacy": (CL100K_LEGACY_PATTERN, 2),
    "gpt2": (GPT2_PATTERN, 3),
    "specific": (SCRIPT_SPECIFIC_PATTERN, 0),
}

# Other spellings known to mean one of them (step 1); the tests prove each with the probes and on the corpus.
_KNOWN: Dict[str, Optional[str]] = {spelling: name for name, (spelling, _) in COMPILED_PATTERNS.items()}
_KNOWN[r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""] = "gpt2"  # tiktoken's
_REJECTED: set = set()  # (pattern, candidates) found to mean none of the candidates
_LOCK = threading.Lock()

# escapes whose meaning regex decides (step 2); \p{..} of unpinned properties come from pin_pattern
_UNPINNED = regex.compile(r"\\[wWbBXRGKAzZ]|\[:\^?[a-z]+:\]|\(\?[a-zA-Z]*[wfrvV]")
_NAMED_ESCAPE = regex.compile(
    r"\\(?:x\{([0-9A-Fa-f]+)\}|x([0-9A-Fa-f]{2})|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})"
    r"|N\{([^}]*)\}|0([0-7]{0,2})|([tnrfvae]))"
)
_ESCAPE_CHARS = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "v": "\v", "a": "\a", "e": "\x1b"}
_REFERENCE_CHARS = " \t\n\r'/0123456789aAzZ"


def compiled_pattern(pattern: str, *, candidates=("o200k", "cl100k", "cl100k_legacy", "gpt2")) -> Optional[str]:
    """The name (a key of :data:`COMPILED_PATTERNS`) of the compiled pattern that ``pattern`` means, among
    ``candidates``, or None (then the ``regex`` path runs it). See the comment above it for how it decides.

        >>> compiled_pattern(r"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+")
        'gpt2'
        >>> compiled_pattern(r"'(?:s|t|re|ve|m|ll|d)| ?\\pL+| ?\\pN+| ?[^\\s\\pL\\pN]+|\\s+(?!\\S)|\\s+")  # respelled
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
    """The ``fastsw.pretokenizers._pretok.Scanner`` pattern id of a name of :data:`COMPILED_PATTERNS`."""
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
        got = split_isolated(compiled, text)
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
    return split_isolated(compile_pattern(COMPILED_PATTERNS[name][0]), text)


@functools.lru_cache(maxsize=None)
def _reference_scanner(name: str):
    if name == "specific" or not HAVE_NATIVE_PRETOKENIZER:
        return None
    tables = _native_tables()
    if tables is None:
        return None
    return _pretok.Scanner(*tables, script_table(), np.zeros(256, np.uint8), False, COMPILED_PATTERNS[name][1])


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
    characters the references name) and the whole probe alphabet (the comment above :func:`compiled_pattern`)."""
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
            _, idx = np.unique(cats[a + 1 : b], return_index=True)
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
    return regex.match(r"\p{gc=%s}" % CATEGORIES[category_table()[cp]], ch) is not None and (
        regex.match(r"\s", ch) is not None
    ) == bool(white_space_table()[cp])


def _CONTRACTION_CHARS() -> str:
    """The contraction letters in both cases and every code point that folds to one of them."""
    return "sdmtlvreSDMTLVRE" + "".join(chr(int(c)) for c in contraction_folds()[0])


def probe_texts(pattern: str):
    """The probe texts for ``pattern`` (a generator; the comment above it describes them)."""
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
