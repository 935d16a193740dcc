"""Parity-aware BPE reference (fastsw.trainers.parity): hand-worked toys, the window and hybrid variants, the published
script's recorded runs on real multilingual text (tests/data/parity_script), and bad input."""

import collections
import doctest
import gzip
import hashlib
import json
from pathlib import Path

import pytest

import fastsw.trainers.parity
from fastsw.alphabet import get_profile
from fastsw.trainers.bpe import apply_merges, learn_merges
from fastsw.trainers.parity_fast import learn_parity_merges_fast
from fastsw.trainers.parity import learn_parity_merges

from conftest import shared_path


@pytest.fixture(params=["reference", "fast"])
def learn(request):
    """The worked-by-hand tests run on both twins: fastsw.trainers.parity.learn_parity_merges and its fast path."""
    return learn_parity_merges if request.param == "reference" else learn_parity_merges_fast


def byte_table():
    return [bytes([b]) for b in range(256)]


def words_of(counter):
    """{b"word": count} -> (words as byte-id lists, counts)."""
    keys = list(counter)
    return [list(k) for k in keys], [counter[k] for k in keys]


def spelled(token_bytes, merges):
    return [token_bytes[left] + token_bytes[right] for left, right, _ in merges]


def test_docstring_example():
    assert doctest.testmod(fastsw.trainers.parity, optionflags=doctest.ELLIPSIS).failed == 0


# The hand-worked toy: two languages, one dev document each (parallel).
TOY_TRAIN = {"en": {b"th": 4, b"the": 3}, "de": {b"die": 5, b"ie": 2}}
TOY_DEV = {"en": {b"the": 1}, "de": {b"die": 1, b"ie": 1}}


@pytest.mark.parametrize("profile", ["paper", "hf"])
def test_language_choice_sequence_worked_by_hand(profile, learn):
    # Training pair counts: en  t+h = 4 + 3 = 7, h+e = 3;  de  d+i = 5, i+e = 5 + 2 = 7  (no ties at the top).
    # Dev lengths: en "the" = 3; de "die" + "ie" = 3 + 2 = 5.
    # step 0: en 3 < de 5 -> de; de's best i+e (7). de dev: "d|ie" + "ie" = 2 + 1 = 3.
    # step 1: en 3 = de 3 -> tie, the first language: en; en's best t+h (7). en dev: "th|e" = 2.
    # step 2: en 2 < de 3 -> de; de's words are now d|ie x5, ie x2: best d+ie (5). de dev: "die" + "ie" = 2.
    # step 3: en 2 = de 2 -> en; en's words th x4, th|e x3: best th+e (3). en dev: "the" = 1.
    # step 4: en 1 < de 2 -> de; de's words die x5, ie x2 have no pair left: stop.
    tb = byte_table()
    out = learn(
        {l: words_of(c) for l, c in TOY_TRAIN.items()},
        tb,
        profile,
        10,
        dev_words={l: words_of(c) for l, c in TOY_DEV.items()},
    )
    assert out.languages == ["de", "en", "de", "en"]
    assert spelled(tb, out.merges) == [b"ie", b"th", b"die", b"the"]
    assert [count for _, _, count in out.merges] == [7, 7, 5, 3]
    assert out.lengths == [
        {"en": 3, "de": 5},
        {"en": 3, "de": 3},
        {"en": 2, "de": 3},
        {"en": 2, "de": 2},
        {"en": 1, "de": 2},
    ]
    assert [[tb[t] for t in w] for w in out.words["de"]] == [[b"die"], [b"ie"]]


def test_ratio_choice_sequence_worked_by_hand(learn):
    # Initial training lengths: en 2*4 + 3*3 = 17; de 3*5 + 2*2 = 19. Targets: en 1, de 2.
    # Criterion (initial / current) / ratio, lowest first:
    # step 0: en 17/17/1 = 1, de 19/19/2 = 1/2 -> de: i+e (7) shortens de by 5 + 2 = 7 -> 12.
    # step 1: en 1, de 19/12/2 = 19/24 -> de: d+ie (5) -> 7.
    # step 2: en 1, de 19/7/2 = 19/14 -> en: t+h (7) shortens en by 4 + 3 = 7 -> 10.
    # step 3: en 17/10 = 1.7 > de 19/14 -> de: no pair left, stop (the script's rule; the default goes on with
    # en, see tests/trainers/test_parity_exhausted.py).
    tb = byte_table()
    out = learn(
        {l: words_of(c) for l, c in TOY_TRAIN.items()}, tb, "paper", 10, ratios={"en": 1, "de": 2}, exhausted="stop"
    )
    assert out.languages == ["de", "de", "en"]
    assert spelled(tb, out.merges) == [b"ie", b"die", b"th"]
    assert out.lengths == [{"en": 17, "de": 19}, {"en": 17, "de": 12}, {"en": 17, "de": 7}, {"en": 10, "de": 7}]
    # equal targets: both criteria start at 1 -> the first language (en) wins the tie
    out = learn({l: words_of(c) for l, c in TOY_TRAIN.items()}, byte_table(), "paper", 1, ratios={"en": 1.5, "de": 1.5})
    assert out.languages == ["en"]


