"""Parity-aware BPE through train() and the CLI (algo='parity-bpe', phase1='parity-bpe'): the issue's target on
XQuAD (lower Gini than BPE), faithfulness to fastsw.trainers.parity.learn_parity_merges, models that save, load, export and
round-trip, BoundlessBPE/SuperBPE on a parity phase 1, and one clear error per bad input."""

import doctest
import json

import pytest

import fastsw
import fastsw.trainers.train
from fastsw.alphabet import default_alphabet
from fastsw.corpus.counting import count_corpus
from fastsw.eval.metrics import gini
from fastsw.trainers.parity import learn_parity_merges
from fastsw.pretokenizers.pretokenize import make_pretokenizer

from conftest import BACKENDS, assert_error, run, shared_path


def xquad(split: str, lang: str, n=None):
    path = shared_path(f"corpus/parallel/xquad.{split}.{lang}.jsonl")
    docs = [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines()]
    return docs[:n]


def merges(tok):
    """Every merge with its count: (left id, right id, count, is supermerge)."""
    return [(m.left, m.right, m.count, m.super) for m in tok.merges]


def test_docstring_example():
    assert doctest.testmod(fastsw.trainers.train, optionflags=doctest.ELLIPSIS).failed == 0


# ---- the target: lower Gini than ordinary BPE at the same vocabulary ---------------------------------------


def test_parity_lowers_gini_on_xquad():
    # Train on XQuAD's dev split of five languages (parallel), dev = the same texts, evaluate on the test split:
    # ordinary BPE spends its merges on the languages with the most frequent pairs (en), parity-aware BPE on the
    # one whose dev text is longest, so the per-language test token counts come closer together.
    langs = ["en", "de", "ru", "hi", "th"]
    train = {lang: xquad("dev", lang) for lang in langs}
    test = {lang: xquad("test", lang) for lang in langs}
    bpe = fastsw.train(train, algo="bpe", vocab_size=800)
    pa = fastsw.train(train, algo="parity-bpe", vocab_size=800, dev=train)
    assert pa.vocab_size == bpe.vocab_size == 800

    def test_gini(tok):
        return gini({lang: sum(len(ids) for ids in tok.encode_batch(test[lang])) for lang in langs})

    g_bpe, g_pa = test_gini(bpe), test_gini(pa)
    assert g_pa < g_bpe / 2, (g_pa, g_bpe)  # measured: 0.0026 vs 0.0771
    # every language was chosen, and the dev lengths recorded are the texts' token counts under the model
    info = pa.training_info["parity"]
    assert set(info["chosen"]) == set(range(len(langs)))
    assert info["lengths"]["final"] == {lang: sum(len(ids) for ids in pa.encode_batch(train[lang])) for lang in langs}


# ---- faithful to learn_parity_merges -----------------------------------------------------------------------------


def direct(train, profile, n_merges, dev=None, **options):
    """learn_parity_merges on words counted the way train() counts them (script pretokenizer)."""
    pretok = make_pretokenizer("script")
    alpha = default_alphabet(profile)

    def words(docs):
        counts = count_corpus(docs, pretok, collect_runs=False, threads=1)
        return [alpha.initial_ids(p) for p in counts.pretokens], counts.counts

    token_bytes = list(alpha.tokens)
    out = learn_parity_merges(
        {lang: words(d) for lang, d in train.items()},
        token_bytes,
        profile,
        n_merges - len(alpha),
        dev_words=None if dev is None else {lang: words(d) for lang, d in dev.items()},
        **options,
    )
    return out, token_bytes


VARIANTS = [
    dict(dev=True),
    dict(ratios={"en": 1, "de": 2, "ru": 1.5}),
    dict(dev=True, global_merges=20),
    dict(dev=True, parity_variant="window", window=10, alpha=1),
    dict(ratios={"en": 1, "de": 1, "ru": 1}, min_frequency=4),
]


