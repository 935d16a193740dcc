"""The ``none`` pre-tokenizer (one pretoken per document) and the ``normalize`` option (None / nfc / nfkc).

SPEC section 8 and seed 001 ("merges cannot cross sentence boundaries but can cross
spaces"; "no character normalization" by default, and no whitespace changes ever).
"""

from __future__ import annotations

import gzip
import json
import warnings

import pytest

import fastsw
from fastsw.corpus.counting import Counts, count_corpus, count_corpus_parallel, native_counting
from fastsw.pretokenizers import pretokenize
from fastsw.pretokenizers.pretokenize import Pretokenizer
from conftest import BACKENDS, assert_error, run

DECOMPOSED = (
    "Cafe\u0301 cre\u0300me bru\u0302le\u0301e, e\u0301te\u0301 \ufb01n"  # e + combining accents; the fi ligature
)
COMPOSED = "Café crème brûlée, été \ufb01n"


def quiet_train(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastsw.VocabularyNotReachedWarning)
        return fastsw.train(*args, **kwargs)


def merges_as_bytes(tok):
    return [(tok.vocab[m.left], tok.vocab[m.right], m.count) for m in tok.merges]


@pytest.fixture(scope="module")
def multilingual_docs(sample_docs):
    """A slice of every language of the bundled sample: real multilingual text, short enough for the reference."""
    return [d[:400] for d in sample_docs[:60]]


# ---- the none pre-tokenizer ----------------------------------------------------------------------------------------


def test_none_pretokenizer_is_one_pretoken_per_document():
    pretok = Pretokenizer(mode="none")
    text = "Hello  world,\n  two\tlines 123 日本語"
    assert pretok.pretokenize(text) == [text]
    assert pretok.pretokenize_reference(text) == [text]
    assert pretok.pretokenize("") == [] and pretok.pretokenize_reference("") == []
    assert Pretokenizer.from_config(pretok.to_config()) == pretok
    assert pretokenize.make_pretokenizer("none") == pretok
    assert not pretok.uses_native and not native_counting(pretok)  # the reference counter counts it


@pytest.mark.parametrize("profile", ("paper", "hf"))
def test_none_learns_a_merge_across_a_space(backend, profile):
    # Worked by hand. Pretokens (whole documents): "a b" x2, "a c" x1. Pairs: (a, ' ') 3, (' ', b) 2, (' ', c) 1,
    # so merge 1 is a + ' ' (3); then ("a ", b) 2 > ("a ", c) 1, so merge 2 is "a " + b = "a b", across the space.
    docs = ["a b", "a b", "a c"]
    n_alpha = len(fastsw.alphabet.default_alphabet(profile))
    tok = quiet_train(docs, algo="bpe", vocab_size=n_alpha + 2, profile=profile, pretokenizer="none", backend=backend)
    assert merges_as_bytes(tok) == [(b"a", b" ", 3), (b"a ", b"b", 2)]
    assert tok.encode("a b", backend="python") == tok.encode("a b", backend="numba") == [n_alpha + 1]
    # the default pre-tokenizer keeps the space with the next word: no merge ever contains "a "
    script = quiet_train(docs, algo="bpe", vocab_size=n_alpha + 2, profile=profile, backend=backend)
    assert merges_as_bytes(script) == [(b" ", b"b", 2), (b" ", b"c", 1)]


@pytest.mark.parametrize("algo,extra", [("boundless", {}), ("superbpe", {"supermerges": 10})])
def test_none_refuses_the_superword_algorithms(algo, extra):
    # one pretoken per document: there are no runs of >= 2 pretokens to supermerge
    with pytest.raises(ValueError, match="needs a pre-tokenizer that splits"):
        fastsw.train(["a b c"], algo=algo, vocab_size=300, pretokenizer="none", **extra)
    counts = count_corpus(["a b c"], Pretokenizer(mode="none"), collect_runs=True)
    with pytest.raises(ValueError, match="needs a pre-tokenizer that splits"):
        fastsw.train(from_counts=counts, algo=algo, vocab_size=300, **extra)


