"""MinGram models in files, the CLI and interop, the exact-size behaviour (MINGRAM.md 1.8) and bad input."""

import json
import math
import warnings

import pytest

import fastsw
from fastsw.corpus.counting import count_corpus
from fastsw.io.interop import MINGRAM_HF_REASONS
from fastsw.trainers.mingram import MinGramTokenizer
from fastsw.notes import VocabularyNotReachedWarning

from conftest import assert_error, read_jsonl_texts, run, shared_path, write_jsonl


@pytest.fixture(scope="module")
def docs():
    return read_jsonl_texts(shared_path("corpus/en/heldout.jsonl"))[:8]


@pytest.fixture(scope="module")
def model(docs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VocabularyNotReachedWarning)
        return fastsw.train(docs, algo="mingram", vocab_size=800, special_tokens=["<|endoftext|>"])


def test_model_file_roundtrip(model, docs, tmp_path):
    path = tmp_path / "m.json"
    model.save(path)
    data = json.loads(path.read_text())
    assert data["algo"] == "mingram" and data["score_delta"] == 1e-5
    assert data["training"]["mingram"]["overshoot"] == 1.1
    assert data["tokens"][300].keys() == {"id", "hex", "log_prob", "seed_id"}
    loaded = fastsw.load(path)
    assert isinstance(loaded, MinGramTokenizer)
    assert loaded.vocab == model.vocab and loaded.log_probs == model.log_probs
    assert loaded.encode_batch(docs) == model.encode_batch(docs)
    text = "a<|endoftext|>b"
    assert loaded.encode(text, allowed_special="all")[1] == loaded.eot_token == 800
    assert loaded.decode(loaded.encode(text, allowed_special="all")) == text


def test_model_file_must_cover_the_alphabet(model, tmp_path):
    path = tmp_path / "m.json"
    model.save(path)
    data = json.loads(path.read_text())
    data["tokens"] = [t for t in data["tokens"] if t["id"] != 97]
    for i, t in enumerate(data["tokens"]):
        t["id"] = i
    data["special_tokens"] = {"<|endoftext|>": len(data["tokens"])}
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="do not cover the atomic alphabet.*id 97"):
        fastsw.load(path)


def test_hf_export_is_approximate_and_verified(model, docs, tmp_path):
    with pytest.raises(ValueError, match="Unigram breaks exact score ties.*allow_approximate=True"):
        model.save_hf(tmp_path / "tokenizer.json")
    report = model.save_hf(tmp_path / "tokenizer.json", allow_approximate=True)
    assert not report["exact"] and all(r in report["reasons"] for r in MINGRAM_HF_REASONS)
    hf = json.loads((tmp_path / "tokenizer.json").read_text())
    assert hf["model"]["type"] == "Unigram"
    i = model.encode_single_token(" the")
    assert hf["model"]["vocab"][i][1] == pytest.approx(1e-5 * model.log_probs[i] - 1)
    result = fastsw.io.interop.verify_export(model, tmp_path / "tokenizer.json", docs)
    assert result["roundtrip_ok"]
    assert result["token_count_difference"] == 0  # same objective: the same (minimum) number of tokens
    with pytest.raises(ValueError, match="Unigram"):
        model.to_tiktoken(allow_approximate=True)


