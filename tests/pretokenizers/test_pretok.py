"""The compiled pre-tokenizer (fastsw.pretokenizers._pretok) against the regex reference path.

`Pretokenizer.pretokenize_reference` runs `regex` per script chunk and is the specification;
`Pretokenizer.pretokenize` must return exactly the same list of str whenever it uses the compiled
scanner.  Checked on the whole shared corpus, on adversarial Unicode (Hypothesis) and on worked
examples.  Nothing here is skipped: a missing extension is a failure.
"""

import gzip
import json
import os

import numpy as np
import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import HYPOTHESIS_EXAMPLES, read_jsonl_texts, shared_path

from fastsw.pretokenizers._unicode import (
    compile_pattern,
    PT_FOLD,
    PT_LETTER,
    PT_LOWER,
    PT_MARK,
    PT_NUMBER,
    PT_SPACE,
    PT_UPPER,
    contraction_folds,
    pretoken_table,
)
from fastsw.pretokenizers.pretokenize import Pretokenizer, HAVE_NATIVE_PRETOKENIZER

NON_DEFAULT_SCRIPTS = ("Latin", "Cyrillic", "Han", "Devanagari")
PRETOKENIZERS = {
    "script": Pretokenizer(),
    "simple": Pretokenizer(mode="simple"),
    "latin-specific": Pretokenizer(script_specific_scripts=NON_DEFAULT_SCRIPTS),
}


def test_native_is_built_and_used():
    if os.environ.get("FASTSW_PUREPYTHON") == "1":
        assert not HAVE_NATIVE_PRETOKENIZER
        assert not Pretokenizer().uses_native
        return
    assert HAVE_NATIVE_PRETOKENIZER, "fastsw.pretokenizers._pretok is not built; run pip install -e ."
    for p in PRETOKENIZERS.values():
        assert p.uses_native
    # custom patterns fall back to regex
    custom = Pretokenizer(main_pattern=r"\w+|\W")
    assert not custom.uses_native
    assert custom.pretokenize("ab, c") == ["ab", ",", " ", "c"]
    with pytest.raises(ValueError, match="compiled scanner"):
        custom.pretoken_ends("x")


def check(text, pretokenizers=None):
    for p in pretokenizers or PRETOKENIZERS.values():
        expected = p.pretokenize_reference(text)
        got = p.pretokenize(text)
        assert got == expected, (p, text)
        if p.uses_native:
            ends = p.pretoken_ends(text)
            assert ends.dtype == np.int64
            assert ends.tolist() == np.cumsum([len(x) for x in expected]).tolist()


# -- the tables ----------------------------------------------------------------------------------


def test_table_classes_agree_with_the_pinned_regex_path_on_sampled_code_points():
    table = pretoken_table()
    rng = np.random.default_rng(0)
    sample = set(rng.integers(0, 0x110000, 20000).tolist()) | set(range(0x3000)) | {0xD800, 0xDFFF}
    classes = [
        (PT_LETTER, r"\p{L}"),
        (PT_UPPER, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),
        (PT_LOWER, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),
        (PT_MARK, r"\p{M}"),
        (PT_NUMBER, r"\p{N}"),
        (PT_SPACE, r"\s"),
    ]
    compiled = [(bit, compile_pattern(cls)) for bit, cls in classes]  # the regex path, pinned Unicode
    for cp in sorted(sample):
        ch = chr(cp)
        for bit, pattern in compiled:
            assert bool(table[cp] & bit) == (pattern.fullmatch(ch) is not None), (hex(cp), pattern.pattern)


def test_regex_whitespace_differs_from_python():
    # regex's \s (str patterns) is White_Space: not the information separators \x1c-\x1f that
    # str.isspace() and re's \s accept; the table follows regex.
    table = pretoken_table()
    assert all(not table[cp] & PT_SPACE for cp in range(0x1C, 0x20))
    assert all(table[ord(c)] & PT_SPACE for c in "\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u3000")
    assert not table[0x200B] & PT_SPACE  # ZERO WIDTH SPACE is Cf, not White_Space
    check("a\x1c\x1db \x1f\u200bc")