@pytest.mark.parametrize("profile", ["paper", "hf"])
@pytest.mark.parametrize("variant", VARIANTS, ids=["dev", "ratios", "hybrid", "window", "min_frequency"])
def test_merges_equal_learn_parity_merges(variant, profile, backend):
    train = {lang: xquad("dev", lang, 40) for lang in ("en", "de", "ru")}
    dev = {lang: xquad("test", lang, 30) for lang in ("en", "de", "ru")}
    options = dict(variant)
    if options.pop("dev", False):
        options["dev"] = dev
    vocab_size = len(default_alphabet(profile)) + 150
    tok = fastsw.train(train, algo="parity-bpe", vocab_size=vocab_size, profile=profile, backend=backend, **options)
    ref_options = {"variant" if k == "parity_variant" else k: v for k, v in options.items() if k != "dev"}
    out, token_bytes = direct(train, profile, vocab_size, dev=dev if "dev" in options else None, **ref_options)
    assert merges(tok) == [(l, r, c, False) for l, r, c in out.merges]
    assert list(tok.vocab) == token_bytes
    info = tok.training_info["parity"]
    assert info["chosen"] == [-1 if lang is None else ["en", "de", "ru"].index(lang) for lang in out.languages]
    assert info["lengths"] == {"initial": out.lengths[0], "final": out.lengths[-1]}
    assert tok.algo == "bpe" and tok.training_info["options"]["algo"] == "parity-bpe"
    if "global_merges" in options:
        assert info["chosen"][:20] == [-1] * 20 and -1 not in info["chosen"][20:]


# ---- the model: save, load, export, encode/decode ----------------------------------------------------------------


def test_save_load_export_round_trip(tmp_path):
    train = {lang: xquad("dev", lang, 40) for lang in ("en", "de")}
    tok = fastsw.train(
        train,
        algo="parity-bpe",
        vocab_size=400,
        ratios={"en": 1, "de": 1},
        parity_variant="window",
        window=20,
        alpha=1.5,
    )
    tok.save(tmp_path / "m.json")
    back = fastsw.load(tmp_path / "m.json")
    assert merges(back) == merges(tok) and back.algo == "bpe"
    assert back.training_info["parity"] == tok.training_info["parity"]
    assert back.training_info["parity"]["window"] == 20 and back.training_info["parity"]["alpha"] == 1.5
    assert back.training_info["parity"]["ratios"] == {"en": 1, "de": 1}
    for text in xquad("test", "de", 5) + ["ünïcödé ✓ \U0001f600", ""]:
        ids = back.encode(text)
        assert ids == tok.encode(text) and back.decode(ids) == text
    exported = back.save_hf(tmp_path / "tokenizer.json", allow_approximate=True)
    assert (tmp_path / "tokenizer.json").exists() and exported is not None


# ---- BoundlessBPE / SuperBPE on a parity-aware phase 1 -----------------------------------------------------------


def test_replay_counts_worked_by_hand():
    # Three parity merges (alphabet of 4: ids 0-3; merge k makes id 4 + k) with counts 5, 2, 4: the count rises
    # at merge 2 (another language's column). Token 5 is a whole pretoken 6 times, so a supermerge using it can
    # reach count 6. key[2] = max(4, single 0) = 4; key[1] = max(4, 2, 6) = 6; key[0] = max(6, 5, 1) = 6.
    merges_ = [(0, 1, 5), (2, 3, 2), (4, 5, 4)]
    words = [[4], [5], [5, 0], [6, 1]]
    counts = [1, 6, 9, 3]
    assert fastsw.trainers.train.replay_counts(merges_, words, counts, 4) == [6, 6, 4]
    # ordinary BPE (counts never rise, a token is a whole pretoken at most as often as it was made): the counts
    assert fastsw.trainers.train.replay_counts([(0, 1, 5), (2, 3, 3)], [[4], [5, 5]], [5, 1], 4) == [5, 3]


