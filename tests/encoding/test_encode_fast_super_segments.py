"""The supermerge runs of the fast encoder are cut into segments where no supermerge can ever join the two sides
(``fast_encode.cross_pairs``, the kernel's cross filter) and merged segment by segment, segments of three tokens by
``_merge_three``: the ids must stay the reference's (``apply_merges`` over the whole run, ``backend="python"``) on
real French text, where runs are long and most adjacent pairs have a supermerge, and on random supermerge tables
built so that supermerges chain across segments (Hypothesis)."""

import gzip
import json
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fastsw
from fastsw.encoding import encode_kernels as K
from fastsw.encoding import encode_fast as fast_encode
from fastsw.alphabet import ByteAlphabet
from fastsw.trainers.bpe import apply_merges
from fastsw.pretokenizers.pretokenize import Pretokenizer

from conftest import HYPOTHESIS_EXAMPLES, read_jsonl_texts, shared_path


@pytest.fixture(scope="module")
def french_boundless():
    """A BoundlessBPE model of ~1 MB of French training text (a few hundred supermerges)."""
    docs = []
    with gzip.open(shared_path("corpus/fr/train.jsonl.gz"), "rt", encoding="utf-8") as f:
        for line in f:
            docs.append(json.loads(line)["text"])
            if len(docs) >= 300:
                break
    docs = sorted(docs, key=len)[:200]
    return fastsw.train(docs, algo="boundless", vocab_size=2500, pretokenizer="simple")


def test_cross_pairs_worked_by_hand():
    # 5 6 -> 9, 9 7 -> 10, 8 9 -> 11: what can end 9 is 6 (and 9), what can begin 9 is 5 (and 9)
    lefts, rights = fast_encode.cross_pairs({(5, 6): (0, 9), (9, 7): (1, 10), (8, 9): (2, 11)})
    assert sorted(zip(lefts.tolist(), rights.tolist())) == [(5, 6), (6, 7), (8, 5), (8, 9), (9, 7)]
    # the order of the merges does not matter (computed to a fixpoint): the merge that makes 9 comes last here
    lefts, rights = fast_encode.cross_pairs({(9, 7): (0, 10), (8, 9): (1, 11), (5, 6): (2, 9)})
    assert sorted(zip(lefts.tolist(), rights.tolist())) == [(5, 6), (6, 7), (8, 5), (8, 9), (9, 7)]
    assert [a.tolist() for a in fast_encode.cross_pairs({})] == [[], []]


def test_french_heldout_runs_are_cut_and_merged_exactly(french_boundless):
    tok = french_boundless
    enc = fast_encode.encoder_for(tok)
    texts = read_jsonl_texts(shared_path("corpus/fr/heldout.jsonl"), limit=25)
    ref = [tok.encode_ordinary(t, backend="python") for t in texts]
    assert [tok.encode_ordinary(t, backend="numba") for t in texts] == ref
    assert [enc.encode(t) for t in texts] == ref  # the kernel itself (short texts take another path)
    assert tok.encode_ordinary_batch(texts, num_threads=2) == ref
    # the cut is exercised: adjacent eligible tokens of the text in the cross pairs and outside them
    lefts, rights = fast_encode.cross_pairs(tok.super_ranks)
    cross = set(zip(lefts.tolist(), rights.tolist()))
    assert set(tok.super_ranks) <= cross
    pieces = [enc.encode_pieces([p])[0].tolist() for p in enc.pretokenizer.pretokenize(" ".join(texts[:3]))]
    singles = [ids[0] if len(ids) == 1 and enc.flags[ids[0]] & 1 else None for ids in pieces]
    pairs = [(a, b) for a, b in zip(singles, singles[1:]) if a is not None and b is not None]
    assert sum(p in cross for p in pairs) > 20 and sum(p not in cross for p in pairs) > 20


