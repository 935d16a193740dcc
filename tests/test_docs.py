"""Every example in README.md and docs/**/*.md runs, as written.

The collector reads each page's fenced code blocks:

* ```python blocks run in one namespace per page, in order; ```bash blocks run with ``bash -euo pipefail``,
  where ``fastsw`` and ``python`` run this checkout's code with this test run's interpreter;
* all blocks of a page run in one fresh temporary directory (the working directory) that starts with
  ``corpus.jsonl`` (the bundled sample corpus, fields ``text`` and ``lang``) and ``corpus.txt`` (the same
  documents, one per line); anything else a block needs, an earlier block of the same page creates, and
  ``$FASTSW_SHARED`` names the shared test data (the corpora in 12 languages);
* a block preceded by the line ``<!-- docs: long -->`` runs only with ``-m docs_long`` (the default run leaves
  it out; ``.ci/run`` runs it), and then the page's other blocks run with it, in order;
* a block preceded by ``<!-- docs: ci -->`` cannot run inside a test (it installs the package, or runs the whole
  test suite): its commands must appear verbatim in ``.ci/run``, which runs them;
* ```text blocks (synopses, output shown to the reader) and data formats are not run; any fence language this
  collector does not know, or a fence without a language, is an error, so no example hides from it.

``python tests/test_docs.py --update-cli`` rewrites the ``--help`` texts in docs/cli.md from the parser.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

import pytest

ROOT = Path(__file__).resolve().parents[1]
CI_SCRIPT = ROOT / ".ci" / "run"
CLI_PAGE = ROOT / "docs" / "cli.md"
README_MAX_LINES = 200

RUN_LANGUAGES = {"python", "bash"}
# shown, never run: synopses and output (text), data and config formats
SHOWN_LANGUAGES = {"text", "json", "jsonl", "yaml", "toml", "csv", "diff", "markdown", "cython", "c"}
MARKERS = {"long", "ci"}
MARKER_LINE = re.compile(r"^<!--\s*docs:\s*(\S+)\s*-->$")
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    language: str
    code: str
    marker: Optional[str]

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def pages() -> List[Path]:
    return [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))


def parse_blocks(page: Path) -> List[Block]:
    """The fenced code blocks of one page, with the marker comment right above each (blank lines allowed)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks = []
    marker = None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = FENCE.match(line)
        if m is None:
            stripped = line.strip()
            mm = MARKER_LINE.match(stripped)
            if mm:
                marker = mm.group(1)
            elif stripped:
                marker = None
            i += 1
            continue
        indent, fence, info = m.group("indent"), m.group("fence"), m.group("info").strip()
        language = info.split()[0].strip("{}.").lower() if info else ""
        body = []
        j = i + 1
        while j < len(lines):
            close = lines[j]
            if close.strip().startswith(fence[0] * len(fence)) and not close.strip().strip(fence[0]):
                break
            body.append(close[len(indent) :] if close.startswith(indent) else close.lstrip())
            j += 1
        else:
            raise ValueError(f"{page.relative_to(ROOT)}:{i + 1}: code fence never closed")
        blocks.append(Block(page, i + 1, language, "\n".join(body) + "\n", marker))
        marker = None
        i = j + 1
    return blocks


def all_blocks() -> List[Block]:
    return [b for page in pages() for b in parse_blocks(page)]


# -- running a page ------------------------------------------------------------------------------------------


def _write_corpus(directory: Path) -> None:
    """``corpus.jsonl`` and ``corpus.txt`` from the sample corpus shipped in the package."""
    from fastsw.corpus.readers import iter_documents
    from fastsw.corpus.sample import SEPARATOR, sample_files

    with (
        open(directory / "corpus.jsonl", "w", encoding="utf-8") as jsonl,
        open(directory / "corpus.txt", "w", encoding="utf-8") as txt,
    ):
        for path in sample_files():
            for text in iter_documents([path], doc_mode="separator", separator=SEPARATOR):
                text = text.strip()
                if not text:
                    continue
                jsonl.write(json.dumps({"text": text, "lang": path.stem}, ensure_ascii=False) + "\n")
                txt.write(" ".join(text.split()) + "\n")


