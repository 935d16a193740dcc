"""Pre-tokenization: split a document into pretokens (SPEC section 2).

This module owns the regular expressions and the `Pretokenizer`, the object that
turns one document (a ``str``) into its list of pretokens. Phase-1 merges never
cross a pretoken boundary; supermerges (phase 2) join runs of whole pretokens.

Three modes:

* ``"script"`` (default): the document is first cut into script chunks
  (:mod:`fastsw.chunking`), then each chunk is matched with ``GPT4O_PATTERN``, or
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
``fastsw._pretok`` (about an order of magnitude faster) when both patterns are the defaults, the
extension is built and ``FASTSW_PUREPYTHON`` is not ``"1"`` (``HAVE_NATIVE_PRETOKENIZER``), and
falls back to the reference otherwise, e.g. for custom patterns (with one
:class:`fastsw.PatternNotCompiledWarning` per pattern).  Both give identical pretokens
(tests check this on the shared corpora and on adversarial Unicode).  tiktoken's other patterns in ``simple``
mode -- cl100k_base's (``CL100K_PATTERN``), its older spelling (``CL100K_LEGACY_PATTERN``, Llama 3's) and GPT-2's
(``GPT2_PATTERN``, r50k_base and p50k_base) -- have compiled scanners of their own (``fastsw/_cl100k.pxi``) for
``pretokenize`` and ``pretoken_ends``; the compiled counter keeps to the default patterns. A pattern is matched
to a compiled scanner by what it does, not by its spelling (:mod:`fastsw.compiled_patterns`).

A pretokenizer is described by a plain dict (:meth:`Pretokenizer.to_config`) that
is stored in model files, so a loaded model pre-tokenizes exactly as it was
trained.
"""
from __future__ import annotations

import unicodedata
import warnings
from typing import Iterator, List, Optional, Sequence, Tuple

import numpy as np
import regex

from ._config import pure_python
from .chunking import script_chunks
from ._unicode import compile_pattern, script_id, script_table

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
# (fastsw._cl100k.pxi), as do the two below. Used by fastsw.tiktoken_vocab.
CL100K_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
                  r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")

# cl100k_base's pattern as older tiktoken releases spell it, and Llama 3's tokenizer: the same pretokens as
# CL100K_PATTERN except a whitespace run with a newline at the text's end ("a\n  " is "a", "\n", "  " here, and
# "a", "\n  " there). It has a compiled scanner of its own too.
CL100K_LEGACY_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
                         r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")

# GPT-2's pattern (tiktoken's r50k_base and p50k_base; nanoGPT, llm.c): a compiled scanner of its own too.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

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

# A pretoken is a possible part of a supermerge only if it contains a letter.
LETTER_PATTERN = r"\p{L}"

MODES = ("script", "simple", "none")

#: The normalization options: None (lossless, the default), "nfc", "nfkc".
NORMALIZATIONS = (None, "nfc", "nfkc")

try:
    from . import _pretok
