"""Parity-aware BPE's fast path (fastsw.trainers.parity_fast, fastsw.trainers.parity_kernels) against its plain-Python twin
fastsw.trainers.parity.learn_parity_merges: the same merges with counts, language choices, criterion lengths and final
words, on real multilingual text (../shared/corpus, XQuAD) and on Hypothesis inputs; through train() the same
models on both backends; bad input refused the same way."""

import doctest
import json
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fastsw
import fastsw.trainers.parity_fast
from fastsw.alphabet import default_alphabet
from fastsw.corpus.counting import count_corpus
from fastsw.trainers.parity_fast import learn_parity_merges_fast
from fastsw.trainers.parity import learn_parity_merges
from fastsw.pretokenizers.pretokenize import Pretokenizer

from conftest import BACKENDS, HYPOTHESIS_EXAMPLES, shared_path

LANGS = ["ar", "de", "en", "ru", "zh"]  # five scripts; all five have XQuAD dev texts


def corpus_words(lang: str, n_bytes: int, alphabet):
    """The first ``n_bytes`` of a language's training text, counted, as (initial-id words, counts)."""
    import gzip

    docs, size = [], 0
    with gzip.open(shared_path(f"corpus/{lang}/train.jsonl.gz"), "rt", encoding="utf-8") as f:
        for line in f:
            docs.append(json.loads(line)["text"])
            size += len(docs[-1].encode())
            if size >= n_bytes:
                break
    return counted(docs, alphabet)


def counted(docs, alphabet):
    t = count_corpus(docs, Pretokenizer(), collect_runs=False)
    return [alphabet.initial_ids(p) for p in t.pretokens], list(t.counts)


def xquad_words(lang: str, alphabet, n=40):
    path = shared_path(f"corpus/parallel/xquad.dev.{lang}.jsonl")
    docs = [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines()][:n]
    return counted(docs, alphabet), len(docs)


def both(train, profile, n_merges, **options):
    """(reference result, its token bytes, fast result, its token bytes)."""
    alphabet = default_alphabet(profile)
    tb_ref, tb_fast = list(alphabet.tokens), list(alphabet.tokens)
    ref = learn_parity_merges(train, tb_ref, profile, n_merges, **options)
    fast = learn_parity_merges_fast(train, tb_fast, profile, n_merges, **options)
    return ref, tb_ref, fast, tb_fast


def assert_same(ref, tb_ref, fast, tb_fast):
    assert fast.merges == ref.merges
    assert fast.languages == ref.languages
    assert fast.lengths == ref.lengths
    assert fast.words == ref.words
    assert tb_fast == tb_ref


def test_docstring_example():
    assert doctest.testmod(fastsw.trainers.parity_fast, optionflags=doctest.ELLIPSIS).failed == 0


@pytest.fixture(scope="module", params=["paper", "hf"])
def real_text(request):
    """Five languages' training text (12 kB each) and XQuAD dev texts (40 parallel documents), one profile."""
    profile = request.param
    alphabet = default_alphabet(profile)
    train = {lang: corpus_words(lang, 12_000, alphabet) for lang in LANGS}
    dev, sizes = {}, {}
    for lang in LANGS:
        dev[lang], sizes[lang] = xquad_words(lang, alphabet)
    return profile, train, dev, sizes


REAL_VARIANTS = {
    "dev": lambda dev, sizes: dict(dev_words=dev, dev_sizes=sizes),
    "ratios": lambda dev, sizes: dict(ratios={"ar": 1, "de": Fraction(6, 5), "en": 1.3, "ru": 0.9, "zh": 2}),
    "hybrid": lambda dev, sizes: dict(dev_words=dev, global_merges=25),
    "window": lambda dev, sizes: dict(dev_words=dev, variant="window", window=15, alpha=1.5),
    "hybrid-window-min_frequency": lambda dev, sizes: dict(
        ratios=dict.fromkeys(LANGS, 1),
        global_merges=10,
        variant="window",
        window=6,
        alpha=Fraction(7, 5),
        min_frequency=4,
    ),
}