def test_contraction_folds_match_regex():
    cps, letters = contraction_folds()
    got = {int(c): chr(l) for c, l in zip(cps, letters)}
    # regex's default (?i) uses simple case folding: LONG S folds to s; KELVIN SIGN folds to k (not
    # a contraction letter); no full folding (no ss for sharp s).
    assert got[0x17F] == "s"
    assert 0x212A not in got and 0xDF not in got
    assert {k: v for k, v in got.items() if k < 128} == {ord(c): c for c in "strevmld"} | {
        ord(c.upper()): c for c in "strevmld"
    }
    table = pretoken_table()
    assert all(table[c] & PT_FOLD for c in got)
    # every single code point after ' that regex accepts as a contraction is a one-letter fold
    contraction = regex.compile(r"(?i:'s|'t|'re|'ve|'m|'ll|'d)")
    one = {c for c, l in got.items() if l in "stmd"}
    for cp in list(got) + [0x212A, 0xDF, 0xFB06, 0x1E9E, 0x130, 0x131]:
        assert (contraction.fullmatch("'" + chr(cp)) is not None) == (cp in one), hex(cp)
    # two-letter contractions: each position folds independently
    for a in [c for c, l in got.items() if l in "rvl"]:
        for b in [c for c, l in got.items() if l in "el"]:
            expected = (got[a], got[b]) in {("r", "e"), ("v", "e"), ("l", "l")}
            assert (contraction.fullmatch("'" + chr(a) + chr(b)) is not None) == expected


# -- worked examples -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        # ordinary English: the leading space joins the word, contractions attach, \s+(?!\S) leaves
        # the last space of a run to the next word
        ("Hello world, I'M here!  x", ["Hello", " world", ",", " I'M", " here", "!", " ", " x"]),
        # contractions in any case, and LONG S (U+017F) folds to s under regex's (?i)
        ("it'S we'Ll they'RE ſo'ſ", ["it'S", " we'Ll", " they'RE", " ſo'ſ"]),
        # 'K is not a contraction, nor is KELVIN SIGN (it folds to k): the apostrophe is the prefix
        # of the all-caps branch 2
        ("ok'K ok'\u212a", ["ok", "'K", " ok", "'\u212a"]),
        # upper-case run then lower: [U]*[W]+ takes "HTTPS", "erver" is W, so "HTTPServer" is one
        # word; an all-caps word is branch 2, which takes the contraction too
        ("HTTPServer NASA's", ["HTTPServer", " NASA's"]),
        # a combining mark alone before Lu: branch 1 without the prefix matches only the mark
        # (a mark is a prefix AND a lower-class character), then "A" by branch 2
        ("\u0301A.", ["\u0301", "A", "."]),
        # space + mark: the prefix takes the space, the mark is the W+
        (" \u0301", [" \u0301"]),
        # digits: at most three per pretoken, any script's Nd/Nl/No
        ("12345 ٣٤٥٦ Ⅻ½", ["123", "45", " ", "٣٤٥", "٦", " ", "Ⅻ½"]),
        # punctuation run with trailing newlines and slashes
        ("a!!\n/b ?/\r\n", ["a", "!!\n/", "b", " ?/\r\n"]),
        # \s*[\r\n]+ ends after the last newline of the whitespace run
        ("a \n \n  b", ["a", " \n \n", " ", " b"]),
        # whitespace at the very end of the chunk: \s+(?!\S) takes all of it
        ("a   ", ["a", "   "]),
        # any \s but \r \n is also a word prefix; of a run of two, \s+(?!\S) takes the first and
        # the second prefixes the word
        ("\tx\x0b\x0cy\xa0z\u3000w", ["\tx", "\x0b", "\x0cy", "\xa0z", "\u3000w"]),
    ],
)
def test_examples(text, expected):
    assert Pretokenizer(mode="simple").pretokenize_reference(text) == expected
    check(text)


def test_script_chunks_and_specific_pattern():
    # SPEC example: Han letters one per pretoken, the Latin chunk by GPT-4o
    p = Pretokenizer()
    text = "德国HYDAC电磁球阀 can be hard."
    assert p.pretokenize(text) == ["德", "国", "HYDAC", "电", "磁", "球", "阀", " can", " be", " hard", "."]
    check(text)
    # script-specific pattern: letter + its marks; Thai vowel marks stay with their consonant
    check("สวัสดีครับ 123 ภาษาไทย")
    check("カタカナ ひらがな ー 漢字、テスト。")


