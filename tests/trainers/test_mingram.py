"""MinGram (fastsw.trainers.mingram): MINGRAM.md section 6's worked example step by step, the tie rule, the
minimum-token-count property, and the fast path (fastsw.trainers.mingram_kernels) against the reference on real text
in several languages and on Hypothesis inputs."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fastsw
from fastsw.trainers import mingram_kernels as K
from fastsw.trainers import bpe_fast as fast_train
from fastsw.alphabet import CharAlphabet, get_profile
from fastsw.trainers.bpe import learn_merges
from fastsw.trainers.mingram_fast import FastLattice
from fastsw.trainers.mingram import (
    LOG_PROB_FLOOR,
    MinGramTokenizer,
    _min_cover,
    build_trie_reference,
    costs,
    e_step_reference,
    initial_log_probs,
    learn_mingram,
    mi_scores_reference,
    seed_counts_from_words,
    seed_token_atoms,
    viterbi,
)

from conftest import HYPOTHESIS_EXAMPLES, read_jsonl_texts, shared_path

# MINGRAM.md 6: A = {b, g, h, n, p, s, u} (ids 0..6 here, 1..7 there); hug x10, pug x5, pun x12, bun x4, hugs x5
WORDS = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}
CORPUS = [w for w, n in WORDS.items() for _ in range(n)]
ALPHA = CharAlphabet("bghnpsu")


def name(tok_id, atoms):
    return "".join("bghnpsu"[a] for a in atoms[tok_id])


def worked_seed():
    """The seed BPE of 6.1 through fastsw's own phase 1 (profile hf: ties to the smaller (left id, right id))."""
    words = [ALPHA.initial_ids(w) for w in WORDS]
    counts = list(WORDS.values())
    merges, final = learn_merges(words, counts, list(ALPHA.tokens), get_profile("hf"), int(3 * 2.0))
    return words, counts, merges, final


def test_worked_example_seed():
    words, counts, merges, final = worked_seed()
    atoms = seed_token_atoms(7, merges)
    # (u,g)->ug [20]; (u,n)->un [16]; (h,ug)->hug [15]; (p,un)->pun [12]; (p,ug)->pug [5] wins the tie with
    # (hug,s) because (p, ug) = (4, 7) < (9, 5); then (hug,s)->hugs [5]
    assert [(name(l, atoms), name(r, atoms), c) for l, r, c in merges] == [
        ("u", "g", 20),
        ("u", "n", 16),
        ("h", "ug", 15),
        ("p", "un", 12),
        ("p", "ug", 5),
        ("hug", "s", 5),
    ]
    c = seed_counts_from_words(final, counts, len(atoms))
    assert {name(t, atoms): n for t, n in enumerate(c) if n} == {
        "b": 4,
        "un": 4,
        "hug": 10,
        "pun": 12,
        "pug": 5,
        "hugs": 5,
    }
    assert sum(max(1, x) for x in c) == 47
    lp0 = dict(zip((name(t, atoms) for t in range(len(atoms))), initial_log_probs(c)))
    expect = {"pun": -1.3652, "hug": -1.5476, "pug": -2.2407, "hugs": -2.2407, "b": -2.4639, "un": -2.4639}
    for tok, v in expect.items():
        assert lp0[tok] == pytest.approx(v, abs=1e-4)
    for tok in ("ug", "g", "h", "n", "p", "s", "u"):
        assert lp0[tok] == pytest.approx(-3.8501, abs=1e-4)
    # the packed form of the fast backend counts the same
    packed = fast_train._pack_words(final, counts)
    assert seed_counts_from_words((packed[0], packed[1], np.diff(packed[1])), counts, len(atoms)) == c


