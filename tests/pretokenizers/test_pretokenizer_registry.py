"""The pre-tokenizer interface (fastsw.pretokenizers.base) and the registry of names (fastsw.pretokenizers.registry).

A toy family defined here, outside the package, is registered and then trained, saved, loaded, encoded and decoded
through the API and the command line, and found through an entry point by a fresh process; the built-in families
round-trip through their names and configs; and no module of the package probes a pre-tokenizer for a hook with
``hasattr``/``getattr`` (the base class declares them all).
"""

import ast
import inspect
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import fastsw
from fastsw.pretokenizers import BasePretokenizer, make_pretokenizer, pretokenizer_from_config, register, registered
from fastsw.pretokenizers import unregister
from fastsw.pretokenizers.registry import valid_names_message

from conftest import run, write_jsonl

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "fastsw"


class ToySyllables(BasePretokenizer):
    """Words (a leading space kept) cut into pieces of at most ``size`` characters: ``toy-syllables`` (size 3) or
    ``toy-syllables[N]``. Only the hooks without a default, plus a name parameter."""

    mode = "toy-syllables"
    _WORDS = re.compile(r" ?\w+| ?[^\w\s]+|\s+")

    def __init__(self, size: int = 3):
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"toy-syllables size must be an int >= 1, not {size!r}")
        self.size = size

    @property
    def name(self):
        return f"toy-syllables[{self.size}]"

    @classmethod
    def from_name(cls, name):
        m = re.fullmatch(r"toy-syllables(?:\[(\d+)\])?", name)
        if m is None:
            raise ValueError(f"unknown pre-tokenizer {name!r}; toy-syllables or toy-syllables[N]")
        return cls(int(m.group(1) or 3))

    def pretokenize_reference(self, text):
        n = self.size
        return [word[i : i + n] for word in self._WORDS.findall(text) for i in range(0, len(word), n)]

    def to_config(self):
        return {"mode": self.mode, "size": self.size}

    @classmethod
    def from_config(cls, config):
        unknown = set(config) - {"mode", "size"}
        if unknown:
            raise ValueError(f"unknown toy-syllables settings: {', '.join(sorted(unknown))}")
        return cls(config.get("size", 3))


@pytest.fixture
def toy():
    register("toy-syllables", ToySyllables)
    try:
        yield ToySyllables
    finally:
        unregister("toy-syllables")


@pytest.fixture(scope="module")
def docs(sample_docs):
    return sample_docs[::8]  # every language


# ---- a new family, through the API ---------------------------------------------------------------------------------


def test_toy_is_found_by_its_names_and_configs(toy):
    assert "toy-syllables" in registered() and "toy-syllables" in valid_names_message()
    p = make_pretokenizer("toy-syllables[2]")
    assert type(p) is toy and p.size == 2
    assert p.pretokenize("Hello, wide world!") == ["He", "ll", "o", ",", " w", "id", "e", " w", "or", "ld", "!"]
    assert make_pretokenizer(" toy-syllables ") == toy(3)
    assert pretokenizer_from_config(p.to_config()) == p and make_pretokenizer(p.to_config()) == p
    assert fastsw.Pretokenizer.from_config(p.to_config()) == p  # the regex family hands other modes on
    with pytest.raises(ValueError, match="toy-syllables or toy-syllables"):
        make_pretokenizer("toy-syllables[x]")


def test_toy_trains_saves_loads_encodes_and_decodes(toy, docs, tmp_path):
    size = 3
    tok = fastsw.train(docs, algo="bpe", vocab_size=500, pretokenizer=f"toy-syllables[{size}]")
    assert type(tok.pretokenizer) is toy and len(tok.merges) == 500 - len(tok.alphabet)
    # merges never cross a piece: no token is longer than a piece, while the default pre-tokenizer makes longer ones
    longest = max(len(tok.decode([t])) for t in range(len(tok.alphabet), tok.n_vocab))
    assert longest == size
    default = fastsw.train(docs, algo="bpe", vocab_size=500)
    assert max(len(default.decode([t])) for t in range(len(default.alphabet), default.n_vocab)) > size
    for text in docs[:50]:
        ids = tok.encode(text)
        assert tok.decode(ids) == text
        assert all(len(tok.decode([t])) <= size for t in ids)
    # saved and loaded: the model file records the toy's config, and the loaded model encodes the same
    path = tmp_path / "toy.json"
    tok.save(path)
    assert json.loads(path.read_text(encoding="utf-8"))["pretokenizer"] == {"mode": "toy-syllables", "size": 3}
    again = fastsw.load(path)
    assert again.pretokenizer == tok.pretokenizer
    assert again.encode_batch(docs[:50]) == tok.encode_batch(docs[:50])


