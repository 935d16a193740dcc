"""Explicit boundary markers and caps codes as pre-tokenizers (seed 002 sections 3-3.2 and B.3; SPEC section 9).

This module owns the marker schemes ``boundary[w]``, ``boundary[w,p]``, ``boundary[w,p,d]`` (each optionally with
``+caps``, ``+shift`` or ``+upper``): the Unicode classes they are built on, the groups and spans, the marking rules,
the caps-code decision, the inverse (decoding) and the scheme-name parser. The atoms themselves (how a marker lives
inside a pretoken ``str`` and inside token bytes) are :mod:`fastsw.alphabet`'s; the trainers, the model file and the
encoders handle them through the pre-tokenizer interface (:class:`fastsw.pretokenizers.base.BasePretokenizer`:
``atoms``, ``make_alphabet``, ``decode_text``, ``supermerge_forbidden``, ...), never through anything specific to
markers.

Classes. Every code point listed in ``data/unicode/Scripts-16.0.0.txt`` (the version the seed's authors used;
shipped with the package) gets a class from its script and the general category in that file's comment column:
letters and marks (``L&``, ``L*``, ``M*``) of the 28 high-resource scripts are ``(script, LM)`` (Hiragana letters
take Han's class); their other characters drop the script: ``(✭, N)``, ``(✭, ZC)`` for ``Z*`` and ``Cc``,
``(✭, So)``, ``(✭, PSF)`` for punctuation, the other symbols and ``Cf``; characters of other scripts drop the
category, ``(script, ✭)``; code points the file does not list are ``(Unknown, ✭)``. Python's ``unicodedata`` is
older than Unicode 16, so nothing here asks it.

Groups, spans, marking (SPEC section 9, exactly). Adjacent characters of one class form a group; Inherited
characters join the group before them, except at the start of a text and directly after a group that is exactly
one space (U+0020): there they form an ``(Inherited, ✭)`` group of their own. A *word* span is a run of groups of
space-using scripts' ``LM`` classes (a script change inside it starts a new pretoken), *digit* = ``(✭, N)``,
*punct* = ``(✭, PSF)``, *space* = a one-space group, everything else *other*. Marked kinds: word, punct with ``p``,
digit with ``d``. A space is elided iff it is neither the first nor the last span and both neighbours are marked;
a word span gets ``¦`` at both ends, a punct or digit span only on a side whose neighbouring space was elided; the
markers sit inside the span's first and last pretoken. Caps codes (``↑`` title case, ``⇑`` upper case) are decided
on the whole word span with ``str`` methods and put before the opening marker; the span is then lowercased by one
``lower()`` call. Decoding turns each pair of adjacent markers (caps codes between them ignored) into one space,
drops every other marker and re-cases the span after a code. So ``decode_text(join(pretokenize(t))) == t`` for every
``str`` ``t`` that has UTF-8 (without ``drop_unlisted``); text that already contains the characters ``¦``, ``↑`` or
``⇑`` keeps them as ordinary characters, since the atoms are lone surrogates, not those characters.

Two paths, one answer: :meth:`BoundaryPretokenizer.pretokenize_reference` is the plain-Python rule (and
:class:`fastsw.corpus.counting.CountTable` over it the counting rule); the Cython twin (``fastsw/pretokenizers/_boundary.pxi``) segments
without the GIL into piece descriptors, which ``MarkScheme.pretokenize`` turns into strs
(:meth:`BoundaryPretokenizer.pretokenize`) and ``MarkCounter`` -- the default patterns' compiled ``Counter`` with
this segmentation in front -- counts (:meth:`BoundaryPretokenizer.native_counter`, one per thread). Tests compare
them on every corpus language and on Hypothesis text; ``bench/bench_boundary.py --check`` compares the pretokens on
all of ``../shared/corpus`` (39,067 documents, 142 MB, four schemes: identical and invertible).

Offsets (:meth:`BoundaryPretokenizer.token_offsets`, ``Tokenizer.encode_with_offsets``): a token starts at the length
of what the tokens before it decode to. The second marker of a pair stands for the elided space, every other atom
has zero width, and a span lowercased behind a caps code keeps its offsets (a code is only given when ``lower()``
keeps the length); so ``¦cat¦`` starts at the space before ``cat``, as `` cat`` does without markers.

Supermerges. Two touching markers never end up inside one token: every touching pair comes from an elided space, so
the trainer cuts supermerge candidates between a phase-1 token that ends with ``¦`` and one that starts with
``¦`` (after caps codes) (:func:`cut_candidates`, both backends); encoding needs no rule of its own, since no such
supermerge exists.

Design notes: see docs/internals.md, section "Boundary markers".
"""