def test_worked_example_rounds(backend):
    words, counts, merges, final = worked_seed()
    atoms = seed_token_atoms(7, merges)
    c = seed_counts_from_words(final, counts, len(atoms))
    r = learn_mingram(words, counts, atoms, c, 7, 10, backend=backend)
    steps = [(kind, [name(t, atoms) for t in order], lp, usage) for kind, order, lp, usage in r.history]
    assert [s[0] for s in steps] == ["seed", "em", "em", "prune", "em", "em"]
    # E1.1: N = pun 12, hug 10, pug 5, hugs 5, b 4, un 4 (T = 40); M1.1 drops ug
    kind, order, lp, usage = steps[1]
    assert {name(t, atoms): n for t, n in enumerate(usage) if n} == {
        "pun": 12,
        "hug": 10,
        "pug": 5,
        "hugs": 5,
        "b": 4,
        "un": 4,
    }
    assert "ug" not in order and len(order) == 12
    by = {name(t, atoms): lp[t] for t in range(len(atoms))}
    assert by["pun"] == math.log(12 / 40) and by["hug"] == math.log(10 / 40)
    assert by["pug"] == by["hugs"] == math.log(5 / 40) and by["b"] == by["un"] == math.log(4 / 40)
    assert all(by[a] == -math.inf for a in "ghnpsu")
    assert steps[2][1] == order  # E/M1.2 identical
    # flat prune to 10: the atoms, then pun, hug, pug; hugs loses the lp tie to pug on seed order
    assert steps[3][1] == list("bghnpsu") + ["pun", "hug", "pug"]
    # round 2: bun -> [b, u, n], hugs -> [hug, s] (both -inf paths)
    kind, order, lp, usage = steps[4]
    assert {name(t, atoms): n for t, n in enumerate(usage) if n} == {
        "hug": 15,
        "pun": 12,
        "pug": 5,
        "s": 5,
        "b": 4,
        "u": 4,
        "n": 4,
    }
    by = {name(t, atoms): lp[t] for t in r.history[4][1]}
    assert round(by["hug"], 4) == -1.1838 and round(by["pun"], 4) == -1.4069
    assert round(by["pug"], 4) == round(by["s"], 4) == -2.2824
    assert round(by["b"], 4) == round(by["u"], 4) == round(by["n"], 4) == -2.5055
    assert by["g"] == by["h"] == by["p"] == -math.inf
    assert [name(t, atoms) for t in r.order] == list("bghnpsu") + ["pun", "hug", "pug"]
    assert r.metadata["total_tokens"] == 49
    assert round(r.metadata["tokens/pretoken"], 5) == 1.36111
    assert round(r.metadata["objective"], 6) == 0.774599
    assert r.metadata["num_iterations"] == 2
    assert r.metadata["totals_removed"] == {"M Step Low Count": [1, 0, 0, 0], "Prune/Score": [2], "Finalize": [0]}
    # 6.4, in memory (raw -inf scores): hhug comes out atom by atom
    trie = build_trie_reference(atoms, r.order)
    cost = costs(r.lp, 1e-5).tolist()
    lens = [len(a) for a in atoms]

    def seg(word):
        return [name(t, atoms) for t in viterbi(ALPHA.initial_ids(word), trie, cost, lens)]

    assert seg("hugs") == ["hug", "s"] and seg("pugs") == ["pug", "s"] and seg("bug") == ["b", "u", "g"]
    assert seg("hhug") == ["h", "h", "u", "g"]


def test_worked_example_through_train(backend, tmp_path):
    """fastsw.train with the character alphabet gives 6's model; the tokenizer floors -inf (in memory and
    loaded alike), so hhug -> [h, hug] both before and after save/load."""
    tok = fastsw.train(
        CORPUS,
        algo="mingram",
        alphabet="chars",
        profile="hf",
        vocab_size=10,
        overshoot=2.0,
        pretokenizer="simple",
        backend=backend,
    )
    assert isinstance(tok, MinGramTokenizer) and tok.algo == "mingram"
    assert tok.vocab == (b"b", b"g", b"h", b"n", b"p", b"s", b"u", b"hug", b"pun", b"pug")
    assert tok.seed_ids == (0, 1, 2, 3, 4, 5, 6, 9, 10, 11)  # 6.3's file ids [1..7, 11, 10, 12], 0-based, sorted
    assert [tok.log_probs[i] for i in (1, 2, 4)] == [LOG_PROB_FLOOR] * 3
    assert tok.training_info["mingram"]["neg_inf_tokens"] == [1, 2, 4]
    path = tmp_path / "m.json"
    tok.save(path)
    loaded = fastsw.load(path)
    assert isinstance(loaded, MinGramTokenizer) and loaded.log_probs == tok.log_probs
    for t in (tok, loaded):
        assert [t.vocab[i] for i in t.encode("hhug")] == [b"h", b"hug"]
        assert [t.vocab[i] for i in t.encode("hugs")] == [b"hug", b"s"]
        assert [t.vocab[i] for i in t.encode("bug")] == [b"b", b"u", b"g"]


