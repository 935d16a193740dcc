"""fastsw's model file: lossless save/load, atomic writes, clear errors on bad files."""

import json
import os

import pytest

import fastsw
from fastsw.io.model_file import FORMAT_VERSION


@pytest.fixture(scope="module")
def small_model(sample_docs):
    return fastsw.train(
        sample_docs[:30], algo="superbpe", vocab_size=500, supermerges=60, special_tokens=["<|endoftext|>"]
    )


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


def test_model_io_reads_plain_data(small_model, tmp_path):
    """model_io converts between files and plain data: load_model_data gives the
    Tokenizer's keyword arguments."""
    from fastsw.io import model_file as model_io

    path = tmp_path / "m.json"
    small_model.save(path)
    data = model_io.load_model_data(path)
    assert set(data) == {"alphabet", "merges", "pretokenizer", "profile", "algo", "special_tokens", "training_info"}
    assert fastsw.Tokenizer(**data).merges == small_model.merges
    assert model_io.model_to_dict(small_model) == json.loads(path.read_text(encoding="utf-8"))


def test_char_alphabet_and_hf_round_trip(tmp_path):
    tok = fastsw.train(
        ["low lower newest widest"] * 3, algo="bpe", vocab_size=290, profile="hf", alphabet="chars", byte_fallback=True
    )
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


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.update(format_version=FORMAT_VERSION + 1), "newer"),
        (lambda d: d.update(format="other"), "not a fastsw model"),
        (lambda d: d.pop("merges"), "merges"),
        (lambda d: d["merges"].append([10**6, 0, 1, 0]), "do not exist"),
        (lambda d: d["merges"].append(["x", 0, 1, 0]), "merges"),
        (lambda d: d.update(profile="nope"), "profile"),
        (lambda d: d.update(alphabet={"kind": "bits"}), "alphabet"),
    ],
)
def test_corrupt_files_give_clear_errors(small_model, tmp_path, mutate, message):
    small_model.save(tmp_path / "m.json")
    data = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))
    mutate(data)
    path = _write(tmp_path, json.dumps(data))
    with pytest.raises(ValueError, match=message) as info:
        fastsw.load(path)
    assert "bad.json" in str(info.value)


def _set_merge(k, i, value):
    def mutate(d):
        d["merges"][k][i] = value

    return mutate


def _set(section, key, value):
    return lambda d: d[section].update({key: value})


# Each damages one field of a saved paper-profile SuperBPE model (243 bytes, merges from id 243, one special
# token right after the vocabulary): (mutation, field named in the message, words of the message).
CORRUPTIONS = {
    "alphabet-not-an-object": (lambda d: d.update(alphabet="bytes243"), "alphabet", "must be an object"),
    "paper-with-bytes256": (
        _set("alphabet", "kind", "bytes256"),
        "alphabet.kind",
        "'bytes256' does not go with profile 'paper' (which uses bytes243)",
    ),
    "alphabet-unknown-kind": (_set("alphabet", "kind", "bits"), "alphabet.kind", "not one of"),
    "alphabet-extra-setting": (_set("alphabet", "chars", "ab"), "alphabet.chars", "unknown setting"),
    "algo-unknown": (lambda d: d.update(algo="wordpiece"), "algo", "not one of bpe, boundless, superbpe"),
    "profile-null": (lambda d: d.update(profile=None), "profile", "None is not one of paper, hf"),
    "merges-not-an-array": (lambda d: d.update(merges={}), "merges", "must be an array"),
    "merge-three-numbers": (
        lambda d: d["merges"].__setitem__(0, [1, 2, 3]),
        "merges[0]",
        "must be [left, right, count, is_super] integers, not [1, 2, 3]",
    ),
    "merge-float-count": (_set_merge(3, 2, 1.5), "merges[3]", "integers"),
    "merge-boolean-id": (_set_merge(0, 0, True), "merges[0]", "integers"),
    "merge-uses-its-own-id": (
        _set_merge(5, 1, 243 + 5),
        "merges[5]",
        "do not exist yet; merge 5 creates id 248 and may only use ids 0..247",
    ),
    "merge-negative-id": (_set_merge(2, 0, -1), "merges[2]", "do not exist yet"),
    "merge-negative-count": (_set_merge(1, 2, -5), "merges[1]", "count -5 is outside 0..2**63-1"),
    "merge-count-beyond-int64": (_set_merge(1, 2, 2**63), "merges[1]", "outside 0..2**63-1"),
    "merge-is-super-2": (_set_merge(4, 3, 2), "merges[4]", "is_super must be 0 or 1"),
    "merge-repeated": (lambda d: d["merges"].__setitem__(7, list(d["merges"][3])), "merges[7]", "repeats merges[3]"),
    "special-token-gap": (
        lambda d: d["special_tokens"].update({"<|endoftext|>": 501}),
        "special_tokens",
        "ids must be 500..500, right after the 500-token vocabulary",
    ),
    "special-tokens-array": (lambda d: d.update(special_tokens=[]), "special_tokens", "must be an object"),
    "special-token-id-string": (
        lambda d: d["special_tokens"].update({"<|endoftext|>": "500"}),
        'special_tokens["<|endoftext|>"]',
        "must be an integer",
    ),
    "pretokenizer-string": (lambda d: d.update(pretokenizer="script"), "pretokenizer", "must be an object"),
    "pretokenizer-pattern-number": (
        _set("pretokenizer", "main_pattern", 5),
        "pretokenizer.main_pattern",
        "must be a string",
    ),
    "pretokenizer-unknown-mode": (_set("pretokenizer", "mode", "words"), "pretokenizer", "mode 'words'"),
    "pretokenizer-scripts-string": (
        _set("pretokenizer", "script_specific_scripts", "Han"),
        "pretokenizer.script_specific_scripts",
        "array of Unicode script names",
    ),
    "training-array": (lambda d: d.update(training=[]), "training", "must be an object"),
    "unknown-field": (lambda d: d.update(merge=[]), "merge", "unknown field"),
    "missing-merges": (lambda d: d.pop("merges"), "merges", "missing"),
}


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_schema_check_names_the_file_and_field(small_model, tmp_path, name):
    mutate, field, words = CORRUPTIONS[name]
    small_model.save(tmp_path / "m.json")
    data = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))
    assert small_model.vocab_size == 500 and data["alphabet"] == {"kind": "bytes243"}
    mutate(data)
    path = _write(tmp_path, json.dumps(data))
    with pytest.raises(ValueError) as info:
        fastsw.load(path)
    assert type(info.value) is ValueError
    assert str(info.value).startswith(f"{path}: field {field}: "), str(info.value)
    assert words in str(info.value)