def test_toy_two_paths_one_answer(toy, docs):
    """The reference backend and the compiled one train and encode the toy identically (it has no fast hooks: the
    defaults carry it)."""
    fast = fastsw.train(
        docs, algo="superbpe", vocab_size=520, supermerges=20, pretokenizer="toy-syllables", backend="numba"
    )
    ref = fastsw.train(
        docs, algo="superbpe", vocab_size=520, supermerges=20, pretokenizer="toy-syllables", backend="python"
    )
    assert fast.merges == ref.merges and fast.n_super > 0
    sample = docs[:40]
    assert fast.encode_batch(sample) == [fast.encode(t, backend="python") for t in sample]
    assert [fast.decode(ids) for ids in fast.encode_batch(sample)] == sample


def test_toy_through_the_cli(toy, docs, tmp_path, capsys):
    data = write_jsonl(tmp_path / "d.jsonl", docs[:120])
    model = tmp_path / "m.json"
    code, out, err = run(
        capsys,
        "train",
        data,
        "--pretokenizer",
        "toy-syllables[2]",
        "--algo",
        "bpe",
        "--vocab-size",
        "400",
        "-o",
        model,
        "--no-progress",
    )
    assert code == 0, err
    assert json.loads(model.read_text(encoding="utf-8"))["pretokenizer"] == {"mode": "toy-syllables", "size": 2}
    text = tmp_path / "t.txt"
    text.write_text("Hello, wide world!\n", encoding="utf-8")
    code, ids, err = run(capsys, "encode", "-m", model, text)
    assert code == 0, err
    (tmp_path / "ids.txt").write_text(ids, encoding="utf-8")
    code, out, err = run(capsys, "decode", "-m", model, tmp_path / "ids.txt")
    assert code == 0 and out == "Hello, wide world!\n", (out, err)
    code, out, err = run(capsys, "pretokenize", "--pretokenizer", "toy-syllables[4]", text)
    assert code == 0 and json.loads(out) == ["Hell", "o", ",", " wid", "e", " wor", "ld", "!", "\n"], err
    code, out, err = run(capsys, "pretokenize", "--pretokenizer", "toy-syllables[0]", text)
    assert code == 2 and "size must be an int >= 1" in err and "Traceback" not in err


