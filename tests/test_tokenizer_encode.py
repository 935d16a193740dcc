"""Encoding and decoding: round trips on arbitrary Unicode, the whole-pretoken
shortcut, the supermerge pass, special tokens and error messages."""

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st


from conftest import HYPOTHESIS_EXAMPLES, read_jsonl_texts, shared_path

# Characters from many scripts, combining marks, emoji and modifiers, unusual spaces,
# digits of other scripts, private-use and unassigned code points.
INTERESTING = (
    "aZ éß ĳ Ωω жЯ ա ა אב عربى हिंदी ক ਗ ગ ଓ த తె ಕ മ ශ ไทย ລາວ ကမ္ဘာ ខ្មែរ 中文汉字 ひらがな カタカナー 한국어 "
    "\u0300\u0301\u0308\u200d\u200c\u00a0\u2009\u3000\t\r\n\x0b\x0c\x85\u2028 "
    "0123456789٠١٢٣٤٥६७८९๑๒ ¹²³½ '’\"-.,;:!?¿¡()[]{}<>/\\|@#$%^&*_+=~` "
    "😀👍🏽👨‍👩‍👧🇩🇪 \ue000\U000f0000\u0378\U0001fbf0 's 'S 'll 'LL"
)

text_strategy = st.one_of(
    st.text(),
    st.text(alphabet=INTERESTING),
    st.lists(
        st.sampled_from(["the", " the", " of", " The", "'s", " ", "\n", "德国", "é", "\u0301", "1234"]), max_size=40
    ).map("".join),
)


@pytest.mark.parametrize("model", ["multilingual_boundless", "multilingual_superbpe"])
@settings(
    max_examples=HYPOTHESIS_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(text=text_strategy)
def test_round_trip(request, model, text):
    tok = request.getfixturevalue(model)
    ids = tok.encode_ordinary(text)
    assert tok.decode(ids) == text
    assert tok.decode_bytes(ids) == text.encode("utf-8")
    assert tok.encode_ordinary(text, shortcut=False) == ids


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n" * 10000,
        "a" * 100000,
        " " * 5000,
        "👍🏽" * 1000,
        "e\u0301" * 3000,
        "\u0301" * 50 + "abc",
        "中" * 5000,
        "The cat 's hat, and the dog.\r\n\r\n",
    ],
)
def test_pathological_inputs(multilingual_boundless, text):
    tok = multilingual_boundless
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    assert tok.encode(text, shortcut=False) == ids


def test_real_heldout_text_all_languages(multilingual_boundless):
    tok = multilingual_boundless
    for lang in ["en", "de", "ru", "ar", "hi", "ja", "zh", "th", "ko", "my", "fi", "fr"]:
        for text in read_jsonl_texts(shared_path(f"corpus/{lang}/heldout.jsonl"), limit=5):
            ids = tok.encode_ordinary(text)
            assert tok.decode(ids) == text
            assert tok.encode_ordinary(text, shortcut=False) == ids


def test_supermerges_are_used(multilingual_boundless, sample_docs):
    tok = multilingual_boundless
    assert tok.n_super > 0
    used = set()
    for text in sample_docs[:40]:
        used.update(tok.encode_ordinary(text))
    assert any(tok.merges[i - len(tok.alphabet)].super for i in used if i >= len(tok.alphabet))


def test_supermerges_only_join_eligible_single_token_pretokens(multilingual_boundless):
    tok = multilingual_boundless
    n_alpha = len(tok.alphabet)
    for m in tok.merges:
        if m.super:
            for part in (m.left, m.right):
                # a supermerge's parts are eligible tokens or other supermerge tokens
                is_super = part >= n_alpha and tok.merges[part - n_alpha].super
                assert tok.is_eligible(part) != is_super


