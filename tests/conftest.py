"""Shared fixtures: where the read-only shared data lives, and small trained models.

The shared directory (``../shared`` next to the repository, or ``$FASTSW_SHARED``)
holds the golden files and the real-text corpora. Tests that need it FAIL when it
is missing: they are never skipped silently.
"""

import json
import os
import signal
import tempfile
from pathlib import Path

import hypothesis.configuration
import pytest

# Hypothesis keeps its example database under the current directory by default;
# tests must not write into the working tree.
hypothesis.configuration.set_hypothesis_home_dir(tempfile.mkdtemp(prefix="fastsw-hypothesis-"))

import sys  # noqa: E402

# Test modules share helpers by module name (``from test_pretok import adversarial``): every folder of tests is on
# the import path, whichever subset of files runs.
for _folder in sorted(p for p in Path(__file__).resolve().parent.iterdir() if p.is_dir() and p.name != "data"):
    if str(_folder) not in sys.path:
        sys.path.append(str(_folder))

import fastsw  # noqa: E402


#: The two paths of every computation with a fast twin: the plain-Python reference and the Numba kernels
#: (``backend=`` of :func:`fastsw.train` and the encoders).
BACKENDS = ("python", "numba")


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    """Each twin test runs once per backend (``test_x[python]``, ``test_x[numba]``) and asserts the same answer."""
    return request.param


def shared_path(relative: str) -> Path:
    env = os.environ.get("FASTSW_SHARED")
    root = Path(env) if env else Path(__file__).resolve().parents[2] / "shared"
    path = root / relative
    if not path.exists():
        pytest.fail(f"shared test data {path} is missing; set FASTSW_SHARED to the shared directory", pytrace=False)
    return path


# A suite started with Ctrl-C ignored (a background job of a non-interactive shell, ``nohup``, some CI runners)
# would hand the ignored SIGINT on to every child process, and Python installs no KeyboardInterrupt handler in a
# process that starts with it ignored: the interrupt tests' children would never see their Ctrl-C (they exited 0
# or ran until their timeouts). With Python's handler back in place here, every child starts with SIGINT's default
# action, as from a terminal, and Python's handler in it.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def read_jsonl_texts(path: Path, limit=None):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            out.append(json.loads(line)["text"])
            if limit is not None and len(out) >= limit:
                break
    return out


def run(capsys, *argv):
    """``fastsw.cli.main(argv)`` in this process -> (exit code, stdout, stderr)."""
    from fastsw import cli

    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_error(code: int, err: str, *words: str) -> None:
    """A CLI failure: exit code 2 and one `fastsw: error:` line that mentions each of `words`, no traceback."""
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("fastsw: error: "), err
    for word in words:
        assert word in lines[0], (word, err)


def write_jsonl(path: Path, docs) -> Path:
    """``docs`` as a JSONL file of ``{"text": ...}`` lines at ``path``."""
    path.write_text("".join(json.dumps({"text": d}, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    return path


HYPOTHESIS_EXAMPLES = int(os.environ.get("HYPOTHESIS_MAX_EXAMPLES", "200"))


# The paper authors' golden runs (../shared/golden/paper_ref/<name>.json): name -> train() options.
GOLDEN_RUNS = {
    "bpe_2000": dict(algo="bpe", vocab_size=2000),
    "boundless_2000": dict(algo="boundless", vocab_size=2000),
    "superbpe_1500_plus500": dict(algo="superbpe", vocab_size=2000, supermerges=500),
}


@pytest.fixture(scope="session")
def golden_dir():
    """The paper authors' golden outputs and their inputs (``inputs/wikitext2_*.jsonl``)."""
    return shared_path("golden/paper_ref")


@pytest.fixture(scope="session")
def golden_counts(golden_dir):
    """Pretoken counts and letter runs of the golden training text (default pre-tokenizer)."""
    from fastsw.corpus.readers import iter_documents
    from fastsw.trainers.train import count_corpus

    return count_corpus(
        iter_documents(golden_dir / "inputs/wikitext2_valid.jsonl"), fastsw.Pretokenizer(), collect_runs=True
    )


def golden_json(golden_dir, name):
    """One golden run's JSON (merges, held-out encodings, test-set hash)."""
    return json.loads((golden_dir / f"{name}.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def sample_docs():
    """All documents of the bundled sample corpus (12 languages, ~520 kB)."""
    from fastsw.corpus.sample import sample_documents

    return list(sample_documents())


@pytest.fixture(scope="session")
def multilingual_boundless(sample_docs):
    """A BoundlessBPE model trained on the whole multilingual sample corpus."""
    return fastsw.train(sample_docs, algo="boundless", vocab_size=1200)


@pytest.fixture(scope="session")
def multilingual_superbpe(sample_docs):
    return fastsw.train(
        sample_docs, algo="superbpe", vocab_size=1200, supermerges=300, special_tokens=["<|endoftext|>"]
    )