def test_superword_tables_take_new_ids_as_ranks_and_the_compact_layout(french_boundless, monkeypatch):
    tok = french_boundless
    for ranks in (tok.regular_ranks, tok.super_ranks):
        pairs = fast_encode.pair_arrays(ranks)
        # regular and super tokens take turns in the id space: no one difference between new ids and ranks ...
        assert len(set((pairs.news - pairs.ranks).tolist())) > 1
        # ... but the new ids keep the ranks' order, so they serve as ranks
        assert fast_encode.ranked_by_ids(pairs).ranks.tolist() == pairs.news.tolist()
    enc = fast_encode.FastEncoder(tok._encoder_tables())
    assert K._is_compact(enc.r_table) and K._is_compact(enc.s_table)
    monkeypatch.setattr(fast_encode, "ranked_by_ids", lambda pairs: pairs)
    by_ranks = fast_encode.FastEncoder(tok._encoder_tables())
    assert not K._is_compact(by_ranks.r_table) and not K._is_compact(by_ranks.s_table)
    # the character table compares the rank table's ranks with the pairs': built from the same ranks, it is the same
    assert np.array_equal(enc.chars, by_ranks.chars)
    texts = read_jsonl_texts(shared_path("corpus/fr/heldout.jsonl"), limit=8)
    ref = [tok.encode_ordinary(t, backend="python") for t in texts]
    assert [enc.encode(t) for t in texts] == [by_ranks.encode(t) for t in texts] == ref


def test_ranked_by_ids_keeps_pairs_whose_new_ids_are_no_order():
    arrays = lambda *cols: fast_encode.PairArrays(*(np.array(c, np.int64) for c in cols))  # noqa: E731
    constant = arrays([1, 2, 3], [4, 5, 6], [0, 1, 2], [256, 257, 258])  # plain BPE: new id = rank + 256
    assert fast_encode.ranked_by_ids(constant) is constant
    crossed = arrays([1, 2, 3], [4, 5, 6], [0, 1, 2], [300, 290, 310])  # a later merge makes a smaller id
    assert fast_encode.ranked_by_ids(crossed) is crossed
    tied = arrays([1, 2, 3], [4, 5, 6], [0, 0, 1], [300, 301, 310])  # rank mode: pairs share a rank
    assert fast_encode.ranked_by_ids(tied) is tied
    turns = arrays([1, 2, 3], [4, 5, 6], [2, 0, 1], [310, 290, 300])
    assert fast_encode.ranked_by_ids(turns).ranks.tolist() == [310, 290, 300]


def _super_model(data):
    """A byte-level model whose pretokens are single letters (eligible atoms) and whose supermerges are drawn
    at random over the letters and the supermerges before them (so they chain across any cut)."""
    alphabet = ByteAlphabet("bytes256")
    tokens = list(alphabet.tokens)
    letters = [alphabet.id_of_byte(b) for b in b"abcdef"[: data.draw(st.integers(2, 6))]]
    supers = {}
    pool = list(letters)
    for _ in range(data.draw(st.integers(0, 25))):
        left, right = data.draw(st.sampled_from(pool)), data.draw(st.sampled_from(pool))
        if (left, right) in supers:
            continue
        supers[(left, right)] = (len(supers), len(tokens))
        pool.append(len(tokens))
        tokens.append(tokens[left] + tokens[right])
    tables = fast_encode.EncoderTables(
        tokens,
        {},
        supers,
        {bytes([b]): alphabet.id_of_byte(b) for b in b"abcdef"},
        frozenset(letters),
        Pretokenizer(),
        alphabet,
        len(tokens),
    )
    return fast_encode.FastEncoder(tables), letters, supers


@pytest.mark.parametrize("short_limit", [0, 16], ids=["tree", "scan"])
@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None)
@given(data=st.data())
def test_segments_equal_apply_merges_on_random_supermerges(short_limit, data):
    enc, letters, supers = _super_model(data)
    docs = [data.draw(st.lists(st.sampled_from(letters), max_size=40)) for _ in range(data.draw(st.integers(1, 3)))]
    raw = bytes(b for doc in docs for b in bytes(enc.tb[i] for i in doc))  # one byte per letter id
    ends = np.array([k + 1 for doc in docs for k in range(len(doc))], np.int64)
    doc_pieces = np.cumsum([0] + [len(doc) for doc in docs]).astype(np.int64)
    ids, offsets = enc._kernel(raw, ends, doc_pieces, True, short_limit)
    got = [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])]
    assert got == [apply_merges(doc, supers) for doc in docs]


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None)
@given(data=st.data())
def test_merge_three_equals_apply_merges(data):
    # the three-token case on its own, on tables where both pairs, one or none have a merge, equal ranks among them
    n = 4
    ranks = {}
    for k in range(data.draw(st.integers(0, 10))):
        pair = (data.draw(st.integers(0, n + k - 1)), data.draw(st.integers(0, n + k - 1)))
        ranks.setdefault(pair, (len(ranks), n + k))
    ids = data.draw(st.lists(st.integers(0, n - 1), min_size=3, max_size=3))
    # built as the supermerge table: small ids, so every pair is a direct one, which _merge_three's probes find
    # only in the hash region
    table = fast_encode.pair_table(ranks, hash_direct=True)
    lefts = np.array([p[0] for p in ranks], np.int64)
    rights = np.array([p[1] for p in ranks], np.int64)
    bits = K._build_pair_bits(lefts, rights)
    buf = np.array([7] + ids + [7], np.int32)
    m = K._merge_three(buf, 1, table, bits)
    assert buf[1 : 1 + m].tolist() == apply_merges(ids, ranks) and buf[0] == 7