def test_lone_surrogates_like_reference():
    for text in ["a\ud800b", "\udfff", " \ud83d\ude00x", "I'm\udc80s", "\ud800\ud800 \ud800", "12\ud8003"]:
        check(text)


def test_pathological():
    check("")
    check("a" * 100000)
    check(" " * 5000 + "x")
    check("\u0301" * 3000)
    check("A" * 3000 + "." + "A" * 2000 + "b")
    check("'" * 1000 + "s")
    check("\r\n" * 1000 + " " * 10)


# -- real text -----------------------------------------------------------------------------------


def _corpus_texts():
    corpus = shared_path("corpus")
    texts = []
    for lang in sorted(p.name for p in corpus.iterdir() if (p / "heldout.jsonl").exists()):
        texts += read_jsonl_texts(corpus / lang / "heldout.jsonl")
        size = 0
        with gzip.open(corpus / lang / "train.jsonl.gz", "rt", encoding="utf-8") as f:
            for line in f:
                text = json.loads(line)["text"]
                texts.append(text)
                size += len(text.encode("utf-8"))
                if size >= 2_000_000:
                    break
    parallel = sorted((corpus / "parallel").glob("*.jsonl"))
    assert parallel, "no parallel/*.jsonl in the shared corpus"
    for path in parallel:
        texts += read_jsonl_texts(path)
    assert len(texts) > 1000
    return texts


def test_equal_to_reference_on_shared_corpus():
    texts = _corpus_texts()
    for name, p in PRETOKENIZERS.items():
        assert p.uses_native or os.environ.get("FASTSW_PUREPYTHON") == "1"
        bad = [t for t in texts if p.pretokenize(t) != p.pretokenize_reference(t)]
        assert not bad, f"{name}: {len(bad)} documents differ, e.g. {bad[0][:200]!r}"


# -- adversarial Unicode -------------------------------------------------------------------------

_SPECIAL = list("'sStTrReEvVmMlLdD/ \r\n\t\x0b\x0c\x85\u2028\u2029\u00a0\u3000\u200d.,!?-") + [
    "\u017f",
    "\u212a",
    "\u0130",
    "\u0131",
    "\u00df",  # long s, Kelvin, dotted/dotless i, sharp s
    "\u0301",
    "\u0308",
    "\u093f",
    "\u0e31",
    "\u20dd",  # combining marks (Mn, Mc, Me)
    "A",
    "Z",
    "a",
    "z",
    "\u01c5",
    "\u1f88",  # Lu, Ll, Lt
    "\u02b0",
    "\u3005",
    "\u30fc",
    "\uff70",
    "\u0e46",  # Lm
    "\u05d0",
    "\u0627",
    "\u4e00",
    "\u3042",
    "\u30a2",
    "\u0e01",
    "\u1000",
    "\uac00",  # Lo, various scripts
    "0",
    "9",
    "\u0663",
    "\u0967",
    "\u16ee",
    "\u2167",
    "\u00bd",
    "\u2460",
    "\U0001d7ce",  # Nd, Nl, No
    "\U0001f600",
    "\U0001f468",
    "\U0001f3fb",
    "\ufe0f",  # emoji, skin tone, variation selector
    "\ue000",
    "\U000f0000",
    "\u0378",
    "\U000e0001",
    "\U0010ffff",  # private use, unassigned, tags
    "\x1c",
    "\x1f",
    "\u200b",
    "\u2060",  # not \s for regex
    "\ud800",
    "\udc00",  # lone surrogates
    "'S",
    "'LL",
    "'Re",
    "'ve",
    "'M",
    "'D",
    "'t",
    "'\u017f",
    "'l\u212a",
    "\r\n",
    " \r\n ",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",
]
_pieces = st.one_of(
    st.sampled_from(_SPECIAL),
    st.characters(codec=None),
    st.characters(categories=["Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No"]),
)
adversarial = st.lists(_pieces, max_size=40).map("".join)


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(adversarial)
def test_adversarial_unicode(text):
    check(text)


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None)
@given(st.text())
def test_arbitrary_text(text):
    check(text)


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None)
@given(
    st.lists(
        st.sampled_from(["\u0301", " ", "A", "a", "\u02b0", "\u05d0", "'", "s", "L", "\n", "1", "."]), max_size=30
    ).map("".join)
)
def test_word_branch_backtracking(text):
    # a small alphabet so the word branches' backtracking cases occur often
    check(text)
