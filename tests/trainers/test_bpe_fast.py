"""The fast training path (fastsw.trainers.bpe_fast, Numba kernels in fastsw.trainers.bpe_kernels) gives
the same merges, counts, final words and token bytes as the reference path
(fastsw.trainers.bpe.learn_merges, fastsw.trainers.superword.boundless_phase2 / superbpe_phase2),
for both profiles: hand examples, the golden wikitext input, the multilingual
sample corpus and random small word lists."""

import threading

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fastsw
from fastsw.trainers import bpe_kernels as _train_kernels
from fastsw.trainers import bpe_fast as fast_train
from fastsw.trainers import train as trainer
from fastsw.alphabet import default_alphabet, get_profile
from fastsw.trainers.bpe import learn_merges
from fastsw.trainers.bpe_fast import (
    FastBackend,
    _unpack_words,
    learn_merges_fast,
    pack_candidates,
    unpack_candidates,
    warmup,
)
from fastsw.trainers.superword import ReferenceBackend, boundless_phase2, interleave, superbpe_phase2
from fastsw.trainers.train import count_corpus, phase1_tokenizer

from conftest import HYPOTHESIS_EXAMPLES, golden_json

PROFILES = ("paper", "hf")


def both_phase1(words, counts, token_bytes, profile, n_merges):
    """Run reference and fast phase 1 on copies; assert they agree; return the reference result."""
    ref_bytes, fast_bytes = list(token_bytes), list(token_bytes)
    ref = learn_merges(words, counts, ref_bytes, get_profile(profile), n_merges)
    fast = learn_merges_fast(words, counts, fast_bytes, get_profile(profile), n_merges)
    assert fast[0] == ref[0]
    assert fast[1] == ref[1]
    assert fast_bytes == ref_bytes
    assert all(type(x) is int for m in fast[0] for x in m)
    return ref


def both_boundless(regular, cands, token_bytes, n_alphabet, profile):
    ref_bytes, fast_bytes = list(token_bytes), list(token_bytes)
    ref = boundless_phase2(regular, cands, ref_bytes, n_alphabet, get_profile(profile))
    fast = FastBackend().boundless(regular, pack_candidates(cands), fast_bytes, n_alphabet, get_profile(profile))
    assert fast == ref
    assert fast_bytes == ref_bytes
    return ref


def both_superbpe(cands, token_bytes, n_super, profile):
    ref_bytes, fast_bytes = list(token_bytes), list(token_bytes)
    ref = superbpe_phase2(cands, ref_bytes, n_super, get_profile(profile))
    fast = FastBackend().superbpe(pack_candidates(cands), fast_bytes, n_super, get_profile(profile))
    assert fast == ref
    assert fast_bytes == ref_bytes
    return ref


def letters(n):
    return [bytes([ord("a") + i]) for i in range(n)]


# ---------------------------------------------------------------- hand examples


def test_warmup_runs():
    warmup()


def test_run_of_five_paper():
    # 'aaaaa' (a=0): paper counts a+a floor(5/2) = 2 times; replacing left to right
    # gives [aa, aa, a]. Then aa+aa and aa+a both count 1; the left tokens tie
    # ('aa'), and the right 'a' is a proper prefix of 'aa', so aa+a wins -> [aa, aaa];
    # last aa+aaa.
    merges, words = both_phase1([[0] * 5], [1], letters(1), "paper", 10)
    assert merges == [(0, 0, 2), (1, 0, 1), (1, 2, 1)]
    assert words == [[3]]


def test_run_of_five_hf():
    # hf counts a+a overlapping: 4 times (one replacement run gives [aa, aa, a]).
    # Then aa+aa = (1, 1) and aa+a = (1, 0) both count 1; the smaller ids (1, 0) win.
    merges, words = both_phase1([[0] * 5], [1], letters(1), "hf", 10)
    assert merges == [(0, 0, 4), (1, 0, 1), (1, 2, 1)]
    assert words == [[3]]