def test_min_frequency_stops_the_whole_run(learn):
    # step 0 picks de's i+e with count 7; with min_frequency=8 that is too rare: under the script's rule
    # nothing is learned, although en has pairs left.
    out = learn(
        {l: words_of(c) for l, c in TOY_TRAIN.items()},
        byte_table(),
        "paper",
        10,
        dev_words={l: words_of(c) for l, c in TOY_DEV.items()},
        min_frequency=8,
        exhausted="stop",
    )
    assert out.merges == [] and out.languages == [] and out.lengths == [{"en": 3, "de": 5}]


def dominant_toy():
    # "big" needs 16 dev tokens per document x 10 documents and loses 10 per merge; "small" needs 8 and loses 1:
    # big's dev text stays the longer, so the base variant always chooses big.
    train = {"big": words_of({b"abcdefghijklmnop": 100}), "small": words_of({b"qrstuvwx": 50})}
    dev = {"big": words_of({b"abcdefghijklmnop": 10}), "small": words_of({b"qrstuvwx": 1})}
    return train, dev


def test_window_variant_restricts_a_dominant_language(learn):
    train, dev = dominant_toy()
    base = learn(train, byte_table(), "paper", 9, dev_words=dev)
    assert base.languages == ["big"] * 9
    # window 4, alpha 1, two columns: a language is allowed while (its choices among the last 4) / 4 <= 1/2,
    # i.e. at most 2 of the last 4.
    # step 0: []            big 0 -> big      step 5: [b b s s]  big 2 -> big
    # step 1: [b]           big 1 -> big      step 6: [b s s b]  big 2 -> big
    # step 2: [b b]         big 2 -> big      step 7: [s s b b]  big 2 -> big
    # step 3: [b b b]       big 3 -> small    step 8: [s b b b]  big 3 -> small
    # step 4: [b b b s]     big 3 -> small
    win = learn(train, byte_table(), "paper", 9, dev_words=dev, variant="window", window=4, alpha=1)
    B, S = "big", "small"
    assert win.languages == [B, B, B, S, S, B, B, B, S]
    assert [l["small"] for l in win.lengths] == [8, 8, 8, 8, 7, 6, 6, 6, 6, 5]
    # the default alpha 2 allows a language the whole window when there are two columns: no restriction
    assert learn(train, byte_table(), "paper", 9, dev_words=dev, variant="window", window=4).languages == base.languages


def test_window_counts_the_summed_column_when_hybrid(learn):
    # hybrid: three columns (big, small, summed), so alpha 1.5 allows 1.5/3 = 1/2 of the window, as alpha 1
    # does without the summed column; the global step does not enter the window.
    train, dev = dominant_toy()
    win = learn(train, byte_table(), "paper", 10, dev_words=dev, variant="window", window=4, alpha=1.5, global_merges=1)
    assert win.languages == [None, "big", "big", "big", "small", "small", "big", "big", "big", "small"]


def small_real_counts(langs, train_bytes, dev_docs):
    """Whitespace-split words of the first ``train_bytes`` of each language's training text and of the first
    ``dev_docs`` documents of its XQuAD dev text (multi-parallel), as byte strings."""
    train, dev = {}, {}
    for lang in langs:
        counter, seen = collections.Counter(), 0
        with gzip.open(shared_path(f"corpus/{lang}/train.jsonl.gz"), "rt", encoding="utf-8") as f:
            for line in f:
                text = json.loads(line)["text"]
                counter.update(w.encode() for w in text.split())
                seen += len(text.encode())
                if seen > train_bytes:
                    break
        train[lang] = counter
        counter = collections.Counter()
        with open(shared_path(f"corpus/parallel/xquad.dev.{lang}.jsonl"), encoding="utf-8") as f:
            for _, line in zip(range(dev_docs), f):
                counter.update(w.encode() for w in json.loads(line)["text"].split())
        dev[lang] = counter
    return train, dev