def test_an_installed_family_is_found_by_a_fresh_process(tmp_path, docs):
    """A package that declares the toy in the ``fastsw.pretokenizers`` entry-point group: ``fastsw train
    --pretokenizer`` finds it by name in a new process, and ``fastsw encode`` finds it again from the model file."""
    site = tmp_path / "site"
    site.mkdir()
    source = inspect.getsource(ToySyllables)
    (site / "toy_syllables_plugin.py").write_text(
        "import re\nfrom fastsw.pretokenizers import BasePretokenizer\n\n\n" + textwrap.dedent(source), encoding="utf-8"
    )
    info = site / "toy_syllables_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: toy-syllables-plugin\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[fastsw.pretokenizers]\ntoy-syllables = toy_syllables_plugin:ToySyllables\n", encoding="utf-8"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(site)]))
    data = write_jsonl(tmp_path / "d.jsonl", docs[:60])
    model = tmp_path / "m.json"

    def fastsw_cli(*args, stdin=None):
        return subprocess.run(
            [sys.executable, "-m", "fastsw", *map(str, args)],
            env=env,
            input=stdin,
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=600,
        )

    done = fastsw_cli(
        "train", data, "--pretokenizer", "toy-syllables[2]", "--vocab-size", "350", "-o", model, "--no-progress"
    )
    assert done.returncode == 0, done.stderr
    done = fastsw_cli("encode", "-m", model, "-", stdin="Hello, wide world!\n")
    assert done.returncode == 0, done.stderr
    back = fastsw_cli("decode", "-m", model, "-", stdin=done.stdout)
    assert back.returncode == 0 and back.stdout == "Hello, wide world!\n", back.stderr
    # without the package the name is unknown: one error that lists the valid names
    done = subprocess.run(
        [sys.executable, "-m", "fastsw", "pretokenize", "--pretokenizer", "toy-syllables", "-"],
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        input="a\n",
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 2 and "valid pre-tokenizers: script (default)" in done.stderr, done.stderr


# ---- registering ---------------------------------------------------------------------------------------------------


def test_register_refuses_taken_names_bad_names_and_non_families(toy):
    with pytest.raises(ValueError, match="is taken"):
        register("toy-syllables", ToySyllables)
    with pytest.raises(ValueError, match="is taken"):
        register("script", ToySyllables)
    with pytest.raises(ValueError, match="letters, digits"):
        register("toy[1]", ToySyllables)
    with pytest.raises(TypeError, match="subclass of fastsw.pretokenizers.BasePretokenizer"):
        register("toy-object", object)
    register("toy-syllables", ToySyllables, replace=True)  # allowed when asked
    with pytest.raises(KeyError):
        unregister("toy-never-registered")


def test_register_as_a_decorator_and_an_unknown_name_error():
    @register("toy-upper-case-words")
    class Words(BasePretokenizer):
        mode = "toy-upper-case-words"

        def pretokenize_reference(self, text):
            return re.findall(r"\s*\S+|\s+", text)

        def to_config(self):
            return {"mode": self.mode}

        @classmethod
        def from_config(cls, config):
            return cls()

    try:
        assert make_pretokenizer("toy-upper-case-words").pretokenize("a  b") == ["a", "  b"]
    finally:
        unregister("toy-upper-case-words")
    with pytest.raises(ValueError, match="unknown pre-tokenizer 'toy-upper-case-words'; valid pre-tokenizers"):
        make_pretokenizer("toy-upper-case-words")
    with pytest.raises(ValueError, match="pretokenizer mode 'toy-upper-case-words' is not one of script"):
        pretokenizer_from_config({"mode": "toy-upper-case-words"})


# ---- the built-in families -----------------------------------------------------------------------------------------

BUILT_IN_NAMES = [
    "script",
    "simple",
    "none",
    "boundary[w]",
    "boundary[w,p]+shift",
    "boundary[w,p,d]+caps",
    "script-v3",
    "script-v3+boundary[w,p,d]+caps",
]


@pytest.mark.parametrize("name", BUILT_IN_NAMES)
def test_built_in_families_round_trip(name):
    p = make_pretokenizer(name)
    assert isinstance(p, BasePretokenizer) and p.name == name
    assert make_pretokenizer(p) is p
    again = pretokenizer_from_config(json.loads(json.dumps(p.to_config())))
    assert type(again) is type(p) and again == p
    text = "The CAT sat, 3 times on the mat. 日本語"
    assert p.pretokenize(text) == p.pretokenize_reference(text)


def test_every_registered_family_subclasses_the_base():
    for name in registered():
        p = make_pretokenizer(name) if name != "boundary" else make_pretokenizer("boundary[w]")
        assert isinstance(p, BasePretokenizer), name
        assert p.to_config()["mode"] == name, name


def test_the_base_declares_every_hook():
    """Every hook is declared on the base with its default, and documented with who calls or reads it: a method or
    property by its docstring, a plain attribute by the ``#:`` comment above it."""
    source = inspect.getsource(BasePretokenizer).splitlines()
    for hook in BasePretokenizer.HOOKS:
        member = inspect.getattr_static(BasePretokenizer, hook)
        if isinstance(member, (property, classmethod, staticmethod)) or inspect.isfunction(member):
            doc = inspect.getdoc(getattr(BasePretokenizer, hook)) or ""
        else:
            at = next(i for i, line in enumerate(source) if re.match(rf"    {hook}\b.*=", line))
            comment = []
            while source[at - 1 - len(comment)].strip().startswith("#:"):
                comment.append(source[at - 1 - len(comment)])
            doc = " ".join(reversed(comment))
        assert "Called by" in doc or "Read by" in doc or "registry" in doc, (hook, doc)


# ---- no probing ----------------------------------------------------------------------------------------------------


def _probes(tree: ast.AST):
    """``hasattr(obj, name)`` / ``getattr(obj, name, ...)`` calls whose object is a pre-tokenizer (its expression
    names one: ``pretok``, ``self.pretokenizer``, ...) or whose name is one of the interface's hooks (``atoms``
    aside: alphabets have ``atoms`` too, and alphabets are not pre-tokenizers)."""
    hooks = set(BasePretokenizer.HOOKS) - {"atoms"}
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("hasattr", "getattr")
            and len(node.args) >= 2
        ):
            continue
        target = ast.unparse(node.args[0])
        name = node.args[1].value if isinstance(node.args[1], ast.Constant) else None
        if "pretok" in target.lower() or name in hooks:
            yield node.lineno, ast.unparse(node)


def test_no_module_probes_a_pretokenizer():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for line, call in _probes(ast.parse(path.read_text(encoding="utf-8"))):
            found.append(f"{path.relative_to(REPO)}:{line}: {call}")
    assert not found, "call the hook the base class declares instead:\n" + "\n".join(found)


def test_the_probe_finder_finds_probes():
    tree = ast.parse(
        "a = getattr(pretok, 'run_break', None)\nb = hasattr(tok.pretokenizer, 'show')\n"
        "c = getattr(x, 'native_counter', None)\nd = hasattr(self.alphabet, 'atoms')\n"
    )
    assert [line for line, _ in _probes(tree)] == [1, 2, 3]


def test_the_interface_docstring_examples_run():
    import doctest

    from fastsw.pretokenizers import base, registry

    for module in (base, registry):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted >= 3 and result.failed == 0, module.__name__
