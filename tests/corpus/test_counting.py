"""Counting (fastsw.corpus.counting): fast and parallel counters against the reference, count files, training from
counts, and bad input."""

import gzip
import json
import os
import tracemalloc
from pathlib import Path

import pytest

import fastsw
from fastsw.corpus import counting
from fastsw.cli import main
from fastsw.corpus.counting import (
    Counts,
    CountTable,
    count_corpus,
    count_corpus_parallel,
    count_corpus_reference,
    load_counts,
)
from fastsw.corpus.readers import InputError, iter_documents
from fastsw.trainers.train import _counting_workers

from conftest import BACKENDS, shared_path

PRETOK = fastsw.Pretokenizer()


def same_table(a: Counts, b: Counts) -> None:
    """Equal as multisets: pretokens with counts and letters, letter runs as pretoken strings."""
    assert a.pretoken_multiset() == b.pretoken_multiset()
    assert dict(zip(a.pretokens, a.has_letter)) == dict(zip(b.pretokens, b.has_letter))
    assert a.run_multiset() == b.run_multiset()
    assert (a.n_documents, a.n_bytes, a.has_runs) == (b.n_documents, b.n_bytes, b.has_runs)
    assert a.pretokenizer_config == b.pretokenizer_config
    assert a.index == {p: i for i, p in enumerate(a.pretokens)}


def model_dict(tok) -> dict:
    d = tok.to_dict() if hasattr(tok, "to_dict") else None
    if d is None:
        from fastsw.io.model_file import model_to_dict

        d = model_to_dict(tok)
    d.pop("training")
    return d


@pytest.fixture(scope="module")
def wikitext_docs():
    return list(iter_documents(shared_path("golden/paper_ref/inputs/wikitext2_valid.jsonl")))


# ---- identity with the reference counter ------------------------------------------------------------------------


@pytest.mark.parametrize("collect_runs", [True, False])
def test_fast_counts_equal_reference_on_the_multilingual_sample(sample_docs, collect_runs):
    ref = count_corpus_reference(sample_docs, PRETOK, collect_runs=collect_runs)
    fast = count_corpus(sample_docs, PRETOK, collect_runs=collect_runs)
    same_table(fast, ref)
    assert fast.pretokens == ref.pretokens and fast.letter_runs == ref.letter_runs  # same order, serially
    assert not collect_runs or len(ref.letter_runs) > 1000


def test_fast_counts_equal_reference_on_wikitext(wikitext_docs):
    ref = count_corpus_reference(wikitext_docs, PRETOK, collect_runs=True)
    same_table(count_corpus(wikitext_docs, PRETOK, collect_runs=True), ref)


def test_the_compiled_counter_is_used_unless_pure_python_is_asked_for(monkeypatch):
    monkeypatch.delenv("FASTSW_PUREPYTHON", raising=False)
    assert type(counting._make_table(PRETOK, True)) is counting.NativeCountTable
    monkeypatch.setenv("FASTSW_PUREPYTHON", "1")
    assert type(counting._make_table(PRETOK, True)) is CountTable


def test_custom_patterns_count_with_the_reference(sample_docs):
    # the counting rule lived in four places (count_corpus_reference, _count_document_py, _count.pyx and the
    # compiled Counter); now custom patterns count with the reference table, default ones with the Counter
    custom = fastsw.Pretokenizer(main_pattern=r"\w+|\W")
    ref = count_corpus_reference(sample_docs, custom, collect_runs=True)
    got = count_corpus(sample_docs, custom, collect_runs=True)
    assert got.pretokens == ref.pretokens and got.letter_runs == ref.letter_runs and got.counts == ref.counts


def test_count_table_pure_is_deprecated():
    with pytest.warns(DeprecationWarning, match="pure=.*deprecated and ignored"):
        table = CountTable(PRETOK, True, pure=True)
    table.add("Hello world")
    assert table.finish().run_multiset() == {("Hello", " world"): 1}
    assert (table.pretokens, table.runs, table.n_documents) == (["Hello", " world"], {(0, 1): 1}, 1)


def test_letter_runs_by_hand():
    # pretokens: "Hello" " world" "," " big" " cat" "!"  -> runs (Hello, world) and (big, cat);
    # "1" " x" is not a run (a number has no letter), a single letter pretoken is not a run either.
    docs = ["Hello world, big cat!", "Hello world", "12 x"]
    c = count_corpus(docs, PRETOK, collect_runs=True)
    assert c.run_multiset() == {("Hello", " world"): 2, (" big", " cat"): 1}
    assert c.pretoken_multiset()["Hello"] == 2


# ---- all cores ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_parallel_equals_serial(sample_docs, start_method):
    serial = count_corpus(sample_docs, PRETOK, collect_runs=True)
    # small batches: many batches per worker, so both workers see documents
    par = count_corpus_parallel(
        iter(sample_docs), PRETOK, collect_runs=True, workers=2, batch_bytes=20_000, start_method=start_method
    )
    same_table(par, serial)


def test_parallel_without_runs_and_one_worker(sample_docs):
    serial = count_corpus(sample_docs, PRETOK, collect_runs=False)
    same_table(count_corpus_parallel(sample_docs, PRETOK, collect_runs=False, workers=2, batch_docs=7), serial)
    same_table(count_corpus_parallel(sample_docs, PRETOK, collect_runs=False, workers=1), serial)


def test_parallel_on_an_empty_corpus_and_more_workers_than_batches():
    empty = count_corpus_parallel([], PRETOK, collect_runs=True, workers=2)
    assert (empty.n_documents, empty.pretokens, empty.letter_runs) == (0, [], {})
    one = count_corpus_parallel(["just one document"], PRETOK, collect_runs=True, workers=2)
    same_table(one, count_corpus(["just one document"], PRETOK, collect_runs=True))