@pytest.mark.parametrize("variant", list(REAL_VARIANTS))
def test_fast_equals_reference_on_real_multilingual_text(real_text, variant):
    profile, train, dev, sizes = real_text
    options = REAL_VARIANTS[variant](dev, sizes)
    ref, tb_ref, fast, tb_fast = both(train, profile, 150, **options)
    assert len(ref.merges) == 150  # the loop ran its course (no early stop hides a difference)
    assert_same(ref, tb_ref, fast, tb_fast)
    chosen = {lang for lang in ref.languages if lang is not None}
    assert len(chosen) >= 2  # the choice moves between languages


def test_min_frequency_stop_is_the_same(real_text):
    # a tiny language runs out of pairs seen twice: both paths stop at the same step
    profile, train, dev, sizes = real_text
    small = dict(train, my=corpus_words("my", 300, default_alphabet(profile)))
    ratios = dict.fromkeys(small, 1)
    ref, tb_ref, fast, tb_fast = both(small, profile, 2000, ratios=ratios, exhausted="stop")
    assert len(ref.merges) < 2000 and ref.languages[-1] is not None
    assert_same(ref, tb_ref, fast, tb_fast)


# ---- Hypothesis: many small languages over a tiny alphabet, so that count ties and runs of equal tokens abound

tokens_ = st.integers(min_value=0, max_value=3)
words_ = st.lists(
    st.tuples(st.lists(tokens_, min_size=1, max_size=7), st.integers(min_value=0, max_value=4)), min_size=1, max_size=6
)


def nonempty(words):
    return any(c and w for w, c in words)


@st.composite
def parity_inputs(draw):
    n_lang = draw(st.integers(min_value=1, max_value=4))
    langs = [f"l{k}" for k in range(n_lang)]
    train = {}
    for lang in langs:
        w = draw(words_.filter(nonempty))
        train[lang] = ([x for x, _ in w], [c for _, c in w])
    options = {}
    if draw(st.booleans()):
        dev = {}
        for lang in langs:
            w = draw(words_.filter(nonempty))
            dev[lang] = ([x for x, _ in w], [c for _, c in w])
        options["dev_words"] = dev
    else:
        ratio = st.one_of(
            st.integers(min_value=1, max_value=5),
            st.fractions(min_value=Fraction(1, 7), max_value=7).filter(lambda f: f > 0),
            st.floats(min_value=0.05, max_value=20),
        )
        options["ratios"] = {lang: draw(ratio) for lang in langs}
    options["global_merges"] = draw(st.integers(min_value=0, max_value=3))
    if draw(st.booleans()):
        columns = n_lang + (1 if options["global_merges"] else 0)
        options.update(
            variant="window",
            window=draw(st.integers(min_value=1, max_value=5)),
            alpha=draw(st.fractions(min_value=Fraction(columns, n_lang), max_value=4)),
        )
    options["min_frequency"] = draw(st.integers(min_value=1, max_value=3))
    options["exhausted"] = draw(st.sampled_from(["skip", "stop"]))
    return train, options


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parity_inputs(), st.sampled_from(["paper", "hf"]), st.integers(min_value=0, max_value=12))
def test_fast_equals_reference_on_hypothesis_inputs(inputs, profile, n_merges):
    train, options = inputs
    tb = [bytes([b]) for b in b"aab\x00"]  # tokens 0 and 1 spell the same byte: the paper tie goes on to the ids
    tb_ref, tb_fast = list(tb), list(tb)
    ref = learn_parity_merges(train, tb_ref, profile, n_merges, **options)
    fast = learn_parity_merges_fast(train, tb_fast, profile, n_merges, **options)
    assert_same(ref, tb_ref, fast, tb_fast)


