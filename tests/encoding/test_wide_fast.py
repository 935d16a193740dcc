"""The one-call path of plain SCRIPT models (fastsw.pretokenizers.script_v3._plain_text_ids) against the pieces' route
(the pre-tokenizer's ``text_bytes_batch`` and the encoding kernel) and the reference path."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastsw
from fastsw._compiling import source_hash
from fastsw.encoding import encode_kernels as K
from fastsw.encoding import wide_fast
from fastsw.pretokenizers import script_v3 as sv
from conftest import HYPOTHESIS_EXAMPLES, read_jsonl_texts, shared_path

LANGS = ("en", "de", "fr", "ru", "fi", "ar", "hi", "th", "my", "zh", "ja", "ko")
COMPILED = hasattr(sv._plain_text_ids, "signatures")


@pytest.fixture(scope="module")
def models(sample_docs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SuperBPE may run out of supermerge pairs on the sample corpus
        return {
            algo: fastsw.train(sample_docs, algo=algo, vocab_size=2500, pretokenizer="script-v3", **kw)
            for algo, kw in (("bpe", {}), ("superbpe", {"supermerges": 200}))
        }


def _texts():
    """Held-out documents of every corpus language, and texts at the edges: unlisted characters (byte fallback),
    combining marks after a space, one character, spaces only, a character of four bytes."""
    texts = []
    for lang in LANGS:
        texts += [t[:4000] for t in read_jsonl_texts(shared_path(f"corpus/{lang}/heldout.jsonl"))[:3]]
    return texts + ["x\ue000y \U000f0000 日本", " \u0301a", "a", " ", "   ", "\U0001f600 ok", "日"]


def _pieces_route(enc, text, shortcut=True):
    wide_fast.USE_ONE_CALL = False
    try:
        return enc.encode(text, shortcut)
    finally:
        wide_fast.USE_ONE_CALL = True


@pytest.mark.skipif(not COMPILED, reason="NUMBA_DISABLE_JIT=1: plain SCRIPT texts take the pieces' route")
def test_one_call_equals_pieces_route_and_reference(models):
    texts = _texts()
    for algo, tok in models.items():
        enc = tok._fast()
        assert enc._plain and enc.encode("日本", compile=True) == tok.encode("日本", backend="python")
        assert enc._one_call is not None, algo  # the one-call path is the one taken below
        for text in texts:
            want = tok.encode(text, backend="python")
            assert enc.encode(text) == _pieces_route(enc, text) == want, (algo, text[:40])
            assert enc.encode(text, False) == _pieces_route(enc, text, False) == want, (algo, text[:40])
        assert enc.encode("") == []
    # the kernels it calls keep the one signature their other callers compile, the background warm-up included
    wide_fast.warmup()
    for kernel in (K._encode_docs, sv._plain_ends, sv._plain_text_ids):
        assert len(kernel.signatures) == 1, kernel.__name__


@pytest.mark.skipif(not COMPILED, reason="NUMBA_DISABLE_JIT=1: plain SCRIPT texts take the pieces' route")
@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(st.characters(blacklist_categories=("Cs",)), max_size=60))
def test_one_call_equals_reference_on_any_text(models, text):
    tok = models["superbpe"]
    enc = tok._fast()
    enc.encode("a", compile=True)
    assert enc.encode(text) == tok.encode(text, backend="python")


@pytest.mark.skipif(not COMPILED, reason="NUMBA_DISABLE_JIT=1: plain SCRIPT texts take the pieces' route")
def test_one_call_refuses_a_lone_surrogate_as_the_pieces_route_does(models):
    enc = models["bpe"]._fast()
    enc.encode("a", compile=True)
    with pytest.raises(ValueError, match="lone surrogate") as one:
        enc.encode("ab\ud800")
    with pytest.raises(ValueError, match="lone surrogate") as pieces:
        _pieces_route(enc, "ab\ud800")
    assert str(one.value) == str(pieces.value)


def test_texts_take_the_pieces_route_until_the_one_call_kernel_is_ready(models, monkeypatch):
    # a fresh install: the kernel is neither compiled nor on disk; the same ids, without waiting for it
    tok = models["bpe"]
    enc = tok._fast()
    enc._one_call = None
    monkeypatch.setattr(wide_fast, "_one_call_ready", lambda: False)
    text = "他说：“今天的天气很好。” The weather is fine."
    assert enc.encode(text) == tok.encode(text, backend="python")
    assert enc._one_call is None


def test_marker_schemes_keep_the_pieces_route(sample_docs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = fastsw.train(sample_docs[::4], vocab_size=2100, pretokenizer="script-v3+boundary[w,p,d]+caps")
    enc = tok._fast()
    text = "The Cat sat, 日本語 too."
    assert not enc._plain
    assert enc.encode(text, compile=True) == tok.encode(text, backend="python") and enc._one_call is None


@pytest.mark.skipif(not COMPILED, reason="NUMBA_DISABLE_JIT=1: nothing is compiled or cached")
def test_cache_entry_is_stamped_with_the_kernels_it_calls():
    # Numba stamps the entry with its own file (the SCRIPT grouping kernel's) alone; it also calls the encoding
    # kernel, so a change of that file must make it stale too
    stamp = sv._plain_text_ids._cache._cache_file._source_stamp
    assert source_hash(K.__file__) in stamp[1:]


@pytest.mark.skipif(not COMPILED, reason="NUMBA_DISABLE_JIT=1: plain SCRIPT texts take the pieces' route")
def test_pretokens_are_cut_only_where_no_merge_joins(models):
    # the one call cuts a pretoken between two characters' tokens whose pair no merge joins (wide_fast.join_bits):
    # it cuts the corpus's Chinese and Japanese runs, the ids stay the reference's, and a bit set that lets it cut
    # between every two characters' tokens gives other ids (so these texts would catch a join left out)
    tok = models["bpe"]
    enc = tok._fast()
    enc.encode("a", compile=True)
    texts = [
        t[:4000] for lang in ("zh", "ja") for t in read_jsonl_texts(shared_path(f"corpus/{lang}/heldout.jsonl"))[:3]
    ]
    t = sv.class_table()
    cuts = 0
    for text in texts:
        codes = sv._codes(text)
        ends = sv._plain_ends(codes, t.cls, t.kind, sv._NO_STOP)
        starts = np.cumsum([0] + [len(c.encode("utf-8")) for c in text], dtype=np.int64)  # each one's first byte
        cuts += sv._cut_ends(codes, starts, ends, enc.joins, enc.chars).shape[0] - ends.shape[0]
        assert enc.encode(text) == tok.encode(text, backend="python")
    assert cuts > 100
    joins = enc.joins
    try:
        enc.joins = np.zeros_like(joins)  # no pair joined: a cut between every two characters' tokens
        enc._one_call = None
        assert any(enc.encode(text) != tok.encode(text, backend="python") for text in texts)
    finally:
        enc.joins = joins
        enc._one_call = None
    assert models["superbpe"]._fast().joins.shape[0] == 0  # its supermerge runs are of whole pretokens


def test_merge_joins_are_the_junctions_of_the_merges(models):
    # every merge but a character's joins the last unit of its left to the first unit of its right; a token's units
    # are the alphabet's symbols and the characters' tokens
    tok = models["bpe"]
    joins = wide_fast.merge_joins(tok.alphabet, tok.regular_ranks)
    wide = wide_fast._wide_atoms(tok.alphabet)
    units = {}
    for (left, right), (_, new) in sorted(tok.regular_ranks.items(), key=lambda kv: kv[1][0]):
        units[new] = [new] if left in wide and right in wide else units.get(left, [left]) + units.get(right, [right])
        if not (left in wide and right in wide):
            assert (units.get(left, [left])[-1], units.get(right, [right])[0]) in joins
    assert joins == {(u[i], u[i + 1]) for u in units.values() for i in range(len(u) - 1)}


@pytest.mark.skipif(not COMPILED, reason="NUMBA_DISABLE_JIT=1: plain SCRIPT texts take the pieces' route")
@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_cut_pretokens_equal_reference_on_any_sequence_of_tokens(models, data):
    # the model's own non-ASCII tokens in any order (and a few other characters): runs where merges join across
    # the tokens' edges or not, cut in new places
    tok = models["bpe"]
    enc = tok._fast()
    enc.encode("a", compile=True)
    pieces = [t for t in (tok.decode([i]) for i in range(len(tok.alphabet), len(tok.vocab))) if min(t) >= "\x80"]
    text = "".join(data.draw(st.lists(st.sampled_from(pieces + ["a", " ", "，"]), max_size=16)))
    assert enc.encode(text) == tok.encode(text, backend="python")