def test_parallel_rejects_bad_workers():
    with pytest.raises(ValueError, match="workers"):
        count_corpus_parallel([], PRETOK, collect_runs=True, workers=0)
    with pytest.raises(ValueError, match="workers"):
        fastsw.train(["a b"], vocab_size=300, workers=-1)


def test_train_workers_rule(tmp_path, monkeypatch):
    small = tmp_path / "small.txt"
    small.write_text("a few words\n")
    for runs in (False, True):
        assert _counting_workers(small, None, runs) == 1
        assert _counting_workers(["a document"], None, runs) == 1
        assert _counting_workers(iter(["a document"]), None, runs) == 1
        assert _counting_workers(["a document"], 1, runs) == 1
    monkeypatch.setattr(fastsw.trainers.train, "PARALLEL_MIN_BYTES", 5)
    monkeypatch.setattr(fastsw.trainers.train, "default_workers", lambda: 2)
    assert _counting_workers([small], None, False) == 2
    assert _counting_workers(str(small), None, False) == 2
    # letter runs: in-process on fewer than 4 cores (the merge of run tables ate the gain)
    assert _counting_workers(str(small), None, True) == 1
    monkeypatch.setattr(fastsw.trainers.train, "default_workers", lambda: 8)
    assert _counting_workers(str(small), None, True) == 8
    assert _counting_workers(["a document"], 3, True) == 3


@pytest.mark.parametrize("algo,kw", [("bpe", {}), ("boundless", {}), ("superbpe", {"supermerges": 40})])
def test_train_with_workers_gives_the_same_model(sample_docs, algo, kw):
    docs = sample_docs[::3]
    a = fastsw.train(docs, algo=algo, vocab_size=500, workers=1, **kw)
    b = fastsw.train(docs, algo=algo, vocab_size=500, workers=2, **kw)
    assert model_dict(a) == model_dict(b)
    assert b.training_info["counting_workers"] == 2


def test_training_does_not_depend_on_pretoken_order(sample_docs):
    counts = count_corpus(sample_docs, PRETOK, collect_runs=True)
    # the same table with its pretokens in reverse order (letter runs re-indexed)
    rev = Counts(pretokenizer_config=counts.pretokenizer_config)
    n = len(counts.pretokens)
    rev.pretokens = counts.pretokens[::-1]
    rev.counts = counts.counts[::-1]
    rev.has_letter = counts.has_letter[::-1]
    rev.index = {p: i for i, p in enumerate(rev.pretokens)}
    rev.letter_runs = {tuple(n - 1 - i for i in run): c for run, c in reversed(counts.letter_runs.items())}
    rev.n_documents, rev.n_bytes = counts.n_documents, counts.n_bytes
    same_table(rev, counts)
    for algo, kw in (("bpe", {}), ("boundless", {}), ("superbpe", {"supermerges": 100})):
        a = fastsw.train(from_counts=counts, algo=algo, vocab_size=900, **kw)
        b = fastsw.train(from_counts=rev, algo=algo, vocab_size=900, **kw)
        assert model_dict(a) == model_dict(b), algo
    a = fastsw.train(from_counts=counts, algo="boundless", vocab_size=900, greedy_split=True)
    b = fastsw.train(from_counts=rev, algo="boundless", vocab_size=900, greedy_split=True)
    assert model_dict(a) == model_dict(b)


# ---- count files ----------------------------------------------------------------------------------------------------


def test_save_load_round_trip(tmp_path, sample_docs):
    docs = sample_docs[:40] + ["nul\x00byte in a word\x00x", "lone \ud800 surrogate word", ""]
    for collect_runs in (True, False):
        c = count_corpus(docs, PRETOK, collect_runs=collect_runs)
        path = tmp_path / f"c{collect_runs}.counts"
        c.save(path)
        back = Counts.load(path)
        same_table(back, c)
        assert back.pretokens == sorted(c.pretokens)  # rows in canonical order
        assert back.source == str(path)
    assert not list(tmp_path.glob(".*.tmp"))  # the temporary file was renamed


def test_big_counts_round_trip(tmp_path):
    c = count_corpus(["a b"], PRETOK, collect_runs=True)
    c.counts = [2**63 - 1, 3]
    c.save(tmp_path / "big.counts")
    assert Counts.load(tmp_path / "big.counts").pretoken_multiset() == {"a": 2**63 - 1, " b": 3}


def test_merge_of_halves_equals_the_whole(tmp_path, sample_docs):
    whole = count_corpus(sample_docs, PRETOK, collect_runs=True)
    a = count_corpus(sample_docs[::2], PRETOK, collect_runs=True)
    b = count_corpus(sample_docs[1::2], PRETOK, collect_runs=True)
    a.save(tmp_path / "a.counts")
    b.save(tmp_path / "b.counts")
    merged = load_counts([tmp_path / "a.counts", tmp_path / "b.counts"])
    same_table(merged, whole)
    same_table(load_counts([a, b]), whole)
    assert a.n_documents + b.n_documents == whole.n_documents  # the inputs were not modified
    same_table(a.merge(b), whole)


