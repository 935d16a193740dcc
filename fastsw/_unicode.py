"""Per-code-point Unicode ``Script`` table (not Script_Extensions) for script chunking.

Documented choice: the table is derived from the installed ``regex`` module, not from a bundled
``Scripts.txt``, so that script chunking agrees with the ``\\p{...}`` classes of the pretokenizer
regexes for whatever Unicode version that ``regex`` release implements.  The script names come
from ``regex._regex_core.PROPERTIES['SCRIPT']`` (private API; a clear error is raised if it goes
away) and each script's code points from ``regex.finditer(r'\\p{Script=NAME}+', ...)`` over a
string of every code point except the surrogates D800-DFFF, which are Unknown.

Script ids (``uint8``): ``UNKNOWN = 0``, ``COMMON = 1``, ``INHERITED = 2``, then the other scripts
sorted by name (upper case, separators removed).  Ids are stable for a given ``regex`` version but
may shift when a new ``regex`` adds scripts, so persist names, never ids.

The table takes about 0.5 s to build; it is built once per process and cached on disk under
``$XDG_CACHE_HOME/fastsw`` (or ``~/.cache/fastsw``), keyed by ``regex.__version__``.  An unreadable
cache or an unwritable directory only means the table is recomputed.

This module owns the table and the names; :mod:`fastsw.chunking` applies the chunking rules.
"""

import functools
import os
import tempfile
import unicodedata
from pathlib import Path

import numpy as np
import regex

__all__ = ["UNKNOWN", "COMMON", "INHERITED", "SCRIPT_NAMES", "script_id", "script_table"]

UNKNOWN, COMMON, INHERITED = 0, 1, 2
N_CODE_POINTS = 0x110000
_CACHE_FORMAT = 1  # bump when the id order or the file layout changes


def _regex_script_aliases():
    """``{NAME: regex value id}`` for the Script property, from regex's private tables."""
    try:
        from regex import _regex_core

        aliases = dict(_regex_core.PROPERTIES["SCRIPT"][1])
        if not aliases or not all(isinstance(k, str) and isinstance(v, int) for k, v in aliases.items()):
            raise TypeError("unexpected layout")
        return aliases
    except (ImportError, AttributeError, KeyError, IndexError, TypeError, ValueError) as e:
        raise RuntimeError(
            f"fastsw reads the Unicode script names from regex._regex_core.PROPERTIES['SCRIPT'], "
            f"which regex {getattr(regex, '__version__', '?')} does not provide; install a regex "
            f"release that has it (e.g. 'pip install \"regex>=2025.9.18,<2027\"')"
        ) from e


def _norm(name):
    return name.upper().replace("_", "").replace(" ", "").replace("-", "")


def _primary_key(names):
    """The long-form alias of one script: not a 4-letter ISO 15924 code if possible, else longest."""
    return min(names, key=lambda n: (len(n) == 4, -len(n), n))


_REGEX_ALIASES = _regex_script_aliases()  # NAME -> regex value id
_by_value = {}
for _name, _value in _REGEX_ALIASES.items():
    _by_value.setdefault(_value, []).append(_name)
_fixed = [_REGEX_ALIASES[k] for k in ("UNKNOWN", "COMMON", "INHERITED")]
_VALUES = _fixed + sorted(set(_by_value) - set(_fixed), key=lambda v: _primary_key(_by_value[v]))
_KEYS = [_primary_key(_by_value[v]) for v in _VALUES]  # id -> long name, e.g. 'OLDITALIC'
_ID_OF_VALUE = {v: i for i, v in enumerate(_VALUES)}
del _name, _value, _fixed
if len(_VALUES) > 256:
    raise RuntimeError(f"regex {regex.__version__} knows {len(_VALUES)} scripts; script ids must fit in uint8")


def script_id(name):
    """The script id of ``name``, any spelling ``regex`` accepts: ``'Han'``, ``'hani'``, ``'HAN'``.

    Raises ``ValueError`` for an unknown name.
    """
    value = _REGEX_ALIASES.get(_norm(name)) if isinstance(name, str) else None
    if value is None:
        raise ValueError(
            f"unknown Unicode script {name!r}; use a Script name or alias such as "
            f"'Latin', 'Han', 'Hiragana', 'Katakana', 'Thai' or 'Cyrl'"
        )
    return _ID_OF_VALUE[value]


