"""The repository speaks to its users: no file names a folder of one machine or tells how the work was done.

Every tracked file (``git ls-files``; binary files skipped) is searched for absolute machine paths and for words
that belong in a lab notebook, not in a product. The patterns are assembled from pieces so that this file does
not match itself.
"""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SLASH = "/"

FORBIDDEN = {
    "an absolute machine path": re.compile(
        "|".join(
            [re.escape(SLASH + name + SLASH) for name in ("work", "root", "home", "Users")]
            + [re.escape("." + "mirror" + SLASH), re.escape(SLASH + "tmp" + SLASH) + r"[\w.-]+\." + "lock"]
        )
    ),
    "an issue number": re.compile("issue" + r"s?\s+#\d+", re.IGNORECASE),
    "words about other work on the machine": re.compile(
        "|".join(
            [
                "quiet" + r"(?:\s+[\w-]+)?\s+machine",
                "load" + r"\s+average",
                "shared" + r"(?:\s+[\w-]+)?\s+machine",
                "busy" + r"(?:\s+[\w-]+)?\s+machine",
                "other" + r"\s+jobs",
            ]
        ),
        re.IGNORECASE,
    ),
}


def tracked_files():
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.fail("git ls-files failed: the hygiene test runs in a git checkout of the repository", pytrace=False)
    return [ROOT / name for name in out.decode().split("\0") if name]


def offences(text):
    """[(line number, what, the matched text)] in ``text``."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for what, pattern in FORBIDDEN.items():
            for m in pattern.finditer(line):
                found.append((number, what, m.group(0)))
    return found


@pytest.mark.parametrize(
    "text, what",
    [
        ("data under " + SLASH + "work" + SLASH + "data", "an absolute machine path"),
        ("cd " + SLASH + "home" + SLASH + "me", "an absolute machine path"),
        ("see " + SLASH + "root" + SLASH + ".cache", "an absolute machine path"),
        ("a git dir in ." + "mirror" + SLASH + "x", "an absolute machine path"),
        ("flock " + SLASH + "tmp" + SLASH + "fastsw-bench." + "lock python", "an absolute machine path"),
        ("as " + "Issue" + " #14 asked", "an issue number"),
        ("on a " + "quiet" + " machine", "words about other work on the machine"),
        ("at " + "load" + " average 1.2", "words about other work on the machine"),
        ("on a " + "shared" + " 2-core machine", "words about other work on the machine"),
        ("with " + "other" + " jobs running", "words about other work on the machine"),
    ],
)
def test_the_patterns_catch_what_they_are_for(text, what):
    assert [w for _, w, _ in offences(text)] == [what]


@pytest.mark.parametrize(
    "text",
    [
        "FASTSW_DATA defaults to ~/.cache/fastsw",
        "the issue tracker",
        "load the model",
        "a machine with 2 cores",
        "shared by the benchmarks",
        "the shared corpora on this machine",
        "tmp.replace(path)",
        "see #14 in the changelog",
    ],
)
def test_ordinary_text_passes(text):
    assert offences(text) == []


def test_no_tracked_file_names_a_machine_path_or_tells_how_the_work_was_done():
    report = []
    for path in tracked_files():
        if not path.is_file():  # deleted in the work tree, not yet committed
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        for number, what, match in offences(text):
            report.append(f"{path.relative_to(ROOT)}:{number}: {what}: {match!r}")
    assert not report, f"{len(report)} line(s) to rewrite:\n" + "\n".join(report)
