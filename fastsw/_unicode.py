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