def fixed_vocab_segment(word, vocab):
    """Both paths' program with all lp = 0 over a vocabulary of strings."""
    atoms = [tuple(ord(c) for c in v) for v in vocab]
    trie = build_trie_reference(atoms, range(len(atoms)))
    ref = [vocab[t] for t in viterbi([ord(c) for c in word], trie, [0.0] * len(vocab), [len(a) for a in atoms])]
    lat = FastLattice(np.array([ord(c) for c in word], np.int32), np.array([0, len(word)], np.int64), [1], atoms, 128)
    paths, _ = lat.segment(np.arange(len(atoms)), np.zeros(len(atoms)))
    assert [vocab[t] for t in paths.tolist()] == ref
    return ref


def test_tie_rule():
    """MINGRAM.md 2.2: the last writer wins, so the earlier tokens are the long ones."""
    assert fixed_vocab_segment("aaa", ["a", "aa"]) == ["aa", "a"]
    assert fixed_vocab_segment("aaaaa", ["a", "aa"]) == ["aa", "aa", "a"]
    assert fixed_vocab_segment("abc", ["a", "b", "c", "ab", "bc"]) == ["ab", "c"]


def test_score_delta_zero_never_nan():
    """delta = 0: every term is exactly -1 (no 0 * -inf)."""
    assert costs(np.array([-np.inf, -1.0]), 0.0).tolist() == [0.0, 0.0]


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None)
@given(
    st.lists(st.text(alphabet="abc", min_size=2, max_size=4), max_size=8),
    st.lists(st.floats(min_value=-30, max_value=0), min_size=11, max_size=11),
    st.text(alphabet="abc", max_size=20),
)
def test_minimum_token_count(extra, scores, word):
    """No segmentation of a pretoken with the model's vocabulary has fewer tokens than the program's path, and
    the kernel's path is the reference's."""
    vocab = ["a", "b", "c"] + sorted(set(extra))
    atoms = [tuple(ord(c) - 97 for c in v) for v in vocab]
    cost = costs(np.array(scores[: len(vocab)]), 1e-5)
    trie = build_trie_reference(atoms, range(len(atoms)))
    sym = [ord(c) - 97 for c in word]
    path = viterbi(sym, trie, cost.tolist(), [len(a) for a in atoms])
    assert "".join(vocab[t] for t in path) == word
    assert len(path) == _min_cover(sym, trie)[len(sym)]
    lat = FastLattice(np.array(sym, np.int32), np.array([0, len(sym)], np.int64), [1], atoms, 3)
    assert lat.segment(np.arange(len(atoms)), cost)[0].tolist() == path


def packed_corpus(tok_alphabet, docs, pretok):
    from fastsw.corpus.counting import count_corpus

    counts = count_corpus(docs, pretok, collect_runs=False)
    return counts, [tok_alphabet.initial_ids(p) for p in counts.pretokens]


LANGS = ("en", "de", "ru", "zh", "ar")


@pytest.fixture(scope="module")
def multilingual_docs():
    docs = []
    for lang in LANGS:
        texts = read_jsonl_texts(shared_path(f"corpus/{lang}/heldout.jsonl"))
        size = 0
        for t in texts:
            docs.append(t[:4000])
            size += len(t[:4000])
            if size > 30000:
                break
    return docs


@pytest.mark.parametrize("criterion", ["usage_count", "mi"])
def test_fast_equals_reference_on_real_text(multilingual_docs, criterion):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = fastsw.train(
            multilingual_docs, algo="mingram", vocab_size=900, backend="python", prune_criterion=criterion
        )
        fast = fastsw.train(
            multilingual_docs, algo="mingram", vocab_size=900, backend="numba", prune_criterion=criterion
        )
    assert ref.vocab == fast.vocab and ref.log_probs == fast.log_probs and ref.seed_ids == fast.seed_ids
    assert ref.training_info["mingram"]["totals_removed"] == fast.training_info["mingram"]["totals_removed"]
    assert len(ref.vocab) <= 900
    for doc in multilingual_docs[::3]:
        ids = fast.encode(doc)
        assert ids == fast.encode(doc, backend="python") == fast.encode(doc, shortcut=False, backend="python")
        assert fast.decode(ids) == doc
    batch = fast.encode_batch(multilingual_docs)
    assert batch == [fast.encode(d, backend="python") for d in multilingual_docs]


