"""Per-call overhead on one short sentence: fastsw against tiktoken (issue #8, item 5).

    python -m pytest bench/ --benchmark-only            # from the repository root

Not collected by the default test run (``testpaths = ["tests"]``). The model is plain BPE, vocab 4096, ``simple``
pre-tokenizer, trained on the bundled sample, so that ``Tokenizer.to_tiktoken()`` gives tiktoken the same
encoding. Each timed call's ids are asserted identical to tiktoken's before and after timing. Compare the rows of
the "short sentence" group: the target is ``fastsw.encode`` <= 1.5 x ``tiktoken.encode``.
"""
import pytest

import fastsw
from fastsw.sample import sample_documents

SENTENCE = "The cat sat on the mat today."


@pytest.fixture(scope="module")
def models():
    tok = fastsw.train(list(sample_documents()), algo="bpe", vocab_size=4096, pretokenizer="simple")
    return tok, tok.to_tiktoken()


CALLS = {
    "tiktoken.encode": lambda tok, enc: enc.encode,
    "tiktoken.encode_ordinary": lambda tok, enc: enc.encode_ordinary,
    "fastsw.encode": lambda tok, enc: tok.encode,
    "fastsw.encode_ordinary": lambda tok, enc: tok.encode_ordinary,
    "fastsw.encode[backend=python]": lambda tok, enc: (lambda text: tok.encode(text, backend="python")),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_encode_short_sentence(benchmark, models, name):
    tok, enc = models
    call = CALLS[name](tok, enc)
    expected = enc.encode(SENTENCE)
    assert call(SENTENCE) == expected  # also the warm-up: JIT compilation, the per-pretoken cache
    benchmark.group = "short sentence"
    result = benchmark.pedantic(call, args=(SENTENCE,), rounds=200, iterations=200, warmup_rounds=5)
    assert result == expected
