"""Seeing the tokens (fastsw.eval.show): the spans every view is made of, the terminal view (through a real
pseudo-terminal), Tokenizer.show, the comparison page (opened in a real headless Chromium) and the CLI's errors."""

import os
import pty
import re
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import fastsw
from fastsw.eval.show import (
    BYTES,
    ATOM,
    TokenView,
    display_width,
    page_html,
    render_terminal,
    sample_documents,
    token_spans,
    use_color,
    Sample,
)

from conftest import assert_error, run, write_jsonl

ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;]*m")
ADVERSARIAL = [
    "The Cat sat. 日本語😀 مرحبا بالعالم\n\tx<|endoftext|>y",
    "ÉCOLE  école\r\n\x00\x7f e\u0301 👩\u200d👩\u200d👧 ﷺ 한국어 ",
    "",
    "<|endoftext|><|endoftext|>",
    "   \n\n",
]


def _lang_docs(langs=("en", "zh", "ar", "ja"), chars=20000):
    from fastsw.corpus.readers import iter_documents
    from fastsw.corpus.sample import SEPARATOR, sample_files

    docs = {}
    for f in sample_files():
        if f.stem in langs:
            docs[f.stem], n = [], 0
            for d in iter_documents(f, doc_mode="separator", separator=SEPARATOR):
                docs[f.stem].append(d)
                n += len(d)
                if n > chars:
                    break
    return docs


@pytest.fixture(scope="module")
def lang_docs():
    return _lang_docs()


@pytest.fixture(scope="module")
def models(lang_docs, tmp_path_factory):
    """A SuperBPE model (with a special token), a boundary[w,p,d]+caps model and a SCRIPT one with markers,
    trained on real text of the sample corpus, and the directory where they are saved."""
    docs = [d for v in lang_docs.values() for d in v]
    out = {
        "super": fastsw.train(docs, algo="superbpe", vocab_size=700, supermerges=200, special_tokens=["<|endoftext|>"]),
        "marker": fastsw.train(docs, algo="bpe", vocab_size=600, pretokenizer="boundary[w,p,d]+caps"),
        "script": fastsw.train(docs[:20], algo="bpe", vocab_size=2100, pretokenizer="script-v3+boundary[w]+caps"),
    }
    d = tmp_path_factory.mktemp("show-models")
    for name, tok in out.items():
        tok.save(d / f"{name}.json")
    return out, d


def _texts(lang_docs):
    return [v[1][:1500] for v in lang_docs.values()] + ADVERSARIAL


# ---- the spans ----------------------------------------------------------------------------------------------------


def test_spans_cover_the_text_exactly(models, lang_docs):
    for name, tok in models[0].items():
        for text in _texts(lang_docs):
            spans = token_spans(tok, text)
            assert [s.id for s in spans] == tok.encode(text, allowed_special="all"), name
            assert "".join(s.text for s in spans) == text, (name, text)
            assert all(a.end == b.start for a, b in zip(spans, spans[1:])), name
            assert tok.decode([s.id for s in spans]) == text
            for s in spans:  # the pieces are what the token is: text, atoms and hex of split characters
                assert s.bytes == (tok.decode_single_token_bytes(s.id))
                assert s.shown


def test_starts_without_offsets_follow_the_rule(models, lang_docs):
    """SCRIPT with markers has no encode_with_offsets: the pieces' starts equal decoding every prefix, and for the
    marker model they equal its encode_with_offsets."""
    from fastsw.eval.show import _starts, _starts_exact

    for text in [t[:400] for t in _texts(lang_docs)]:
        tok = models[0]["script"]
        ids = tok.encode(text, allowed_special="all", disallowed_special=())
        assert _starts(tok, text, ids) == _starts_exact(tok, ids), text
        tok = models[0]["marker"]
        ids, offsets = tok.encode_with_offsets(text, allowed_special="all", disallowed_special=())
        assert _starts(tok, text, ids) == _starts_exact(tok, ids) == offsets, text


