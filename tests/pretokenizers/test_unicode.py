"""The pinned Unicode version: the pre-tokenizers' classes come from the shipped Unicode 16.0 table (tiktoken's
version), not from the installed ``regex``, on both paths. Every code point is encoded in context by fastsw's
tiktoken vocabularies on both paths and by tiktoken itself; the shipped table is regenerated from the Unicode
16.0 data; the compiled scanner's classes and the regex path's are the table's."""

import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
import regex
import tiktoken

import fastsw
from fastsw.pretokenizers import _unicode
from fastsw.io import tiktoken_vocab as tv
from fastsw.pretokenizers.pretokenize import Pretokenizer

REPO_ROOT = Path(fastsw.__file__).resolve().parents[1]
CHUNK = 50_000  # code points per encoded text


@pytest.fixture(scope="module", autouse=True)
def cache_dir(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("FASTSW_CACHE_DIR", str(tmp_path_factory.mktemp("fastsw-cache")))
    yield
    mp.undo()


def every_code_point():
    """Every code point but the surrogates (which tiktoken cannot encode)."""
    return [cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000]


def code_points_regex_classifies_otherwise():
    """The code points whose general category or \\s membership in the installed ``regex`` differs from the
    pinned table's: where a path that read regex's own classes would give other ids."""
    cps = np.arange(0x110000)
    cps = cps[(cps < 0xD800) | (cps >= 0xE000)]
    text = "".join(map(chr, cps.tolist()))
    category = _unicode.category_table()
    differ = np.zeros(0x110000, bool)
    classes = [(f"\\p{{{name}}}", category == i) for i, name in enumerate(_unicode.CATEGORIES)]
    for cls, pinned in classes + [(r"\s", _unicode.white_space_table())]:
        installed = np.zeros(0x110000, bool)
        for m in regex.finditer(f"(?:{cls})+", text):
            installed[cps[m.start() : m.end()]] = True
        differ |= installed != pinned
    differ[0xD800:0xE000] = False  # surrogates: not in the text, not encodable
    return np.flatnonzero(differ).tolist()


@pytest.mark.parametrize("name, pat", [("o200k_base", "o200k"), ("cl100k_base", "cl100k")])
def test_every_code_point_encodes_as_tiktoken_on_both_paths(name, pat):
    # each code point followed by a contraction and a space: a letter takes "'s" into its word, anything else
    # leaves it to the next pretoken, so any class that differs from tiktoken's Unicode version shows in the ids
    # (regex 2026's \p{L} has CJK Ext. J U+323B0, unassigned in Unicode 16: "\U000323B0's" was one id too few).
    # The compiled path encodes every code point; the pure-Python merges (a plain BPE loop per pretoken, minutes
    # for a million pretokens) and the regex pre-tokenizer every code point the installed regex classifies
    # otherwise, and a sample of the rest
    tok = fastsw.Tokenizer.load_tiktoken(tv.bpe_openai_rank_file(name), pattern=pat)
    enc = tiktoken.Encoding(
        name, pat_str=tv.PATTERNS[pat], mergeable_ranks={t: r for r, t in enumerate(tok.vocab)}, special_tokens={}
    )
    cps = every_code_point()
    for start in range(0, len(cps), CHUNK):
        text = "".join(chr(cp) + "'s " for cp in cps[start : start + CHUNK])
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text), f"fast path, code points from U+{cps[start]:04X}"
    rng = np.random.default_rng(0)
    otherwise = code_points_regex_classifies_otherwise()
    checked = sorted(set(otherwise) | set(rng.choice(cps, 20_000, replace=False).tolist()))
    for start in range(0, len(checked), CHUNK):
        text = "".join(chr(cp) + "'s " for cp in checked[start : start + CHUNK])
        assert tok.encode_ordinary(text, backend="python") == enc.encode_ordinary(text), (
            f"python path, code points from U+{checked[start]:04X}"
        )
        assert tok.pretokenizer.pretokenize_reference(text) == tok.pretokenizer.pretokenize(text), (
            f"the regex path's pretokens, code points from U+{checked[start]:04X}"
        )
    if pat == "o200k":
        assert tok.encode_ordinary("\U000323b0's", backend="python") == [172, 110, 236, 108, 6, 82]