from __future__ import annotations

import functools
import re
import threading
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import numpy as np
import regex

from fastsw._config import pure_python
from fastsw.pretokenizers._unicode import compile_pattern
from fastsw.pretokenizers.base import BasePretokenizer
from fastsw.pretokenizers.registry import valid_names_message
from fastsw.alphabet import Atom, AtomAlphabet, PROFILE_ALPHABETS, atom_text, check_utf8

__all__ = ["SPACE_USING_SCRIPTS", "HIGH_RESOURCE_SCRIPTS", "MARKER", "SHIFT", "CAPS", "ATOMS", "Scheme", "parse_scheme"]
__all__ += ["BoundaryPretokenizer", "class_table", "groups", "cut_candidates", "decode_marked", "show"]

SCRIPTS_FILE = Path(__file__).resolve().parents[1] / "data" / "unicode" / "Scripts-16.0.0.txt"

#: The 20 scripts that separate words with spaces (seed 002 B.1 footnote; Unicode has no such property).
SPACE_USING_SCRIPTS = (
    "Latin",
    "Arabic",
    "Devanagari",
    "Hangul",
    "Ethiopic",
    "Cyrillic",
    "Greek",
    "Hebrew",
    "Bengali",
    "Syriac",
    "Oriya",
    "Tamil",
    "Telugu",
    "Gurmukhi",
    "Gujarati",
    "Sinhala",
    "Malayalam",
    "Armenian",
    "Kannada",
    "Georgian",
)
#: The 28 high-resource scripts: the space-using ones, seven more and Common.
HIGH_RESOURCE_SCRIPTS = SPACE_USING_SCRIPTS + (
    "Han",
    "Hiragana",
    "Katakana",
    "Thai",
    "Myanmar",
    "Khmer",
    "Lao",
    "Common",
)

#: The atoms of the marker schemes (fixed short slots, see fastsw.alphabet).
MARKER = Atom(0, "boundary", "¦")
SHIFT = Atom(1, "shift", "↑")
CAPS = Atom(2, "caps", "⇑")
ATOMS = (MARKER, SHIFT, CAPS)
M, S, C = MARKER.char, SHIFT.char, CAPS.char

# span/group kinds (one byte per class in the table; the Cython twin uses the same numbers)
K_OTHER, K_WORD, K_DIGIT, K_PUNCT, K_INHERITED, K_UNLISTED = 0, 1, 2, 3, 4, 5
_SPACE = 0x20


# ---- the class table ------------------------------------------------------------------------------------------------


def _supercategory(gc: str) -> str:
    if gc[0] in "LM":
        return "LM"
    if gc[0] == "N":
        return "N"
    if gc[0] == "Z" or gc == "Cc":
        return "ZC"
    if gc == "So":
        return "So"
    return "PSF"  # P*, Sm, Sc, Sk, Cf


def _class_of(script: str, gc: str) -> Tuple[str, str]:
    if script in HIGH_RESOURCE_SCRIPTS:
        sup = _supercategory(gc)
        if sup == "LM":
            return ("Han" if script == "Hiragana" else script, "LM")
        return ("✭", sup)
    return (script, "✭")


