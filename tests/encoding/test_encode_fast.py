"""The fast encoder (fastsw.encoding.encode_fast, backend="numba") gives exactly the reference's
ids (backend="python"): on the golden runs, real held-out text of every corpus
language, Hypothesis strings, pathological inputs and random merge tables; the
batch APIs agree with one-at-a-time encoding; bad input fails the same way."""

import hashlib
import json
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fastsw
from fastsw.encoding import encode_kernels as K
from fastsw.encoding import encode_fast as fast_encode
from fastsw.alphabet import ByteAlphabet, CharAlphabet
from fastsw.trainers.bpe import apply_merges
from fastsw.corpus.readers import iter_documents

from conftest import GOLDEN_RUNS, HYPOTHESIS_EXAMPLES, golden_json, read_jsonl_texts, shared_path

LANGS = ["en", "de", "fr", "ru", "fi", "ar", "ko", "zh", "ja", "th", "hi", "my"]


@pytest.fixture(scope="module")
def golden_models(golden_dir):
    path = golden_dir / "inputs/wikitext2_valid.jsonl"
    return {name: fastsw.train(path, backend="numba", **kw) for name, kw in GOLDEN_RUNS.items()}


def both(tok, text, **kw):
    """The fast ids, after checking them against the reference (shortcut on and off), and the kernel's
    own answer (a short text's encode_ordinary takes the small-input path, so call the kernel directly too)."""
    ref = tok.encode_ordinary(text, backend="python", **kw)
    fast = tok.encode_ordinary(text, backend="numba", **kw)
    assert fast == ref, text[:80]
    assert fast_encode.encoder_for(tok).encode(text, kw.get("shortcut", True)) == ref, text[:80]
    return fast


def test_fast_encoder_is_built_from_plain_tables(golden_models):
    """The encoder takes plain data, here rebuilt from the public API only, and
    gives the reference's ids without knowing the tokenizer; the tokenizer keeps its own encoder."""
    tok = golden_models["superbpe_1500_plus500"]
    ids = range(tok.vocab_size)
    tables = fast_encode.EncoderTables(
        token_bytes=tok.vocab,
        regular_ranks=dict(tok.regular_ranks),
        super_ranks=dict(tok.super_ranks),
        shortcut={tok.vocab[i]: i for i in ids if tok.is_reachable(i)},
        eligible=frozenset(i for i in ids if tok.is_eligible(i)),
        pretokenizer=tok.pretokenizer,
        alphabet=tok.alphabet,
        n_vocab=tok.n_vocab,
    )
    enc = fast_encode.FastEncoder(tables)
    assert not hasattr(enc, "tok")
    text = "The cat sat on the mat, and then the cat sat on the mat again. " * 3
    assert enc.encode(text) == tok.encode_ordinary(text, backend="python")
    assert tok._fast() is tok._fast() is fast_encode.encoder_for(tok) is not enc


# ---------------------------------------------------------------- the merge loops alone


def ranks_of(merges, n_alpha):
    """``(left, right) -> (rank, new id)`` as Tokenizer builds it (first duplicate wins)."""
    ranks = {}
    for k, (left, right) in enumerate(merges):
        ranks.setdefault((left, right), (len(ranks), n_alpha + k))
    return ranks


def merge_fast(ids, ranks, short_limit):
    table = fast_encode.pair_table(ranks)
    return K._merge_one(np.array(ids, dtype=np.int32), table, short_limit).tolist()


@pytest.mark.parametrize("short_limit", [0, 1000], ids=["tree", "scan"])
def test_overlapping_equal_pairs_worked_by_hand(short_limit):
    # alphabet a=0, b=1; merges: a+a -> 2 (rank 0), 2+a -> 3 (rank 1), 2+2 -> 4 (rank 2)
    ranks = ranks_of([(0, 0), (2, 0), (2, 2)], 2)
    # aaa: a+a applies once, left to right (positions 0,1); the pair at (1,2) is gone -> [2, a] -> 3
    assert merge_fast([0, 0, 0], ranks, short_limit) == [3] == apply_merges([0, 0, 0], ranks)
    # aaaa: a+a twice -> [2, 2]; rank 1 (2+a) is absent, rank 2 joins them -> [4]
    assert merge_fast([0] * 4, ranks, short_limit) == [4] == apply_merges([0] * 4, ranks)
    # aaaaa: [2, 2, a] -> rank 1 at (1,2) -> [2, 3]; 2+3 has no rule
    assert merge_fast([0] * 5, ranks, short_limit) == [2, 3] == apply_merges([0] * 5, ranks)
    # baaab: the leftmost a+a merges, the trailing a is left for 2+a
    assert merge_fast([1, 0, 0, 0, 1], ranks, short_limit) == [1, 3, 1]


