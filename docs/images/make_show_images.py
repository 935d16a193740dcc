"""Make the two screenshots of docs/show.md: ``show-page.png`` (the comparison page, a token hovered) and
``show-terminal.png`` (the terminal view, its ANSI output drawn as HTML), both taken by headless Chromium.

    python docs/images/make_show_images.py            # needs chromium (apt-get install chromium) and playwright

Models: SuperBPE, plain BPE and BPE with boundary[w,p,d]+caps markers, trained on the bundled sample corpus.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TERMINAL_TEXT = "The Cat sat on the mat in the morning.\n日本語のテキスト 😀 مرحبا بالعالم"


def run_fastsw(*args: str, cwd: Path) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "fastsw", *args], cwd=cwd, env=env, check=True, capture_output=True
    ).stdout.decode("utf-8")


def xterm_256(n: int) -> str:
    """The RGB of an xterm 256-colour index, as #rrggbb."""
    base = [
        "000000",
        "cd0000",
        "00cd00",
        "cdcd00",
        "0000ee",
        "cd00cd",
        "00cdcd",
        "e5e5e5",
        "7f7f7f",
        "ff0000",
        "00ff00",
        "ffff00",
        "5c5cff",
        "ff00ff",
        "00ffff",
        "ffffff",
    ]
    if n < 16:
        return "#" + base[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return "#%02x%02x%02x" % (steps[n // 36], steps[n // 6 % 6], steps[n % 6])
    v = 8 + 10 * (n - 232)
    return "#%02x%02x%02x" % (v, v, v)


def ansi_to_html(text: str) -> str:
    """The SGR codes fastsw show writes (256 colours, bold, italic, underline and their resets) as styled spans."""
    out, state = [], {}
    pos = 0
    for m in re.finditer(r"\x1b\[([0-9;]*)m", text):
        out.append(_styled(text[pos : m.start()], state))
        pos = m.end()
        codes = [int(c) for c in m.group(1).split(";") if c] or [0]
        i = 0
        while i < len(codes):
            c = codes[i]
            if c == 0:
                state = {}
            elif c in (38, 48) and i + 2 < len(codes) and codes[i + 1] == 5:
                state["color" if c == 38 else "background"] = xterm_256(codes[i + 2])
                i += 2
            elif c == 1:
                state["font-weight"] = "bold"
            elif c == 22:
                state.pop("font-weight", None)
            elif c == 3:
                state["font-style"] = "italic"
            elif c == 23:
                state.pop("font-style", None)
            elif c == 4:
                state["text-decoration"] = "underline"
            i += 1
    out.append(_styled(text[pos:], state))
    return "".join(out)


def _styled(s: str, state: dict) -> str:
    if not s:
        return ""
    s = html.escape(s)
    if not state:
        return s
    return "<span style='%s'>%s</span>" % (";".join(f"{k}:{v}" for k, v in state.items()), s)


def main() -> None:
    from playwright.sync_api import sync_playwright
    import fastsw
    from fastsw.corpus.sample import sample_documents, sample_files

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("chromium is missing: apt-get install -y chromium")
    work = Path(tempfile.mkdtemp(prefix="fastsw-show-"))
    docs = list(sample_documents())
    fastsw.train(docs, algo="superbpe", vocab_size=3000, supermerges=600).save(work / "superbpe.json")
    fastsw.train(docs, algo="bpe", vocab_size=3000).save(work / "bpe.json")
    fastsw.train(docs, algo="bpe", vocab_size=3000, pretokenizer="boundary[w,p,d]+caps").save(work / "boundary.json")
    for f in sample_files():
        if f.stem in ("en", "zh", "ar"):
            shutil.copy(f, work / f.name)
    run_fastsw(
        "show",
        "--html",
        "page.html",
        "-m",
        "superbpe.json",
        "-m",
        "bpe.json",
        "-m",
        "boundary.json",
        "--text",
        "en=en.txt",
        "--text",
        "zh=zh.txt",
        "--text",
        "ar=ar.txt",
        "--sample-chars",
        "320",
        "--no-progress",
        cwd=work,
    )
    ansi = run_fastsw(
        "show", "--color", "always", "-m", "superbpe.json", "-m", "boundary.json", TERMINAL_TEXT, cwd=work
    )
    prompt = "$ fastsw show -m superbpe.json -m boundary.json 'The Cat sat on the mat in the morning.\\n日本語…'"
    terminal = (
        "<!DOCTYPE html><meta charset='utf-8'><body style='margin:0;background:#1e1e1e'>"
        '<pre style="margin:0;padding:14px 18px;color:#e5e5e5;background:#1e1e1e;'
        "font:15px/1.45 'DejaVu Sans Mono',monospace;display:inline-block\">"
        f"<span style='color:#8ae234'>{html.escape(prompt)}</span>\n{ansi_to_html(ansi)}</pre>"
    )
    (work / "terminal.html").write_text(terminal, encoding="utf-8")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1250})
        page.goto((work / "page.html").as_uri())
        page.locator(
            "section[data-lang='en'] .col[data-model='0'] .t.s0, section[data-lang='en'] .col[data-model='0'] .t.s1"
        ).nth(2).hover()
        page.screenshot(path=str(HERE / "show-page.png"))
        page = browser.new_page(viewport={"width": 1100, "height": 300})
        page.goto((work / "terminal.html").as_uri())
        page.locator("pre").screenshot(path=str(HERE / "show-terminal.png"))
        browser.close()
    shutil.rmtree(work)
    print("wrote", HERE / "show-page.png", "and", HERE / "show-terminal.png")


if __name__ == "__main__":
    main()