@pytest.mark.parametrize("collect_runs", [True, False])
def test_compiled_and_reference_merge_agree(sample_docs, collect_runs):
    # a worker's compiled table comes back as arrays and is merged by Counter.merge_table, in C, so the runs stay
    # packed (they used to become a dict of tuples); the reference merges with Counts.merge
    plain = count_corpus_reference(sample_docs[:60], PRETOK, collect_runs=collect_runs).merge(
        count_corpus_reference(sample_docs[40:], PRETOK, collect_runs=collect_runs)
    )
    a, b = (counting.NativeCountTable(PRETOK, collect_runs) for _ in range(2))
    a.add_batch(sample_docs[:60])
    b.add_batch(sample_docs[40:])
    a.merge_payload(b.payload())
    native = a.finish()
    assert (native._packed_runs is not None) is collect_runs
    same_table(native, plain)
    assert native.pretokens == plain.pretokens and native.letter_runs == plain.letter_runs
    assert all(type(c) is int for c in native.counts) and all(type(h) is bool for h in native.has_letter)
    par = count_corpus_parallel(sample_docs, PRETOK, collect_runs=collect_runs, workers=2, batch_bytes=20_000)
    assert (par._packed_runs is not None) is collect_runs
    same_table(par, count_corpus_reference(sample_docs, PRETOK, collect_runs=collect_runs))


def test_take_runs_hands_over_the_run_table_without_a_copy(sample_docs):
    # finish() and payload() take the letter runs out of the compiled counter: the same arrays as runs(), owned
    # by numpy (writable, alive after the counter is gone), and the counter keeps none
    table = counting.NativeCountTable(PRETOK, collect_runs=True)
    table.add_batch(sample_docs[:80])
    copied = table.counter.runs()
    taken = table.counter.take_runs()
    assert len(copied[2]) > 1000
    for a, b in zip(copied, taken):
        assert a.dtype == b.dtype and a.tolist() == b.tolist()
        assert b.flags.writeable and b.base is not None  # a view of the counter's former block, not a copy
    del table
    taken[2][0] += 1  # the block outlives the counter
    assert taken[2][0] == copied[2][0] + 1
    counter = counting.NativeCountTable(PRETOK, collect_runs=True).counter
    counter.add_batch(["big cat sat", "no"])
    counter.take_runs()
    assert [a.tolist() for a in counter.runs()] == [[], [0], []]  # nothing left, and usable again
    counter.add_batch(["big cat sat"])
    ids, offsets, counts = counter.runs()
    assert (ids.tolist(), offsets.tolist(), counts.tolist()) == ([0, 1, 2], [0, 3], [1])


def test_runs_are_kept_as_read_and_aggregated_when_asked_for(sample_docs):
    # the compiled counter appends each letter run as it reads it (no hash per run while counting); the table
    # aggregates them only when asked for distinct runs, and the candidates read them as they are
    counter = counting.NativeCountTable(PRETOK, collect_runs=True).counter
    counter.add_batch(["big cat sat", "no", "big cat sat", "a dog ran"])
    ids, offsets, counts = counter.take_raw_runs()
    assert (ids.tolist(), offsets.tolist(), counts.tolist()) == ([0, 1, 2, 0, 1, 2, 4, 5, 6], [0, 3, 6, 9], [1, 1, 1])
    assert [a.tolist() for a in counter.runs()] == [[], [0], []]  # taken: none left
    counter.add_batch(["big cat sat", "big cat sat"])
    assert [a.tolist() for a in counter.runs()] == [[0, 1, 2], [0, 3], [2]]  # distinct, counts summed
    table = count_corpus(sample_docs, PRETOK, collect_runs=True, threads=2)
    read = table.read_runs()
    distinct = table.packed_runs()
    assert len(read[2]) > len(distinct[2])  # the sample repeats some runs
    assert int(read[2].sum()) == int(distinct[2].sum())
    assert table.read_runs() is distinct  # aggregated once, then the distinct table is what is read
    same_table(table, count_corpus_reference(sample_docs, PRETOK, collect_runs=True))


def test_builtin_patterns_compile_on_first_use():
    # the compiled scanner and counter never use the regex form of the default patterns; a user's pattern is
    # still checked when the pre-tokenizer is made
    pretok = fastsw.Pretokenizer()
    assert pretok._regexes == {}
    assert pretok.pretokenize_reference("Hello world 12345") == ["Hello", " world", " ", "123", "45"]
    assert pretok.has_letter("12a") and not pretok.has_letter("123")
    assert set(pretok._regexes) == {"_main", "_letter"}
    with pytest.raises(ValueError, match="invalid pre-tokenizer regex"):
        fastsw.Pretokenizer(main_pattern="(")


def test_merge_table_refuses_bad_tables():
    table = counting.NativeCountTable(PRETOK, collect_runs=True)
    table.add("Hello world, big cat!")
    pretokens, counts, letter, (ids, offsets, run_counts), docs, size = table.payload()
    into = counting.NativeCountTable(PRETOK, collect_runs=True).counter
    with pytest.raises(IndexError, match="letter run refers to a pretoken outside 0..5"):
        into.merge_table(pretokens, counts, letter, (ids + 4, offsets, run_counts), docs, size)
    with pytest.raises(ValueError, match="letter runs and one without"):
        into.merge_table(pretokens, counts, letter, None, docs, size)
    with pytest.raises(ValueError, match="one entry per pretoken"):
        into.merge_table(pretokens, counts[:2], letter, (ids, offsets, run_counts), docs, size)
    with pytest.raises(TypeError, match="pretokens must be str, not bytes"):
        into.merge_table([b"x"] + pretokens[1:], counts, letter, (ids, offsets, run_counts), docs, size)


def test_merge_without_runs_drops_runs(sample_docs):
    a = count_corpus(sample_docs[:5], PRETOK, collect_runs=True)
    b = count_corpus(sample_docs[5:10], PRETOK, collect_runs=False)
    merged = a.merge(b)
    assert not merged.has_runs and merged.letter_runs == {}