def test_supermerges_flagged(models, lang_docs):
    tok = models[0]["super"]
    n_alpha = len(tok.alphabet)
    spans = [s for d in lang_docs["en"][:5] for s in token_spans(tok, d)]
    sup = [s for s in spans if s.supermerge]
    assert sup, "a SuperBPE model shows superword tokens on English"
    for s in spans:
        merge = tok.merges[s.id - n_alpha] if n_alpha <= s.id < tok.vocab_size else None
        assert s.supermerge == bool(merge and merge.super)
        assert s.rank == (None if merge is None else s.id - n_alpha)
        assert s.count == (None if merge is None else merge.count)
    view = tok.show(lang_docs["en"][:5])
    plain = str(view)
    assert plain.count("⟪") == len(sup) and "\x1b" not in plain
    coloured = view.to_terminal(color=True)
    assert coloured.count("\x1b[4;") == len(sup)  # underlined, in their own colour family
    assert view.summary()["supermerges"] == len(sup)


def test_markers_and_caps_codes_visible(models):
    tok = models[0]["marker"]
    spans = token_spans(tok, "The CAT sat, 42 times.")
    shown = "".join(s.shown for s in spans)
    assert "¦" in shown and "↑" in shown and "⇑" in shown
    assert all(s.marker == any(k == ATOM for k, _ in s.pieces) for s in spans)
    assert any(s.marker and s.text == "" for s in spans)  # a caps code + marker alone covers no character
    coloured = render_terminal(spans, color=True)
    assert "\x1b[1;38;5;160m↑" in coloured or "\x1b[1;38;5;160m↑¦" in coloured
    html_ = tok.show("The CAT").to_html()
    assert "<span class='a'>↑¦</span>" in html_ or "<span class='a'>↑</span>" in html_


def test_script_atoms_shown(models):
    tok = models[0]["script"]
    spans = token_spans(tok, "Hi 日本 مرحبا")
    assert "".join(s.text for s in spans) == "Hi 日本 مرحبا"
    assert any(k == ATOM and s.shown.startswith("<") for s in spans for k, _ in s.pieces)  # lone SCRIPT atoms


def test_invalid_utf8_pieces_and_special_tokens_shown(models):
    tok = models[0]["super"]
    text = "a😀b<|endoftext|>c"
    spans = token_spans(tok, text)
    pieces = [s for s in spans if s.invalid_utf8]
    assert pieces, "the small model splits the emoji into byte tokens"
    hexes = "".join(p for s in pieces for k, p in s.pieces if k == BYTES).replace(" ", "")
    assert hexes == "😀".encode("utf-8").hex().upper()
    special = [s for s in spans if s.special]
    assert [s.id for s in special] == [tok.eot_token] and special[0].text == "<|endoftext|>"
    plain = render_terminal(spans)
    assert "⟦<|endoftext|>⟧" in plain and "‹F0" in plain
    assert not any(s.special for s in token_spans(tok, text, allowed_special=set()))
    html_ = tok.show(text).to_html()
    assert html_.count("class='b'") == sum(k == BYTES for s in spans for k, _ in s.pieces)
    assert "class='t sp'" in html_


def test_whitespace_visible():
    tok = fastsw.train(["a\tb\nc d"] * 5, vocab_size=245)
    out = str(tok.show("a\tb\nc\r\x00"))
    assert "→" in out and "↵\n" in out and "␍" in out and "␀" in out


def test_wide_and_right_to_left_text(models):
    tok = models[0]["super"]
    assert display_width("日本") == 4 and display_width("😀") == 2 and display_width("مرحبا") == 5
    assert display_width("e\u0301") == 1 and display_width("\u2068a\u2069") == 1
    text = "日本語 😀 مرحبا بالعالم hello"
    spans = token_spans(tok, text)
    plain = render_terminal(spans)
    # every token with right-to-left characters is isolated, nothing else is
    for s in spans:
        rtl = any(__import__("unicodedata").bidirectional(c) in ("R", "AL") for c in s.shown)
        assert (f"\u2068{s.shown}\u2069" in plain) == rtl or not rtl
    assert plain.count("\u2068") == sum(
        any(__import__("unicodedata").bidirectional(c) in ("R", "AL") for c in s.shown) for s in spans
    )
    # --ids: every id starts in the display column where its token starts
    rows = render_terminal(spans, ids=True, width=40).split("\n")
    assert len(rows) >= 4 and len(rows) % 2 == 0
    ids = iter(spans)
    for tok_row, id_row in zip(rows[::2], rows[1::2]):
        for m in re.finditer(r"\d+", id_row):
            s = next(ids)
            assert int(m.group()) == s.id
            rest = _from_column(tok_row, display_width(id_row[: m.start()]))
            first = s.shown[0] if not s.invalid_utf8 else "‹"
            assert rest.lstrip("\u2068⟪").startswith(first), (rest, s)
    assert next(ids, None) is None