ADVERSARIAL_CHARS = list("aá a\u0301ß\u00a0\u200d👍🏽日本 \n'1١") + ["\ud7ff", "\U0010fffd"]
adversarial = st.text(alphabet=st.sampled_from(ADVERSARIAL_CHARS), min_size=1, max_size=25)


@pytest.mark.filterwarnings("ignore::fastsw.notes.VocabularyNotReachedWarning")  # tiny texts run out of pairs
@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(adversarial, min_size=2, max_size=3), st.sampled_from(["paper", "hf"]), st.booleans())
def test_train_backends_agree_on_adversarial_unicode(texts, profile, hybrid):
    inputs = {f"l{k}": [t, t[::-1]] for k, t in enumerate(texts)}
    dev = {lang: [docs[0][:5] or "a"] for lang, docs in inputs.items()}
    models = [
        fastsw.train(
            inputs,
            algo="parity-bpe",
            vocab_size=len(default_alphabet(profile)) + 12,
            profile=profile,
            dev=dev,
            global_merges=2 if hybrid else None,
            backend=backend,
        )
        for backend in BACKENDS
    ]
    assert [(m.left, m.right, m.count) for m in models[0].merges] == [
        (m.left, m.right, m.count) for m in models[1].merges
    ]
    assert models[0].training_info["parity"] == models[1].training_info["parity"]


# ---- exactness and bad input


def test_ratio_criterion_is_exact_where_floats_tie():
    # the criteria (initial / current) / ratio differ by 1 part in 10**20: floats call them equal (and would take
    # the first language), the exact comparison takes the second
    tb = [bytes([b]) for b in range(256)]
    a, b = ord("a"), ord("b")
    train = {"x": ([[a, b]], [3]), "y": ([[b, a]], [3])}
    eps = Fraction(1, 10**20)
    ratios = {"x": Fraction(1), "y": 1 + eps}
    assert float(Fraction(2, 2) / ratios["x"]) == float(Fraction(2, 2) / ratios["y"])
    ref = learn_parity_merges(train, list(tb), "hf", 1, ratios=ratios)
    fast = learn_parity_merges_fast(train, list(tb), "hf", 1, ratios=ratios)
    assert ref.languages == fast.languages == ["y"]


@pytest.mark.parametrize(
    "call, message",
    [
        (dict(train_words={"x": ([[1, 2]], [1])}, n_merges=3), "exactly one of dev_words"),
        (dict(train_words={"x": ([[1, 2]], [1])}, n_merges=3, ratios={"x": 0}), "must be a number > 0"),
        (dict(train_words={"x": ([], [])}, n_merges=3, ratios={"x": 1}), "no text in train_words"),
        (
            dict(
                train_words={"x": ([[1, 2]], [1]), "y": ([[1]], [1])},
                n_merges=3,
                dev_words={"x": ([[1]], [1]), "y": ([[2]], [1])},
                dev_sizes={"x": 1, "y": 2},
            ),
            "not parallel",
        ),
        (
            dict(train_words={"x": ([[1, 2]], [1])}, n_merges=3, ratios={"x": 1}, variant="window", alpha=0.5),
            "exclude every language",
        ),
        (dict(train_words={"x": ([[1, 2]], [1])}, n_merges=3, dev_words={"z": ([[1]], [1])}), "no training text"),
    ],
)
def test_bad_input_same_error_as_the_reference(call, message):
    tb = [bytes([b]) for b in range(256)]
    errors = []
    for learn in (learn_parity_merges, learn_parity_merges_fast):
        with pytest.raises(ValueError, match=message) as info:
            learn(token_bytes=tb, profile="hf", **call)
        errors.append(str(info.value))
    assert errors[0] == errors[1]
    assert tb == [bytes([b]) for b in range(256)]  # nothing learned


