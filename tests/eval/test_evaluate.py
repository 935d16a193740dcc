"""Tests for fastsw.eval.evaluate and ``fastsw eval``: table values worked by hand on tiny models, the --json structure,
parallel vs non-parallel Gini, the --report files, bad inputs; and a real-data run on the parallel XQuAD test set."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

import fastsw
from fastsw.eval.evaluate import MATPLOTLIB_MISSING, evaluate, markdown_table, to_json, write_report
from fastsw.corpus.sample import sample_documents

from conftest import assert_error, run, shared_path, write_jsonl

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """Two hand-made models and a parallel two-language text.

    merged: the 243-byte paper alphabet + one merge a+b (id 243); bytes: the alphabet alone.
    en = ["ab ab", "ab"], de = ["é ab", "b"] (é is the two bytes C3 A9), as .jsonl files.
    """
    d = tmp_path_factory.mktemp("eval_toy")
    merged = fastsw.train(["ab ab"], algo="bpe", vocab_size=244)
    assert [(m.left, m.right) for m in merged.merges] == [(ord("a"), ord("b"))]
    plain = fastsw.train(["ab ab"], algo="bpe", vocab_size=243)
    assert not plain.merges
    merged.save(d / "merged.json")
    plain.save(d / "bytes.json")
    return {
        "dir": d,
        "merged": d / "merged.json",
        "bytes": d / "bytes.json",
        "en": write_jsonl(d / "en.jsonl", ["ab ab", "ab"]),
        "de": write_jsonl(d / "de.jsonl", ["é ab", "b"]),
        "de1": write_jsonl(d / "de1.jsonl", ["é ab"]),
        "fr": write_jsonl(d / "fr.jsonl", ["b ab", "ab"]),
    }


def test_docstring_examples():
    # the examples in fastsw.eval.evaluate's docstrings must stay true
    import doctest

    import fastsw.eval.evaluate

    result = doctest.testmod(fastsw.eval.evaluate, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 5 and result.failed == 0


# ---- values worked by hand ------------------------------------------------------------------------------------------


def test_hand_worked_values(toy):
    result = evaluate([toy["merged"], toy["bytes"]], {"en": toy["en"], "de": toy["de"]})
    merged, plain = result["models"]
    assert merged["model"] == str(toy["merged"]) and plain["model"] == str(toy["bytes"])
    assert result["parallel"] is True and result["reference_language"] == "en"
    en, de = merged["languages"]["en"], merged["languages"]["de"]
    # en under merged: "ab ab" -> [ab][ ][ab], "ab" -> [ab]: 4 tokens for 7 bytes = 7 characters, 2 documents
    assert (en["documents"], en["bytes"], en["characters"], en["tokens"]) == (2, 7, 7, 4)
    assert (en["bytes_per_token"], en["chars_per_token"], en["documents_per_token"]) == (1.75, 1.75, 0.5)
    # token counts ab: 3, " ": 1 -> p = (3/4, 1/4); H_2.5 = log(p1^2.5 + p2^2.5) / (1 - 2.5); |V| = 244
    assert en["renyi_efficiency"] == pytest.approx(math.log(0.75**2.5 + 0.25**2.5) / -1.5 / math.log(244))
    # de under merged: "é ab" -> [C3][A9][ ][ab], "b" -> [b]: 5 tokens, 6 bytes, 5 characters
    assert (de["documents"], de["bytes"], de["characters"], de["tokens"]) == (2, 6, 5, 5)
    assert (de["bytes_per_token"], de["chars_per_token"], de["documents_per_token"]) == (1.2, 1.0, 0.4)
    # five tokens used once each: uniform, so H = log 5 for every alpha
    assert de["renyi_efficiency"] == pytest.approx(math.log(5) / math.log(244))
    # parallel: Gini of token counts (4, 5) = (|4-5| + |5-4|) / (2 * 2^2 * 4.5) = 2 / 36; de/en = 5/4
    assert merged["gini_of"] == "tokens" and merged["gini"] == pytest.approx(1 / 18)
    assert (en["token_ratio"], de["token_ratio"]) == (1.0, 1.25)
    # bytes only: one token per byte, so en 7 tokens and de 6: Gini 2 / (2 * 4 * 6.5) = 1/26; de/en = 6/7
    assert [plain["languages"][lang]["tokens"] for lang in ("en", "de")] == [7, 6]
    assert plain["gini"] == pytest.approx(1 / 26)
    assert plain["languages"]["de"]["token_ratio"] == pytest.approx(6 / 7)
    assert (merged["algo"], merged["vocab_size"], merged["supermerges"], merged["supermerge_counts"]) == (
        "bpe",
        244,
        0,
        [],
    )


def test_markdown_table_rows(toy, capsys):
    code, out, err = run(
        capsys, "eval", "-m", toy["merged"], "--text", f"en={toy['en']}", f"de={toy['de']}", "--no-progress"
    )
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == (
        "| model | language | docs | bytes | chars | tokens | bytes/token | chars/token | "
        "docs/token | Rényi eff. | tokens vs en |"
    )
    renyi_en = math.log(0.75**2.5 + 0.25**2.5) / -1.5 / math.log(244)
    renyi_de = math.log(5) / math.log(244)
    m = toy["merged"]
    assert lines[2] == f"| {m} | en | 2 | 7 | 7 | 4 | 1.7500 | 1.7500 | 0.5000 | {renyi_en:.4f} | 1.0000 |"
    assert lines[3] == f"| {m} | de | 2 | 6 | 5 | 5 | 1.2000 | 1.0000 | 0.4000 | {renyi_de:.4f} | 1.2500 |"
    assert lines[5] == "| model | Gini of token counts (parallel texts) |"
    assert lines[7] == f"| {m} | 0.0556 |"  # 1/18
    assert out == markdown_table(evaluate([toy["merged"]], {"en": toy["en"], "de": toy["de"]}))


def test_one_token_text_shows_zero_efficiency(toy):
    # "ab" is one token: H_2.5 = log(1) / (1 - 2.5) = -0.0, shown as 0.0000 (not -0.0000)
    row = markdown_table(evaluate({"m": toy["merged"]}, {"en": ["ab"]})).splitlines()[2]
    assert row == "| m | en | 1 | 2 | 2 | 1 | 2.0000 | 2.0000 | 1.0000 | 0.0000 | 1.0000 |"


def test_not_parallel_uses_tokens_per_byte(toy, capsys):
    # de1 has one document, en two: not parallel. merged: en 4 tokens / 7 bytes, de1 "é ab" 4 tokens / 5 bytes;
    # Gini of (4/7, 4/5) = 2 (4/5 - 4/7) / (2 * 2 * (4/7 + 4/5)) = (16/35) / (192/35) = 1/12; de/en = 7/5
    code, out, err = run(
        capsys, "eval", "-m", toy["merged"], "--text", f"en={toy['en']}", f"de={toy['de1']}", "--json", "--no-progress"
    )
    assert code == 0, err
    entry = json.loads(out)["models"][0]
    assert entry["gini_of"] == "tokens_per_byte"
    assert entry["gini"] == pytest.approx(1 / 12)
    assert entry["languages"]["de"]["token_ratio"] == pytest.approx(1.4)
    code, out, err = run(
        capsys, "eval", "-m", toy["merged"], "--text", f"en={toy['en']}", f"de={toy['de1']}", "--no-progress"
    )
    assert "| model | Gini of tokens per byte (texts not parallel) |" in out
    assert "tokens/byte vs en |" in out.splitlines()[0]


def test_reference_language_without_en(toy):
    # no en text: ratios are to the first language given (fr: "b ab" -> [b][ ][ab], "ab" -> [ab]: 4 tokens)
    result = evaluate({"m": toy["merged"]}, {"fr": toy["fr"], "de": toy["de"]})
    assert result["reference_language"] == "fr"
    assert result["models"][0]["languages"]["de"]["token_ratio"] == 1.25
    assert "tokens vs fr" in markdown_table(result).splitlines()[0]


def test_in_memory_documents_and_tokenizers(toy):
    tok = fastsw.load(toy["merged"])
    from_files = evaluate({"m": toy["merged"]}, {"en": toy["en"], "de": toy["de"]})
    in_memory = evaluate({"m": tok}, {"en": ["ab ab", "ab"], "de": ["é ab", "b"]})
    assert in_memory == from_files
    assert evaluate([tok], {"en": ["ab"]})["models"][0]["model"] == "model 0"


# ---- --json, progress and --report ----------------------------------------------------------------------------------


def test_json_structure_and_order(toy, capsys):
    code, out, err = run(
        capsys,
        "eval",
        "-m",
        toy["bytes"],
        toy["merged"],
        "--text",
        f"de={toy['de']}",
        "--text",
        f"en={toy['en']}",
        "--json",
        "--no-progress",
    )
    assert code == 0, err
    assert err == ""
    data = json.loads(out)
    assert out.count("\n") == 1
    assert [e["model"] for e in data["models"]] == [str(toy["bytes"]), str(toy["merged"])]  # order given
    for entry in data["models"]:
        assert {"model", "languages", "gini", "gini_of"} <= set(entry)
        assert list(entry["languages"]) == ["de", "en"]  # order given
        for metrics in entry["languages"].values():
            assert {
                "documents",
                "bytes",
                "characters",
                "tokens",
                "bytes_per_token",
                "chars_per_token",
                "documents_per_token",
                "renyi_efficiency",
                "token_ratio",
            } <= set(metrics)
    assert data["models"][1]["languages"]["en"]["tokens"] == 4
    assert data == evaluate([toy["bytes"], toy["merged"]], {"de": toy["de"], "en": toy["en"]})


def test_progress_bar_on_stderr(toy, capsys):
    code, out, err = run(
        capsys, "eval", "-m", toy["merged"], toy["bytes"], "--text", f"en={toy['en']}", f"de={toy['de']}"
    )
    assert code == 0, err
    assert "evaluating" in err and "4/4" in err


@pytest.fixture(scope="module")
def superword_model(tmp_path_factory):
    tok = fastsw.train(["the cat the cat the cat"], algo="superbpe", vocab_size=249, supermerges=1)
    assert tok.n_super == 1
    path = tmp_path_factory.mktemp("eval_super") / "super.json"
    tok.save(path)
    return path, tok


def test_report_files(toy, superword_model, tmp_path, capsys):
    path, tok = superword_model
    report = tmp_path / "report"
    argv = ["eval", "-m", toy["merged"], path, "--text", f"en={toy['en']}", f"de={toy['de']}", "--no-progress"]
    code, out, err = run(capsys, *argv, "--report", report)
    assert code == 0, err
    assert sorted(p.name for p in report.iterdir()) == [
        "compression.png",
        "gini.png",
        "report.json",
        "report.md",
        "supermerges.png",
        "token_ratio.png",
        "tokens.html",
    ]
    for png in report.glob("*.png"):
        assert png.read_bytes().startswith(PNG_SIGNATURE), png
    code, json_out, _ = run(capsys, *argv, "--json")
    assert json.loads((report / "report.json").read_text(encoding="utf-8")) == json.loads(json_out)
    md = (report / "report.md").read_text(encoding="utf-8")
    assert out in md and "![supermerges](supermerges.png)" in md
    # the curve of seed 000 Figure 10: the supermerges' training counts in merge order
    entry = json.loads(json_out)["models"][1]
    assert entry["supermerges"] == 1
    assert entry["supermerge_counts"] == [[1, [m.count for m in tok.merges if m.super][0]]]


def test_report_without_supermerges_has_no_curve(toy, tmp_path):
    written = write_report(evaluate([toy["merged"]], {"en": toy["en"]}), tmp_path / "r")
    assert sorted(Path(p).name for p in written) == [
        "compression.png",
        "gini.png",
        "report.json",
        "report.md",
        "token_ratio.png",
    ]
    assert json.loads((tmp_path / "r" / "report.json").read_text()) == json.loads(
        to_json(evaluate([toy["merged"]], {"en": toy["en"]}))
    )


def test_report_curve_is_thinned():
    from fastsw.eval.evaluate import CURVE_POINTS, _curve

    class Fake:
        merges = [fastsw.Merge(id=300 + i, left=1, right=2, count=5000 - i, super=True) for i in range(2000)]

    curve = _curve(Fake())
    assert len(curve) == CURVE_POINTS
    assert curve[0] == [1, 5000] and curve[-1] == [2000, 3001]


# ---- bad input: one error line, exit 2, nothing written -------------------------------------------------------------


def test_bad_inputs(toy, tmp_path, capsys):
    report = tmp_path / "report"
    m, en = toy["merged"], toy["en"]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    blank = write_jsonl(tmp_path / "blank.jsonl", ["", ""])
    broken = tmp_path / "broken.json"
    broken.write_text("{not a model")
    cases = [
        (["-m", m, "--text", f"en={tmp_path / 'missing.jsonl'}"], ["missing.jsonl", "does not exist"]),
        (["-m", m, "--text", f"en={tmp_path}"], [str(tmp_path), "directory"]),
        (["-m", m, "--text", str(en)], ["LANG=PATH", str(en)]),
        (["-m", m, "--text", "=x.jsonl"], ["LANG=PATH"]),
        (["-m", m, "--text", f"en={en}", f"en={toy['de']}"], ["en=", "twice"]),
        (["-m", tmp_path / "nomodel.json", "--text", f"en={en}"], ["nomodel.json"]),
        (["-m", broken, "--text", f"en={en}"], ["broken.json"]),
        (["-m", m, "--text", f"en={en}", f"de={empty}"], [f"de={empty}", "no documents"]),
        (["-m", m, "--text", f"en={en}", f"de={blank}"], [f"de={blank}", "empty documents"]),
        (["-m", m, "--text", f"en={en}", "--alpha", "0"], ["--alpha"]),
    ]
    for argv, words in cases:
        code, out, err = run(capsys, "eval", *argv, "--report", report, "--no-progress")
        assert_error(code, err, *words)
        assert out == ""
        assert not report.exists(), argv
    report.write_text("a file")
    code, out, err = run(capsys, "eval", "-m", m, "--text", f"en={en}", "--report", report)
    assert_error(code, err, str(report), "not a directory")
    assert report.read_text() == "a file"


def test_report_needs_matplotlib(toy, tmp_path, capsys, monkeypatch):
    for name in [n for n in sys.modules if n == "matplotlib" or n.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    report = tmp_path / "report"
    code, out, err = run(capsys, "eval", "-m", toy["merged"], "--text", f"en={toy['en']}", "--report", report)
    assert_error(code, err, MATPLOTLIB_MISSING)
    assert not report.exists()
    with pytest.raises(ImportError, match="pip install matplotlib"):
        write_report(evaluate([toy["merged"]], {"en": toy["en"]}), report)
    assert not report.exists()


def test_api_bad_inputs(toy):
    with pytest.raises(ValueError, match="non-empty mapping"):
        evaluate([toy["merged"]], {})
    with pytest.raises(ValueError, match="models is empty"):
        evaluate([], {"en": toy["en"]})
    with pytest.raises(TypeError, match="model 'x' is a int"):
        evaluate({"x": 3}, {"en": toy["en"]})
    with pytest.raises(ValueError, match="text de has no documents"):
        evaluate([toy["merged"]], {"de": []})


# ---- real data ------------------------------------------------------------------------------------------------------


def test_real_parallel_text():
    """A model trained on the bundled sample, on the parallel XQuAD test texts: parallel, and the JSON agrees with
    fastsw.metrics on each language."""
    parallel = shared_path("corpus/parallel")
    tok = fastsw.train(sample_documents(), algo="bpe", vocab_size=1000)
    texts = {lang: parallel / f"xquad.test.{lang}.jsonl" for lang in ("en", "de", "ru", "zh")}
    result = evaluate({"sample-bpe": tok}, texts)
    entry = result["models"][0]
    assert result["parallel"] and entry["gini_of"] == "tokens"
    for lang, path in texts.items():
        docs = list(fastsw.iter_documents(path))
        expected = fastsw.eval.metrics.text_metrics(tok, docs)
        assert {k: entry["languages"][lang][k] for k in expected} == expected
    tokens = {lang: m["tokens"] for lang, m in entry["languages"].items()}
    assert entry["gini"] == fastsw.eval.metrics.gini(tokens)
    assert entry["languages"]["de"]["token_ratio"] == tokens["de"] / tokens["en"]


def test_report_is_written_whole_or_not_at_all(toy, tmp_path, capsys):
    """A chart that cannot be written (its name is taken by a directory) leaves nothing behind: no report.md
    linking missing charts, no report.json, no temporary folder; an earlier report in the directory is kept."""
    report = tmp_path / "report"
    report.mkdir()
    (report / "report.md").write_text("the earlier report")
    (report / "gini.png").mkdir()
    argv = ["eval", "-m", toy["merged"], "--text", f"en={toy['en']}", "--no-progress", "--report", report]
    code, out, err = run(capsys, *argv)
    assert_error(code, err, "gini.png", "directory")
    assert sorted(p.name for p in report.iterdir()) == ["gini.png", "report.md"]
    assert (report / "report.md").read_text() == "the earlier report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]


def test_report_write_failure_leaves_no_folder(toy, tmp_path, monkeypatch):
    """A real failing write in the middle (the disk full at the third file): the new report folder is not there."""
    import errno
    from fastsw import files

    real = files.os.fsync
    calls = []

    def fsync(fd):
        calls.append(fd)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd)

    monkeypatch.setattr(files.os, "fsync", fsync)
    with pytest.raises(OSError, match="no space left"):
        write_report(evaluate([toy["merged"]], {"en": toy["en"]}), tmp_path / "r")
    assert list(tmp_path.iterdir()) == []