@pytest.fixture(scope="session")
def shims(tmp_path_factory) -> Path:
    """A directory for the front of PATH: ``fastsw`` and ``python`` run this checkout with this interpreter."""
    bin_dir = tmp_path_factory.mktemp("docs-bin")
    for name, command in (
        ("fastsw", f'exec "{sys.executable}" -m fastsw "$@"'),
        ("python", f'exec "{sys.executable}" "$@"'),
    ):
        shim = bin_dir / name
        shim.write_text("#!/bin/sh\n" + command + "\n", encoding="utf-8")
        shim.chmod(0o755)
    return bin_dir


@pytest.fixture
def page_dir(tmp_path, shims, monkeypatch, tmp_path_factory):
    cache = tmp_path_factory.getbasetemp() / "docs-cache"
    cache.mkdir(exist_ok=True)
    _write_corpus(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FASTSW_CACHE_DIR", str(cache))
    # examples that need the shared corpora name them as "$FASTSW_SHARED/corpus/..." (os.environ in Python)
    monkeypatch.setenv("FASTSW_SHARED", str(Path(os.environ.get("FASTSW_SHARED") or ROOT.parent / "shared").resolve()))
    monkeypatch.setenv("PATH", f"{shims}{os.pathsep}{os.environ.get('PATH', '')}")
    paths = [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))
    return tmp_path


def _run_python(block: Block, namespace: dict) -> None:
    # blank lines first, so the traceback's line numbers are the page's
    code = compile("\n" * block.line + block.code, str(block.page), "exec")
    try:
        exec(code, namespace)
    except BaseException as exc:  # noqa: BLE001 - any failure of the example is the test's failure
        if isinstance(exc, KeyboardInterrupt):
            raise
        trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__.tb_next))
        pytest.fail(f"{block.where}: the python block raised {type(exc).__name__}\n{trace}", pytrace=False)


def _run_bash(block: Block, cwd: Path) -> None:
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.code],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    if result.returncode != 0:
        pytest.fail(
            f"{block.where}: the bash block exited with status {result.returncode}\n"
            f"--- block\n{block.code}--- stdout\n{result.stdout}--- stderr\n{result.stderr}",
            pytrace=False,
        )


def run_page(blocks: List[Block], cwd: Path) -> None:
    namespace = {"__name__": "__main__"}
    for block in blocks:
        if block.language == "python":
            _run_python(block, namespace)
        else:
            _run_bash(block, cwd)


def _cases():
    cases = []
    for page in pages():
        runnable = [b for b in parse_blocks(page) if b.language in RUN_LANGUAGES and b.marker != "ci"]
        if not runnable:
            continue
        name = str(page.relative_to(ROOT))
        cases.append(pytest.param([b for b in runnable if b.marker != "long"], id=name))
        if any(b.marker == "long" for b in runnable):
            cases.append(pytest.param(runnable, id=name + "[long]", marks=pytest.mark.docs_long))
    return cases


@pytest.mark.parametrize("blocks", _cases())
def test_page_examples_run(blocks, page_dir):
    run_page(blocks, page_dir)


# -- what the collector refuses and what it cannot run ---------------------------------------------------------


def test_every_fence_has_a_known_language_and_marker():
    problems = []
    for block in all_blocks():
        if block.language not in RUN_LANGUAGES | SHOWN_LANGUAGES:
            shown = block.language or "(none)"
            problems.append(
                f"{block.where}: fence language {shown!r}: write ```python or ```bash for an example "
                f"(it is run), ```text for output or a synopsis"
            )
        if block.marker is not None and block.marker not in MARKERS:
            problems.append(f"{block.where}: unknown marker 'docs: {block.marker}' (known: {sorted(MARKERS)})")
        if block.marker is not None and block.language not in RUN_LANGUAGES:
            problems.append(f"{block.where}: a 'docs: {block.marker}' marker on a block that is never run")
    assert not problems, "\n".join(problems)


