"""tiktoken's own vocabularies: o200k_base and cl100k_base loaded from the rank files that
the bpe-openai package ships, encoded in rank mode by both paths (the reference, ``backend="python"``,
and the Numba kernel), with tiktoken's ids on every corpus language (held-out and training text),
Hypothesis text, special tokens, pathological inputs and random rank tables; the compiled scanners
against ``regex``; the cache; one clear error for each kind of bad rank file."""

import base64
import contextlib
import gzip
import itertools
import json
import random
import sys

import numpy as np
import pytest
import tiktoken
from hypothesis import HealthCheck, given, settings, strategies as st

import fastsw
from fastsw.io import tiktoken_vocab as tv
from fastsw.pretokenizers.pretokenize import CL100K_PATTERN, GPT4O_PATTERN, Pretokenizer

from conftest import HYPOTHESIS_EXAMPLES, read_jsonl_texts, shared_path

LANGS = ["en", "de", "fr", "ru", "fi", "ar", "ko", "zh", "ja", "th", "hi", "my"]
NAMES = {"o200k": "o200k_base", "cl100k": "cl100k_base"}
SETTINGS = settings(
    max_examples=HYPOTHESIS_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.fixture(scope="module", autouse=True)
def cache_dir(tmp_path_factory):
    """Every load of this module caches into a fresh directory (never the user's)."""
    mp = pytest.MonkeyPatch()
    path = tmp_path_factory.mktemp("fastsw-cache")
    mp.setenv("FASTSW_CACHE_DIR", str(path))
    yield path
    mp.undo()


@pytest.fixture(scope="module")
def vocabs(cache_dir):
    """``{"o200k": (fastsw tokenizer, tiktoken.Encoding), "cl100k": (...)}``, both from bpe-openai's files."""
    out = {}
    for pat, name in NAMES.items():
        tok = fastsw.Tokenizer.load_tiktoken(tv.bpe_openai_rank_file(name), pattern=pat)
        enc = tiktoken.Encoding(
            name,
            pat_str=tv.PATTERNS[pat],
            mergeable_ranks={t: r for r, t in enumerate(tok.vocab)},
            special_tokens=tv.SPECIAL_TOKENS[pat],
        )
        out[pat] = (tok, enc)
    return out


def corpus_sample(lang, per_file=6, max_chars=3000):
    """A few documents of a language's held-out and training text (cut to ``max_chars``)."""
    held = read_jsonl_texts(shared_path(f"corpus/{lang}/heldout.jsonl"), per_file)
    with gzip.open(shared_path(f"corpus/{lang}/train.jsonl.gz"), "rt", encoding="utf-8") as f:
        train = [json.loads(line)["text"] for line in itertools.islice(f, per_file)]
    return [t[:max_chars] for t in held + train]


# ---------------------------------------------------------------- the vocabularies


@pytest.mark.parametrize("pat, n_splits, n_multi", [("o200k", 446189, 143514), ("cl100k", 233378, 76836)])
def test_every_two_way_split_is_registered(vocabs, pat, n_splits, n_multi):
    """The issue's numbers, counted from the files: o200k_base has 143,514 tokens with more than one two-way
    split, 446,189 splits in all; each split is registered with its token's rank and id."""
    tok, enc = vocabs[pat]
    assert tok.n_splits == n_splits
    per_token = np.bincount(tok._splits[:, 2], minlength=len(tok.vocab))
    assert int((per_token > 1).sum()) == n_multi
    rng = random.Random(0)
    for x, y, t in rng.sample(tok._splits.tolist(), 200):
        assert tok.vocab[x] + tok.vocab[y] == tok.vocab[t]
        assert enc.encode_single_token(tok.vocab[t]) == t
    assert tok.n_vocab == enc.n_vocab and tok.eot_token == enc.eot_token
    assert tok.special_tokens == enc._special_tokens


@pytest.mark.parametrize("pat", ["o200k", "cl100k"])
def test_two_way_splits_numpy_equals_the_dict_loop(vocabs, pat):
    """The numpy twin (hashes, then a byte check) gives the dict loop's array on the real vocabularies."""
    tokens = list(vocabs[pat][0].vocab)
    want = tv.two_way_splits(tokens, {t: r for r, t in enumerate(tokens)})
    got = tv.two_way_splits_numpy(tokens)
    assert got.dtype == want.dtype == np.int32 and np.array_equal(got, want)


@SETTINGS
@given(st.lists(st.binary(min_size=1, max_size=6), min_size=1, max_size=80, unique=True))
def test_two_way_splits_numpy_on_random_vocabularies(tokens):
    """Any vocabulary (repeated bytes, zero bytes, tokens that are no split of any other): the same rows in the
    same order (by token, then split) as the dict loop."""
    tokens = [bytes([b]) for b in range(256)] + [t for t in tokens if len(t) > 1]
    want = tv.two_way_splits(tokens, {t: r for r, t in enumerate(tokens)})
    assert np.array_equal(tv.two_way_splits_numpy(tokens), want)


@pytest.mark.parametrize("pat", ["o200k", "cl100k"])
def test_compiled_splits_equal_the_dict_loop(vocabs, pat):
    """The extension's pass (``rank_splits``, what loading uses) gives the dict loop's array on the real
    vocabularies."""
    from fastsw.pretokenizers._pretok import rank_splits

    tokens = list(vocabs[pat][0].vocab)
    want = tv.two_way_splits(tokens, {t: r for r, t in enumerate(tokens)})
    tb, tb_off = tv._byte_table(tokens)
    got = rank_splits(np.frombuffer(tb, np.uint8), tb_off)
    assert got.dtype == np.int32 and np.array_equal(got, want)
    assert np.array_equal(vocabs[pat][0]._splits, want)


@SETTINGS
@given(st.lists(st.binary(min_size=1, max_size=12), max_size=120, unique=True), st.booleans())
def test_compiled_splits_on_random_vocabularies(tokens, singles):
    """Any vocabulary (repeated bytes, zero bytes, long runs, with or without the single bytes, empty): the dict
    loop's rows in its order."""
    from fastsw.pretokenizers._pretok import rank_splits

    if singles:
        tokens = [bytes([b]) for b in range(256)] + [t for t in tokens if len(t) > 1]
    want = tv.two_way_splits(tokens, {t: r for r, t in enumerate(tokens)})
    tb, tb_off = tv._byte_table(tokens)
    assert np.array_equal(rank_splits(np.frombuffer(tb, np.uint8), tb_off), want)


@SETTINGS
@given(st.lists(st.binary(max_size=5), max_size=60))
def test_compiled_token_list_equals_slices_and_dict(tokens):
    """The extension's one loop (``rank_tokens``) gives the slices of the byte table and ``dict(zip(...))`` (a
    repeated token: the dict keeps its last id and is shorter than the list, which is how callers see it)."""
    from fastsw.pretokenizers._pretok import rank_tokens

    tb, tb_off = tv._byte_table(tokens)
    got_tokens, got_ids = rank_tokens(tb, tb_off)
    assert got_tokens == tokens and all(type(t) is bytes for t in got_tokens)
    assert got_ids == dict(zip(tokens, range(len(tokens)))) and list(got_ids) == list(dict.fromkeys(tokens))


def test_loading_without_the_extension_gives_the_same_tables(tmp_path, monkeypatch):
    """A pure-Python install (the extension not importable) reads, checks and splits with the twins: the same
    tokens, dict and splits."""
    raw = gzip.decompress(tv.bpe_openai_rank_file("cl100k_base").read_bytes())
    want_tokens, want_ids = tv._parse_plain(raw)
    tb, tb_off = tv._byte_table(want_tokens)
    want_splits = tv._splits_of(want_tokens, tb, tb_off)
    monkeypatch.setitem(sys.modules, "fastsw.pretokenizers._pretok", None)  # its import now fails
    got_tokens, got_ids = tv._parse_plain(raw)
    assert got_tokens == want_tokens and got_ids == want_ids
    assert tv._token_list(tb, tb_off) == (want_tokens, want_ids)
    assert np.array_equal(tv._splits_of(got_tokens, tb, tb_off), want_splits)


_LAYOUTS = {  # the same table written in ways that the whole-file parser leaves to the line-by-line one
    "crlf": lambda lines: "\r\n".join(lines) + "\r\n",
    "blank lines": lambda lines: "\n\n".join(lines) + "\n",
    "tabs": lambda lines: "\n".join(x.replace(" ", "\t") for x in lines),
    "no final newline": lambda lines: "\n".join(lines),
    "shuffled": lambda lines: "\n".join(random.Random(0).sample(lines, len(lines))) + "\n",
}


@pytest.mark.parametrize("layout", sorted(_LAYOUTS))
def test_every_layout_of_a_rank_file_reads_the_same(tmp_path, layout):
    tokens = [bytes([b]) for b in range(256)] + [b"ab", b"abc", "\u00e9t\u00e9".encode(), b"\x00\xff"]
    lines = [f"{base64.b64encode(t).decode()} {r}" for r, t in enumerate(tokens)]
    path = tmp_path / "r.tiktoken"
    path.write_text(_LAYOUTS[layout](lines))
    got, _ = tv.read_rank_file(path)
    assert got == tokens
    assert tv._parse_lines(path.read_bytes(), "r") == tokens
    want = (tokens, {t: r for r, t in enumerate(tokens)}) if layout in ("no final newline", "shuffled") else None
    assert tv._parse_plain(path.read_bytes()) == tv._parse_plain_python(path.read_bytes()) == want


_B64 = st.sampled_from([base64.b64encode(t).decode() for t in (b"ab", b"abc", b"\xff", b"a\x00b")])
_LINE = st.one_of(
    st.tuples(_B64, st.integers(256, 262).map(str)).map(" ".join),
    st.sampled_from(["", " ", "YWI=x 256", "YWI= 256 7", "YWI= two", "YW=I 257", "Y=== 257", "YWI= +257", "YWI= 2_57"]),
    st.sampled_from(["YWJj 0000258", "YWI= 99999999999999999999", "YWI=\t256", "=YWI 256", "YWI= 256\r"]),
)


@SETTINGS
@given(st.lists(_LINE, max_size=8), st.booleans())
def test_the_one_pass_parsers_agree_with_the_line_reader(lines, final_newline):
    """On rank files good and bad: the extension's one pass and its Python twin both answer (the tokens and
    their dict) or both leave the file to the line-by-line reader; what they answer is what it reads."""
    singles = [f"{base64.b64encode(bytes([b])).decode()} {b}" for b in range(256)]
    data = ("\n".join(singles + lines) + ("\n" if final_newline else "")).encode()
    fast, twin = tv._parse_plain(data), tv._parse_plain_python(data)
    assert fast == twin
    if fast is not None:
        assert fast[0] == tv._parse_lines(data, "r") and fast[1] == {t: r for r, t in enumerate(fast[0])}
    elif all(line.count(" ") == 1 and line.split(" ")[1].isdigit() for line in lines):
        # only well-formed lines: left to the line reader only when the table itself is wrong
        with pytest.raises(ValueError):
            tv._parse_lines(data, "r")


def test_check_ranks_of_mappings():
    """The whole-array checks agree with the loop: rank order from any dict order, and each bad table refused
    with the loop's message."""
    tokens = [bytes([b]) for b in range(256)] + [b"ab"]
    assert tv.check_ranks(dict(reversed(list(zip(tokens, range(257)))))) == tokens
    singles = {bytes([b]): b for b in range(256)}
    bad = [
        ({**singles, b"ab": True}, "entries must be bytes -> int"),
        ({**singles, "ab": 256}, "entries must be bytes -> int"),
        ({**singles, b"ab": 2**70}, "gaps"),
        ({**singles, b"ab": 255}, "two tokens"),
        ({**singles, b"": 256}, "empty byte string"),
        ({**{k: v for k, v in singles.items() if v != 7}, b"ab": 7}, "single bytes are not tokens"),
    ]
    for table, words in bad:
        with pytest.raises(ValueError, match=words):
            tv.check_ranks(table)


_KEY = st.one_of(st.integers(0, 600), st.integers(0, 2**64 - 1))  # small keys crowd a few slots: long probes


@SETTINGS
@given(st.sets(_KEY, max_size=400), st.lists(_KEY, max_size=200))
def test_hash_table_finds_what_a_dict_finds(keys, others):
    keys = np.array(sorted(keys), np.uint64)
    queries = np.array(keys.tolist() + others, np.uint64)
    index = {k: i for i, k in enumerate(keys.tolist())}
    found = tv._hash_find(tv._hash_table(keys), keys, queries)
    assert found.tolist() == [index.get(q, -1) for q in queries.tolist()]


@pytest.mark.parametrize("pat", ["o200k", "cl100k"])
@pytest.mark.parametrize("lang", LANGS)
def test_corpus_ids_equal_tiktoken(vocabs, pat, lang):
    """Held-out and training text of every corpus language: both paths give tiktoken's ids, with and
    without the whole-piece shortcut on the fast path; decoding gives the text back."""
    tok, enc = vocabs[pat]
    texts = corpus_sample(lang)
    want = enc.encode_ordinary_batch(texts)
    assert tok.encode_ordinary_batch(texts, num_threads=2) == want
    for text, ids in zip(texts, want):
        assert tok.encode_ordinary(text) == ids
        assert tok._fast().encode(text, shortcut=False) == ids  # no shortcut: the rank loops alone
        assert tok.decode(ids) == text and tok.decode_bytes(ids) == enc.decode_bytes(ids)
    for text in texts[:2]:
        assert tok.encode_ordinary(text[:1000], backend="python") == enc.encode_ordinary(text[:1000])


@pytest.mark.parametrize("pat", ["o200k", "cl100k", "cl100k_legacy", "gpt2"])
@pytest.mark.parametrize("lang", LANGS)
def test_compiled_scanner_equals_regex(pat, lang):
    """The compiled scanner serves each of tiktoken's patterns (no fallback to regex) and cuts every corpus
    language as ``regex`` does (tiktoken's pre-tokenization: the ids above equal tiktoken's)."""
    p = Pretokenizer(mode="simple", main_pattern=tv.PATTERNS[pat])
    assert p.uses_native
    for text in corpus_sample(lang, per_file=10, max_chars=20000):
        assert p.pretokenize(text) == p.pretokenize_reference(text)
        assert p.pretoken_ends(text).tolist() == list(itertools.accumulate(map(len, p.pretokenize_reference(text))))


def test_o200k_pattern_is_fastsws_default_and_cl100k_is_tiktokens():
    import tiktoken_ext.openai_public as openai_public

    consts = [c for c in openai_public.o200k_base.__code__.co_consts if isinstance(c, tuple) and len(c) == 7]
    assert "|".join(consts[0]) == GPT4O_PATTERN == tv.PATTERNS["o200k"]
    assert CL100K_PATTERN in openai_public.cl100k_base.__code__.co_consts
    # the compiled counter keeps using the GPT-4o scanner only
    from fastsw.corpus.counting import native_counting

    assert not native_counting(Pretokenizer(mode="simple", main_pattern=CL100K_PATTERN))


# adversarial text: the classes the patterns distinguish, contraction folds (long s, Kelvin sign),
# separators that are or are not \s, marks, digits of other scripts, and random code points
_PIECES = st.sampled_from(
    list("aAzZ'sStTlLvVeErRdDmM \t\n\r\x0b\x0c/.,!?-_1234567890")
    + [
        "\u017f",
        "\u212a",
        "\x1c",
        "\x85",
        "\xa0",
        "\u2028",
        "\u3000",
        "\u0301",
        "\u0903",
        "é",
        "ß",
        "Ǆ",
        "ǅ",
        "٣",
        "Ⅻ",
        "²",
        "中",
        "日本",
        "한국",
        "ไทย",
        "မြန်",
        "😀",
        "\U0001f1fa\U0001f1f8",
        "<|endoftext|>",
    ]
)
_TEXT = st.one_of(
    st.lists(_PIECES, max_size=40).map("".join), st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)
)