def _from_column(row: str, col: int) -> str:
    """``row`` from display column ``col`` on (a token starts exactly there)."""
    for cut in range(len(row) + 1):
        w = display_width(row[:cut])
        if w == col:
            return row[cut:]
        if w > col:
            break
    pytest.fail(f"no character starts at column {col} of {row!r}")


def test_sampling_cap(tmp_path, models, capsys):
    s = sample_documents(iter(["one two three", "four"]), 9)
    assert s.documents == ["one two "] and s.shown_chars == 8
    assert sample_documents(["ab", "cd"], None).documents == ["ab", "cd"]
    assert sample_documents(["ab", "cd"], 4).complete and not sample_documents(["ab", "cd", "e"], 4).complete
    assert sample_documents(["ab", "cd"], 4).note() == "showing all 4 characters (2 documents)"
    assert sample_documents(["ab", "cd"], 3).note() == "showing the first 3 characters"
    with pytest.raises(ValueError):
        sample_documents(["x"], 0)
    # 10 MB of documents, read lazily: the page holds the sample only
    ten_mb = ("the cat sat on the mat and looked at the dog. " * 100 for _ in range(2200))
    sample = sample_documents(ten_mb, 3000)
    assert sample.shown_chars <= 3000 and not sample.complete
    assert len(page_html({"super": models[0]["super"]}, {"en": sample})) < 200_000
    # a large file: the page shows a few kB of it and says how much
    big = tmp_path / "big.txt"
    line = "the cat sat on the mat and looked at the dog. " * 20 + "\n"
    big.write_text(line * 1200, encoding="utf-8")  # about 1.1 MB
    page = tmp_path / "page.html"
    code, out, err = run(
        capsys,
        "show",
        "--html",
        page,
        "-m",
        models[1] / "super.json",
        "--text",
        f"en={big}",
        "--sample-chars",
        "2000",
        "--no-progress",
    )
    assert code == 0, err
    text = page.read_text(encoding="utf-8")
    assert len(text) < 300_000, len(text)
    total = len(line) * 1200
    assert f"of {total:,} characters" in text and "showing the first 1,9" in text


def test_sample_note():
    assert Sample(["ab"], 2, 2, 1).note() == "showing all 2 characters (1 document)"
    assert "of 1,000 characters (0.2 %; 1 of 10 documents)" in Sample(["ab"], 2, 1000, 10).note()


# ---- the notebook object ----------------------------------------------------------------------------------------


def test_tokenizer_show_object(models):
    tok = models[0]["super"]
    view = tok.show("hello world, 日本")
    assert isinstance(view, TokenView)
    html_ = view._repr_html_()
    assert html_.count("class='t ") == view.n_tokens == len(tok.encode("hello world, 日本"))
    assert "title='id " in html_ and "<style>" in html_
    text = str(view)
    assert "\x1b" not in text and "│" in text and "tokens ·" in text
    assert "\x1b[" in view.to_terminal(color=True)
    assert "show" in type(tok).__dict__  # defined in the class


# ---- the terminal, through a real pseudo-terminal -----------------------------------------------------------------


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["PYTHONPATH"] = str(ROOT)
    env["TERM"] = "xterm-256color"
    env.update(extra)
    return env


def _run_pty(argv, env) -> str:
    """Run ``argv`` with stdout and stderr on a new pseudo-terminal; its output."""
    pid, fd = pty.fork()
    if pid == 0:  # the child
        try:
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    chunks = []
    while True:
        try:
            ready, _, _ = select.select([fd], [], [], 120)
            if not ready:
                break
            data = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0, b"".join(chunks)
    return b"".join(chunks).decode("utf-8")