def test_none_encode_decode_and_backends_agree(multilingual_docs):
    tok = quiet_train(multilingual_docs, algo="bpe", vocab_size=600, pretokenizer="none", backend="numba")
    ref = quiet_train(multilingual_docs, algo="bpe", vocab_size=600, pretokenizer="none", backend="python")
    assert tok.merges == ref.merges
    texts = [d[:300] for d in multilingual_docs[:20]] + ["", " ", "a  b\n"]
    fast = tok.encode_batch(texts, backend="numba")
    assert fast == tok.encode_batch(texts, backend="python")
    assert fast == [tok.encode(t, backend="numba") for t in texts] == [tok.encode(t, backend="python") for t in texts]
    assert [tok.decode(ids) for ids in fast] == texts
    ids, offsets = tok.encode_batch_to_numpy(texts, backend="numba")
    assert [ids[a:b].tolist() for a, b in zip(offsets, offsets[1:])] == fast


def test_none_model_file_and_counts_round_trip(tmp_path, multilingual_docs):
    tok = quiet_train(multilingual_docs, algo="bpe", vocab_size=400, pretokenizer="none")
    tok.save(tmp_path / "m.json")
    loaded = fastsw.Tokenizer.load(tmp_path / "m.json")
    assert loaded.pretokenizer.mode == "none" and loaded.merges == tok.merges
    text = multilingual_docs[3]
    assert loaded.encode(text) == tok.encode(text)
    counts = count_corpus(multilingual_docs, Pretokenizer(mode="none"), collect_runs=False)
    counts.save(tmp_path / "c.gz")
    again = quiet_train(from_counts=tmp_path / "c.gz", algo="bpe", vocab_size=400)
    assert again.pretokenizer.mode == "none" and again.merges == tok.merges


def test_cli_none_pretokenizer(capsys, tmp_path):
    corpus = tmp_path / "t.jsonl"  # the hand-worked toy of test_none_learns_a_merge_across_a_space
    corpus.write_text("".join(json.dumps({"text": d}) + "\n" for d in ("a b", "a b", "a c")), encoding="utf-8")
    model = tmp_path / "m.json"
    code, _, err = run(
        capsys, "train", corpus, "-o", model, "--pretokenizer", "none", "--algo", "boundless", "--no-progress"
    )
    assert_error(code, err, "--pretokenizer none", "--algo bpe")
    assert not model.exists()
    code, _, err = run(
        capsys,
        "train",
        corpus,
        "-o",
        model,
        "--pretokenizer",
        "none",
        "--algo",
        "bpe",
        "--vocab-size",
        "245",
        "--no-progress",
    )
    assert code == 0, err
    tok = fastsw.Tokenizer.load(model)
    assert tok.pretokenizer.mode == "none"
    assert merges_as_bytes(tok) == [(b"a", b" ", 3), (b"a ", b"b", 2)]
    code, out, _ = run(capsys, "pretokenize", "--pretokenizer", "none", corpus)
    assert code == 0 and out.splitlines() == ['["a b"]', '["a b"]', '["a c"]']
    code, _, err = run(capsys, "count", corpus, "-o", tmp_path / "c.gz", "--pretokenizer", "none", "--no-progress")
    assert code == 0, err
    assert Counts.load(tmp_path / "c.gz").pretokenizer_config["mode"] == "none"


# ---- normalization --------------------------------------------------------------------------------------------------


def test_normalize_text_by_hand():
    assert pretokenize.normalize_text("e\u0301", "nfc") == "\u00e9"
    assert pretokenize.normalize_text("\u00e9", "nfc") == "\u00e9"
    assert pretokenize.normalize_text("\ufb01", "nfc") == "\ufb01"  # a compatibility character: nfc keeps it
    assert pretokenize.normalize_text("\ufb01", "nfkc") == "fi"
    assert pretokenize.normalize_text("x\u00b2", "nfkc") == "x2"
    assert pretokenize.normalize_text("e\u0301\ufb01", None) == "e\u0301\ufb01"  # None: nothing is changed
    for form in (None, "nfc", "nfkc"):
        # nothing else: whitespace, newlines and case stay exactly as they were
        assert (
            pretokenize.normalize_text("  Two  Spaces\t\r\n\n  UPPER lower ", form)
            == "  Two  Spaces\t\r\n\n  UPPER lower "
        )
    assert [pretokenize.check_normalize(v) for v in (None, "none", "nfc", "NFKC")] == [None, None, "nfc", "nfkc"]