def _compute_table():
    """Build the table with ``regex`` (about 3 ms per script)."""
    cps = np.concatenate([np.arange(0xD800), np.arange(0xE000, N_CODE_POINTS)]).astype("<u4")
    text = cps.tobytes().decode("utf-32-le")  # every code point but the surrogates
    compact = np.zeros(len(text), dtype=np.uint8)  # 0 = Unknown
    for sid in range(1, len(_KEYS)):
        for m in regex.finditer(r"\p{Script=%s}+" % _KEYS[sid], text):
            compact[m.start():m.end()] = sid
    table = np.zeros(N_CODE_POINTS, dtype=np.uint8)
    table[cps] = compact
    return table


def _cache_path():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "fastsw" / f"script-table-v{_CACHE_FORMAT}-regex-{regex.__version__}.bin"


def _read_cache(path):
    try:
        table = np.fromfile(path, dtype=np.uint8)
    except (OSError, ValueError):
        return None
    if table.shape != (N_CODE_POINTS,) or table.max() >= len(_KEYS):
        return None
    return table


def _write_cache(path, table):
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(table.tobytes())
        os.replace(tmp, path)
    except OSError:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


@functools.lru_cache(maxsize=None)
def script_table():
    """The script id of every code point: read-only C-contiguous ``uint8`` array of length 0x110000.

    Computed once per process (disk-cached across processes); see the module docstring.
    """
    path = _cache_path()
    table = _read_cache(path)
    if table is None:
        table = _compute_table()
        _write_cache(path, table)
    table = np.ascontiguousarray(table)
    table.flags.writeable = False
    return table


def _display_name(key, sample_cps):
    """Scripts.txt-style spelling of ``key`` ('OLDITALIC' -> 'Old_Italic').

    regex only knows the run-together upper-case names, so the word breaks are taken from the
    Unicode names of the script's characters ('OLD ITALIC LETTER A').  Falls back to 'Olditalic'
    for scripts newer than Python's ``unicodedata``; ids and ``script_id`` do not depend on this.
    """
    best = []
    for cp in sample_cps:
        taken, joined = [], ""
        for word in regex.split(r"[ -]", unicodedata.name(chr(cp), "")):
            if not word or not key.startswith(joined + word):
                break
            taken.append(word)
            joined += word
        if len(joined) > len("".join(best)):
            best = taken
        if joined == key:
            break
    rest = key[len("".join(best)):]
    if rest and best and len(rest) < 3:
        best[-1] += rest  # 'EGYPTIAN HIEROGLYPH' + 'S'
    elif rest:
        best.append(rest)  # 'CANADIAN' + 'ABORIGINAL', or no match at all: 'HAN'
    return "_".join(w.capitalize() for w in best)


@functools.lru_cache(maxsize=None)
def _script_names():
    table = script_table()
    order = np.argsort(table, kind="stable")  # code points grouped by script, ascending
    counts = np.bincount(table, minlength=len(_KEYS))
    starts = np.concatenate([[0], np.cumsum(counts)])
    names = []
    for sid, key in enumerate(_KEYS):
        sample = order[starts[sid]:starts[sid] + min(counts[sid], 64)].tolist()
        names.append(_display_name(key, [] if sid == UNKNOWN else sample))
    return tuple(names)


def __getattr__(name):
    # SCRIPT_NAMES (list, index = script id) needs the table, so it is built on first access.
    if name == "SCRIPT_NAMES":
        return list(_script_names())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# -- character classes of the default pretokenizer regexes ---------------------------------------
__all__ += ["PT_LETTER", "PT_UPPER", "PT_LOWER", "PT_MARK", "PT_NUMBER", "PT_SPACE", "PT_FOLD",
            "CONTRACTION_LETTERS", "contraction_folds", "pretoken_table"]
# Added for the native pre-tokenizer (fastsw._pretok).  Like the script table, every class is
# derived from the installed ``regex`` module with the very class expressions the patterns use, so
# the compiled scanner and ``regex.findall`` agree on the Unicode version.

PT_LETTER = 1  # \p{L}
PT_UPPER = 2  # [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]  (the "upper" class of the GPT-4o word branches)
PT_LOWER = 4  # [\p{Ll}\p{Lm}\p{Lo}\p{M}]  (the "lower" class)
PT_MARK = 8  # \p{M}
PT_NUMBER = 16  # \p{N}
PT_SPACE = 32  # \s as regex defines it for str patterns (White_Space; not \x1c-\x1f, unlike re)
PT_FOLD = 64  # matches one of the contraction letters s t r e v m l d under (?i)