def test_proper_prefix_tie_paper():
    # a b c z = 0 1 2 3. After a+b (12), a+z (2) and ab+c (2) tie; the left
    # tokens 'a' < 'ab' (a proper prefix first) decide, not the concatenations
    # ('abc' < 'az' would pick ab+c).
    merges, words = both_phase1([[0, 1], [0, 1, 2], [0, 3]], [10, 2, 2], [b"a", b"b", b"c", b"z"], "paper", 10)
    assert merges == [(0, 1, 12), (0, 3, 2), (4, 2, 2)]
    assert words == [[4], [6], [5]]


def test_id_tie_hf_ignores_bytes():
    # ids ordered against the bytes: 0='z', 1='b', 2='a'. z+b and a+b both 3:
    # hf takes (0, 1) first, paper takes 'a'+'b' first.
    words, counts, tb = [[0, 1], [2, 1]], [3, 3], [b"z", b"b", b"a"]
    assert both_phase1(words, counts, tb, "hf", 2)[0] == [(0, 1, 3), (2, 1, 3)]
    assert both_phase1(words, counts, tb, "paper", 2)[0] == [(2, 1, 3), (0, 1, 3)]


def test_same_bytes_different_tokens():
    # Two tokens spelling the same bytes: the byte key ties, the ids decide.
    merges, _ = both_phase1([[1, 2], [0, 2]], [1, 1], [b"a", b"a", b"c"], "paper", 2)
    assert merges == [(0, 2, 1), (1, 2, 1)]


def test_pairs_run_out_and_edge_words():
    merges, words = both_phase1([[], [0], [0, 1], [1, 0]], [5, 7, 1, 1], letters(2), "paper", 100)
    assert len(merges) == 2
    assert both_phase1([], [], letters(2), "hf", 5) == ([], [])
    assert both_phase1([[0, 1]], [1], letters(2), "hf", 0) == ([], [[0, 1]])


def test_one_huge_pretoken():
    both_phase1([[0] * 20000 + [1, 0] * 500], [3], letters(2), "paper", 30)
    both_phase1([[0] * 20000 + [1, 0] * 500], [3], letters(2), "hf", 30)


def test_big_counts_are_int64():
    big = 3 * 10**12
    merges, _ = both_phase1([[0, 1, 0, 1]], [big], letters(2), "paper", 3)
    assert merges[0] == (0, 1, 2 * big)


def test_mismatched_inputs_raise():
    with pytest.raises(ValueError, match="one count per word"):
        learn_merges_fast([[0, 1]], [1, 2], letters(2), get_profile("paper"), 3)
    with pytest.raises(ValueError, match="token_bytes has only"):
        learn_merges_fast([[0, 5]], [1], letters(2), get_profile("paper"), 3)


def test_boundless_hand_example():
    # Candidates (as phase-1 ids) x y (count 5) and x y z (count 2). The regular
    # merges' counts decide each step: 9 > 7 -> regular; 7 > 4 -> super xy (7);
    # then super xy+z (2) vs regular 2 -> tie, regular wins; then 2 > 1 -> super.
    regular = [(0, 1, 9), (1, 2, 4), (0, 2, 2), (2, 0, 1), (1, 1, 1)]
    cands = {(0, 1): 5, (0, 1, 2): 2}
    for profile in PROFILES:
        steps = both_boundless(regular, cands, letters(8), 3, profile)
        assert [s[0] for s in steps] == ["r", "s", "r", "r", "s"]


def test_boundless_pairs_below_every_regular_count():
    # The kernel keeps no heap entry for pairs at or below min(regular counts), since
    # they can never win; it must still replay the regular merges while such pairs are
    # left (and stop only when no pair at all is left).
    regular = [(0, 1, 5), (1, 2, 4), (2, 3, 3)]
    for profile in PROFILES:
        steps = both_boundless(regular, {(0, 1): 2, (2, 3): 1}, letters(8), 4, profile)
        assert [s[0] for s in steps] == ["r", "r", "r"]
        steps = both_boundless(regular, {(0, 1): 9, (2, 3): 1}, letters(8), 4, profile)
        assert [s[0] for s in steps] == ["s", "r", "r"]
        steps = both_boundless(regular, {(0, 1): 9}, letters(8), 4, profile)
        assert [s[0] for s in steps] == ["s"]  # no pair left after the supermerge
        steps = both_boundless(regular, {(0, 1, 0, 1): 3}, letters(8), 4, profile)
        assert [s[0] for s in steps] == ["s", "r", "r"]  # (0, 1) 6 > 5, then (new, new) 3 <= 5, 4