@pytest.mark.parametrize("bad", ["nfd", "NFKD", "", 1, True])
def test_bad_normalize_values_are_one_clear_error(bad):
    with pytest.raises(ValueError, match="normalize=.*is not a normalization; use None"):
        fastsw.train(["abc"], algo="bpe", vocab_size=300, normalize=bad)
    with pytest.raises(ValueError, match="normalize="):
        count_corpus(["abc"], Pretokenizer(), collect_runs=False, normalize=bad)


def test_nfc_model_encodes_decomposed_and_composed_text_identically(backend):
    docs = [DECOMPOSED, COMPOSED] * 5
    tok = quiet_train(docs, algo="bpe", vocab_size=300, normalize="nfc", backend=backend)
    assert tok.normalize == "nfc"
    expected = tok.encode(COMPOSED, backend="python")
    for b in BACKENDS:
        assert tok.encode(DECOMPOSED, backend=b) == expected
        assert tok.encode_ordinary(DECOMPOSED, backend=b) == expected
        assert tok.encode_batch([DECOMPOSED, COMPOSED], backend=b) == [expected, expected]
        assert tok.encode_ordinary_batch([DECOMPOSED], backend=b) == [expected]
        ids, offsets = tok.encode_batch_to_numpy([DECOMPOSED], backend=b)
        assert ids.tolist() == expected and offsets.tolist() == [0, len(expected)]
    nfc = pretokenize.normalize_text(DECOMPOSED, "nfc")
    assert nfc == COMPOSED and tok.decode(tok.encode(DECOMPOSED)) == COMPOSED  # decode gives the normalized text
    # the offsets refer to the normalized text: "e\u0301x" is "\u00e9x", so x starts at character 1
    ids, starts = tok.encode_with_offsets("e\u0301x")
    assert tok.decode(ids) == "\u00e9x" and starts[-1] == 1
    # nfkc also folds the ligature; nfc and the default keep it
    nfkc = quiet_train(docs, algo="bpe", vocab_size=300, normalize="nfkc", backend=backend)
    assert nfkc.decode(nfkc.encode("\ufb01n")) == "fin"
    assert tok.decode(tok.encode("\ufb01n")) == "\ufb01n"


def test_default_is_lossless(multilingual_docs):
    tok = quiet_train([DECOMPOSED, COMPOSED] * 5, algo="bpe", vocab_size=300)
    assert tok.normalize is None
    assert tok.encode(DECOMPOSED) != tok.encode(COMPOSED)
    assert tok.decode(tok.encode(DECOMPOSED)) == DECOMPOSED
    # and an explicit None trains exactly the default model on real text
    assert (
        quiet_train(multilingual_docs, algo="bpe", vocab_size=400, normalize=None).merges
        == quiet_train(multilingual_docs, algo="bpe", vocab_size=400).merges
    )


@pytest.mark.parametrize("algo,extra", [("bpe", {}), ("boundless", {}), ("superbpe", {"supermerges": 50})])
def test_training_normalizes_every_document_before_pretokenization(algo, extra, multilingual_docs):
    decomposed = [pretokenize.normalize_text(d, "nfc").replace("\u00e9", "e\u0301") for d in multilingual_docs]
    composed = [pretokenize.normalize_text(d, "nfc") for d in decomposed]
    fast = quiet_train(decomposed, algo=algo, vocab_size=500, normalize="nfc", backend="numba", **extra)
    ref = quiet_train(decomposed, algo=algo, vocab_size=500, normalize="nfc", backend="python", **extra)
    plain = quiet_train(composed, algo=algo, vocab_size=500, backend="numba", **extra)
    assert fast.merges == ref.merges == plain.merges
    assert fast.training_info["bytes"] == plain.training_info["bytes"]
    assert fast.training_info["options"]["normalize"] == "nfc"