@SETTINGS
@given(text=_TEXT)
def test_hypothesis_text(vocabs, text):
    for tok, enc in vocabs.values():
        want = enc.encode_ordinary(text)
        assert tok.encode_ordinary(text) == want
        assert tok._fast().encode(text) == want
        assert tok.encode_ordinary(text, backend="python") == want
        assert tok.decode(want) == text
        p = tok.pretokenizer
        assert p.pretokenize(text) == p.pretokenize_reference(text)


SCANNER_PATTERNS = ["o200k", "cl100k", "cl100k_legacy", "gpt2"]


@pytest.fixture(scope="module")
def respelled(vocabs):
    """cl100k_base's ranks with cl100k_base's older pattern (Llama 3's) and with GPT-2's, through
    ``Tokenizer.from_tiktoken`` as a user builds them: ``{pattern name: (fastsw tokenizer, tiktoken.Encoding)}``."""
    ranks = {t: r for r, t in enumerate(vocabs["cl100k"][0].vocab)}
    out = {}
    for pat in ("cl100k_legacy", "gpt2"):
        enc = tiktoken.Encoding(
            f"cl100k_base-{pat}",
            pat_str=tv.PATTERNS[pat],
            mergeable_ranks=ranks,
            special_tokens={"<|endoftext|>": 100257},
        )
        out[pat] = (fastsw.Tokenizer.from_tiktoken(enc), enc)
    return out