def test_merge_refuses_different_pretokenizers(tmp_path):
    a = count_corpus(["some text"], PRETOK, collect_runs=True)
    b = count_corpus(["some text"], fastsw.Pretokenizer(mode="simple"), collect_runs=True)
    b.save(tmp_path / "simple.counts")
    with pytest.raises(ValueError, match="different pretokenizers.*mode"):
        a.merge(b)
    a.save(tmp_path / "script.counts")
    with pytest.raises(ValueError, match="script.counts and .*simple.counts were counted with different"):
        load_counts([tmp_path / "script.counts", tmp_path / "simple.counts"])
    with pytest.raises(ValueError, match="different pretokenizers"):
        fastsw.train(from_counts=[tmp_path / "script.counts", tmp_path / "simple.counts"], vocab_size=300)


def _write_counts(path: Path, lines) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for line in lines:
            f.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
    return path


def _header(**kw):
    h = {
        "format": "fastsw-counts",
        "format_version": 1,
        "pretokenizer": PRETOK.to_config(),
        "runs": True,
        "documents": 1,
        "bytes": 3,
        "pretokens": 2,
        "letter_runs": 1,
    }
    h.update(kw)
    return h


def test_a_hand_written_count_file_loads(tmp_path):
    path = _write_counts(tmp_path / "ok.counts", [_header(), ["a", 1, 1], [" b", 1, 1], [1, 0, 1]])
    c = Counts.load(path)
    assert c.run_multiset() == {("a", " b"): 1}


@pytest.mark.parametrize(
    "lines,message",
    [
        ([_header(format_version=2)], "version 2 is newer"),
        ([_header(format="other")], "not a fastsw count file"),
        ([_header(format_version="1")], "integer format_version"),
        (["{not json"], "line 1: invalid count file.*bad JSON"),
        ([_header(), ["a", 1, 1]], "line 3: .*ends early"),
        ([_header(), ["a", 0, 1], [" b", 1, 1], [1, 0, 1]], "line 2: .*count >= 1"),
        ([_header(), ["a", 1, 1], ["a", 1, 1], [1, 0, 1]], "line 3: .*twice"),
        ([_header(), ["a", 1, 1], [" b", 1, 1], [1, 0, 7]], "line 4: .*run of >= 2"),
        ([_header(), ["a", 1, 1], [" b", 1, 1], [1, 0, 1], [1, 0, 1]], "line 5: .*unexpected data"),
        ([_header(pretokenizer={"mode": "nope"})], "line 1: .*mode"),
    ],
)
def test_bad_count_files_name_the_file(tmp_path, lines, message):
    path = _write_counts(tmp_path / "bad.counts", lines)
    with pytest.raises(ValueError, match=message) as e:
        Counts.load(path)
    assert str(path) in str(e.value)