def test_model_file_round_trips_normalize(tmp_path):
    tok = quiet_train([DECOMPOSED] * 4, algo="bpe", vocab_size=300, normalize="nfkc")
    tok.save(tmp_path / "m.json")
    data = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))
    assert data["normalize"] == "nfkc"
    loaded = fastsw.Tokenizer.load(tmp_path / "m.json")
    assert loaded.normalize == "nfkc" and loaded.encode(DECOMPOSED) == tok.encode(COMPOSED)
    # a lossless model's file has no normalize field (files are as before); one without it loads as None
    plain = quiet_train([DECOMPOSED] * 4, algo="bpe", vocab_size=300)
    plain.save(tmp_path / "p.json")
    assert "normalize" not in json.loads((tmp_path / "p.json").read_text(encoding="utf-8"))
    assert fastsw.Tokenizer.load(tmp_path / "p.json").normalize is None
    data["normalize"] = None
    (tmp_path / "n.json").write_text(json.dumps(data), encoding="utf-8")
    assert fastsw.Tokenizer.load(tmp_path / "n.json").normalize is None
    for bad in ("nfd", 1, ["nfc"]):
        data["normalize"] = bad
        (tmp_path / "b.json").write_text(json.dumps(data), encoding="utf-8")
        with pytest.raises(ValueError, match=r"b\.json: field normalize: .* is not one of null"):
            fastsw.Tokenizer.load(tmp_path / "b.json")


def test_count_tables_record_normalize_and_refuse_mixing(tmp_path):
    pretok = Pretokenizer()
    nfc = count_corpus([DECOMPOSED], pretok, collect_runs=True, normalize="nfc")
    assert nfc.normalize == "nfc"
    assert nfc.pretoken_multiset() == count_corpus([COMPOSED], pretok, collect_runs=True).pretoken_multiset()
    parallel = count_corpus_parallel(
        [DECOMPOSED] * 3, pretok, collect_runs=True, workers=2, normalize="nfc", batch_docs=1
    )
    assert parallel.normalize == "nfc"
    nfc.save(tmp_path / "nfc.gz")
    with gzip.open(tmp_path / "nfc.gz", "rt", encoding="utf-8") as f:
        assert json.loads(f.readline())["normalize"] == "nfc"
    assert Counts.load(tmp_path / "nfc.gz").normalize == "nfc"
    plain = count_corpus([COMPOSED], pretok, collect_runs=True)
    plain.save(tmp_path / "plain.gz")
    with gzip.open(tmp_path / "plain.gz", "rt", encoding="utf-8") as f:
        assert "normalize" not in json.loads(f.readline())  # count files of lossless text are as before
    with pytest.raises(ValueError, match="different normalizations"):
        fastsw.train(from_counts=[tmp_path / "nfc.gz", tmp_path / "plain.gz"], algo="bpe", vocab_size=300)
    # training from counts keeps their normalization; asking for another is an error
    tok = quiet_train(from_counts=tmp_path / "nfc.gz", algo="bpe", vocab_size=300)
    assert tok.normalize == "nfc"
    assert tok.merges == quiet_train([DECOMPOSED], algo="bpe", vocab_size=300, normalize="nfc").merges
    for other in ("nfkc", "none"):
        with pytest.raises(ValueError, match="differs from the normalization the counts were made with"):
            fastsw.train(from_counts=tmp_path / "nfc.gz", algo="bpe", vocab_size=300, normalize=other)


def test_bad_normalize_in_a_count_file(tmp_path):
    path = tmp_path / "c.gz"
    count_corpus(["abc"], Pretokenizer(), collect_runs=False, normalize="nfc").save(path)
    with gzip.open(path, "rt", encoding="utf-8") as f:
        lines = f.read().splitlines()
    header = json.loads(lines[0])
    header["normalize"] = "nfd"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("\n".join([json.dumps(header)] + lines[1:]) + "\n")
    with pytest.raises(ValueError, match=r"c\.gz line 1: invalid count file: the header's normalize 'nfd'"):
        Counts.load(path)


