"""One text in one compiled call: the extension's ``OneText`` (scan, the encoding kernel through its C entry
:mod:`fastsw.encoding.c_entry`, the list of ids) against the path it replaces (``scan_utf8`` and the Numba
dispatcher, ``USE_ONE_TEXT = False``), the plain-Python reference and tiktoken, on every corpus language,
Hypothesis text and pathological input."""

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fastsw
from fastsw._compiling import source_hash
from fastsw._config import pure_python
from fastsw.encoding import c_entry, encode_fast as fast_encode, encode_kernels as K
from fastsw.io import tiktoken_vocab as tv
from fastsw.pretokenizers import _pretok

from conftest import HYPOTHESIS_EXAMPLES, read_jsonl_texts, shared_path

LANGS = ["en", "de", "fr", "ru", "fi", "ar", "ko", "zh", "ja", "th", "hi", "my"]
SETTINGS = settings(
    max_examples=HYPOTHESIS_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
INTERESTING = (
    "aZ éß Ωω жЯ عربى हिंदी ไทย ကမ္ဘာ 中文 ひらがな 한국어 \u0300\u200d\u00a0\u3000\t\r\n\x85 0123٠١ ½ '’-.,!? "
    "😀👍🏽👨‍👩‍👧 \ue000\U000f0000 's 'll the The of"
)
PATHOLOGICAL = ["", " ", "a", "\n\n\n", "a" * 5000, "ab" * 300, "👍🏽" * 200, "e\u0301" * 400, "1" * 999, "'s" * 77]

pytestmark = [
    pytest.mark.skipif(not hasattr(K._encode_docs, "signatures"), reason="NUMBA_DISABLE_JIT=1: no compiled kernel"),
    pytest.mark.skipif(pure_python(), reason="FASTSW_PUREPYTHON=1: no compiled scanner, so no one-text call"),
]


@pytest.fixture(scope="module")
def o200k(tmp_path_factory):
    """o200k_base from bpe-openai's rank file (cached in a fresh directory) and tiktoken's Encoding of it."""
    tiktoken = pytest.importorskip("tiktoken")
    mp = pytest.MonkeyPatch()
    mp.setenv("FASTSW_CACHE_DIR", str(tmp_path_factory.mktemp("fastsw-cache")))
    tok = fastsw.Tokenizer.load_tiktoken(tv.bpe_openai_rank_file("o200k_base"), pattern="o200k")
    mp.undo()
    ranks = {t: r for r, t in enumerate(tok.vocab)}
    enc = tiktoken.Encoding(
        "o200k_base", pat_str=tv.PATTERNS["o200k"], mergeable_ranks=ranks, special_tokens=tv.SPECIAL_TOKENS["o200k"]
    )
    return tok, enc


@pytest.fixture(scope="module", params=["boundless", "superbpe", "o200k"])
def model(request):
    tok = (
        request.getfixturevalue("o200k")[0]
        if request.param == "o200k"
        else request.getfixturevalue(f"multilingual_{request.param}")
    )
    assert c_entry.address(compile=True) is not None
    fast = tok._fast()
    fast.__dict__.pop("_one", None)  # found again now that the C entry is there
    assert isinstance(fast._one_text(), _pretok.OneText)
    return tok


def both_paths(tok, text, shortcut=True):
    """The one-call ids and the dispatcher path's ids of ``text`` (``FastEncoder.encode``)."""
    fast = tok._fast()
    one = fast.encode(text, shortcut)
    fast_encode.USE_ONE_TEXT = False
    try:
        other = fast.encode(text, shortcut)
    finally:
        fast_encode.USE_ONE_TEXT = True
    return one, other


def snippets(lang, n=40):
    """Cuts of 8 to 64 characters and whole documents (some longer than the extension's stack buffers)."""
    docs = read_jsonl_texts(shared_path(f"corpus/{lang}/heldout.jsonl"), 12)
    cuts = [d[i : i + 8 + (i * 7) % 57] for d in docs for i in range(0, min(len(d), 600), 29)]
    return cuts[:n] + [d[:3000] for d in docs]


@pytest.mark.parametrize("lang", LANGS)
def test_one_call_equals_the_dispatcher_path_and_the_reference(model, lang):
    for text in snippets(lang):
        for shortcut in (True, False):
            one, other = both_paths(model, text, shortcut)
            assert one == other, text
        assert one == model.encode_ordinary(text, backend="python"), text


@pytest.mark.parametrize("lang", LANGS)
def test_one_call_equals_tiktoken(o200k, lang):
    tok, enc = o200k
    assert c_entry.address(compile=True) is not None
    tok._fast().__dict__.pop("_one", None)
    for text in snippets(lang):
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text), text
        assert tok.encode(text) == enc.encode(text), text


def test_pathological_texts(model):
    for text in PATHOLOGICAL:
        one, other = both_paths(model, text)
        assert one == other == model.encode_ordinary(text, backend="python"), text[:40]


@SETTINGS
@given(st.one_of(st.text(), st.text(alphabet=INTERESTING)))
def test_one_call_on_hypothesis_text(multilingual_superbpe, text):
    c_entry.address(compile=True)
    one, other = both_paths(multilingual_superbpe, text)
    assert one == other == multilingual_superbpe.encode_ordinary(text, backend="python")


def test_a_lone_surrogate_gets_the_same_error(model):
    for text in ["a\ud800b", "\udfff", "x" * 300 + "\ud83d"]:
        for flag in (True, False):
            fast_encode.USE_ONE_TEXT = flag
            try:
                with pytest.raises(ValueError, match="lone surrogate"):
                    model._fast().encode(text, True)
            finally:
                fast_encode.USE_ONE_TEXT = True