def test_terminal_colours_on_a_tty_only(models, capsys, monkeypatch):
    model = str(models[1] / "super.json")
    argv = [sys.executable, "-m", "fastsw", "show", "-m", model, "The cat sat on the mat. 日本 مرحبا"]
    on_tty = _run_pty(argv, _env())
    assert "\x1b[38;5;16;48;5;" in on_tty and "key:" in on_tty
    # (colorama, imported by numba, writes one reset code at exit when stdout is a terminal: not a colour)
    assert "\x1b[" not in _run_pty(argv, _env(NO_COLOR="1")).removesuffix("\x1b[0m")
    assert "\x1b[" in _run_pty(argv + ["--color", "always"], _env(NO_COLOR="1"))
    # stdout that is not a terminal: the command in this process, its output captured (the environment of _env)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("NO_COLOR", raising=False)
    code, piped, err = run(capsys, *argv[3:])
    assert code == 0, err
    assert "\x1b[" not in piped and "│" in piped
    code, forced, err = run(capsys, *argv[3:], "--color", "always")
    assert code == 0, err
    assert "\x1b[" in forced
    assert (
        ANSI.sub("", on_tty.replace("\r\n", "\n")).splitlines()[1].replace("│", "")
        == ANSI.sub("", forced).splitlines()[1]
    )


def test_use_color(monkeypatch):
    class Tty:
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert use_color("auto", Tty()) and not use_color("never", Tty()) and use_color("always", None)
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_color("auto", Tty())
    with pytest.raises(ValueError):
        use_color("sometimes")


def test_cli_several_models_and_ids(models, capsys):
    d = models[1]
    code, out, err = run(capsys, "show", "-m", d / "super.json", "-m", d / "marker.json", "--ids", "The cat sat")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(str(d / "super.json")) and any(l.startswith(str(d / "marker.json")) for l in lines)
    assert sum("bytes/token" in l for l in lines) == 2
    tok = models[0]["super"]
    assert lines[2].split() == [str(i) for i in tok.encode("The cat sat")]


def test_cli_reads_files_and_stdin(models, tmp_path):
    model = str(models[1] / "super.json")
    f = tmp_path / "t.txt"
    f.write_text("first line\nsecond line\n", encoding="utf-8")
    argv = [sys.executable, "-m", "fastsw", "show", "-m", model, "--color", "never"]
    from_file = subprocess.run(argv + [str(f)], env=_env(), capture_output=True, check=True).stdout.decode()
    from_stdin = subprocess.run(
        argv + ["-"], env=_env(), input=f.read_bytes(), capture_output=True, check=True
    ).stdout.decode()
    assert from_file.replace("│", "").splitlines()[1:3] == ["first line↵", "second line↵"]
    assert from_file == from_stdin


def test_cli_errors(models, tmp_path, capsys):
    model = models[1] / "super.json"
    assert_error(*run(capsys, "show", "-m", model, "--html", tmp_path / "p.html")[::2], "nothing to show")
    assert_error(*run(capsys, "show", "-m", model, "--sample-chars", "0", "x")[::2], "--sample-chars")
    assert_error(
        *run(capsys, "show", "-m", model, "--text", "en=missing.txt", "--html", tmp_path / "p.html")[::2], "missing.txt"
    )
    assert_error(*run(capsys, "show", "-m", model, "--text", "en")[::2], "LANG=PATH")
    f = tmp_path / "a.txt"
    f.write_text("x\n", encoding="utf-8")
    assert_error(*run(capsys, "show", "-m", model, "--text", f"en={f}", "--text", f"en={f}")[::2], "twice")
    assert_error(*run(capsys, "show", "-m", tmp_path / "nope.json", "x")[::2], "nope.json")
    assert_error(*run(capsys, "show", "-m", model, "--html", tmp_path / "no" / "p.html", "x")[::2], "p.html")
    assert not (tmp_path / "p.html").exists()
    bad = subprocess.run(
        [sys.executable, "-m", "fastsw", "show", "-m", str(model), "-"],
        env=_env(),
        input=b"ok \xff bad",
        capture_output=True,
    )
    assert bad.returncode == 2 and b"invalid UTF-8 at byte 3" in bad.stderr