def test_exact_size_shortfall_warns_and_refill(docs):
    """MINGRAM.md 1.8: the round-2 M-step drops tokens whose usage fell to 0 after the prune; fastsw keeps the
    smaller model and warns, unless refill=True."""
    with pytest.warns(VocabularyNotReachedWarning, match="below vocab_size=4096"):
        short = fastsw.train(docs, algo="mingram", vocab_size=4096)
    assert short.vocab_size < 4096
    assert short.training_info["notes"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", VocabularyNotReachedWarning)
        full = fastsw.train(docs, algo="mingram", vocab_size=4096, refill=True)
    assert full.vocab_size == 4096
    assert full.decode(full.encode(docs[0])) == docs[0]


def test_seed_out_of_pairs_is_a_note():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tok = fastsw.train(["ab ab"], algo="mingram", vocab_size=300)
    messages = [str(w.message) for w in caught if w.category is VocabularyNotReachedWarning]
    assert any("seed ran out of pairs" in m for m in messages) and messages == tok.training_info["notes"]
    assert tok.vocab_size <= 300 and tok.decode(tok.encode("ab ba")) == "ab ba"


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(vocab_size=100), "smaller than the 243"),
        (dict(vocab_size=300, overshoot=0.9), "overshoot=0.9 is below 1"),
        (dict(vocab_size=300, overshoot=1e308), r"overshoot=1e\+308 .* beyond 2\*\*63-1"),
        # 57 merges x 1e18 pass 2**63-1 (the check once the alphabet is known is exact)
        (dict(vocab_size=300, overshoot=1e18), r"overshoot=1e\+18 asks for a BPE seed of 57 x 1e\+18 merges"),
        (dict(vocab_size=300, em_iterations=0), "em_iterations must be an integer >= 1"),
        (dict(vocab_size=300, score_delta=-1.0), "score_delta must be a finite number >= 0"),
        (dict(vocab_size=300, prune_criterion="loss"), "prune_criterion='loss' is not one of"),
        (dict(vocab_size=300, algo="bpe", overshoot=1.15), "overshoot= applies to MinGram"),
        (dict(vocab_size=300, greedy_split=True), "greedy_split"),
    ],
)
def test_bad_options(options, message):
    options = {"algo": "mingram", **options}
    with pytest.raises(ValueError, match=message):
        fastsw.train(["some text"], **options)


def test_cli_train_inspect_encode(docs, tmp_path, capsys):
    corpus = write_jsonl(tmp_path / "c.jsonl", docs)
    out = tmp_path / "m.json"
    code, _, err = run(
        capsys,
        "train",
        corpus,
        "--algo",
        "mingram",
        "--vocab-size",
        700,
        "--overshoot",
        1.15,
        "--no-progress",
        "-o",
        out,
    )
    assert code == 0, err
    assert "MinGram from a" in err
    tok = fastsw.load(out)
    assert tok.training_info["mingram"]["overshoot"] == 1.15
    code, text, _ = run(capsys, "inspect", out, "--json")
    data = json.loads(text)
    assert data["algo"] == "mingram" and data["vocab_size"] == tok.vocab_size
    assert data["tokens"][104] == {"id": 104, "hex": "68", "log_prob": tok.log_probs[104]}
    # --from-counts: the same model as training on the text
    counts = tmp_path / "c.counts"
    code, _, err = run(capsys, "count", corpus, "--no-runs", "-o", counts, "--no-progress")
    assert code == 0, err
    out2 = tmp_path / "m2.json"
    code, _, err = run(
        capsys,
        "train",
        "--from-counts",
        counts,
        "--algo",
        "mingram",
        "--vocab-size",
        700,
        "--overshoot",
        1.15,
        "--no-progress",
        "-o",
        out2,
    )
    assert code == 0, err
    tok2 = fastsw.load(out2)
    assert tok2.vocab == tok.vocab and tok2.log_probs == tok.log_probs


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--algo", "mingram", "--overshoot", "0.5"], ["--overshoot", "below 1"]),
        (["--algo", "mingram", "--overshoot", "1e308"], ["--overshoot 1e+308", "2**63-1"]),
        (["--algo", "bpe", "--refill"], ["--refill", "--algo mingram"]),
        (["--algo", "mingram", "--score-delta", "-2"], ["--score-delta"]),
    ],
)
def test_cli_bad_options(argv, words, tmp_path, capsys):
    code, _, err = run(capsys, "train", *argv, "-o", tmp_path / "m.json")
    assert_error(code, err, *words)
    assert not (tmp_path / "m.json").exists()


def test_from_counts_equals_text(docs):
    pretok = fastsw.Pretokenizer()
    counts = count_corpus(docs, pretok, collect_runs=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VocabularyNotReachedWarning)
        a = fastsw.train(docs, algo="mingram", vocab_size=600)
        b = fastsw.train(from_counts=counts, algo="mingram", vocab_size=600)
    assert a.vocab == b.vocab and a.log_probs == b.log_probs