def test_hybrid_starts_with_ordinary_bpe_on_the_summed_counts(learn):
    langs = ["en", "de", "ru"]
    train, dev = small_real_counts(langs, 20000, 20)
    tb = byte_table()
    out = learn(
        {l: words_of(train[l]) for l in langs},
        tb,
        "paper",
        40,
        dev_words={l: words_of(dev[l]) for l in langs},
        global_merges=25,
    )
    summed = collections.Counter()
    for lang in langs:
        summed.update(train[lang])
    tb_bpe = byte_table()
    bpe, _ = learn_merges(*words_of(summed), tb_bpe, get_profile("paper"), 25)
    assert out.merges[:25] == bpe
    assert out.languages[:25] == [None] * 25 and None not in out.languages[25:]
    assert len(out.merges) == 40


@pytest.mark.parametrize("profile", ["paper", "hf"])
def test_merges_reach_every_language_and_dev_lengths_are_exact(profile):
    # the incremental dev lengths equal a re-encoding with the merges so far, at every step, and each
    # language's final training words equal its words encoded with all merges
    langs = ["en", "de", "ru", "ar"]
    train, dev = small_real_counts(langs, 5000, 10)
    tb = byte_table()
    out = learn_parity_merges(
        {l: words_of(train[l]) for l in langs},
        tb,
        profile,
        60,
        dev_words={l: words_of(dev[l]) for l in langs},
        variant="window",
        window=10,
    )
    assert len(out.merges) == 60 and len(set(out.languages)) > 1
    for k in (0, 1, 7, 30, 60):
        ranks = {(l, r): (i, 256 + i) for i, (l, r, _) in enumerate(out.merges[:k])}
        for lang in langs:
            words, counts = words_of(dev[lang])
            assert out.lengths[k][lang] == sum(len(apply_merges(w, ranks)) * c for w, c in zip(words, counts))
    for lang in langs:
        assert out.words[lang] == [apply_merges(w, ranks) for w in words_of(train[lang])[0]]


# --- the published script as a peer ------------------------------------------------------------------------

# The published script (cimeister/parity-aware-bpe, parity_aware_bpe/parity_aware_learn_bpe.py, MIT) was run on
# these inputs and configurations; its merges, language choices and lengths are recorded in
# tests/data/parity_script/<name>.json by tests/data/parity_script/regenerate.py (run it again, with a clone of
# the script, whenever the configurations or the inputs change).
LANGS = ["en", "de", "ru"]
PUBLISHED_RUNS = {
    "base": (50, {}),
    "global5": (50, {"global_merges": 5}),
    "window10": (50, {"window": 10}),
    "window10-global5": (50, {"window": 10, "global_merges": 5}),
    "ratios": (40, {"ratios": {"en": 1.1, "de": 1.2, "ru": 1.0}}),
}
RECORDED = Path(__file__).resolve().parents[1] / "data" / "parity_script"


def published_inputs():
    """Counts from 40 kB of training text and 30 dev documents per language: the inputs of every recorded run."""
    return small_real_counts(LANGS, 40000, 30)


def inputs_digest(train, dev):
    """sha256 of the word counts, so that recorded runs are never compared on other inputs."""
    h = hashlib.sha256()
    for part in (train, dev):
        for lang in LANGS:
            for word, count in sorted(part[lang].items()):
                h.update(b"%d %d " % (len(word), count) + word)
            h.update(b"\n")
    return h.hexdigest()


@pytest.fixture(scope="module")
def inputs():
    train, dev = published_inputs()
    return train, dev, inputs_digest(train, dev)


def recorded_run(name):
    with open(RECORDED / f"{name}.json", encoding="utf-8") as f:
        record = json.load(f)
    merges = [tuple(bytes.fromhex(h) for h in m.split()) for m in record["merges"]]
    lengths = [dict(zip(record["langs"], step)) for step in record["lengths"]]
    return record, merges, record["languages"], lengths


@pytest.mark.parametrize("name", list(PUBLISHED_RUNS))
def test_same_merges_and_choices_as_the_published_script(inputs, name):
    # Real text, counts from 40 kB per language: the first n steps have no count tie at the top (the script
    # takes the largest string pair on a tie, fastsw's hf profile the smallest id pair, so any tie would show
    # as a different merge). The script counts overlapping pairs, as the hf profile does.
    n, options = PUBLISHED_RUNS[name]
    train, dev, digest = inputs
    record, theirs, their_choices, their_lengths = recorded_run(name)
    assert (record["n"], record["options"], record["langs"]) == (n, options, LANGS), (
        f"{name}.json records another configuration: run tests/data/parity_script/regenerate.py"
    )
    assert record["inputs_sha256"] == digest, (
        f"{name}.json was recorded on other inputs: run tests/data/parity_script/regenerate.py"
    )
    tb = byte_table()
    ratios = options.get("ratios")
    window = options.get("window")
    out = learn_parity_merges(
        {l: words_of(train[l]) for l in LANGS},
        tb,
        "hf",
        n,
        dev_words=None if ratios else {l: words_of(dev[l]) for l in LANGS},
        ratios=ratios,
        global_merges=options.get("global_merges", 0),
        variant="base" if window is None else "window",
        window=window or 100,
    )
    assert [(tb[l], tb[r]) for l, r, _ in out.merges] == theirs
    assert len(theirs) == n
    assert out.languages == their_choices
    assert out.lengths[:-1] == their_lengths  # dev lengths, or with ratios the training lengths
    assert len(set(their_choices) - {None}) > 1  # the toy exercises the choice, not one language
    tb_fast = byte_table()  # the fast twin gives the same run
    fast = learn_parity_merges_fast(
        {l: words_of(train[l]) for l in LANGS},
        tb_fast,
        "hf",
        n,
        dev_words=None if ratios else {l: words_of(dev[l]) for l in LANGS},
        ratios=ratios,
        global_merges=options.get("global_merges", 0),
        variant="base" if window is None else "window",
        window=window or 100,
    )
    assert (fast.merges, fast.languages, fast.lengths, tb_fast) == (out.merges, out.languages, out.lengths, tb)


