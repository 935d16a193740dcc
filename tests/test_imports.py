"""The import graph of fastsw's Python modules: no circle, and dependencies that point one way,
files -> model_io -> tokenizer -> fast_encode, interop -> tokenizer. Imports inside functions count: a lazy import
is still a circle (it only hides it until the call)."""
from __future__ import annotations

import ast
from pathlib import Path

import fastsw

PACKAGE = Path(fastsw.__file__).resolve().parent


def _dotted(path: Path) -> str:
    parts = ("fastsw",) + path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_dotted(p): p for p in PACKAGE.rglob("*.py")}
MODULES.update((_dotted(p), None) for p in PACKAGE.rglob("*.pyx"))  # compiled: they import no fastsw module


def _imports(name: str, path: Path) -> set:
    """The fastsw modules a file imports, anywhere in it (module level or inside functions)."""
    package = name if path.stem == "__init__" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]) if node.level else ""
            base = ".".join(x for x in (base, node.module or "") if x)
            # `from . import x` / `from fastsw import x` imports the submodule x when there is one
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        out.update(n for n in names if n in MODULES)
    return out


GRAPH = {name: _imports(name, path) - {name} if path else set() for name, path in MODULES.items()}


def _reach(start: str) -> set:
    seen, todo = set(), list(GRAPH[start])
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(GRAPH[m])
    return seen


def test_the_graph_sees_lazy_imports():
    # the parser is what the other tests trust: a `from .x import y` inside a function is an edge
    assert "fastsw.pretokenizers.pretokenize" in GRAPH["fastsw.cli"] and "fastsw.tokenizer" in GRAPH["fastsw.io.interop"]


def test_no_import_circle():
    circles = sorted(m for m in GRAPH if m in _reach(m))
    assert not circles, f"modules that import themselves through others: {circles}"


def test_dependencies_point_one_way():
    assert "fastsw.io.interop" not in _reach("fastsw.tokenizer")
    importers_of_tokenizer = {m for m in GRAPH if "fastsw.tokenizer" in _reach(m)}
    assert not (_reach("fastsw.tokenizer") & importers_of_tokenizer), "the tokenizer imports a module that imports it"
    for low in ("fastsw.io.model_file", "fastsw.encoding.encode_fast", "fastsw.files"):
        assert "fastsw.tokenizer" not in _reach(low), f"{low} imports the tokenizer"
    assert GRAPH["fastsw.files"] == set(), "the file helpers import nothing of fastsw"
