"""bench/perfpage.py renders the performance page from the whole-run scripts' JSON (nothing is measured here)."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.fixture(scope="module")
def perfpage():
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location("perfpage_under_test", BENCH / "perfpage.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(BENCH))


def write_results(folder: Path, report):
    """One JSON per part of the suite, as the scripts write them with --json."""
    folder.mkdir()
    train = report.table(
        "Training: toy",
        ["trainer", "wall s", "peak RSS MB", "wall / HF"],
        [["fastsw-bpe-paper", 1.5, 210, 0.75], ["hf", 2.0, 95, 1.0]],
        "notes of the run",
    )
    scale = report.table(
        "Scale: toy",
        [
            "size",
            "text",
            "trainer",
            "wall s",
            "cpu s",
            "peak RSS MB",
            "wall / fastsw BPE",
            "RSS / fastsw BPE",
            "failed",
        ],
        [
            ["3MB", "real", "fastsw-bpe", 1.0, 1.0, 200, 1.0, 1.0, ""],
            ["10MB", "real", "fastsw-bpe", 2.0, 2.0, 300, 1.0, 1.0, ""],
            ["10MB", "real", "hf", None, None, None, None, None, "did not fit"],
        ],
    )
    languages = [
        report.table(
            "Encoding: toy",
            ["language", "fastsw MB/s", "tiktoken MB/s", "HF MB/s"],
            [["en", 40.0, 17.5, 2.0], ["zh", 20.0, 8.0, 3.0]],
        )
    ]
    tiktoken = [
        report.table(
            "tiktoken's o200k_base: one thread", ["input", "fastsw MB/s", "tiktoken MB/s"], [["a * 10**6", 7.3, 0.2]]
        )
    ]
    coldstart = report.table(
        "Cold start: toy",
        ["run", "wall s", "CPU s"],
        [["train, empty cache", 12.5, 11.0], ["train, warm cache", 2.5, 2.0]],
    )
    columns = [
        "corpus",
        "pipeline",
        "MB/s",
        "M tokens/s",
        "CPU s",
        "M tokens per CPU s",
        "peak RSS (MB)",
        "vs fastest peer (wall)",
        "vs fastest peer (CPU)",
    ]
    shard = [
        report.table(
            f"Shards: toy ({vocab})",
            columns,
            [
                ["en", "fastsw shard (bin)", 30.0, 7.0, 0.5, 14.0, 300, 2.5, 3.0],
                ["en", "llm.c Pool + tiktoken", 12.0, 2.8, 1.5, 4.7, 350, 1.0, 1.0],
            ],
        )
        for vocab in ("o200k_base", "fastsw BPE 32k")
    ]
    shard.append(
        report.table(
            "Superword: toy", columns[:7], [["mix", "fastsw shard (bin), superbpe8k", 20.0, 5.0, 0.4, 12.5, 250]]
        )
    )
    short = [
        report.table(
            "Short texts, o200k_base: toy",
            ["texts", "encoder", "method", "us per call", "x tiktoken's time"],
            [["distinct", "fastsw", "encode_ordinary", 5.0, 0.75]],
        ),
        report.table("Start-up, o200k_base: toy", ["step", "seconds"], [["first ids: fastsw", 0.4]]),
    ]
    script = report.table(
        "SCRIPT v3: toy",
        ["corpus", "algo", "pre-tokenizer", "encode MB/s", "encode speed / default"],
        [["en 2.0 MB", "bpe", "script", 30.0, 1.0], ["en 2.0 MB", "bpe", "script-v3", 18.0, 0.6]],
    )
    for name, data in (
        ("train", train),
        ("scale", scale),
        ("languages", languages),
        ("tiktoken", tiktoken),
        ("short", short),
        ("shard", shard),
        ("coldstart", coldstart),
        ("script", script),
    ):
        report.write_json(folder / f"{name}.json", data)


def test_the_page_has_every_table_the_machine_the_versions_and_the_plots(perfpage, tmp_path, monkeypatch):
    import _report

    write_results(tmp_path / "results", _report)
    monkeypatch.setattr(perfpage, "PACKAGES", ["numpy", "no-such-peer-installed"])
    out = tmp_path / "docs" / "performance.md"
    run = dict(perfpage.describe_run(), seconds=125.0)
    perfpage.render([s[0] for s in perfpage.SUITE], True, tmp_path / "results", out, tmp_path / "docs" / "images", run)
    page = out.read_text(encoding="utf-8")
    assert "`python bench/perfpage.py --quick`" in page and "A `--quick` run" in page
    assert "the suite took 2 minutes" in page
    for key in ("CPU", "logical cores", "memory"):
        assert f"| {key} |" in page
    assert "| no-such-peer-installed | not installed: not measured |" in page
    assert "| numpy | " in page
    assert "| fastsw-bpe-paper | 1.50 | 210 | 0.75 |" in page
    assert "| 10MB | real | hf | – | – | – | – | – | did not fit |" in page
    assert "| a \\* 10\\*\\*6 | 7.30 | 0.20 |" in page  # markdown in a cell is escaped
    assert "notes of the run" in page
    assert "## Cold start" in page and "| train, empty cache | 12.50 | 11.00 |" in page  # a table, no plot
    assert "| en | fastsw shard (bin) | 30.00 | 7.00 | 0.50 | 14.00 | 300 | 2.50 | 3.00 |" in page
    assert "## Short texts and start-up" in page and "| distinct | fastsw | encode\\_ordinary | 5.00 | 0.75 |" in page
    assert page.count("```text\npython ") == 11  # each table's command, in a block the docs tests do not run
    assert "## SCRIPT v3 models" in page and "| en 2.0 MB | bpe | script-v3 | 18.00 | 0.60 |" in page
    for name in ("train", "scale", "languages", "tiktoken", "shard"):
        image = tmp_path / "docs" / "images" / f"perf-{name}-quick.png"
        assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"(images/perf-{name}-quick.png)" in page
    assert "```bash" not in page and "```python" not in page


def test_only_one_part_replaces_its_section_and_keeps_the_others(perfpage, tmp_path):
    import _report

    write_results(tmp_path / "results", _report)
    out, images = tmp_path / "docs" / "performance.md", tmp_path / "docs" / "images"
    run = dict(perfpage.describe_run(), seconds=125.0)
    everything_but_shard = [s[0] for s in perfpage.SUITE if s[0] != "shard"]
    perfpage.render(everything_but_shard, True, tmp_path / "results", out, images, run)
    before = out.read_text(encoding="utf-8")
    assert "## Preparing training data" not in before
    perfpage.render(["shard"], True, tmp_path / "results", out, images, run, partial=True)  # added at the end
    added = out.read_text(encoding="utf-8")
    assert added.startswith(before.rstrip("\n")) and "## Preparing training data" in added
    assert "by `python bench/perfpage.py --quick --only shard`, apart from the rest of this page" in added
    table = json.loads((tmp_path / "results" / "shard.json").read_text())
    table[0]["rows"][0][2] = 99.0  # a new run of the part
    (tmp_path / "results" / "shard.json").write_text(json.dumps(table))
    perfpage.render(["shard"], True, tmp_path / "results", out, images, run, partial=True)  # replaced
    again = out.read_text(encoding="utf-8")
    assert again.count("## Preparing training data") == 1 and "| en | fastsw shard (bin) | 99.00 |" in again
    assert again.startswith(before.rstrip("\n")) and "| 30.00 | 7.00 | 0.50 |" not in again.split("(wall)")[1]
    perfpage.render(["train"], True, tmp_path / "results", out, images, run, partial=True)  # a middle section
    middle = out.read_text(encoding="utf-8")
    assert middle.count("## Training\n") == 1 and middle.index("## Training\n") < middle.index("## Training at")
    assert middle.split("## Training at", 1)[1] == again.split("## Training at", 1)[1]


def test_a_missing_result_is_one_clear_error_and_no_page(perfpage, tmp_path):
    (tmp_path / "results").mkdir()
    out = tmp_path / "performance.md"
    with pytest.raises(SystemExit, match="train.json is missing"):
        perfpage.render(["train"], True, tmp_path / "results", out, tmp_path / "images", perfpage.describe_run())
    assert not out.exists()


def test_a_table_row_must_match_its_columns():
    sys.path.insert(0, str(BENCH))
    try:
        import _report
    finally:
        sys.path.remove(str(BENCH))
    with pytest.raises(ValueError, match="a row has 1 cells for 2 columns"):
        _report.table("t", ["a", "b"], [[1]])
    t = _report.table("t", ["a", "b"], [[1, None]], "n")
    assert set(t) == {"title", "command", "columns", "rows", "notes"}
    assert json.loads(json.dumps(t)) == t