def test_long_runs_of_one_segment_and_many(french_boundless):
    # a run of one repeated supermerge pair (one segment, longer than the scan loop's limit) and shuffled words
    tok = french_boundless
    (a, b), _ = next(iter(tok.super_ranks.items()))
    words = [tok.decode([x]) for x, _ in list(tok.super_ranks)[:60]] + [tok.decode([y]) for _, y in tok.super_ranks]
    rng = random.Random(5)
    texts = [(tok.decode([a]) + tok.decode([b])) * 40]
    for _ in range(30):
        rng.shuffle(words)
        texts.append("".join(words[:30]))
    enc = fast_encode.encoder_for(tok)
    for t in texts:
        assert enc.encode(t) == tok.encode_ordinary(t, backend="python"), t[:60]


def test_shortcut_entries_carry_the_eligible_flag(french_boundless):
    # a superword model's shortcut entries hold each token's eligibility beside its id (the kernel reads it there,
    # not in ``flags``): the marks are the flags, and with the marks cleared the runs of pretokens found whole are
    # never formed, so the ids differ from the reference (the marks are read)
    tok = french_boundless
    enc = fast_encode.encoder_for(tok)
    texts = read_jsonl_texts(shared_path("corpus/fr/heldout.jsonl"), limit=10)
    ref = [tok.encode_ordinary(t, backend="python") for t in texts]
    assert [enc.encode(t) for t in texts] == ref
    for table, stride in ((enc.sc_short, 2), (enc.sc_long, 4)):
        meta = table[1::stride]
        used = meta[meta != -1]
        ids = used & int(K._ID_MASK)
        assert ((used >> K._ELIGIBLE_SHIFT) & 1).tolist() == (enc.flags[ids] & 1).tolist()
    assert ((enc.sc_short[1::2] >> K._ELIGIBLE_SHIFT) & 1).sum() > 100
    saved = enc.sc_short.copy(), enc.sc_long.copy()
    try:
        for table, stride in ((enc.sc_short, 2), (enc.sc_long, 4)):
            meta = table[1::stride]
            meta[meta != -1] &= ~(1 << K._ELIGIBLE_SHIFT)
        assert [enc.encode(t) for t in texts] != ref
    finally:
        enc.sc_short[:], enc.sc_long[:] = saved
    assert [enc.encode(t) for t in texts] == ref


def test_batched_documents_start_and_end_inside_runs(french_boundless):
    # documents of supermerge pairs' tokens, one kernel call for all of them: each document's first token joins no
    # run of the document before (whose last id is the out[w - 1] the run tracking reads beside it, and whose pair
    # slot it prefetches), and each run ends at its document's end
    tok = french_boundless
    pairs = list(tok.super_ranks)[:40]
    rng = random.Random(11)
    texts = []
    for _ in range(40):
        picked = rng.sample(pairs, 4)
        texts.append("".join(tok.decode([a]) + tok.decode([b]) for a, b in picked))
    ref = [tok.encode_ordinary(t, backend="python") for t in texts]
    supers = {new for _, new in tok.super_ranks.values()}
    assert sum(x in supers for r in ref for x in r) > 40  # the runs are merged
    assert tok.encode_ordinary_batch(texts, num_threads=1, backend="numba") == ref