# ---------------------------------------------------------------- random small inputs

words_strategy = st.lists(st.lists(st.integers(0, 4), max_size=12), max_size=12)
bytes_strategy = st.lists(st.binary(min_size=1, max_size=3), min_size=5, max_size=5)


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None)
@given(
    words=words_strategy,
    data=st.data(),
    token_bytes=bytes_strategy,
    n_merges=st.integers(0, 25),
    profile=st.sampled_from(PROFILES),
)
def test_random_phase1_matches_reference(words, data, token_bytes, n_merges, profile):
    counts = data.draw(st.lists(st.integers(1, 5), min_size=len(words), max_size=len(words)))
    both_phase1(words, counts, token_bytes, profile, n_merges)


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None)
@given(
    cands=st.dictionaries(
        st.tuples(st.integers(0, 4), st.integers(0, 4))
        | st.lists(st.integers(0, 4), min_size=2, max_size=8).map(tuple),
        st.integers(1, 6),
        max_size=10,
    ),
    regular_counts=st.lists(st.integers(1, 12), max_size=15),
    token_bytes=bytes_strategy,
    n_super=st.integers(0, 10),
    profile=st.sampled_from(PROFILES),
)
def test_random_phase2_matches_reference(cands, regular_counts, token_bytes, n_super, profile):
    regular_counts = sorted(regular_counts, reverse=True)
    regular = [(i % 5, (i * 3) % 5, c) for i, c in enumerate(regular_counts)]
    both_boundless(regular, cands, token_bytes, 5, profile)
    both_superbpe(cands, token_bytes, n_super, profile)


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None)
@given(
    cands=st.dictionaries(
        st.lists(st.integers(0, 4), min_size=2, max_size=8).map(tuple), st.integers(1, 6), max_size=12
    ),
    token_bytes=bytes_strategy,
    n_super=st.integers(0, 8),
    profile=st.sampled_from(PROFILES),
)
def test_superbpe_pruning_guess_is_exact_or_rerun(cands, token_bytes, n_super, profile):
    # SuperBPE lets the kernel drop pairs below a guessed floor (the k-th largest initial
    # count). With k = steps the guess often runs dry; the driver must then rerun without it.
    calls = []
    kernel = fast_train._merge_loop

    def spy(*args):
        out = kernel(*args)
        calls.append((args[-2], int(out[-1]), args[7]))  # (prune_top, exact, steps); last: the stop flag
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fast_train, "PRUNE_FACTOR", 1)
        mp.setattr(fast_train, "PRUNE_MIN", 1)
        mp.setattr(
            fast_train, "CUT_FACTOR", 0
        )  # the kernel's own guess alone (the cut: tests/trainers/test_bpe_fast_cut.py)
        mp.setattr(fast_train, "_merge_loop", spy)
        both_superbpe(cands, token_bytes, n_super, profile)
    if n_super > 0:
        # the kernel runs at most the merges the candidates can give (each shortens them by one token)
        assert calls[0][2] == min(n_super, sum(len(c) - 1 for c in cands))
        assert calls[0][0] == max(calls[0][2], 1)  # pruning was asked for, for those steps
        assert len(calls) == (1 if calls[0][1] else 2) and calls[-1][1] == 1


def test_superbpe_pruning_reruns_when_the_guess_runs_dry():
    # (0, 1) 10 and (2, 3) 9 initially; k = 1 keeps only (0, 1), so the second step finds
    # the heap empty while (2, 3) is left: not exact, rerun, same merges as the reference
    cands = {(0, 1): 10, (2, 3): 9}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fast_train, "PRUNE_FACTOR", 0)
        mp.setattr(fast_train, "PRUNE_MIN", 1)
        for profile in PROFILES:
            merges = both_superbpe(cands, letters(8), 2, profile)
            assert [m[:2] for m in merges] == [(0, 1), (2, 3)]
    tokens = np.array([0, 1, 2, 3], np.int32)
    out = fast_train._merge_loop(
        tokens,
        np.array([0, 2, 4], np.int64),
        np.array([10, 9], np.int64),
        np.arange(8, dtype=np.uint8),
        np.arange(9, dtype=np.int64),
        0,
        1,
        2,
        0,
        np.zeros(0, np.int64),
        np.zeros(8, np.uint8),
        np.zeros((1, 1), np.int8),
        1,
        np.zeros(1, np.int64),
    )
    assert int(out[0]) == 1 and out[-1] == 0  # stopped, and said so