@pytest.mark.parametrize("pat", ["cl100k_legacy", "gpt2"])
@pytest.mark.parametrize("lang", LANGS)
def test_respelled_patterns_give_tiktokens_ids(respelled, pat, lang):
    """The older cl100k_base spelling and GPT-2's pattern run on the compiled scanner from a tiktoken Encoding and
    give tiktoken's ids on every corpus language, both paths."""
    tok, enc = respelled[pat]
    assert tok.pretokenizer.uses_native
    texts = corpus_sample(lang, per_file=4, max_chars=5000)
    want = enc.encode_ordinary_batch(texts)
    assert tok.encode_ordinary_batch(texts) == want
    assert [tok.encode_ordinary(t) for t in texts] == want
    assert tok.encode_ordinary(texts[0], backend="python") == want[0]


@SETTINGS
@given(text=_TEXT)
def test_hypothesis_every_compiled_pattern(respelled, text):
    """Each compiled pattern cuts adversarial text as ``regex`` does, and the new ones give tiktoken's ids."""
    for pat in SCANNER_PATTERNS:
        p = _scanner_pretokenizer(pat)
        want = p.pretokenize_reference(text)
        assert p.pretokenize(text) == want, pat
        assert p.pretoken_ends(text).tolist() == list(itertools.accumulate(map(len, want))), pat
    for tok, enc in respelled.values():
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text)


