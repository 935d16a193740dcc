"""The `paper` profile reproduces the authors' reference implementation exactly
(../shared/golden/paper_ref): merges with counts, intermediate aggregates, held-out
encodings and the hash of the whole held-out test set."""

import hashlib

import pytest

import fastsw
from fastsw.alphabet import default_alphabet, render
from fastsw.corpus.readers import iter_documents
from fastsw.trainers.bpe_fast import FastBackend, unpack_candidates
from fastsw.trainers.superword import ReferenceBackend
from fastsw.trainers.train import phase1_tokenizer

from conftest import BACKENDS, GOLDEN_RUNS as RUNS, golden_json


@pytest.fixture(scope="module")
def counts(golden_counts):
    return golden_counts


@pytest.fixture(
    scope="module",
    params=[(name, backend) for name in sorted(RUNS) for backend in BACKENDS],
    ids=lambda p: f"{p[0]}-{p[1]}",
)
def run(request, golden_dir):
    """Each golden run, trained on the reference path and on the Numba path."""
    name, backend = request.param
    gold = golden_json(golden_dir, name)
    tok = fastsw.train(golden_dir / "inputs/wikitext2_valid.jsonl", backend=backend, **RUNS[name])
    assert tok.training_info["backend"] == backend
    return name, gold, tok


def test_merges_match(run):
    name, gold, tok = run
    mine = [(m.id, tok.vocab[m.left].hex(), tok.vocab[m.right].hex(), m.count, m.super) for m in tok.merges]
    expected = [(m["id"], m["left"], m["right"], m["count"], m["super"]) for m in gold["merges"]]
    assert mine == expected
    assert tok.n_regular == gold["n_regular_merges"]
    assert tok.n_super == gold["n_supermerges"]
    assert tok.vocab_size == gold["vocab_size_without_special"]


def test_heldout_encodings_match(run):
    name, gold, tok = run
    assert gold["encodings"]
    for item in gold["encodings"]:
        ids = tok.encode_ordinary(item["text"])
        assert ids == item["ids"], item["text"][:60]
        assert [tok.vocab[i].hex() for i in ids] == item["tokens_hex"]
        assert tok.encode_ordinary(item["text"], shortcut=False) == ids
        assert tok.decode(ids) == item["text"]


def test_whole_test_set_hash(run, golden_dir):
    name, gold, tok = run
    digest = hashlib.sha256()
    total = 0
    for doc in iter_documents(golden_dir / "inputs/wikitext2_test.jsonl"):
        ids = tok.encode_ordinary(doc)
        total += len(ids)
        digest.update((",".join(map(str, ids)) + "\n").encode())
    assert total == gold["test_set"]["total_tokens"]
    assert digest.hexdigest() == gold["test_set"]["sha256_of_ids"]


def test_phase1_pretokens_match(counts, golden_dir):
    lines = (golden_dir / "intermediate/phase1_pretokens.tsv").read_text(encoding="utf-8").splitlines()
    expected = [line.split("\t") for line in lines]
    mine = sorted(((c, p.encode()) for p, c in zip(counts.pretokens, counts.counts)), reverse=True)
    assert [[str(c), render(b)] for c, b in mine] == expected


@pytest.mark.parametrize("packed", [False, True], ids=["python", "packed"])
def test_boundless_candidates_match(counts, golden_dir, packed):
    alphabet = default_alphabet("paper")
    # the fast path: packed phase-1 words, packed runs, aggregate_runs
    stages = FastBackend() if packed else ReferenceBackend()
    merges, words, token_bytes = stages.phase1(counts, alphabet, "paper", 2000 - len(alphabet))
    tok1 = phase1_tokenizer(alphabet, merges, fastsw.Pretokenizer(), "paper")
    cands = stages.candidates(counts, words, tok1)
    if packed:
        cands = unpack_candidates(cands)
    lines = (golden_dir / "intermediate/boundless_2000_candidates.tsv").read_text(encoding="utf-8").splitlines()
    expected = [line.split("\t") for line in lines]
    mine = sorted(((c, tuple(token_bytes[t] for t in seq)) for seq, c in cands.items()), reverse=True)
    assert [[str(c)] + [render(b) for b in seq] for c, seq in mine] == expected
