"""The public API's edges (issue #8, item 10): special-token options exactly as tiktoken (checked against tiktoken
itself), batch arguments, id and thread types."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fastsw
from conftest import HYPOTHESIS_EXAMPLES

SPECIALS = ["<s>", "<s>x", "<|endoftext|>"]
BACKENDS = ["python", "numba"]


@pytest.fixture(scope="module")
def bpe(sample_docs):
    """Plain BPE, simple pre-tokenizer (so tiktoken reproduces it), with overlapping special tokens."""
    return fastsw.train(sample_docs[:300], algo="bpe", vocab_size=500, pretokenizer="simple",
                        special_tokens=SPECIALS)


@pytest.fixture(scope="module")
def tt(bpe):
    return bpe.to_tiktoken()


def outcome(call):
    """("ids", ids) or ("raises", exception type)."""
    try:
        return "ids", list(call())
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return "raises", type(e)


# ---- special tokens: tiktoken's rules ------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_disallowed_special_inside_an_allowed_one_raises_as_tiktoken(bpe, tt, backend):
    # tiktoken searches the text for every disallowed string: "<s>" occurs inside "<s>x", so allowing "<s>x"
    # does not make "a<s>x" acceptable while "<s>" is disallowed (explicitly, or by "all").
    text = "a<s>x b"
    for kw in ({"allowed_special": {"<s>x"}, "disallowed_special": {"<s>"}}, {"allowed_special": {"<s>x"}}):
        with pytest.raises(ValueError):
            tt.encode(text, **kw)
        with pytest.raises(ValueError, match="'<s>' at position 1"):
            bpe.encode(text, backend=backend, **kw)
        with pytest.raises(ValueError, match="texts\\[1\\] contains the special token '<s>'"):
            bpe.encode_to_numpy(["ok", text], backend=backend, **kw)
        with pytest.raises(ValueError, match="'<s>'"):
            bpe.encode_batch(["ok", text], backend=backend, **kw)
    kw = {"allowed_special": {"<s>x"}, "disallowed_special": ()}
    assert bpe.encode(text, backend=backend, **kw) == tt.encode(text, **kw) == \
        [*bpe.encode_ordinary("a"), bpe.special_tokens["<s>x"], *bpe.encode_ordinary(" b")]
    assert bpe.encode(text, allowed_special="all", backend=backend) == tt.encode(text, allowed_special="all")


@pytest.mark.parametrize("backend", BACKENDS)
def test_special_options_are_checked(bpe, backend):
    with pytest.raises(TypeError, match="allowed_special=\\{'<s>'\\}"):
        bpe.encode("a", allowed_special="<s>", backend=backend)  # a str that is not "all" is not a set
    with pytest.raises(TypeError, match="disallowed_special"):
        bpe.encode("a", disallowed_special="<s>", backend=backend)
    with pytest.raises(ValueError, match="does not have.*<\\|fim\\|>"):
        bpe.encode("a", disallowed_special={"<|fim|>"}, backend=backend)
    with pytest.raises(ValueError, match="does not have"):
        bpe.encode_to_numpy(["a"], allowed_special={"<|fim|>"}, backend=backend)


PIECES = ["<s>", "<s>x", "<|endoftext|>", "<", "s>", "x", "<|", "|>", " ", "a", "hello", " world", "é", "\n"]


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(text=st.one_of(st.lists(st.sampled_from(PIECES), max_size=20).map("".join), st.text(max_size=30)),
       allowed=st.one_of(st.just("all"), st.frozensets(st.sampled_from(SPECIALS))),
       disallowed=st.one_of(st.just("all"), st.just(()), st.frozensets(st.sampled_from(SPECIALS))))
def test_special_tokens_agree_with_tiktoken(bpe, tt, text, allowed, disallowed):
    kw = {"allowed_special": allowed, "disallowed_special": disallowed}
    expected = outcome(lambda: tt.encode(text, **kw))
    for backend in BACKENDS:
        got = outcome(lambda: bpe.encode(text, backend=backend, **kw))
        assert got[0] == expected[0], (got, expected)  # raises exactly when tiktoken raises
        if got[0] == "raises":
            assert got[1] is ValueError
            continue
        # Where allowed specials overlap ("<s>" inside "<s>x"), tiktoken takes whichever its hash map lists
        # first; fastsw takes the longest. Elsewhere the ids are tiktoken's.
        if "<s>x" not in text:
            assert got == expected
        assert bpe.decode(got[1]) == text
        ids, offsets = bpe.encode_to_numpy([text, "x", text], backend=backend, **kw)
        assert ids[offsets[0]:offsets[1]].tolist() == ids[offsets[2]:offsets[3]].tolist() == got[1]
        assert bpe.encode_batch([text], backend=backend, **kw) == [got[1]]


@pytest.mark.parametrize("backend", BACKENDS)
def test_encode_to_numpy_takes_the_special_options(bpe, backend):
    texts = ["a<|endoftext|>b<s>", "", "<s>x<s>", "plain text", "<|endoftext|>"]
    with pytest.raises(ValueError, match="disallowed"):  # the default, as tiktoken's encode_to_numpy
        bpe.encode_to_numpy(texts, backend=backend)
    for kw in ({"allowed_special": "all"}, {"allowed_special": {"<s>"}, "disallowed_special": ()},
               {"disallowed_special": ()}):
        ids, offsets = bpe.encode_to_numpy(texts, backend=backend, **kw)
        assert ids.dtype == np.int32 and offsets.dtype == np.int64
        assert [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == \
            [bpe.encode(t, backend="python", **kw) for t in texts]
        assert bpe.encode_batch(texts, backend=backend, **kw) == [bpe.encode(t, **kw) for t in texts]


# ---- batch arguments, id and thread types ---------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_batch_methods_reject_a_bare_str(bpe, backend):
    for method in (bpe.encode_batch, bpe.encode_ordinary_batch, bpe.encode_to_numpy):
        with pytest.raises(TypeError, match="wrap one text as \\[text\\]"):
            method("a string", backend=backend)
        with pytest.raises(TypeError, match="texts\\[1\\] is bytes"):
            method(["ok", b"bytes"], backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_num_threads_must_be_a_positive_int(bpe, backend):
    for method in (bpe.encode_batch, bpe.encode_ordinary_batch, bpe.encode_to_numpy):
        for bad in ("2", 2.0, True):
            with pytest.raises(TypeError, match="num_threads"):
                method(["a b"], num_threads=bad, backend=backend)
        with pytest.raises(ValueError, match="num_threads=0"):
            method(["a b"], num_threads=0, backend=backend)
    assert bpe.encode_batch(["a b"], num_threads=2, backend=backend) == [bpe.encode("a b")]


def test_decode_rejects_ids_that_are_not_integers(bpe):
    ids = bpe.encode("hello")
    assert bpe.decode(np.array(ids, np.int64)) == "hello"  # numpy integers are integers
    for bad in ([1.5], [ids[0], "1"], [np.float64(ids[0])], [None]):
        with pytest.raises(TypeError, match="token ids must be integers"):
            bpe.decode(bad)
        with pytest.raises(TypeError, match="token ids must be integers"):
            bpe.decode_bytes(bad)
