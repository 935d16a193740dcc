r"""Which patterns run on the compiled scanner (fastsw.pretokenizers.pretokenize.compiled_pattern): recognised by
what they do, however spelled; a pattern that cuts any text differently stays on regex, with one
PatternNotCompiledWarning. The scanners themselves are compared with regex on the corpus and Hypothesis text in
tests/io/test_tiktoken_vocab.py."""

import warnings

import pytest
import tiktoken
import tiktoken_ext.openai_public as openai_public

import fastsw
from fastsw.pretokenizers.pretokenize import COMPILED_PATTERNS, compiled_pattern
from fastsw.corpus.counting import native_counting
from fastsw.pretokenizers.pretokenize import (
    CL100K_LEGACY_PATTERN,
    CL100K_PATTERN,
    GPT2_PATTERN,
    GPT4O_PATTERN,
    SCRIPT_SPECIFIC_PATTERN,
    Pretokenizer,
)

# Equivalent spellings, each with the compiled pattern it means.
SAME = [
    # tiktoken's own spelling of GPT-2's pattern (r50k_base, p50k_base): possessive, with \s++$ and a last \s
    (openai_public.r50k_pat_str, "gpt2"),
    (r"'(?:s|t|re|ve|m|ll|d)| ?\pL+| ?\pN+| ?[^\s\pL\pN]+|\s+(?!\S)|\s+", "gpt2"),
    (GPT2_PATTERN.replace(r"|\s+(?!\S)", r"|\s+$|\s+(?!\S)"), "gpt2"),
    # the older cl100k_base spelling, possessive where nothing is ever given back
    (
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"
        r"|\s*[\r\n]+|\s+(?!\S)|\s+",
        "cl100k_legacy",
    ),
    # the current cl100k_base spelling without its possessive quantifiers
    (
        r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+(?!\S)|\s",
        "cl100k",
    ),
    (GPT4O_PATTERN.replace(r"\p{N}{1,3}", r"[\p{N}]{1,3}"), "o200k"),
]

# Near misses: each cuts some text differently from every compiled pattern.
DIFFERENT = [
    # Qwen2's pattern: cl100k_base's older spelling with one digit per pretoken
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    CL100K_PATTERN.replace("{1,3}", "{1,4}"),  # "1234" is one pretoken
    CL100K_PATTERN.replace(r"[^\r\n\p{L}", r"[^\r\n\u2603\p{L}"),  # a snowman no longer joins the next word
    CL100K_PATTERN.replace(r"[^\r\n\p{L}", r"[^\r\n\u0400-\u04FF\p{L}"),  # nor do Cyrillic marks (U+0483..U+0489)
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)" + GPT2_PATTERN[len("'s|'t|'re|'ve|'m|'ll|'d") :],  # "'S" a contraction
    GPT2_PATTERN.replace(r"|\s+(?!\S)|\s+", r"|\s+"),  # the space before a word stays with the spaces
    CL100K_LEGACY_PATTERN.replace(r"\s*[\r\n]+|", ""),
    GPT4O_PATTERN.replace("[\\r\\n/]*", "[\\r\\n]*"),  # cl100k's tail in GPT-4o's pattern: "/" after punctuation
    r"\w+|\W",
]


@pytest.mark.parametrize("name", ["o200k", "cl100k", "cl100k_legacy", "gpt2"])
def test_reference_spellings(name):
    assert compiled_pattern(COMPILED_PATTERNS[name][0]) == name
    assert compiled_pattern(SCRIPT_SPECIFIC_PATTERN, candidates=("specific",)) == "specific"


def test_the_known_spellings_are_proven():
    """The spellings looked up without probing mean what the table says: the probes agree."""
    from fastsw.pretokenizers import pretokenize as pt

    for spelling, name in pt._KNOWN.items():
        assert pt._recognise(spelling, (name,)) == name, name


@pytest.mark.parametrize("spelling,name", SAME)
def test_an_equivalent_spelling_runs_on_the_compiled_scanner(spelling, name):
    assert compiled_pattern(spelling) == name
    p = Pretokenizer(mode="simple", main_pattern=spelling)
    with warnings.catch_warnings():
        warnings.simplefilter("error", fastsw.PatternNotCompiledWarning)
        assert p.uses_native
        text = "It's 2024:  a/b\n\n  x\t \n  Ünïcode ſ'LL  \n"
        assert p.pretokenize(text) == p.pretokenize_reference(text)


@pytest.mark.parametrize("spelling", DIFFERENT)
def test_a_pattern_that_differs_stays_on_regex(spelling):
    assert compiled_pattern(spelling) is None
    p = Pretokenizer(mode="simple", main_pattern=spelling)
    assert not p.uses_native
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert p.pretokenize("a b") == p.pretokenize_reference("a b")