def test_page_is_written_atomically(models, tmp_path, capsys, monkeypatch):
    page = tmp_path / "page.html"
    page.write_text("old", encoding="utf-8")
    import fastsw.eval.evaluate

    def broken(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(fastsw.eval.evaluate, "tokens_page", broken)
    code, _, _ = run(capsys, "show", "--html", page, "-m", models[1] / "super.json", "x", "--no-progress")
    assert code == 130 and page.read_text(encoding="utf-8") == "old"
    assert os.listdir(tmp_path) == ["page.html"]


def test_eval_report_links_the_page(models, lang_docs, tmp_path, capsys):
    en = write_jsonl(tmp_path / "en.jsonl", lang_docs["en"][:3])
    zh = write_jsonl(tmp_path / "zh.jsonl", lang_docs["zh"][:3])
    d = models[1]
    code, _, err = run(
        capsys,
        "eval",
        "-m",
        d / "super.json",
        "-m",
        d / "marker.json",
        "--text",
        f"en={en}",
        f"zh={zh}",
        "--report",
        tmp_path / "rep",
        "--no-progress",
    )
    assert code == 0, err
    assert "[See the tokens](tokens.html)" in (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    page = (tmp_path / "rep" / "tokens.html").read_text(encoding="utf-8")
    assert page.count("<section data-lang=") == 2 and "Gini" in page and "data:image/png;base64," in page


# ---- the page in a real headless Chromium --------------------------------------------------------------------------


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail("chromium is missing: apt-get install -y chromium (.ci/run installs it)", pytrace=False)
    return path


def test_page_in_chromium(models, lang_docs, tmp_path):
    from playwright.sync_api import sync_playwright

    toks = {"super": models[0]["super"], "marker": models[0]["marker"]}
    samples = {lang: sample_documents(docs, 700) for lang, docs in lang_docs.items()}
    samples["edge"] = Sample(["x😀<|endoftext|>y\tz\n"], 18)
    from fastsw.eval.evaluate import evaluate, metrics_html

    result = evaluate(toks, {lang: docs[:4] for lang, docs in lang_docs.items()})
    path = tmp_path / "page.html"
    path.write_text(
        page_html(toks, samples, metrics=metrics_html(result), command="fastsw show --html page.html"), encoding="utf-8"
    )
    expected = {
        (lang, i): [len(token_spans(toks[label], d)) for d in s.documents]
        for lang, s in samples.items()
        for i, label in enumerate(toks)
    }
    errors, requests = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(path.as_uri())
            page.wait_for_load_state("load")
            # the tokens are laid out: as many token elements as tokens, each with a box on the page
            for (lang, i), counts in expected.items():
                docs = page.locator(f"section[data-lang='{lang}'] .col[data-model='{i}'] .fsw-doc")
                assert docs.count() == len(counts)
                for k, n in enumerate(counts):
                    assert docs.nth(k).locator(".t").count() == n
                    assert int(docs.nth(k).get_attribute("data-n")) == n
            boxes = page.eval_on_selector_all("section .fsw-doc .t", "els => els.map(e => e.getClientRects().length)")
            assert boxes and all(b >= 1 for b in boxes)
            # hovering a token shows its card with its id
            target = page.locator("section[data-lang='edge'] .col[data-model='0'] .t.sp")
            assert target.count() == 1
            assert not page.is_visible("#card")
            target.hover()
            page.wait_for_selector("#card", state="visible")
            assert page.inner_text("#card-id") == str(toks["super"].eot_token)
            card = page.inner_text("#card")
            assert "special token" in card and "super" in card
            # a piece of the emoji: its bytes in hex, and the character it completes (or none)
            pieces = page.locator("section[data-lang='edge'] .col[data-model='0'] .t:has(.b)")
            assert pieces.count() >= 2
            pieces.last.hover()
            assert '"😀"' in page.inner_text("#card")
            word = page.locator("section[data-lang='en'] .col[data-model='0'] .t").nth(3)
            word.hover()
            tid = int(word.get_attribute("data-t"))
            assert page.inner_text("#card-id") == str(tid)
            assert toks["super"].vocab[tid].hex(" ").upper() in page.inner_text("#card")
            shot = tmp_path / "page.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            page.mouse.move(0, 0)
            page.wait_for_selector("#card", state="hidden")
        finally:
            browser.close()
    assert errors == []
    assert requests == [path.as_uri()]  # nothing from the network, nothing else from disk


def test_docstring_examples():
    import doctest
    import fastsw.eval.show

    assert doctest.testmod(fastsw.eval.show, optionflags=doctest.ELLIPSIS).failed == 0