def test_recorded_runs_are_all_used():
    assert sorted(p.stem for p in RECORDED.glob("*.json")) == sorted(PUBLISHED_RUNS)


# --- bad input ---------------------------------------------------------------------------------------------


def toy_train():
    return {l: words_of(c) for l, c in TOY_TRAIN.items()}


def toy_dev():
    return {l: words_of(c) for l, c in TOY_DEV.items()}


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda tb: learn_parity_merges(
                {"en": ([], []), "de": toy_train()["de"]}, tb, "paper", 5, dev_words=toy_dev()
            ),
            "language 'en' has no text in train_words",
        ),
        (
            lambda tb: learn_parity_merges(
                toy_train(), tb, "paper", 5, dev_words={"en": ([[]], [3]), "de": toy_dev()["de"]}
            ),
            "language 'en' has no text in dev_words",
        ),
        (
            lambda tb: learn_parity_merges(
                toy_train(), tb, "paper", 5, dev_words=toy_dev(), dev_sizes={"en": 3, "de": 4}
            ),
            r"the dev texts are not parallel: their numbers of documents differ \(en: 3, de: 4\)",
        ),
        (
            lambda tb: learn_parity_merges(toy_train(), tb, "paper", 5, dev_words={**toy_dev(), "fr": toy_dev()["en"]}),
            "dev_words names language\\(s\\) 'fr' with no training text",
        ),
        (
            lambda tb: learn_parity_merges(toy_train(), tb, "paper", 5, dev_words={"en": toy_dev()["en"]}),
            "dev_words is missing language\\(s\\) 'de'",
        ),
        (
            lambda tb: learn_parity_merges(toy_train(), tb, "paper", 5, ratios={"en": 1, "de": 0}),
            r"ratios\['de'\]=0 must be a number > 0",
        ),
        (
            lambda tb: learn_parity_merges(toy_train(), tb, "paper", 5, ratios={"en": -1.5, "de": 1}),
            r"ratios\['en'\]=-1.5 must be a number > 0",
        ),
        (lambda tb: learn_parity_merges(toy_train(), tb, "paper", 5), "give exactly one of dev_words"),
        (
            lambda tb: learn_parity_merges(toy_train(), tb, "paper", 5, dev_words=toy_dev(), ratios={"en": 1, "de": 1}),
            "give exactly one of dev_words",
        ),
        (
            lambda tb: learn_parity_merges(toy_train(), tb, "paper", 5, dev_words=toy_dev(), variant="moving"),
            "variant='moving' is not one of base, window",
        ),
        (
            lambda tb: learn_parity_merges(
                toy_train(), tb, "paper", 5, dev_words=toy_dev(), variant="window", alpha=1, global_merges=2
            ),
            "alpha=1 would let the window exclude every language; use alpha >= 3/2",
        ),
        (
            lambda tb: learn_parity_merges(toy_train(), tb, "paper", 5, dev_words=toy_dev(), window=0),
            "window=0 must be an integer >= 1",
        ),
        (
            lambda tb: learn_parity_merges({}, tb, "paper", 5, dev_words=toy_dev()),
            "train_words must be a non-empty dict",
        ),
        (
            lambda tb: learn_parity_merges(
                {"en": ([[1, 2]], [1, 2]), "de": toy_train()["de"]}, tb, "paper", 5, dev_words=toy_dev()
            ),
            "train_words\\['en'\\] has 1 words but 2 counts",
        ),
    ],
)
def test_bad_input_is_one_clear_value_error_and_nothing_is_learned(call, message):
    tb = byte_table()
    with pytest.raises(ValueError, match=message):
        call(tb)
    assert tb == byte_table()  # no token was added
