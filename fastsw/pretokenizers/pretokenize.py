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
falls back to the reference otherwise, e.g. for custom patterns.  Both give identical pretokens
(tests check this on the shared corpora and on adversarial Unicode).  tiktoken's cl100k_base pattern
(``CL100K_PATTERN``, ``simple`` mode) has a compiled scanner of its own (``fastsw/pretokenizers/_cl100k.pxi``) for
``pretokenize`` and ``pretoken_ends``; the compiled counter keeps to the default patterns.

A pretokenizer is described by a plain dict (:meth:`Pretokenizer.to_config`) that
is stored in model files, so a loaded model pre-tokenizes exactly as it was
trained. :class:`Pretokenizer` is the regex family of the pre-tokenizer interface
(:class:`fastsw.pretokenizers.base.BasePretokenizer`), registered as ``script``, ``simple`` and
``none`` (:mod:`fastsw.pretokenizers.registry`).
"""
from __future__ import annotations

import unicodedata
import warnings
from typing import Any, Iterator, List, Optional, Sequence, Tuple

import numpy as np
import regex

from fastsw._config import pure_python
from fastsw.pretokenizers.base import LETTER_PATTERN, BasePretokenizer
from fastsw.pretokenizers.chunking import script_chunks
from fastsw.pretokenizers._unicode import compile_pattern, script_id, script_table
from fastsw.pretokenizers.registry import make_pretokenizer  # noqa: F401 (defined in the registry; importable here)

# The contraction suffixes use the ASCII apostrophe, as in tiktoken's o200k pattern.
_CONTRACTIONS = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?"

GPT4O_PATTERN = "|".join([
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+" + _CONTRACTIONS,
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*" + _CONTRACTIONS,
    r"\p{N}{1,3}",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"\s*[\r\n]+",
    r"\s+(?!\S)",
    r"\s+",
])

# tiktoken's cl100k_base (GPT-4) pattern; in "simple" mode it runs on the compiled scanner too
# (fastsw._cl100k.pxi). Used by fastsw.tiktoken_vocab.
CL100K_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
                  r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")

# The first two (word) branches replaced by one letter with an optional leading
# space and trailing combining marks: each character becomes its own pretoken.
SCRIPT_SPECIFIC_PATTERN = "|".join([
    r" ?\p{L}\p{M}*",
    r"\p{N}{1,3}",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"\s*[\r\n]+",
    r"\s+(?!\S)",
    r"\s+",
])

DEFAULT_SCRIPT_SPECIFIC_SCRIPTS = ("Han", "Hiragana", "Katakana", "Thai", "Myanmar", "Khmer", "Lao")

#: the patterns fastsw ships (valid by construction), whose ``regex`` form a Pretokenizer compiles on first use
_BUILTIN_PATTERNS = frozenset((GPT4O_PATTERN, CL100K_PATTERN, SCRIPT_SPECIFIC_PATTERN, LETTER_PATTERN))

MODES = ("script", "simple", "none")

#: The normalization options: None (lossless, the default), "nfc", "nfkc".
NORMALIZATIONS = (None, "nfc", "nfkc")

try:
    from fastsw.pretokenizers import _pretok
except ImportError as _missing:
    _pretok = None
    if not pure_python():  # asked for the pure-Python paths, the user loses nothing
        from fastsw.notes import ExtensionMissingWarning

        warnings.warn(f"fastsw's compiled extension fastsw.pretokenizers._pretok cannot be imported ({_missing}); fastsw runs on "
                      "its pure-Python paths instead: the same results, several times slower. Reinstall fastsw "
                      "(pip install --force-reinstall fastsw), or in a source checkout build it with 'python "
                      "setup.py build_ext --inplace'; set FASTSW_PUREPYTHON=1 to choose the pure-Python paths "
                      "without this warning", ExtensionMissingWarning, stacklevel=2)

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
    raise ValueError(f"{what}={value!r} is not a normalization; use None (lossless, the default), "
                     "'nfc' or 'nfkc'")


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
            warnings.warn(f"fastsw: native pre-tokenizer disabled, using regex: {e}", RuntimeWarning,
                          stacklevel=3)
            _NATIVE_TABLES = False
    return _NATIVE_TABLES or None


_NATIVE_TABLES = None


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

    def __init__(self, *, mode: str = "script", main_pattern: str = GPT4O_PATTERN,
                 script_specific_pattern: str = SCRIPT_SPECIFIC_PATTERN,
                 script_specific_scripts: Optional[Sequence[str]] = None,
                 letter_pattern: str = LETTER_PATTERN):
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
        for name, pattern in (("_main", main_pattern), ("_specific", script_specific_pattern),
                              ("_letter", letter_pattern)):
            if pattern not in _BUILTIN_PATTERNS:  # a user's pattern is checked now, not at its first use
                try:
                    self._regexes[name] = compile_pattern(pattern)
                except regex.error as e:
                    raise ValueError(f"invalid pre-tokenizer regex: {e}") from e
        self._specific_ids = frozenset(script_id(name) for name in self.script_specific_scripts)
        self._specific_mask = np.zeros(256, dtype=np.uint8)  # script id -> 1 if script-specific
        self._specific_mask[list(self._specific_ids)] = 1
        self._native = (HAVE_NATIVE_PRETOKENIZER and mode != "none" and main_pattern == GPT4O_PATTERN
                        and script_specific_pattern == SCRIPT_SPECIFIC_PATTERN)
        self._scanner = None  # the fastsw.pretokenizers._pretok.Scanner, made on first use
        # cl100k_base's pattern in simple mode: its own compiled scanner, for pretokenize/pretoken_ends only
        # (_get_scanner, which the compiled counter relies on, stays the GPT-4o one)
        self._cl100k = HAVE_NATIVE_PRETOKENIZER and mode == "simple" and main_pattern == CL100K_PATTERN
        self._cl100k_scanner = None

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
        known = {"mode", "main_pattern", "script_specific_pattern", "script_specific_scripts",
                 "letter_pattern"}
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
        state["_cl100k_scanner"] = None
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

    def _any_scanner(self):
        """The compiled scanner of :meth:`pretokenize`: the GPT-4o one, or cl100k_base's."""
        if self._cl100k:
            if self._cl100k_scanner is None:
                tables = _native_tables()
                if tables is None:
                    self._cl100k = False
                    return None
                self._cl100k_scanner = _pretok.Scanner(*tables, script_table(), self._specific_mask, False, 1)
            return self._cl100k_scanner
        return self._get_scanner()

    def _get_scanner(self):
        if self._scanner is None and self._native:
            tables = _native_tables()
            if tables is None:
                self._native = False
            else:
                self._scanner = _pretok.Scanner(*tables, script_table(), self._specific_mask,
                                                self.mode == "script")
        return self._scanner

    def pretokenize(self, text: str) -> List[str]:
        """The pretokens of one document, in order; they concatenate back to ``text``.

        Identical to :meth:`pretokenize_reference`; uses the compiled scanner when it can.
        """
        scanner = self._scanner or self._any_scanner()
        if scanner is None:
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
