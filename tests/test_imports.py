"""The import graph of fastsw's Python modules: no circle, and dependencies that point one way,
files -> io.model_file -> tokenizer -> encoding.encode_fast; io.interop, io.tiktoken_vocab, io.formats,
io.model_kinds -> tokenizer. Imports inside functions count: a lazy import is still a circle (it only hides it until
the call). One kind of lazy import closes a circle by design: a :class:`fastsw.Tokenizer` method (``save_hf``,
``from_tiktoken``, ``load`` of a MinGram file, ...) delegating to the module above the tokenizer that does
the work (those modules build or subclass Tokenizers, so they import it). These edges are listed in
``DELEGATIONS``; every other edge, lazy or not, points one way."""

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


def _is_type_checking(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``): a block type checkers read and Python never runs."""
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk_run(tree: ast.AST):
    """``ast.walk`` without the ``if TYPE_CHECKING:`` blocks: the imports that can run."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if _is_type_checking(node):
            todo.extend(node.orelse)  # type: ignore[attr-defined]
            continue
        todo.extend(ast.iter_child_nodes(node))


def _imports(name: str, path: Path) -> set:
    """The fastsw modules a file imports, anywhere in it (module level or inside functions); imports for type
    annotations only (``if TYPE_CHECKING:``) never run, so they are not edges."""
    package = name if path.stem == "__init__" else name.rpartition(".")[0]
    out = set()
    for node in _walk_run(ast.parse(path.read_text(encoding="utf-8"))):
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


def _module_level_imports(path: Path) -> set:
    """The fastsw modules a file imports at module level (the statements run by importing it)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.update(
                f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in MODULES else node.module for a in node.names
            )
    return out & set(MODULES)


GRAPH = {name: _imports(name, path) - {name} if path else set() for name, path in MODULES.items()}
#: The Tokenizer's methods that import, when called, the module above the tokenizer doing their work.
DELEGATIONS = {
    ("fastsw.tokenizer", m)
    for m in ("fastsw.io.interop", "fastsw.io.tiktoken_vocab", "fastsw.io.formats", "fastsw.io.model_kinds")
}
#: The graph without those delegations: every edge in it points one way.
LAYERED = {name: {m for m in deps if (name, m) not in DELEGATIONS} for name, deps in GRAPH.items()}


def _reach(start: str, graph: dict = LAYERED) -> set:
    seen, todo = set(), list(graph[start])
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(graph[m])
    return seen


def test_the_graph_sees_lazy_imports():
    # the parser is what the other tests trust: a `from .x import y` inside a function is an edge, an import under
    # `if TYPE_CHECKING:` (annotations only) is not
    assert (
        "fastsw.pretokenizers.pretokenize" in GRAPH["fastsw.cli.common"]
        and "fastsw.tokenizer" in GRAPH["fastsw.io.interop"]
    )
    tree = ast.parse(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import fastsw.tokenizer\n"
        "else:\n    import fastsw.files\ndef f():\n    import fastsw.alphabet\n"
    )
    seen = {a.name for node in _walk_run(tree) if isinstance(node, ast.Import) for a in node.names}
    assert seen == {"fastsw.files", "fastsw.alphabet"}


def test_no_import_circle():
    circles = sorted(m for m in LAYERED if m in _reach(m))
    assert not circles, f"modules that import themselves through others: {circles}"


def test_the_tokenizer_delegates_only_inside_its_methods():
    """The delegations are real edges of the graph (a stale list would hide nothing), none of them runs at import
    time, and each closes a circle (otherwise it would not need to be lazy and listed)."""
    top_level = _module_level_imports(MODULES["fastsw.tokenizer"])
    for low, high in sorted(DELEGATIONS):
        assert high in GRAPH[low], f"{low} no longer imports {high}: remove it from DELEGATIONS"
        assert high not in top_level, f"{low} imports {high} at module level"
        assert low in _reach(high, GRAPH), f"{high} does not import {low}: {low} can import it at module level"


def test_model_kinds_are_registered_in_one_place():
    """No module fills a registry of fastsw.tokenizer or fastsw.io.model_file as a side effect of being
    imported: the model classes are listed in fastsw.io.model_kinds."""
    from fastsw.io.model_kinds import MODEL_KINDS
    from fastsw.trainers.mingram import MinGramTokenizer

    assert MODEL_KINDS["mingram"].cls is MinGramTokenizer
    for name, path in MODULES.items():
        if path is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else []
            for t in targets:
                assert not (
                    isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "Tokenizer"
                ), f"{name} sets an attribute of Tokenizer"
                assert not (
                    isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id.startswith("MODEL_")
                ), f"{name} fills a model registry at import time"


def test_dependencies_point_one_way():
    for high in ("fastsw.io.interop", "fastsw.io.tiktoken_vocab", "fastsw.io.formats", "fastsw.io.model_kinds"):
        assert high not in _reach("fastsw.tokenizer"), f"the tokenizer reaches {high} other than through its methods"
    importers_of_tokenizer = {m for m in GRAPH if "fastsw.tokenizer" in _reach(m)}
    assert not (_reach("fastsw.tokenizer") & importers_of_tokenizer), "the tokenizer imports a module that imports it"
    for low in ("fastsw.io.model_file", "fastsw.encoding.encode_fast", "fastsw.files"):
        assert "fastsw.tokenizer" not in _reach(low), f"{low} imports the tokenizer"
    assert GRAPH["fastsw.files"] == set(), "the file helpers import nothing of fastsw"


def test_import_fastsw_leaves_training_and_reading_for_their_first_use():
    # A process that loads a model and encodes does not pay for importing the trainers, the counter, the readers,
    # the sharder or the package metadata; the public names still resolve (and `from fastsw import *` gives them).
    import json
    import os
    import subprocess
    import sys

    code = (
        "import json, sys, fastsw\n"
        "heavy = ['fastsw.trainers.train', 'fastsw.corpus.counting', 'fastsw.corpus.readers', 'fastsw.encoding.shard',"
        " 'fastsw.eval.metrics', 'importlib.metadata']\n"
        "before = [m for m in heavy if m in sys.modules]\n"
        "from fastsw import *\n"
        "names = [train.__module__, shard.__module__, iter_documents.__module__, InputError.__module__, metrics.__name__]\n"
        "print(json.dumps([before, names, fastsw.train is train]))"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PACKAGE.parent), env.get("PYTHONPATH")]))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    before, names, same = json.loads(r.stdout.splitlines()[-1])
    assert before == [] and same
    assert names == [
        "fastsw.trainers.train",
        "fastsw.encoding.shard",
        "fastsw.corpus.readers",
        "fastsw.corpus.readers",
        "fastsw.eval.metrics",
    ]