class ClassTable:
    """Per-code-point classes: ``cls`` (``uint16``, 0x110000 entries: the class id of each code point),
    ``names`` (class id -> ``(script, supercategory)``, in the order of first appearance in the Scripts file; the
    last id is ``(Unknown, ✭)``) and ``kind`` (``uint8`` per class id: ``K_WORD``, ``K_DIGIT``, ``K_PUNCT``,
    ``K_INHERITED``, ``K_UNLISTED`` or ``K_OTHER``)."""

    def __init__(self, path: Path = SCRIPTS_FILE):
        ids: Dict[Tuple[str, str], int] = {}
        entries = []
        line_re = re.compile(r"^([0-9A-F]+)(?:\.\.([0-9A-F]+))?\s*;\s*(\w+)\s*#\s*(\S+)")
        with open(path, encoding="utf-8") as f:
            for line in f:
                m = line_re.match(line)
                if not m:
                    continue
                lo = int(m.group(1), 16)
                hi = int(m.group(2), 16) if m.group(2) else lo
                key = _class_of(m.group(3), m.group(4))
                entries.append((lo, hi, ids.setdefault(key, len(ids))))
        unknown = ids.setdefault(("Unknown", "✭"), len(ids))
        cls = np.full(0x110000, unknown, dtype=np.uint16)
        for lo, hi, c in entries:
            cls[lo : hi + 1] = c
        self.cls = cls
        self.names = sorted(ids, key=ids.__getitem__)  # class id -> (script, superclass)
        kind = np.zeros(len(ids), dtype=np.uint8)
        for i, (script, sup) in enumerate(self.names):
            if sup == "LM" and script in SPACE_USING_SCRIPTS:
                kind[i] = K_WORD
            elif (script, sup) == ("✭", "N"):
                kind[i] = K_DIGIT
            elif (script, sup) == ("✭", "PSF"):
                kind[i] = K_PUNCT
            elif script == "Inherited":
                kind[i] = K_INHERITED
            elif script == "Unknown":
                kind[i] = K_UNLISTED
        self.kind = kind
        self.unknown = unknown
        # the kind of every code point directly (what the loops read)
        self.cp_kind = kind[cls]

    def class_name(self, ch: str) -> Tuple[str, str]:
        return self.names[self.cls[ord(ch)]]


@functools.lru_cache(maxsize=1)
def class_table() -> ClassTable:
    """The class table, built once per process from the bundled Scripts file (about 50 ms)."""
    return ClassTable()


# ---- groups ---------------------------------------------------------------------------------------------------------


def groups(text: str, *, markers: bool = True) -> List[Tuple[int, int, int]]:
    """The groups of ``text`` as ``(start, end, class id)`` (code point offsets), the reference rule.

    Inherited characters join the group before them; at the start of the text, and (with ``markers``, the rule of
    the marker schemes) directly after a group that is exactly one space, they form a group of their own.

        >>> t = class_table()
        >>> [("a b ́c"[s:e], t.names[c]) for s, e, c in groups("a b ́c")][3:5]
        [(' ', ('✭', 'ZC')), ('́', ('Inherited', '✭'))]
    """
    table = class_table()
    cls, cp_kind = table.cls, table.cp_kind
    out: List[Tuple[int, int, int]] = []
    start, cur = 0, -1
    for i, ch in enumerate(text):
        cp = ord(ch)
        c = int(cls[cp])
        if cur >= 0 and (
            c == cur or (cp_kind[cp] == K_INHERITED and not (markers and i - start == 1 and text[start] == " "))
        ):
            continue
        if cur >= 0:
            out.append((start, i, cur))
        start, cur = i, c
    if cur >= 0:
        out.append((start, len(text), cur))
    return out


# ---- schemes --------------------------------------------------------------------------------------------------------


class Scheme:
    """A parsed scheme name: which span kinds are marked and which caps codes are on."""

    __slots__ = ("punct", "digit", "shift", "caps")

    def __init__(self, punct: bool = False, digit: bool = False, shift: bool = False, caps: bool = False):
        self.punct, self.digit, self.shift, self.caps = bool(punct), bool(digit), bool(shift), bool(caps)

    @property
    def name(self) -> str:
        kinds = "w" + (",p" if self.punct else "") + (",d" if self.digit else "")
        codes = "+caps" if self.shift and self.caps else "+shift" if self.shift else "+upper" if self.caps else ""
        return f"boundary[{kinds}]{codes}"

    def __eq__(self, other) -> bool:
        return isinstance(other, Scheme) and self.name == other.name

    def __repr__(self) -> str:
        return f"Scheme({self.name!r})"


_KINDS = {"w": (False, False), "w,p": (True, False), "w,p,d": (True, True)}
_CODES = {"caps": (True, True), "shift": (True, False), "upper": (False, True)}
_BOUNDARY_RE = re.compile(r"^boundary\[([a-z, ]*)\]((?:\+[a-z]+)*)$")