@pytest.mark.parametrize("short_limit", [0, 3, 1000], ids=["tree", "mixed", "scan"])
@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None)
@given(data=st.data())
def test_merge_loops_equal_apply_merges_on_random_tables(short_limit, data):
    # A tiny alphabet makes long runs of equal pairs and chains of merges likely;
    # duplicate merges are allowed (the first one's rank and id win).
    n_alpha = data.draw(st.integers(1, 4))
    merges = []
    for k in range(data.draw(st.integers(0, 12))):
        n = n_alpha + k
        merges.append((data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, n - 1))))
    ids = data.draw(st.lists(st.integers(0, n_alpha - 1), max_size=60))
    ranks = ranks_of(merges, n_alpha)
    assert merge_fast(ids, ranks, short_limit) == apply_merges(ids, ranks)


@pytest.mark.parametrize("offset", [K._DIRECT_IDS - 6, 2 * K._DIRECT_IDS], ids=["straddles-direct", "hashed"])
@pytest.mark.parametrize("short_limit", [0, 1000], ids=["tree", "scan"])
@settings(max_examples=HYPOTHESIS_EXAMPLES // 2, deadline=None)
@given(data=st.data())
def test_merge_loops_on_large_ids(offset, short_limit, data):
    # rank tables hold pairs of two ids below K._DIRECT_IDS in a direct region and the others
    # in the hash region: ids from ``offset`` up put pairs on both sides (just below the edge) or all
    # in the hash region; the loops must agree with apply_merges either way
    n_alpha = data.draw(st.integers(1, 4))
    ranks = {}
    for k in range(data.draw(st.integers(0, 12))):
        n = n_alpha + k
        pair = (offset + data.draw(st.integers(0, n - 1)), offset + data.draw(st.integers(0, n - 1)))
        ranks.setdefault(pair, (len(ranks), offset + n))
    ids = [offset + i for i in data.draw(st.lists(st.integers(0, n_alpha - 1), max_size=60))]
    assert merge_fast(ids, ranks, short_limit) == apply_merges(ids, ranks)


@pytest.mark.parametrize("short_limit", [0, 1000], ids=["tree", "scan"])
@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None)
@given(data=st.data())
def test_merge_loops_equal_tiktoken_on_random_rank_tables(short_limit, data):
    # Rank mode (tiktoken's vocabularies): every two-way split of a token is a pair with that token's
    # rank, several pairs share a rank, and a part may rank after the token it forms, so a merge can
    # create a pair of a lower rank than the one just applied. Both loops must still be tiktoken's
    # algorithm (interop.rank_table_encode, the plain-Python twin), on pieces long enough for the tree.
    from fastsw.io.interop import rank_table_encode
    from fastsw.io.tiktoken_vocab import two_way_splits

    alphabet = [b"a", b"b", b"c"]
    extra = data.draw(st.lists(st.text("abc", min_size=2, max_size=5), max_size=25, unique=True))
    tokens = alphabet + [t.encode() for t in extra]
    order = data.draw(st.permutations(range(len(tokens))))
    rank_of = dict(zip(tokens, order))
    by_rank = sorted(rank_of, key=rank_of.get)
    splits = two_way_splits(by_rank, rank_of).astype(np.int64)
    table = fast_encode.pair_table(fast_encode.PairArrays(splits[:, 0], splits[:, 1], splits[:, 2], splits[:, 2]))
    piece = data.draw(st.text("abc", max_size=80)).encode()
    ids = np.array([rank_of[piece[i : i + 1]] for i in range(len(piece))], np.int32)
    assert K._merge_one(ids, table, short_limit).tolist() == rank_table_encode(piece, rank_of)


def test_pair_table_lookups_on_both_regions():
    d = K._DIRECT_IDS  # pairs of two ids below it are direct entries, the others hashed
    ranks = {(0, 0): (0, 300), (d - 1, d - 1): (1, 301), (d - 1, d): (2, 302), (d + 44, 3): (3, 303)}
    ranks.update({(2**20, 7): (4, 304), (256, 300): (5, 305), (300, 256): (6, 306), (1, d - 1): (7, 307)})
    table = fast_encode.pair_table(ranks)
    # the supermerge table hashes its direct pairs too: _pair_probe reads the hash region alone
    hashed = fast_encode.pair_table(ranks, hash_direct=True)
    for (left, right), (rank, new) in ranks.items():
        want = rank << 32 | new
        assert K._pair_lookup(table, left, right) == K._pair_lookup(hashed, left, right) == want
        assert K._pair_probe(hashed, left, right) == want
        # a rank table keeps a direct pair in its direct entry alone
        assert K._pair_probe(table, left, right) == (-1 if max(left, right) < d else want)
    for left, right in [(0, 1), (1, 0), (d, d - 1), (3, d + 44), (7, 2**20), (d - 1, 0), (256, 301), (2, 0)]:
        assert K._pair_lookup(table, left, right) == K._pair_lookup(hashed, left, right) == -1
        assert K._pair_probe(table, left, right) == K._pair_probe(hashed, left, right) == -1