def test_lone_surrogate_is_a_clear_error(multilingual_boundless):
    with pytest.raises(ValueError, match="surrogate"):
        multilingual_boundless.encode("abc\ud800def")
    with pytest.raises(TypeError):
        multilingual_boundless.encode(b"bytes")


def test_decode_unknown_id_and_error_policy(multilingual_boundless):
    tok = multilingual_boundless
    with pytest.raises(ValueError, match="not in this model"):
        tok.decode([tok.n_vocab + 5])
    with pytest.raises(ValueError, match="not in this model"):
        tok.decode([-1])
    # a lone UTF-8 lead byte: replaced by default, an error with errors="strict"
    lead = tok.alphabet.id_of_byte(0xC3)
    assert tok.decode([lead]) == "\ufffd"
    with pytest.raises(UnicodeDecodeError):
        tok.decode([lead], errors="strict")
    assert tok.decode_bytes([lead]) == b"\xc3"


def test_special_tokens_follow_tiktoken_conventions(multilingual_superbpe):
    tok = multilingual_superbpe
    eot = tok.special_tokens["<|endoftext|>"]
    assert eot == tok.vocab_size and tok.n_vocab == tok.vocab_size + 1
    text = "hello <|endoftext|> world"
    with pytest.raises(ValueError, match="disallowed"):
        tok.encode(text)
    ids = tok.encode(text, allowed_special="all")
    assert eot in ids and tok.decode(ids) == text
    assert tok.encode(text, allowed_special={"<|endoftext|>"}) == ids
    ordinary = tok.encode(text, disallowed_special=())
    assert eot not in ordinary and ordinary == tok.encode_ordinary(text)
    assert tok.decode(ordinary) == text
    with pytest.raises(ValueError, match="does not have"):
        tok.encode(text, allowed_special={"<|fim|>"})
    assert tok.encode_batch([text, "x"], allowed_special="all") == [ids, tok.encode("x")]
    assert tok.encode_ordinary_batch([text, "x"]) == [ordinary, tok.encode_ordinary("x")]


def test_specials_off_by_default(multilingual_boundless):
    tok = multilingual_boundless
    assert dict(tok.special_tokens) == {}
    assert tok.decode(tok.encode("<|endoftext|>")) == "<|endoftext|>"


def test_read_only_views(multilingual_boundless):
    tok = multilingual_boundless
    assert isinstance(tok.merges, tuple) and isinstance(tok.vocab, tuple)
    with pytest.raises(TypeError):
        tok.special_tokens["x"] = 1
    m = tok.merges[0]
    assert m.id == len(tok.alphabet) and tok.vocab[m.id] == tok.vocab[m.left] + tok.vocab[m.right]
    assert tok.vocab_size == len(tok.alphabet) + len(tok.merges) == 1200


def test_building_a_tokenizer_restores_the_garbage_collector(multilingual_boundless, monkeypatch):
    # construction pauses the cyclic collector (many tuples and bytes, none garbage) and
    # restores its state, also when building fails; the tables are those of a normal build
    import gc
    import fastsw

    tok = multilingual_boundless
    kwargs = dict(
        alphabet=tok.alphabet,
        merges=[m[1:] for m in tok.merges],
        pretokenizer=tok.pretokenizer,
        profile=tok.profile,
        algo=tok.algo,
    )
    seen = []
    real = fastsw.Tokenizer._reachable_tokens
    monkeypatch.setattr(fastsw.Tokenizer, "_reachable_tokens", lambda self: seen.append(gc.isenabled()) or real(self))
    assert gc.isenabled()
    again = fastsw.Tokenizer(**kwargs)
    assert seen == [False] and gc.isenabled()
    assert again._shortcut == tok._shortcut and again._eligible == tok._eligible
    gc.disable()
    try:
        fastsw.Tokenizer(**kwargs)
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(ValueError, match="do not exist yet"):
        fastsw.Tokenizer(**dict(kwargs, merges=[(5000, 1, 1, False)]))
    assert gc.isenabled()
