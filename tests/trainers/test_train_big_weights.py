"""Exact language weights whose scaled integer counts pass 64 bits.

Shares give w = 100000 * p / B per language: the common denominator of the weights is about the product of the
languages' byte counts, so five languages of XQuAD scale the counts by ~1e15 and their sum passes 2**63-1. The
factors are first divided by their gcd (free: same proportions, same merges); if the counts still do not fit, the
reference path trains on exact Python ints: backend="auto" falls back to it with an OptionWarning, backend="numba"
is an error. Counts that fit train exactly as before.
"""

import json
import warnings
from fractions import Fraction

import pytest

import fastsw
from fastsw import cli
from fastsw.corpus.counting import Counts, count_corpus, language_weights, scaled_weights
from fastsw.pretokenizers.pretokenize import make_pretokenizer

from conftest import shared_path

FIVE = ("en", "de", "ru", "zh", "ar")
OPTIONS = dict(algo="bpe", vocab_size=512, profile="hf", pretokenizer="none")


def xquad(split: str, lang: str, n: int):
    """The first ``n`` paragraphs of ../shared/corpus/parallel/xquad.<split>.<lang>.jsonl."""
    with open(shared_path(f"corpus/parallel/xquad.{split}.{lang}.jsonl"), encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f][:n]


def merges(tok):
    return [(m.left, m.right, m.count, m.super) for m in tok.merges]


@pytest.fixture
def numba_default(monkeypatch):
    monkeypatch.delenv("FASTSW_PUREPYTHON", raising=False)  # "auto" means numba


def test_shares_on_five_languages_fall_back_to_exact_python(numba_default):
    # the reproduction: this used to fail with "too large for 64-bit training ... x8.53e+17"
    inputs = {lang: xquad("dev", lang, 16) for lang in FIVE}
    shares = {lang: "0.8" if lang == "en" else "0.05" for lang in FIVE}
    with pytest.warns(fastsw.OptionWarning, match="too large for 64-bit training.*backend='python'"):
        auto = fastsw.train(inputs, shares=shares, backend="auto", **OPTIONS)
    with warnings.catch_warnings():
        warnings.simplefilter("error", fastsw.OptionWarning)  # explicitly python: nothing to warn about
        ref = fastsw.train(inputs, shares=shares, backend="python", **OPTIONS)
    assert auto.training_info["backend"] == ref.training_info["backend"] == "python"
    assert merges(auto) == merges(ref) and len(ref.merges) == 256
    assert auto.training_info["weight_factors"] == ref.training_info["weight_factors"]
    # exact: the weighted bytes are the target shares (en 80 %, each other language 5 %)
    info = ref.training_info
    weighted = {lang: info["weight_factors"][lang] * info["language_bytes"][lang] for lang in FIVE}
    assert all(weighted["en"] == 16 * weighted[lang] for lang in FIVE[1:])
    # ... and the scale says how: weighted count = merge count / scale
    w = language_weights(list(FIVE), [info["language_bytes"][lang] for lang in FIVE], shares=shares)
    assert all(info["weight_factors"][lang] == w[lang] * Fraction(info["weight_scale"]) for lang in FIVE)