@pytest.mark.parametrize("layout", ["compact", "two-word"])
def test_direct_region_holds_every_pair_of_small_ids(layout):
    # Every pair of two ids below K._DIRECT_IDS is one direct entry at left << K._DIRECT_SHIFT | right (tiktoken's
    # first merges: 72 % of o200k_base's lookups on Finnish, against 43 % for the bytes alone). A dense random
    # table over those ids, both layouts: every pair answers its own value or -1 (an index that let two pairs
    # share an entry, or a region too small for the largest ids, would answer another pair's value).
    rng = random.Random(5)
    d = K._DIRECT_IDS
    ranks = {}
    while len(ranks) < 3000:
        ranks.setdefault((rng.randrange(d), rng.randrange(d)), (len(ranks), 600 + len(ranks)))
    ranks[(d - 1, d - 1)] = (len(ranks), 600 + len(ranks))
    if layout == "two-word":
        ranks[(d + 1, 5)] = (len(ranks) + 9, 17)  # a hashed pair off the common difference
    table = fast_encode.pair_table(ranks)
    assert K._is_compact(table) == (layout == "compact")
    for (left, right), (rank, new) in ranks.items():
        assert K._pair_lookup(table, left, right) == (rank << 32 | new)
    for _ in range(20000):
        left, right = rng.randrange(d), rng.randrange(d)
        want = ranks.get((left, right))
        assert K._pair_lookup(table, left, right) == (-1 if want is None else want[0] << 32 | want[1])
    # the scan loop reads direct entries in place (its inlined lookup), the tree through _pair_lookup
    for _ in range(60):
        ids = [rng.randrange(d) for _ in range(rng.randrange(2, 40))]
        assert merge_fast(ids, ranks, 1000) == merge_fast(ids, ranks, 0) == apply_merges(ids, ranks)


@pytest.mark.parametrize("layout", ["compact", "two-word"])
def test_pair_table_layouts_answer_alike(layout):
    # A table whose every new id is its rank plus one same difference and whose ids are below K._COMPACT_ID
    # (tiktoken's vocabularies: rank = id) keeps one int64 per hashed slot; any other keeps (key, value) pairs.
    # Both answer every lookup alike, and the merge loops give the reference's ids on both.
    rng = random.Random(11)
    pairs = []
    while len(pairs) < 3000:
        pair = (rng.randrange(600), rng.randrange(600))
        if pair not in pairs:
            pairs.append(pair)
    ranks = {pair: (k, 600 + k) for k, pair in enumerate(pairs)}
    if layout == "two-word":
        ranks[pairs[-1]] = (len(pairs) + 5, 600 + len(pairs) - 1)  # one rank off the common difference
    big = {(K._COMPACT_ID, 1): (0, 5), (1, 2): (1, 6)}  # an id the compact slot cannot hold
    for table_ranks, compact in ((ranks, layout == "compact"), (big, False)):
        table = fast_encode.pair_table(table_ranks, hash_direct=True)
        assert K._is_compact(table) == compact
        for (left, right), (rank, new) in table_ranks.items():
            assert K._pair_lookup(table, left, right) == K._pair_probe(table, left, right) == (rank << 32 | new)
    table = fast_encode.pair_table(ranks)
    for _ in range(5000):
        left, right = rng.randrange(700), rng.randrange(700)
        want = ranks.get((left, right), (-1, -1))
        assert K._pair_lookup(table, left, right) == (-1 if want[0] < 0 else want[0] << 32 | want[1])
    for _ in range(30):
        ids = [rng.randrange(40) for _ in range(rng.randrange(2, 60))]
        assert merge_fast(ids, ranks, 0) == merge_fast(ids, ranks, 1000) == apply_merges(ids, ranks)


@pytest.mark.parametrize("layout", ["compact", "two-word"])
def test_pair_slot_spreads_over_every_slot(layout):
    # A pair's first probe is its hash masked to the hash region's power-of-two count of slots (one int64 each in
    # the compact layout, then the common difference; two in the other): odd slots and the last one included, so
    # that pairs do not crowd into half the slots and lengthen the probes.
    ranks = {(300 + k, 7): (k, 600 + k) for k in range(400)}
    if layout == "two-word":
        ranks[(300, 7)] = (0, 5)  # one new id off the common difference
    table = fast_encode.pair_table(ranks)
    assert K._is_compact(table) == (layout == "compact")
    n = table.shape[0] - K._HASHED
    slots = n - 1 if layout == "compact" else n // 2
    rng = random.Random(2)
    first = {K._pair_slot(table, rng.randrange(2**40)) for _ in range(20 * slots)}
    assert first == set(range(slots))


def test_pair_table_filter_never_hides_a_pair():
    # Hashed pairs pass a 2 ** 22-bit filter before the probe (module notes of _encode_kernels): a clear bit
    # answers -1 at once, a set bit (a stored pair or a collision) probes. Every stored pair must be found and
    # every other pair answer -1, among them some whose bit another pair set (~0.7 % of the bits are set here).
    rng = random.Random(3)
    ranks = {}
    while len(ranks) < 30000:
        ranks.setdefault((rng.randrange(5000), rng.randrange(5000)), (len(ranks), 5000 + len(ranks)))
    table = fast_encode.pair_table(ranks)
    for (left, right), (rank, new) in ranks.items():
        assert K._pair_lookup(table, left, right) == (rank << 32 | new)
    passed = 0
    for _ in range(60000):
        left, right = rng.randrange(5000), rng.randrange(5000)
        if (left, right) not in ranks:
            assert K._pair_lookup(table, left, right) == -1
            if (left | right) >= K._DIRECT_IDS:
                b = K._filter_bit(left << 32 | right)
                passed += (int(table[K._DIRECT + (b >> 6)]) >> (b & 63)) & 1
    assert passed > 100  # absent pairs that the filter let through to the probe