def test_the_older_cl100k_spelling_is_a_pattern_of_its_own():
    # a whitespace run with a newline at the text's end: the current spelling's \s++$ takes the whole run, the
    # older one ends the run after its last newline (\s*[\r\n]+) and the spaces after it are a pretoken
    text = "a\n  "
    assert Pretokenizer(mode="simple", main_pattern=CL100K_PATTERN).pretokenize(text) == ["a", "\n  "]
    assert Pretokenizer(mode="simple", main_pattern=CL100K_LEGACY_PATTERN).pretokenize(text) == ["a", "\n", "  "]
    assert compiled_pattern(CL100K_LEGACY_PATTERN) == "cl100k_legacy"


def test_gpt2_pattern_by_hand():
    p = Pretokenizer(mode="simple", main_pattern=GPT2_PATTERN)
    assert p.uses_native
    # a space joins the word, number or punctuation after it; numbers are not cut in threes; the contractions are
    # case-sensitive ("'S" is punctuation then a word); a newline is plain whitespace (no newline rule)
    assert p.pretokenize("Hi  there's 123456 'S!!\n\n x") == [
        "Hi",
        " ",
        " there",
        "'s",
        " 123456",
        " '",
        "S",
        "!!",
        "\n\n",
        " x",
    ]
    assert p.pretokenize("Hi  there's 123456 'S!!\n\n x") == p.pretokenize_reference("Hi  there's 123456 'S!!\n\n x")


def test_one_warning_per_pattern_and_how_to_silence_it():
    pattern = r"[a-z]+|[^a-z]+"  # ASCII words: no compiled scanner
    import fastsw.pretokenizers.pretokenize as pt

    pt._WARNED.discard(("simple", pattern, None))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            p = Pretokenizer(mode="simple", main_pattern=pattern)
            assert p.pretokenize("ab, cd") == ["ab", ", ", "cd"]
    got = [w for w in caught if issubclass(w.category, fastsw.PatternNotCompiledWarning)]
    assert len(got) == 1, [str(w.message) for w in caught]
    message = str(got[0].message)
    assert pattern in message and "regex path" in message
    assert "filterwarnings('ignore', category=fastsw.PatternNotCompiledWarning)" in message
    pt._WARNED.discard(("simple", pattern, None))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=fastsw.PatternNotCompiledWarning)
        Pretokenizer(mode="simple", main_pattern=pattern).pretokenize("ab")
    assert not [w for w in caught if issubclass(w.category, fastsw.PatternNotCompiledWarning)]


def test_no_warning_without_the_compiled_path(monkeypatch):
    import fastsw.pretokenizers.pretokenize as pt

    pattern = r"[a-y]+|[^a-y]+"
    pt._WARNED.discard(("simple", pattern, None))
    with warnings.catch_warnings():
        warnings.simplefilter("error", fastsw.PatternNotCompiledWarning)
        Pretokenizer(mode="none", main_pattern=pattern).pretokenize("ab cd")
        monkeypatch.setattr(pt, "HAVE_NATIVE_PRETOKENIZER", False)  # FASTSW_PUREPYTHON=1 or no extension
        Pretokenizer(mode="simple", main_pattern=pattern).pretokenize("ab cd")


def test_script_mode_recognises_gpt4o_however_spelled():
    respelled = GPT4O_PATTERN.replace(r"\p{N}{1,3}", r"[\p{N}]{1,3}")
    p = Pretokenizer(mode="script", main_pattern=respelled)
    assert p.uses_native and native_counting(p)  # the compiled counter too: it runs GPT-4o's pattern
    text = "Hello 世界, it's 2024! ไทย ok"
    assert p.pretokenize(text) == p.pretokenize_reference(text)
    # cl100k_base's pattern has no script-chunked scanner; the compiled counter keeps to GPT-4o's
    assert not Pretokenizer(mode="script", main_pattern=CL100K_PATTERN).uses_native
    assert not native_counting(Pretokenizer(mode="simple", main_pattern=GPT2_PATTERN))
    other = Pretokenizer(mode="script", script_specific_pattern=r" ?\p{L}+|\s+|[^\s\p{L}]+")
    assert not other.uses_native


def test_from_tiktoken_with_the_older_spelling_is_compiled():
    """A tiktoken Encoding built with the older cl100k_base spelling (older tiktoken, Llama 3) used to fall back to
    regex: it now runs on its own compiled scanner with tiktoken's ids."""
    ranks = {bytes([b]): b for b in range(256)}
    for word in (b"he", b"ll", b"hell", b"hello", b" w", b" wo", b"\n\n"):
        ranks[word] = len(ranks)
    enc = tiktoken.Encoding("small", pat_str=CL100K_LEGACY_PATTERN, mergeable_ranks=ranks, special_tokens={})
    tok = fastsw.Tokenizer.from_tiktoken(enc, cache=False)
    assert tok.pretokenizer.uses_native
    for text in ("hello world\n\n  ", "hello\n\n\n x", "it's HELLO 12345"):
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