def parse_scheme(name: str) -> Scheme:
    """Parse ``boundary[w]``, ``boundary[w,p]`` or ``boundary[w,p,d]`` with an optional ``+caps`` / ``+shift`` /
    ``+upper`` (one of them: ``+caps`` is both codes). Anything else is one ``ValueError`` listing the valid
    names.

        >>> parse_scheme("boundary[w,p,d]+caps").name
        'boundary[w,p,d]+caps'
        >>> parse_scheme("boundary[w, p]+shift").name
        'boundary[w,p]+shift'
    """
    m = _BOUNDARY_RE.match(name.strip()) if isinstance(name, str) else None
    kinds = m and m.group(1).replace(" ", "")
    if not m or kinds not in _KINDS:
        raise ValueError(f"unknown pre-tokenizer {name!r}; {valid_names_message()}")
    punct, digit = _KINDS[kinds]
    flags = m.group(2).split("+")[1:]
    for flag in flags:
        if flag not in _CODES:
            raise ValueError(
                f"unknown flag +{flag} in pre-tokenizer {name!r}; the flags are +caps (both codes), "
                f"+shift (↑ title case) and +upper (⇑ upper case); {valid_names_message()}"
            )
    if len(flags) > 1:
        raise ValueError(
            f"pre-tokenizer {name!r} has {len(flags)} flags; a scheme takes one caps flag: +caps (both "
            "codes), +shift (↑ title case) or +upper (⇑ upper case)"
        )
    shift, caps = _CODES[flags[0]] if flags else (False, False)
    return Scheme(punct, digit, shift, caps)


# ---- caps codes -----------------------------------------------------------------------------------------------------


def caps_code(t: str, shift: bool, caps: bool, single_char_shift: bool = True, min_caps_length: int = 2) -> str:
    """The caps code for a word span's text ``t``: ``SHIFT.char``, ``CAPS.char`` or ``""`` (SPEC section 9).

    >>> [caps_code(w, True, True) != "" for w in ("The", "NASA", "GaN", "iPhone", "İstanbul", "ẞ")]
    [True, True, False, False, False, False]
    """
    if not (t.istitle() or t.isupper()):
        return ""
    low = t.lower()
    if len(low) != len(t):
        return ""
    if shift and (len(t) >= 2 or single_char_shift) and low[0].upper() + low[1:] == t:
        return S
    if caps and len(t) >= min_caps_length and low.upper() == t:
        return C
    return ""


# ---- the reference pre-tokenizer ----------------------------------------------------------------------------------

_SURROGATE = regex.compile(r"[\ud800-\udfff]")


def marked_pretokens(
    text: str, scheme: Scheme, single_char_shift: bool = True, min_caps_length: int = 2, drop_unlisted: bool = False
) -> List[str]:
    """The pretokens of ``text`` under ``scheme`` (atoms as lone surrogates): the plain-Python rule."""
    if _SURROGATE.search(text):
        check_utf8(text)
    table = class_table()
    if drop_unlisted:
        text = "".join(ch for ch in text if table.cp_kind[ord(ch)] != K_UNLISTED)
    kind = table.kind
    # spans: (kind, [group texts]); a word span collects consecutive word groups
    spans: List[Tuple[int, List[str]]] = []
    for s, e, c in groups(text):
        k = int(kind[c])
        piece = text[s:e]
        if k == K_WORD:
            if spans and spans[-1][0] == K_WORD:
                spans[-1][1].append(piece)
            else:
                spans.append((K_WORD, [piece]))
        elif piece == " ":
            spans.append((-1, [piece]))  # a space span
        elif k in (K_DIGIT, K_PUNCT):
            spans.append((k, [piece]))
        else:
            spans.append((K_OTHER, [piece]))
    marked = {K_WORD: True, K_PUNCT: scheme.punct, K_DIGIT: scheme.digit}
    n = len(spans)
    elided = [
        k == -1 and 0 < i < n - 1 and marked.get(spans[i - 1][0], False) and marked.get(spans[i + 1][0], False)
        for i, (k, _) in enumerate(spans)
    ]
    out: List[str] = []
    for i, (k, pieces) in enumerate(spans):
        if k == -1:
            if not elided[i]:
                out.append(" ")
            continue
        if k == K_WORD:
            code = ""
            if scheme.shift or scheme.caps:
                t = "".join(pieces)
                code = caps_code(t, scheme.shift, scheme.caps, single_char_shift, min_caps_length)
                if code:
                    low = t.lower()
                    cut, pos = [], 0
                    for p in pieces:
                        cut.append(low[pos : pos + len(p)])
                        pos += len(p)
                    pieces = cut
            pieces = list(pieces)
            pieces[0] = code + M + pieces[0]
            pieces[-1] = pieces[-1] + M
            out.extend(pieces)
        elif k in (K_DIGIT, K_PUNCT) and marked[k]:
            left = M if i > 0 and elided[i - 1] else ""
            right = M if i < n - 1 and elided[i + 1] else ""
            out.append(left + pieces[0] + right)
        else:
            out.append(pieces[0])
    return out


