"""The compiled scanner's letter runs taken several code units at a time (``_lower_run`` in fastsw/pretokenizers/_pretok.pyx):
ASCII a-z eight code units per step in 1-byte strings and eight per two words in 2-byte strings, anything else
through the class table. Its reference is the ``regex`` path (``Pretokenizer.pretokenize_reference``); these
texts put the end of a run and the non-ASCII letters that continue one at every offset of those steps, in all
three ``str`` kinds, and near the text's end (the last code units never read a whole word)."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import HYPOTHESIS_EXAMPLES

from fastsw.pretokenizers.pretokenize import Pretokenizer

# 1-byte kind: "é" (0xE9, a lower-case letter above 0x7F); 2-byte kind: "š", "ʼ" (Lm, both classes) and the
# curly quote (punctuation); 4-byte kind: an emoji; ASCII that stops a run: "{" and "`" (next to a-z in
# the code table), "A", "Z", digits, space, apostrophe (contractions)
STOPS = ["{", "`", "@", "A", "Z", "0", " ", "'", "\n", "."]
WIDE = {"1-byte": ["é", "ß", "ÿ"], "2-byte": ["š", "ʼ", "ǅ", "\u2019"], "4-byte": ["\U0001f600", "𝐚"]}
PRETOKENIZERS = [Pretokenizer(), Pretokenizer(mode="simple")]


def check(text):
    for p in PRETOKENIZERS:
        assert p.pretokenize(text) == p.pretokenize_reference(text), (p, text)


def test_the_scanner_is_compiled():
    assert all(p.uses_native for p in PRETOKENIZERS)


@pytest.mark.parametrize("kind", list(WIDE))
def test_run_ends_at_every_offset(kind):
    wide = WIDE[kind]
    for first in range(0, 20):
        for stop in STOPS + wide:
            for tail in range(0, 12):
                word = "abcdefghijklmnopqrstuvwxyz"[:first]
                text = "x" + word + stop + "y" * tail + wide[0]  # wide[0] sets the str kind
                check(text)
                check(" " + word.capitalize() + stop + "qrstuvw" + wide[-1])
                check("IS" + word + stop + wide[0] + "z" * tail)


def test_random_runs_of_letters_and_stops():
    rng = random.Random(15)
    alphabet = "abcmnxyz" * 6 + "".join(STOPS) + "ÉéšʼǅĀ\u2019\U0001f600"
    for _ in range(3000):
        check("".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 40))))


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["abcdefgh", "xyz", "q", "é", "š", "ʼ", "\u2019", "\U0001f600", "A", "Bc", "{", " ", "'s", "'LL", "\n", "7"]
        ),
        max_size=30,
    )
)
def test_hypothesis_runs(parts):
    check("".join(parts))
