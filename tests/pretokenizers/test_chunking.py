"""Script chunking (SPEC 2.2): hand-worked cases, the scanner's compiled chunker == its Python twin, the script table."""

import os
import random

import numpy as np
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsw.pretokenizers import _unicode
from fastsw.pretokenizers import chunking
from fastsw.pretokenizers._unicode import SCRIPT_NAMES, script_id, script_table
from fastsw.pretokenizers.chunking import script_chunks, script_chunks_py

from conftest import shared_path

MAX_EXAMPLES = int(os.environ.get("HYPOTHESIS_MAX_EXAMPLES", "200"))


def _native():
    """The chunker fused into the compiled scanner (``_script_chunks`` in ``_pretok.pyx``)."""
    try:
        from fastsw.pretokenizers import _pretok
    except ImportError as e:
        pytest.fail(f"the compiled scanner fastsw.pretokenizers._pretok is not built ({e}); run 'pip install -e .'")
    return _pretok.script_chunks


def _shared_dir():
    return shared_path("corpus/fixtures").parents[1]


def pieces(text, impl):
    """Chunks as (substring, script name or None) for readable expectations."""
    return [(text[a:b], None if s == -1 else SCRIPT_NAMES[s]) for a, b, s in impl(text, script_table())]


IMPLS = pytest.mark.parametrize("impl", ["native", "python"])


def _impl(name):
    return _native() if name == "native" else script_chunks_py


# (text, expected pieces) worked by hand.
CASES = [
    # The SPEC example: the space before 'can' is Common, so it joins the Latin chunk after it.
    (
        "德国HYDAC电磁球阀 can be hard.",
        [("德国", "Han"), ("HYDAC", "Latin"), ("电磁球阀", "Han"), (" can be hard.", "Latin")],
    ),
    # Leading Commons join the first real-script chunk.
    ("  42, abc", [("  42, abc", "Latin")]),
    # Leading Inherited (combining acute) also joins the first real-script chunk.
    ("\u0301\u0301abc", [("\u0301\u0301abc", "Latin")]),
    # After Han, ' ' + U+0301 + ' ': the Inherited mark pulls the first space back into the Han chunk;
    # the cut is right after the mark, so the second space goes with 'ab'.
    ("中文 \u0301 ab", [("中文 \u0301", "Han"), (" ab", "Latin")]),
    # Without the mark the space is a plain Common and follows into the Latin chunk.
    ("中文 ab", [("中文", "Han"), (" ab", "Latin")]),
    # Trailing Commons stay with the last chunk.
    ("abc 中文。 ", [("abc", "Latin"), (" 中文。 ", "Han")]),
    # Commons between two runs of the same script stay inside one chunk.
    ("abc, 123 def!", [("abc, 123 def!", "Latin")]),
    # A combining mark after a Latin letter stays Latin.
    ("cafe\u0301 au lait", [("cafe\u0301 au lait", "Latin")]),
    # Hiragana and Han are different scripts.
    ("日本語を話す", [("日本語", "Han"), ("を", "Hiragana"), ("話", "Han"), ("す", "Hiragana")]),
    # 'ー' (U+30FC) is Common: inside Katakana it changes nothing ...
    ("ラーメン屋", [("ラーメン", "Katakana"), ("屋", "Han")]),
    # ... and between two scripts it joins the chunk that follows it.
    ("ラー中", [("ラ", "Katakana"), ("ー中", "Han")]),
    # Unassigned (Unknown) and private-use code points behave like Common.
    ("ab\u0378\ue000Ж", [("ab", "Latin"), ("\u0378\ue000Ж", "Cyrillic")]),
    # No real script at all: one chunk with script -1.
    ("123 !? ", [("123 !? ", None)]),
    ("\u0301", [("\u0301", None)]),
    ("\ud800\u0378", [("\ud800\u0378", None)]),  # lone surrogate and unassigned are Unknown
    # Empty text: no chunks.
    ("", []),
]


@IMPLS
@pytest.mark.parametrize("text, expected", CASES)
def test_hand_worked(impl, text, expected):
    assert pieces(text, _impl(impl)) == expected


def test_dispatcher_matches_spec_example():
    text = "德国HYDAC电磁球阀 can be hard."
    assert [text[a:b] for a, b, _ in script_chunks(text)] == ["德国", "HYDAC", "电磁球阀", " can be hard."]


def _check_cover(text, chunks):
    assert "".join(text[a:b] for a, b, _ in chunks) == text
    pos = 0
    for a, b, s in chunks:
        assert a == pos and b > a
        pos = b
        assert s == -1 or s >= 3
    assert pos == len(text)
    assert len(chunks) <= 1 or all(s >= 3 for _, _, s in chunks)
    # Neighbouring chunks have different scripts.
    assert all(x[2] != y[2] for x, y in zip(chunks, chunks[1:]))


MIXED = st.one_of(
    st.sampled_from(
        list("aZéж Д中文字あをすアラメกขฯ 0१٣ \t\n\u3000.,!、。ー\u0378\ue000\ud800")
        + ["😀", "👍", "\U0001f3fd", "\u200d", "\U000e0001", "\U0010ffff"]
    ),
    st.characters(min_codepoint=0x300, max_codepoint=0x36F),
)