def test_mi_scores_kernel_equals_reference(multilingual_docs):
    """MinGram-PP's scores from the kernel and the reference on a trained model's vocabulary."""
    from fastsw.trainers.mingram_fast import mi_scores_fast

    tok = fastsw.train(multilingual_docs[:20], algo="mingram", vocab_size=600)
    counts, words = packed_corpus(tok.alphabet, multilingual_docs[:20], tok.pretokenizer)
    atoms = list(tok.tokens)
    cost = costs(np.array(tok.log_probs), tok.score_delta)
    ref = mi_scores_reference(
        words, counts.counts, atoms, range(len(atoms)), cost.tolist(), len(tok.alphabet), len(atoms)
    )
    lengths = np.fromiter(map(len, words), np.int64, len(words))
    off = np.zeros(len(words) + 1, np.int64)
    np.cumsum(lengths, out=off[1:])
    lat = FastLattice(
        np.fromiter((a for w in words for a in w), np.int32, int(off[-1])), off, counts.counts, atoms, len(tok.alphabet)
    )
    fast = mi_scores_fast(lat, list(range(len(atoms))), cost, len(tok.alphabet))
    assert fast.tolist() == ref
    assert any(ref)
    usage = e_step_reference(words, counts.counts, atoms, range(len(atoms)), cost.tolist(), len(atoms))
    assert all(m == 0 for m, u in zip(ref, usage) if u == 0)  # never emitted -> MI 0


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None)
@given(st.text(max_size=60))
def test_roundtrip_and_fast_equals_reference_hypothesis(mingram_sample_model, text):
    tok = mingram_sample_model
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        with pytest.raises(ValueError):
            tok.encode(text)
        return
    ids = tok.encode(text)
    assert ids == tok.encode(text, backend="python")
    assert tok.decode(ids) == text


@pytest.fixture(scope="module")
def mingram_sample_model(sample_docs):
    return fastsw.train(sample_docs[:60], algo="mingram", vocab_size=1500)


@pytest.mark.parametrize("pretokenizer", ["script", "simple", "none", "boundary[w,p,d]+caps", "boundary[w]"])
def test_roundtrip_every_pretokenizer(pretokenizer, multilingual_docs):
    docs = multilingual_docs[:12]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = fastsw.train(docs, algo="mingram", vocab_size=700, pretokenizer=pretokenizer)
    assert tok.pretokenizer.mode == pretokenizer.split("[")[0]
    if "boundary" in pretokenizer:  # markers and caps codes are atomic: in the model, never pruned
        names = {r["atomic"] for r in tok.inspect_json()["tokens"] if "atomic" in r}
        assert names == {a.name for a in tok.alphabet.atoms} and "boundary" in names
    tricky = ["", " ", "a" * 3000, "é\u0301 x", "😀😀 mixed Ελληνικά 中文", "\n\n\t  x"]
    for doc in docs + tricky:
        ids = tok.encode(doc)
        assert tok.decode(ids) == doc
        assert ids == tok.encode(doc, backend="python")


def test_pathological_inputs(mingram_sample_model):
    tok = mingram_sample_model
    big = "a" * 200_000
    assert tok.decode(tok.encode(big)) == big
    assert tok.encode_batch(["", "x"]) == [[], tok.encode("x")]
    ids, starts = tok.encode_with_offsets("héllo wörld")
    assert starts[0] == 0 and len(ids) == len(starts)


def test_kernels_compile_one_signature(mingram_sample_model):
    mingram_sample_model.encode_batch(["one document", "two"])
    for kernel in (K._build_trie, K._e_step, K._encode_docs, K._segment_all, K._mi_scores):
        assert len(kernel.signatures) <= 1, kernel.__name__