def test_merge_loop_stops_when_the_stop_flag_is_set():
    # Ctrl-C sets stop[0] (fastsw._interrupt.call_kernel); the kernel checks it before each
    # step. (0, 1) 10, then (2, 3) 9: two steps without the flag, none with it.
    args = (
        np.array([0, 2, 4], np.int64),
        np.array([10, 9], np.int64),
        np.arange(8, dtype=np.uint8),
        np.arange(9, dtype=np.int64),
        0,
        1,
        2,
        0,
        np.zeros(0, np.int64),
        np.zeros(8, np.uint8),
        np.zeros((1, 1), np.int8),
        0,
    )
    out = fast_train._merge_loop(np.array([0, 1, 2, 3], np.int32), *args, np.zeros(1, np.int64))
    assert int(out[0]) == 2
    out = fast_train._merge_loop(np.array([0, 1, 2, 3], np.int32), *args, np.ones(1, np.int64))
    assert int(out[0]) == 0


def test_merge_loop_replay_steps_give_pair_zero():
    # The kernel's output arrays start uninitialised: every step writes its entry, a replay step the pair (0, 0).
    # Replay counts 20, 5, 3 against the pairs (0, 1) 10, (2, 3) 9 and (4, 5) 2: a replay step (20), two merges,
    # then a replay step taken when no pair above the floor (3) is left while (4, 5) is.
    out = fast_train._merge_loop(
        np.array([0, 1, 2, 3, 4, 5], np.int32),
        np.array([0, 2, 4, 6], np.int64),
        np.array([10, 9, 2], np.int64),
        np.arange(8, dtype=np.uint8),
        np.arange(9, dtype=np.int64),
        0,
        1,
        4,
        1,
        np.array([20, 5, 3], np.int64),
        np.zeros(8, np.uint8),
        np.zeros((1, 1), np.int8),
        0,
        np.zeros(1, np.int64),
    )
    n = int(out[0])
    kinds, lefts, rights, counts = (a[:n].tolist() for a in out[1:5])
    assert (kinds, lefts, rights, counts) == ([0, 1, 1, 0], [0, 0, 2, 0], [0, 1, 3, 0], [20, 10, 9, 5])


