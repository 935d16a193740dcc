"""The fast encoder's driver: the scanner's one-call input per slice of documents
(``fastsw.pretokenizers._pretok.scan_utf8``: pretoken byte ends and UTF-8, GIL released) against its plain-Python twin
``fast_encode.pieces_reference`` on every corpus language and Hypothesis text; the batch lists
(``ids_to_lists``) against ``ndarray.tolist``; the 8-byte shortcut keys against the byte loop; batches equal to
one-by-one encoding; two threads on one tokenizer."""

import gzip
import itertools
import json
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fastsw
from fastsw.encoding import encode_kernels as K
from fastsw.pretokenizers import _pretok
from fastsw.encoding import encode_fast as fast_encode
from fastsw.io import tiktoken_vocab as tv
from fastsw.pretokenizers.pretokenize import CL100K_PATTERN, Pretokenizer

from conftest import HYPOTHESIS_EXAMPLES, read_jsonl_texts, shared_path

LANGS = ["en", "de", "fr", "ru", "fi", "ar", "ko", "zh", "ja", "th", "hi", "my"]
SETTINGS = settings(
    max_examples=HYPOTHESIS_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
PRETOKENIZERS = {
    "simple": lambda: Pretokenizer(mode="simple"),
    "script": lambda: Pretokenizer(mode="script"),
    "cl100k": lambda: Pretokenizer(mode="simple", main_pattern=CL100K_PATTERN),
}
INTERESTING = (
    "aZ éß Ωω жЯ עב عربى हिंदी ไทย ကမ္ဘာ 中文汉字 ひらがな カタカナー 한국어 "
    "\u0300\u0301\u200d\u00a0\u3000\t\r\n\x0b\x85\u2028 0123456789٠١२३ ½ '’\"-.,;:!?()/\\@#_ "
    "😀👍🏽👨‍👩‍👧 \ue000\U000f0000\u0378 's 'S 'll the The of"
)
texts_strategy = st.lists(st.one_of(st.text(), st.text(alphabet=INTERESTING)), max_size=6)


def corpus_docs(lang, per_file=8, max_chars=4000):
    """A few held-out and training documents of ``lang`` (cut to ``max_chars``)."""
    held = read_jsonl_texts(shared_path(f"corpus/{lang}/heldout.jsonl"), per_file)
    with gzip.open(shared_path(f"corpus/{lang}/train.jsonl.gz"), "rt", encoding="utf-8") as f:
        train = [json.loads(line)["text"] for line in itertools.islice(f, per_file)]
    return [t[:max_chars] for t in held + train]


def scanned(pretok, texts):
    got = _pretok.scan_utf8(pretok._any_scanner(), list(texts))
    assert got is not None
    data, ends, doc_pieces = got
    assert data.dtype == np.uint8 and not data.flags.writeable
    assert ends.dtype == np.int64 and ends.flags.c_contiguous and doc_pieces.dtype == np.int64
    return data, ends, doc_pieces


def assert_twins(pretok, texts):
    data, ends, doc_pieces = scanned(pretok, texts)
    want_data, want_ends, want_pieces = fast_encode.pieces_reference(pretok, texts)
    assert bytes(data) == bytes(want_data)
    assert ends.tolist() == want_ends.tolist()
    assert doc_pieces.tolist() == want_pieces.tolist()


# ---------------------------------------------------------------- scan_utf8 == its plain-Python twin


@pytest.mark.parametrize("mode", sorted(PRETOKENIZERS))
@pytest.mark.parametrize("lang", LANGS)
def test_scan_utf8_equals_its_twin_on_the_corpus(mode, lang):
    pretok = PRETOKENIZERS[mode]()
    docs = corpus_docs(lang)
    assert_twins(pretok, docs)  # the documents as one slice
    assert_twins(pretok, docs[:1])


@pytest.mark.parametrize("mode", sorted(PRETOKENIZERS))
@SETTINGS
@given(texts=texts_strategy)
def test_scan_utf8_equals_its_twin_on_arbitrary_unicode(mode, texts):
    texts = [t for t in texts if not any(0xD800 <= ord(c) < 0xE000 for c in t)]
    assert_twins(PRETOKENIZERS[mode](), texts)


@SETTINGS
@given(
    base=st.text(alphabet="ab cd,\n'1", min_size=8, max_size=300),
    wide=st.lists(st.tuples(st.integers(0, 300), st.sampled_from("éÿ’—Ωж中😀")), max_size=30),
)
def test_scan_utf8_on_mostly_ascii_text(base, wide):
    """Few non-ASCII code points (the sparse conversion: ASCII eight bytes or four code points at a time) in all
    three str kinds, at every offset from a chunk boundary; and a lone surrogate there."""
    text = list(base)
    for at, c in wide:
        text.insert(min(at, len(text)), c)
    text = "".join(text)
    pretok = Pretokenizer(mode="simple")
    assert_twins(pretok, [text, base, text[1:], text[3:]])
    bad = text[: len(text) // 2] + "\udc80" + text[len(text) // 2 :]
    assert _pretok.scan_utf8(pretok._any_scanner(), [base, bad]) is None


def test_scan_utf8_edge_cases():
    pretok = Pretokenizer(mode="simple")
    data, ends, doc_pieces = scanned(pretok, [])
    assert data.shape == (1,) and ends.shape == (0,) and doc_pieces.tolist() == [0]
    data, ends, doc_pieces = scanned(pretok, ["", "a b", "", "é"])
    assert bytes(data[:6]) == "a bé".encode() and ends.tolist() == [1, 3, 2] and doc_pieces.tolist() == [0, 0, 2, 2, 3]
    # every str storage kind, ASCII and not, in one slice
    assert_twins(pretok, ["plain ascii", "latin-1 café", "ĉu ŝi", "中文 text", "emoji 😀 here", "\x80\xff"])
    # a lone surrogate cannot be encoded: None, and the encoder names the text
    assert _pretok.scan_utf8(pretok._any_scanner(), ["ok", "bad \ud800 text"]) is None
    with pytest.raises(TypeError, match="encode expects str"):
        _pretok.scan_utf8(pretok._any_scanner(), ["ok", b"bytes"])


# ---------------------------------------------------------------- ids_to_lists == tolist


def test_ids_to_lists_equals_tolist():
    rng = np.random.default_rng(14)
    objects = list(range(1000))
    ids = rng.integers(0, 1000, 5000).astype(np.int32)
    cuts = np.sort(rng.integers(0, 5001, 40))
    offsets = np.concatenate(([0], cuts, [5000])).astype(np.int64)
    got = _pretok.ids_to_lists(ids, offsets, objects)
    assert got == [ids[a:b].tolist() for a, b in zip(offsets, offsets[1:])]
    assert _pretok.ids_to_lists(ids[:0], np.zeros(1, np.int64), objects) == []
    with pytest.raises(IndexError, match="outside the vocabulary"):
        _pretok.ids_to_lists(np.array([5, 1000], np.int32), np.array([0, 2], np.int64), objects)
    with pytest.raises(ValueError, match="non-decreasing"):
        _pretok.ids_to_lists(ids, np.array([0, 10, 5, 5000], np.int64), objects)
    with pytest.raises(ValueError, match="non-decreasing"):
        _pretok.ids_to_lists(ids, np.array([0, 5001], np.int64), objects)


# ---------------------------------------------------------------- the 8-byte shortcut keys


def test_eight_byte_keys_equal_the_byte_loop():
    data = np.random.default_rng(15).integers(0, 256, 40).astype(np.uint8)
    for start in range(0, 33):
        for n in range(1, 9):
            assert K._pack8(data, start) & K._low_bytes(n) == K._pack(data, start, n)
    # the long-piece hash reads whole words where it can and the byte loop at the end of the data: same hash
    for start in range(0, 20):
        assert K._long_hash(data, start, 40) == K._long_hash(data[start:].copy(), 0, 40 - start)


# ---------------------------------------------------------------- batches and threads


@pytest.fixture(scope="module")
def o200k(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("FASTSW_CACHE_DIR", str(tmp_path_factory.mktemp("fastsw-cache")))
    try:
        yield fastsw.Tokenizer.load_tiktoken(tv.bpe_openai_rank_file("o200k_base"), pattern="o200k")
    finally:
        mp.undo()


def mixed_docs():
    docs = []
    for lang in LANGS:
        docs += corpus_docs(lang, per_file=3, max_chars=20000)
    return docs + ["", " ", "a", "<|endoftext|> x", "é" * 300]


@pytest.mark.parametrize("model", ["o200k", "multilingual_superbpe"])
def test_batch_equals_one_by_one(request, model, monkeypatch):
    tok = request.getfixturevalue(model)
    docs = mixed_docs()
    one = [tok.encode_ordinary(d) for d in docs]
    monkeypatch.setattr(fast_encode, "_SLICE_BYTES", 1 << 14)  # many slices
    monkeypatch.setattr(fast_encode, "_MIN_SLICE", 1 << 10)
    for threads in (1, 2, 3):
        assert tok.encode_ordinary_batch(docs, num_threads=threads) == one
        assert tok.encode_batch(docs, num_threads=threads, disallowed_special=()) == one
        ids, offsets = tok.encode_batch_to_numpy(docs, num_threads=threads, disallowed_special=())
        assert [ids[a:b].tolist() for a, b in zip(offsets, offsets[1:])] == one
    # the per-document path (no scan_utf8) gives the same ids
    monkeypatch.setattr(fast_encode, "USE_SCAN_UTF8", False)
    assert tok.encode_ordinary_batch(docs, num_threads=2) == one
    assert [tok.encode_ordinary(d) for d in docs] == one
    # special tokens still follow tiktoken's conventions in the batch call
    with pytest.raises(ValueError, match="disallowed"):
        tok.encode_batch(["fine", "x <|endoftext|>"], num_threads=2)


def test_lone_surrogate_in_a_batch_is_named(o200k):
    with pytest.raises(ValueError, match="lone surrogate"):
        o200k.encode_ordinary_batch(["fine", "bad \ud800" + "x" * 300], num_threads=2)
    with pytest.raises(ValueError, match="lone surrogate"):
        o200k.encode_ordinary("bad \ud800" + "x" * 300)


def test_two_threads_on_one_tokenizer(o200k):
    docs = mixed_docs()
    want = [o200k.encode_ordinary(d) for d in docs]
    halves = [docs[0::2], docs[1::2]]
    got = [None, None]
    errors = []

    def work(k):
        try:
            for _ in range(3):
                got[k] = (
                    [o200k.encode_ordinary(d) for d in halves[k]],
                    o200k.encode_ordinary_batch(halves[k], num_threads=2),
                )
        except Exception as e:  # noqa: BLE001 - reported by the assertion below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(2):
        assert got[k][0] == want[k::2] and got[k][1] == want[k::2]


# ---------------------------------------------------------------- short texts: the whole-text cache


@pytest.fixture(scope="module")
def plain_bpe(sample_docs):
    return fastsw.train(sample_docs, algo="bpe", vocab_size=1000)


@pytest.mark.parametrize("model", ["o200k", "plain_bpe"])
def test_short_texts_equal_the_reference_across_cache_evictions(request, model, monkeypatch):
    """Short slices of every corpus language, each encoded three times on the numba backend (first call: the
    kernel; second: remembered; third: from the whole-text cache), with a cache of 8 texts so that it is cleared
    again and again: every answer equals the reference's, and a caller changing a returned list changes nothing
    that a later call returns."""
    from fastsw import tokenizer

    monkeypatch.setattr(tokenizer, "_TEXT_CACHE_LIMIT", 8)
    tok = request.getfixturevalue(model)
    texts = []
    for lang in LANGS:
        for doc in corpus_docs(lang, per_file=2, max_chars=2000):
            texts += [doc[i : i + n] for i, n in zip(range(0, len(doc), 97), itertools.cycle((5, 64, 128, 30)))]
    wants = {t: tok.encode_ordinary(t, backend="python") for t in texts}
    for round_ in range(3):
        for text in texts:
            got = tok.encode_ordinary(text, backend="numba")
            assert got == wants[text], (round_, text)
            got.append(-1)  # the caller's list is its own
            assert tok.encode(text, backend="numba") == wants[text]
    cache = tok._texts
    assert 0 < len(cache) <= 8 and len(cache.seen) <= 32
    assert all(list(ids) == wants[t] for t, ids in cache.items())