def test_a_text_takes_neither_scan_utf8_nor_the_dispatcher(model, monkeypatch):
    """The one-call path makes no numpy array and calls no Numba dispatcher: with both disabled, texts short and
    long (up to ``ONE_TEXT_CHARS``) still encode to the reference's ids, and the kernel keeps its one signature."""

    def refused(*args, **kwargs):
        raise AssertionError("the per-array path was taken")

    want = {t: model.encode_ordinary(t, backend="python") for t in snippets("de", 10) + PATHOLOGICAL}
    monkeypatch.setattr(fast_encode, "_scan_utf8", refused)
    for name in ("_kernel", "_kernel_direct", "encode_docs"):
        monkeypatch.setattr(fast_encode.FastEncoder, name, refused)
    for text, ids in want.items():
        assert model._fast().encode(text, True) == ids
    assert len(K._encode_docs.signatures) == 1


def test_longer_texts_keep_the_dispatcher_path(model, monkeypatch):
    """Above ``ONE_TEXT_CHARS`` the driver's path runs (a worker thread for calls of ``_WORKER_BYTES``, Ctrl-C)."""
    text = "Über 世界 the cat, " * 20
    monkeypatch.setattr(fast_encode, "ONE_TEXT_CHARS", 100)
    calls = []
    real = fast_encode.FastEncoder._kernel_direct

    def counting(self, *args):
        calls.append(len(args))
        return real(self, *args)

    monkeypatch.setattr(fast_encode.FastEncoder, "_kernel_direct", counting)
    assert model._fast().encode(text, True) == model.encode_ordinary(text, backend="python")
    assert calls


def test_one_text_checks_its_arguments(model):
    fast = model._fast()
    tables = fast._gather_tables()
    with pytest.raises(ValueError, match="address"):
        _pretok.OneText(fast._slice_scanner(), 0, tables, fast._id_list, 0, 16)
    with pytest.raises(ValueError, match="nine"):
        _pretok.OneText(fast._slice_scanner(), c_entry.address(), tables[:8], fast._id_list, 0, 16)
    with pytest.raises(ValueError, match="256"):
        _pretok.OneText(fast._slice_scanner(), c_entry.address(), (tables[0][:8],) + tables[1:], fast._id_list, 0, 16)
    with pytest.raises(IndexError, match="outside the vocabulary"):
        _pretok.OneText(fast._slice_scanner(), c_entry.address(), tables, [0, 1], fast.use_super, 16).encode("xyz é")


def test_cache_entry_is_stamped_with_the_kernels_source():
    # The C entry inlines the kernel: Numba stamps its cache entry with c_entry.py's file alone, so an entry compiled
    # before a change of encode_kernels.py (a table layout) would be loaded after it and read the new tables the old
    # way. The entry carries the kernel module's stamp too: a change of that file makes it stale.
    assert c_entry.address(compile=True) is not None
    stamp = c_entry._compiled._cache._cache_file._source_stamp
    assert source_hash(K.__file__) in stamp[1:]


def test_stops_refuse_a_text_holding_one_of_their_characters(model):
    """``encode(text, shortcut, stops)``: False (nothing encoded) when the text holds a character of ``stops``,
    else the ids, the same as without ``stops``."""
    one = model._fast()._one_text()
    want = model.encode_ordinary("a b", backend="python")
    assert one.encode("a b", True, "<[") == one.encode("a b", True) == want
    assert one.encode("a <b", True, "<[") is False
    assert one.encode("x[", True, "<[") is False
    assert one.encode("ไทย", True, "") == model.encode_ordinary("ไทย", backend="python")


def test_short_texts_take_one_call_with_the_default_options(model, monkeypatch):
    """Once the fast encoder is built, ``encode_ordinary`` and ``encode`` (default special-token options) of a
    short text are one call of the ``OneText``: neither the backend resolution, the tokenizer's own text cache nor
    the special-token plan runs. A text holding the first character of a special token takes the full check."""
    texts = snippets("ja", 12) + ["a < b", "<|endoftext|>"]
    want = {t: model.encode_ordinary(t, backend="python") for t in texts}
    model.encode("warm up")  # builds the fast encoder, and finds the special tokens' first characters once
    assert model._fast().__dict__.get("_one")

    def refused(*args, **kwargs):
        raise AssertionError("the general path was taken")

    specials = model.special_tokens
    short = [t for t in texts if len(t) <= 64 and not any(s[0] in t for s in specials)]
    assert short
    with monkeypatch.context() as m:
        for name in ("_encode_small", "_special_plan", "_resolve_backend"):
            m.setattr(type(model), name, refused)
        for t in short:
            assert model.encode_ordinary(t) == want[t] and model.encode(t) == want[t], t
    for t in texts:
        assert model.encode(t, disallowed_special=()) == want[t]
        if any(s in t for s in specials):
            with pytest.raises(ValueError, match="disallowed"):
                model.encode(t)
        else:
            assert model.encode(t) == want[t]


def test_a_repeated_short_text_comes_from_the_one_call_cache(model):
    one = model._fast()._one_text()
    text = "Ein Satz, der wiederkommt."
    want = model.encode_ordinary(text, backend="python")
    for _ in range(3):
        assert model.encode_ordinary(text) == want
    assert one.cache.get(text) == tuple(want)
    long_text = "x " * 100  # longer than the cache's texts: encoded every time, never kept
    for _ in range(3):
        model.encode_ordinary(long_text)
    assert one.cache.get(long_text) is None and long_text not in one.cache.seen
    assert one.encode(text, False) == model.encode_ordinary(text, shortcut=False, backend="python")
