"""fastsw's model file: lossless save/load, atomic writes, clear errors on bad files."""
import json
import os

import pytest

import fastsw
from fastsw.model_io import FORMAT_VERSION


@pytest.fixture(scope="module")
def small_model(sample_docs):
    return fastsw.train(sample_docs[:30], algo="superbpe", vocab_size=500, supermerges=60,
                        special_tokens=["<|endoftext|>"])


def test_save_load_round_trip(small_model, tmp_path, sample_docs):
    path = tmp_path / "m.json"
    small_model.save(path)
    loaded = fastsw.Tokenizer.load(path)
    assert loaded.merges == small_model.merges
    assert loaded.vocab == small_model.vocab
    assert dict(loaded.special_tokens) == dict(small_model.special_tokens)
    assert loaded.algo == "superbpe" and loaded.profile == "paper"
    assert loaded.pretokenizer == small_model.pretokenizer
    for text in sample_docs[30:40]:
        assert loaded.encode_ordinary(text) == small_model.encode_ordinary(text)
    assert fastsw.load(path).merges == small_model.merges
    assert [p.name for p in tmp_path.iterdir()] == ["m.json"]  # no temporary file left


def test_char_alphabet_and_hf_round_trip(tmp_path):
    tok = fastsw.train(["low lower newest widest"] * 3, algo="bpe", vocab_size=290, profile="hf",
                       alphabet="chars", byte_fallback=True)
    tok.save(tmp_path / "c.json")
    loaded = fastsw.load(tmp_path / "c.json")
    assert loaded.vocab == tok.vocab and loaded.encode("lowest é") == tok.encode("lowest é")


def _write(tmp_path, text):
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    return path


def test_truncated_file_names_the_file(small_model, tmp_path):
    small_model.save(tmp_path / "m.json")
    text = (tmp_path / "m.json").read_text(encoding="utf-8")
    path = _write(tmp_path, text[: len(text) // 2])
    with pytest.raises(ValueError, match="bad.json.*truncated"):
        fastsw.load(path)


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.update(format_version=FORMAT_VERSION + 1), "newer"),
    (lambda d: d.update(format="other"), "not a fastsw model"),
    (lambda d: d.pop("merges"), "merges"),
    (lambda d: d["merges"].append([10**6, 0, 1, 0]), "do not exist"),
    (lambda d: d["merges"].append(["x", 0, 1, 0]), "merges"),
    (lambda d: d.update(profile="nope"), "profile"),
    (lambda d: d.update(alphabet={"kind": "bits"}), "alphabet"),
])
def test_corrupt_files_give_clear_errors(small_model, tmp_path, mutate, message):
    small_model.save(tmp_path / "m.json")
    data = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))
    mutate(data)
    path = _write(tmp_path, json.dumps(data))
    with pytest.raises(ValueError, match=message) as info:
        fastsw.load(path)
    assert "bad.json" in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(ValueError, match="not found"):
        fastsw.load(tmp_path / "nope.json")


def test_failed_save_leaves_nothing(small_model, tmp_path, monkeypatch):
    path = tmp_path / "m.json"
    small_model.save(path)
    before = path.read_bytes()

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        small_model.save(path)
    assert path.read_bytes() == before  # the old model is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json"]  # no temporary file left


def test_train_rejects_bad_options():
    docs = ["some text here"]
    with pytest.raises(TypeError):
        fastsw.train(docs, vocab_size=300, vocab=300)  # unknown option
    with pytest.raises(ValueError, match="smaller than the 243-token alphabet"):
        fastsw.train(docs, vocab_size=200)
    with pytest.raises(ValueError, match="supermerges"):
        fastsw.train(docs, algo="superbpe", vocab_size=300, supermerges=300)
    with pytest.raises(ValueError, match="supermerges"):
        fastsw.train(docs, algo="superbpe", vocab_size=300)
    with pytest.raises(ValueError, match="supermerges"):
        fastsw.train(docs, algo="boundless", vocab_size=300, supermerges=5)
    with pytest.raises(ValueError, match="algo"):
        fastsw.train(docs, algo="wordpiece", vocab_size=300)
    with pytest.raises(ValueError, match="profile"):
        fastsw.train(docs, vocab_size=300, profile="sentencepiece")
    with pytest.raises(ValueError, match="profile='hf'"):
        fastsw.train(docs, vocab_size=300, alphabet="chars")


def test_small_corpus_runs_out_of_pairs():
    tok = fastsw.train(["ab ab"], vocab_size=1000)
    assert tok.vocab_size < 1000
    assert any("ran out" in note for note in tok.training_info["notes"])
    empty = fastsw.train([], vocab_size=300)
    assert empty.vocab_size == 243 and empty.encode("") == []
