"""The public API's edges and the names users know from tiktoken and HF tokenizers:
special-token options exactly as tiktoken (checked against tiktoken itself), batch arguments, id types, the
single-token methods, ``get_vocab`` against an HF export, and ``encode_with_offsets``."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fastsw
from conftest import BACKENDS, HYPOTHESIS_EXAMPLES

SPECIALS = ["<s>", "<s>x", "<|endoftext|>"]


@pytest.fixture(scope="module")
def bpe(sample_docs):
    """Plain BPE, simple pre-tokenizer (so tiktoken reproduces it), with overlapping special tokens."""
    return fastsw.train(sample_docs[:300], algo="bpe", vocab_size=500, pretokenizer="simple", special_tokens=SPECIALS)


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
            bpe.encode_batch_to_numpy(["ok", text], backend=backend, **kw)
        with pytest.raises(ValueError, match="'<s>'"):
            bpe.encode_batch(["ok", text], backend=backend, **kw)
    kw = {"allowed_special": {"<s>x"}, "disallowed_special": ()}
    assert (
        bpe.encode(text, backend=backend, **kw)
        == tt.encode(text, **kw)
        == [bpe.encode_single_token("a"), bpe.special_tokens["<s>x"], *bpe.encode_ordinary(" b")]
    )
    assert bpe.encode(text, allowed_special="all", backend=backend) == tt.encode(text, allowed_special="all")


def test_special_options_are_checked(bpe, backend):
    with pytest.raises(TypeError, match="allowed_special=\\{'<s>'\\}"):
        bpe.encode("a", allowed_special="<s>", backend=backend)  # a str that is not "all" is not a set
    with pytest.raises(TypeError, match="disallowed_special"):
        bpe.encode("a", disallowed_special="<s>", backend=backend)
    with pytest.raises(ValueError, match="does not have.*<\\|fim\\|>"):
        bpe.encode("a", disallowed_special={"<|fim|>"}, backend=backend)
    with pytest.raises(ValueError, match="does not have"):
        bpe.encode_batch_to_numpy(["a"], allowed_special={"<|fim|>"}, backend=backend)


PIECES = ["<s>", "<s>x", "<|endoftext|>", "<", "s>", "x", "<|", "|>", " ", "a", "hello", " world", "é", "\n"]


@settings(
    max_examples=HYPOTHESIS_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    text=st.one_of(st.lists(st.sampled_from(PIECES), max_size=20).map("".join), st.text(max_size=30)),
    allowed=st.one_of(st.just("all"), st.frozensets(st.sampled_from(SPECIALS))),
    disallowed=st.one_of(st.just("all"), st.just(()), st.frozensets(st.sampled_from(SPECIALS))),
)
def test_special_tokens_agree_with_tiktoken(bpe, tt, text, allowed, disallowed):
    kw = {"allowed_special": allowed, "disallowed_special": disallowed}
    expected = outcome(lambda: tt.encode(text, **kw))
    for backend in BACKENDS:
        got = outcome(lambda backend=backend: bpe.encode(text, backend=backend, **kw))
        assert got[0] == expected[0], (got, expected)  # raises exactly when tiktoken raises
        if got[0] == "raises":
            assert got[1] is ValueError
            continue
        # Where allowed specials overlap ("<s>" inside "<s>x"), tiktoken takes whichever its hash map lists
        # first; fastsw takes the longest. Elsewhere the ids are tiktoken's.
        if "<s>x" not in text:
            assert got == expected
        assert bpe.decode(got[1]) == text
        ids, offsets = bpe.encode_batch_to_numpy([text, "x", text], backend=backend, **kw)
        assert ids[offsets[0] : offsets[1]].tolist() == ids[offsets[2] : offsets[3]].tolist() == got[1]
        assert bpe.encode_batch([text], backend=backend, **kw) == [got[1]]


def test_encode_batch_to_numpy_takes_the_special_options(bpe, backend):
    texts = ["a<|endoftext|>b<s>", "", "<s>x<s>", "plain text", "<|endoftext|>"]
    with pytest.raises(ValueError, match="disallowed"):  # the default, as in tiktoken
        bpe.encode_batch_to_numpy(texts, backend=backend)
    for kw in (
        {"allowed_special": "all"},
        {"allowed_special": {"<s>"}, "disallowed_special": ()},
        {"disallowed_special": ()},
    ):
        ids, offsets = bpe.encode_batch_to_numpy(texts, backend=backend, **kw)
        assert ids.dtype == np.int32 and offsets.dtype == np.int64
        assert [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == [
            bpe.encode(t, backend="python", **kw) for t in texts
        ]
        assert bpe.encode_batch(texts, backend=backend, **kw) == [bpe.encode(t, **kw) for t in texts]


# ---- batch arguments, id and thread types ---------------------------------------------------------------------------


def test_batch_methods_reject_a_bare_str(bpe, backend):
    for method in (bpe.encode_batch, bpe.encode_ordinary_batch, bpe.encode_batch_to_numpy):
        with pytest.raises(TypeError, match="wrap one text as \\[text\\]"):
            method("a string", backend=backend)
        with pytest.raises(TypeError, match="texts\\[1\\] is bytes"):
            method(["ok", b"bytes"], backend=backend)


def test_num_threads_must_be_a_positive_int(bpe, backend):
    for method in (bpe.encode_batch, bpe.encode_ordinary_batch, bpe.encode_batch_to_numpy):
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
    with pytest.raises(TypeError, match="token ids must be integers"):
        bpe.decode_single_token_bytes(1.0)


# ---- methods people expect ---------------------------------------------------------------------------------------


def test_single_token_methods_agree_with_tiktoken(bpe, tt):
    for token in (b"a", b" the", b"<s>", "<|endoftext|>", "<s>x", b"\xc3", "é"):
        tid = bpe.encode_single_token(token)
        assert tid == tt.encode_single_token(token)
        assert bpe.decode_single_token_bytes(tid) == tt.decode_single_token_bytes(tid)
    for tid in range(bpe.n_vocab):
        assert bpe.decode_single_token_bytes(tid) == tt.decode_single_token_bytes(tid)
    with pytest.raises(KeyError):
        bpe.encode_single_token("not one token at all")
    with pytest.raises(KeyError):
        bpe.decode_single_token_bytes(bpe.n_vocab)
    with pytest.raises(TypeError):
        bpe.encode_single_token(97)
    assert bpe.eot_token == tt.eot_token == bpe.special_tokens["<|endoftext|>"]
    texts = ["hello world", "", "<s> é\n"]
    assert bpe.decode_batch(bpe.encode_batch(texts, disallowed_special=())) == texts
    assert bpe.decode_batch([[bpe.encode_single_token("\xe9".encode()[:1])]]) == ["\ufffd"]
    assert bpe.decode_batch([[bpe.encode_single_token(b"\xc3")]], errors="ignore") == [""]


def test_eot_token_needs_the_special_token(multilingual_boundless):
    with pytest.raises(AttributeError, match="special_tokens=\\['<\\|endoftext\\|>'\\]"):
        _ = multilingual_boundless.eot_token
    assert not hasattr(multilingual_boundless, "eot_token")


def test_get_vocab_is_hf_s(bpe, tmp_path):
    from tokenizers import Tokenizer as HFTokenizer

    vocab = bpe.get_vocab()
    assert vocab["Ġthe"] == bpe.encode_single_token(" the") and vocab["<|endoftext|>"] == bpe.eot_token
    assert len(vocab) == bpe.n_vocab  # no two tokens of this model share bytes
    path = tmp_path / "tokenizer.json"
    bpe.save_hf(path)
    hf = HFTokenizer.from_file(str(path)).get_vocab()
    assert {s: i for s, i in hf.items() if i < bpe.n_vocab} == vocab  # HF adds the bytes missing from bytes243
    for s, i in vocab.items():
        assert bpe.token_to_id(s) == i and bpe.id_to_token(i) == s
    assert bpe.token_to_id("no such token") is None and bpe.id_to_token(bpe.n_vocab) is None
    vocab["Ġthe"] = -1  # a copy: the model is not changed
    assert bpe.token_to_id("Ġthe") == bpe.encode_single_token(" the")


def test_get_vocab_keeps_the_smallest_of_duplicate_ids():
    from fastsw.alphabet import ByteAlphabet

    alphabet = ByteAlphabet("bytes256")
    a, b, c = (alphabet.id_of_byte(ord(ch)) for ch in "abc")
    n = len(alphabet)
    # a + b -> n "ab", ab + c -> n + 1 "abc"; b + c -> n + 2 "bc", a + bc -> n + 3 "abc" again
    tok = fastsw.Tokenizer(
        alphabet=alphabet,
        merges=[(a, b, 1, False), (n, c, 1, False), (b, c, 1, False), (a, n + 2, 1, False)],
        pretokenizer=fastsw.Pretokenizer(),
    )
    assert tok.vocab[n + 1] == tok.vocab[n + 3] == b"abc"
    assert tok.get_vocab()["abc"] == n + 1 and tok.id_to_token(n + 3) == "abc"
    assert tok.encode_single_token("abc") == tok.encode("abc")[0] == n + 1


HARD = "aé 中文 👍🏽 e\u0301\n" + "\U0001f600"


def test_encode_with_offsets_by_hand(bpe, tt, backend):
    ids, offsets = bpe.encode_with_offsets(HARD, backend=backend)
    assert ids == bpe.encode(HARD)
    assert (ids, offsets) == (tt.encode(HARD), tt.decode_with_offsets(tt.encode(HARD))[1])
    # "<s>" allowed: the special token starts where its text does
    ids, offsets = bpe.encode_with_offsets("ab<s>c", allowed_special="all", backend=backend)
    assert ids[offsets.index(2)] == bpe.special_tokens["<s>"]
    assert bpe.encode_with_offsets("") == ([], [])


def char_of_byte(text: str, byte: int) -> int:
    """The index of the character of ``text`` that contains UTF-8 byte ``byte``."""
    total = 0
    for i, c in enumerate(text):
        total += len(c.encode("utf-8"))
        if total > byte:
            return i
    raise AssertionError("byte beyond the text")


@pytest.mark.parametrize("model", ["bpe", "multilingual_superbpe"])
@settings(
    max_examples=HYPOTHESIS_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(text=st.one_of(st.text(), st.text(alphabet=HARD + " the<s>")))
def test_offsets_and_round_trip_properties(request, model, text):
    tok = request.getfixturevalue(model)
    ids, offsets = tok.encode_with_offsets(text, disallowed_special=())
    assert ids == tok.encode(text, disallowed_special=()) and tok.decode(ids) == text
    assert len(offsets) == len(ids)
    # each token starts in the character that holds its first byte
    starts = np.cumsum([0] + [len(tok.decode_single_token_bytes(t)) for t in ids])[:-1]
    assert offsets == [char_of_byte(text, int(b)) for b in starts]
    assert tok.decode_batch(tok.encode_batch([text, text[::-1]], disallowed_special=())) == [text, text[::-1]]
    if model == "bpe":
        assert offsets == request.getfixturevalue("tt").decode_with_offsets(ids)[1]


@pytest.mark.parametrize("kind", ["bpe", "boundless", "tiktoken"])
def test_str_subclasses_are_text(bpe, sample_docs, kind, backend):
    """numpy.str_ (what np.array(texts) holds) and other str subclasses encode as their plain str, on both paths,
    through every encode entry point, small texts (the cached shortcut) and long ones."""
    if kind == "bpe":
        tok = bpe
    elif kind == "boundless":
        tok = fastsw.train(sample_docs[:200], algo="boundless", vocab_size=400)
    else:
        from fastsw.io.tiktoken_vocab import bpe_openai_rank_file

        tok = fastsw.Tokenizer.load_tiktoken(bpe_openai_rank_file("o200k_base"))

    class Text(str):
        pass

    plain = [sample_docs[0][:40], sample_docs[1], "a<s>b"]
    for texts in (list(np.array(plain)), [Text(t) for t in plain]):
        assert type(texts[0]) is not str
        kw = {"disallowed_special": ()}
        want = [tok.encode(t, backend="python", **kw) for t in plain]
        assert [tok.encode(t, backend=backend, **kw) for t in texts] == want
        assert [tok.encode_ordinary(t, backend=backend) for t in texts] == want
        assert tok.encode_batch(texts, backend=backend, **kw) == want
        assert tok.encode_batch(np.array(plain), backend=backend, **kw) == want
        assert tok.encode_ordinary_batch(texts, backend=backend) == want
        ids, offsets = tok.encode_batch_to_numpy(texts, backend=backend, **kw)
        assert [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == want
        assert [tok.encode_with_offsets(t, backend=backend, **kw)[0] for t in texts] == want
        assert tok.encode(texts[2], allowed_special="all", backend=backend) == tok.encode(
            plain[2], allowed_special="all", backend="python"
        )


def test_special_tokens_as_one_string_says_to_pass_a_list(sample_docs):
    with pytest.raises(TypeError, match=r"special_tokens must be a list of strings.*\['<\|endoftext\|>'\]"):
        fastsw.train(sample_docs[:20], algo="bpe", vocab_size=300, special_tokens="<|endoftext|>")


# ---- tiktoken's names: encode_to_numpy, decode_tokens_bytes, decode_with_offsets, special_tokens_set, ... ---------


def test_encode_to_numpy_is_tiktokens(bpe, tt, backend):
    long_text = "plain text with <s> inside, and more words after it. " * 20  # past the small-text path
    for text, kw in (
        ("hello world", {}),
        ("", {}),
        (HARD, {}),
        (long_text, {"disallowed_special": ()}),
        ("a<|endoftext|>b<s>", {"allowed_special": "all"}),
        ("a<|endoftext|>b", {"allowed_special": {"<|endoftext|>"}}),
    ):
        arr = bpe.encode_to_numpy(text, backend=backend, **kw)
        want = tt.encode_to_numpy(text, **kw)
        assert arr.dtype == want.dtype == np.uint32 and arr.ndim == 1
        assert arr.tolist() == want.tolist() == bpe.encode(text, **kw)
    for text in ("a<s>", long_text):
        with pytest.raises(ValueError, match="disallowed"):
            bpe.encode_to_numpy(text, backend=backend)
    with pytest.raises(TypeError):
        bpe.encode_to_numpy(b"bytes", backend=backend)


def test_encode_to_numpy_with_a_list_keeps_the_batch_result_with_a_warning(bpe, backend):
    texts = ["hello world", "", "a<s>"]
    with pytest.warns(DeprecationWarning, match="encode_batch_to_numpy"):
        ids, offsets = bpe.encode_to_numpy(texts, disallowed_special=(), backend=backend)
    want_ids, want_offsets = bpe.encode_batch_to_numpy(texts, disallowed_special=(), backend=backend)
    assert ids.dtype == np.int32 and ids.tolist() == want_ids.tolist()
    assert offsets.tolist() == want_offsets.tolist()
    with pytest.warns(DeprecationWarning):
        assert bpe.encode_to_numpy(("x", "y"))[1].tolist() == [0, 1, 2]


def test_decode_tokens_bytes_special_tokens_set_and_max_token_value_are_tiktokens(bpe, tt):
    ids = bpe.encode(HARD + "<s>x<|endoftext|>", allowed_special="all")
    assert bpe.decode_tokens_bytes(ids) == tt.decode_tokens_bytes(ids)
    assert b"".join(bpe.decode_tokens_bytes(ids)) == (HARD + "<s>x<|endoftext|>").encode()
    assert bpe.decode_tokens_bytes([]) == []
    with pytest.raises(KeyError):
        bpe.decode_tokens_bytes([bpe.n_vocab])
    assert bpe.special_tokens_set == tt.special_tokens_set == set(SPECIALS)
    assert isinstance(bpe.special_tokens_set, set)
    # the export's largest ids are the 13 bytes bytes243 lacks (after n_vocab), which fastsw never emits
    assert bpe.max_token_value == bpe.n_vocab - 1 == max(bpe.special_tokens.values()) == tt.max_token_value - 13


def test_decode_with_offsets_is_tiktokens(bpe, tt):
    e_acute = "é".encode()
    split = [bpe.encode_single_token(e_acute[:1]), bpe.encode_single_token(e_acute[1:])]  # "é" split in two tokens
    cases = [
        bpe.encode(HARD),
        split,
        [bpe.encode_single_token("a")] + split + bpe.encode(" 中文"),
        [],
        bpe.encode("x<s>y", allowed_special="all"),
    ]
    for ids in cases:
        assert bpe.decode_with_offsets(ids) == tt.decode_with_offsets(ids)
    assert bpe.decode_with_offsets(split) == ("é", [0, 0])
    lone = [bpe.encode_single_token(e_acute[1:])]  # a continuation byte alone is not UTF-8: strict, as tiktoken
    with pytest.raises(UnicodeDecodeError):
        tt.decode_with_offsets(lone)
    with pytest.raises(UnicodeDecodeError):
        bpe.decode_with_offsets(lone)
    with pytest.raises(KeyError):
        bpe.decode_with_offsets([bpe.n_vocab])


def test_the_tiktoken_names_on_models_with_atoms():
    """A marker model decodes its atoms: decode_with_offsets gives the text and the offsets
    encode_with_offsets gives (the tokens' own bytes are atoms, not text)."""
    docs = ["The Quick fox jumps over the lazy dog. " * 3, "Hello World, hello world!"] * 5
    tok = fastsw.train(docs, algo="bpe", vocab_size=280, pretokenizer="boundary[w,p]+caps")
    text = "The lazy Fox, hello!"
    ids, offsets = tok.encode_with_offsets(text)
    assert tok.decode_with_offsets(ids) == (text, offsets)
    assert tok.encode_to_numpy(text).tolist() == ids
    assert b"".join(tok.decode_tokens_bytes(ids)) == b"".join(tok.vocab[i] for i in ids)


def test_new_docstring_examples_run(bpe):
    """The examples in the docstrings of the tiktoken and HF names run (``tok`` is a model with <|endoftext|> that
    every format holds exactly)."""
    import doctest

    names = (
        "encode_to_numpy",
        "encode_batch_to_numpy",
        "decode_tokens_bytes",
        "decode_with_offsets",
        "special_tokens_set",
        "max_token_value",
        "from_file",
        "save",
        "load_tiktoken",
        "from_tiktoken",
        "to_tiktoken",
        "save_hf",
    )
    tok = fastsw.train(
        ["hello world, héllo wörld"] * 5,
        algo="bpe",
        vocab_size=270,
        profile="hf",
        pretokenizer="simple",
        special_tokens=["<|endoftext|>"],
    )
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    finder = doctest.DocTestFinder()
    ran = 0
    for name in names:
        attr = getattr(fastsw.Tokenizer, name)
        for test in finder.find(attr, name, globs={"tok": tok, "fastsw": fastsw}):
            ran += len(test.examples)
            runner.run(test)
    assert ran >= len(names) and runner.summarize(verbose=False).failed == 0


def test_from_file_loads_every_model_format(bpe, multilingual_boundless, sample_docs, tmp_path):
    """Tokenizer.from_file (HF's name) reads a fastsw model, the authors' format and a .tiktoken rank file
    (also gzip-compressed), by content, not by file name."""
    import gzip

    text = "hello world, héllo wörld <s>"
    bpe.save(tmp_path / "model.bin")
    multilingual_boundless.save_paper(tmp_path / "paper.json")
    ranked = fastsw.train(sample_docs[:50], algo="bpe", vocab_size=300, profile="hf", pretokenizer="simple")
    ranked.save_tiktoken(tmp_path / "ranks.txt")
    (tmp_path / "ranks.gz").write_bytes(gzip.compress((tmp_path / "ranks.txt").read_bytes()))
    loaded = fastsw.Tokenizer.from_file(tmp_path / "model.bin")
    assert loaded.merges == bpe.merges and loaded.special_tokens == bpe.special_tokens
    back = fastsw.Tokenizer.from_file(str(tmp_path / "paper.json"))
    assert back.algo == "boundless" and back.merges == multilingual_boundless.merges
    for name in ("ranks.txt", "ranks.gz"):
        ranks = fastsw.Tokenizer.from_file(tmp_path / name, pattern=ranked.pretokenizer.main_pattern)
        assert ranks.encode_ordinary(text) == ranked.encode_ordinary(text)
    (tmp_path / "other.txt").write_text("just some text\n")
    with pytest.raises(ValueError, match="not a model file fastsw can load"):
        fastsw.Tokenizer.from_file(tmp_path / "other.txt")
    with pytest.raises(ValueError, match="model file not found"):
        fastsw.Tokenizer.from_file(tmp_path / "missing.json")


def test_approximate_exports_are_refused_unless_asked_for(multilingual_superbpe, tmp_path):
    """One policy for every export that can lose something: a ValueError saying what would be lost and
    naming allow_approximate=True; with it, the closest approximation."""
    tok = multilingual_superbpe
    plain = fastsw.train(["hello world, héllo wörld"] * 5, algo="bpe", vocab_size=250)  # script mode
    path = tmp_path / "tokenizer.json"
    for call in (
        lambda **kw: tok.save_hf(path, **kw),
        lambda **kw: plain.save_hf(path, **kw),
        lambda **kw: plain.to_tiktoken(**kw),
    ):
        with pytest.raises(ValueError, match="would not be exact: .*Pass allow_approximate=True"):
            call()
        assert not path.exists()
        assert call(allow_approximate=True) is not None
        path.unlink(missing_ok=True)
    report = tok.save_hf(path, allow_approximate=True)
    assert report["exact"] is False and any("supermerges" in r for r in report["reasons"])


def test_from_file_recognises_a_cl100k_base_rank_file_and_asks_the_pattern_of_others(tmp_path):
    """A rank file through from_file gets its own pattern and special tokens, as through load_tiktoken: never
    o200k's by default."""
    from fastsw.io.tiktoken_vocab import PATTERNS, bpe_openai_rank_file

    tok = fastsw.Tokenizer.from_file(bpe_openai_rank_file("cl100k_base"))
    assert tok.pretokenizer.main_pattern == PATTERNS["cl100k"] and tok.n_vocab == 100277
    path = tmp_path / "mine.tiktoken"
    path.write_bytes(b"YQ== 0\nYg== 1\n")  # "a" and "b"
    with pytest.raises(ValueError, match="pattern="):
        fastsw.Tokenizer.from_file(path)