def _command_lines(code: str) -> List[str]:
    """A bash block's commands: blank lines, comment lines and trailing ``  # comments`` left out."""
    out = []
    for line in code.splitlines():
        line = re.sub(r"\s+#\s.*$", "", line).strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def test_blocks_that_ci_runs_are_in_the_ci_script():
    ci_lines = {line.strip() for line in CI_SCRIPT.read_text(encoding="utf-8").splitlines()}
    ci_blocks = [b for b in all_blocks() if b.marker == "ci"]
    assert ci_blocks, "README.md's install and test commands are marked '<!-- docs: ci -->'"
    missing = [
        f"{b.where}: {command}"
        for b in ci_blocks
        if b.language == "bash"
        for command in _command_lines(b.code)
        if command not in ci_lines
    ]
    assert not missing, ".ci/run must run these commands verbatim (one per line):\n" + "\n".join(missing)
    assert not [b.where for b in ci_blocks if b.language != "bash"], "only bash blocks can be left to CI"


def test_readme_is_short():
    n = len((ROOT / "README.md").read_text(encoding="utf-8").splitlines())
    assert n <= README_MAX_LINES, f"README.md has {n} lines; keep it to {README_MAX_LINES} and move detail to docs/"


def test_collector_reads_fences_markers_and_line_numbers(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    page = tmp_path / "page.md"
    page.write_text(
        "intro\n\n<!-- docs: long -->\n\n```python\nx = 1\n```\n\ntext\n```bash\necho hi\n```\n"
        "<!-- docs: ci -->\nprose in between\n```sh\nls\n```\n- item\n\n  ```python\n  y = 2\n  ```\n",
        encoding="utf-8",
    )
    blocks = parse_blocks(page)
    assert [(b.line, b.language, b.code, b.marker) for b in blocks] == [
        (5, "python", "x = 1\n", "long"),
        (10, "bash", "echo hi\n", None),
        (15, "sh", "ls\n", None),
        (20, "python", "y = 2\n", None),
    ]
    page.write_text("```python\nx = 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="never closed"):
        parse_blocks(page)


def test_long_blocks_run_only_with_the_docs_long_marker(tmp_path, monkeypatch):
    module = sys.modules[__name__]
    monkeypatch.setattr(module, "ROOT", tmp_path)
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nx = 1\n```\n<!-- docs: long -->\n```bash\nsleep 1\n```\n```python\ny = 2\n```\n"
        "<!-- docs: ci -->\n```bash\npip install fastsw\n```\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(module, "pages", lambda: [page])
    default, long = _cases()
    assert [b.line for b in default.values[0]] == [1, 8] and not default.marks
    assert [b.line for b in long.values[0]] == [1, 5, 8] and [m.name for m in long.marks] == ["docs_long"]
    assert long.id == "page.md[long]"


def test_a_failing_example_names_its_page_and_line(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nx = 1\n```\n\n```python\nassert x == 1\nassert x == 2\n```\n"
        "```bash\ntrue\nfalse\necho never\n```\n",
        encoding="utf-8",
    )
    python_blocks = parse_blocks(page)[:2]
    with pytest.raises(pytest.fail.Exception) as failed:
        run_page(python_blocks, tmp_path)
    assert "page.md:5: the python block raised AssertionError" in str(failed.value)
    assert "line 7" in str(failed.value) and "assert x == 2" in str(failed.value)
    with pytest.raises(pytest.fail.Exception) as failed:
        run_page(parse_blocks(page)[2:], tmp_path)
    assert "page.md:9: the bash block exited with status 1" in str(failed.value)


def test_bash_blocks_run_this_checkout(page_dir):
    result = subprocess.run(
        [
            "bash",
            "-c",
            'test -d "$FASTSW_SHARED/corpus" && fastsw --version && python -c "import fastsw; print(fastsw.__file__)"',
        ],
        cwd=page_dir,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    import fastsw

    version, location = result.stdout.split("\n")[:2]
    assert version == f"fastsw {fastsw.__version__}"
    assert Path(location).resolve() == (ROOT / "fastsw" / "__init__.py").resolve()
    lines = (page_dir / "corpus.txt").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in (page_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(lines) == len(records) > 100 and {r["lang"] for r in records} >= {"en", "de", "zh"}
    assert all(line and "\n" not in line for line in lines)


def test_every_docs_page_is_in_the_site_navigation():
    nav = re.findall(r"^\s*-\s*(?:[^:\n]+:\s*)?(\S+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M)
    files = sorted(str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md"))
    assert len(nav) == len(set(nav)), "a page is listed twice in mkdocs.yml"
    assert sorted(nav) == files, "mkdocs.yml's nav and the pages in docs/ differ"


def test_api_page_documents_everything_fastsw_exports():
    import fastsw

    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^::: fastsw\.(\w+)\s*$", page, re.M))
    missing = sorted(set(fastsw.__all__) - documented - {"__version__"})
    assert not missing, f"docs/api.md has no '::: fastsw.NAME' entry for {missing}"


def test_api_docstrings_become_markdown():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from griffe_docstrings import markdown_docstring
    finally:
        sys.path.remove(str(ROOT / "tools"))
    text = (
        "See :class:`~fastsw.corpus.counting.Counts` and :func:`fastsw.train`.\n\n"
        "* an item\n\n    >>> tok.encode_with_offsets(text)[1][:1]\n    [0]\n\n"
        "Args:\n    x: a value\n\n        >>> x\n\nAfter.\n```text\n>>> kept\n```\n"
    )
    assert markdown_docstring(text).splitlines() == [
        "See `Counts` and `fastsw.train`.",
        "",
        "* an item",
        "",
        "```pycon",
        ">>> tok.encode_with_offsets(text)[1][:1]",
        "[0]",
        "```",
        "",
        "Args:",
        "    x: a value",
        "",
        "        ```pycon",
        "        >>> x",
        "        ```",
        "",
        "After.",
        "```text",
        ">>> kept",
        "```",
    ]


# -- the CLI page shows the parser's current help ----------------------------------------------------------------

HELP_BLOCK = re.compile(r"(<!-- help:(?: (?P<command>[a-z-]+))? -->\n```text\n)(?P<text>.*?)(```)", re.S)
HELP_COLUMNS = "100"


def current_help(command: str) -> str:
    """``fastsw [COMMAND] --help`` as the parser prints it, 100 columns wide."""
    from fastsw.cli import build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_COLUMNS
    try:
        parser = build_parser()
        if command:
            parser = _subcommands(parser)[command]
        return parser.format_help()
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def render_cli_page(page: str) -> str:
    return HELP_BLOCK.sub(lambda m: m.group(1) + current_help(m.group("command") or "") + m.group(4), page)


def _subcommands(parser) -> dict:
    return next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices


def _help_parts(parser) -> List[str]:
    """What a --help text must show, however the Python version lays it out: the description, every option
    string and every help string."""
    formatter = parser._get_formatter()
    parts = [parser.description or ""]
    for action in parser._actions:
        parts += list(action.option_strings)
        if action.help and action.help != "==SUPPRESS==":
            parts.append(formatter._expand_help(action))
    return [p for p in parts if p]


def test_cli_page_shows_the_current_help_of_every_command():
    from fastsw.cli import build_parser

    page = CLI_PAGE.read_text(encoding="utf-8")
    shown = {m.group("command") or "": m.group("text") for m in HELP_BLOCK.finditer(page)}
    parser = build_parser()
    commands = _subcommands(parser)
    assert sorted(shown) == sorted([""] + list(commands)), "docs/cli.md shows the help of 'fastsw' and every command"
    squash = lambda text: "".join(text.split())  # noqa: E731 - line wrapping depends on the Python version
    stale = [
        f"fastsw {command}: {part!r}"
        for command, text in shown.items()
        for part in _help_parts(commands[command] if command else parser)
        if squash(part) not in squash(text)
    ]
    assert not stale, (
        "docs/cli.md shows an old --help text: run 'python tests/test_docs.py --update-cli'\n"
        "missing: " + "\n".join(stale)
    )


if __name__ == "__main__":
    if sys.argv[1:] != ["--update-cli"]:
        sys.exit("usage: python tests/test_docs.py --update-cli")
    sys.path.insert(0, str(ROOT))
    CLI_PAGE.write_text(render_cli_page(CLI_PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"updated {CLI_PAGE.relative_to(ROOT)}")