def semingram_file(tmp_path, *, config_class="UTF8Pretokenizer", drop_byte=None, gz=False):
    """A semingram-v1 file in the seed authors' layout: byte atoms 1..256 (-Infinity where unused), then
    learned tokens with sparse seed ids, required tokens first (file order is not id order)."""
    import gzip
    from fastsw import GPT4O_PATTERN

    lp = {ord("h"): -2.5, ord("u"): -2.5, ord("g"): -3.0, ord("s"): -2.2}
    tokens = [
        {"id": b + 1, "atomic_tokens": [b + 1], "log_prob": lp.get(b, -math.inf)} for b in range(256) if b != drop_byte
    ]
    tokens += [
        {"id": 400, "atomic_tokens": [ord(c) + 1 for c in "hug"], "log_prob": -1.1},
        {"id": 300, "atomic_tokens": [ord(c) + 1 for c in "ug"], "log_prob": -1.5},
    ]
    data = {
        "info": {"version": "semingram-v1"},
        "pretokenizer": {
            "config_class": config_class,
            "config": {
                "cls": config_class,
                "starting_token_id": 1,
                "normalization": "NFC",
                "remove_unassigned": True,
                "regex_pattern": GPT4O_PATTERN,
                "digit_handling": None,
                "enforce_char_boundaries": True,
            },
        },
        "tokens": tokens,
        "metadata": {
            "tokenizer_variant": "mingram",
            "objective": math.inf,
            "config": {"score_delta": 1e-5, "overshoot_factor": 1.15},
        },
    }
    text = json.dumps(data)
    assert "-Infinity" in text and "Infinity" in text  # the reference's non-standard literals
    path = tmp_path / ("m.json.gz" if gz else "m.json")
    if gz:
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        path.write_text(text)
    return path


@pytest.mark.parametrize("gz", [False, True])
def test_load_semingram(tmp_path, gz):
    from fastsw.trainers.mingram import load_semingram

    with pytest.raises(ValueError, match="remove_unassigned.*allow_approximate=True"):  # it would not be exact
        load_semingram(semingram_file(tmp_path, gz=gz))
    tok = load_semingram(semingram_file(tmp_path, gz=gz), allow_approximate=True)
    assert tok.vocab_size == 258 and tok.normalize == "nfc" and tok.pretokenizer.mode == "simple"
    assert tok.seed_ids[:3] == (1, 2, 3) and tok.seed_ids[-2:] == (300, 400)  # dense ids, ascending original id
    assert tok.vocab[256:] == (b"ug", b"hug") and tok.vocab[ord("h")] == b"h"
    assert tok.log_probs[0] == -100.0  # -Infinity floored on load
    assert [tok.vocab[i] for i in tok.encode("hhug hugs")] == [b"h", b"hug", b" ", b"hug", b"s"]
    assert tok.decode(tok.encode("héllo wörld")) == "héllo wörld"
    path = semingram_file(tmp_path, gz=gz)  # Tokenizer.from_file recognises the format by its content
    with pytest.raises(ValueError, match="remove_unassigned"):
        fastsw.Tokenizer.from_file(path)
    assert fastsw.Tokenizer.from_file(path, allow_approximate=True).encode("hhug hugs") == tok.encode("hhug hugs")


def test_load_semingram_refuses(tmp_path):
    from fastsw.trainers.mingram import load_semingram

    with pytest.raises(ValueError, match="ScriptPretokenizer.*not one fastsw implements"):
        load_semingram(semingram_file(tmp_path, config_class="ScriptPretokenizer"))
    with pytest.raises(ValueError, match="do not cover the atomic alphabet"):
        load_semingram(semingram_file(tmp_path, drop_byte=ord("z")))
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(ValueError, match="not 'semingram-v1'"):
        load_semingram(tmp_path / "x.json")


@pytest.mark.parametrize(
    "mutate, field, words",
    [
        (lambda d: d.update(score_delta=-1), "score_delta", "finite number >= 0"),
        (lambda d: d.update(score_delta="1e-5"), "score_delta", "finite number >= 0"),
        (lambda d: d["tokens"][300].update(hex=d["tokens"][299]["hex"]), "tokens[300]", "same bytes as tokens[299]"),
    ],
)
def test_damaged_model_files_are_refused(model, tmp_path, mutate, field, words):
    """What training refuses, the loader refuses: one ValueError naming the file and the field."""
    path = tmp_path / "m.json"
    model.save(path)
    data = json.loads(path.read_text())
    mutate(data)
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError) as info:
        fastsw.load(path)
    assert str(info.value).startswith(f"{path}: field {field}: "), str(info.value)
    assert words in str(info.value)