@settings(max_examples=MAX_EXAMPLES, deadline=None, database=None)
@given(st.one_of(st.text(), st.text(MIXED)))
def test_native_equals_twin_on_arbitrary_text(text):
    native = _native()(text, script_table())
    assert native == script_chunks_py(text, script_table())
    _check_cover(text, native)


@settings(max_examples=MAX_EXAMPLES, deadline=None, database=None)
@given(
    st.lists(
        st.one_of(st.text("the quick brown fox, 1 2. ", min_size=1, max_size=40), st.text(MIXED, max_size=3)),
        min_size=4,
    )
    .map("".join)
    .map(lambda text: text + " of the town" * max(0, (64 - len(text) + 11) // 12))  # at least 64 code points
)
def test_native_equals_twin_on_long_text_with_ascii_runs(text):
    """From 64 code points on, the chunker passes over blocks of ASCII inside a Latin chunk without reading their
    scripts: every block edge and every storage kind gives the twin's chunks."""
    for shown in (text, text + "\u0100", text + "\U0001f600"):  # 1-, 2- and 4-byte kinds
        native = _native()(shown, script_table())
        assert native == script_chunks_py(shown, script_table())
        _check_cover(shown, native)


def test_native_equals_twin_on_fixtures():
    files = sorted((_shared_dir() / "corpus" / "fixtures").glob("*.txt"))
    assert files, "no fixture files"
    for path in files:
        text = path.read_text(encoding="utf-8")
        native = _native()(text, script_table())
        assert native == script_chunks_py(text, script_table()), path.name
        _check_cover(text, native)


def test_reference_pretokenizer_chunks_in_plain_python(monkeypatch):
    """``pretokenize_reference`` is the readable specification: its chunking is the Python twin."""
    import fastsw

    calls = []

    def spy(text, table):
        calls.append(text)
        return script_chunks_py(text, table)

    monkeypatch.setattr(chunking, "script_chunks_py", spy)
    assert fastsw.Pretokenizer().pretokenize_reference("ab中") == ["ab", "中"]
    assert calls == ["ab中"]
    han, latin = script_id("Han"), script_id("Latin")
    assert script_chunks("ab中") == [(0, 2, latin), (2, 3, han)]


@IMPLS
def test_rejects_short_table(impl):
    with pytest.raises(ValueError, match="0x110000"):
        _impl(impl)("abc", np.zeros(10, dtype=np.uint8))


# --- the script table ---------------------------------------------------------------------------


def test_table_shape_and_fixed_ids():
    table = script_table()
    assert table.dtype == np.uint8 and table.shape == (0x110000,)
    assert table.flags.c_contiguous and not table.flags.writeable
    assert script_table() is table
    assert SCRIPT_NAMES[:3] == ["Unknown", "Common", "Inherited"]
    assert len(SCRIPT_NAMES) == len(set(SCRIPT_NAMES)) and len(SCRIPT_NAMES) <= 256
    assert (table[0xD800:0xE000] == 0).all()  # surrogates are Unknown


def test_script_id_accepts_regex_aliases():
    assert script_id("Han") == script_id("hani") == script_id("HAN") > 2
    assert script_id("Old_Italic") == script_id("old italic") == script_id("Ital")
    assert SCRIPT_NAMES[script_id("latn")] == "Latin"
    assert SCRIPT_NAMES[script_id("zyyy")] == "Common"
    assert SCRIPT_NAMES[script_id("Ital")] == "Old_Italic"
    for i, name in enumerate(SCRIPT_NAMES):
        assert script_id(name) == i
    with pytest.raises(ValueError, match="Latin"):
        script_id("Klingon")


def test_table_agrees_with_regex():
    # Script, not Script_Extensions: U+30FC and U+3001 are Common, U+0640 (tatweel) is Common.
    # The table is the pinned Unicode version's: a code point unassigned there is Unknown whatever a newer
    # regex says (e.g. U+32911, assigned after Unicode 16); every assigned one has regex's script.
    table = script_table()
    assert SCRIPT_NAMES[table[0x30FC]] == "Common" and SCRIPT_NAMES[table[0x0640]] == "Common"
    unassigned = _unicode.category_table() == _unicode.CATEGORIES.index("Cn")
    rng = random.Random(0)
    cps = [rng.randrange(0x110000) for _ in range(3000)] + list(range(0x3000, 0x3100)) + [0x32911, 0x323B0]
    for cp in cps:
        if 0xD800 <= cp < 0xE000:
            continue
        name = _unicode._KEYS[table[cp]]
        if unassigned[cp]:
            assert name == "UNKNOWN", (hex(cp), name)
            continue
        assert regex.match(r"\p{Script=%s}" % name, chr(cp)), (hex(cp), name)


def test_disk_cache_helpers(tmp_path):
    path = tmp_path / "fastsw" / "table.bin"
    _unicode._write_cache(path, script_table())
    assert np.array_equal(_unicode._read_cache(path), script_table())
    path.write_bytes(b"\x00" * 10)  # truncated file: ignored
    assert _unicode._read_cache(path) is None
    assert _unicode._read_cache(tmp_path / "missing.bin") is None
    blocker = tmp_path / "file"
    blocker.write_text("x")
    _unicode._write_cache(blocker / "sub" / "table.bin", script_table())  # unwritable: silently skipped
    assert list(tmp_path.glob("fastsw/*.tmp")) == []
