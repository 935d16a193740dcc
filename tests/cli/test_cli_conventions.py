"""The command line's shared conventions: one default algorithm with the API, '-' for stdin and stdout, JSON Lines
on stdin, compressed inputs on every counting path, -m MODEL wherever a model is read, and train --help grouped by
algorithm."""

from __future__ import annotations

import bz2
import gzip
import inspect
import io
import json
import lzma
import sys

import pytest
import zstandard

import fastsw
from fastsw import cli
from fastsw.corpus import readers
from fastsw.corpus.counting import load_counts
from fastsw.corpus.sample import sample_documents
from conftest import assert_error, run, write_jsonl


def set_stdin(monkeypatch, data) -> None:
    if isinstance(data, str):
        data = data.encode("utf-8")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


@pytest.fixture(scope="module")
def docs():
    """Real multilingual lines (one document each, no newline inside)."""
    lines = []
    for doc in list(sample_documents())[:40]:
        lines.extend(line for line in doc.split("\n") if line.strip())
    return lines[:300]


@pytest.fixture(scope="module")
def model(tmp_path_factory, docs):
    path = tmp_path_factory.mktemp("model") / "m.json"
    fastsw.train(docs, algo="bpe", vocab_size=400).save(path)
    return path


def model_json(path_or_text) -> dict:
    data = json.loads(path_or_text)
    data.get("training", {}).pop("seconds", None)  # timings differ from run to run
    return data


# ---- one default algorithm ------------------------------------------------------------------------------------------


def test_cli_and_api_train_default_to_bpe():
    api = inspect.signature(fastsw.train).parameters["algo"].default
    train = cli.build_parser()._subparsers._group_actions[0].choices["train"]
    assert api == train.get_default("algo") == "bpe"


# ---- '-' is stdin and stdout -----------------------------------------------------------------------------------------


def test_dash_reads_stdin_for_encode_decode_and_pretokenize(model, docs, tmp_path, capsys, monkeypatch):
    text = "".join(d + "\n" for d in docs[:20])
    set_stdin(monkeypatch, text)
    code, ids, err = run(capsys, "encode", "-m", model, "-")
    assert code == 0 and err == ""
    set_stdin(monkeypatch, text)
    assert run(capsys, "encode", "-m", model)[1] == ids  # '-' is what no INPUT means
    set_stdin(monkeypatch, ids)
    assert run(capsys, "decode", "-m", model, "-")[1] == text
    set_stdin(monkeypatch, text)
    code, pieces, _ = run(capsys, "pretokenize", "-")
    assert code == 0 and pieces.splitlines()[0] == json.dumps(
        fastsw.Pretokenizer().pretokenize(docs[0]), ensure_ascii=False
    )
    (tmp_path / "a.txt").write_text(text, encoding="utf-8")
    for command in (
        ("encode", "-m", model),
        ("decode", "-m", model),
        ("pretokenize",),
        ("train", "-o", "m.json"),
        ("count", "-o", "c.gz"),
    ):
        code, out, err = run(capsys, *command, "-", tmp_path / "a.txt")
        assert_error(code, err, "'-' (stdin) cannot be combined with INPUT files")


def test_train_reads_stdin_and_writes_the_model_to_stdout(docs, tmp_path, capsys, monkeypatch):
    (tmp_path / "docs.txt").write_text("".join(d + "\n" for d in docs), encoding="utf-8")
    code, _, err = run(
        capsys, "train", tmp_path / "docs.txt", "--vocab-size", "300", "--no-progress", "-o", tmp_path / "file.json"
    )
    assert code == 0, err
    set_stdin(monkeypatch, "".join(d + "\n" for d in docs))
    code, out, err = run(capsys, "train", "-", "--vocab-size", "300", "--no-progress", "-o", "-")
    assert code == 0 and "saved to:    <stdout>" in err
    assert model_json(out) == model_json((tmp_path / "file.json").read_text(encoding="utf-8"))
    assert not list(tmp_path.glob("-*"))  # no file named '-'
    # JSON Lines on stdin are detected: the same model as the .jsonl file
    write_jsonl(tmp_path / "docs.jsonl", [d + "\n" for d in docs])
    set_stdin(monkeypatch, (tmp_path / "docs.jsonl").read_text(encoding="utf-8"))
    code, out2, err = run(capsys, "train", "-", "--vocab-size", "300", "--no-progress", "-o", "-")
    assert code == 0, err
    assert model_json(out2) == model_json(out)


def test_count_reads_stdin_and_writes_counts_to_stdout(docs, tmp_path, capsysbinary, monkeypatch):
    text = "".join(d + "\n" for d in docs)
    (tmp_path / "docs.txt").write_text(text, encoding="utf-8")
    assert cli.main(["count", str(tmp_path / "docs.txt"), "--no-progress", "-o", str(tmp_path / "file.gz")]) == 0
    set_stdin(monkeypatch, text)
    assert cli.main(["count", "-", "--no-progress", "-o", "-"]) == 0
    out, err = capsysbinary.readouterr()
    assert b"saved to <stdout>" in err
    (tmp_path / "stdout.gz").write_bytes(out)
    assert gzip.decompress(out) == gzip.decompress((tmp_path / "file.gz").read_bytes())
    assert load_counts(tmp_path / "stdout.gz").pretokens == load_counts(tmp_path / "file.gz").pretokens