except ImportError as _missing:
    _pretok = None
    if not pure_python():  # asked for the pure-Python paths, the user loses nothing
        from .notes import ExtensionMissingWarning

        warnings.warn(f"fastsw's compiled extension fastsw._pretok cannot be imported ({_missing}); fastsw runs on "
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
    return unicodedata.normalize(_FORMS[form], text)


_FORMS = {"nfc": "NFC", "nfkc": "NFKC"}


def _native_tables():
    """``(table, fold_cps, fold_letters)`` for ``fastsw._pretok``, or None if regex's Unicode breaks
    an assumption of the scanner (then the reference path is used; see ``pretoken_table``)."""
    global _NATIVE_TABLES
    if _NATIVE_TABLES is None:
        from ._unicode import contraction_folds, pretoken_table
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
_UNKNOWN = object()
_WARNED = set()  # the patterns PatternNotCompiledWarning was given for


def _warn_not_compiled(pretok: "Pretokenizer") -> None:
    """One :class:`fastsw.PatternNotCompiledWarning` per pattern and process."""
    key = (pretok.mode, pretok.main_pattern, pretok.script_specific_pattern if pretok.mode == "script" else None)
    if key in _WARNED:
        return
    _WARNED.add(key)
    from .notes import PatternNotCompiledWarning
    what = (f"the pattern {pretok.main_pattern!r}" if pretok.mode == "simple" else
            f"the patterns {pretok.main_pattern!r} and {pretok.script_specific_pattern!r} (script mode)")
    warnings.warn(f"fastsw runs {what} on the regex path, not on its compiled scanner: the same pretokens, several "
                  "times slower. The compiled scanner runs GPT-4o's (o200k_base), cl100k_base's (either spelling, as "
                  "Llama 3's) and GPT-2's (r50k_base, p50k_base) patterns however they are spelled, in mode "
                  "'simple' (GPT-4o's with the script-specific pattern in mode 'script'). Silence this with "
                  "warnings.filterwarnings('ignore', category=fastsw.PatternNotCompiledWarning)",
                  PatternNotCompiledWarning, stacklevel=3)


class Pretokenizer:
    """Split documents into pretokens.

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
        try:
            self._main = compile_pattern(main_pattern)
            self._specific = compile_pattern(script_specific_pattern)
            self._letter = compile_pattern(letter_pattern)
        except regex.error as e:
            raise ValueError(f"invalid pre-tokenizer regex: {e}") from e
        self._specific_ids = frozenset(script_id(name) for name in self.script_specific_scripts)
        self._specific_mask = np.zeros(256, dtype=np.uint8)  # script id -> 1 if script-specific
        self._specific_mask[list(self._specific_ids)] = 1
        self._pattern_id = _UNKNOWN  # the compiled scanner's pattern for these patterns, None for regex (_scanner_id)
        self._scanner = None  # the fastsw._pretok.Scanner, made on first use

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
    def from_config(cls, config: dict) -> "Pretokenizer":
        if config.get("mode") == "boundary":  # a marker scheme (fastsw.boundary)
            from .boundary import BoundaryPretokenizer
            return BoundaryPretokenizer.from_config(config)
        if config.get("mode") == "script-v3":
            return _script_v3().from_config(config)
        known = {"mode", "main_pattern", "script_specific_pattern", "script_specific_scripts",
                 "letter_pattern"}
        unknown = set(config) - known
        if unknown:
            raise ValueError(f"unknown pre-tokenizer settings: {', '.join(sorted(unknown))}")
        return cls(**config)

    def __eq__(self, other) -> bool:
        return isinstance(other, Pretokenizer) and self.to_config() == other.to_config()

    def __repr__(self) -> str:
        return f"Pretokenizer(mode={self.mode!r}, scripts={list(self.script_specific_scripts)!r})"

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_scanner"] = None  # the compiled scanner is rebuilt on first use after unpickling
        return state

    # -- splitting ----------------------------------------------------------
    @property
    def uses_native(self) -> bool:
        """True when :meth:`pretokenize` runs the compiled scanner (a pattern it has, the extension built)."""
        return self._any_scanner() is not None

    def _scanner_id(self):
        """The ``fastsw._pretok.Scanner`` pattern id for these patterns, or None (the ``regex`` path): in ``simple``
        mode GPT-4o's, cl100k_base's (either spelling) or GPT-2's pattern, in ``script`` mode GPT-4o's with the
        script-specific one, each recognised by what it does however it is spelled
        (:func:`fastsw.compiled_patterns.compiled_pattern`)."""
        if self._pattern_id is _UNKNOWN:
            from .compiled_patterns import compiled_pattern, scanner_pattern_id
            pid = None
            if HAVE_NATIVE_PRETOKENIZER and self.mode == "simple":
                name = compiled_pattern(self.main_pattern)
                pid = None if name is None else scanner_pattern_id(name)
            elif HAVE_NATIVE_PRETOKENIZER and self.mode == "script":
                if (compiled_pattern(self.main_pattern, candidates=("o200k",)) is not None
                        and compiled_pattern(self.script_specific_pattern, candidates=("specific",)) is not None):
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

    def pretoken_ends(self, text: str) -> np.ndarray:
        """End offsets (code points, ``int64``) of the pretokens of ``text``; compiled scanner only.

        Raises ``ValueError`` when the compiled scanner cannot be used (see :attr:`uses_native`).
        """
        scanner = self._any_scanner()
        if scanner is None:
            raise ValueError("pretoken_ends needs the compiled scanner: default patterns, the built "
                             "fastsw._pretok extension and FASTSW_PUREPYTHON unset; use pretokenize()")
        return scanner.pretoken_ends(text)

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


def _script_v3():
    """The SCRIPT v3 pre-tokenizer class (fastsw.script_v3), or one clear error when this installation has none."""
    try:
        from .script_v3 import ScriptPretokenizer
    except ImportError:  # the module, or its class, is not in this installation
        raise ValueError("the SCRIPT v3 pre-tokenizers (script-v3, script-v3+boundary[...]) are not available in "
                         "this fastsw (no fastsw.script_v3.ScriptPretokenizer); use script, simple, none or a "
                         "boundary[...] scheme") from None
    return ScriptPretokenizer


def make_pretokenizer(spec) -> Pretokenizer:
    """Accept a `Pretokenizer`, a mode name (``"script"``/``"simple"``/``"none"``), a marker or SCRIPT scheme
    name (``"boundary[w,p,d]+caps"``, ``"script-v3"``, ``"script-v3+boundary[w]"``, see :mod:`fastsw.boundary`),
    a config dict, or a scheme pre-tokenizer object. An unknown name is one error listing the valid ones."""
    if isinstance(spec, Pretokenizer) or hasattr(spec, "pretokenize_reference"):
        return spec
    if isinstance(spec, str):
        from .boundary import BoundaryPretokenizer, _valid_names_message, is_scheme_name
        name = spec.strip()
        if name.startswith("script-v3"):
            return _script_v3()(name)
        if is_scheme_name(name):
            return BoundaryPretokenizer(name)
        if name not in MODES:
            raise ValueError(f"unknown pre-tokenizer {spec!r}; {_valid_names_message()}")
        return Pretokenizer(mode=spec)
    if isinstance(spec, dict):
        return Pretokenizer.from_config(spec)
    raise ValueError(f"pretokenizer must be 'script', 'simple', 'none', a dict or a Pretokenizer, not {spec!r}")