def test_cli_normalize(capsys, tmp_path):
    corpus = tmp_path / "t.txt"
    corpus.write_text((DECOMPOSED + "\n") * 4, encoding="utf-8")
    model = tmp_path / "m.json"
    code, _, err = run(
        capsys,
        "train",
        corpus,
        "-o",
        model,
        "--algo",
        "bpe",
        "--vocab-size",
        "300",
        "--normalize",
        "nfc",
        "--doc-mode",
        "line",
        "--no-progress",
    )
    assert code == 0, err
    tok = fastsw.Tokenizer.load(model)
    assert tok.normalize == "nfc" and tok.decode(tok.encode(DECOMPOSED)) == COMPOSED
    code, out, _ = run(capsys, "inspect", model)
    assert "normalize:      nfc" in out
    code, _, err = run(capsys, "count", corpus, "-o", tmp_path / "c.gz", "--normalize", "nfkc", "--no-progress")
    assert code == 0, err
    assert Counts.load(tmp_path / "c.gz").normalize == "nfkc"
    code, _, err = run(
        capsys,
        "train",
        "--from-counts",
        tmp_path / "c.gz",
        "-o",
        tmp_path / "x.json",
        "--algo",
        "bpe",
        "--normalize",
        "nfc",
        "--no-progress",
    )
    assert_error(code, err, "--normalize nfc", "nfkc")
    assert not (tmp_path / "x.json").exists()
    code, _, err = run(
        capsys,
        "train",
        "--from-counts",
        tmp_path / "c.gz",
        "-o",
        tmp_path / "x.json",
        "--algo",
        "bpe",
        "--vocab-size",
        "300",
        "--no-progress",
    )
    assert code == 0, err
    assert fastsw.Tokenizer.load(tmp_path / "x.json").normalize == "nfkc"
    code, _, err = run(capsys, "train", corpus, "-o", tmp_path / "y.json", "--normalize", "nfd")
    assert_error(code, err, "--normalize", "'nfd'")
    assert not (tmp_path / "y.json").exists()


def test_language_tagged_counts_keep_the_normalization(tmp_path):
    """Per-language counting (dict inputs, lang_field) normalizes like plain counting and records it, so a
    weighted NFC model equals one trained on pre-normalized text, and its count file says nfc."""
    import json
    import unicodedata

    from fastsw.corpus.counting import Counts, count_languages

    en = ["Cafe\u0301 au lait", "the cafe\u0301"] * 5
    de = ["Gru\u0308\u00dfe aus Ko\u0308ln"] * 5
    nfc = lambda docs: [unicodedata.normalize("NFC", d) for d in docs]  # noqa: E731
    a = fastsw.train({"en": en, "de": de}, weights={"de": 2}, algo="bpe", vocab_size=270, normalize="nfc")
    b = fastsw.train({"en": nfc(en), "de": nfc(de)}, weights={"de": 2}, algo="bpe", vocab_size=270)
    assert [m[1:] for m in a.merges] == [m[1:] for m in b.merges] and a.normalize == "nfc"
    path = tmp_path / "tagged.jsonl"
    path.write_text(
        "".join(json.dumps({"lang": l, "text": t}) + "\n" for l, docs in (("en", en), ("de", de)) for t in docs),
        encoding="utf-8",
    )
    c = fastsw.train(path, lang_field="lang", weights={"de": 2}, algo="bpe", vocab_size=270, normalize="nfc")
    assert [m[1:] for m in c.merges] == [m[1:] for m in a.merges]
    table = count_languages(
        [("en", d) for d in en] + [("de", d) for d in de], fastsw.Pretokenizer(), collect_runs=False, normalize="nfc"
    )
    assert table.normalize == "nfc" and table.by_language()["de"].normalize == "nfc"
    table.save(tmp_path / "t.counts")
    assert Counts.load(tmp_path / "t.counts").normalize == "nfc"
