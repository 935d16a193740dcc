"""Parity-aware BPE when a language runs out of pairs: by default (``exhausted="skip"``) it is passed over and
training goes on with the other languages; ``exhausted="stop"`` keeps the published script's rule. Hand-worked
toys on both twins (fastsw.trainers.parity and fastsw.trainers.parity_fast), then real text with Thai, which runs out first under
the default ``script`` pre-tokenizer (every Thai letter is its own pretoken)."""

import contextlib
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import fastsw
from fastsw.trainers.parity_fast import learn_parity_merges_fast
from fastsw.notes import VocabularyNotReachedWarning
from fastsw.trainers.parity import learn_parity_merges

from conftest import BACKENDS, shared_path

REPO_ROOT = Path(fastsw.__file__).resolve().parents[1]


@pytest.fixture(params=["reference", "fast"])
def learn(request):
    return learn_parity_merges if request.param == "reference" else learn_parity_merges_fast


def byte_table():
    return [bytes([b]) for b in range(256)]


def spelled(tb, merges):
    return [tb[left] + tb[right] for left, right, _ in merges]


TOY_TRAIN = {"en": ([list(b"th"), list(b"the")], [4, 3]), "de": ([list(b"die"), list(b"ie")], [5, 2])}


def test_an_exhausted_language_is_passed_over(learn):
    # Initial training lengths: en 2*4 + 3*3 = 17; de 3*5 + 2*2 = 19. Targets: en 1, de 2; lowest
    # (initial / current) / ratio first:
    # step 0: en 1, de 1/2 -> de: i+e (7), de 19 -> 12.  step 1: en 1, de 19/24 -> de: d+ie (5), de -> 7.
    # step 2: en 1, de 19/14 -> en: t+h (7), en 17 -> 10.
    # step 3: de (19/14 < 17/10) has no pair left: the script stops here; skipping it, en takes th+e (3), en -> 7.
    # step 4: de and en have no pair left: the run ends.
    tb = byte_table()
    out = learn(TOY_TRAIN, tb, "paper", 10, ratios={"en": 1, "de": 2})
    assert out.languages == ["de", "de", "en", "en"]
    assert spelled(tb, out.merges) == [b"ie", b"die", b"th", b"the"]
    assert out.lengths[-1] == {"en": 7, "de": 7}
    tb = byte_table()
    stopped = learn(TOY_TRAIN, tb, "paper", 10, ratios={"en": 1, "de": 2}, exhausted="stop")
    assert stopped.languages == ["de", "de", "en"]
    assert stopped.merges == out.merges[:3]


def test_min_frequency_exhausts_one_language_not_the_run(learn):
    # min_frequency=6: de's best pair i+e (7) is taken at step 0, en's t+h (7) at step 1; then de (dev 3 > en 2)
    # has d+ie (5) < 6 left: exhausted; en's th+e (3) < 6 too, so the run ends after two merges either way, while
    # with min_frequency=8 (both bests are 7) nothing at all is learned, skipping or not.
    dev = {"en": ([list(b"the")], [1]), "de": ([list(b"die"), list(b"ie")], [1, 1])}
    for exhausted in ("skip", "stop"):
        out = learn(TOY_TRAIN, byte_table(), "paper", 10, dev_words=dev, min_frequency=6, exhausted=exhausted)
        assert out.languages == ["de", "en"]
        assert (
            learn(TOY_TRAIN, byte_table(), "paper", 10, dev_words=dev, min_frequency=8, exhausted=exhausted).merges
            == []
        )


def test_window_gives_way_when_every_allowed_language_is_exhausted(learn):
    # window=1, alpha=1, two languages: the language of the last step is not allowed.
    # step 0: x (tie, the first): a+b (5; ab, bc, cd tie at 5 and the paper profile takes the smaller bytes).
    # step 1: y (x not allowed): e+f (3).  step 2: x (y not allowed): ab+c (5).
    # step 3: only y is allowed and it has no pair left: the script stops; skipping, x takes abc+d although the
    # window would pass it over (the window cannot balance languages that have nothing left).
    train = {"x": ([list(b"abcd")], [5]), "y": ([list(b"ef")], [3])}
    options = dict(ratios={"x": 1, "y": 1}, variant="window", window=1, alpha=1)
    tb = byte_table()
    out = learn(train, tb, "paper", 10, **options)
    assert out.languages == ["x", "y", "x", "x"]
    assert spelled(tb, out.merges) == [b"ab", b"ef", b"abc", b"abcd"]
    assert learn(train, byte_table(), "paper", 10, exhausted="stop", **options).languages == ["x", "y", "x"]