def test_shipped_table_is_the_generators_output(tmp_path):
    out = tmp_path / "table.txt"
    r = subprocess.run(
        [sys.executable, str(REPO_ROOT / "tools" / "generate_unicode_tables.py"), str(out)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    shipped = _unicode._CATEGORY_FILE
    assert out.read_bytes() == shipped.read_bytes()


def test_table_is_unicode_16():
    import unicodedata2

    assert unicodedata2.unidata_version == _unicode.UNICODE_VERSION == "16.0.0"
    cat = _unicode.category_table()
    names = np.array(_unicode.CATEGORIES)
    rng = np.random.default_rng(0)
    for cp in np.concatenate([rng.integers(0, 0x110000, 20000), [0x41, 0x323B0, 0x1AE2, 0x0E01, 0x10FFFF]]).tolist():
        want = unicodedata2.category(chr(cp))
        assert names[cat[cp]] == want, hex(cp)
    assert names[cat[0x323B0]] == "Cn" and names[cat[0x1AE2]] == "Cn"  # assigned only after Unicode 16


def all_text():
    return np.arange(0x110000, dtype="<u4").tobytes().decode("utf-32-le", "surrogatepass")


@pytest.mark.parametrize(
    "cls",
    [
        r"\p{L}",
        r"\p{Lu}",
        r"\p{Ll}",
        r"\p{Lt}",
        r"\p{Lm}",
        r"\p{Lo}",
        r"\p{M}",
        r"\p{N}",
        r"\P{L}",
        r"[^\r\n\p{L}\p{N}]",
        r"\s",
        r"\S",
        r"\d",
        r"\p{Letter}",
        r"\p{gc=Nd}",
        r"\pL",
        r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]",
    ],
)
def test_pinned_classes_match_the_table(cls):
    cat = _unicode.category_table()
    names = np.array(_unicode.CATEGORIES)[cat]
    white = _unicode.white_space_table()
    major = np.array([n[0] for n in _unicode.CATEGORIES])[cat]
    expect = {
        r"\p{L}": major == "L",
        r"\p{Lu}": names == "Lu",
        r"\p{Ll}": names == "Ll",
        r"\p{Lt}": names == "Lt",
        r"\p{Lm}": names == "Lm",
        r"\p{Lo}": names == "Lo",
        r"\p{M}": major == "M",
        r"\p{N}": major == "N",
        r"\P{L}": major != "L",
        r"\s": white,
        r"\S": ~white,
        r"\d": names == "Nd",
        r"\p{Letter}": major == "L",
        r"\p{gc=Nd}": names == "Nd",
        r"\pL": major == "L",
    }
    expect[r"[^\r\n\p{L}\p{N}]"] = (major != "L") & (major != "N")
    expect[r"[^\r\n\p{L}\p{N}]"][[0x0D, 0x0A]] = False
    expect[r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"] = np.isin(names, ["Ll", "Lm", "Lo"]) | (major == "M")
    got = np.zeros(0x110000, dtype=bool)
    for m in _unicode.compile_pattern(cls + "+").finditer(all_text()):
        got[m.start() : m.end()] = True
    assert (got == expect[cls]).all(), np.flatnonzero(got != expect[cls])[:10]


def test_every_supported_property_matches_the_table():
    # the regex path keeps regex's own class and corrects it where regex's Unicode version differs: each kind of
    # name fastsw pins must match exactly the table's code points (regex reads "L&" as L, for one); the general
    # categories themselves are in test_pinned_classes_match_the_table, every alias must pin as its short name
    names = np.array(_unicode.CATEGORIES)[_unicode.category_table()]
    major = names.astype("<U1")
    text = all_text()
    long_names = dict(_unicode._LONG_NAMES)
    for short, negated in [(c, False) for c in "LMNPSZC"] + [
        ("LC", False),
        ("L&", False),
        ("L&", True),
        ("C", True),
        ("Cn", False),
        ("White_Space", True),
    ]:
        if short == "White_Space":
            expect = _unicode.white_space_table()
        elif short in ("LC", "L&"):
            expect = np.isin(names, ["Lu", "Ll", "Lt"])
        else:
            expect = major == short if len(short) == 1 else names == short
        expect = ~expect if negated else expect
        cls = ("\\P{%s}" if negated else "\\p{%s}") % short
        got = np.zeros(0x110000, dtype=bool)
        for m in _unicode.compile_pattern(cls + "+").finditer(text):
            got[m.start() : m.end()] = True
        assert (got == expect).all(), (cls, np.flatnonzero(got != expect)[:10])
    for short, long in long_names.items():
        for alias in (long, f"gc={short}", f"General_Category={long}", long.lower().replace("_", " ")):
            assert _unicode.pin_pattern(f"\\p{{{alias}}}") == _unicode.pin_pattern(f"\\p{{{short}}}"), alias


def test_the_differing_code_points_are_cached_on_disk(tmp_path, monkeypatch):
    # what regex's Unicode version changes is found once per installed regex (a pass over every code point per
    # category) and read back by later processes; a damaged file is recomputed and replaced, never trusted
    def reset():
        for f in (_unicode.regex_differs, _unicode._differs, _unicode._corrected_atom, _unicode.compile_pattern):
            f.cache_clear()

    monkeypatch.setenv("FASTSW_CACHE_DIR", str(tmp_path))
    reset()
    try:
        computed = _unicode.regex_differs()
        assert (0x323B0, 0x33479) in computed  # CJK Ext. J: letters of Unicode 17, unassigned in 16
        path = _the_cache_file(tmp_path, _unicode._differ_cache_path().name, _unicode.UNICODE_VERSION)
        good = path.read_bytes()
        flipped = bytearray(good)
        flipped[5] ^= 1

        def read_back():
            reset()
            assert _unicode.regex_differs() == computed
            assert _unicode.compile_pattern(r"\p{L}+").findall("a\U000323b0b") == ["a", "b"]

        damaged = [b"", good[:-1], good[:8] + good[-4:], bytes(flipped), b"\xff" * len(good)]
        _assert_cache_file_read_back(monkeypatch, path, "_compute_regex_differs", read_back, damaged)
    finally:
        monkeypatch.undo()
        reset()


def _the_cache_file(folder, name, tag):
    """The one file in ``folder``: ``name``, which names the installed regex's version and ``tag``."""
    assert [f.name for f in folder.iterdir()] == [name]
    assert regex.__version__ in name and tag in name
    return folder / name


def _assert_cache_file_read_back(monkeypatch, path, compute, read_back, damaged):
    """The good cache file at ``path`` is read back without calling ``_unicode.<compute>`` (``read_back`` clears
    the in-process caches and asserts the values); each of the ``damaged`` contents written over it is
    recomputed and the good file written again in its place, with no temporary file left beside it."""

    def not_again():
        raise AssertionError("recomputed although the cache file is there")

    with monkeypatch.context() as m:
        m.setattr(_unicode, compute, not_again)
        read_back()
    good = path.read_bytes()
    for bad in damaged:
        path.write_bytes(bad)
        read_back()
        assert path.read_bytes() == good
    assert list(path.parent.iterdir()) == [path]


def test_the_contraction_folds_are_cached_on_disk(tmp_path, monkeypatch):
    # found once per installed regex (a regex pass over every code point per letter) and read back by later
    # processes; a damaged file is recomputed and replaced, never trusted
    monkeypatch.setenv("FASTSW_CACHE_DIR", str(tmp_path))
    _unicode.contraction_folds.cache_clear()
    try:
        computed = _unicode._compute_contraction_folds()
        cps, letters = _unicode.contraction_folds()
        assert np.array_equal(cps, computed[0]) and np.array_equal(letters, computed[1])
        assert not cps.flags.writeable and not letters.flags.writeable
        path = _the_cache_file(tmp_path, _unicode._folds_cache_path().name, _unicode.CONTRACTION_LETTERS)
        good = path.read_bytes()
        flipped = bytearray(good)
        flipped[2] ^= 1
        unsorted = good[4:8] + good[:4] + good[8:-4]
        damaged = [b"", good[:-1], good[:4] + good[-4:], bytes(flipped), b"\xff" * len(good)]
        damaged.append(unsorted + zlib.crc32(unsorted).to_bytes(4, "little"))  # a right checksum, wrong order

        def read_back():
            _unicode.contraction_folds.cache_clear()
            again = _unicode.contraction_folds()
            assert np.array_equal(again[0], cps) and np.array_equal(again[1], letters)

        _assert_cache_file_read_back(monkeypatch, path, "_compute_contraction_folds", read_back, damaged)
    finally:
        monkeypatch.undo()
        _unicode.contraction_folds.cache_clear()


def test_compiled_scanner_reads_the_pinned_table():
    t = _unicode.pretoken_table()
    cat = np.array(_unicode.CATEGORIES)[_unicode.category_table()]
    major = np.array([n[0] for n in cat])
    assert (((t & _unicode.PT_LETTER) != 0) == (major == "L")).all()
    assert (((t & _unicode.PT_NUMBER) != 0) == (major == "N")).all()
    assert (((t & _unicode.PT_MARK) != 0) == (major == "M")).all()
    assert (((t & _unicode.PT_SPACE) != 0) == _unicode.white_space_table()).all()
    assert t[0x323B0] == 0 and t[0x1AE2] == 0


@pytest.mark.parametrize("mode", ["script", "simple"])
def test_both_paths_pretokenize_new_characters_alike(mode):
    p = Pretokenizer(mode=mode)
    text = "x\U000323b0's \U000323b0\U000323b0 1\u1ae2 a\u1ae2b"
    assert p.pretokenize(text) == p.pretokenize_reference(text)
    assert p.pretokenize_reference("\U000323b0's") == ["\U000323b0'", "s"]


def test_custom_patterns_are_pinned_and_unpinned_classes_warn():
    assert Pretokenizer(mode="simple", main_pattern=r"\p{L}+|\P{L}").pretokenize_reference("a\U000323b0b") == [
        "a",
        "\U000323b0",
        "b",
    ]
    with pytest.warns(_unicode.UnicodeVersionWarning, match=r"\\p\{Han\}"):
        _unicode.compile_pattern(r"\p{Han}+|.")
    pinned, unpinned = _unicode.pin_pattern(r"[\p{L}\]]\\p{L}\w")
    assert unpinned == [r"\w"] and pinned.endswith(r"\\p{L}\w")  # an escaped backslash stays a backslash
    assert regex.fullmatch(pinned, "]\\p{L}x") and regex.fullmatch(pinned, "\u0295\\p{L}x")
    assert not regex.fullmatch(pinned, "\U000323b0\\p{L}x")  # not a letter in Unicode 16


def test_model_files_record_the_unicode_version(tmp_path):
    import json

    tok = fastsw.train(["the cat sat on the mat", "a dog"] * 5, vocab_size=250)
    path = tmp_path / "m.json"
    tok.save(path)
    data = json.loads(path.read_text())
    assert data["unicode_version"] == _unicode.UNICODE_VERSION == "16.0.0"
    # a file from before the field is read with the pinned tables, the only ones this fastsw has
    del data["unicode_version"]
    path.write_text(json.dumps(data))
    assert fastsw.load(path).encode("the cat") == tok.encode("the cat")
    data["unicode_version"] = "17.0.0"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="Unicode '17.0.0' classes.*Unicode 16.0.0"):
        fastsw.load(path)