def decode_marked(s: str) -> str:
    """The inverse of marking on a ``str`` whose atoms are lone surrogates: a pair of adjacent markers (caps codes
    between them ignored) becomes one space, every other marker vanishes, a caps code re-cases the span after it
    (up to the next marker). Works on any sequence of atoms (e.g. decoding arbitrary ids): a code with no span
    after it vanishes.

        >>> decode_marked(S + M + "the" + M + M + "cat" + M + ",")
        'The cat,'
    """
    if M not in s and S not in s and C not in s:
        return s
    out: List[str] = []
    n = len(s)
    i = 0
    code = ""  # the code waiting for its span's opening marker
    span_code = ""  # the code of the span being read
    span: List[str] = []
    in_span = False

    def close():
        nonlocal in_span, span_code
        t = "".join(span)
        if span_code == S and t:
            t = t[0].upper() + t[1:]
        elif span_code == C:
            t = t.upper()
        out.append(t)
        span.clear()
        in_span, span_code = False, ""

    while i < n:
        ch = s[i]
        if ch == S or ch == C:
            code = ch
            i += 1
            continue
        if ch == M:
            if in_span:
                close()
            # a pair: the next non-code atom is a marker
            j = i + 1
            while j < n and s[j] in (S, C):
                j += 1
            if j < n and s[j] == M:
                out.append(" ")
                code = s[j - 1] if j - 1 > i else code
                i = j  # the second marker opens the next span
            if code:
                in_span, span_code, code = True, code, ""
            i += 1
            continue
        if in_span:
            span.append(ch)
        else:
            out.append(ch)
        i += 1
    if in_span:
        close()
    return "".join(out)


def show(piece: str) -> str:
    """A pretoken with its marker-scheme atoms as ``¦``, ``↑``, ``⇑`` (for display only: text may hold those
    characters too)."""
    return piece.replace(M, MARKER.shown).replace(S, SHIFT.shown).replace(C, CAPS.shown)


# ---- the pre-tokenizer object -------------------------------------------------------------------------------------

try:
    from fastsw.pretokenizers._pretok import (
        MarkScheme as _MarkScheme,
        mark_counter as _mark_counter,
        mark_token_bytes as _mark_bytes,
    )
except ImportError:  # the extension is not built (or is older than this module)
    _MarkScheme = _mark_counter = _mark_bytes = None

#: bits of :func:`case_table`'s entries (the Cython twin reads the same numbers)
LOW_CP, LOW_ROUND, LOW_COMPLEX = 0x1FFFFF, 0x40000000, 0x80000000


@functools.lru_cache(maxsize=1)
def case_table() -> np.ndarray:
    """``str.lower`` per code point, for the compiled caps-code decision (``uint32``, 0x110000 entries; only the
    code points a word span can hold -- word and Inherited classes -- are filled): the full lowercase mapping when
    it is one code point (``LOW_CP`` bits), with ``LOW_ROUND`` when its ``str.upper()`` is the code point itself,
    or ``LOW_COMPLEX`` when the lowercase is not one code point (``caps_code`` then gives no code), and in bits
    21-23 the per-character predicates ``str.isupper``/``islower``/``istitle`` read (``Py_UNICODE_ISUPPER``,
    ``ISLOWER``, ``ISTITLE``, added by the extension: only the compiled twin reads this table). Built by Python's
    own ``str`` methods (17,653 code points, about 20 ms), so it agrees with :func:`caps_code` by construction;
    the context-dependent final sigma of U+03A3 is left to ``caps_code`` itself."""
    t = class_table()
    low = np.zeros(0x110000, dtype=np.uint32)
    for cp in np.flatnonzero((t.cp_kind == K_WORD) | (t.cp_kind == K_INHERITED)).tolist():
        ch = chr(cp)
        lo = ch.lower()
        low[cp] = LOW_COMPLEX if len(lo) != 1 else ord(lo) | (LOW_ROUND if lo.upper() == ch else 0)
    from fastsw.pretokenizers._pretok import add_case_flags

    add_case_flags(low)  # str.isupper/islower/istitle's per-character predicates, bits 21-23
    return low