@pytest.mark.parametrize("algo, extra", [("boundless", {}), ("superbpe", {"supermerges": 20})])
def test_phase2_on_parity_phase1(algo, extra):
    # vocab 600 with BoundlessBPE: without replay keys a supermerge came before the regular merge that makes
    # one of its tokens (parity merge counts rise), and interleave() failed
    train = {lang: xquad("dev", lang) for lang in ("en", "de", "ru")}
    dev = {lang: xquad("test", lang, 30) for lang in ("en", "de", "ru")}
    n_phase1 = 600 - extra.get("supermerges", 0)
    pa = fastsw.train(train, algo="parity-bpe", vocab_size=n_phase1, dev=dev)
    plain = fastsw.train(train, algo=algo, vocab_size=600, **extra)
    models = [
        fastsw.train(train, algo=algo, phase1="parity-bpe", vocab_size=600, dev=dev, backend=backend, **extra)
        for backend in BACKENDS
    ]
    assert merges(models[0]) == merges(models[1])  # the fast backend's later stages take the reference's words
    tok = models[0]
    assert tok.n_super > 0 and tok.training_info["options"]["phase1"] == "parity-bpe"
    # the regular merges are parity-aware BPE's phase-1 merges, in order (a prefix for BoundlessBPE)
    regular = [tok.vocab[len(tok.alphabet) + k] for k, m in enumerate(tok.merges) if not m.super]
    pa_tokens = list(pa.vocab[len(pa.alphabet) :])
    assert regular == pa_tokens[: len(regular)]
    assert [m.count for m in tok.merges if not m.super] == [m.count for m in pa.merges][: len(regular)]
    assert regular != [plain.vocab[len(plain.alphabet) + k] for k, m in enumerate(plain.merges) if not m.super]
    assert tok.training_info["parity"]["chosen"] == pa.training_info["parity"]["chosen"]
    text = " ".join(xquad("test", "ru", 3))
    assert tok.decode(tok.encode(text)) == text


# ---- bad input (Python) ------------------------------------------------------------------------------------------


TAGGED = {"en": ["the cat sat", "a dog"], "de": ["die Katze", "ein Hund"]}
DEV = {"en": ["the dog"], "de": ["der Hund"]}


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(inputs=TAGGED, algo="parity-bpe"), ["exactly one of dev=", "ratios="]),
        (dict(inputs=TAGGED, algo="parity-bpe", dev=DEV, ratios={"en": 1, "de": 1}), ["exactly one of", "not both"]),
        (dict(inputs=TAGGED, algo="parity-bpe", ratios={"en": 1, "de": 0}), ["ratios['de']=0", "> 0"]),
        (dict(inputs=TAGGED, algo="parity-bpe", ratios={"en": 1, "de": -2.5}), ["ratios['de']=-2.5", "> 0"]),
        (dict(inputs=TAGGED, algo="parity-bpe", dev={**DEV, "fr": ["le chien"]}), ["'fr'", "no training text"]),
        (dict(inputs=TAGGED, algo="parity-bpe", dev={"en": ["the dog"]}), ["missing", "'de'"]),
        (
            dict(inputs=TAGGED, algo="parity-bpe", dev={"en": ["the dog", "a cat"], "de": ["der Hund"]}),
            ["not parallel", "en: 2, de: 1"],
        ),
        (
            dict(inputs=TAGGED, algo="parity-bpe", dev={"en": ["the dog"], "de": []}),
            ["dev text of language 'de'", "empty"],
        ),
        (dict(inputs=["the cat", "die Katze"], algo="parity-bpe", dev=DEV), ["one text per language"]),
        (dict(inputs=TAGGED, algo="parity-bpe", dev=DEV, weights={"de": 2}), ["weights=", "parity-aware"]),
        (dict(inputs=TAGGED, algo="bpe", dev=DEV), ["dev=", "algo='parity-bpe'"]),
        (dict(inputs=TAGGED, algo="boundless", global_merges=3), ["global_merges=", "phase1='parity-bpe'"]),
        (dict(inputs=TAGGED, algo="bpe", phase1="parity-bpe", dev=DEV), ["phase1=", "algo='parity-bpe'"]),
        (dict(inputs=TAGGED, algo="boundless", phase1="parity", dev=DEV), ["phase1='parity'"]),
        (dict(inputs=TAGGED, algo="parity-bpe", dev=DEV, parity_variant="sliding"), ["parity_variant='sliding'"]),
        (dict(inputs=TAGGED, algo="parity-bpe", dev=DEV, window=10), ["window=", "parity_variant='window'"]),
        (dict(inputs=TAGGED, algo="parity-bpe", dev=DEV, min_frequency=0), ["min_frequency=0", ">= 1"]),
        (dict(inputs=TAGGED, algo="parity-bpe", dev=DEV, global_merges=-1), ["global_merges=-1", ">= 0"]),
        (dict(inputs=TAGGED, algo="parity-bpe", dev=DEV, greedy_split=True), ["greedy_split"]),
    ],
)
def test_bad_parity_input(kwargs, words):
    with pytest.raises(ValueError) as e:
        fastsw.train(vocab_size=300, **kwargs)
    for word in words:
        assert word in str(e.value)