CHAR_CORRUPTIONS = {
    "hf-with-bytes243": (
        _set("alphabet", "kind", "bytes243"),
        "alphabet.kind",
        "'bytes243' does not go with profile 'hf' (which uses bytes256 or chars)",
    ),
    "chars-out-of-order": (
        lambda d: d["alphabet"].update(chars=d["alphabet"]["chars"][::-1]),
        "alphabet.chars",
        "each character once, in code point order",
    ),
    "chars-repeated": (lambda d: d["alphabet"].update(chars="aab"), "alphabet.chars", "each character once"),
    "chars-array": (_set("alphabet", "chars", ["a", "b"]), "alphabet.chars", "must be a string"),
    "byte-fallback-string": (
        _set("alphabet", "byte_fallback", "yes"),
        "alphabet.byte_fallback",
        "must be true or false",
    ),
}


@pytest.mark.parametrize("name", sorted(CHAR_CORRUPTIONS))
def test_schema_check_character_alphabet(tmp_path, name):
    mutate, field, words = CHAR_CORRUPTIONS[name]
    tok = fastsw.train(
        ["low lower newest widest"] * 3, algo="bpe", vocab_size=290, profile="hf", alphabet="chars", byte_fallback=True
    )
    tok.save(tmp_path / "c.json")
    data = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    mutate(data)
    path = _write(tmp_path, json.dumps(data))
    with pytest.raises(ValueError) as info:
        fastsw.load(path)
    assert str(info.value).startswith(f"{path}: field {field}: ") and words in str(info.value), str(info.value)


def test_schema_check_accepts_every_profile_and_alphabet(tmp_path):
    docs = ["low lower newest widest"] * 3
    for kwargs in (dict(profile="paper"), dict(profile="hf"), dict(profile="hf", alphabet="chars")):
        tok = fastsw.train(docs, algo="boundless", vocab_size=300, special_tokens=["<|a|>", "<|b|>"], **kwargs)
        tok.save(tmp_path / "m.json")
        loaded = fastsw.load(tmp_path / "m.json")
        assert loaded.vocab == tok.vocab and loaded.merges == tok.merges
        assert dict(loaded.special_tokens) == dict(tok.special_tokens)


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


def test_cli_reports_a_damaged_model_in_one_line(small_model, tmp_path, capsys):
    from fastsw import cli

    small_model.save(tmp_path / "m.json")
    data = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))
    data["alphabet"] = "bytes243"  # was an AttributeError traceback
    path = _write(tmp_path, json.dumps(data))
    assert cli.main(["inspect", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines() == [
        f'fastsw: error: {path}: field alphabet: must be an object such as {{"kind": "bytes243"}}, not a string'
    ]