def test_numba_explicit_refuses_counts_beyond_64_bits(tmp_path, capsys):
    # (two languages: a weight alone would be divided by itself, the gcd of the factors)
    inputs = {"en": ["the cat"] * 10, "de": ["die Katze"]}
    with pytest.raises(ValueError, match="too large for 64-bit training.*use backend='python'.*round the weights"):
        fastsw.train(inputs, weights={"en": 2**62}, algo="bpe", vocab_size=300, backend="numba")
    en, de = tmp_path / "en.txt", tmp_path / "de.txt"
    en.write_text("the cat\n" * 10, encoding="utf-8")
    de.write_text("die Katze\n", encoding="utf-8")
    out = tmp_path / "m.json"
    assert (
        cli.main(
            [
                "train",
                "--lang",
                f"en={en}",
                "--lang",
                f"de={de}",
                "--weight",
                f"en={2**62}",
                "--vocab-size",
                "300",
                "--backend",
                "numba",
                "-o",
                str(out),
                "--no-progress",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("fastsw: error: ") and err.count("\n") == 1 and "backend='python'" in err
    assert not out.exists()


@pytest.mark.parametrize("algo", ["bpe", "boundless", "superbpe"])
def test_big_merge_counts_train_save_and_load(tmp_path, algo):
    # the same text in two languages weighing 2**62 and 1: every count is 2**62 + 1 times the unweighted one
    # and passes 2**63-1 (gcd of the factors: 1)
    docs = ["the cat sat", "the cat ran"] * 5
    extra = dict(vocab_size=250, supermerges=1) if algo == "superbpe" else dict(vocab_size=249)
    plain = fastsw.train(docs, algo=algo, backend="python", **extra)
    big = fastsw.train({"en": docs, "de": docs}, weights={"en": 2**62}, algo=algo, backend="python", **extra)
    assert [(l, r, c * (2**62 + 1), s) for l, r, c, s in merges(plain)] == merges(big)
    assert min(m.count for m in big.merges) > 2**63 - 1
    assert len(big.merges) == extra["vocab_size"] - 243 and (big.n_super > 0) == (algo != "bpe")
    assert big.training_info["weight_scale"] == "1/1"
    big.save(tmp_path / "big.json")
    loaded = fastsw.Tokenizer.load(tmp_path / "big.json")
    assert merges(loaded) == merges(big)
    assert loaded.encode("the cat sat") == big.encode("the cat sat")
    # without the training record's weight_scale such counts are refused, as before
    data = json.loads((tmp_path / "big.json").read_text(encoding="utf-8"))
    del data["training"]["weight_scale"]
    (tmp_path / "bad.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.json.*merges\[0\].*outside 0..2\*\*63-1.*weight_scale"):
        fastsw.Tokenizer.load(tmp_path / "bad.json")


def test_counts_that_fit_train_as_before_on_both_backends(numba_default):
    # three languages: the scaled counts fit 64 bits, so nothing changes -- the factors are the lcm-scaled
    # weights (not reduced), numba trains, and the model is the one trained on the weighted table directly
    langs = ("en", "de", "ru")
    inputs = {lang: xquad("dev", lang, 16) for lang in langs}
    shares = {"en": "0.8", "de": "0.1", "ru": "0.1"}
    with warnings.catch_warnings():
        warnings.simplefilter("error", fastsw.OptionWarning)
        fast = fastsw.train(inputs, shares=shares, backend="auto", **OPTIONS)
    ref = fastsw.train(inputs, shares=shares, backend="python", **OPTIONS)
    assert fast.training_info["backend"] == "numba"
    pretok = make_pretokenizer("none")
    table = Counts.from_languages({lang: count_corpus(inputs[lang], pretok, collect_runs=False) for lang in langs})
    old = scaled_weights(language_weights(list(langs), table.language_bytes, shares=shares))
    assert fast.training_info["weight_factors"] == ref.training_info["weight_factors"] == old
    direct = fastsw.train(from_counts=table.weighted(old), backend="numba", **{**OPTIONS, "pretokenizer": None})
    assert merges(fast) == merges(ref) == merges(direct)


def test_gcd_of_the_factors_keeps_numba_when_it_is_enough(numba_default):
    # four languages, uniform shares: scaled by the lcm the pair counts pass 2**63-1; the factors' gcd (625)
    # brings them back under it, so numba trains them, with the same merges as the reference
    langs = ("en", "de", "ru", "zh")
    inputs = {lang: xquad("dev", lang, 16) for lang in langs}
    shares = dict.fromkeys(langs, "1/4")
    with warnings.catch_warnings():
        warnings.simplefilter("error", fastsw.OptionWarning)
        fast = fastsw.train(inputs, shares=shares, backend="auto", **OPTIONS)
    ref = fastsw.train(inputs, shares=shares, backend="python", **OPTIONS)
    assert fast.training_info["backend"] == "numba"
    info = fast.training_info
    lcm = scaled_weights(language_weights(list(langs), [info["language_bytes"][lang] for lang in langs], shares=shares))
    assert {lang: 625 * f for lang, f in info["weight_factors"].items()} == lcm
    assert merges(fast) == merges(ref)


def test_cli_says_when_it_falls_back_to_python(tmp_path, capsys, numba_default):
    # the library warns (OptionWarning); the CLI, which reports the library's option warnings itself, prints a note
    en, de = tmp_path / "en.txt", tmp_path / "de.txt"
    en.write_text("the cat\n" * 10, encoding="utf-8")
    de.write_text("die Katze\n", encoding="utf-8")
    out = tmp_path / "m.json"
    assert (
        cli.main(
            [
                "train",
                "--lang",
                f"en={en}",
                "--lang",
                f"de={de}",
                "--weight",
                f"en={2**62}",
                "--algo",
                "bpe",
                "--vocab-size",
                "300",
                "--no-progress",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "fastsw: note: the weighted counts" in err and "instead of numba" in err
    assert fastsw.load(out).training_info["backend"] == "python"


@pytest.mark.parametrize("weight", ["1e400", "1e-400"])
def test_weights_of_any_size_train_save_inspect_and_evaluate(tmp_path, capsys, weight, numba_default):
    """A weight of 1e400 (exact: a 401-digit integer) or 1e-400 (its inverse) is trained on, summarised, inspected
    and evaluated without a float overflow anywhere."""
    pytest.importorskip("matplotlib")
    en, de = tmp_path / "en.txt", tmp_path / "de.txt"
    en.write_text("the cat sat\n" * 10, encoding="utf-8")
    de.write_text("die Katze sass\n" * 3, encoding="utf-8")
    out = tmp_path / "m.json"
    code = cli.main(
        [
            "train",
            "--lang",
            f"en={en}",
            "--lang",
            f"de={de}",
            "--weight",
            f"de={weight}",
            "--algo",
            "bpe",
            "--vocab-size",
            "260",
            "--no-progress",
            "-o",
            str(out),
        ]
    )
    err = capsys.readouterr().err
    assert code == 0, err
    assert "corpus:      13 documents" in err
    tok = fastsw.load(out)
    assert Fraction(tok.training_info["weights"]["de"]) == Fraction(weight)
    assert cli.main(["inspect", str(out)]) == 0
    assert "trained on:     13 documents" in capsys.readouterr().out
    assert cli.main(["inspect", "--json", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["merges"][0]["count"] >= 10**400
    code = cli.main(
        ["eval", "-m", str(out), "--text", f"en={en}", f"de={de}", "--report", str(tmp_path / "r"), "--no-progress"]
    )
    err = capsys.readouterr().err
    assert code == 0, err
    assert (tmp_path / "r" / "report.md").is_file()
