"""The package as a stranger installs it: licences and metadata in pyproject.toml and the wheel, every data folder
shipped, a Cython build without warnings, one warning when the compiled extension is missing, and Numba's cache
outside the installed package (where a later reinstall could trip on it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import fastsw

ROOT = Path(fastsw.__file__).resolve().parents[1]
PACKAGE = ROOT / "fastsw"


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def subprocess_env(**changes) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def test_licence_and_metadata_are_stated():
    project = pyproject()["project"]
    assert project["readme"] == "README.md" and (ROOT / "README.md").is_file()
    expression = project["license"]
    assert expression.split(" AND ")[0] == "MIT"
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License") and "fastsw/data/sample/" in licence
    assert f"SPDX-License-Identifier: {expression}" in licence  # the file and the metadata say the same
    for key in ("authors", "keywords", "classifiers", "description"):
        assert project[key], key
    assert "Typing :: Typed" in project["classifiers"]


def test_the_sample_corpus_licences_are_shipped():
    """Every licence the sample's README names has its text (or, for CC BY 4.0, which allows it, the address of
    its text) in fastsw/data/sample/LICENSES, and the wheel's licence files include them."""
    sample = PACKAGE / "data" / "sample"
    rows = [
        line.split("|")[-2]
        for line in (sample / "README.md").read_text(encoding="utf-8").splitlines()
        if re.match(r"\| \w+\.txt \|", line)
    ]  # the licence column of each file's row
    assert len(rows) >= 12
    named = {licence for row in rows for licence in re.findall(r"CC BY-SA 4\.0|CC BY 4\.0|CC0 1\.0|public domain", row)}
    assert named == {"CC BY-SA 4.0", "CC BY 4.0", "CC0 1.0", "public domain"}
    notes = (sample / "LICENSES" / "README.md").read_text(encoding="utf-8")
    for licence in named:
        assert licence in notes, licence
    assert (sample / "LICENSES" / "CC-BY-SA-4.0.txt").read_text().startswith("Attribution-ShareAlike 4.0")
    assert "CC0 1.0 Universal" in (sample / "LICENSES" / "CC0-1.0.txt").read_text()
    assert "creativecommons.org/licenses/by/4.0/legalcode" in notes
    assert "UNICODE LICENSE V3" in (PACKAGE / "data" / "unicode" / "LICENSE-Unicode-3.0.txt").read_text()
    globs = pyproject()["project"]["license-files"]
    shipped = {p.relative_to(ROOT) for pattern in globs for p in ROOT.glob(pattern)}
    assert {
        Path("LICENSE"),
        Path("fastsw/data/sample/LICENSES/CC-BY-SA-4.0.txt"),
        Path("fastsw/data/sample/LICENSES/CC0-1.0.txt"),
        Path("fastsw/data/sample/LICENSES/README.md"),
        Path("fastsw/data/unicode/LICENSE-Unicode-3.0.txt"),
    } <= shipped


def test_every_folder_with_package_files_is_a_listed_package():
    """setuptools warns about (and will stop shipping) a folder of data files that is not in ``packages``."""
    config = pyproject()["tool"]["setuptools"]
    packages = set(config["packages"])
    for folder in [PACKAGE, *PACKAGE.rglob("*")]:
        if not folder.is_dir() or "__pycache__" in folder.parts:
            continue
        files = [f for f in folder.iterdir() if f.is_file() and not f.name.endswith((".so", ".c", ".pyc"))]
        if files:
            dotted = ".".join(folder.relative_to(ROOT).parts)
            assert dotted in packages, dotted
            data = [f for f in files if f.suffix not in (".py",)]
            patterns = config["package-data"].get(dotted, [])
            for f in data:
                assert any(Path(f.name).match(p) for p in patterns), (dotted, f.name)
    assert (PACKAGE / "py.typed").is_file() and "py.typed" in config["package-data"]["fastsw"]