def test_local_update_widens_to_runs_paper():
    # The kernel recounts only windows around replacements; with the paper rule a
    # window must take in the whole run of equal tokens next to it. a b b b b b
    # (a=0, b=1) counts b+b floor(5/2) = 2; merging a+b leaves ab b b b b, a run of
    # four b (still 2 per word), then b+b makes [ab, bb, bb]: only a whole-run
    # recount gets these counts.
    merges, words = both_phase1([[0, 1, 1, 1, 1, 1], [0, 1]], [3, 4], letters(2), "paper", 2)
    assert merges == [(0, 1, 7), (1, 1, 6)]
    assert words == [[2, 3, 3], [2]]


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None)
@given(
    words=st.lists(st.lists(st.sampled_from([0, 0, 0, 1, 2]), max_size=30), max_size=8),
    data=st.data(),
    n_merges=st.integers(0, 30),
    profile=st.sampled_from(PROFILES),
)
def test_random_runs_match_reference(words, data, n_merges, profile):
    # Long runs of equal tokens, adjacent replacements and windows that join: the
    # local count updates must give the reference's whole-word recounts.
    counts = data.draw(st.lists(st.integers(0, 4), min_size=len(words), max_size=len(words)))
    both_phase1(words, counts, [b"a", b"b", b"ab"], profile, n_merges)
    regular = [(0, 0, 9), (1, 0, 5), (0, 2, 3), (3, 3, 1)]
    cands = {tuple(w): c + 1 for w, c in zip(words, counts) if len(w) >= 2}
    both_boundless(regular, cands, [b"a", b"b", b"ab"], 3, profile)


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None)
@given(
    entries=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 9)), max_size=40), tie_bytes=st.sampled_from([0, 1])
)
def test_heap_order_matches_heapq(entries, tie_bytes):
    # Pairs 0..5 over tokens with bytes that disagree with the id order, pushed with
    # random counts, come off the array heap in the order heapq gives for the key
    # (-count, left bytes, right bytes, left id, right id) (or ids only).
    import heapq
    import numpy as np

    token_bytes = [b"b", b"a", b"ab", b"", b"a"]
    tb = np.frombuffer(b"".join(token_bytes), np.uint8).copy()
    tb_off = np.cumsum([0] + [len(b) for b in token_bytes]).astype(np.int64)
    pleft = np.array([0, 1, 2, 4, 1, 3], np.int32)
    pright = np.array([1, 0, 2, 1, 1, 0], np.int32)
    # the kernel's heap holds pair keys (left << 32 | right); tpre: per-token byte prefix keys
    keys = (pleft.astype(np.int64) << 32) | pright
    pair_of_key = {int(k): p for p, k in enumerate(keys)}
    tpre = np.array([_train_kernels._prefix_key(tb, tb_off, np.int64(t)) for t in range(len(token_bytes))], np.int64)
    heap_key = np.empty(max(len(entries), 1), np.int64)
    heap_count = np.empty(max(len(entries), 1), np.int64)
    size = 0
    expected = []
    for p, c in entries:
        size = _train_kernels._push(
            heap_key,
            heap_count,
            np.int64(0),
            np.int64(size),
            keys[p],
            np.int64(c),
            tpre,
            tb,
            tb_off,
            np.int64(tie_bytes),
        )
        l, r = int(pleft[p]), int(pright[p])
        key = (token_bytes[l], token_bytes[r], l, r) if tie_bytes else (l, r)
        heapq.heappush(expected, (-c, key, p))
    popped = []
    while size:
        popped.append((int(heap_count[0]), pair_of_key[int(heap_key[0])]))
        size -= 1
        heap_key[0], heap_count[0] = heap_key[size], heap_count[size]
        _train_kernels._sift_down(
            heap_key, heap_count, np.int64(0), np.int64(size), np.int64(0), tpre, tb, tb_off, np.int64(tie_bytes)
        )
    want = [(-c, p) for c, _, p in (heapq.heappop(expected) for _ in range(len(entries)))]
    # Equal (count, key) entries are interchangeable only when they are the same pair.
    assert popped == want


# ---------------------------------------------------------------- real text


def phase1_and_candidates(counts, profile, vocab_size):
    """train()'s stages 3 and 4 on both backends (asserted equal); returns the reference's results."""
    alphabet, ref, fast = default_alphabet(profile), ReferenceBackend(), FastBackend()
    merges, words, vocab = ref.phase1(counts, alphabet, profile, vocab_size - len(alphabet))
    f_merges, packed, f_vocab = fast.phase1(counts, alphabet, profile, vocab_size - len(alphabet))
    assert (f_merges, f_vocab, _unpack_words(*packed)) == (merges, vocab, words)
    tok1 = phase1_tokenizer(alphabet, merges, fastsw.Pretokenizer(), profile)
    cands = ref.candidates(counts, words, tok1)
    assert unpack_candidates(fast.candidates(counts, packed, tok1)) == cands
    return alphabet, merges, cands, list(tok1.vocab)


def final_vocab(alphabet, merges):
    vocab = list(alphabet.tokens)
    for left, right, *_ in merges:
        vocab.append(vocab[left] + vocab[right])
    return vocab


def as_golden(alphabet, merges):
    vocab = final_vocab(alphabet, merges)
    return [
        (len(alphabet) + k, vocab[m[0]].hex(), vocab[m[1]].hex(), m[2], bool(m[3]) if len(m) > 3 else False)
        for k, m in enumerate(merges)
    ]


def golden_merges(golden_dir, name):
    gold = golden_json(golden_dir, name)
    return [(m["id"], m["left"], m["right"], m["count"], m["super"]) for m in gold["merges"]]