_PRETOKENIZERS = {}


def _scanner_pretokenizer(pat):
    if pat not in _PRETOKENIZERS:
        _PRETOKENIZERS[pat] = Pretokenizer(mode="simple", main_pattern=tv.PATTERNS[pat])
        assert _PRETOKENIZERS[pat].uses_native
    return _PRETOKENIZERS[pat]


def test_special_tokens_follow_tiktoken(vocabs):
    for tok, enc in vocabs.values():
        text = "hi <|endoftext|> there<|endofprompt|>!"
        for kw in (
            {"allowed_special": "all"},
            {"disallowed_special": ()},
            {"allowed_special": {"<|endoftext|>"}, "disallowed_special": ()},
            {"allowed_special": {"<|endoftext|>", "<|endofprompt|>"}},
        ):
            assert tok.encode(text, **kw) == enc.encode(text, **kw), kw
            assert tok.encode(text, backend="python", **kw) == enc.encode(text, **kw), kw
            assert tok.encode_batch([text, "x"], **kw) == enc.encode_batch([text, "x"], **kw), kw
        for kw in ({}, {"allowed_special": {"<|endoftext|>"}}, {"disallowed_special": {"<|endofprompt|>"}}):
            with pytest.raises(ValueError):
                enc.encode(text, **kw)
            with pytest.raises(ValueError, match="disallowed"):
                tok.encode(text, **kw)
        assert tok.decode(enc.encode(text, allowed_special="all")) == text
        assert tok.encode_single_token("<|endoftext|>") == enc.eot_token