@functools.lru_cache(maxsize=1)
def _letter_scanner():
    """A compiled scanner, for its ``\\p{L}`` table (the letter flags of :class:`fastsw.pretokenizers._pretok.MarkCounter`), or
    None when the extension is not built or regex's Unicode breaks the scanner's tables (see
    ``fastsw.pretokenizers._unicode.pretoken_table``)."""
    from fastsw.pretokenizers._unicode import contraction_folds, pretoken_table, script_table

    try:
        from fastsw.pretokenizers._pretok import Scanner

        table, folds = pretoken_table(), contraction_folds()
    except (ImportError, RuntimeError):
        return None
    return Scanner(table, *folds, script_table(), np.zeros(256, dtype=np.uint8), False)


_local = threading.local()  # per thread: the compiled schemes (their scratch is not shared between threads)


def _compiled_scheme(key: tuple):
    """The compiled twin's :class:`fastsw.pretokenizers._pretok.MarkScheme` for ``key`` (the scheme's switches), one per thread."""
    cache = getattr(_local, "schemes", None)
    if cache is None:
        cache = _local.schemes = {}
    ms = cache.get(key)
    if ms is None:
        t = class_table()
        punct, digit, shift, caps, single, min_caps, drop = key
        ms = cache[key] = _MarkScheme(
            t.cls, t.kind, case_table(), punct, digit, shift, caps, single, min_caps, drop, M, S, C, caps_code
        )
    return ms


_LETTER = compile_pattern(r"\p{L}")


class SchemeSettings(BasePretokenizer):
    """The settings (model file ``pretokenizer`` entry) shared by the scheme pre-tokenizers
    (:class:`BoundaryPretokenizer`, :class:`fastsw.pretokenizers.script_v3.ScriptPretokenizer`): ``mode``, the scheme's name
    and the three options. A subclass sets ``mode``, ``_DEFAULT_SCHEME`` and ``_LABEL`` (for the error)."""

    _DEFAULT_SCHEME = _LABEL = ""
    _KEYS = frozenset({"mode", "scheme", "drop_unlisted", "single_char_shift", "min_caps_length"})
    drop_unlisted: bool
    single_char_shift: bool
    min_caps_length: int

    @property
    def name(self) -> str:
        """The scheme's name as the user spells it (``boundary[w,p]+caps``, ``script-v3+boundary[w]``)."""
        raise NotImplementedError(f"{type(self).__name__} names its scheme")

    def to_config(self) -> dict:
        return {
            "mode": self.mode,
            "scheme": self.name,
            "drop_unlisted": self.drop_unlisted,
            "single_char_shift": self.single_char_shift,
            "min_caps_length": self.min_caps_length,
        }

    @classmethod
    def from_config(cls, config: dict):
        unknown = set(config) - cls._KEYS
        if unknown:
            raise ValueError(f"unknown {cls._LABEL} pre-tokenizer settings: {', '.join(sorted(unknown))}")
        return cls(
            config.get("scheme", cls._DEFAULT_SCHEME),
            drop_unlisted=config.get("drop_unlisted", False),  # type: ignore[call-arg]
            single_char_shift=config.get("single_char_shift", True),
            min_caps_length=config.get("min_caps_length", 2),
        )

    @classmethod
    def from_name(cls, name: str):
        """The scheme a user names ``name`` (``"boundary[w,p,d]+caps"``, ``"script-v3+boundary[w]"``), default
        options."""
        return cls(name)  # type: ignore[call-arg]  # each subclass takes the name first


