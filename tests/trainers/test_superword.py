"""Algorithm 2 (frequent n-grams with Apriori pruning) and the greedy split, by hand."""

import pytest
from hypothesis import given, settings, strategies as st

from conftest import HYPOTHESIS_EXAMPLES
from fastsw.trainers.superword import aggregate_candidates, frequent_ngrams, greedy_split, split_candidates

CANDS = {(1, 2, 3): 10, (1, 2): 5, (2, 3, 4): 3}


def test_frequent_ngrams_by_hand():
    # min_count 8. Unigrams: 1:15 2:18 3:13 4:3 (kept for the bound).
    # Bigrams: 1 2 -> 15; 2 3 -> 10 + 3 = 13; 3 4 is never counted (4 has 3 < 8).
    # Trigrams: 1 2 3 -> 10 (both subgrams frequent); 2 3 4 skipped (3 4 missing).
    # Pass 4 adds nothing, so the search stops.
    assert frequent_ngrams(CANDS, 8, 30) == {(1, 2), (2, 3), (1, 2, 3)}
    # with a higher bound only 1 2 survives
    assert frequent_ngrams(CANDS, 14, 30) == {(1, 2)}
    # max_len bounds the n-gram length
    assert frequent_ngrams(CANDS, 8, 2) == {(1, 2), (2, 3)}


def test_greedy_split_by_hand():
    frequent = frequent_ngrams(CANDS, 8, 30)
    # 1 2 3 -> [1 2 3]; 1 2 -> [1 2]; 2 3 4 -> [2 3] + [4] (length-1 pieces are dropped)
    assert greedy_split(CANDS, frequent, 30) == {(1, 2, 3): 10, (1, 2): 5, (2, 3): 3}
    # the bound is max(c_min, floor): c_min 2 with floor 14 behaves like 14
    # 1 2 3 -> [1 2] [3]; 2 3 4 -> no frequent n-gram at 2 or 3 -> nothing kept
    assert split_candidates(CANDS, c_min=2, floor=14, max_len=30) == {(1, 2): 15}


def _packed_aggregate(runs, single):
    """``fastsw.pretokenizers._pretok.aggregate_runs`` (the fast path's twin) on a dict of runs, as a dict."""
    import numpy as np
    from fastsw.pretokenizers._pretok import aggregate_runs

    flat = [p for run in runs for p in run]
    offsets = np.cumsum([0] + [len(run) for run in runs]).astype(np.int64)
    tokens, cand_offsets, counts = aggregate_runs(
        np.array(flat, np.int32), offsets, np.array(list(runs.values()), np.int64), np.array(single, np.int64)
    )
    flat, bounds = tokens.tolist(), cand_offsets.tolist()
    return {tuple(flat[bounds[k] : bounds[k + 1]]): c for k, c in enumerate(counts.tolist())}


@pytest.mark.parametrize("aggregate", [aggregate_candidates, _packed_aggregate], ids=["python", "packed"])
def test_aggregate_candidates_cuts_letter_runs_at_ineligible_pretokens(aggregate):
    # pretokens 0..5; pretokens 2 and 5 are not single eligible tokens
    single = [10, 11, -1, 13, 14, -1]
    runs = {(0, 1, 2, 3, 4): 2, (0, 1): 3, (1, 2, 3): 7, (5, 0, 5, 3, 4, 0, 1): 1, (2, 5): 9}
    assert aggregate(runs, single) == {(10, 11): 5, (13, 14): 2, (13, 14, 10, 11): 1}


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None)
@given(
    st.lists(st.integers(-1, 6), min_size=1, max_size=8).flatmap(
        lambda single: st.tuples(
            st.just(single),
            st.dictionaries(
                st.lists(st.integers(0, len(single) - 1), min_size=2, max_size=40).map(tuple),
                st.integers(1, 2**53),
                max_size=20,
            ),
        )
    )
)  # 20 runs x 40 occurrences fit int64
def test_packed_aggregate_equals_python(args):
    single, runs = args
    assert _packed_aggregate(runs, single) == aggregate_candidates(runs, single)


@pytest.mark.parametrize("n_runs", [300, 5000, 40000])
def test_packed_aggregate_with_presized_slots_equals_growing_ones(n_runs):
    """Slots made at once for half as many entries as runs (``presize``, the default) give the table that doubling
    slots give, order included, and the reference's candidates, whether the runs are mostly distinct or mostly
    repeats (300 runs fit the table's first slots: nothing is presized there)."""
    import numpy as np
    from fastsw.pretokenizers._pretok import aggregate_runs

    rng = np.random.default_rng(n_runs)
    lengths = rng.integers(2, 9, n_runs)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    n_pretokens = 40 if n_runs == 40000 else 5000  # many repeats, or nearly all distinct
    ids = rng.integers(0, n_pretokens, int(offsets[-1])).astype(np.int32)
    counts = rng.integers(1, 1000, n_runs).astype(np.int64)
    single = np.where(rng.random(n_pretokens) < 0.1, -1, np.arange(n_pretokens)).astype(np.int64)
    grown = aggregate_runs(ids, offsets, counts, single, presize=False)
    presized = aggregate_runs(ids, offsets, counts, single)
    assert len(grown[2]) > 100
    for a, b in zip(grown, presized):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    runs = {}
    for r in range(n_runs):
        run = tuple(ids[offsets[r] : offsets[r + 1]].tolist())
        runs[run] = runs.get(run, 0) + int(counts[r])
    flat, bounds = presized[0].tolist(), presized[1].tolist()
    got = {tuple(flat[bounds[k] : bounds[k + 1]]): c for k, c in enumerate(presized[2].tolist())}
    assert got == aggregate_candidates(runs, single.tolist())


def test_packed_aggregate_rejects_bad_runs():
    import numpy as np
    from fastsw.pretokenizers._pretok import aggregate_runs

    with pytest.raises(IndexError, match="pretoken 7"):
        aggregate_runs(
            np.array([0, 7], np.int32), np.array([0, 2], np.int64), np.array([1], np.int64), np.array([1, 2], np.int64)
        )
    with pytest.raises(ValueError, match="one more entry"):
        aggregate_runs(
            np.array([0, 1], np.int32),
            np.array([0, 2], np.int64),
            np.array([1, 1], np.int64),
            np.array([1, 2], np.int64),
        )