@pytest.mark.parametrize("profile", PROFILES)
def test_golden_phase1_and_boundless(golden_counts, golden_dir, profile):
    alphabet, merges, cands, vocab = phase1_and_candidates(golden_counts, profile, 2000)
    steps = both_boundless(merges, cands, vocab, len(alphabet), profile)
    assert any(s[0] == "s" for s in steps)
    if profile == "paper":
        assert as_golden(alphabet, merges) == golden_merges(golden_dir, "bpe_2000")
        assert as_golden(alphabet, interleave(steps, len(alphabet))) == golden_merges(golden_dir, "boundless_2000")


@pytest.mark.parametrize("profile", PROFILES)
def test_golden_superbpe(golden_counts, golden_dir, profile):
    alphabet, merges, cands, vocab = phase1_and_candidates(golden_counts, profile, 1500)
    supers = both_superbpe(cands, vocab, 500, profile)
    assert len(supers) == 500
    if profile == "paper":
        full = [(l, r, c, False) for l, r, c in merges] + [(l, r, c, True) for l, r, c in supers]
        assert as_golden(alphabet, full) == golden_merges(golden_dir, "superbpe_1500_plus500")


@pytest.mark.parametrize("profile", PROFILES)
def test_multilingual_sample(sample_docs, profile):
    counts = count_corpus(sample_docs, fastsw.Pretokenizer(), collect_runs=True)
    alphabet, merges, cands, vocab = phase1_and_candidates(counts, profile, 1500)
    both_boundless(merges, cands, vocab, len(alphabet), profile)
    both_superbpe(cands, vocab, 300, profile)


# ---------------------------------------------------------------- one signature per kernel


