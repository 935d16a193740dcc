"""Training options at their limits: vocabulary sizes far beyond what a corpus can reach, sizes beyond int64,
and the warning when the vocabulary falls short.

An unreachable ``vocab_size`` must cost what a reachable one costs (the merge loops stop when pairs run out,
and no buffer is sized by ``vocab_size``), on both backends, and give the same model; falling short warns
(``fastsw.VocabularyNotReachedWarning``) with the note the CLI prints.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import fastsw
from fastsw import cli

from conftest import shared_path

REPO_ROOT = Path(fastsw.__file__).resolve().parents[1]

# (algo, unreachable sizes, a reachable size that also runs out), sizes as (vocab_size, supermerges)
VARIANTS = [
    ("bpe", [(2**31, None), (10**10, None), (2**63 - 1, None)], (5000, None)),
    ("boundless", [(2**31, None), (10**10, None)], (5000, None)),
    ("superbpe", [(2**31, 2**30), (10**10, 10**9)], (20000, 10000)),
]

# Run in a child whose address space is capped at 4 GB: before buffers were sized by what the corpus can
# produce, vocab_size=2**31 asked the Numba kernel for ~50 GB (OOM-killed at 24 GB without the cap) and
# 10**10 raised MemoryError; with the cap both fail fast instead of taking the machine down.
CHILD = textwrap.dedent("""
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    import fastsw
    docs, variants, corpus, model = json.loads(sys.stdin.read())
    out = []
    for algo, unreachable, reachable in variants:
        for backend in ("numba", "python"):
            for vocab_size, supermerges in [reachable] + unreachable:
                tok = fastsw.train(docs, algo=algo, vocab_size=vocab_size, supermerges=supermerges,
                                   backend=backend)
                out.append([algo, backend, vocab_size, tok.vocab_size,
                            [[m.left, m.right, m.count, m.super] for m in tok.merges],
                            tok.training_info["notes"]])
    print(json.dumps(out))
    from fastsw import cli
    for vocab_size in (2 ** 31, 10 ** 10):
        code = cli.main(["train", corpus, "--algo", "bpe", "--vocab-size", str(vocab_size), "-o", model,
                         "--no-progress"])
        print(code, file=sys.stderr)
        assert code == 0