# ---- CLI ---------------------------------------------------------------------------------------------------------


def lang_args(flag, split, langs=("en", "de")):
    out = []
    for lang in langs:
        out += [flag, f"{lang}={shared_path(f'corpus/parallel/xquad.{split}.{lang}.jsonl')}"]
    return out


def test_cli_parity_train(tmp_path, capsys):
    code, _, err = run(
        capsys,
        "train",
        "--algo",
        "parity-bpe",
        *lang_args("--lang", "dev"),
        *lang_args("--dev", "test"),
        "--global-merges",
        "5",
        "--parity-variant",
        "window",
        "--window",
        "50",
        "--alpha",
        "3/2",
        "--min-frequency",
        "3",
        "--vocab-size",
        "400",
        "--no-progress",
        "-o",
        tmp_path / "m.json",
    )
    assert code == 0, err
    assert "trained parity-bpe" in err
    tok = fastsw.load(tmp_path / "m.json")
    py = fastsw.train(
        {lang: xquad("dev", lang) for lang in ("en", "de")},
        algo="parity-bpe",
        vocab_size=400,
        dev={lang: xquad("test", lang) for lang in ("en", "de")},
        global_merges=5,
        parity_variant="window",
        window=50,
        alpha=1.5,
        min_frequency=3,
    )
    assert merges(tok) == merges(py)
    info = tok.training_info["parity"]
    assert (
        info["variant"],
        info["window"],
        info["alpha"],
        info["global_merges"],
        info["min_frequency"],
        info["dev_documents"],
    ) == ("window", 50, "3/2", 5, 3, 120)

    code, _, err = run(
        capsys,
        "train",
        "--algo",
        "boundless",
        "--phase1",
        "parity-bpe",
        *lang_args("--lang", "dev"),
        "--ratio",
        "en=1",
        "--ratio",
        "de=1.2",
        "--vocab-size",
        "400",
        "--no-progress",
        "-o",
        tmp_path / "b.json",
    )
    assert code == 0, err
    tok = fastsw.load(tmp_path / "b.json")
    assert tok.algo == "boundless" and tok.training_info["parity"]["ratios"] == {"en": "1/1", "de": "6/5"}