# ---- JSON Lines on stdin ---------------------------------------------------------------------------------------------


def test_jsonl_on_stdin_is_detected_and_can_be_overridden(model, docs, capsys, monkeypatch):
    tok = fastsw.load(model)
    rows = "".join(json.dumps({"body": d, "id": i}) + "\n" for i, d in enumerate(docs[:5]))
    set_stdin(monkeypatch, "\n" + rows)  # a blank line first: still JSON Lines (blank lines are skipped)
    code, out, err = run(capsys, "encode", "-m", model, "--text-field", "body")
    assert code == 0, err
    assert out.splitlines() == [" ".join(map(str, tok.encode_ordinary(d))) for d in docs[:5]]
    set_stdin(monkeypatch, rows)
    code, out, err = run(capsys, "encode", "-m", model, "--stdin-format", "text")  # the lines as text
    assert code == 0 and out.splitlines()[0] == " ".join(map(str, tok.encode_ordinary(rows.splitlines(True)[0])))
    set_stdin(monkeypatch, rows)
    code, out, err = run(capsys, "pretokenize", "--text-field", "body")
    assert code == 0 and json.loads(out.splitlines()[0]) == fastsw.Pretokenizer().pretokenize(docs[0])
    # a text whose first line happens to be a JSON object: a clear error that names the way out
    set_stdin(monkeypatch, '{"text": "a"}\nplain text\n')
    code, out, err = run(capsys, "pretokenize")
    assert_error(code, err, "<stdin> line 2", "JSON Lines", "--stdin-format text")
    set_stdin(monkeypatch, "plain text\n")
    code, out, err = run(capsys, "pretokenize", "--stdin-format", "jsonl")
    assert_error(code, err, "<stdin> line 1", "invalid JSON")
    set_stdin(monkeypatch, "a\n")
    code, out, err = run(capsys, "pretokenize", "x.txt", "--stdin-format", "text")
    assert_error(code, err, "--stdin-format applies to stdin")
    set_stdin(monkeypatch, "a\n")
    code, out, err = run(capsys, "encode", "-m", model, "--doc-mode", "file")
    assert_error(code, err, "--doc-mode", "stdin")


def test_the_stdin_rule_in_the_reader():
    def docs_of(data, **kw):
        return list(readers.iter_stdin_documents(io.BytesIO(data.encode()), **kw))

    assert docs_of('{"text": "a"}\n{"text": "b", "x": 1}\n') == ["a", "b"]
    assert docs_of("\n\nplain\n") == ["\n", "\n", "plain\n"]  # blank lines are documents of a text stream
    assert docs_of("[1, 2]\nx\n") == ["[1, 2]\n", "x\n"]  # only an object starts JSON Lines
    assert docs_of('{"text": "a"}\n', fmt="text", keep_newline=False) == ['{"text": "a"}']
    with pytest.raises(readers.InputError, match='no field "text"'):
        docs_of('{"body": "a"}\n')


# ---- compressed inputs on every counting path ------------------------------------------------------------------------

COMPRESSORS = {
    ".gz": gzip.compress,
    ".bz2": bz2.compress,
    ".xz": lzma.compress,
    ".zst": lambda data: zstandard.ZstdCompressor().compress(data),
}


@pytest.mark.parametrize("path_kind", ["native threads", "worker processes", "pure python"])
def test_compressed_inputs_count_exactly_as_the_plain_file(docs, tmp_path, capsys, monkeypatch, path_kind):
    text = "".join(d + "\n" for d in docs).encode()
    write_jsonl(tmp_path / "plain.jsonl", docs)
    extra = {"native threads": [], "worker processes": ["--workers", "2"], "pure python": []}[path_kind]
    if path_kind == "pure python":
        monkeypatch.setenv("FASTSW_PUREPYTHON", "1")
    (tmp_path / "plain.txt").write_bytes(text)
    assert (
        run(
            capsys,
            "count",
            tmp_path / "plain.txt",
            tmp_path / "plain.jsonl",
            "--no-progress",
            *extra,
            "-o",
            tmp_path / "plain.gz",
        )[0]
        == 0
    )
    want = load_counts(tmp_path / "plain.gz")
    for ext, compress in COMPRESSORS.items():
        (tmp_path / f"c.txt{ext}").write_bytes(compress(text))
        (tmp_path / f"c.jsonl{ext}").write_bytes(compress((tmp_path / "plain.jsonl").read_bytes()))
        code, _, err = run(
            capsys,
            "count",
            tmp_path / f"c.txt{ext}",
            tmp_path / f"c.jsonl{ext}",
            "--no-progress",
            *extra,
            "-o",
            tmp_path / f"c{ext}.gz",
        )
        assert code == 0, err
        got = load_counts(tmp_path / f"c{ext}.gz")
        assert (got.pretokens, got.counts, got.n_documents, got.n_bytes) == (
            want.pretokens,
            want.counts,
            want.n_documents,
            want.n_bytes,
        ), ext


