"""SPEC section 6: BoundlessBPE ending with r regular merges and s supermerges equals
SuperBPE with a phase 1 of r merges and s supermerges (same merge lists with counts,
same encodings as byte strings; ids differ only by interleaving)."""

import pytest

import fastsw

from conftest import read_jsonl_texts, shared_path


def _as_bytes(tok, supers):
    return [(tok.vocab[m.left], tok.vocab[m.right], m.count) for m in tok.merges if m.super == supers]


def _check_equivalent(boundless, superbpe, texts):
    assert boundless.n_super > 0, "the test needs a model with supermerges"
    assert superbpe.n_regular == boundless.n_regular and superbpe.n_super == boundless.n_super
    assert _as_bytes(superbpe, False) == _as_bytes(boundless, False)
    assert _as_bytes(superbpe, True) == _as_bytes(boundless, True)
    for text in texts:
        a = [boundless.vocab[i] for i in boundless.encode_ordinary(text)]
        b = [superbpe.vocab[i] for i in superbpe.encode_ordinary(text)]
        assert a == b


@pytest.mark.parametrize("profile", ["paper", "hf"])
def test_boundless_equals_matched_superbpe(profile, backend, sample_docs):
    train = sample_docs[::2]
    held = sample_docs[1::2]
    boundless = fastsw.train(train, algo="boundless", vocab_size=900, profile=profile, backend=backend)
    superbpe = fastsw.train(
        train, algo="superbpe", vocab_size=900, supermerges=boundless.n_super, profile=profile, backend=backend
    )
    _check_equivalent(boundless, superbpe, held)


@pytest.mark.parametrize(
    "algo, extra",
    [
        ("bpe", {}),
        ("boundless", {}),
        ("superbpe", {"supermerges": 200}),
        ("boundless", {"greedy_split": True, "min_count_floor": 3}),
    ],
)
@pytest.mark.parametrize("profile", ["paper", "hf"])
def test_numba_backend_equals_reference_on_all_languages(algo, extra, profile, sample_docs):
    kwargs = dict(algo=algo, vocab_size=1500, profile=profile, **extra)
    ref = fastsw.train(sample_docs, backend="python", **kwargs)
    fast = fastsw.train(sample_docs, backend="numba", **kwargs)
    assert fast.merges == ref.merges  # ids, left, right, counts, super flags


def test_boundless_equals_matched_superbpe_on_wikitext():
    path = shared_path("golden/paper_ref/inputs/wikitext2_valid.jsonl")
    boundless = fastsw.train(path, algo="boundless", vocab_size=2000)
    superbpe = fastsw.train(path, algo="superbpe", vocab_size=2000, supermerges=boundless.n_super)
    held = read_jsonl_texts(shared_path("golden/paper_ref/inputs/wikitext2_test.jsonl"), limit=300)
    _check_equivalent(boundless, superbpe, held)


def test_boundless_with_greedy_split_trains_and_round_trips(sample_docs):
    tok = fastsw.train(sample_docs, algo="boundless", vocab_size=900, greedy_split=True, min_count_floor=3)
    info = tok.training_info
    assert info["unique_candidates_after_split"] < info["unique_candidates"]
    for text in sample_docs[:20]:
        assert tok.decode(tok.encode_ordinary(text)) == text


@pytest.mark.parametrize("algo, extra", [("boundless", {}), ("superbpe", {"supermerges": 60})])
def test_trained_superword_model_reuses_phase1_reachability(algo, extra, sample_docs, monkeypatch):
    # train() hands phase 1's reachable/eligible tokens to the final model instead of encoding
    # every token again; a model built from scratch with the same merges must agree
    computed = []
    original = fastsw.Tokenizer._reachable_tokens

    def spy(self):
        if self.vocab_size > 300:  # not the encoding kernels' warmup model (246 tokens)
            computed.append(1)
        return original(self)

    monkeypatch.setattr(fastsw.Tokenizer, "_reachable_tokens", spy)
    tok = fastsw.train(sample_docs, algo=algo, vocab_size=700, **extra)
    assert tok.n_super > 0 and len(computed) == 1  # phase 1's tokenizer only
    fresh = fastsw.Tokenizer(
        alphabet=tok.alphabet,
        merges=tok.merges and [tuple(m[1:]) for m in tok.merges],
        pretokenizer=tok.pretokenizer,
        profile=tok.profile,
        algo=tok.algo,
    )
    assert tok._shortcut == fresh._shortcut and tok._eligible == fresh._eligible
    assert len(tok._eligible) > 100
    bad = (dict(tok.reachability()[0]), tok.reachability()[1])
    bad[0][b"\x00\x01\x02\x03"] = 5  # bytes that are not token 5's
    with pytest.raises(ValueError, match="other regular merges"):
        fastsw.Tokenizer(
            alphabet=tok.alphabet,
            merges=[tuple(m[1:]) for m in tok.merges],
            pretokenizer=tok.pretokenizer,
            profile=tok.profile,
            algo=tok.algo,
            _reachability=bad,
        )
