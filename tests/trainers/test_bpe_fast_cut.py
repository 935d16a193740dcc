"""Training at scale: BoundlessBPE's candidate cut keeps the model exact, and a table that cannot fit fails early.

``fastsw.trainers.bpe_fast.cut_candidates`` splits the supermerge candidates wherever the pair's weight (positions times
count) is at or below the smallest regular-merge count, since no supermerge can ever be taken there. These tests
check that it cuts real text a lot and changes nothing, including the case where every pair is cut (the sentinel
word keeps Algorithm 1 replaying the regular merges). ``fastsw.corpus.memory`` checks each table's estimate against the
memory the process can get: under a small ``RLIMIT_AS`` a phase 2 that cannot fit raises ``MemoryLimitError``
before allocating, and the CLI reports it as one error line without writing a model.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import fastsw
from fastsw.alphabet import default_alphabet, get_profile
from fastsw.corpus.counting import count_corpus
from fastsw.trainers.bpe_fast import FastBackend, cut_candidates, pack_candidates, unpack_candidates
from fastsw.corpus.memory import MemoryLimitError, available_memory
from fastsw.trainers.superword import ReferenceBackend, boundless_phase2
from fastsw.trainers.train import phase1_tokenizer

from conftest import HYPOTHESIS_EXAMPLES, assert_error, read_jsonl_texts, run, shared_path, write_jsonl

REPO_ROOT = Path(fastsw.__file__).resolve().parents[1]


def _boundless_both(regular, cands, token_bytes, n_alphabet, profile):
    ref_bytes, fast_bytes = list(token_bytes), list(token_bytes)
    ref = boundless_phase2(regular, cands, ref_bytes, n_alphabet, get_profile(profile))
    fast = FastBackend().boundless(regular, pack_candidates(cands), fast_bytes, n_alphabet, get_profile(profile))
    assert fast == ref
    assert fast_bytes == ref_bytes
    return ref


def test_every_pair_cut_still_replays_the_regular_merges():
    # Every pair weighs 1 or 2, below the smallest regular count (3): the cut leaves only the sentinel word
    # [0, 1]. Pairs are left, so Algorithm 1 replays all three regular merges (without the sentinel the merge
    # loop would see no pair and drop them).
    cands = {(0, 1): 1, (2, 3, 2): 2, (1, 0): 1}
    cut = cut_candidates(pack_candidates(cands), 3, 4)
    assert unpack_candidates(cut) == {(0, 1): 1}
    steps = _boundless_both([(0, 1, 5), (2, 3, 4), (1, 1, 3)], cands, [b"a", b"b", b"c", b"d"], 4, "paper")
    assert [s[0] for s in steps] == ["r", "r", "r"]


def test_cut_keeps_pairs_above_the_floor_whole():
    # (1, 2) weighs 3 + 2 = 5 > floor 2: both candidates keep it; (0, 1) weighs 3 and stays too;
    # (2, 3) weighs 2 <= 2: cut there, and the piece [3] (one token) is dropped.
    cands = {(0, 1, 2): 3, (1, 2, 3): 2}
    cut = unpack_candidates(cut_candidates(pack_candidates(cands), 2, 4))
    assert cut == {(0, 1, 2): 3, (1, 2): 2, (2, 3): 2}  # the last one is the sentinel of the cut at (2, 3)


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None)
@given(
    cands=st.dictionaries(
        st.lists(st.integers(0, 5), min_size=2, max_size=10).map(tuple), st.integers(0, 8), max_size=14
    ),
    regular_counts=st.lists(st.integers(1, 20), min_size=1, max_size=20),
    profile=st.sampled_from(["paper", "hf"]),
)
def test_cut_matches_reference_on_random_candidates(cands, regular_counts, profile):
    # high floors (regular counts up to 20 against candidate counts up to 8) cut most pairs; counts of 0 too
    regular = [(i % 6, (i * 5 + 1) % 6, c) for i, c in enumerate(sorted(regular_counts, reverse=True))]
    _boundless_both(regular, cands, [bytes([97 + i]) for i in range(6)], 6, profile)


def test_cut_on_real_text_is_large_and_exact():
    docs = read_jsonl_texts(shared_path("corpus/en/heldout.jsonl"))
    counts = count_corpus(docs, fastsw.Pretokenizer(), collect_runs=True)
    alph = default_alphabet("paper")
    fast, ref = FastBackend(), ReferenceBackend()
    merges, words, token_bytes = fast.phase1(counts, alph, "paper", 1500)
    tok1 = phase1_tokenizer(alph, merges, fastsw.Pretokenizer(), "paper")
    packed = fast.candidates(counts, words, tok1)
    cands = unpack_candidates(packed)
    floor = min(c for _, _, c in merges)
    cut = cut_candidates(tuple(packed), floor, len(tok1.vocab))
    assert len(cut[0]) < 0.5 * len(packed[0])  # measured: ~25 % of the tokens are left
    steps = fast.boundless(merges, packed, list(tok1.vocab), len(alph), get_profile("paper"))
    assert len(packed[0]) == len(cut[0])  # the list's arrays were replaced by the cut ones
    assert steps == boundless_phase2(merges, cands, list(tok1.vocab), len(alph), get_profile("paper"))
    assert any(kind == "s" for kind, *_ in steps)
    assert ref.candidates(counts, ref.phase1(counts, alph, "paper", 1500)[1], tok1) == cands


# BoundlessBPE's phase 2 on 2 M candidates of 8 tokens (216 MB by the cut's estimate) under an address-space limit
# 64 MB above
# what the child already uses: MemoryLimitError before the kernel allocates anything, then the same call on a
# small table works under the same limit.
CHILD = textwrap.dedent("""
    import resource, sys
    import numpy as np
    from fastsw.alphabet import get_profile
    from fastsw.trainers.bpe_fast import FastBackend, warmup
    from fastsw.corpus.memory import MemoryLimitError, available_memory
    warmup()
    n, length = 2_000_000, 8
    rng = np.random.default_rng(0)
    big = [rng.integers(0, 300, n * length).astype(np.int32), np.arange(0, n * length + 1, length, dtype=np.int64),
           np.ones(n, dtype=np.int64)]
    small = [np.array([1, 2, 3, 1, 2], np.int32), np.array([0, 3, 5], np.int64), np.array([4, 3], np.int64)]
    with open("/proc/self/status") as f:
        size = next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (size + (64 << 20), resource.RLIM_INFINITY))
    print("available", available_memory(), file=sys.stderr)
    vocab = [bytes([i % 256]) * (1 + i // 256) for i in range(300)]
    try:
        FastBackend().boundless([(1, 2, 2)], big, list(vocab), 256, get_profile("paper"))
    except MemoryLimitError as e:
        print("LIMIT " + str(e))
    steps = FastBackend().boundless([(1, 2, 2), (3, 3, 1)], small, list(vocab), 256, get_profile("paper"))
    print("SMALL", steps)
""")


def test_phase2_fails_early_under_an_address_space_limit():
    env = dict(
        os.environ,
        MALLOC_ARENA_MAX="1",
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
    )
    r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.splitlines()
    assert lines[0].startswith("LIMIT phase 2 (cutting the candidates) needs about 216 MB"), r.stdout
    assert "2,000,000 distinct supermerge candidates of 16,000,000 tokens" in lines[0]
    assert "of memory is available; train on less text" in lines[0]
    assert lines[1].startswith("SMALL [('s', 300, 1, 2, 7)"), r.stdout


def test_cli_reports_a_table_that_cannot_fit_as_one_error(tmp_path, capsys, monkeypatch):
    corpus = write_jsonl(tmp_path / "c.jsonl", read_jsonl_texts(shared_path("corpus/en/heldout.jsonl"), 60))
    model = tmp_path / "m.json"
    monkeypatch.setenv("FASTSW_MEMORY_LIMIT", "1M")  # less than the process already holds: nothing is available
    assert available_memory() == 0
    code, _, err = run(
        capsys, "train", corpus, "--algo", "boundless", "--vocab-size", "600", "-o", model, "--no-progress"
    )
    assert_error(
        code,
        err,
        "building the supermerge candidates needs about",
        "distinct letter runs",
        "0 bytes of memory is available",
    )
    assert not model.exists()
    monkeypatch.setenv("FASTSW_MEMORY_LIMIT", "lots")
    with pytest.raises(ValueError, match="FASTSW_MEMORY_LIMIT='lots' is not a size"):
        available_memory()
    monkeypatch.delenv("FASTSW_MEMORY_LIMIT")
    code, _, err = run(capsys, "train", corpus, "--algo", "bpe", "--vocab-size", "600", "-o", model, "--no-progress")
    assert code == 0, err  # plain BPE builds no candidate table
    with pytest.raises(MemoryLimitError) as info:
        monkeypatch.setenv("FASTSW_MEMORY_LIMIT", "1M")
        fastsw.train(
            read_jsonl_texts(shared_path("corpus/en/heldout.jsonl"), 60),
            algo="superbpe",
            vocab_size=600,
            supermerges=50,
        )
    assert isinstance(info.value, MemoryError) and isinstance(info.value, ValueError)


def test_counting_stops_early_when_its_tables_would_not_fit(monkeypatch, capsys, tmp_path):
    # The guard compares the tables' growth (times FINISH_FACTOR, made huge here) with the memory left,
    # every COUNT_CHECK_BYTES of text (here every batch): counting stops with one clear error.
    from fastsw.corpus import memory

    monkeypatch.setattr(memory, "COUNT_CHECK_BYTES", 1)
    monkeypatch.setattr(memory.CountingGuard, "FINISH_FACTOR", 1e12)
    docs = read_jsonl_texts(shared_path("corpus/en/heldout.jsonl"))
    with pytest.raises(
        MemoryLimitError, match=r"^counting stopped after [\d.]+ (bytes|kB|MB) of text: its count tables take"
    ):
        count_corpus(docs * 20, fastsw.Pretokenizer(), collect_runs=True, threads=2)
    corpus = write_jsonl(tmp_path / "c.jsonl", docs * 20)
    code, _, err = run(capsys, "count", corpus, "-o", tmp_path / "c.counts.gz")
    assert_error(code, err, "counting stopped after", "of memory is available")
    assert not (tmp_path / "c.counts.gz").exists()


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None)
@given(
    cands=st.dictionaries(
        st.lists(st.integers(0, 5), min_size=2, max_size=10).map(tuple), st.integers(0, 8), max_size=14
    ),
    n_super=st.integers(0, 12),
    cut_factor=st.sampled_from([1, 2, 8]),
    profile=st.sampled_from(["paper", "hf"]),
)
def test_superbpe_cut_at_a_guessed_floor_is_exact_or_rerun(cands, n_super, cut_factor, profile):
    # A small CUT_FACTOR makes the guessed floor too high for many examples: the driver must notice a
    # supermerge at or below it and run again on the whole candidates.
    from fastsw.trainers import bpe_fast as fast_train
    from fastsw.trainers.superword import superbpe_phase2

    token_bytes = [bytes([97 + i]) for i in range(6)]
    ref_bytes, fast_bytes = list(token_bytes), list(token_bytes)
    ref = superbpe_phase2(cands, ref_bytes, n_super, get_profile(profile))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fast_train, "CUT_FACTOR", cut_factor)
        mp.setattr(fast_train, "PRUNE_MIN", 1)
        fast = FastBackend().superbpe(pack_candidates(cands), fast_bytes, n_super, get_profile(profile))
    assert fast == ref
    assert fast_bytes == ref_bytes


def test_superbpe_cut_on_real_text_is_exact(monkeypatch):
    from fastsw.trainers import bpe_fast as fast_train

    monkeypatch.setattr(fast_train, "PRUNE_MIN", 1)  # the held-out text has fewer pairs than the default minimum
    from fastsw.trainers.superword import superbpe_phase2

    docs = read_jsonl_texts(shared_path("corpus/en/heldout.jsonl"))
    counts = count_corpus(docs, fastsw.Pretokenizer(), collect_runs=True)
    alph = default_alphabet("paper")
    merges, words, _ = FastBackend().phase1(counts, alph, "paper", 1000)
    tok1 = phase1_tokenizer(alph, merges, fastsw.Pretokenizer(), "paper")
    packed = FastBackend().candidates(counts, words, tok1)
    cands = unpack_candidates(packed)
    n_super = 40
    cut, floor = cut_candidates(
        tuple(packed), 0, len(tok1.vocab), top=max(fast_train.CUT_FACTOR * n_super, fast_train.PRUNE_MIN)
    )
    assert floor > 0 and len(cut[0]) < 0.6 * len(packed[0])
    fast = FastBackend().superbpe(packed, list(tok1.vocab), n_super, get_profile("paper"))
    assert fast == superbpe_phase2(cands, list(tok1.vocab), n_super, get_profile("paper"))
    assert min(count for _, _, count in fast) > floor  # the cut result was kept (no rerun needed here)


def test_memory_sizes_are_read_and_shown_in_sensible_units(monkeypatch):
    from fastsw.corpus import memory

    assert memory._parse_bytes("10T") == 10 << 40
    assert memory._parse_bytes("1.5g") == 3 << 29
    assert memory._parse_bytes("50M") == 50 << 20
    monkeypatch.setenv("FASTSW_MEMORY_LIMIT", "10T")
    assert available_memory() is not None
    monkeypatch.setattr(memory, "available_memory", lambda: 30 << 20)
    with pytest.raises(MemoryLimitError) as info:
        memory.check_memory("phase 2", 120 << 20, "many candidates", "do less")
    assert "needs about 126 MB (many candidates) but only 31.5 MB of memory is available" in str(info.value)
    monkeypatch.setattr(memory, "available_memory", lambda: 0)
    with pytest.raises(MemoryLimitError, match="needs about 2.00 kB .* only 0 bytes of memory"):
        memory.check_memory("phase 2", 2000, "x", "y")
