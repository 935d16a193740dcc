"""Types as users meet them: mypy, with the configuration in pyproject.toml, finds no error in the README's Python
examples (the page's blocks in order, one module, as tests/test_docs.py runs them) nor in a user script that calls
the Tokenizer's tiktoken and HF names (defined in the class, so a type checker sees them); the public API is
annotated."""

import importlib
import inspect
import os
import re
import subprocess
import sys

import pytest

from test_docs import ROOT, parse_blocks

USER_SCRIPT = """\
import fastsw

tok = fastsw.Tokenizer.from_tiktoken(object())
tok.save_hf("tokenizer.json")
enc = tok.to_tiktoken()
ids = fastsw.Tokenizer.from_file("model.json").encode("hello") + fastsw.load("model.json").encode("world")
"""


@pytest.fixture(scope="module")
def mypy_errors(tmp_path_factory):
    """``{file name: [error lines]}`` of one mypy run over both files (mypy follows their imports into fastsw)."""
    work = tmp_path_factory.mktemp("typing")
    examples = "".join(b.code for b in parse_blocks(ROOT / "README.md") if b.language == "python")
    assert examples.count("fastsw.") >= 3, "the README has Python examples"
    (work / "readme_examples.py").write_text(examples, encoding="utf-8")
    (work / "user_script.py").write_text(USER_SCRIPT, encoding="utf-8")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(work / "mypy-cache"),
            "--no-error-summary",
            str(work / "readme_examples.py"),
            str(work / "user_script.py"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": str(ROOT)},
    )
    assert r.returncode in (0, 1), r.stderr  # 2: mypy itself failed (a bad configuration)
    errors: dict = {}
    for line in r.stdout.splitlines():
        m = re.match(r"(.+?):\d+: error: ", line)
        if m:
            errors.setdefault(os.path.basename(m.group(1)), []).append(line)
    return errors


def test_readme_examples_type_check(mypy_errors):
    assert not mypy_errors, mypy_errors


def test_tokenizer_methods_are_seen_by_a_type_checker(mypy_errors):
    assert "user_script.py" not in mypy_errors, mypy_errors["user_script.py"]


def _unannotated(name: str, func) -> list:
    """``name(param)`` for each parameter without an annotation, ``name -> ?`` without a return annotation."""
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):  # a builtin: nothing to read
        return []
    out = [
        f"{name}({p.name})"
        for p in sig.parameters.values()
        if p.name not in ("self", "cls")
        and p.annotation is inspect.Parameter.empty
        and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    if sig.return_annotation is inspect.Signature.empty and not name.endswith("__init__"):
        out.append(f"{name} -> ?")
    return out


def _public_functions(name: str, obj) -> list:
    """``(name, function)`` of a public function, of a class's public methods, or of a module's ``__all__``."""
    if inspect.isclass(obj):
        return [
            (f"{name}.{m}", getattr(obj, m))
            for m, f in vars(obj).items()
            if (not m.startswith("_") or m == "__init__")
            and (inspect.isfunction(f) or isinstance(f, (staticmethod, classmethod)))
        ]
    if inspect.ismodule(obj):
        return [item for m in getattr(obj, "__all__", []) for item in _public_functions(f"{name}.{m}", getattr(obj, m))]
    return [(name, obj)] if inspect.isfunction(obj) else []


def test_the_public_api_is_annotated():
    """Every parameter and return of fastsw.__all__ (classes: their public methods; modules: their __all__) and
    of the objects docs/api.md documents carries an annotation."""
    import fastsw

    found = [item for n in fastsw.__all__ for item in _public_functions(n, getattr(fastsw, n))]
    for target in re.findall(r"^::: (fastsw\.\S+)", (ROOT / "docs" / "api.md").read_text(encoding="utf-8"), re.M):
        module, _, attr = target.rpartition(".")
        try:
            obj = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError):
            obj = importlib.import_module(target)
        found += _public_functions(target, obj)
    assert len(found) > 100
    missing = [m for name, func in found for m in _unannotated(name, func)]
    assert not missing, missing