def test_heap_loop_on_a_long_sequence():
    rng = random.Random(7)
    merges = []
    for k in range(40):
        n = 3 + k
        merges.append((rng.randrange(n), rng.randrange(n)))
    ranks = ranks_of(merges, 3)
    ids = [rng.randrange(3) for _ in range(5000)]
    assert merge_fast(ids, ranks, 0) == apply_merges(ids, ranks)


@pytest.mark.parametrize(
    "merges",
    [
        [(0, 0)],  # a+a only: "a" * n -> n // 2 x aa (+ a)
        [(0, 0), (2, 2), (3, 3), (4, 4)],  # doubling chain: the run step repeats
        [(0, 0), (2, 0), (2, 2), (4, 4)],  # aa+a before aa+aa: odd runs leave the run step
        [(0, 0), (2, 2), (2, 0), (3, 2), (3, 3)],  # aaaa+aa and aa+a mix after the first steps
    ],
    ids=["one", "doubling", "odd-tail", "mixed"],
)
def test_runs_of_one_id_take_the_arithmetic_step(merges):
    # The long loop handles "x" * n as n // 2 copies of x+x (and a last x when n is
    # odd) in one pass (module note (5) of _encode_kernels); every length must give
    # the reference's ids, also when a different id follows the run.
    ranks = ranks_of(merges, 2)
    for n in list(range(0, 70)) + [255, 256, 257, 1000, 1023, 1024, 1025, 4099]:
        ids = [0] * n
        assert merge_fast(ids, ranks, 0) == apply_merges(ids, ranks), n
        assert merge_fast(ids + [1], ranks, 0) == apply_merges(ids + [1], ranks), n
        assert merge_fast([1] + ids, ranks, 0) == apply_merges([1] + ids, ranks), n