_PT_CLASSES = (
    (PT_LETTER, r"\p{L}"),
    (PT_UPPER, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),
    (PT_LOWER, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),
    (PT_MARK, r"\p{M}"),
    (PT_NUMBER, r"\p{N}"),
    (PT_SPACE, r"\s"),
)
CONTRACTION_LETTERS = "strevmld"


@functools.lru_cache(maxsize=None)
def _all_code_points_text():
    """Every code point 0..0x10FFFF in order, lone surrogates included."""
    return np.arange(N_CODE_POINTS, dtype="<u4").tobytes().decode("utf-32-le", "surrogatepass")


@functools.lru_cache(maxsize=None)
def contraction_folds():
    """``(code points, letters)``: every code point that ``(?i)x`` matches for a contraction letter x.

    Two read-only arrays sorted by code point: ``uint32`` code points and the ``uint8`` ASCII
    lower-case letter each one matches (with regex's default simple case folding this includes
    U+017F LATIN SMALL LETTER LONG S for ``s``).  Raises ``RuntimeError`` if a code point matches
    two letters, which the native scanner cannot represent.
    """
    text = _all_code_points_text()
    letter_of = {}
    for letter in CONTRACTION_LETTERS:
        for m in regex.finditer(r"(?i:%s)+" % letter, text):
            for cp in range(m.start(), m.end()):
                if letter_of.setdefault(cp, letter) != letter:
                    raise RuntimeError(f"U+{cp:04X} matches both {letter_of[cp]!r} and {letter!r} under (?i)")
    cps = np.array(sorted(letter_of), dtype=np.uint32)
    letters = np.array([ord(letter_of[cp]) for cp in cps.tolist()], dtype=np.uint8)
    cps.flags.writeable = False
    letters.flags.writeable = False
    return cps, letters


@functools.lru_cache(maxsize=None)
def pretoken_table():
    """Class bits (``PT_*``) of every code point: read-only ``uint8`` array of length 0x110000.

    Built once per process from ``regex`` (about 30 ms).  The native scanner relies on a few facts
    about these classes that hold for Unicode as ``regex`` implements it; they are checked here and
    a ``RuntimeError`` names the one that fails (``fastsw.pretokenize`` then keeps using ``regex``).
    """
    text = _all_code_points_text()
    table = np.zeros(N_CODE_POINTS, dtype=np.uint8)
    for bit, cls in _PT_CLASSES:
        for m in regex.finditer(cls + "+", text):
            table[m.start():m.end()] |= bit
    cps, _ = contraction_folds()
    table[cps] |= PT_FOLD

    def has(bit):
        return (table & bit) != 0

    union = np.zeros(N_CODE_POINTS, dtype=bool)
    for cls in (r"\p{Lu}", r"\p{Ll}", r"\p{Lt}", r"\p{Lm}", r"\p{Lo}"):
        for m in regex.finditer(cls + "+", text):
            union[m.start():m.end()] = True
    checks = {
        r"\p{L} is the union of Lu Ll Lt Lm Lo": (union == has(PT_LETTER)).all(),
        r"upper and lower classes cover exactly \p{L} and \p{M}":
            ((has(PT_UPPER) | has(PT_LOWER)) == (has(PT_LETTER) | has(PT_MARK))).all(),
        r"\p{L}, \p{M}, \p{N} and \s are disjoint": all(
            not (has(a) & has(b)).any()
            for i, a in enumerate((PT_LETTER, PT_MARK, PT_NUMBER, PT_SPACE))
            for b in (PT_LETTER, PT_MARK, PT_NUMBER, PT_SPACE)[i + 1:]),
        r"\r \n and space are \s": all(table[ord(c)] == PT_SPACE for c in "\r\n "),
        r"' and / are neither \s, \p{L} nor \p{N}": all(table[ord(c)] == 0 for c in "'/"),
    }
    failed = [name for name, ok in checks.items() if not ok]
    if failed:
        raise RuntimeError(f"regex {regex.__version__}: the native pre-tokenizer assumes {failed[0]}")
    table.flags.writeable = False
    return table