@pytest.mark.parametrize("n, spread", [(1, 1), (2, 2), (7, 1), (100, 3), (1000, 1000), (5000, 20)])
def test_kth_smallest_is_numpys_sorted_kth(n, spread):
    # the merge loop's and the candidate cut's floor: the value np.sort(a)[k] (runs of equal counts included)
    rng = np.random.default_rng(n)
    for a in (rng.integers(0, spread, n), np.arange(n)[::-1], np.full(n, 7)):
        for k in {0, n // 2, n - 1, int(rng.integers(0, n))}:
            work = np.array(a, dtype=np.int64)
            assert _train_kernels._kth_smallest(work, k) == np.sort(a)[k]
            assert sorted(work.tolist()) == sorted(np.asarray(a).tolist())  # reordered, nothing lost


def test_each_kernel_compiled_once():
    if not hasattr(_train_kernels._merge_loop, "signatures"):
        pytest.skip("NUMBA_DISABLE_JIT=1: the kernels ran as plain Python")
    warmup()
    # The entry kernel is compiled (or loaded from the on-disk cache) exactly once.
    assert len(_train_kernels._merge_loop.signatures) == 1
    # Its helpers compile only when _merge_loop itself is compiled (not when it is
    # loaded from the cache), and then with exactly one signature.
    for kernel in _train_kernels.KERNELS:
        assert len(kernel.signatures) <= 1, kernel.__name__


def test_kernels_compiled_ahead_are_loaded_by_the_merge_loop(tmp_path):
    # On a fresh install the background process compiles the helpers of AHEAD (with the signatures written
    # there) and the phase-2 kernels; the merge loop's compilation in this process then loads them from the
    # cache instead of compiling them (a wrong signature would make it compile that helper here again), and
    # no kernel gets a second signature.
    code = (
        "import json\nfrom numba.core import event\n"
        "from fastsw.trainers import bpe_fast, bpe_kernels as K\n"
        "bpe_fast.compile_ahead(True)\nstarted = bpe_fast._ahead is not None\nbpe_fast.phase2_ready()\n"
        "here = []\n"
        "class Seen(event.Listener):\n"
        "    def on_start(self, ev): here.append(ev.data['dispatcher'].py_func.__name__)\n"
        "    def on_end(self, ev): pass\n"
        "with event.install_listener('numba:compile', Seen()):\n"
        "    bpe_fast.warmup()\n"
        "print(json.dumps({'started': started, 'here': sorted(set(here) & {k.__name__ for k in K.KERNELS}), "
        "'signatures': {k.__name__: len(k.signatures) for k in K.KERNELS if len(k.signatures) > 1}}))"
    )
    from test_compiling import fresh_cache_run  # the tests' helper: code in a new process, empty Numba cache

    seen = fresh_cache_run(code, tmp_path)
    ahead = {kernel.__name__ for kernel, _ in _train_kernels.AHEAD} | {"_cut_candidates"}
    assert seen["started"] and seen["signatures"] == {}
    assert "_merge_loop" in seen["here"] and not ahead & set(seen["here"])


def test_compile_ahead_starts_nothing_when_the_kernels_are_cached():
    if not hasattr(_train_kernels._merge_loop, "signatures"):
        pytest.skip("NUMBA_DISABLE_JIT=1: the kernels ran as plain Python")
    warmup()
    fast_train.compile_ahead(True)
    assert fast_train._ahead is None


def test_compile_ahead_needs_a_second_cpu(monkeypatch):
    # Kernels that are not cached start a background process only where a second CPU can run it.
    from fastsw import _compiling

    monkeypatch.setattr(_compiling, "ready", lambda kernels: False)
    monkeypatch.setattr(_compiling, "usable_cpus", lambda: 1)
    fast_train.compile_ahead(True)
    assert fast_train._ahead is None
    monkeypatch.setattr(_compiling, "usable_cpus", lambda: 2)
    fast_train.compile_ahead(True)
    try:
        assert fast_train._ahead is not None
    finally:
        fast_train.stop_compiling_ahead()
    assert fast_train._ahead is None


# ---------------------------------------------------------------- the training seam


@pytest.mark.parametrize("algo, greedy_split", [("boundless", True), ("superbpe", False)])
def test_train_runs_every_stage_through_one_backend(monkeypatch, sample_docs, algo, greedy_split):
    # The seam: train() asks the backend for every stage after counting (numbered 3-6 in its body) and
    # never which backend it has: a recording reference backend sees every name train() reads, in order.
    calls = []

    class Recording:
        def __getattr__(self, name):
            calls.append(name)
            return getattr(ReferenceBackend(), name)

    options = dict(
        algo=algo,
        vocab_size=600,
        supermerges=50 if algo == "superbpe" else None,
        greedy_split=greedy_split,
        min_count_floor=2,
    )
    with monkeypatch.context() as mp:
        mp.setattr(trainer, "_backend", lambda backend, progress, phase2: Recording())
        tok = fastsw.train(sample_docs[:50], **options)
    split = ["split", "n_candidates"] if greedy_split else []
    assert calls == ["name", "phase1", "warmup_seconds", "candidates", "n_candidates"] + split + [algo]
    assert tok.training_info["backend"] == "python" and tok.n_super > 0
    assert tok.merges == fastsw.train(sample_docs[:50], backend="numba", **options).merges


def test_old_stage_names_still_work_with_a_deprecation_warning(golden_counts):
    with pytest.warns(DeprecationWarning, match=r"ReferenceBackend\(\)\.phase1"):
        old = trainer.phase1(golden_counts, default_alphabet("paper"), "paper", 50)
    assert old == ReferenceBackend().phase1(golden_counts, default_alphabet("paper"), "paper", 50)
    with pytest.warns(DeprecationWarning, match=r"ReferenceBackend\(\)\.candidates"):
        assert trainer.candidates.__func__ is ReferenceBackend.candidates


# ---------------------------------------------------------------- loading cached kernels beside the counting


def test_cached_kernels_load_in_a_thread_while_the_corpus_is_counted(monkeypatch, sample_docs):
    # With the merge loop in Numba's on-disk cache, train() starts loading it in a thread and counts meanwhile;
    # phase 1 waits for it. The model is the one the reference path trains.
    events = []
    real_warmup, real_count = fast_train.warmup, trainer.count_corpus

    def warmup(phase2=True):
        events.append(("load", threading.current_thread().name))
        real_warmup(phase2)

    def count_corpus(*args, **kwargs):
        events.append(("count", threading.current_thread().name))
        return real_count(*args, **kwargs)

    monkeypatch.setattr(fast_train, "_loadable", lambda: True)
    monkeypatch.setattr(fast_train, "warmup", warmup)
    monkeypatch.setattr(trainer, "count_corpus", count_corpus)
    options = dict(algo="bpe", vocab_size=600, pretokenizer="simple")
    tok = fastsw.train(sample_docs[:50], backend="numba", **options)
    assert sorted(events) == [("count", "MainThread"), ("load", "fastsw-load-kernels")]
    assert fast_train._loading is None and tok.training_info["seconds"]["jit_warmup"] >= 0
    assert not [t.name for t in threading.enumerate() if t.name == "fastsw-load-kernels"]
    assert tok.merges == fastsw.train(sample_docs[:50], backend="python", **options).merges


def test_an_error_while_loading_in_the_thread_is_raised_by_train(monkeypatch, sample_docs):
    def warmup(phase2=True):
        raise RuntimeError("the cache could not be read")

    monkeypatch.setattr(fast_train, "_loadable", lambda: True)
    monkeypatch.setattr(fast_train, "warmup", warmup)
    with pytest.raises(RuntimeError, match="the cache could not be read"):
        fastsw.train(sample_docs[:50], algo="bpe", vocab_size=600, backend="numba")
    assert fast_train._loading is None


def test_ctrl_c_while_the_kernels_load_leaves_no_thread():
    # A real SIGINT while the corpus is counted and the cached merge loop loads in its thread: train() raises
    # KeyboardInterrupt once the loading has ended, and no fastsw thread is left.
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    if not hasattr(_train_kernels._merge_loop, "signatures"):
        pytest.skip("NUMBA_DISABLE_JIT=1: nothing loads")
    warmup(phase2=False)  # the merge loop in Numba's on-disk cache, which the child shares
    code = (
        "import json, os, signal, threading\nimport fastsw\nfrom fastsw.trainers import bpe_fast, train as trainer\n"
        "orig = trainer.iter_documents\nstate = {}\n"
        "def documents(*args, **kwargs):\n"
        "    docs = list(orig(*args, **kwargs))\n"
        "    state['loading'] = bpe_fast._loading is not None\n"
        "    threading.Timer(0.001, os.kill, (os.getpid(), signal.SIGINT)).start()\n"
        "    while True:  # never ends: only the interrupt stops counting\n"
        "        yield from docs\n"
        "trainer.iter_documents = documents\n"
        "from fastsw.corpus.sample import sample_documents\ndocs = list(sample_documents())[:50]\n"
        "try:\n    fastsw.train(docs, algo='bpe', vocab_size=600, backend='numba')\n    state['end'] = 'finished'\n"
        "except KeyboardInterrupt:\n    state['end'] = 'caught'\n"
        "state['threads'] = [t.name for t in threading.enumerate() if t.name.startswith('fastsw')]\n"
        "print(json.dumps(state))"
    )
    env = dict(os.environ)
    root = str(Path(fastsw.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    env.pop("FASTSW_PUREPYTHON", None)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.splitlines()[-1]) == {"loading": True, "end": "caught", "threads": []}


def test_training_takes_no_float_dot_product(monkeypatch, sample_docs):
    # NumPy hands a float dot product to BLAS, whose threads then spin on the cores that the counting and merge
    # kernels use; the totals that guard the 64-bit kernels are plain sums (fastsw.corpus.counting.weighted_total)
    def dot(*args, **kwargs):
        raise AssertionError("np.dot was called")

    monkeypatch.setattr(np, "dot", dot)
    docs = sample_docs[::8]
    for algo in ("bpe", "boundless"):
        assert fastsw.train(docs, algo=algo, vocab_size=700).vocab_size == 700
    parity = fastsw.train({"a": docs[:40], "b": docs[-40:]}, algo="parity-bpe", vocab_size=400, ratios={"a": 1, "b": 1})
    assert parity.vocab_size == 400


def test_weighted_total_is_exact_beyond_int64():
    from fastsw.corpus.counting import weighted_total

    values = np.array([2**62, 3, 0], np.int64)
    counts = np.array([3, 2**61, 5], np.int64)
    assert weighted_total(values, counts) == 3 * 2**62 + 3 * 2**61
    small = np.arange(1000, dtype=np.int64)
    assert weighted_total(small, small[::-1].copy()) == sum(a * b for a, b in zip(range(1000), range(999, -1, -1)))