class BoundaryPretokenizer(SchemeSettings):
    """A marker scheme as a pre-tokenizer (``fastsw.train(..., pretokenizer="boundary[w,p,d]+caps")`` makes one).

    Args:
        scheme: ``"boundary[w]"``, ``"boundary[w,p]"``, ``"boundary[w,p,d]"``, optionally with ``+caps``,
            ``+shift`` or ``+upper``.
        drop_unlisted: delete code points that have no entry in the Scripts file before pre-tokenizing (the seed
            authors' pipeline; with ``normalize="nfc"`` it reproduces their test expectations). Default False:
            lossless on every ``str``.
        single_char_shift, min_caps_length: the caps-code parameters of SPEC section 9.

        >>> from fastsw.pretokenizers.pretokenize import make_pretokenizer
        >>> p = make_pretokenizer("boundary[w,p,d]+caps")
        >>> [show(x) for x in p.pretokenize("The cat, 3 ΟΔΟΣ")]
        ['↑¦the¦', '¦cat¦', ',¦', '¦3¦', '⇑¦οδος¦']
        >>> p.decode_text("".join(p.pretokenize("The cat, 3 ΟΔΟΣ")))
        'The cat, 3 ΟΔΟΣ'
    """

    mode = "boundary"
    letter_pattern = r"\p{L}"

    def __init__(
        self,
        scheme: str = "boundary[w,p,d]+caps",
        *,
        drop_unlisted: bool = False,
        single_char_shift: bool = True,
        min_caps_length: int = 2,
    ):
        self.scheme = parse_scheme(scheme)
        if not isinstance(drop_unlisted, bool) or not isinstance(single_char_shift, bool):
            raise ValueError("drop_unlisted and single_char_shift must be True or False")
        if isinstance(min_caps_length, bool) or not isinstance(min_caps_length, int) or min_caps_length < 1:
            raise ValueError(f"min_caps_length={min_caps_length!r} must be an int >= 1")
        self.drop_unlisted = drop_unlisted
        self.single_char_shift = single_char_shift
        self.min_caps_length = min_caps_length

    # -- configuration ------------------------------------------------------------------------------------------
    _DEFAULT_SCHEME, _LABEL = "", "boundary"

    @property
    def name(self) -> str:
        return self.scheme.name

    def __repr__(self) -> str:
        return f"BoundaryPretokenizer({self.scheme.name!r})"

    # -- atoms ---------------------------------------------------------------------------------------------------
    @property
    def atoms(self) -> List[Atom]:
        """The atoms this scheme emits: the marker, then the enabled caps codes."""
        return [MARKER] + ([SHIFT] if self.scheme.shift else []) + ([CAPS] if self.scheme.caps else [])

    def make_alphabet(self, profile: str) -> AtomAlphabet:
        """The profile's byte alphabet followed by this scheme's atoms."""
        return AtomAlphabet(PROFILE_ALPHABETS[profile][0], self.atoms)

    # -- splitting -----------------------------------------------------------------------------------------------
    # (no native_scanner: the pieces are not substrings of the text, so the encoder's offsets path is not used;
    # the compiled twin is used by pretokenize when compiled)
    @property
    def compiled(self) -> bool:
        """Whether :meth:`pretokenize` runs the Cython twin."""
        return _MarkScheme is not None and not pure_python()

    def pretokenize_reference(self, text: str) -> List[str]:
        """The plain-Python rule (:func:`marked_pretokens`)."""
        return marked_pretokens(text, self.scheme, self.single_char_shift, self.min_caps_length, self.drop_unlisted)

    def pretokenize(self, text: str) -> List[str]:
        """The pretokens of ``text`` (atoms as lone surrogates); identical to :meth:`pretokenize_reference`."""
        if _MarkScheme is None or pure_python():
            return self.pretokenize_reference(text)
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, not {type(text).__name__}")
        return _compiled_scheme(self._key).pretokenize(text)

    @property
    def _key(self) -> tuple:
        s = self.scheme
        return (s.punct, s.digit, s.shift, s.caps, self.single_char_shift, self.min_caps_length, self.drop_unlisted)

    def has_letter(self, piece: str) -> bool:
        return _LETTER.search(piece) is not None

    def token_bytes_batch(self, texts: Sequence[str]):
        """The fast encoder's input for ``texts`` without a str per pretoken: ``(data, piece_ends, doc_pieces)``,
        the token bytes of every pretoken (:func:`fastsw.alphabet.atom_bytes` of :meth:`pretokenize`'s pieces,
        concatenated), each pretoken's end in bytes from its text's start and the texts' first pretokens; None
        without the extension. Tests compare it with the pieces' ``atom_bytes``."""
        if _mark_bytes is None or pure_python():
            return None
        return _mark_bytes(_compiled_scheme(self._key), texts if type(texts) is list else list(texts))

    def native_counter(self, collect_runs: bool):
        """The compiled twin of :class:`fastsw.corpus.counting.CountTable` for this scheme: a ``fastsw.pretokenizers._pretok.MarkCounter``
        (the default patterns' ``Counter`` -- its table, letter runs and merge -- fed by the compiled segmentation,
        without the GIL, so :func:`fastsw.corpus.counting.count_corpus` runs one per thread), or None without the
        extension or with ``FASTSW_PUREPYTHON``."""
        if _mark_counter is None or pure_python():
            return None
        scanner = _letter_scanner()
        if scanner is None:
            return None
        return _mark_counter(scanner, _compiled_scheme(self._key), collect_runs)

    # -- the inverse ---------------------------------------------------------------------------------------------
    decode_text = staticmethod(decode_marked)
    show = staticmethod(show)

    def token_offsets(self, ids: Sequence[int], token_bytes: Sequence[bytes], special_by_id) -> List[int]:
        """Where each token of ``ids`` starts in the text it encodes (``Tokenizer.encode_with_offsets``): the
        length of what the tokens before it decode to, so ``text[:offsets[k]] == decode(ids[:k])`` whenever token
        ``k`` does not start inside a character (then it gets that character's offset, as for every model).

        Atoms have zero width, except the second marker of a pair (caps codes between them ignored), which stands
        for the elided space: ``the¦`` + ``¦cat¦`` puts ``¦cat¦`` at the space, as `` cat`` would start there
        without markers; a closing marker, a caps code and a lone opening marker take no character. Characters of a
        span a caps code lowercased keep their offsets (a code is given only when ``lower()`` keeps the length).
        The offsets refer to the text after ``normalize`` and ``drop_unlisted``.

            >>> tb = [b"x"] * 248 + [MARKER.code, SHIFT.code]
            >>> tb += [SHIFT.code + MARKER.code + b"the", MARKER.code, MARKER.code + b"cat" + MARKER.code]
            >>> BoundaryPretokenizer("boundary[w]+caps").token_offsets([250, 251, 252], tb, {})  # The cat
            [0, 3, 3]
        """
        mark, shift, caps = MARKER.code[0], SHIFT.code[0], CAPS.code[0]
        n = len(token_bytes)
        memo: Dict[Tuple[int, bool], Tuple[int, bool]] = {}
        out: List[int] = []
        chars, pending = 0, False  # pending: the last non-code unit was a marker that may open a pair
        for t in ids:
            tb = token_bytes[t] if 0 <= t < n else special_by_id[t]
            out.append(chars - 1 if 0x80 <= tb[0] < 0xC0 else chars)
            step = memo.get((t, pending))
            if step is None:
                added, p = 0, pending
                for b in tb:
                    if b == mark:
                        added, p = (added + 1, False) if p else (added, True)
                    elif b != shift and b != caps:
                        p = False
                        added += not 0x80 <= b < 0xC0
                step = memo[t, pending] = (added, p)
            chars += step[0]
            pending = step[1]
        return out

    @staticmethod
    def run_break(prev: str, piece: str) -> bool:
        """Whether a supermerge may not join pieces ``prev`` and ``piece`` (atoms as lone surrogates): it would put
        two touching markers in one token (``prev`` ends with ``¦``, ``piece`` starts with ``¦`` after any caps
        codes). Counting cuts letter runs there (the compiled counter from its piece descriptors: a right marker,
        then a left one), and the trainer cuts the candidates there (:meth:`supermerge_forbidden`), so no
        supermerge ever holds touching markers."""
        return prev.endswith(M) and piece.lstrip(S + C).startswith(M)

    @classmethod
    def supermerge_forbidden(cls, left: bytes, right: bytes) -> bool:
        """:meth:`run_break` on two phase-1 tokens' bytes (whole pieces, so whole atoms and characters)."""
        return cls.run_break(atom_text(left), atom_text(right))