def test_damaged_count_files(tmp_path):
    c = count_corpus(["some words here"] * 50, PRETOK, collect_runs=True)
    good = tmp_path / "good.counts"
    c.save(good)
    data = good.read_bytes()
    truncated = tmp_path / "truncated.counts"
    truncated.write_bytes(data[: len(data) // 2])
    plain = tmp_path / "plain.counts"
    plain.write_text("hello\n")
    for path, message in (
        (truncated, "damaged or truncated"),
        (plain, "not gzip"),
        (tmp_path / "missing.counts", "not found"),
    ):
        with pytest.raises(ValueError, match=message) as e:
            Counts.load(path)
        assert str(path) in str(e.value)


# Counts are 64-bit in the kernels: beyond 2**63-1 a table is refused when it is loaded, and the merge loops
# of both backends refuse sums that could pass it (they used to wrap around in the Numba kernel only).
BIG = 2**62


@pytest.mark.parametrize(
    "rows,line",
    [
        ([["a", 2**63, 1], [" b", 1, 1], [1, 0, 1]], 2),
        ([["a", 1, 1], [" b", 2**70, 1], [1, 0, 1]], 3),
        ([["a", 1, 1], [" b", 1, 1], [2**63, 0, 1]], 4),
    ],
)
def test_count_files_refuse_counts_beyond_int64(tmp_path, capsys, rows, line):
    path = _write_counts(tmp_path / "big.counts", [_header(), *rows])
    with pytest.raises(ValueError, match=rf"big.counts line {line}: .*larger than 2\*\*63-1") as e:
        Counts.load(path)
    assert str(path) in str(e.value)
    for backend in BACKENDS:
        with pytest.raises(ValueError, match="larger than 2\\*\\*63-1"):
            fastsw.train(from_counts=path, algo="bpe", vocab_size=300, backend=backend)
    assert main(["train", "--from-counts", str(path), "-o", str(tmp_path / "m.json"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fastsw: error: ") and err.count("\n") == 1 and "larger than 2**63-1" in err


def _hand_table(counts, runs=None) -> Counts:
    c = Counts(pretokenizer_config=PRETOK.to_config(), has_runs=True)
    for piece, n in counts.items():
        c.index[piece] = len(c.pretokens)
        c.pretokens.append(piece)
        c.counts.append(n)
        c.has_letter.append(True)
    c.letter_runs = runs or {}
    return c


def test_counts_that_sum_beyond_int64_are_refused_by_both_backends(tmp_path, capsys, backend):
    # four counts of 2**62 each fit, and load; their sum (the count of the pair a+b) does not
    four = _write_counts(
        tmp_path / "four.counts",
        [_header(pretokens=4, letter_runs=0), ["ab", BIG, 1], ["abc", BIG, 1], ["abd", BIG, 1], ["abe", BIG, 1]],
    )
    assert Counts.load(four).counts == [BIG] * 4
    with pytest.raises(ValueError, match=r"four.counts: the pretoken counts sum to 18446744073709551616"):
        fastsw.train(from_counts=four, algo="bpe", vocab_size=300, backend=backend)
    assert (
        main(
            [
                "train",
                "--from-counts",
                str(four),
                "--algo",
                "bpe",
                "--backend",
                backend,
                "-o",
                str(tmp_path / "m.json"),
                "--no-progress",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("fastsw: error: ") and err.count("\n") == 1 and "sum to 18446744073709551616" in err
    # merging tables sums their counts: a table of 2**61 + 2**61 fits, twice it does not
    half = _write_counts(
        tmp_path / "half.counts", [_header(pretokens=2, letter_runs=0), ["ab", BIG // 2, 1], ["cd", BIG // 2, 1]]
    )
    fastsw.train(from_counts=half, algo="bpe", vocab_size=300, backend=backend)  # alone it fits
    with pytest.raises(ValueError, match=r"merged count tables .*half.counts.*sum to"):
        fastsw.train(from_counts=[half, half], algo="bpe", vocab_size=300, backend=backend)
    # a single count of 2**63 in a table made in memory
    with pytest.raises(ValueError, match="sum to 9223372036854775808"):
        fastsw.train(from_counts=_hand_table({"ab": 2**63}), algo="bpe", vocab_size=300, backend=backend)
    # counts that fit, but whose pairs could pass 2**63-1: "ababab" holds 5 pairs per occurrence
    with pytest.raises(ValueError, match="count x \\(length - 1\\) summed .* 11529215046068469760 pair"):
        fastsw.train(from_counts=_hand_table({"ababab": 2**61}), algo="bpe", vocab_size=300, backend=backend)
    # ... and supermerge candidates: a run of n pretokens adds its count to up to n candidate occurrences
    table = _hand_table({"a": 2**61, " b": 2**61}, runs={(0, 1, 0, 1, 0, 1): 2**61})
    with pytest.raises(ValueError, match="letter-run counts times their lengths sum to 13835058055282163712"):
        fastsw.train(from_counts=table, algo="superbpe", vocab_size=300, supermerges=10, backend=backend)
    # the same candidate twice in one run (split by a pretoken that stays several tokens): 2 x 2**62
    table = _hand_table({"a": 1, " b": 1, " xyzzyq": 1}, runs={(0, 1, 2, 0, 1): 2**62})
    with pytest.raises(ValueError, match="letter-run counts times their lengths sum to"):
        fastsw.train(from_counts=table, algo="superbpe", vocab_size=250, supermerges=2, backend=backend)


def test_the_pair_count_check_is_the_same_in_both_merge_loops():
    from fastsw.alphabet import get_profile
    from fastsw.trainers.bpe import learn_merges
    from fastsw.trainers.bpe_fast import learn_merges_fast

    tb = [bytes([i]) for i in range(4)]
    limit = 2**63 - 1
    for learn in (learn_merges, learn_merges_fast):
        # 3 pairs x (2**63-1) // 3 fits exactly ...
        merges, _ = learn([[0, 1, 2, 3]], [limit // 3], list(tb), get_profile("paper"), 3)
        assert merges == [(0, 1, limit // 3), (4, 2, limit // 3), (5, 3, limit // 3)]
        # ... one more does not
        with pytest.raises(ValueError, match=f"gives {3 * (limit // 3 + 1)} pair occurrences"):
            learn([[0, 1, 2, 3]], [limit // 3 + 1], list(tb), get_profile("paper"), 3)


# ---- training from counts ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "algo,kw",
    [("bpe", {}), ("boundless", {}), ("superbpe", {"supermerges": 100}), ("boundless", {"greedy_split": True})],
)
def test_train_from_counts_equals_train_from_text(tmp_path, sample_docs, algo, kw):
    text_model = fastsw.train(sample_docs, algo=algo, vocab_size=900, **kw)
    a = count_corpus(sample_docs[:30], PRETOK, collect_runs=True)
    b = count_corpus(sample_docs[30:], PRETOK, collect_runs=True)
    a.save(tmp_path / "a.counts")
    b.save(tmp_path / "b.counts")
    from_files = fastsw.train(
        from_counts=[tmp_path / "a.counts", str(tmp_path / "b.counts")], algo=algo, vocab_size=900, **kw
    )
    assert model_dict(from_files) == model_dict(text_model)
    assert from_files.training_info["documents"] == len(sample_docs)


def test_train_from_counts_chars_alphabet(sample_docs):
    counts = count_corpus(sample_docs[:20], PRETOK, collect_runs=False)
    a = fastsw.train(sample_docs[:20], vocab_size=2000, profile="hf", alphabet="chars")
    b = fastsw.train(from_counts=counts, vocab_size=2000, profile="hf", alphabet="chars")
    assert model_dict(a) == model_dict(b)


def test_train_from_counts_errors(tmp_path):
    no_runs = count_corpus(["some text here"], PRETOK, collect_runs=False)
    with pytest.raises(ValueError, match="needs letter runs.*--no-runs"):
        fastsw.train(from_counts=no_runs, algo="boundless", vocab_size=300)
    fastsw.train(from_counts=no_runs, algo="bpe", vocab_size=300)  # plain BPE needs no runs
    with pytest.raises(ValueError, match="not both"):
        fastsw.train(["x"], from_counts=no_runs, vocab_size=300)
    with pytest.raises(ValueError, match="needs inputs"):
        fastsw.train(vocab_size=300)
    with pytest.raises(ValueError, match="differs from the pretokenizer the counts were made with"):
        fastsw.train(from_counts=no_runs, pretokenizer="simple", vocab_size=300)
    fastsw.train(from_counts=no_runs, pretokenizer="script", vocab_size=300)  # the same one is fine
    with pytest.raises(ValueError, match="not found"):
        fastsw.train(from_counts=tmp_path / "missing.counts", vocab_size=300)
    with pytest.raises(ValueError, match="empty"):
        fastsw.train(from_counts=[], vocab_size=300)


# ---- CLI -------------------------------------------------------------------------------------------------------------


def test_cli_count_then_train_equals_train_on_text(tmp_path, sample_docs, capsys):
    halves = []
    for k in range(2):
        path = tmp_path / f"part{k}.jsonl"
        path.write_text("".join(json.dumps({"text": d}) + "\n" for d in sample_docs[k::2]), encoding="utf-8")
        halves.append(path)
    assert main(["count", str(halves[0]), "-o", str(tmp_path / "p0.counts"), "--workers", "2", "--no-progress"]) == 0
    assert main(["count", str(halves[1]), "-o", str(tmp_path / "p1.counts"), "--no-progress"]) == 0
    assert "distinct pretokens" in capsys.readouterr().err
    for algo, extra in (("boundless", []), ("superbpe", ["--supermerges", "100"])):
        assert (
            main(
                [
                    "train",
                    "--from-counts",
                    str(tmp_path / "p0.counts"),
                    str(tmp_path / "p1.counts"),
                    "-o",
                    str(tmp_path / "from_counts.json"),
                    "--algo",
                    algo,
                    "--vocab-size",
                    "900",
                    "--no-progress",
                    *extra,
                ]
            )
            == 0
        )
        assert (
            main(
                [
                    "train",
                    *map(str, halves),
                    "-o",
                    str(tmp_path / "from_text.json"),
                    "--algo",
                    algo,
                    "--vocab-size",
                    "900",
                    "--no-progress",
                    *extra,
                ]
            )
            == 0
        )
        a = json.loads((tmp_path / "from_counts.json").read_text())
        b = json.loads((tmp_path / "from_text.json").read_text())
        a.pop("training"), b.pop("training")
        assert a == b


@pytest.mark.parametrize("language", ["de", "ja"])
def test_cli_count_workers_2_writes_the_file_of_workers_1(tmp_path, monkeypatch, capsys, language):
    # Small batches, so that the worker's table and this process's share pretokens: summing a compiled
    # counter's numpy counts into Python ints once gave numpy ints that the count file could not hold
    # (TypeError: Object of type int64 is not JSON serializable), and the row order depended on which
    # process counted which batch.
    monkeypatch.setattr(counting, "BATCH_BYTES", 2048)
    corpus = shared_path(f"corpus/fixtures/{language}.txt")
    files = {}
    for workers in ("1", "2"):
        files[workers] = tmp_path / f"w{workers}.counts"
        assert main(["count", str(corpus), "-o", str(files[workers]), "--workers", workers, "--no-progress"]) == 0
    assert "Traceback" not in capsys.readouterr().err
    assert files["1"].read_bytes() == files["2"].read_bytes()
    same_table(Counts.load(files["2"]), count_corpus_reference(iter_documents(corpus), PRETOK, collect_runs=True))


def test_custom_pattern_workers_2_writes_the_file_of_workers_1(tmp_path, sample_docs):
    # custom patterns count with the reference table in every process; the tables merge with Counts.merge
    custom = fastsw.Pretokenizer(mode="simple", main_pattern=r"\w+|\W")
    for workers in (1, 2):
        count_corpus_parallel(sample_docs, custom, collect_runs=True, workers=workers, batch_bytes=20_000).save(
            tmp_path / f"w{workers}.counts"
        )
    assert (tmp_path / "w1.counts").read_bytes() == (tmp_path / "w2.counts").read_bytes()
    same_table(Counts.load(tmp_path / "w2.counts"), count_corpus_reference(sample_docs, custom, collect_runs=True))


def test_cli_errors(tmp_path, capsys):
    src = tmp_path / "c.txt"
    src.write_text("some words here\nand more words\n")
    assert main(["count", str(src), "-o", str(tmp_path / "nr.counts"), "--no-runs", "--no-progress"]) == 0
    capsys.readouterr()
    cases = [
        (
            [
                "train",
                "--from-counts",
                str(tmp_path / "nr.counts"),
                "--algo",
                "boundless",
                "-o",
                str(tmp_path / "m.json"),
            ],
            "--algo boundless needs letter runs",
        ),
        (
            ["train", str(src), "--from-counts", str(tmp_path / "nr.counts"), "-o", str(tmp_path / "m.json")],
            "either INPUT files or --from-counts",
        ),
        (
            [
                "train",
                "--from-counts",
                str(tmp_path / "nr.counts"),
                "--algo",
                "bpe",
                "--pretokenizer",
                "simple",
                "-o",
                str(tmp_path / "m.json"),
            ],
            "--pretokenizer simple differs",
        ),
        (
            [
                "train",
                "--from-counts",
                str(tmp_path / "nr.counts"),
                "--algo",
                "bpe",
                "--workers",
                "2",
                "-o",
                str(tmp_path / "m.json"),
            ],
            "--workers applies",
        ),
        (
            [
                "train",
                "--from-counts",
                str(tmp_path / "nr.counts"),
                "--algo",
                "bpe",
                "--doc-mode",
                "file",
                "-o",
                str(tmp_path / "m.json"),
            ],
            "--doc-mode applies to INPUT files",
        ),
        (
            ["train", "--from-counts", str(src), "--algo", "bpe", "-o", str(tmp_path / "m.json")],
            "not a fastsw count file",
        ),
        (["count", str(tmp_path / "missing.txt"), "-o", str(tmp_path / "x.counts")], "file not found"),
        (["count", str(src), "-o", str(tmp_path / "x.counts"), "--workers", "0"], "must be a positive"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert message in err, (argv, err)
        assert "Traceback" not in err
    assert not (tmp_path / "m.json").exists() and not (tmp_path / "x.counts").exists()


# ---- bad input -----------------------------------------------------------------------------------------------------


def test_nul_bytes_count_train_and_round_trip(tmp_path):
    docs = ["a\x00b\x00c words\x00 and\x00\x00more", "\x00"] * 20
    ref = count_corpus_reference(docs, PRETOK, collect_runs=True)
    same_table(count_corpus(docs, PRETOK, collect_runs=True), ref)
    same_table(count_corpus_parallel(docs, PRETOK, collect_runs=True, workers=2, batch_docs=3), ref)
    ref.save(tmp_path / "nul.counts")
    same_table(Counts.load(tmp_path / "nul.counts"), ref)
    tok = fastsw.train(docs, algo="boundless", vocab_size=300)
    assert model_dict(tok) == model_dict(
        fastsw.train(from_counts=tmp_path / "nul.counts", algo="boundless", vocab_size=300)
    )
    assert tok.decode(tok.encode(docs[0])) == docs[0]


def test_one_huge_line_without_newlines(tmp_path):
    """A 5 MB document without a newline (standing in for the 50 MB case, to keep the suite fast) is counted with
    extra memory proportional to that one document (its pretoken list), not more."""

    def word(i):  # i in base 26 as letters: 9973 distinct letter-only words
        i %= 9973
        return "".join(chr(97 + (i // 26**k) % 26) for k in range(3))

    words = " ".join(word(i) + "ing" for i in range(800_000))  # ~5.6 MB, one line
    size = len(words)
    assert size > 5_000_000 and "\n" not in words
    path = tmp_path / "one_line.txt"
    path.write_text(words)
    tracemalloc.start()
    try:
        counts = count_corpus(iter_documents(path), PRETOK, collect_runs=True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert counts.n_documents == 1 and counts.n_bytes == size
    assert counts.pretoken_multiset()["aaaing"] == 1  # the first word has no leading space
    assert sum(counts.counts) == 800_000  # one pretoken per word
    assert len(counts.letter_runs) == 1 and list(counts.letter_runs.values()) == [1]
    print(f"peak {peak / 1e6:.1f} MB for {size / 1e6:.1f} MB")
    assert peak < 25 * size, f"peak {peak / 1e6:.0f} MB for a {size / 1e6:.0f} MB document"
    if counting.native_counting(PRETOK):  # the compiled counter's scratch (malloc, unseen by tracemalloc)
        table = counting.NativeCountTable(PRETOK, collect_runs=True)
        table.add(words)
        # the one letter run of 800k pretokens (4 bytes each) and a fixed window, not 8 bytes per code point
        assert table.counter.scratch_bytes < 4 * 800_000 * 1.5 + 100_000
        no_runs = counting.NativeCountTable(PRETOK, collect_runs=False)
        no_runs.add(words)
        assert no_runs.counter.scratch_bytes < 1000
        assert no_runs.finish().pretoken_multiset() == counts.pretoken_multiset()


def test_empty_corpus_gives_the_alphabet(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    for inputs in ([], [""], empty):
        tok = fastsw.train(inputs, algo="boundless", vocab_size=400)
        assert tok.vocab_size == 243 and len(tok.merges) == 0
        assert any("corpus is empty" in note for note in tok.training_info["notes"])
    c = count_corpus([], PRETOK, collect_runs=True)
    c.save(tmp_path / "empty.counts")
    tok = fastsw.train(from_counts=tmp_path / "empty.counts", algo="superbpe", supermerges=10, vocab_size=400)
    assert tok.vocab_size == 243
    assert main(["count", str(empty), "-o", str(tmp_path / "e.counts"), "--no-progress"]) == 0
    assert Counts.load(tmp_path / "e.counts").n_documents == 0


def test_invalid_utf8_propagates(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"good line\nbad \xff line\n")
    for run in (
        lambda: count_corpus(iter_documents(bad), PRETOK, collect_runs=True),
        lambda: count_corpus_parallel(iter_documents(bad), PRETOK, collect_runs=True, workers=2),
        lambda: fastsw.train(bad, vocab_size=300, workers=2),
        lambda: fastsw.train([bad], vocab_size=300),
    ):
        with pytest.raises(InputError, match="bad.txt.*line 2"):
            run()
    assert main(["count", str(bad), "-o", str(tmp_path / "b.counts"), "--no-progress", "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert "bad.txt" in err and "UTF-8" in err and "Traceback" not in err
    assert not (tmp_path / "b.counts").exists()
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


# ---- the compiled counter (fastsw.pretokenizers._pretok.Counter): threads, packed runs, adversarial Unicode ---------------------


def test_native_counter_is_used_for_the_default_pretokenizers(monkeypatch):
    monkeypatch.delenv("FASTSW_PUREPYTHON", raising=False)
    assert counting.native_counting(PRETOK) and counting.native_counting(fastsw.Pretokenizer(mode="simple"))
    assert not counting.native_counting(fastsw.Pretokenizer(letter_pattern=r"\p{Lu}"))
    assert not counting.native_counting(fastsw.Pretokenizer(main_pattern=r"\S+|\s+"))
    c = count_corpus(["two words, and more"], PRETOK, collect_runs=True)
    assert c._packed_runs is not None  # runs stay packed until a dict is asked for
    assert c.n_runs == 2 and c.letter_runs and c._packed_runs is None
    monkeypatch.setenv("FASTSW_PUREPYTHON", "1")
    assert not counting.native_counting(PRETOK)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_native_counter_threads_equal_reference(sample_docs, monkeypatch, threads):
    monkeypatch.setattr(counting, "BATCH_BYTES", 5000)  # many batches, so every thread gets several
    ref = count_corpus_reference(sample_docs, PRETOK, collect_runs=True)
    got = count_corpus(sample_docs, PRETOK, collect_runs=True, threads=threads)
    same_table(got, ref)
    again = count_corpus(sample_docs, PRETOK, collect_runs=True, threads=threads)
    assert again.pretokens == got.pretokens and again.letter_runs == got.letter_runs  # deterministic
    if threads == 1:
        assert got.pretokens == ref.pretokens and got.letter_runs == ref.letter_runs


def test_native_counter_without_runs_and_simple_mode(sample_docs):
    simple = fastsw.Pretokenizer(mode="simple")
    for pretok in (PRETOK, simple):
        ref = count_corpus_reference(sample_docs, pretok, collect_runs=False)
        same_table(count_corpus(sample_docs, pretok, collect_runs=False, threads=2), ref)


def test_native_counter_reports_errors_from_its_threads(monkeypatch):
    monkeypatch.setattr(counting, "BATCH_DOCS", 1)
    docs = ["some text"] * 5 + [b"bytes"] + ["more text"] * 5 + [3]
    with pytest.raises(TypeError, match="documents must be str, not bytes"):  # raised in a counting thread
        count_corpus(docs, PRETOK, collect_runs=True, threads=2)
    with pytest.raises(TypeError, match="documents must be str, not int"):
        count_corpus(["x", 3], PRETOK, collect_runs=True, threads=1)
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        count_corpus(["x"], PRETOK, collect_runs=True, threads=0)


def test_packed_and_dict_runs_agree(sample_docs, tmp_path):
    packed = count_corpus(sample_docs[:50], PRETOK, collect_runs=True, threads=1)
    ids, offsets, counts = packed.packed_runs()
    plain = count_corpus_reference(sample_docs[:50], PRETOK, collect_runs=True)
    ids2, offsets2, counts2 = plain.packed_runs()  # built from the dict
    assert ids.tolist() == ids2.tolist() and offsets.tolist() == offsets2.tolist()
    assert counts.tolist() == counts2.tolist()
    packed.save(tmp_path / "packed.counts.gz")
    plain.save(tmp_path / "plain.counts.gz")
    assert gzip.decompress((tmp_path / "packed.counts.gz").read_bytes()) == gzip.decompress(
        (tmp_path / "plain.counts.gz").read_bytes()
    )
    merged = count_corpus(sample_docs[:20], PRETOK, collect_runs=True).merge(
        count_corpus(sample_docs[20:50], PRETOK, collect_runs=True)
    )
    same_table(merged, plain)


def test_native_counter_on_adversarial_unicode():
    from hypothesis import HealthCheck, given, settings
    from test_pretok import HYPOTHESIS_EXAMPLES, adversarial
    from hypothesis import strategies as st

    @settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(adversarial, max_size=6))
    def check(docs):
        for pretok in (PRETOK, fastsw.Pretokenizer(mode="simple")):
            same_table(
                count_corpus(docs, pretok, collect_runs=True, threads=2),
                count_corpus_reference(docs, pretok, collect_runs=True),
            )

    check()


def test_lone_surrogate_in_a_str_document_is_a_clear_error(backend):
    # a str document (not a file: files are checked while reading) with a lone surrogate cannot
    # be trained with a byte alphabet; both paths say so and how to fix it
    for algo in ("bpe", "boundless"):
        with pytest.raises(ValueError, match=r"lone surrogate.*alphabet='chars'"):
            fastsw.train(["ab\udc00cd ef"], vocab_size=300, algo=algo, backend=backend)
    tok = fastsw.train(["ab\udc00cd ef"], vocab_size=300, alphabet="chars", profile="hf", backend=backend)
    assert tok.vocab_size > 5


def test_native_counter_batches_grow_to_a_bound(sample_docs, monkeypatch):
    """The compiled counter's batches double from ``BATCH_BYTES`` up to ``BATCH_GROWTH`` times it (fewer hand-overs
    between the reading thread and the counting threads on a big corpus), and the counts stay the reference's."""
    monkeypatch.setattr(counting, "BATCH_BYTES", 2000)
    sizes = []
    add = counting.NativeCountTable.add_batch

    def recording(self, docs):
        sizes.append(sum(map(len, docs)))
        add(self, docs)

    monkeypatch.setattr(counting.NativeCountTable, "add_batch", recording)
    got = count_corpus(sample_docs, PRETOK, collect_runs=True, threads=2)
    same_table(got, count_corpus_reference(sample_docs, PRETOK, collect_runs=True))
    assert len(sizes) > 6 and sizes[0] < 2000 * 2 <= sizes[2]
    assert max(sizes) >= 2000 * counting.BATCH_GROWTH > 2000 * 2
    assert all(s < 2000 * counting.BATCH_GROWTH + max(map(len, sample_docs)) for s in sizes)