#: the longest pathological text the plain-Python twin encodes here (past 2**17 characters, one pretoken of them for
#: the million 'a'): its time grows with the pretoken, the compiled path takes the whole text
TWIN_LENGTH = 200_000


def test_pathological_inputs(vocabs):
    rng = random.Random(15)
    cases = [
        "a" * 10**6,
        "ab" * 50_000,
        "".join(rng.choice("abcdefghij") for _ in range(50_000)),
        "".join(chr(rng.choice([rng.randrange(0x20, 0xD800), rng.randrange(0xE000, 0x110000)])) for _ in range(20_000)),
        "1234567890" * 5000,
        " " * 50_000 + "x",
        "!?" * 20_000,
        "中文" * 20_000,
        "\n\r" * 10_000,
    ]
    for tok, enc in vocabs.values():
        for text in cases:
            want = enc.encode_ordinary(text)
            assert tok.encode_ordinary(text) == want, text[:20]
            if len(text) > TWIN_LENGTH:  # the twin's cost grows with the pretoken: it takes the first 200,000
                text = text[:TWIN_LENGTH]
                want = enc.encode_ordinary(text)
            assert tok.encode_ordinary(text, backend="python") == want, text[:20]


class CountingRanks(dict):
    """A rank dict that counts its lookups (``get``, ``[]`` and ``in``)."""

    lookups = 0

    def get(self, key, default=None):
        self.lookups += 1
        return super().get(key, default)

    def __getitem__(self, key):
        self.lookups += 1
        return super().__getitem__(key)

    def __contains__(self, key):
        self.lookups += 1
        return super().__contains__(key)


@pytest.mark.parametrize("pat", ["o200k", "cl100k"])
def test_reference_rank_merge_is_not_quadratic(vocabs, pat):
    """The reference's rank loop looks up a bounded number of pairs per merge (a heap over the adjacent
    pairs), not every pair of the piece again after each merge: for one letter repeated n times the
    lookups grow linearly with n (a rescan after every merge needs about n * n / 4)."""
    from fastsw.io.interop import rank_table_encode

    tok, enc = vocabs[pat]
    per_char = []
    for n in (2048, 8192):
        ranks = CountingRanks(tok._shortcut)
        assert rank_table_encode(b"a" * n, ranks) == enc.encode_ordinary("a" * n)
        per_char.append(ranks.lookups / n)
    assert per_char[1] <= 4 and per_char[1] <= per_char[0] * 1.1, per_char


# ---------------------------------------------------------------- rank semantics on small rank files


def rank_file(path, extra, singles=range(256), ranks=None):
    """A .tiktoken file: the single bytes (in ``singles`` order), then ``extra`` tokens."""
    tokens = [bytes([b]) for b in singles] + [t.encode() if isinstance(t, str) else t for t in extra]
    ranks = range(len(tokens)) if ranks is None else ranks
    path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in zip(tokens, ranks)))
    return path, dict(zip(tokens, ranks))