def test_train_reads_compressed_inputs_and_names_the_missing_extra(docs, tmp_path, capsys, monkeypatch):
    write_jsonl(tmp_path / "plain.jsonl", docs)
    (tmp_path / "c.jsonl.xz").write_bytes(lzma.compress((tmp_path / "plain.jsonl").read_bytes()))
    for name in ("plain.jsonl", "c.jsonl.xz"):
        assert (
            run(
                capsys,
                "train",
                tmp_path / name,
                "--vocab-size",
                "300",
                "--no-progress",
                "-o",
                tmp_path / f"{name}.model",
            )[0]
            == 0
        )
    assert model_json((tmp_path / "plain.jsonl.model").read_text()) == model_json(
        (tmp_path / "c.jsonl.xz.model").read_text()
    )
    (tmp_path / "c.txt.zst").write_bytes(COMPRESSORS[".zst"](b"some text\n"))
    monkeypatch.setattr(readers, "_zstd", None)  # as if zstandard were not installed
    code, _, err = run(
        capsys, "train", tmp_path / "c.txt.zst", "--vocab-size", "300", "--no-progress", "-o", tmp_path / "z.json"
    )
    assert_error(code, err, "pip install 'fastsw[zstd]'")


# ---- -m MODEL wherever a model is read ------------------------------------------------------------------------------


def test_inspect_takes_m_model_and_the_positional_form(model, tmp_path, capsys, monkeypatch):
    code, by_flag, err = run(capsys, "inspect", "-m", model)
    assert code == 0, err
    assert run(capsys, "inspect", model)[1] == by_flag
    set_stdin(monkeypatch, model.read_text(encoding="utf-8"))
    code, from_stdin, err = run(capsys, "inspect", "-m", "-", "--json")
    assert code == 0 and from_stdin == run(capsys, "inspect", "--json", model)[1]
    code, out, err = run(capsys, "inspect", model, "-m", model)
    assert_error(code, err, "give the model once")
    code, out, err = run(capsys, "inspect")
    assert_error(code, err, "inspect -m MODEL")
    set_stdin(monkeypatch, "")
    code, out, err = run(capsys, "inspect", "-m", "-")
    assert_error(code, err, "stdin is empty")
    set_stdin(monkeypatch, "not a model")
    code, out, err = run(capsys, "inspect", "-m", "-")
    assert_error(code, err, "<stdin>", "not a fastsw model")


def test_a_model_on_stdin_goes_with_input_files(model, docs, tmp_path, capsys, monkeypatch):
    (tmp_path / "a.txt").write_text(docs[0] + "\n", encoding="utf-8")
    want = run(capsys, "encode", "-m", model, tmp_path / "a.txt")[1]
    set_stdin(monkeypatch, model.read_text(encoding="utf-8"))
    assert run(capsys, "encode", "-m", "-", tmp_path / "a.txt")[1] == want
    (tmp_path / "ids.txt").write_text(want, encoding="utf-8")
    set_stdin(monkeypatch, model.read_text(encoding="utf-8"))
    assert run(capsys, "decode", "-m", "-", tmp_path / "ids.txt")[1] == docs[0] + "\n"
    for command in (("encode", "-m", "-"), ("decode", "-m", "-"), ("pretokenize", "-m", "-", "-")):
        set_stdin(monkeypatch, model.read_text(encoding="utf-8"))
        code, out, err = run(capsys, *command)
        assert_error(code, err, "-m - reads the model from stdin")


# ---- train --help, grouped ------------------------------------------------------------------------------------------


def test_train_help_is_grouped_by_algorithm(capsys):
    code, out, _ = run(capsys, "train", "--help")
    assert code == 0
    groups = [
        "common options:",
        "BPE rules and text",
        "SuperBPE:",
        "BoundlessBPE and SuperBPE supermerge",
        "parity-aware BPE:",
        "MinGram:",
        "input:",
        "reading INPUT files:",
        "languages:",
        "Dask cluster:",
        "output and progress:",
    ]
    where = [out.index("\n" + g) for g in groups]
    assert where == sorted(where)
    sections = dict(zip(groups, (out[a:b] for a, b in zip(where, where[1:] + [len(out)]))))
    for group, flags in {
        "common options:": ["--algo", "--vocab-size", "--special-token"],
        "SuperBPE:": ["--supermerges"],
        "MinGram:": ["--overshoot", "--refill"],
        "parity-aware BPE:": ["--dev", "--ratio", "--phase1"],
        "BoundlessBPE and SuperBPE supermerge": ["--greedy-split", "--max-ngram-len"],
        "output and progress:": ["--output", "--no-progress"],
        "input:": ["INPUT", "--from-counts"],
    }.items():
        for flag in flags:
            assert flag in sections[group], (group, flag)
