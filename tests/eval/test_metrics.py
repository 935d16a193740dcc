"""fastsw.metrics: every formula on a two-language toy worked by hand, bad input, and a smoke check on real
parallel text (XQuAD, 12 languages) with the model trained on the bundled sample.

The toy (token counts as a tokenizer would give them; the arithmetic is in the comments):

    en: "the cat", "a dog"        7 + 5 = 12 bytes, 12 characters,  4 tokens, 2 sentences
    de: "die Kätze", "ein Hund"   10 + 8 = 18 bytes (ä is 2 bytes), 9 + 8 = 17 characters, 6 tokens, 2 sentences
"""

import doctest
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

import fastsw
from fastsw.eval import metrics
from fastsw.alphabet import default_alphabet

from conftest import read_jsonl_texts, shared_path

EN = ["the cat", "a dog"]
DE = ["die Kätze", "ein Hund"]
TOKENS = {"en": 4, "de": 6}


def test_metrics_is_exported():
    assert fastsw.metrics is metrics and "metrics" in fastsw.__all__


def test_docstring_examples():
    # Every public function's docstring carries a small example; they must stay true.
    result = doctest.testmod(metrics, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= len(metrics.__all__) and result.failed == 0


# ---- hand-worked values --------------------------------------------------------------------------------------------


def test_toy_counts_are_what_the_comments_say():
    assert sum(len(t.encode("utf-8")) for t in EN) == 12 and sum(map(len, EN)) == 12
    assert sum(len(t.encode("utf-8")) for t in DE) == 18 and sum(map(len, DE)) == 17


def test_compression_on_the_toy():
    assert metrics.bytes_per_token(12, TOKENS["en"]) == 3.0  # 12 / 4
    assert metrics.bytes_per_token(18, TOKENS["de"]) == 3.0  # 18 / 6
    assert metrics.chars_per_token(12, TOKENS["en"]) == 3.0  # 12 / 4
    assert metrics.chars_per_token(17, TOKENS["de"]) == 17 / 6  # 17 / 6 = 2.833...
    assert metrics.sentences_per_token(2, TOKENS["en"]) == 0.5  # 2 / 4
    assert metrics.sentences_per_token(2, TOKENS["de"]) == 1 / 3  # 2 / 6
    # weighted (rational) counts are exact: (25/2) / 5 = 5/2
    assert metrics.bytes_per_token(Fraction(25, 2), 5) == 2.5


def test_gini_on_the_toy():
    # en 4, de 6: sum_i sum_j |x_i - x_j| = |4-6| + |6-4| = 4; 2 n^2 mean = 2 * 2^2 * 5 = 40; G = 4/40
    assert metrics.gini(TOKENS) == 1 / 10
    assert metrics.gini([4, 6]) == metrics.gini([6, 4]) == 1 / 10
    # 1, 2, 3: pair sum 2 * (1 + 2 + 1) = 8; 2 * 3^2 * 2 = 36; G = 8/36 = 2/9
    assert metrics.gini([1, 2, 3]) == 2 / 9
    # one language takes everything: pair sum 2 * 5 = 10; 2 * 2^2 * 2.5 = 20; G = 1/2 = 1 - 1/n
    assert metrics.gini([0, 5]) == 0.5
    assert metrics.gini([7, 7, 7]) == 0.0


def test_renyi_efficiency_on_the_toy():
    # en's 4 tokens are ids 5, 5, 6, 7 in a vocabulary of 8: p = 1/2, 1/4, 1/4; log |V| = log 8 = 3 log 2
    counts = Counter([5, 5, 6, 7])
    # alpha = 2.5: H = log((1/2)^2.5 + 2 (1/4)^2.5) / (1 - 2.5) = log(2^-2.5 + 2^-4) / -1.5
    expected = math.log(2**-2.5 + 2**-4) / -1.5 / math.log(8)
    assert metrics.renyi_efficiency(counts, 8) == pytest.approx(expected, rel=1e-12)
    assert metrics.renyi_efficiency(counts, 8, alpha=2.5) == metrics.renyi_efficiency([2, 1, 1], 8)
    # alpha = 2: sum p^2 = 1/4 + 1/16 + 1/16 = 3/8; H = log(8/3)
    assert metrics.renyi_efficiency(counts, 8, alpha=2) == pytest.approx(math.log(8 / 3) / math.log(8), rel=1e-12)
    # alpha = 1 (Shannon): H = 1/2 log 2 + 2 * 1/4 log 4 = 3/2 log 2; / 3 log 2 = 1/2
    assert metrics.renyi_efficiency(counts, 8, alpha=1) == pytest.approx(0.5, rel=1e-12)
    # alpha -> 1 approaches the Shannon value from both sides
    assert metrics.renyi_efficiency(counts, 8, alpha=1 + 1e-7) == pytest.approx(0.5, rel=1e-5)
    assert metrics.renyi_efficiency(counts, 8, alpha=1 - 1e-7) == pytest.approx(0.5, rel=1e-5)
    # alpha = inf: -log max p = log 2; / 3 log 2 = 1/3
    assert metrics.renyi_efficiency(counts, 8, alpha=math.inf) == pytest.approx(1 / 3, rel=1e-12)
    # unused entries (zero counts) change nothing but |V|
    assert metrics.renyi_efficiency([2, 1, 1, 0, 0], 8) == metrics.renyi_efficiency([2, 1, 1], 8)


def test_type_token_ratio_on_the_toy():
    # de pretokens "die", " Kätze", "ein", " Hund": 4 types in 4 occurrences
    assert metrics.type_token_ratio({"die": 1, " Kätze": 1, "ein": 1, " Hund": 1}) == 1.0
    # "the cat the cat": "the", " cat", " the", " cat": 3 types, 4 occurrences
    assert metrics.type_token_ratio({"the": 1, " cat": 2, " the": 1}) == 3 / 4
    assert metrics.type_token_ratio([1, 2, 1, 0]) == 3 / 4  # a zero count is not a type


def test_single_token_share_on_the_toy():
    # pretokens of 1, 2, 1, 3 tokens occurring 3, 1, 1, 5 times: (3 + 1) / (3 + 1 + 1 + 5) = 4/10
    assert metrics.single_token_share([1, 2, 1, 3], [3, 1, 1, 5]) == 0.4
    assert metrics.single_token_share([1, 2, 1, 3]) == 0.5  # unweighted: 2 of 4


def test_vocab_duplication_on_the_toy():
    vocab = [b"a", b"b", b" a", b"A", b" A", b"\xff", b"Ab", b"ab"]
    # space: a/" a" and A/" A" are pairs, both entries count: 4 of 8
    # case (lower()): {a, A}, {" a", " A"}, {Ab, ab} are groups: 6 of 8; b"\xff" is no text and has no case
    assert metrics.vocab_duplication(vocab) == {"space": 4 / 8, "case": 6 / 8}
    assert metrics.vocab_duplication([v.decode("latin-1") for v in vocab[:5]]) == {"space": 4 / 5, "case": 4 / 5}
    # caps codes (SPEC section 9): one leading code is dropped, so ↑the and ⇑the duplicate the; a bare code is none
    coded = ["↑the", "the", "⇑the", "↑", "⇑"]
    assert metrics.vocab_duplication(coded) == {"space": 0.0, "case": 0.0}
    assert metrics.vocab_duplication(coded, case_codes=("↑", "⇑")) == {"space": 0.0, "case": 3 / 5}
    # Unicode: only lower() equality counts; "ß" and "SS" differ by more than case, "Ä" and "ä" do not
    assert metrics.vocab_duplication(["ß", "SS", "Ä", "ä"]) == {"space": 0.0, "case": 2 / 4}


def test_embedding_memory_seed_001():
    # seed 001: 50,000 new entries x 4096 wide = 204,800,000 parameters; BF16 = 2 bytes: 409,600,000 bytes
    # (409.6 MB) per matrix; separate input and output matrices: 819.2 MB
    assert metrics.embedding_memory(50_000, 4096, 2) == 819_200_000
    assert metrics.embedding_memory(50_000, 4096, "bf16") == 819_200_000
    assert metrics.embedding_memory(50_000, 4096, "BF16", tied=True) == 409_600_000
    assert metrics.embedding_memory(50_000, 4096) == 2 * 50_000 * 4096 * 2
    assert metrics.embedding_memory(3, 2, "fp32") == 3 * 2 * 4 * 2


def test_bits_per_byte_on_the_toy():
    # en: a model's summed NLL of 36 bits over 12 bytes -> 3 bits per byte; the same NLL in nats is 36 ln 2
    assert metrics.bits_per_byte(36, 12, unit="bits") == 3.0
    assert metrics.bits_per_byte(36 * math.log(2), 12, unit="nats") == pytest.approx(3.0, rel=1e-12)
    assert metrics.bits_per_byte(36 * math.log(2), 12) == metrics.bits_per_byte(36 * math.log(2), 12, unit="nats")
    assert metrics.bits_per_byte(0, 12, unit="bits") == 0.0


def test_numpy_counts_give_the_same_values():
    # counts usually come from np.bincount(ids) or encode_batch_to_numpy: numpy ints and floats are numbers too
    ids = np.array([5, 5, 6, 7], dtype=np.int32)
    assert metrics.renyi_efficiency(np.bincount(ids, minlength=8), np.int64(8)) == metrics.renyi_efficiency(
        [2, 1, 1], 8
    )
    assert metrics.gini(np.array([4, 6], dtype=np.int64)) == metrics.gini(np.array([4.0, 6.0])) == 1 / 10
    assert metrics.single_token_share(np.array([1, 2, 1, 3]), np.array([3, 1, 1, 5])) == 0.4
    assert metrics.embedding_memory(np.int64(50_000), 4096, "bf16") == 819_200_000


# ---- the Tokenizer helpers, on a tokenizer built by hand -----------------------------------------------------------


@pytest.fixture(scope="module")
def one_merge():
    """The byte alphabet (243 entries in the paper profile) plus one regular merge, " " + "b" -> " b"."""
    alphabet = default_alphabet("paper")
    space, b = alphabet.initial_ids(" b")
    return fastsw.Tokenizer(alphabet=alphabet, merges=[(space, b, 1, False)], pretokenizer=fastsw.Pretokenizer())


def test_text_metrics_by_hand(one_merge):
    # "a b a b": a | " b" | " " a | " b" = 5 tokens (ids a, " b", " ", a, " b"); "ä" is 1 character, 2 bytes, 2
    # tokens. documents 2; bytes 7 + 2 = 9; characters 7 + 1 = 8; tokens 5 + 2 = 7
    m = metrics.text_metrics(one_merge, ["a b a b", "ä"])
    assert {k: m[k] for k in ("documents", "bytes", "characters", "tokens")} == {
        "documents": 2,
        "bytes": 9,
        "characters": 8,
        "tokens": 7,
    }
    assert m["bytes_per_token"] == 9 / 7 and m["chars_per_token"] == 8 / 7 and m["documents_per_token"] == 2 / 7
    # token counts: a 2, " b" 2, " " 1, and the two bytes of ä 1 each: |V| = 244
    assert m["renyi_efficiency"] == metrics.renyi_efficiency([2, 2, 1, 1, 1], 244)


def test_pretoken_helpers_by_hand(one_merge):
    # pretokens of "a b a b" and "a b": a, " b", " a", " b" | a, " b", so a 2, " b" 3, " a" 1 times:
    # 3 types in 6 occurrences
    texts = ["a b a b", "a b"]
    assert metrics.pretoken_type_token_ratio(one_merge, texts) == 3 / 6
    assert metrics.pretoken_type_token_ratio(one_merge.pretokenizer, texts) == 3 / 6
    # one token each: a and " b" (the merge); " a" is " " + a. (2 + 3) of 6 occurrences
    assert metrics.pretoken_single_token_share(one_merge, texts) == 5 / 6


def test_candidate_type_token_ratio_by_hand(one_merge):
    # letter runs: [a, " b", " a", " b"] and [a, " b"]. " a" is two tokens, so the first run is cut there:
    # candidates (a, " b") (length 2) and (" b") (length 1, no candidate); the second run is (a, " b").
    # One type, (a, " b"), in 2 occurrences: 1/2
    assert metrics.candidate_type_token_ratio(one_merge, ["a b a b", "a b"]) == 1 / 2
    with pytest.raises(ValueError, match="no supermerge candidates"):
        metrics.candidate_type_token_ratio(one_merge, ["a a a"])  # " a" is never one token


# ---- bad input: one clear error each -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: metrics.bytes_per_token(12, 0), ValueError, r"n_tokens=0 must be > 0"),
        (lambda: metrics.bytes_per_token(-1, 4), ValueError, r"n_bytes=-1 must be >= 0"),
        (lambda: metrics.chars_per_token(math.nan, 4), ValueError, r"n_chars=nan is not finite"),
        (lambda: metrics.sentences_per_token("2", 4), TypeError, r"n_sentences must be a number"),
        (lambda: metrics.sentences_per_token(True, 4), TypeError, r"n_sentences must be a number"),
        (lambda: metrics.gini([]), ValueError, r"values is empty"),
        (lambda: metrics.gini({"en": 4, "de": -6}), ValueError, r"values\[1\]=-6 must be >= 0"),
        (lambda: metrics.gini([0, 0]), ValueError, r"positive mean"),
        (lambda: metrics.gini("46"), TypeError, r"mapping"),
        (lambda: metrics.renyi_efficiency([2, 1, 1], 8, alpha=0), ValueError, r"alpha=0 must be a number > 0"),
        (lambda: metrics.renyi_efficiency([2, 1, 1], 8, alpha=-2.5), ValueError, r"alpha=-2.5"),
        (lambda: metrics.renyi_efficiency([2, 1, 1], 2), ValueError, r"3 used tokens, more than vocab_size=2"),
        (lambda: metrics.renyi_efficiency([2], 1), ValueError, r"vocab_size=1 must be >= 2"),
        (lambda: metrics.renyi_efficiency([0, 0], 8), ValueError, r"all zero"),
        (lambda: metrics.renyi_efficiency([], 8), ValueError, r"token_counts is empty"),
        (lambda: metrics.type_token_ratio({}), ValueError, r"counts is empty"),
        (lambda: metrics.type_token_ratio([1, -1]), ValueError, r"counts\[1\]=-1"),
        (lambda: metrics.single_token_share([1, 0]), ValueError, r"token_lengths\[1\]=0 must be an int >= 1"),
        (lambda: metrics.single_token_share([1, 2], [1]), ValueError, r"one count per pretoken"),
        (lambda: metrics.vocab_duplication([]), ValueError, r"vocab is empty"),
        (lambda: metrics.vocab_duplication([b"a", 3]), TypeError, r"vocab\[1\] is a int"),
        (lambda: metrics.vocab_duplication([b"a"], case_codes="↑"), TypeError, r"not one string"),
        (lambda: metrics.embedding_memory(50_000, 4096, "bf17"), ValueError, r"'bf17' is not a known dtype"),
        (lambda: metrics.embedding_memory(0, 4096), ValueError, r"rows=0 must be >= 1"),
        (lambda: metrics.embedding_memory(50_000, 4096.0), TypeError, r"width must be an int"),
        (lambda: metrics.bits_per_byte(10, 5, unit="nat"), ValueError, r"unit='nat' is not one of nats, bits"),
        (lambda: metrics.bits_per_byte(10, 0), ValueError, r"n_bytes=0 must be > 0"),
        (lambda: metrics.bits_per_byte(-1, 5), ValueError, r"nll=-1 must be >= 0"),
        (lambda: metrics.text_metrics(None, "one string"), TypeError, r"not one string"),
        (lambda: metrics.pretoken_type_token_ratio(fastsw.Pretokenizer(), []), ValueError, r"texts is empty"),
        (lambda: metrics.pretoken_type_token_ratio(fastsw.Pretokenizer(), [""]), ValueError, r"no pretokens"),
    ],
)
def test_bad_input_is_one_clear_error(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ---- real parallel text --------------------------------------------------------------------------------------------

XQUAD_LANGS = ("ar", "de", "el", "en", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh")


def test_real_parallel_text_smoke(multilingual_boundless):
    """Every metric on XQuAD's 12-language test split (120 parallel paragraphs each) with the BoundlessBPE model
    trained on the bundled sample."""
    tok = multilingual_boundless
    texts = {lang: read_jsonl_texts(shared_path(f"corpus/parallel/xquad.test.{lang}.jsonl")) for lang in XQUAD_LANGS}
    per_lang = {lang: metrics.text_metrics(tok, docs) for lang, docs in texts.items()}
    for lang, m in per_lang.items():
        docs = texts[lang]
        assert m["documents"] == 120
        assert m["tokens"] == sum(len(tok.encode_ordinary(d)) for d in docs)
        assert m["bytes"] == sum(len(d.encode("utf-8")) for d in docs)
        assert m["bytes_per_token"] >= 1.0  # no token is shorter than a byte
        assert m["chars_per_token"] <= m["bytes_per_token"]
        assert 0.0 < m["renyi_efficiency"] < 1.0
    # parallel text: the same sentences, so Gini of token counts; it is below its bound 1 - 1/n
    g = metrics.gini({lang: m["tokens"] for lang, m in per_lang.items()})
    assert 0.0 < g < 1 - 1 / len(XQUAD_LANGS)
    # type-token ratios and the single-token share against the definitions, counted here document by document:
    # candidates are the maximal runs (length >= 2) of pretokens that regular merges make one eligible token
    en = texts["en"]
    pretokens, candidates, single = Counter(), Counter(), 0
    for doc in en:
        run = []
        for piece in tok.pretokenizer.pretokenize(doc) + [None]:
            ids = tok.encode_pretoken(piece) if piece is not None else []
            if piece is not None:
                pretokens[piece] += 1
                single += len(ids) == 1
            if len(ids) == 1 and tok.is_eligible(ids[0]):
                run.append(ids[0])
                continue
            if len(run) >= 2:
                candidates[tuple(run)] += 1
            run = []
    assert metrics.pretoken_type_token_ratio(tok, en) == len(pretokens) / sum(pretokens.values())
    assert metrics.candidate_type_token_ratio(tok, en) == len(candidates) / sum(candidates.values())
    assert metrics.pretoken_single_token_share(tok, en) == single / sum(pretokens.values())
    assert 0.0 < len(candidates) / sum(candidates.values()) < 1.0 and 0.0 < single / sum(pretokens.values()) < 1.0
    dup = metrics.vocab_duplication(tok)
    assert dup == metrics.vocab_duplication(tok.vocab)
    assert 0.0 < dup["space"] < 1.0 and 0.0 < dup["case"] < 1.0