@pytest.mark.parametrize("shape", ["pairs", "chain", "growing", "stale"])
def test_long_loop_with_few_merges_and_its_hand_over_to_the_tree(shape):
    # Module note (8) of _encode_kernels: a long sequence whose pairs that merge are at most K._FEW_PAIRS and at most
    # a quarter of its length skips the tournament tree (_merge_few); after K._FEW_MERGES merges, or when its list
    # outgrows K._FEW_PAIRS, it hands the rest to the tree. Sizes on both sides of each limit, against the
    # reference; d (which merges with nothing) pads the units so that the list is taken where intended.
    few, most = K._FEW_PAIRS, K._FEW_MERGES
    a, b, c, d = 0, 1, 2, 3
    pad = [d] * 9
    if shape == "pairs":  # k separate "ab" pairs: the list alone (k <= few) or the tree (k > few)
        ranks = ranks_of([(a, b)], 4)
        cases = [([a, b] + pad) * k for k in (1, few - 1, few, few + 1, 3 * few)]
    elif shape == "chain":  # "a" + "b" * m: one pair at a time, m merges in a row (a+b, ab+b, abb+b, ...)
        ranks = ranks_of([(a, b)] + [(4 + k, b) for k in range(most + 8)], 4)
        cases = [[a] + [b] * m + [c] for m in (3, most - 1, most, most + 1, most + 8)]
    elif shape == "growing":  # each a+b merge makes two new pairs (c+ab, ab+c): the list outgrows its limit
        ranks = ranks_of([(a, b), (c, 4), (4, c)], 4)
        cases = [(pad + [c, a, b, c]) * k for k in (1, few - 1, few, few + 1)]
    else:  # c+a is listed but must be dropped (not merged) once a+b has merged
        ranks = ranks_of([(a, b), (c, a)], 4)
        cases = [([c, a, b] + pad) * k for k in (1, few // 2 - 1, few // 2, few // 2 + 1)]
    table = fast_encode.pair_table(ranks)
    listed = 0
    for ids in cases:
        assert merge_fast(ids, ranks, 0) == apply_merges(ids, ranks) == merge_fast(ids, ranks, 1000), ids
        pairs = sum(K._pair_lookup(table, x, y) >= 0 for x, y in zip(ids, ids[1:]))
        listed += 0 < pairs <= few and 4 * pairs <= len(ids)
    assert listed >= 3  # most cases start on the list (the rest on the tree)


# ---------------------------------------------------------------- goldens


@pytest.mark.parametrize("name", sorted(GOLDEN_RUNS))
def test_golden_heldout_encodings(golden_models, name):
    gold = golden_json(shared_path("golden/paper_ref"), name)
    tok = golden_models[name]
    for item in gold["encodings"]:
        assert tok.encode_ordinary(item["text"], backend="numba") == item["ids"], item["text"][:60]
        assert tok.encode_ordinary(item["text"], backend="numba", shortcut=False) == item["ids"]
        assert tok.encode(item["text"], backend="numba") == item["ids"]


@pytest.mark.parametrize("name", sorted(GOLDEN_RUNS))
def test_golden_test_set_hash(golden_models, name):
    gold = golden_json(shared_path("golden/paper_ref"), name)
    tok = golden_models[name]
    docs = list(iter_documents(shared_path("golden/paper_ref/inputs/wikitext2_test.jsonl")))
    ids, offsets = tok.encode_batch_to_numpy(docs)
    digest = hashlib.sha256()
    bounds = offsets.tolist()
    flat = ids.tolist()
    for a, b in zip(bounds, bounds[1:]):
        digest.update((",".join(map(str, flat[a:b])) + "\n").encode())
    assert len(flat) == gold["test_set"]["total_tokens"]
    assert digest.hexdigest() == gold["test_set"]["sha256_of_ids"]


# ---------------------------------------------------------------- real text, every language


@pytest.mark.parametrize("lang", LANGS)
def test_heldout_every_language(golden_models, multilingual_boundless, multilingual_superbpe, lang):
    texts = read_jsonl_texts(shared_path(f"corpus/{lang}/heldout.jsonl"), limit=60)
    for tok in (multilingual_boundless, multilingual_superbpe, golden_models["superbpe_1500_plus500"]):
        ref = [tok.encode_ordinary(t, backend="python") for t in texts]
        assert [tok.encode_ordinary(t, backend="numba") for t in texts] == ref
        assert [tok.encode_ordinary(t, backend="numba", shortcut=False) for t in texts[:10]] == ref[:10]
        assert tok.encode_ordinary_batch(texts, num_threads=2) == ref
        for t, ids in zip(texts, ref):
            assert tok.decode(ids) == t


# ---------------------------------------------------------------- Hypothesis

INTERESTING = (
    "aZ éß Ωω жЯ עב عربى हिंदी ไทย ကမ္ဘာ 中文汉字 ひらがな カタカナー 한국어 "
    "\u0300\u0301\u200d\u00a0\u3000\t\r\n\x0b\x85\u2028 0123456789٠١२३ ½ '’\"-.,;:!?()/\\@#_ "
    "😀👍🏽👨‍👩‍👧 \ue000\U000f0000\u0378 's 'S 'll the The of"
)
text_strategy = st.one_of(
    st.text(),
    st.text(alphabet=INTERESTING),
    st.lists(
        st.sampled_from(
            ["the", " the", " of", " The", "'s", " ", "\n", "德国", "é", "\u0301", "1234", " and", " in", " a", "aaaa"]
        ),
        max_size=60,
    ).map("".join),
)


@pytest.mark.parametrize("model", ["multilingual_boundless", "multilingual_superbpe"])
@settings(
    max_examples=HYPOTHESIS_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(text=text_strategy)
def test_fast_equals_reference_on_arbitrary_unicode(request, model, text):
    tok = request.getfixturevalue(model)
    ids = both(tok, text)
    assert tok.encode_ordinary(text, backend="numba", shortcut=False) == ids
    assert tok.decode(ids) == text


# ---------------------------------------------------------------- pathological inputs


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "\n" * 10000,
        "a" * 100000,
        " " * 5000,
        "👍🏽" * 1000,
        "e\u0301" * 3000,
        "\u0301" * 50 + "abc",
        "中" * 5000,
        "The cat 's hat, and the dog.\r\n\r\n",
        "the " * 20000,
    ],
)
def test_pathological_inputs(multilingual_boundless, multilingual_superbpe, text):
    for tok in (multilingual_boundless, multilingual_superbpe):
        ids = both(tok, text)
        assert tok.encode_ordinary(text, backend="numba", shortcut=False) == ids
        assert tok.decode(ids) == text


def test_a_million_a(golden_models):
    text = "a" * 1_000_000
    for name in ("bpe_2000", "superbpe_1500_plus500"):
        tok = golden_models[name]
        ids = both(tok, text)
        assert tok.decode(ids) == text


def test_a_megabyte_of_random_unicode(multilingual_boundless):
    rng = random.Random(1)
    chars = []
    size = 0
    while size < 1_000_000:
        cp = rng.randrange(0x110000)
        if 0xD800 <= cp < 0xE000:
            continue
        c = chr(cp)
        chars.append(c)
        size += len(c.encode("utf-8"))
    text = "".join(chars)
    ids = both(multilingual_boundless, text)
    assert multilingual_boundless.decode(ids) == text


def test_shortcut_tables_find_every_reachable_token(golden_models):
    # tokens of at most 8 bytes sit in the packed-key table, longer ones in the hashed
    # one; a piece that differs only by trailing NUL bytes or one byte must miss
    tok = golden_models["bpe_2000"]
    enc = fast_encode.encoder_for(tok)
    lengths = set()

    def lookup(b):
        arr = np.frombuffer(b, np.uint8)
        n = len(b)
        if n <= 8:
            key = K._pack(arr, 0, n)
            return K._short_lookup(enc.sc_short, key, n, K._short_hash(key, n))
        return K._long_lookup(enc.sc_long, enc.tb, arr, 0, n, K._long_hash(arr, 0, n))

    for b, tid in tok._shortcut.items():
        lengths.add(len(b))
        assert lookup(b) == tid, b
        for other in (b + b"\0", b[:-1] + bytes([b[-1] ^ 1])):
            if other not in tok._shortcut:
                assert lookup(other) == -1, other
    assert {1, 8, 9, 10} <= lengths
    # the same through the kernel, pieces of 7 to 10 bytes with NUL bytes inside
    texts = ["\0" * n for n in range(1, 12)] + ["a\0\0\0\0\0\0\0b", " the\0cat"]
    for t in texts:
        both(tok, t)


def test_to_list_gives_plain_ints(golden_models):
    tok = golden_models["superbpe_1500_plus500"]
    enc = fast_encode.encoder_for(tok)
    ids = np.array([0, 5, tok.vocab_size - 1, 5], np.int32)
    out = enc.to_list(ids)
    assert out == ids.tolist() and all(type(i) is int for i in out)
    assert enc.to_list(np.zeros(0, np.int32)) == []
    # the compiled loop (fastsw.pretokenizers._pretok.ids_to_list) against its reference, ndarray.tolist, on real ids
    many = enc.encode_docs([" ".join(read_jsonl_texts(shared_path("corpus/en/heldout.jsonl"), 3))])[0]
    assert enc.to_list(many) == many.tolist() and len(many) > 1000
    with pytest.raises(IndexError, match="outside the vocabulary"):
        enc.to_list(np.array([5, tok.n_vocab], np.int32))


def test_long_pretokens_and_long_runs_take_the_tree(golden_models):
    # long pretokens (> SHORT_LIMIT bytes) and long supermerge runs go through the
    # tournament tree, several in one kernel call (its scratch is reused)
    tok = golden_models["superbpe_1500_plus500"]
    for text in (
        "ab" * 5000,
        "the cat sat on the mat " * 200,
        "x" * 99 + " " + "yz" * 40,
        "thecatsatonthemat" * 7 + " " + "x" * 30 + " andthen" * 9,
    ):
        both(tok, text)


def test_supermerge_runs_without_candidate_pairs(golden_models):
    # a run's segments none of whose pairs passes the pair filter are left as they are; the ids
    # must still be the reference's, whatever the order of the words
    tok = golden_models["superbpe_1500_plus500"]
    enc = fast_encode.encoder_for(tok)
    pairs = list(tok._super_ranks)[:40]
    bits = [int(K._pair_bit(a, b)) for a, b in tok._super_ranks]
    assert all(int(enc.s_bits[b >> 6]) >> (b & 63) & 1 for b in bits)
    pair_words = enc.s_bits[: K._CROSS_WORDS]  # the pair filter (the cross filter follows it)
    assert sum(bin(int(w)).count("1") for w in pair_words) == len(set(bits)) < len(pair_words) * 64 // 8
    words = [tok.decode([a]) for a, _ in pairs] + [tok.decode([b]) for _, b in pairs]
    rng = random.Random(3)
    for _ in range(50):
        rng.shuffle(words)
        both(tok, "".join(words[:12]))
        both(tok, "".join(reversed(words[:12])))


def test_ascii_and_non_ascii_documents_in_one_batch(golden_models):
    # pretoken byte bounds: code points are bytes when the whole batch is ASCII,
    # otherwise the UTF-8 lead bytes are walked; mixed batches take the second way
    tok = golden_models["boundless_2000"]
    texts = ["plain ascii text, with 123 numbers.", "caf\u00e9 na\u00efve \u4e2d\u6587 text", "", "  x"]
    ref = [tok.encode_ordinary(t, backend="python") for t in texts]
    for batch in (texts, texts[:1], texts[1:2], [texts[0], texts[3]]):
        ids, offsets = fast_encode.encoder_for(tok).encode_docs(batch)
        assert [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == [ref[texts.index(t)] for t in batch]


# ---------------------------------------------------------------- batches, threads, numpy


def test_encode_batch_and_numpy_agree(multilingual_superbpe):
    tok = multilingual_superbpe
    texts = []
    for lang in LANGS:
        texts += read_jsonl_texts(shared_path(f"corpus/{lang}/heldout.jsonl"), limit=30)
    texts += ["", "a" * 3000, " "]
    one_by_one = [tok.encode(t, backend="python") for t in texts]
    for threads in (None, 1, 2, 4):
        assert tok.encode_batch(texts, num_threads=threads) == one_by_one
        assert tok.encode_ordinary_batch(texts, num_threads=threads) == one_by_one
        ids, offsets = tok.encode_batch_to_numpy(texts, num_threads=threads)
        assert ids.dtype == np.int32 and offsets.dtype == np.int64
        assert offsets.shape == (len(texts) + 1,) and offsets[0] == 0 and offsets[-1] == ids.shape[0]
        assert [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == one_by_one
    ref_ids, ref_offsets = tok.encode_batch_to_numpy(texts, backend="python")
    assert np.array_equal(ref_ids, ids) and np.array_equal(ref_offsets, offsets)
    empty_ids, empty_offsets = tok.encode_batch_to_numpy([])
    assert empty_ids.shape == (0,) and empty_offsets.tolist() == [0]


def test_pretokenize_fallback_gives_the_same_ids(golden_models, monkeypatch):
    # the driver reads pretoken ends from the compiled scanner when it can; the
    # pretokenize() strings must give the same ids
    tok = golden_models["superbpe_1500_plus500"]
    texts = read_jsonl_texts(shared_path("corpus/de/heldout.jsonl"), limit=50) + ["", "a b", " "]
    fast = tok.encode_batch_to_numpy(texts, num_threads=1)
    monkeypatch.setattr(fast_encode, "USE_PRETOKEN_ENDS", False)
    slow = tok.encode_batch_to_numpy(texts, num_threads=1)
    assert np.array_equal(fast[0], slow[0]) and np.array_equal(fast[1], slow[1])
    assert [fast[0][a:b].tolist() for a, b in zip(fast[1][:-1], fast[1][1:])] == [
        tok.encode_ordinary(t, backend="python") for t in texts
    ]


def test_many_slices_across_threads(golden_models, monkeypatch):
    # small slices force many thread-pool tasks and the offset stitching between them
    monkeypatch.setattr(fast_encode, "_SLICE_BYTES", 500)
    monkeypatch.setattr(fast_encode, "_MIN_SLICE", 1)
    tok = golden_models["boundless_2000"]
    texts = read_jsonl_texts(shared_path("corpus/en/heldout.jsonl"), limit=200)
    ids, offsets = tok.encode_batch_to_numpy(texts, num_threads=3)
    assert [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == [
        tok.encode_ordinary(t, backend="python") for t in texts
    ]


def test_special_tokens_on_the_fast_path(multilingual_superbpe):
    tok = multilingual_superbpe
    text = "The cat<|endoftext|>The cat sat.<|endoftext|>"
    eot = tok.special_tokens["<|endoftext|>"]
    fast = tok.encode(text, allowed_special="all", backend="numba")
    assert fast == tok.encode(text, allowed_special="all", backend="python")
    assert fast.count(eot) == 2
    assert tok.encode(text, disallowed_special=(), backend="numba") == tok.encode(
        text, disallowed_special=(), backend="python"
    )
    assert tok.encode_batch([text, "x"], allowed_special="all") == [fast, tok.encode("x")]
    assert tok.encode_batch([text], disallowed_special=(), num_threads=2) == [
        tok.encode(text, disallowed_special=(), backend="python")
    ]


# ---------------------------------------------------------------- bad input: the same errors


def test_lone_surrogates_are_a_clear_error(multilingual_boundless, backend):
    tok = multilingual_boundless
    for call in (
        lambda t: tok.encode(t, backend=backend),
        lambda t: tok.encode_ordinary(t, backend=backend),
        lambda t: tok.encode_batch(["ok", t], backend=backend),
        lambda t: tok.encode_ordinary_batch(["ok", t], backend=backend),
        lambda t: tok.encode_batch_to_numpy(["ok", t], backend=backend),
    ):
        with pytest.raises(ValueError, match="lone surrogate"):
            call("abc\ud800def")
    with pytest.raises(TypeError):
        tok.encode_ordinary(b"bytes", backend=backend)
    with pytest.raises(TypeError):
        tok.encode_batch_to_numpy("a single str", backend=backend)


def test_disallowed_special_token_is_a_clear_error(multilingual_superbpe, backend):
    tok = multilingual_superbpe
    with pytest.raises(ValueError, match="disallowed"):
        tok.encode("a <|endoftext|> b", backend=backend)
    with pytest.raises(ValueError, match="disallowed"):
        tok.encode_batch(["fine", "a <|endoftext|> b"], backend=backend)
    with pytest.raises(ValueError, match="does not have"):
        tok.encode("a", allowed_special={"<|nope|>"}, backend=backend)


def test_unknown_ids_in_decode(multilingual_superbpe):
    tok = multilingual_superbpe
    ids, _ = tok.encode_batch_to_numpy(["a text"])
    assert tok.decode(ids) == "a text"  # numpy int32 ids decode
    with pytest.raises(ValueError, match="not in this model"):
        tok.decode([0, tok.n_vocab])
    with pytest.raises(ValueError, match="not in this model"):
        tok.decode_bytes(np.array([-1], dtype=np.int32))


def test_model_from_a_newer_version_is_refused(multilingual_boundless, tmp_path):
    path = tmp_path / "m.json"
    multilingual_boundless.save(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["format_version"] += 1
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="newer"):
        fastsw.load(path)


# ---------------------------------------------------------------- backend selection


def test_backend_selection(multilingual_boundless, monkeypatch):
    tok = multilingual_boundless
    assert tok.backend == "auto"
    assert tok._resolve_backend(None) == "numba"
    monkeypatch.setenv("FASTSW_PUREPYTHON", "1")
    assert tok._resolve_backend(None) == "python"
    assert tok._resolve_backend("numba") == "numba"
    monkeypatch.delenv("FASTSW_PUREPYTHON")
    with pytest.raises(ValueError, match="backend"):
        tok.encode("x", backend="rust")
    with pytest.raises(ValueError, match="backend"):
        fastsw.Tokenizer(
            alphabet=ByteAlphabet("bytes243"), merges=[], pretokenizer=fastsw.Pretokenizer(), backend="fast"
        )


def test_character_alphabet_falls_back_to_the_reference():
    # ids: " " 0, a 1, b 2, c 3; merge a + b -> 4
    tok = fastsw.Tokenizer(
        alphabet=CharAlphabet(list("abc ")), merges=[(1, 2, 1, False)], pretokenizer=fastsw.Pretokenizer(), profile="hf"
    )
    assert tok._resolve_backend(None) == "python"
    assert tok.encode("ab c") == [4, 0, 3]
    assert tok.encode_batch_to_numpy(["ab c"])[0].tolist() == [4, 0, 3]
    with pytest.raises(ValueError, match="byte alphabets"):
        tok.encode("ab", backend="numba")


# ---------------------------------------------------------------- one signature per kernel


def test_each_encode_kernel_compiled_once():
    if not hasattr(K._encode_docs, "signatures"):
        pytest.skip("NUMBA_DISABLE_JIT=1: the kernels ran as plain Python")
    fast_encode.warmup()
    for kernel in fast_encode.KERNELS:
        assert len(kernel.signatures) == 1, kernel.__name__


@pytest.mark.parametrize("algo, extra", [("bpe", {}), ("boundless", {}), ("superbpe", {"supermerges": 150})])
@pytest.mark.parametrize("profile", ["paper", "hf"])
def test_reachable_tokens_same_on_both_backends(sample_docs, algo, extra, profile):
    """The batched kernel check of reachability equals the apply_merges one."""
    trained = fastsw.train(sample_docs[::2], algo=algo, vocab_size=1500, profile=profile, **extra)
    kwargs = dict(
        alphabet=trained.alphabet,
        merges=[m[1:] for m in trained.merges],
        pretokenizer=trained.pretokenizer,
        profile=profile,
        algo=algo,
    )
    ref = fastsw.Tokenizer(backend="python", **kwargs)
    fast = fastsw.Tokenizer(backend="numba", **kwargs)
    assert ref._shortcut == fast._shortcut and len(ref._shortcut) > len(trained.alphabet) // 2
    assert ref._eligible == fast._eligible and ref._eligible
    # some tokens are not reachable in these models (e.g. partial UTF-8 byte pairs)
    assert len(ref._shortcut) < trained.vocab_size


# ---------------------------------------------------------------- per-call overhead

SHORT = ["The cat sat on the mat today.", "", " ", "Über 世界 — ok", "aaaa aaaa the the", "e\u0301 👍🏽 1234"]


@pytest.mark.parametrize("model", ["multilingual_boundless", "multilingual_superbpe"])
def test_repeated_short_texts_skip_the_kernel(request, model, monkeypatch):
    """A short text seen twice is in the whole-text cache: encode and encode_ordinary (numba backend) give the
    reference's ids with every kernel entry disabled; encode also skips the special-token pass."""
    tok = request.getfixturevalue(model)
    ref = {t: tok.encode(t, backend="python") for t in SHORT}
    for t in SHORT * 2:
        assert tok.encode(t, backend="numba") == ref[t]  # the first call notes the text, the second keeps it

    def no_kernel(*args, **kwargs):
        raise AssertionError("kernel called for a repeated short text")

    for name in ("encode_docs", "encode", "encode_pieces", "encode_to_numpy", "_kernel", "_kernel_direct"):
        monkeypatch.setattr(fast_encode.FastEncoder, name, no_kernel)
    monkeypatch.setattr(type(tok), "_special_segments", no_kernel)
    for t in SHORT:
        assert tok.encode(t, backend="numba") == ref[t]
        assert tok.encode_ordinary(t, backend="numba") == tok.encode_ordinary(t, backend="python")


def test_distinct_short_texts_take_one_kernel_call_each(multilingual_superbpe, monkeypatch):
    """A short text not in the whole-text cache is encoded by one kernel call on the whole text (as a long text
    is), never pretoken by pretoken; the ids equal the reference's; a stream of distinct texts leaves the cache
    empty (each is only noted as seen)."""
    from fastsw import tokenizer

    tok = multilingual_superbpe
    tok._texts = tokenizer._TextCache()
    calls = []
    real = fast_encode.FastEncoder.encode  # one kernel call on the whole text (fastsw.encoding.c_entry)

    def counting(self, *args):
        calls.append(args)
        return real(self, *args)

    monkeypatch.setattr(fast_encode.FastEncoder, "encode", counting)
    monkeypatch.setattr(fast_encode.FastEncoder, "encode_pieces", None)
    texts = [f"Zyxwvut qwertz uiopü {i} asdfgh, the the of" for i in range(50)]
    for t in texts:
        assert tok.encode_ordinary(t, backend="numba") == tok.encode_ordinary(t, backend="python")
    assert len(calls) == len(texts)
    assert len(tok._texts) == 0 and len(tok._texts.seen) == len(texts)