def test_the_extension_compiles_without_cython_warnings(tmp_path):
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "cython",
            "-3",
            str(PACKAGE / "pretokenizers" / "_pretok.pyx"),
            "-o",
            str(tmp_path / "_pretok.c"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    assert "warning" not in (r.stdout + r.stderr).lower(), r.stdout + r.stderr


MISSING_EXTENSION = """
import sys, warnings
sys.modules["fastsw.pretokenizers._pretok"] = None  # as if the extension had not been built: importing it raises ImportError
warnings.simplefilter("always")
import fastsw
import fastsw.pretokenizers.pretokenize, fastsw.corpus.counting, fastsw.encoding.encode_fast
tok = fastsw.train(["the cat sat on the mat", "the dog sat on the log"] * 5, algo="bpe", vocab_size=250)
print(tok.decode(tok.encode("the cat sat")), fastsw.pretokenizers.pretokenize.HAVE_NATIVE_PRETOKENIZER)
"""


def test_a_missing_extension_warns_once_and_falls_back():
    r = subprocess.run(
        [sys.executable, "-c", MISSING_EXTENSION],
        capture_output=True,
        text=True,
        timeout=600,
        env=subprocess_env(FASTSW_PUREPYTHON=None),
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["the", "cat", "sat", "False"]
    assert r.stderr.count("ExtensionMissingWarning") == 1, r.stderr
    assert "fastsw.pretokenizers._pretok cannot be imported" in r.stderr and "build_ext --inplace" in r.stderr
    quiet = subprocess.run(
        [sys.executable, "-c", MISSING_EXTENSION],
        capture_output=True,
        text=True,
        timeout=600,
        env=subprocess_env(FASTSW_PUREPYTHON="1"),
    )  # the pure-Python paths were asked for
    assert quiet.returncode == 0 and "ExtensionMissingWarning" not in quiet.stderr, quiet.stderr


CACHE_PATHS = """
import sys
if sys.argv[1] == "numba-first":
    import numba  # reads NUMBA_CACHE_DIR before fastsw sets it
import os
import fastsw
from fastsw.encoding import encode_kernels as _encode_kernels
from fastsw.trainers import mingram_kernels as _mingram_kernels
from fastsw.trainers import parity_kernels as _parity_kernels
from fastsw.trainers import bpe_kernels as _train_kernels
from numba.core.registry import CPUDispatcher
kernels = [v for m in (_encode_kernels, _mingram_kernels, _parity_kernels, _train_kernels)
           for v in vars(m).values() if isinstance(v, CPUDispatcher) and v._cache is not None]
print(os.environ["NUMBA_CACHE_DIR"])
print(len(kernels))
print("\\n".join(sorted({str(v._cache._cache_path) for v in kernels})))
"""


def test_numba_caches_outside_the_package(tmp_path):
    """Numba's default cache is ``__pycache__`` beside the kernels' source, inside the installed package, where
    ``pip uninstall`` leaves it (pip removes only what it installed): then a folder ``fastsw/`` holding nothing but
    cache files makes a later (editable) install import as an empty namespace package. fastsw points Numba at the
    user's cache folder, per fastsw version, unless NUMBA_CACHE_DIR is set."""
    for order in ("fastsw-first", "numba-first"):
        env = subprocess_env(NUMBA_CACHE_DIR=None, FASTSW_CACHE_DIR=str(tmp_path / "cache"))
        r = subprocess.run(
            [sys.executable, "-c", CACHE_PATHS, order], capture_output=True, text=True, timeout=600, env=env
        )
        assert r.returncode == 0, r.stderr
        root, n_kernels, *paths = r.stdout.split("\n")
        paths = [p for p in paths if p]
        assert root == str(tmp_path / "cache" / f"numba-{fastsw.__version__}")
        assert int(n_kernels) >= 20 and paths and all(p.startswith(root + os.sep) for p in paths), (order, paths)
        assert not any(p.startswith(str(PACKAGE)) for p in paths)
    own = tmp_path / "mine"
    r = subprocess.run(
        [sys.executable, "-c", CACHE_PATHS, "fastsw-first"],
        capture_output=True,
        text=True,
        timeout=600,
        env=subprocess_env(NUMBA_CACHE_DIR=str(own)),
    )
    assert r.returncode == 0, r.stderr
    root, _, *paths = r.stdout.split("\n")
    assert root == str(own) and all(p.startswith(str(own)) for p in paths if p)
