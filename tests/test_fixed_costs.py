"""What a process pays once, and what the short-text path keeps between calls: the regex patterns compiled on first
use, the scanner's class table read from disk, the plain-Python twin for a process's first short texts, and the
whole-text cache (its doorkeeper, eviction and copies). Each keeps the reference's ids."""

from __future__ import annotations

import numpy as np
import pytest
import regex

import fastsw
from fastsw import tokenizer
from fastsw._config import pure_python
from fastsw.encoding import encode_fast as fast_encode
from fastsw.pretokenizers import _unicode
from fastsw.pretokenizers.pretokenize import GPT4O_PATTERN, Pretokenizer

SHORT = ["The cat sat on the mat today.", "Über 世界 — ok", "e\u0301 👍🏽 1234", "สวัสดีครับ", " ", ""]


def test_built_in_patterns_compile_on_first_use():
    """A default pre-tokenizer compiles no regex until the reference path runs (the compiled scanner never needs
    one); a pattern of the user's is still checked when the pre-tokenizer is made."""
    _unicode.compile_pattern.cache_clear()
    pretok = Pretokenizer(mode="simple", main_pattern=GPT4O_PATTERN)
    assert _unicode.compile_pattern.cache_info().currsize == 0
    assert pretok.pretokenize_reference("Hello world") == ["Hello", " world"]
    assert _unicode.compile_pattern.cache_info().currsize == 1
    with pytest.raises(ValueError, match="invalid pre-tokenizer regex"):
        Pretokenizer(mode="simple", main_pattern="(unclosed")
    assert Pretokenizer(mode="simple", main_pattern="[a-z]+|[^a-z]").pretokenize_reference("ab, c") == [
        "ab",
        ",",
        " ",
        "c",
    ]


def test_the_class_table_is_read_back_from_disk(tmp_path, monkeypatch):
    """The scanner's class table is written once and read back by later processes; a damaged file is rebuilt."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    built = _unicode._build_pretoken_table()
    _unicode.pretoken_table.cache_clear()
    try:
        first = _unicode.pretoken_table()
        files = list((tmp_path / "fastsw").glob("pretoken-table-*.bin"))
        assert len(files) == 1 and np.array_equal(first, built)
        _unicode.pretoken_table.cache_clear()
        assert np.array_equal(_unicode.pretoken_table(), built)  # from the file
        files[0].write_bytes(b"\0" * 100)
        _unicode.pretoken_table.cache_clear()
        again = _unicode.pretoken_table()
        assert np.array_equal(again, built) and not again.flags.writeable
        assert files[0].stat().st_size == built.shape[0]
    finally:
        _unicode.pretoken_table.cache_clear()


@pytest.fixture
def fresh(multilingual_boundless, tmp_path):
    """A newly loaded copy of the model (no fast encoder built yet), backend "auto"."""
    multilingual_boundless.save(tmp_path / "m.json")
    return fastsw.load(tmp_path / "m.json")


@pytest.mark.skipif(pure_python(), reason="FASTSW_PUREPYTHON=1: the fast encoder that takes over is never built")
def test_a_processes_first_short_texts_take_the_twin(fresh, monkeypatch):
    """The first short texts of a tokenizer are encoded by the plain-Python twin (no fast encoder built, so no
    Numba import and no kernel loading for a process that encodes a few); after ``_TWIN_CALLS`` of them the
    fast encoder takes over. The ids are the reference's throughout."""
    fast_encode.warmup()  # the kernels are ready: only the count decides
    monkeypatch.setattr(tokenizer, "_TWIN_CALLS", 4)
    want = {t: fresh.encode(t, backend="python") for t in SHORT}
    for t in SHORT[:4]:
        assert fresh.encode(t) == want[t]
    assert "_fast_encoder" not in fresh.__dict__
    for t in SHORT:
        assert fresh.encode(t) == want[t] and fresh.encode_ordinary(t) == want[t]
    assert "_fast_encoder" in fresh.__dict__


def test_backend_numba_asked_takes_the_kernel_at_once(fresh):
    fast_encode.warmup()
    assert fresh.encode(SHORT[0], backend="numba") == fresh.encode(SHORT[0], backend="python")
    assert "_fast_encoder" in fresh.__dict__


def text_caches(limit, monkeypatch):
    """The tokenizer's whole-text cache and its compiled twin (the one-call path's, when the extension is built),
    each holding at most ``limit`` texts, with the dict of the texts it keeps."""
    monkeypatch.setattr(tokenizer, "_TEXT_CACHE_LIMIT", limit)
    cache = tokenizer._TextCache()
    caches = [(cache, cache)]
    if fast_encode._TextCache is not None:
        cache = fast_encode._TextCache(limit, 128)
        caches.append((cache, cache.texts))
    return caches


def test_the_whole_text_cache_keeps_a_text_on_its_second_sighting(monkeypatch):
    for cache, _ in text_caches(4096, monkeypatch):
        cache.remember("a", [1])
        assert cache.get("a") is None and "a" in cache.seen
        cache.remember("a", [1])
        assert cache.get("a") == (1,)


def test_the_whole_text_cache_is_bounded(monkeypatch):
    """At most ``limit`` texts (cleared when full), and the seen set at most four times that; both caches alike."""
    for cache, texts in text_caches(4, monkeypatch):
        for i in range(100):
            for _ in range(2):
                cache.remember(str(i), [i])
            assert len(texts) <= 4 and len(cache.seen) <= 16
            assert cache.get(str(i)) == (i,)
        assert all(texts[k] == (int(k),) for k in texts)


def test_a_lone_surrogate_in_a_short_text_is_refused_on_every_path(fresh):
    fast_encode.warmup()
    for backend in ("python", "numba", None):
        for method in (fresh.encode_ordinary, fresh.encode):
            for _ in range(2):  # the second call may come from a cache: it must not
                with pytest.raises(ValueError, match="lone surrogate"):
                    method("ab\ud800cd", backend=backend)


def test_special_tokens_are_found_as_before(fresh):
    """Special tokens are literal strings found with the standard ``re`` engine; the same matches as ``regex``."""
    fresh2 = fastsw.Tokenizer(
        alphabet=fresh.alphabet,
        merges=[tuple(m[1:]) for m in fresh.merges],
        pretokenizer=fresh.pretokenizer,
        profile=fresh.profile,
        algo=fresh.algo,
        special_tokens={s: len(fresh.vocab) + k for k, s in enumerate(["<|a|>", "<|a|>x", "[.*]"])},
    )
    text = "x<|a|>x y [.*] <|a|> [..]"
    ids = fresh2.encode(text, allowed_special="all")
    specials = fresh2.special_tokens
    assert [i for i in ids if i in specials.values()] == [specials["<|a|>x"], specials["[.*]"], specials["<|a|>"]]
    assert ids == fresh2.encode(text, allowed_special="all", backend="python")
    with pytest.raises(ValueError, match=regex.escape("'[.*]'")):
        fresh2.encode("a [.*]")