def check_all_paths(tok, ranks, texts, pattern=GPT4O_PATTERN):
    enc = tiktoken.Encoding("t", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    fast = tok._fast()
    for text in texts:
        want = enc.encode_ordinary(text)
        assert tok.encode_ordinary(text, backend="python") == want, text
        no_shortcut = tok.encode_ordinary(text, backend="python", shortcut=False)
        for short_limit in (0, 24, 10**9):  # bucket loop, the default split, scan loop only
            ids, _ = fast.encode_docs([text], shortcut=True, short_limit=short_limit)
            assert ids.tolist() == want, (text, short_limit)
            ids, _ = fast.encode_docs([text], shortcut=False, short_limit=short_limit)
            assert ids.tolist() == no_shortcut, (text, short_limit)


def test_a_merge_that_creates_a_lower_rank_goes_first(tmp_path):
    """``abc`` (rank 256) ranks before ``bc`` (258), its only split: after b+c, tiktoken joins a+bc at once
    and then abc+a (257), consuming the next group's ``a``. A merge-rule loop that applies every b+c first
    (the bucket loop before rank mode) gives abc abc ... instead."""
    path, ranks = rank_file(tmp_path / "r.tiktoken", ["abc", "abca", "bc"])
    tok = fastsw.Tokenizer.load_tiktoken(path, pattern="o200k")
    texts = ["abc" * k for k in (1, 2, 3, 9, 10, 40)]
    check_all_paths(tok, ranks, texts)
    enc = tiktoken.Encoding("t", pat_str=GPT4O_PATTERN, mergeable_ranks=ranks, special_tokens={})
    assert enc.encode_ordinary("abc" * 10)[:2] == [257, 258]  # abca, bc: not abc, abc


def test_the_repeated_byte_step_respects_lower_ranks(tmp_path):
    """``aaa`` (256) ranks before ``aa`` (257): a run of ``a`` becomes ``aaa`` tokens, not ``aa`` ones."""
    path, ranks = rank_file(tmp_path / "r.tiktoken", ["aaa", "aa", "aaaaaa"])
    tok = fastsw.Tokenizer.load_tiktoken(path, pattern="o200k")
    check_all_paths(tok, ranks, ["a" * k for k in (2, 3, 4, 5, 7, 26, 27, 100, 1001)])


def test_single_bytes_may_have_any_ranks(tmp_path):
    order = list(range(255, -1, -1))
    path, ranks = rank_file(tmp_path / "r.tiktoken", ["ab", "abab", "ba"], singles=order)
    tok = fastsw.Tokenizer.load_tiktoken(path, pattern="cl100k", special_tokens={"<|x|>": 400})
    assert tok.encode("b") == [255 - ord("b")] and tok.n_vocab == 401
    check_all_paths(tok, ranks, ["abababab", "ba" * 30, "x ab abab ba"], CL100K_PATTERN)


@SETTINGS
@given(data=st.data())
def test_random_rank_tables(tmp_path_factory, data):
    """Random tokens over a three-letter alphabet in random rank order (most are not BPE-trained, so
    parts often rank after the tokens they form): every path gives tiktoken's ids."""
    # dense vocabularies (20-60 of the 117 strings of 2-4 letters) and texts of 20+ letters: about one draw in six
    # tells the bucket loop without note (6) of fastsw.encoding.encode_kernels from tiktoken (measured on 200 random draws)
    extra = data.draw(st.lists(st.text("abc", min_size=2, max_size=4), min_size=20, max_size=60, unique=True))
    texts = data.draw(st.lists(st.text("abc", min_size=20, max_size=80), min_size=1, max_size=4))
    path, ranks = rank_file(tmp_path_factory.mktemp("r") / "r.tiktoken", extra)
    tok = fastsw.Tokenizer.load_tiktoken(path, pattern="o200k", cache=False)
    check_all_paths(tok, ranks, texts)


# ---------------------------------------------------------------- loading and the cache


def test_from_tiktoken_equals_load_tiktoken(vocabs):
    tok, enc = vocabs["cl100k"]
    tok2 = fastsw.Tokenizer.from_tiktoken(enc)
    assert tok2.pretokenizer.uses_native and tok2.special_tokens == tok.special_tokens
    text = corpus_sample("en", 2)[0]
    assert tok2.encode(text) == tok.encode(text) == enc.encode(text)
    with pytest.raises(TypeError, match="tiktoken.Encoding"):
        fastsw.Tokenizer.from_tiktoken("cl100k_base")


def test_plain_and_gzip_files_and_the_cache(tmp_path, cache_dir):
    raw = gzip.decompress(tv.bpe_openai_rank_file("cl100k_base").read_bytes())
    plain = tmp_path / "cl100k_base.tiktoken"
    plain.write_bytes(raw)
    before = set(cache_dir.iterdir())
    tok = fastsw.Tokenizer.load_tiktoken(plain, pattern="cl100k")  # another file (hash): its own cache entry
    new = set(cache_dir.iterdir()) - before
    assert len(new) == 1
    entry = new.pop()
    text = "Loading cl100k_base from a plain file, then from a corrupt cache."
    want = tok.encode(text)
    good = entry.read_bytes()
    header = tv._CACHE_HEADER.size
    flipped = bytearray(good)
    flipped[header + 1000] ^= 1  # a byte of the tables: fails the checksum
    old_version = bytearray(good)
    old_version[16] ^= 3  # the version field
    corruptions = [b"", b"not a cache", good[:header], good[: len(good) // 2], good[:-1], good + b"\0"]
    corruptions += [bytes(flipped), bytes(old_version)]
    for bad in corruptions:
        entry.write_bytes(bad)
        again = fastsw.Tokenizer.load_tiktoken(plain, pattern="cl100k")
        assert again.vocab == tok.vocab and again.encode(text) == want
        assert entry.read_bytes() == good  # rebuilt and rewritten


def test_a_failed_cache_write_leaves_no_file(tmp_path, cache_dir, monkeypatch):
    """The cache file is written to a temporary file renamed over it: a write that fails half-way leaves neither
    a cache file nor the temporary one, and the tokenizer is built all the same."""
    path, ranks = rank_file(tmp_path / "w.tiktoken", ["ab", "abc", "bc"])
    before = set(cache_dir.iterdir())
    real = tv.atomic_open

    @contextlib.contextmanager
    def failing(target, mode):
        with real(target, mode) as f:

            class HalfWriter:
                def write(self, data):
                    f.write(bytes(memoryview(data).cast("B")[:3]))
                    raise OSError(28, "No space left on device")

            yield HalfWriter()

    monkeypatch.setattr(tv, "atomic_open", failing)
    tok = fastsw.Tokenizer.load_tiktoken(path, pattern="o200k")
    assert tok.encode("abc") == [257]
    assert set(cache_dir.iterdir()) == before
    monkeypatch.setattr(tv, "atomic_open", real)
    assert fastsw.Tokenizer.load_tiktoken(path, pattern="o200k").encode("abc") == [257]
    (entry,) = set(cache_dir.iterdir()) - before
    assert tv._read_cache(entry, entry.name.split("-")[1].split(".")[0] + "0" * 24) is None  # keyed by all 64
    assert entry.read_bytes()[: len(tv._CACHE_MAGIC)] == tv._CACHE_MAGIC


def test_from_tiktoken_is_cached_by_content(tmp_path, cache_dir):
    """An Encoding's tables are cached under its content (the tokens in rank order): the same ranks in another
    dict order find the same entry, other ranks make their own; a corrupt entry is rebuilt."""
    tokens = [bytes([b]) for b in range(256)] + [b"ab", b"abc", b"bc"]
    ranks = {t: r for r, t in enumerate(tokens)}

    def encoding(ranks):
        return tiktoken.Encoding("t", pat_str=GPT4O_PATTERN, mergeable_ranks=ranks, special_tokens={})

    before = set(cache_dir.iterdir())
    tok = fastsw.Tokenizer.from_tiktoken(encoding(ranks))
    (entry,) = set(cache_dir.iterdir()) - before
    good = entry.read_bytes()
    assert fastsw.Tokenizer.from_tiktoken(encoding(dict(reversed(ranks.items())))).encode("abc") == [257]
    assert set(cache_dir.iterdir()) - before == {entry}
    entry.write_bytes(good[:-5])
    assert fastsw.Tokenizer.from_tiktoken(encoding(ranks)).n_splits == tok.n_splits == 4
    assert entry.read_bytes() == good
    other = dict(ranks)
    other[b"ba"] = other.pop(b"bc")
    assert fastsw.Tokenizer.from_tiktoken(encoding(other)).encode("bab") == [98, 256]
    assert len(set(cache_dir.iterdir()) - before) == 2


def test_each_file_has_its_own_cache_entry(tmp_path, cache_dir):
    path, _ = rank_file(tmp_path / "a.tiktoken", ["ab"])
    before = len(list(cache_dir.iterdir()))
    assert fastsw.Tokenizer.load_tiktoken(path, pattern="o200k").encode("ab") == [256]
    path.write_text(path.read_text().replace(base64.b64encode(b"ab").decode(), base64.b64encode(b"ba").decode()))
    # same name, other bytes: other entry
    assert fastsw.Tokenizer.load_tiktoken(path, pattern="o200k").encode("ba") == [256]
    assert fastsw.Tokenizer.load_tiktoken(path, pattern="o200k").encode("ab") == [97, 98]
    assert len(list(cache_dir.iterdir())) == before + 2


def test_save_is_refused_with_a_hint(vocabs, tmp_path):
    with pytest.raises(ValueError, match="load_tiktoken"):
        vocabs["o200k"][0].save(tmp_path / "m.json")
    assert not (tmp_path / "m.json").exists()


# ---------------------------------------------------------------- bad input: one clear error each


def _lines(tokens_ranks):
    return "".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in tokens_ranks)


SINGLES = [(bytes([b]), b) for b in range(256)]


@pytest.mark.parametrize(
    "content, words",
    [
        (_lines(SINGLES + [(b"ab", 256), (b"ab", 257)]), ["line 258", "appears twice", "line 257"]),
        (_lines(SINGLES + [(b"ab", 256), (b"cd", 256)]), ["rank 256", "two tokens"]),
        (_lines(SINGLES + [(b"ab", 256), (b"cd", 258)]), ["gaps", "257", "0 .. n-1"]),
        (_lines(SINGLES) + "YWI=x 256\n", ["line 257", "not valid base64"]),
        (_lines(SINGLES) + "YWI= 256 7\n", ["line 257", "base64-token rank"]),
        (_lines(SINGLES) + "YWI= two\n", ["line 257", "not an integer"]),
        (
            _lines([(bytes([b]), b) for b in range(255)] + [(b"ab", 255)]),
            ["single bytes", "\\xff", "could not be encoded"],
        ),
        ("", ["no tokens"]),
    ],
)
def test_bad_rank_files(tmp_path, content, words):
    path = tmp_path / "bad.tiktoken"
    path.write_text(content)
    with pytest.raises(ValueError) as info:
        fastsw.Tokenizer.load_tiktoken(path, pattern="o200k", cache=False)
    message = str(info.value)
    assert "bad.tiktoken" in message and "\n" not in message
    for word in words:
        assert word in message, (word, message)


def test_bad_arguments(tmp_path):
    path, _ = rank_file(tmp_path / "r.tiktoken", ["ab"])
    with pytest.raises(ValueError, match="unknown pattern name 'gpt5'.*'o200k', 'cl100k', 'cl100k_legacy', 'gpt2'"):
        fastsw.Tokenizer.load_tiktoken(path, pattern="gpt5")
    with pytest.raises(ValueError, match="not a valid regular expression"):
        fastsw.Tokenizer.load_tiktoken(path, pattern="(unclosed")
    with pytest.raises(ValueError, match="cannot read the rank file"):
        fastsw.Tokenizer.load_tiktoken(tmp_path / "missing.tiktoken", pattern="o200k")
    with pytest.raises(ValueError, match="taken by the vocabulary"):
        fastsw.Tokenizer.load_tiktoken(path, pattern="o200k", special_tokens={"<|endoftext|>": 5})
    (tmp_path / "bad.gz").write_bytes(b"\x1f\x8b" + b"garbage")
    with pytest.raises(ValueError, match="not a valid gzip file"):
        fastsw.Tokenizer.load_tiktoken(tmp_path / "bad.gz", pattern="o200k", cache=False)
    assert fastsw.Tokenizer.load_tiktoken(path, pattern="cl100k_base").pretokenizer.main_pattern == CL100K_PATTERN
    # a named pattern on another vocabulary: its special ids are taken, so no special tokens by default
    assert fastsw.Tokenizer.load_tiktoken(path, pattern=r"\S+|\s+").special_tokens == {}


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
@pytest.mark.parametrize("form", ["gz", "plain"])
def test_known_rank_files_are_recognised_by_their_content(name, form, tmp_path):
    """Without pattern=, OpenAI's own files get their own pattern, special tokens and n_vocab (found by the
    SHA-256 of the ranks, gzip or not, whatever the file is called)."""
    path = tv.bpe_openai_rank_file(name)
    if form == "plain":
        path = tmp_path / "vocab.txt"
        path.write_bytes(gzip.decompress(tv.bpe_openai_rank_file(name).read_bytes()))
    tok = fastsw.Tokenizer.load_tiktoken(path)
    short = name[:-5]
    assert tok.pretokenizer.main_pattern == tv.PATTERNS[short]
    assert tok.special_tokens == tv.SPECIAL_TOKENS[short]
    assert tok.n_vocab == {"o200k_base": 200019, "cl100k_base": 100277}[name]
    assert tok.encode("<|endoftext|>", allowed_special="all") == [tv.SPECIAL_TOKENS[short]["<|endoftext|>"]]


def test_other_rank_files_need_the_pattern(tmp_path):
    path, _ = rank_file(tmp_path / "mine.tiktoken", ["ab"])
    with pytest.raises(ValueError) as info:
        fastsw.Tokenizer.load_tiktoken(path)
    message = str(info.value)
    assert "mine.tiktoken" in message and "pattern=" in message and "o200k_base" in message, message
    assert fastsw.Tokenizer.load_tiktoken(path, pattern="o200k").encode("ab") == [256]


def test_a_named_pattern_that_contradicts_a_known_file_is_refused():
    with pytest.raises(ValueError, match="cl100k_base.*pattern='o200k'"):
        fastsw.Tokenizer.load_tiktoken(tv.bpe_openai_rank_file("cl100k_base"), pattern="o200k")


def test_decoding_an_unassigned_id_names_the_gap(vocabs):
    tok = vocabs["o200k"][0]
    for tid in (199998, 200000, 200017):
        with pytest.raises(ValueError) as info:
            tok.decode([tid])
        message = str(info.value)
        assert f"token id {tid} is not assigned" in message, message
        assert "0..199997" in message and "199999" in message and "200018" in message, message
    with pytest.raises(ValueError, match="token id 200019 is not in this model"):
        tok.decode([200019])


def test_tiktoken_names_on_o200k_base(vocabs):
    """encode_to_numpy, decode_tokens_bytes, decode_with_offsets, special_tokens_set and max_token_value give
    tiktoken's answers on o200k_base, also for tokens that split a multi-byte character."""
    tok, enc = vocabs["o200k"]
    texts = (
        corpus_sample("ja", per_file=1, max_chars=400)
        + corpus_sample("hi", per_file=1, max_chars=400)
        + ["héllo wörld 👍🏽 e\u0301", "hi <|endoftext|> there"]
    )
    for text in texts:
        arr = tok.encode_to_numpy(text, disallowed_special=())
        want = enc.encode_to_numpy(text, disallowed_special=())
        assert arr.dtype == want.dtype and arr.tolist() == want.tolist()
        ids = enc.encode(text, allowed_special="all")
        assert tok.decode_tokens_bytes(ids) == enc.decode_tokens_bytes(ids)
        assert tok.decode_with_offsets(ids) == enc.decode_with_offsets(ids)
    # tokens that split characters: single bytes of a 4-byte emoji and of a 3-byte CJK character
    split = [enc.encode_single_token(bytes([b])) for b in "👍中".encode()] + enc.encode(" x")
    assert tok.decode_with_offsets(split) == enc.decode_with_offsets(split) == ("👍中 x", [0] * 4 + [1] * 3 + [2])
    assert tok.decode_tokens_bytes(split) == enc.decode_tokens_bytes(split)
    assert tok.special_tokens_set == enc.special_tokens_set
    assert tok.max_token_value == enc.max_token_value == 200018


def test_tokenizer_load_tiktoken_states_the_same_parameters_as_the_module_function():
    """``Tokenizer.load_tiktoken`` restates the signature of ``fastsw.io.tiktoken_vocab.load_tiktoken`` (so that
    help(), the docs and type checkers see ``backend`` and ``cache``); the two must not drift apart."""
    import inspect

    from fastsw import Tokenizer
    from fastsw.io.tiktoken_vocab import load_tiktoken

    ours = inspect.signature(Tokenizer.load_tiktoken).parameters
    theirs = inspect.signature(load_tiktoken).parameters
    assert [(p.name, p.kind, p.default) for p in ours.values()] == [
        (p.name, p.kind, p.default) for p in theirs.values()
    ]
    assert "backend" in ours and "cache" in ours
