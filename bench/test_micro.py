"""Micro benchmarks in pytest-benchmark form: fastsw beside tiktoken and HF ``tokenizers``.

    pip install -e ".[bench]"
    pytest bench/ --benchmark-only                       # all groups
    pytest bench/ --benchmark-only -k sentence           # one group
    pytest bench/ --benchmark-only --benchmark-json=out.json

Not part of the default test run (``testpaths = ["tests"]``). Every benchmark first
asserts that the peers give exactly fastsw's ids (or pretokens, or merges) on the same
input, so a faster but different answer is never reported. The model is a plain BPE
with the ``simple`` pre-tokenizer (the only kind tiktoken and HF can reproduce exactly),
trained on the first 5 MB of ``../shared/corpus/en/train.jsonl.gz`` and cached in
``bench/results/models/``. Whole runs with peak RSS and separate processes stay in the
scripts (``bench_train.py``, ``bench_encode.py``, ``bench_pretokenize.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import fastsw
from _corpus import SHARED, read_docs
from bench_encode import model

VOCAB = 32768
SENTENCE = "The cat sat on the mat today."


@pytest.fixture(scope="session")
def models_dir():
    path = Path(__file__).resolve().parent / "results" / "models"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def train_docs():
    return read_docs(SHARED / "corpus" / "en" / "train.jsonl.gz", 5_000_000)[0]


@pytest.fixture(scope="session")
def tok(train_docs, models_dir):
    return model(f"bpe-simple-{VOCAB}-en5MB", train_docs, models_dir, algo="bpe", vocab_size=VOCAB)


@pytest.fixture(scope="session")
def heldout():
    return read_docs(SHARED / "corpus" / "en" / "heldout.jsonl")[0]


@pytest.fixture(scope="session")
def one_mb(heldout):
    parts, size = [], 0
    for d in heldout:
        parts.append(d)
        size += len(d.encode("utf-8")) + 1
        if size >= 1_000_000:
            break
    return "\n".join(parts)


@pytest.fixture(scope="session")
def encoders(tok, tmp_path_factory):
    """name -> (encode one text, encode a batch), all giving lists of ids."""
    import tokenizers

    enc = tok.to_tiktoken()
    path = tmp_path_factory.mktemp("hf") / "tokenizer.json"
    assert tok.save_hf(path)["exact"]
    hf = tokenizers.Tokenizer.from_file(str(path))
    return {
        "tiktoken_encoding": enc,
        "hf_tokenizer": hf,
        "fastsw": (tok.encode_ordinary, tok.encode_ordinary_batch),
        "tiktoken": (enc.encode_ordinary, enc.encode_ordinary_batch),
        "hf": (
            lambda t: hf.encode(t, add_special_tokens=False).ids,
            lambda ts: [e.ids for e in hf.encode_batch(ts, add_special_tokens=False)],
        ),
    }


PEERS = ["fastsw", "tiktoken", "hf"]


SENTENCE_CALLS = {  # per-call overhead (the target: fastsw.encode <= 1.5 x tiktoken.encode)
    "fastsw.encode": lambda tok, enc, hf: tok.encode,
    "fastsw.encode_ordinary": lambda tok, enc, hf: tok.encode_ordinary,
    "fastsw.encode[backend=python]": lambda tok, enc, hf: lambda t: tok.encode(t, backend="python"),
    "tiktoken.encode": lambda tok, enc, hf: enc.encode,
    "tiktoken.encode_ordinary": lambda tok, enc, hf: enc.encode_ordinary,
    "hf": lambda tok, enc, hf: lambda t: hf.encode(t, add_special_tokens=False).ids,
}


@pytest.mark.benchmark(group="encode: one sentence")
@pytest.mark.parametrize("name", list(SENTENCE_CALLS))
def test_encode_sentence(benchmark, encoders, tok, name):
    call = SENTENCE_CALLS[name](tok, encoders["tiktoken_encoding"], encoders["hf_tokenizer"])
    expected = tok.encode_ordinary(SENTENCE, backend="python")
    assert call(SENTENCE) == expected  # also the warm-up: JIT, the per-pretoken cache
    assert benchmark.pedantic(call, args=(SENTENCE,), rounds=200, iterations=200, warmup_rounds=5) == expected


@pytest.mark.benchmark(group="encode: 1 MB document")
@pytest.mark.parametrize("name", PEERS)
def test_encode_1mb(benchmark, encoders, tok, one_mb, name):
    one, _ = encoders[name]
    assert one(one_mb) == tok.encode_ordinary(one_mb)
    benchmark.pedantic(one, args=(one_mb,), rounds=5, warmup_rounds=1)


@pytest.mark.benchmark(group="encode: batch of held-out documents")
@pytest.mark.parametrize("name", PEERS)
def test_encode_batch(benchmark, encoders, tok, heldout, name):
    _, batch = encoders[name]
    assert [list(x) for x in batch(heldout)] == [tok.encode_ordinary(d) for d in heldout]
    benchmark.pedantic(batch, args=(heldout,), rounds=5, warmup_rounds=1)


FEW_MERGES_TEXTS = {  # text where the merge loops do most of the work (fastsw.encoding.encode_kernels notes (8))
    "th held-out": lambda heldout: read_docs(SHARED / "corpus" / "th" / "heldout.jsonl")[0],  # almost no merge
    "my held-out": lambda heldout: read_docs(SHARED / "corpus" / "my" / "heldout.jsonl")[0],  # no merge at all
    "en held-out, letters only": lambda heldout: ["".join(c for c in " ".join(heldout) if c.isalpha())],
}


@pytest.mark.benchmark(group="encode: text the English model barely knows, one document at a time")
@pytest.mark.parametrize("text", list(FEW_MERGES_TEXTS))
@pytest.mark.parametrize("name", ["fastsw", "tiktoken"])
def test_encode_few_merges(benchmark, encoders, tok, heldout, text, name):
    one, _ = encoders[name]
    docs = FEW_MERGES_TEXTS[text](heldout)
    assert [one(d) for d in docs] == [tok.encode_ordinary(d, backend="python") for d in docs]
    benchmark.pedantic(lambda: [one(d) for d in docs], rounds=5, warmup_rounds=1)


@pytest.mark.benchmark(group="pre-tokenize 1 MB")
@pytest.mark.parametrize("name", ["fastsw native", "fastsw reference (regex)", "hf Split"])
def test_pretokenize_1mb(benchmark, one_mb, name):
    pre = fastsw.Pretokenizer(mode="simple")
    if name == "fastsw native":
        fn = pre.pretokenize
    elif name == "fastsw reference (regex)":
        fn = pre.pretokenize_reference
    else:
        from tokenizers import Regex, pre_tokenizers

        split = pre_tokenizers.Split(Regex(pre.main_pattern), behavior="isolated")
        fn = lambda text: [p for p, _ in split.pre_tokenize_str(text)]  # noqa: E731
    assert fn(one_mb) == pre.pretokenize_reference(one_mb)
    benchmark.pedantic(fn, args=(one_mb,), rounds=5, warmup_rounds=1)


@pytest.fixture(scope="session")
def count_table(train_docs):
    from fastsw.corpus.counting import count_corpus

    return count_corpus(train_docs[: len(train_docs) // 5], fastsw.Pretokenizer(mode="simple"), collect_runs=False)


@pytest.mark.benchmark(group="phase 1 (BPE 8192) on a 1 MB count table")
@pytest.mark.parametrize("backend", ["numba", "python"])
def test_phase1_from_counts(benchmark, count_table, backend):
    def train():
        return fastsw.train(from_counts=count_table, algo="bpe", vocab_size=8192, backend=backend)

    reference = fastsw.train(from_counts=count_table, algo="bpe", vocab_size=8192, backend="python")
    assert train().merges == reference.merges
    benchmark.pedantic(train, rounds=3, warmup_rounds=1)