@pytest.mark.parametrize("criterion", [dict(ratios={"en": 1, "de": 1}), dict(dev={"en": ["a"], "de": ["b"]})])
def test_train_refuses_a_language_without_text_on_both_backends(criterion):
    messages = []
    for backend in BACKENDS:
        with pytest.raises(ValueError, match="language 'de' has no text") as info:
            fastsw.train(
                {"en": ["the cat sat"], "de": []}, algo="parity-bpe", vocab_size=300, backend=backend, **criterion
            )
        messages.append(str(info.value))
    assert messages[0] == messages[1]


# ---- Ctrl-C: a real SIGINT inside the parity kernel

_SIGINT_CHILD = r"""
import gzip, json, os, signal, sys, threading
import fastsw, fastsw.trainers.parity_fast as fp

def docs(lang, n_bytes=1_000_000):
    out, size = [], 0
    with gzip.open(os.path.join(sys.argv[1], "corpus", lang, "train.jsonl.gz"), "rt", encoding="utf-8") as f:
        for line in f:
            out.append(json.loads(line)["text"])
            size += len(out[-1].encode())
            if size > n_bytes:
                return out

stopped = []  # per kernel call on the corpus: whether the interrupt reached it
orig = fp.call_kernel
def call_kernel(kernel, *args):
    if len(args[2]) < 1000:  # the warm-up
        return orig(kernel, *args)
    threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT)).start()  # 50 ms after the kernel starts
    stopped.append(False)
    try:
        return orig(kernel, *args)
    except KeyboardInterrupt:
        stopped[-1] = True
        raise
fp.call_kernel = call_kernel
train = {lang: docs(lang) for lang in ("en", "de", "ru")}
fastsw.train({"a": ["warm up"], "b": ["up warm"]}, algo="parity-bpe", ratios={"a": 1, "b": 1}, vocab_size=260)
try:
    # seconds of merging: 3 MB, words that keep merging (simple pre-tokenizer), pairs seen once merged too
    fastsw.train(train, algo="parity-bpe", vocab_size=200000, ratios={"en": 1, "de": 1, "ru": 1}, backend="numba",
                 pretokenizer="simple", min_frequency=1)
    print("finished")
except KeyboardInterrupt:
    print(json.dumps({"stopped": stopped, "threads": [t.name for t in threading.enumerate()
                                                        if t.name.startswith("fastsw")]}))
"""


@pytest.mark.filterwarnings("ignore::fastsw.notes.VocabularyNotReachedWarning")
def test_ctrl_c_stops_the_parity_kernel():
    import os
    import subprocess
    import sys
    from pathlib import Path

    shared = shared_path("corpus").parent
    repo = Path(fastsw.__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(repo), os.environ.get("PYTHONPATH")])))
    r = subprocess.run(
        [sys.executable, "-c", _SIGINT_CHILD, str(shared)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("{"), (r.stdout, r.stderr)  # KeyboardInterrupt, not "finished"
    out = json.loads(r.stdout)
    assert out["stopped"] == [True]  # raised out of the parity kernel's call, the one kernel call on the corpus
    assert out["threads"] == []  # no kernel thread keeps running


def test_each_kernel_compiled_once(real_text):
    # Parity-aware BPE and BPE share the merge loop's helpers (bpe_kernels): after a run of each, every kernel
    # has at most one signature (a helper compiles only when the loop calling it compiles, not when that loop is
    # loaded from Numba's cache). A literal argument (a variable holding -1 on some path) would add a second one.
    from fastsw.trainers import bpe_kernels, parity_kernels

    if not hasattr(parity_kernels._parity_loop, "signatures"):
        pytest.skip("NUMBA_DISABLE_JIT=1: the kernels ran as plain Python")
    profile, train, dev, sizes = real_text
    for options in REAL_VARIANTS.values():  # every branch of the language choice
        learn_parity_merges_fast(train, list(default_alphabet(profile).tokens), profile, 60, **options(dev, sizes))
    fastsw.train(["the cat sat on the mat", "the hat"], vocab_size=270, backend="numba")
    for kernel in bpe_kernels.KERNELS + parity_kernels.KERNELS:
        assert len(kernel.signatures) <= 1, kernel.__name__