""")


def _small_corpus():
    return shared_path("corpus/fixtures/mixed_tiny.txt").read_text(encoding="utf-8").split("\n")[:40]


def test_an_unreachable_vocab_size_costs_what_a_reachable_one_costs(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])))
    docs = _small_corpus()
    corpus = tmp_path / "tiny.txt"
    corpus.write_text("\n".join(docs), encoding="utf-8")
    r = subprocess.run(
        [sys.executable, "-c", CHILD],
        input=json.dumps([docs, VARIANTS, str(corpus), str(tmp_path / "m.json")]),
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    # the CLI: the usual summary with its note, no traceback
    assert r.stderr.count("note:        pairs ran out after") == 2 and "Traceback" not in r.stderr
    results = json.loads(r.stdout)
    assert len(results) == 2 * sum(1 + len(unreachable) for _, unreachable, _ in VARIANTS)
    by_algo = {}
    for algo, backend, vocab_size, got_size, merges, notes in results:
        by_algo.setdefault(algo, []).append((backend, vocab_size, got_size, merges))
        assert any("ran out" in note for note in notes), (algo, backend, vocab_size, notes)
    for algo, runs in by_algo.items():
        _, _, size0, merges0 = runs[0]
        assert size0 < 5000
        for backend, vocab_size, got_size, merges in runs:
            assert (got_size, merges) == (size0, merges0), (algo, backend, vocab_size)


@pytest.mark.parametrize(
    "kw,message",
    [
        ({"vocab_size": 2**63}, "vocab_size=9223372036854775808 is beyond 2\\*\\*63-1"),
        ({"vocab_size": 2**70}, "is beyond 2\\*\\*63-1"),
        ({"vocab_size": 2**70, "algo": "superbpe", "supermerges": 2**69}, "is beyond 2\\*\\*63-1"),
        ({"vocab_size": 100}, "smaller than the 243-token alphabet; use vocab_size >= 244"),
        ({"vocab_size": 300, "algo": "superbpe", "supermerges": 100}, "smaller than the 243-token alphabet"),
    ],
)
def test_vocab_sizes_beyond_int64_or_below_the_alphabet_are_one_error(backend, kw, message):
    with pytest.raises(ValueError, match=message):
        fastsw.train(["some text"], backend=backend, **{"algo": "bpe", **kw})


@pytest.mark.parametrize(
    "argv,words",
    [
        (["--vocab-size", str(2**63)], f"--vocab-size {2**63} is beyond 2**63-1"),
        (["--vocab-size", str(2**70)], f"--vocab-size {2**70} is beyond 2**63-1"),
        (["--vocab-size", "100"], "--vocab-size 100 is smaller than the 243-token alphabet; use --vocab-size >= 244"),
    ],
)
def test_cli_vocab_sizes_beyond_int64_or_below_the_alphabet(tmp_path, capsys, argv, words):
    corpus = tmp_path / "tiny.txt"
    corpus.write_text("the cat sat on the mat\nthe dog sat on the log\n" * 5, encoding="utf-8")
    code = cli.main(["train", str(corpus), "--algo", "bpe", "-o", str(tmp_path / "m.json"), "--no-progress", *argv])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("fastsw: error: ") and err.count("\n") == 1 and words in err, err
    assert not (tmp_path / "m.json").exists()


# ---- running out of pairs warns (item: "silent in Python") ---------------------------------------------------------


def test_the_readme_superbpe_example_warns_with_the_cli_notes(backend):
    with pytest.warns(fastsw.VocabularyNotReachedWarning) as caught:
        sup = fastsw.train(["doc one", "doc two"], algo="superbpe", vocab_size=1000, supermerges=200, backend=backend)
    assert sup.vocab_size == 253
    notes = sup.training_info["notes"]
    assert notes == [
        "pairs ran out after 8 of 557 phase-1 merges; the model is smaller than requested",
        "supermerge pairs ran out after 2 of 200 supermerges",
    ]
    assert [str(w.message) for w in caught] == notes
    assert all(w.category is fastsw.VocabularyNotReachedWarning and issubclass(w.category, UserWarning) for w in caught)
    assert caught[0].filename == __file__  # points at the caller of train


def test_each_way_of_falling_short_warns():
    cases = [
        (dict(inputs=[""], algo="bpe", vocab_size=300), "the corpus is empty"),
        (dict(inputs=["aaaa bbbb"], algo="bpe", vocab_size=300), "pairs ran out after"),
        (dict(inputs=["abcdefghijklmnop"], algo="boundless", vocab_size=250), "BoundlessBPE stopped at vocabulary"),
    ]
    for kwargs, start in cases:
        with pytest.warns(fastsw.VocabularyNotReachedWarning, match=start):
            tok = fastsw.train(**kwargs)
        assert any(note.startswith(start) for note in tok.training_info["notes"])


def test_a_reached_vocabulary_does_not_warn():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tok = fastsw.train(["the cat sat on the mat"] * 5, algo="bpe", vocab_size=250)
    assert tok.vocab_size == 250 and tok.training_info["notes"] == []


def test_users_can_filter_the_warning():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", fastsw.VocabularyNotReachedWarning)
        assert fastsw.train(["doc one"], algo="bpe", vocab_size=1000).vocab_size < 1000


def test_the_cli_prints_the_note_once_and_no_python_warning(tmp_path, capsys):
    corpus = tmp_path / "tiny.txt"
    corpus.write_text("doc one\ndoc two\n", encoding="utf-8")
    code = cli.main(
        [
            "train",
            str(corpus),
            "--algo",
            "superbpe",
            "--vocab-size",
            "1000",
            "--supermerges",
            "200",
            "-o",
            str(tmp_path / "m.json"),
            "--no-progress",
        ]
    )
    err = capsys.readouterr().err
    assert code == 0, err
    assert err.count("note:        pairs ran out after 8 of 557") == 1
    assert err.count("note:        supermerge pairs ran out after 2 of 200") == 1
    assert "Warning" not in err


# ---- integer options: any numbers.Integral but bool ------------------------------------------------------------


def test_numpy_integers_are_integer_options(tmp_path, backend):
    import numpy as np

    docs = ["the cat sat on the mat, the dog sat on the log"] * 10
    plain = fastsw.train(
        docs,
        algo="superbpe",
        vocab_size=280,
        supermerges=10,
        greedy_split=True,
        min_count_floor=2,
        max_ngram_len=4,
        backend=backend,
    )
    tok = fastsw.train(
        docs,
        algo="superbpe",
        vocab_size=np.int64(280),
        supermerges=np.int32(10),
        greedy_split=True,
        min_count_floor=np.uint8(2),
        max_ngram_len=np.int16(4),
        workers=np.int64(1),
        backend=backend,
    )
    assert tok.merges == plain.merges
    options = tok.training_info["options"]
    assert [type(options[k]) for k in ("vocab_size", "supermerges", "min_count_floor", "max_ngram_len")] == [int] * 4
    tok.save(tmp_path / "m.json")  # the options are JSON ints
    assert fastsw.load(tmp_path / "m.json").merges == plain.merges


@pytest.mark.parametrize(
    "kw,name",
    [
        ({"vocab_size": True}, "vocab_size"),
        ({"vocab_size": 300.0}, "vocab_size"),
        ({"algo": "superbpe", "supermerges": True}, "supermerges"),
        ({"min_count_floor": True}, "min_count_floor"),
        ({"max_ngram_len": 4.0}, "max_ngram_len"),
        ({"workers": True}, "workers"),
        ({"workers": 0}, "workers"),
        ({"workers": -1}, "workers"),
    ],
)
def test_bool_and_float_are_not_integer_options(kw, name):
    args = {"algo": "boundless", "vocab_size": 300, **kw}
    with pytest.raises(ValueError, match=f"{name} must be a"):
        fastsw.train(["some text"], **args)


# ---- workers beyond the cores -------------------------------------------------------------------------------------


def test_train_caps_workers_at_the_cores_with_a_warning(monkeypatch):
    monkeypatch.setattr(fastsw.trainers.train, "default_workers", lambda: 2)
    docs = ["the cat sat on the mat"] * 20
    with pytest.warns(
        fastsw.OptionWarning, match=r"^workers=1000 is more than the 2 cores this process may use; counting with 2$"
    ) as w:
        tok = fastsw.train(docs, algo="bpe", vocab_size=250, workers=1000)
    assert w[0].filename == __file__
    assert tok.training_info["counting_workers"] == 2
    assert tok.merges == fastsw.train(docs, algo="bpe", vocab_size=250, workers=1).merges


@pytest.mark.parametrize("command", ["count", "train"])
def test_cli_caps_workers_at_the_cores_with_a_note(tmp_path, capsys, monkeypatch, command):
    import fastsw.corpus.counting

    monkeypatch.setattr(fastsw.corpus.counting, "default_workers", lambda: 2)
    corpus = tmp_path / "tiny.txt"
    corpus.write_text("the cat sat on the mat\nthe dog sat on the log\n" * 5, encoding="utf-8")
    extra = ["--algo", "bpe", "--vocab-size", "250"] if command == "train" else []
    outputs = []
    for workers in ("1000", "1"):
        outputs.append(tmp_path / f"out{workers}")
        code = cli.main([command, str(corpus), "-o", str(outputs[-1]), "--workers", workers, "--no-progress", *extra])
        err = capsys.readouterr().err
        assert code == 0, err
        note = "fastsw: note: --workers 1000 is more than the 2 cores this process may use; counting with 2\n"
        assert (note in err) == (workers == "1000"), err
        assert "Warning" not in err
    if command == "count":
        assert outputs[0].read_bytes() == outputs[1].read_bytes()
    else:
        assert fastsw.load(outputs[0]).merges == fastsw.load(outputs[1]).merges


def test_cli_rejects_workers_below_one(tmp_path, capsys):
    corpus = tmp_path / "tiny.txt"
    corpus.write_text("the cat\n", encoding="utf-8")
    for value in ("0", "-3"):
        code = cli.main(["count", str(corpus), "-o", str(tmp_path / "c"), "--workers", value])
        err = capsys.readouterr().err
        assert code == 2 and err.startswith("fastsw: error: ") and err.count("\n") == 1, err


# ---- text_field with plain-text inputs --------------------------------------------------------------------------


def _inputs(tmp_path):
    txt = tmp_path / "plain.txt"
    txt.write_text("the cat sat\non the mat\n", encoding="utf-8")
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_text(json.dumps({"body": "a body text", "text": "not this"}) + "\n", encoding="utf-8")
    return txt, jsonl


def test_text_field_with_a_plain_text_file_warns(tmp_path):
    import warnings

    txt, jsonl = _inputs(tmp_path)
    with pytest.warns(
        fastsw.OptionWarning,
        match=r"^text_field='body' is ignored for .*plain\.txt: only "
        r"\.jsonl/\.ndjson inputs are JSON objects with fields",
    ) as caught:
        docs = list(fastsw.iter_documents([jsonl, txt], text_field="body"))
    assert docs == ["a body text", "the cat sat\n", "on the mat\n"]
    assert len(caught) == 1 and "docs.jsonl" not in str(caught[0].message)
    with pytest.warns(fastsw.OptionWarning, match="text_field='body' is ignored"):
        fastsw.train(txt, algo="bpe", vocab_size=250, text_field="body")
    with warnings.catch_warnings():  # the default field, or a field for JSON Lines only: no warning
        warnings.simplefilter("error", fastsw.OptionWarning)
        assert list(fastsw.iter_documents(txt)) == ["the cat sat\n", "on the mat\n"]
        assert list(fastsw.iter_documents([jsonl], text_field="body")) == ["a body text"]
        assert list(fastsw.iter_documents([jsonl])) == ["not this"]


@pytest.mark.parametrize("command", ["count", "train", "encode", "pretokenize"])
def test_cli_text_field_with_a_plain_text_file_is_a_note(tmp_path, capsys, command):
    txt, jsonl = _inputs(tmp_path)
    model = tmp_path / "m.json"
    fastsw.train(["the cat sat on the mat"], algo="bpe", vocab_size=250).save(model)
    argv = {
        "count": ["count", "-o", str(tmp_path / "c")],
        "train": ["train", "--algo", "bpe", "--vocab-size", "250", "-o", str(tmp_path / "t.json")],
        "encode": ["encode", "-m", str(model)],
        "pretokenize": ["pretokenize"],
    }[command]
    code = cli.main(
        [
            *argv,
            str(txt),
            str(jsonl),
            "--text-field",
            "body",
            *(["--no-progress"] if command in ("count", "train") else []),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    notes = [line for line in err.splitlines() if line.startswith("fastsw: note:")]
    assert notes == [
        f"fastsw: note: --text-field body is ignored for {txt}: only .jsonl/.ndjson inputs are JSON "
        "objects with fields; a plain-text file is cut into documents by doc_mode"
    ]
    assert "Warning" not in err
