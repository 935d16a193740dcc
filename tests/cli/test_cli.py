"""Tests for the command line (fastsw.cli): run in-process through main(argv), plus two subprocess checks."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import fastsw
from fastsw import cli
from fastsw.corpus.sample import sample_documents, sample_files
from conftest import assert_error, run, write_jsonl

REPO_ROOT = Path(fastsw.__file__).resolve().parents[1]


# ---- helpers ----------------------------------------------------------------------------------------------------


def set_stdin(monkeypatch, data) -> None:
    if isinstance(data, str):
        data = data.encode("utf-8")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def corpus_documents() -> list[str]:
    """Real multilingual text: paragraphs (with inner newlines) of a few sample documents, plus short edge cases."""
    by_lang = {f.stem: f for f in sample_files()}
    docs: list[str] = []
    for lang in ("en", "de", "fr", "ja", "ru"):
        texts = list(fastsw.iter_documents([by_lang[lang]], doc_mode="separator", separator="\n\n\n"))
        for text in texts[:2]:
            paragraphs = text.split("\n\n")
            docs.extend("\n\n".join(paragraphs[i : i + 3]) for i in range(0, min(len(paragraphs), 30), 3))
    docs += ["", " ", "\n", "a\r\nb\n\n", "emoji 🙂 and tabs\tend"]
    return docs


# ---- fixtures ---------------------------------------------------------------------------------------------------

ALGO_ARGS = {
    "bpe": ["--algo", "bpe"],
    "boundless": ["--algo", "boundless"],
    "superbpe": ["--algo", "superbpe", "--supermerges", "100"],
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, list[str]]:
    docs = corpus_documents()
    return write_jsonl(tmp_path_factory.mktemp("corpus") / "corpus.jsonl", docs), docs


@pytest.fixture(scope="module", params=sorted(ALGO_ARGS))
def model(request, corpus, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("model") / f"{request.param}.json"
    code = cli.main(
        ["train", str(corpus[0]), *ALGO_ARGS[request.param], "--vocab-size", "1000", "--no-progress", "-o", str(path)]
    )
    assert code == 0 and path.is_file()
    return path


@pytest.fixture(scope="module")
def bpe_model(tmp_path_factory, corpus) -> Path:
    path = tmp_path_factory.mktemp("bpe") / "bpe.json"
    assert (
        cli.main(["train", str(corpus[0]), "--algo", "bpe", "--vocab-size", "300", "--no-progress", "-o", str(path)])
        == 0
    )
    return path


# ---- train / encode / decode ------------------------------------------------------------------------------------


def test_round_trip(model, corpus, tmp_path, capsys, monkeypatch):
    corpus_path, docs = corpus
    tok = fastsw.load(model)
    algo = model.stem
    assert tok.algo == algo and tok.vocab_size <= 1000
    if algo != "bpe":
        assert tok.n_super > 0  # the corpus is big enough for supermerges to matter

    code, out, err = run(capsys, "encode", "-m", model, corpus_path)
    assert code == 0 and err == ""
    lines = out.split("\n")
    assert lines.pop() == ""
    assert len(lines) == len(docs)
    assert lines == [" ".join(map(str, tok.encode_ordinary(d))) for d in docs]
    assert lines[docs.index("")] == ""  # an empty document gives an empty line

    ids_file = tmp_path / "ids.txt"
    ids_file.write_text(out, encoding="utf-8")
    set_stdin(monkeypatch, out)
    code, out, err = run(capsys, "decode", "-m", model, "--jsonl")
    assert code == 0 and err == ""
    assert [json.loads(line)["text"] for line in out.splitlines()] == docs  # newlines survive exactly
    assert run(capsys, "decode", "-m", model, "--jsonl", ids_file)[1] == out  # files work like stdin

    # stdin lines are documents with their "\n" (as INPUT lines); plain decode adds nothing, so the pair round-trips
    text = "Hello world, this is a test.\n\nÜber 世界 — ok\nlast line without newline"
    set_stdin(monkeypatch, text)
    code, out, err = run(capsys, "encode", "-m", model)
    assert code == 0 and err == ""
    assert out.splitlines() == [
        " ".join(map(str, tok.encode_ordinary(line))) for line in text.splitlines(keepends=True)
    ]
    set_stdin(monkeypatch, out)
    code, out, err = run(capsys, "decode", "-m", model)
    assert code == 0 and out == text


def test_train_summary_and_special_tokens(corpus, tmp_path, capsys):
    out_path = tmp_path / "m.json"
    code, out, err = run(
        capsys,
        "train",
        corpus[0],
        "--algo",
        "superbpe",
        "--vocab-size",
        "600",
        "--supermerges",
        "50",
        "--greedy-split",
        "--special-token",
        "<|endoftext|>",
        "--special-token",
        "<|pad|>",
        "--no-progress",
        "-o",
        out_path,
    )
    assert code == 0 and out == ""
    tok = fastsw.load(out_path)
    assert dict(tok.special_tokens) == {"<|endoftext|>": tok.vocab_size, "<|pad|>": tok.vocab_size + 1}
    for word in (
        "vocabulary",
        "regular merges",
        "supermerges",
        f"{len(corpus[1])} documents",
        "MB",
        "phase1",
        "phase2",
        str(out_path),
    ):
        assert word in err, word
    assert "Traceback" not in err
    code, out, err = run(capsys, "inspect", out_path)
    assert code == 0 and "<|endoftext|>" in out and "superbpe" in out


def test_train_progress_and_separator(tmp_path, capsys):
    text = "Der schnelle braune Fuchs.\nZweite Zeile.@@Noch ein Dokument über Füchse.@@"
    (tmp_path / "c.txt").write_text(text, encoding="utf-8")
    out_path = tmp_path / "m.json"
    code, out, err = run(
        capsys,
        "train",
        tmp_path / "c.txt",
        "--separator",
        r"@@",
        "--algo",
        "bpe",
        "--vocab-size",
        "260",
        "-o",
        out_path,
    )
    assert code == 0 and "pre-tokenizing" in err and "2 documents" in err
    code, out, err = run(
        capsys, "encode", "-m", out_path, tmp_path / "c.txt", "--doc-mode", "separator", "--separator", "@@"
    )
    assert code == 0 and len(out.splitlines()) == 2
    code, out, err = run(capsys, "encode", "-m", out_path, tmp_path / "c.txt", "--doc-mode", "file")
    assert code == 0 and len(out.splitlines()) == 1
    code, out, err = run(capsys, "encode", "-m", out_path, tmp_path / "c.txt")  # line mode by default
    assert code == 0 and len(out.splitlines()) == 2


def test_train_on_sample_corpus(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "train", "--vocab-size", "400", "--no-progress", "-o", "model.json")
    assert code == 0 and out == ""
    assert "sample corpus" in err and "model.json" in err
    tok = fastsw.load(tmp_path / "model.json")
    assert tok.algo == "bpe" and tok.vocab_size == 400  # the default, as fastsw.train()
    assert tok.training_info["documents"] == sum(1 for _ in sample_documents())
    assert [p.name for p in tmp_path.iterdir()] == ["model.json"]  # no temporary file left behind


def test_parse_escapes():
    assert cli.parse_escapes(r"\n\n\n") == "\n\n\n"
    assert cli.parse_escapes(r"a\tb\\n\x41\u00e9\U0001F642\0") == "a\tb\\nAé🙂\0"
    assert cli.parse_escapes("plain ü") == "plain ü"
    for bad in (r"\q", "end\\", r"\x4", r"\U00110000"):
        with pytest.raises(ValueError):
            cli.parse_escapes(bad)
    for bad, digits in ((r"\x4", "two"), (r"a\xg1", "two"), (r"\u12", "four"), (r"\U0001F6", "eight")):
        with pytest.raises(ValueError, match=rf"needs {digits} hex digits"):
            cli.parse_escapes(bad)


def test_separator_with_a_short_hex_escape_is_one_clear_error(tmp_path, capsys):
    code, _, err = run(capsys, "train", "x.txt", "--separator", r"\x4", "-o", tmp_path / "m.json")
    assert_error(code, err, "--separator", "\\x escape needs two hex digits")


def test_train_help_says_which_algos_each_pretokenizer_goes_with(capsys):
    assert cli.main(["train", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "(--algo bpe only)" not in text
    assert "script-v3 with every --algo but parity-bpe" in text, text
    assert "none with --algo bpe, parity-bpe or mingram" in text, text


# ---- inspect / pretokenize ---------------------------------------------------------------------------------------


def test_inspect_json(model, capsys):
    tok = fastsw.load(model)
    code, out, err = run(capsys, "inspect", model, "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert set(data) == {"algo", "profile", "vocab_size", "merges"}
    assert (data["algo"], data["profile"], data["vocab_size"]) == (tok.algo, "paper", tok.vocab_size)
    merges = data["merges"]
    assert len(merges) == len(tok.merges) == tok.vocab_size - 243
    assert [m["id"] for m in merges] == list(range(243, tok.vocab_size))
    for m in merges:
        assert set(m) == {"id", "left", "right", "count", "super"}
        assert isinstance(m["super"], bool) and isinstance(m["count"], int)
        assert m["left"] == m["left"].lower() and m["right"] == m["right"].lower()
        assert bytes.fromhex(m["left"]) + bytes.fromhex(m["right"]) == tok.vocab[m["id"]]
    assert sum(m["super"] for m in merges) == tok.n_super

    code, out, err = run(capsys, "inspect", model)
    assert code == 0
    for word in (
        tok.algo,
        "paper",
        str(tok.vocab_size),
        f"{tok.n_regular} regular",
        f"{tok.n_super} super",
        "special tokens: none",
    ):
        assert word in out, word
    assert len(out.splitlines()) < 30


def test_pretokenize(tmp_path, capsys, monkeypatch, bpe_model):
    set_stdin(monkeypatch, "Hello world!\n\n你好世界 123\n")
    code, out, err = run(capsys, "pretokenize")
    assert code == 0 and err == ""
    assert [json.loads(line) for line in out.splitlines()] == [
        ["Hello", " world", "!"],
        [],
        ["你", "好", "世", "界", " ", "123"],
    ]
    assert "你" in out  # ensure_ascii=False

    set_stdin(monkeypatch, "你好世界 123\n")
    code, out, err = run(capsys, "pretokenize", "--pretokenizer", "simple")
    assert code == 0 and json.loads(out) == ["你好世界", " ", "123"]

    path = write_jsonl(tmp_path / "d.jsonl", ["a\nb", "Üb 12345"])
    code, out, err = run(capsys, "pretokenize", "-m", bpe_model, path)
    assert code == 0
    assert [json.loads(line) for line in out.splitlines()] == [["a", "\n", "b"], ["Üb", " ", "123", "45"]]


# ---- errors -----------------------------------------------------------------------------------------------------


@pytest.fixture
def files(tmp_path):
    write_jsonl(tmp_path / "good.jsonl", ["some text here", "more text"])
    (tmp_path / "badjson.jsonl").write_text('{"text": "ok"}\n{"text": oops}\n', encoding="utf-8")
    (tmp_path / "corrupt.json").write_text('{"format": "fastsw", "format_version": 1, "merg', encoding="utf-8")
    (tmp_path / "adir").mkdir()
    return tmp_path


TRAIN_ERRORS = [
    (["missing.txt"], ["missing.txt", "not found"]),
    (["badjson.jsonl"], ["badjson.jsonl", "line 2", "JSON"]),
    (["good.jsonl", "--text-field", "body"], ["good.jsonl", "text-field", "body"]),
    (["adir"], ["adir", "directory"]),
    (["good.jsonl", "--vocab-size", "100"], ["vocab-size", "243"]),
    (["good.jsonl", "--vocab-size", "200", "--profile", "hf"], ["vocab-size", "256"]),
    (["good.jsonl", "--vocab-size", "5", "--alphabet", "chars", "--profile", "hf"], ["vocab", "alphabet"]),
    (["good.jsonl", "--vocab-size", "0"], ["vocab-size"]),
    (["good.jsonl", "--algo", "superbpe", "--supermerges", "300", "--vocab-size", "300"], ["supermerges", "300"]),
    (["good.jsonl", "--algo", "superbpe", "--supermerges", "100", "--vocab-size", "300"], ["supermerges", "alphabet"]),
    (["good.jsonl", "--supermerges", "10"], ["supermerges", "superbpe"]),
    (["good.jsonl", "--algo", "superbpe"], ["supermerges"]),
    (["good.jsonl", "--algo", "word"], ["--algo", "word"]),
    (["good.jsonl", "--algo", "bpe", "--greedy-split"], ["greedy-split"]),
    (["good.jsonl", "--max-ngram-len", "5"], ["--max-ngram-len", "--greedy-split"]),
    (["good.jsonl", "--alphabet", "chars"], ["--profile hf"]),
    (["good.jsonl", "--byte-fallback"], ["--byte-fallback", "chars"]),
    (["good.jsonl", "--special-token", "<s>", "--special-token", "<s>"], ["special-token"]),
    (["good.jsonl", "--doc-mode", "separator"], ["--separator"]),
    (["good.jsonl", "--doc-mode", "line", "--separator", "x"], ["--separator", "line"]),
    (["good.jsonl", "--separator", r"\q"], ["--separator", "escape"]),
    (["--text-field", "body"], ["--text-field", "INPUT"]),
]


@pytest.mark.parametrize("args, words", TRAIN_ERRORS, ids=[" ".join(a) for a, _ in TRAIN_ERRORS])
def test_train_errors(files, capsys, monkeypatch, args, words):
    monkeypatch.chdir(files)
    code, out, err = run(capsys, "train", *args, "--no-progress", "-o", "out.json")
    assert_error(code, err, *words)
    assert out == ""
    assert not (files / "out.json").exists()
    assert not any(p.name.startswith(".out.json") for p in files.iterdir())


def test_train_output_errors(files, capsys, monkeypatch):
    monkeypatch.chdir(files)
    code, out, err = run(capsys, "train", "good.jsonl", "-o", "nodir/out.json")
    assert_error(code, err, "nodir")
    assert not (files / "nodir").exists()
    code, out, err = run(capsys, "train", "good.jsonl", "-o", "adir")
    assert_error(code, err, "adir", "directory")
    code, out, err = run(capsys, "train", "good.jsonl")
    assert_error(code, err, "-o/--output")


def test_error_after_progress_bar_starts_a_line(files, capsys, monkeypatch):
    monkeypatch.chdir(files)
    code, out, err = run(capsys, "train", "badjson.jsonl", "-o", "out.json")  # progress bars on
    assert code == 2 and "Traceback" not in err
    assert err.endswith("\n") and err.splitlines()[-1].startswith("fastsw: error: badjson.jsonl line 2")
    assert not (files / "out.json").exists()


def test_interrupt(files, capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.chdir(files)
    monkeypatch.setattr("fastsw.trainers.train.train", interrupted)
    code, out, err = run(capsys, "train", "good.jsonl", "--no-progress", "-o", "out.json")
    assert code == 130 and "interrupted" in err and "Traceback" not in err
    assert not (files / "out.json").exists()


@pytest.mark.parametrize("command", ["encode", "decode", "inspect"])
@pytest.mark.parametrize(
    "model_file, words",
    [
        ("missing.json", ["missing.json", "not found"]),
        ("corrupt.json", ["corrupt.json", "model"]),
        ("good.jsonl", ["good.jsonl", "model"]),
        ("adir", ["adir"]),
    ],
)
def test_model_errors(files, capsys, monkeypatch, command, model_file, words):
    monkeypatch.chdir(files)
    set_stdin(monkeypatch, "1 2 3\n")
    argv = ["inspect", model_file] if command == "inspect" else [command, "-m", model_file]
    code, out, err = run(capsys, *argv)
    assert_error(code, err, *words)
    assert out == ""


@pytest.mark.parametrize(
    "ids, words",
    [("1 2 x3", ["line 2", "x3"]), ("1 -5", ["line 2", "-5"]), ("1 99999", ["line 2", "99999"]), ("1 ٣", ["line 2"])],
)
def test_decode_bad_ids(bpe_model, capsys, monkeypatch, ids, words):
    set_stdin(monkeypatch, f"72 101\n{ids}\n")
    code, out, err = run(capsys, "decode", "-m", bpe_model)
    assert_error(code, err, *words)
    assert out == "He"  # the lines before the bad one were decoded (plain decode adds no newline)


def test_encode_input_errors(files, bpe_model, capsys, monkeypatch):
    monkeypatch.chdir(files)
    code, out, err = run(capsys, "encode", "-m", bpe_model, "good.jsonl", "missing.jsonl")
    assert_error(code, err, "missing.jsonl")
    assert out == ""  # input files are checked before anything is encoded
    code, out, err = run(capsys, "encode", "-m", bpe_model, "good.jsonl", "--text-field", "body")
    assert_error(code, err, "text-field")
    code, out, err = run(capsys, "encode", "-m", bpe_model, "--doc-mode", "file")
    assert_error(code, err, "--doc-mode", "stdin")
    set_stdin(monkeypatch, b"ok\nbad \xff byte\n")
    code, out, err = run(capsys, "encode", "-m", bpe_model)
    assert_error(code, err, "stdin", "line 2", "UTF-8")
    code, out, err = run(capsys, "encode")
    assert_error(code, err, "-m/--model")
    code, out, err = run(capsys)
    assert_error(code, err, "COMMAND")


def test_broken_pipe(bpe_model, capsys, monkeypatch):
    class ClosedPipe(io.RawIOBase):
        def writable(self):
            return True

        def write(self, b):
            raise BrokenPipeError(32, "Broken pipe")

    class Stdout:
        buffer = ClosedPipe()

        def flush(self):
            pass

    set_stdin(monkeypatch, "some text\n" * 10)
    monkeypatch.setattr(sys, "stdout", Stdout())
    code = cli.main(["encode", "-m", str(bpe_model)])
    monkeypatch.undo()
    out, err = capsys.readouterr()
    assert code == 141 and err == ""


# ---- module entry point (subprocess) ----------------------------------------------------------------------------


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


def test_module_version():
    r = subprocess.run(
        [sys.executable, "-m", "fastsw", "--version"], capture_output=True, text=True, env=_env(), timeout=60
    )
    assert r.returncode == 0 and r.stdout.strip() == f"fastsw {fastsw.__version__}"


def test_module_train(tmp_path):
    (tmp_path / "tiny.txt").write_text("the cat sat on the mat\nthe dog sat on the log\n" * 20, encoding="utf-8")
    r = subprocess.run(
        [sys.executable, "-m", "fastsw", "train", "tiny.txt", "--algo", "bpe", "--vocab-size", "260", "-o", "m.json"],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=tmp_path,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and "saved to" in r.stderr and "Traceback" not in r.stderr
    assert fastsw.load(tmp_path / "m.json").vocab_size == 260


def test_encode_file_pipe_decode_gives_the_file_back(bpe_model, tmp_path):
    """`fastsw encode FILE | fastsw decode` through real pipes: a line's newline belongs to its ids and decode adds
    nothing, so empty lines, CRLF and a last line without a newline all come back byte for byte."""
    text = "first line\n\n\nÜber 世界 — ok\r\n  indented\tline\n\nlast line without newline"
    src = tmp_path / "doc.txt"
    src.write_bytes(text.encode("utf-8"))
    enc = subprocess.Popen(
        [sys.executable, "-m", "fastsw", "encode", "-m", str(bpe_model), str(src)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    dec = subprocess.run(
        [sys.executable, "-m", "fastsw", "decode", "-m", str(bpe_model)],
        stdin=enc.stdout,
        capture_output=True,
        env=_env(),
        timeout=120,
    )
    enc.stdout.close()
    assert enc.wait(timeout=120) == 0, enc.stderr.read()
    enc.stderr.close()
    assert dec.returncode == 0, dec.stderr
    assert dec.stdout == text.encode("utf-8")
    # stdin lines keep their newline too: `fastsw encode < FILE | fastsw decode` is the same round trip
    with open(src, "rb") as f:
        ids = subprocess.run(
            [sys.executable, "-m", "fastsw", "encode", "-m", str(bpe_model)],
            stdin=f,
            capture_output=True,
            env=_env(),
            timeout=120,
        )
    assert ids.returncode == 0, ids.stderr
    back = subprocess.run(
        [sys.executable, "-m", "fastsw", "decode", "-m", str(bpe_model)],
        input=ids.stdout,
        capture_output=True,
        env=_env(),
        timeout=120,
    )
    assert back.returncode == 0 and back.stdout == text.encode("utf-8")


def test_encode_files_in_batches(bpe_model, tmp_path, capsys, monkeypatch):
    """INPUT documents go to the encoder in batches (one encode_batch_to_numpy call per batch), not one call per line."""
    monkeypatch.delenv("FASTSW_PUREPYTHON", raising=False)  # the fast path's batches (also in CI's pure-Python pass)
    tok = fastsw.load(bpe_model)
    lines = [f"line {i} of the file\n" if i % 7 else "\n" for i in range(2500)]
    src = tmp_path / "many.txt"
    src.write_text("".join(lines), encoding="utf-8")
    calls = []
    inside = []  # the batch call may encode document by document itself (the twin, while kernels compile)
    real, real_line = fastsw.Tokenizer.encode_batch_to_numpy, fastsw.Tokenizer.encode_ordinary

    def counting(self, texts, **kwargs):
        calls.append(len(texts))
        inside.append(True)
        try:
            return real(self, texts, **kwargs)
        finally:
            inside.pop()

    def per_line(self, *args, **kwargs):
        if not inside:
            raise AssertionError("encode_ordinary called per line")
        return real_line(self, *args, **kwargs)

    monkeypatch.setattr(cli.encode, "ENCODE_BATCH_DOCS", 1000)
    monkeypatch.setattr(fastsw.Tokenizer, "encode_batch_to_numpy", counting)
    monkeypatch.setattr(fastsw.Tokenizer, "encode_ordinary", per_line)
    code, out, err = run(capsys, "encode", "-m", bpe_model, src)
    monkeypatch.undo()
    assert code == 0 and err == ""
    assert calls == [1000, 1000, 500]
    assert out.splitlines() == [" ".join(map(str, tok.encode_ordinary(line))) for line in lines]


def test_encode_error_in_a_batch_names_the_document(tmp_path, capsys):
    """A document the model cannot encode (a character outside a chars alphabet) is named by its number, also when
    it sits in the middle of a batch."""
    model = tmp_path / "chars.json"
    fastsw.train(["abc abc ab\n"] * 5, algo="bpe", vocab_size=7, alphabet="chars", profile="hf").save(model)
    src = tmp_path / "docs.txt"
    src.write_text("abc\nab\ncab\nabz\nabc\n", encoding="utf-8")
    code, out, err = run(capsys, "encode", "-m", model, src)
    assert_error(code, err, "document 4")


# ---- progress lines -----------------------------------------------------------------------------------------------


def _line(err: str, start: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith(start)]
    assert len(lines) == 1, err
    return lines[0]


def test_progress_lines_give_the_whole_input_and_no_stray_count(tmp_path, capsys, monkeypatch):
    # 1000 lines of ~1 kB: four batches for two counting threads. The last progress report used
    # to come before the threads had counted the last batch (0.8 of 1.0 MB, or less); the line
    # must give the input's bytes. The kernel-loading stage counts nothing: no "0" after it.
    # the compiled counter's threads, also in CI's pure-Python pass (the scanner's switch is read at import)
    monkeypatch.delenv("FASTSW_PUREPYTHON", raising=False)
    import fastsw.trainers.train

    monkeypatch.setattr(fastsw.pretokenizers.pretokenize, "HAVE_NATIVE_PRETOKENIZER", True)
    corpus = tmp_path / "c.txt"
    corpus.write_text(("the cat sat on the mat " * 45 + "\n") * 1000, encoding="utf-8")
    size_mb = f"{corpus.stat().st_size / 1e6:.1f} MB"
    monkeypatch.setattr(fastsw.trainers.train, "default_workers", lambda: 2)
    code, out, err = run(
        capsys, "train", corpus, "--algo", "bpe", "--vocab-size", "260", "--backend", "numba", "-o", tmp_path / "m.json"
    )
    assert code == 0, err
    assert f"1000 docs, {size_mb} (" in _line(err, "pre-tokenizing (2 threads): ")
    assert re.fullmatch(r"loading Numba kernels \(\d+\.\ds\)", _line(err, "loading Numba kernels"))

    import fastsw.corpus.counting

    monkeypatch.setattr(fastsw.corpus.counting, "default_workers", lambda: 2)
    code, out, err = run(capsys, "count", corpus, "-o", tmp_path / "c.counts")
    assert code == 0, err
    assert f"1000 docs, {size_mb} (" in _line(err, "counting (2 threads): ")


def test_first_run_says_kernels_compile(tmp_path, capsys, monkeypatch):
    # A cold Numba cache makes the first 'fastsw train' compile for ~30 s: it says so, once,
    # before the loading line. Here the cold cache is two fresh kernels that really compile.
    from numba import njit
    from fastsw.trainers import bpe_fast as fast_train
    from fastsw.trainers import train as trainer

    fresh = [njit(lambda x: x + 1), njit(lambda x: x * 2)]
    monkeypatch.setattr(fast_train, "warmup", lambda phase2=True: [kernel(1) for kernel in fresh])
    (tmp_path / "c.txt").write_text("the cat sat on the mat\n" * 50, encoding="utf-8")
    argv = [
        "train",
        tmp_path / "c.txt",
        "--algo",
        "bpe",
        "--vocab-size",
        "260",
        "--backend",
        "numba",
        "-o",
        tmp_path / "m.json",
    ]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert err.count(trainer.COMPILE_NOTICE) == 1
    assert err.index(trainer.COMPILE_NOTICE) < err.index("loading Numba kernels")
    code, out, err = run(capsys, *argv)  # compiled now: loading says nothing more
    assert code == 0 and trainer.COMPILE_NOTICE not in err and "loading Numba kernels" in err


# A fresh install: Numba's on-disk cache is empty, so whatever a run calls compiles. The child reports which
# kernels it compiled (their signatures); no wall clock is looked at.
_COMPILED = (
    "from fastsw.encoding import encode_fast as fast_encode\nfrom fastsw.trainers import bpe_kernels as _train_kernels\n"
    "def compiled(kernels): return sorted(k.__name__ for k in kernels if k.signatures)\n"
)


def _fresh_cache_run(code: str, cwd) -> dict:
    env = _env()
    env.pop("FASTSW_PUREPYTHON", None)
    env.pop("NUMBA_DISABLE_JIT", None)
    env["NUMBA_CACHE_DIR"] = str(Path(cwd) / "numba-cache")  # empty: a fresh install
    r = subprocess.run(
        [sys.executable, "-c", _COMPILED + code], capture_output=True, text=True, env=env, cwd=cwd, timeout=600
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1])


def test_training_on_a_fresh_install_compiles_only_the_training_kernels(tmp_path, sample_docs):
    # One process, one empty cache, so the merge loop compiles once for both runs. BPE first: a run without
    # supermerges never compiles the candidate cut, and the background process that compiled part of the merge
    # loop's helpers meanwhile is ended and reaped when the run ends (no child left, not even a zombie). Then
    # BoundlessBPE: the model's reachability check takes the reference path while the encoding kernels are not
    # compiled, so training compiles the candidate cut (the merge loop is there already) and no encoding kernel.
    # (The BoundlessBPE run from an empty cache, merge loop and candidate cut compiled at once, is
    # test_bpe_fast.test_kernels_compiled_ahead_are_loaded_by_the_merge_loop.)
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(sample_docs[:40]), encoding="utf-8")
    code = (
        "import json, os\nfrom fastsw import cli\nfrom fastsw.trainers import bpe_fast\n"
        "def train(algo, out):\n"
        f"    argv = ['train', {str(corpus)!r}, '--algo', algo, '--vocab-size', '600', '--backend', 'numba']\n"
        "    assert cli.main(argv + ['-o', out]) == 0\n"
        "train('bpe', 'bpe.json')\n"
        "try:\n    os.waitpid(-1, os.WNOHANG)\n    children = True\nexcept ChildProcessError:\n    children = False\n"
        "seen = {'bpe': compiled([_train_kernels._merge_loop, *bpe_fast.PHASE2_KERNELS]), 'children': children}\n"
        "seen['ahead'] = bpe_fast._ahead is not None\n"
        "train('boundless', 'm.json')\n"
        "seen.update(encode=compiled(fast_encode.KERNELS), "
        "train=compiled([_train_kernels._merge_loop, _train_kernels._cut_candidates]))\n"
        "print(json.dumps(seen))"
    )
    seen = _fresh_cache_run(code, tmp_path)
    assert seen == {
        "bpe": ["_merge_loop"],
        "children": False,
        "ahead": False,
        "encode": [],
        "train": ["_cut_candidates", "_merge_loop"],
    }
    bpe = fastsw.load(tmp_path / "bpe.json")
    assert bpe.merges == fastsw.train(corpus, algo="bpe", vocab_size=600, backend="python").merges
    model = fastsw.load(tmp_path / "m.json")  # the same reachable tokens as a check on the kernels
    reference = fastsw.train(corpus, algo="boundless", vocab_size=600, backend="python")
    assert model.merges == reference.merges
    fresh = fastsw.Tokenizer(
        alphabet=model.alphabet,
        merges=[tuple(m[1:]) for m in model.merges],
        pretokenizer=model.pretokenizer,
        profile=model.profile,
        algo=model.algo,
        backend="numba",
    )
    assert model._shortcut == fresh._shortcut and model._eligible == fresh._eligible


def test_loading_and_a_short_encode_on_a_fresh_install_compile_nothing(tmp_path, multilingual_boundless):
    # Loading a model (its reachability check) and encoding a short text take the reference path
    # while the kernels are not compiled: the same ids, no pause to compile.
    multilingual_boundless.save(tmp_path / "m.json")
    texts = ["hello", "Über 世界 — ok, the cat sat on the mat", "e\u0301 👍🏽 1234 hello hello"]
    code = (
        "import fastsw, json\n"
        "tok = fastsw.load('m.json')\n"
        f"ids = [tok.encode(t) for t in {texts!r}] + [tok.encode_ordinary(t) for t in {texts!r}]\n"
        "print(json.dumps({'ids': ids, 'compiled': compiled(fast_encode.KERNELS + _train_kernels.KERNELS)}))"
    )
    seen = _fresh_cache_run(code, tmp_path)
    assert seen["compiled"] == []
    expected = [multilingual_boundless.encode(t, backend="python") for t in texts]
    assert seen["ids"] == expected + expected


def test_a_long_first_encode_on_a_fresh_install_does_not_wait_for_the_kernels(tmp_path, multilingual_boundless):
    # A 20,000-character text on a fresh install: the twin encodes it at once while a background process
    # compiles the encoding kernels into Numba's cache; once that process ends, the kernels load from the cache
    # (nothing compiles in this process) and give the same ids: the model's table builders, and the encoding kernel
    # through its C entry for one text (fastsw.encoding.c_entry, a hit in Numba's cache).
    multilingual_boundless.save(tmp_path / "m.json")
    code = (
        "import fastsw, json\n"
        "from fastsw.corpus.sample import sample_documents\n"
        "tok = fastsw.load('m.json')\n"
        "text = ' '.join(sample_documents())[:20000]\n"
        "first = tok.encode(text)\n"
        "seen = {'first': first, 'compiled_then': compiled(fast_encode.KERNELS)}\n"
        "seen['background'] = fast_encode._background is not None and fast_encode._background.wait()\n"
        "seen['ready'] = fast_encode.kernels_ready()\n"
        "seen['again'] = tok.encode(text)\n"
        "seen['loaded'] = compiled(fast_encode.KERNELS)\n"
        "from fastsw.encoding import c_entry\n"
        "seen['entry_hits'] = c_entry._compiled.cache_hits if c_entry._compiled is not None else None\n"
        "print(json.dumps(seen))"
    )
    seen = _fresh_cache_run(code, tmp_path)
    want_text = " ".join(sample_documents())[:20000]
    want = multilingual_boundless.encode(want_text, backend="python")
    assert seen["first"] == want and seen["again"] == want
    assert seen["compiled_then"] == [] and seen["background"] == 0 and seen["ready"] is True
    assert "_build_pair_table" in seen["loaded"] and seen["entry_hits"] == 1
    # The kernels that process compiled are in Numba's on-disk cache: a later process finds them there before
    # loading any (the reachability check and short texts then run on them); a process with another, empty cache
    # does not. (One compilation of the encoding kernels serves both runs.)
    code = "import json; ready = fast_encode.kernels_ready()\nprint(json.dumps([ready, compiled(fast_encode.KERNELS)]))"
    assert _fresh_cache_run(code, tmp_path) == [True, []]
    empty = tmp_path / "numba-cache"  # the working directory of a run whose cache, numba-cache inside it, is empty
    assert _fresh_cache_run("import json; print(json.dumps(fast_encode.kernels_ready()))", empty) is False