# ---- supermerge candidates ----------------------------------------------------------------------------------------


def cut_candidates(
    candidates: Dict[Tuple[int, ...], int], token_bytes: Sequence[bytes], forbidden
) -> Dict[Tuple[int, ...], int]:
    """Cut each candidate (tuple of phase-1 token ids -> count) between two adjacent tokens ``a, b`` for which
    ``forbidden(token_bytes[a], token_bytes[b])``; re-aggregate the pieces of length >= 2 by count.

        >>> tb = [b"a", MARKER.code + b"a", b"a" + MARKER.code]
        >>> cut_candidates({(2, 1, 0): 3, (0, 2): 1}, tb, BoundaryPretokenizer.supermerge_forbidden)
        {(1, 0): 3, (0, 2): 1}
    """
    memo: Dict[Tuple[int, int], bool] = {}
    out: Dict[Tuple[int, ...], int] = {}
    for seq, count in candidates.items():
        start = 0
        for k in range(1, len(seq) + 1):
            if k < len(seq):
                pair = (seq[k - 1], seq[k])
                cut = memo.get(pair)
                if cut is None:
                    cut = memo[pair] = bool(forbidden(token_bytes[pair[0]], token_bytes[pair[1]]))
                if not cut:
                    continue
            if k - start >= 2:
                piece = seq[start:k]
                out[piece] = out.get(piece, 0) + count
            start = k
    return out