@pytest.mark.parametrize(
    "argv, words",
    [
        (lang_args("--dev", "test") + ["--dev", "fr=x.jsonl"], ["--dev fr=x.jsonl", "no --lang fr=PATH"]),
        (lang_args("--dev", "test") + ["--ratio", "en=1", "--ratio", "de=1"], ["either --dev", "--ratio", "not both"]),
        ([], ["needs --dev", "--ratio"]),
        (["--ratio", "en=1", "--ratio", "de=0"], ["--ratio", "must be > 0"]),
        (["--ratio", "en=1", "--ratio", "de=-1"], ["--ratio", "must be > 0"]),
        (["--ratio", "en=1", "--ratio", "de=1", "--ratio", "de=2"], ["given twice"]),
        (
            ["--dev", f"en={'corpus/parallel/xquad.test.en.jsonl'}", "--dev", "de=PARALLEL_SHORT"],
            ["not parallel", "en: 120, de: 3"],
        ),
        (lang_args("--dev", "test") + ["--window", "5"], ["--window", "--parity-variant window"]),
        (lang_args("--dev", "test") + ["--weight", "de=2"], ["--weight", "parity-aware"]),
        (lang_args("--dev", "test") + ["--greedy-split"], ["--greedy-split"]),
    ],
)
def test_cli_bad_parity_input(tmp_path, capsys, argv, words):
    short = tmp_path / "de-short.jsonl"
    short.write_text("".join(json.dumps({"text": t}) + "\n" for t in xquad("test", "de", 3)), encoding="utf-8")
    argv = [
        a.replace("PARALLEL_SHORT", str(short)).replace(
            "corpus/parallel/xquad.test.en.jsonl", str(shared_path("corpus/parallel/xquad.test.en.jsonl"))
        )
        for a in argv
    ]
    out = tmp_path / "bad.json"
    code, _, err = run(
        capsys,
        "train",
        "--algo",
        "parity-bpe",
        *lang_args("--lang", "dev"),
        *argv,
        "-o",
        out,
        "--vocab-size",
        "300",
        "--no-progress",
    )
    assert_error(code, err, *words)
    assert not out.exists()


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--algo", "bpe", "--dev", "en=x"], ["--dev applies to parity-aware BPE"]),
        (["--algo", "bpe", "--phase1", "parity-bpe"], ["--phase1", "--algo parity-bpe"]),
        (["--algo", "parity-bpe", "--ratio", "en=1"], ["one text per language", "--lang"]),
    ],
)
def test_cli_parity_options_misplaced(tmp_path, capsys, argv, words):
    text = tmp_path / "t.txt"
    text.write_text("the cat\n", encoding="utf-8")
    out = tmp_path / "bad.json"
    code, _, err = run(capsys, "train", text, *argv, "-o", out, "--vocab-size", "300", "--no-progress")
    assert code == 2 and len(err.strip().splitlines()) == 1 and err.startswith("fastsw: error: "), err
    for word in words:
        assert word in err
    assert not out.exists()


def test_count_tables_and_lang_field_equal_dict_inputs(tmp_path):
    # the language columns of a saved count table (fastsw count --lang) or of JSONL lines tagged by lang_field
    # train the same parity model as the dict {language: documents}
    train = {lang: xquad("dev", lang, 30) for lang in ("en", "de")}
    dev = {lang: xquad("test", lang, 20) for lang in ("en", "de")}
    pretok = make_pretokenizer("script")
    from fastsw.corpus.counting import Counts

    table = Counts.from_languages(
        {lang: count_corpus(docs, pretok, collect_runs=False, threads=1) for lang, docs in train.items()}
    )
    table.save(tmp_path / "c.gz")
    tagged = tmp_path / "tagged.jsonl"
    tagged.write_text(
        "".join(json.dumps({"lang": lang, "text": doc}) + "\n" for lang, docs in train.items() for doc in docs),
        encoding="utf-8",
    )
    reference = fastsw.train(train, algo="parity-bpe", vocab_size=350, dev=dev)
    from_counts = fastsw.train(from_counts=tmp_path / "c.gz", algo="parity-bpe", vocab_size=350, dev=dev)
    from_field = fastsw.train([tagged], lang_field="lang", algo="parity-bpe", vocab_size=350, dev=dev)
    assert merges(from_counts) == merges(from_field) == merges(reference)
    with pytest.raises(ValueError, match="dev= names language\\(s\\) 'fr' with no training text"):
        fastsw.train(from_counts=tmp_path / "c.gz", algo="parity-bpe", vocab_size=350, dev={**dev, "fr": ["x"]})