def test_bad_exhausted_option_is_refused(learn):
    with pytest.raises(ValueError, match="exhausted='never' is not one of skip, stop"):
        learn(TOY_TRAIN, byte_table(), "paper", 3, ratios={"en": 1, "de": 1}, exhausted="never")
    with pytest.raises(ValueError, match="parity_exhausted='never' is not one of skip, stop"):
        fastsw.train(
            {"en": ["the cat"], "de": ["die Katze"]},
            algo="parity-bpe",
            vocab_size=300,
            ratios={"en": 1, "de": 1},
            parity_exhausted="never",
        )
    with pytest.raises(ValueError, match="parity_exhausted= applies to parity-aware BPE"):
        fastsw.train(["the cat"], vocab_size=300, parity_exhausted="stop")


# ---- real text: English, Thai and Chinese, multi-parallel XQuAD dev texts

LANGS = ["en", "th", "zh"]
VOCAB = 2000


def first_docs(path: Path, n_bytes: int):
    docs, size = [], 0
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            docs.append(json.loads(line)["text"])
            size += len(docs[-1].encode())
            if size >= n_bytes:
                break
    return docs


@pytest.fixture(scope="module")
def texts():
    train = {lang: first_docs(shared_path(f"corpus/{lang}/train.jsonl.gz"), 60_000) for lang in LANGS}
    dev = {lang: first_docs(shared_path(f"corpus/parallel/xquad.dev.{lang}.jsonl"), 10**9)[:40] for lang in LANGS}
    return train, dev


@pytest.fixture(scope="module")
def models(texts):
    """``{(exhausted, backend): Tokenizer}`` trained on the real text with the default pre-tokenizer."""
    train, dev = texts
    out = {}
    for exhausted in ("skip", "stop"):
        for backend in BACKENDS:
            with pytest.warns(VocabularyNotReachedWarning) if exhausted == "stop" else contextlib.nullcontext():
                out[exhausted, backend] = fastsw.train(
                    train, algo="parity-bpe", vocab_size=VOCAB, dev=dev, parity_exhausted=exhausted, backend=backend
                )
    return out


def test_thai_runs_out_and_training_goes_on(models):
    skip, stop = models["skip", "numba"], models["stop", "numba"]
    th = LANGS.index("th")
    # the script's rule stops when Thai, the language chosen next, has no pair left
    stop_info = stop.training_info["parity"]
    assert stop_info["exhausted"] == "stop" and len(stop.vocab) < VOCAB
    assert any("no pair left" in note for note in stop.training_info["notes"])
    n = len(stop.merges)
    # the default goes on with the other languages until the vocabulary is reached
    skip_info = skip.training_info["parity"]
    assert skip_info["exhausted"] == "skip" and len(skip.vocab) == VOCAB
    # both runs are the same until the script's rule stops; afterwards Thai is never chosen again (a language
    # that has run out stays so) and the others share the remaining steps
    assert [(m.left, m.right, m.count) for m in skip.merges[:n]] == [(m.left, m.right, m.count) for m in stop.merges]
    assert skip_info["chosen"][:n] == stop_info["chosen"]
    later = skip_info["chosen"][n:]
    assert th not in later and set(later) == {LANGS.index("en"), LANGS.index("zh")}
    # the model with all its merges encodes the other languages' dev texts in fewer tokens (Thai's in no more)
    final_skip, final_stop = skip_info["lengths"]["final"], stop_info["lengths"]["final"]
    assert final_skip["th"] <= final_stop["th"]
    assert final_skip["en"] < final_stop["en"] and final_skip["zh"] < final_stop["zh"]


@pytest.mark.parametrize("exhausted", ["skip", "stop"])
def test_both_backends_agree(models, exhausted):
    ref, fast = models[exhausted, "python"], models[exhausted, "numba"]
    assert [(m.left, m.right, m.count) for m in ref.merges] == [(m.left, m.right, m.count) for m in fast.merges]
    assert ref.training_info["parity"] == fast.training_info["parity"]


def test_cli_parity_exhausted(tmp_path, texts, models):
    train, dev = texts
    args = []
    for lang in LANGS:
        for kind, docs in (("lang", train[lang]), ("dev", dev[lang])):
            path = tmp_path / f"{kind}.{lang}.txt"
            path.write_text("\n".join(d.replace("\n", " ") for d in docs), encoding="utf-8")
            args += [f"--{kind}", f"{lang}={path}"]
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))

    def run(*extra):
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "fastsw",
                "train",
                "--algo",
                "parity-bpe",
                "--vocab-size",
                str(VOCAB),
                "--no-progress",
                *args,
                *extra,
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
        )

    r = run("-o", str(tmp_path / "stop.json"), "--parity-exhausted", "stop")
    assert r.returncode == 0, r.stderr
    stopped = fastsw.load(tmp_path / "stop.json")
    assert stopped.training_info["parity"]["exhausted"] == "stop" and len(stopped.vocab) < VOCAB
    r = run("-o", str(tmp_path / "skip.json"))
    assert r.returncode == 0, r.stderr
    assert len(fastsw.load(tmp_path / "skip.json").vocab) == VOCAB
    r = run("-o", str(tmp_path / "x.json"), "--parity-exhausted", "never")
    assert r.returncode == 2 and "--parity-exhausted" in r.stderr and not (tmp_path / "x.json").exists()
