"""Language-tagged training and language weights (SPEC section 8).

Count tables keep one count column per language; weights are exact Fractions, applied at training time as scaled
integer counts (every weight times the least common multiple of their denominators), so the unchanged merge loops of
both backends train on them and ties stay exact. A weight of 2 trains exactly as if the language's text were given
twice.
"""

import gzip
import json
from fractions import Fraction

import pytest

import fastsw
from fastsw.corpus.counting import Counts, count_corpus, count_languages, language_weights, load_counts, scaled_weights
from fastsw.pretokenizers.pretokenize import Pretokenizer
from fastsw.corpus.readers import InputError, iter_language_documents

from conftest import assert_error, run, shared_path

ALGOS = {
    "bpe": dict(algo="bpe", vocab_size=330),
    "boundless": dict(algo="boundless", vocab_size=330),
    "superbpe": dict(algo="superbpe", vocab_size=330, supermerges=6),
}


def fixture_docs(lang: str, n_bytes: int):
    """The first documents of ../shared/corpus/fixtures/<lang>.txt (documents separated by three newlines), about
    ``n_bytes`` of UTF-8."""
    text = shared_path(f"corpus/fixtures/{lang}.txt").read_text(encoding="utf-8")
    docs, size = [], 0
    for doc in text.split("\n\n\n"):
        if size >= n_bytes:
            break
        docs.append(doc)
        size += len(doc.encode("utf-8"))
    return docs


@pytest.fixture(scope="module")
def en_de():
    return fixture_docs("en", 6000), fixture_docs("de", 4000)


def merges(tok):
    """Every merge with its count: (left id, right id, count, is supermerge)."""
    return [(m.left, m.right, m.count, m.super) for m in tok.merges]


# ---- weight 2 == the text twice ---------------------------------------------------------------------------------


@pytest.mark.parametrize("algo", ALGOS)
def test_weight_two_equals_text_twice(en_de, algo, backend):
    en, de = en_de
    weighted = fastsw.train({"en": en, "de": de}, weights={"de": 2}, backend=backend, **ALGOS[algo])
    twice_tagged = fastsw.train({"en": en, "de": de + de}, backend=backend, **ALGOS[algo])
    twice_plain = fastsw.train(en + de + de, backend=backend, **ALGOS[algo])
    assert merges(weighted) == merges(twice_tagged) == merges(twice_plain)
    assert weighted.training_info["weights"] == {"en": "1/1", "de": "2/1"}
    assert Fraction(weighted.training_info["weighted_bytes"]) == twice_plain.training_info["bytes"]


@pytest.mark.parametrize("algo", ALGOS)
def test_scaling_every_weight_scales_counts_not_choices(en_de, algo):
    # weight 2 for every language multiplies every pair count by 2: same merges, counts doubled
    en, de = en_de
    one = fastsw.train({"en": en, "de": de}, backend="numba", **ALGOS[algo])
    two = fastsw.train({"en": en, "de": de}, weights={"en": 2, "de": 2}, backend="numba", **ALGOS[algo])
    assert [(l, r, 2 * c, s) for l, r, c, s in merges(one)] == merges(two)


# ---- weights: exact fractions, scaled integers ------------------------------------------------------------------


def test_shares_to_weights_worked_by_hand():
    # w = 100000 * p / B:  en 100000 * 4/5 / 1000 = 80,  de 100000 * 1/5 / 250 = 80
    assert language_weights(["en", "de"], [1000, 250], shares={"en": "0.8", "de": "0.2"}) == {
        "en": Fraction(80),
        "de": Fraction(80),
    }
    # en 100000 * 1/3 / 300 = 1000/9,  de 100000 * 2/3 / 700 = 2000/21;  lcm(9, 21) = 63:  7000 and 6000
    w = language_weights(["en", "de"], [300, 700], shares={"en": Fraction(1, 3), "de": "2/3"})
    assert w == {"en": Fraction(1000, 9), "de": Fraction(2000, 21)}
    assert scaled_weights(w) == {"en": 7000, "de": 6000}
    # floats are read as the decimal they print as (0.1 is 1/10, not the binary 0.1000000000000000055...)
    assert language_weights(["a", "b"], [1, 1], shares={"a": 0.1, "b": 0.9}) == {
        "a": Fraction(10000),
        "b": Fraction(90000),
    }


def test_shares_in_train_record_exact_weights(en_de):
    en, de = en_de
    tok = fastsw.train({"en": en, "de": de}, shares={"en": "0.5", "de": "0.5"}, algo="bpe", vocab_size=300)
    info = tok.training_info
    b_en, b_de = info["language_bytes"]["en"], info["language_bytes"]["de"]
    assert b_en == sum(len(d.encode()) for d in en) and b_de == sum(len(d.encode()) for d in de)
    # w = 100000 * (1/2) / B, as "p/q"
    w_en, w_de = Fraction(50000, b_en), Fraction(50000, b_de)
    assert info["weights"] == {
        "en": f"{w_en.numerator}/{w_en.denominator}",
        "de": f"{w_de.numerator}/{w_de.denominator}",
    }
    # the weighted bytes are equal: the target shares, exactly
    factors = info["weight_factors"]
    assert factors["en"] * b_en == factors["de"] * b_de


@pytest.mark.parametrize("weight", ["3/2", Fraction(3, 2), 1.5])
def test_fractional_weight_equals_scaled_integers(en_de, weight):
    # en 3/2, de 1 is scaled by 2 to en 3, de 2: the same counts, so the same model
    en, de = en_de
    frac = fastsw.train({"en": en, "de": de}, weights={"en": weight}, algo="boundless", vocab_size=330)
    ints = fastsw.train({"en": en, "de": de}, weights={"en": 3, "de": 2}, algo="boundless", vocab_size=330)
    assert merges(frac) == merges(ints)
    assert frac.training_info["weights"] == {"en": "3/2", "de": "1/1"}
    assert frac.training_info["weight_factors"] == {"en": 3, "de": 2}


# ---- count tables with language columns -------------------------------------------------------------------------


def test_count_file_round_trip_with_languages(tmp_path, en_de):
    en, de = en_de
    pretok = Pretokenizer()
    table = Counts.from_languages(
        {"en": count_corpus(en, pretok, collect_runs=True), "de": count_corpus(de, pretok, collect_runs=True)}
    )
    path = tmp_path / "c.counts.gz"
    table.save(path)
    header = json.loads(gzip.open(path).readline())
    assert header["languages"] == ["en", "de"]
    back = Counts.load(path)
    assert back.languages == ["en", "de"]
    assert back.language_bytes == table.language_bytes and back.language_documents == table.language_documents
    for name, part in back.by_language().items():
        alone = count_corpus(en if name == "en" else de, pretok, collect_runs=True)
        assert part.pretoken_multiset() == alone.pretoken_multiset()
        assert part.run_multiset() == alone.run_multiset()
    assert back.pretoken_multiset() == count_corpus(en + de, pretok, collect_runs=True).pretoken_multiset()
    # training from the file with weights == training on the text with weights
    from_file = fastsw.train(from_counts=path, weights={"de": 2}, algo="superbpe", vocab_size=330, supermerges=6)
    from_text = fastsw.train({"en": en, "de": de}, weights={"de": 2}, algo="superbpe", vocab_size=330, supermerges=6)
    assert merges(from_file) == merges(from_text)


def test_merging_tables_aligns_languages_by_name(tmp_path):
    pretok = Pretokenizer()
    a = Counts.from_languages(
        {
            "en": count_corpus(["the cat"], pretok, collect_runs=True),
            "de": count_corpus(["die Katze"], pretok, collect_runs=True),
        }
    )
    b = Counts.from_languages(
        {
            "fr": count_corpus(["le chat"], pretok, collect_runs=True),
            "de": count_corpus(["die Maus"], pretok, collect_runs=True),
        }
    )
    a.save(tmp_path / "a.gz")
    b.save(tmp_path / "b.gz")
    merged = load_counts([tmp_path / "a.gz", tmp_path / "b.gz"])
    assert merged.languages == ["en", "de", "fr"]
    assert merged.language_multiset("de") == {"die": 2, " Katze": 1, " Maus": 1}
    assert merged.language_multiset("fr") == {"le": 1, " chat": 1}
    assert merged.language_documents == [1, 2, 1]


def test_merging_tagged_with_untagged_table_is_an_error():
    pretok = Pretokenizer()
    tagged = Counts.from_languages({"en": count_corpus(["the cat"], pretok, collect_runs=True)})
    with pytest.raises(ValueError, match="has no languages"):
        load_counts([tagged, count_corpus(["a b"], pretok, collect_runs=True)])


def test_lang_field_equals_dict_inputs(tmp_path, en_de):
    en, de = en_de
    path = tmp_path / "mixed.jsonl"
    with open(path, "w", encoding="utf-8") as f:  # interleaved languages
        for k in range(max(len(en), len(de))):
            for lang, docs in (("de", de), ("en", en)):
                if k < len(docs):
                    f.write(json.dumps({"text": docs[k], "lang": lang}) + "\n")
    pairs = list(iter_language_documents(path, lang_field="lang"))
    assert sorted(d for lang, d in pairs if lang == "en") == sorted(en)
    table = count_languages(pairs, Pretokenizer(), collect_runs=True)
    assert table.languages == ["de", "en"]
    tagged = fastsw.train(path, lang_field="lang", weights={"en": 2}, algo="boundless", vocab_size=330)
    as_dict = fastsw.train({"en": en, "de": de}, weights={"en": 2}, algo="boundless", vocab_size=330)
    assert merges(tagged) == merges(as_dict)


# ---- fast == reference on real multilingual text ---------------------------------------------------------------


@pytest.mark.parametrize("algo", ALGOS)
def test_fast_equals_reference_weighted_multilingual(algo):
    inputs = {lang: fixture_docs(lang, 6000) for lang in ("en", "de", "ru", "zh", "ar", "hi")}
    weights = {"en": "1/2", "ru": 3, "zh": "5/3", "hi": 2.5}
    options = dict(ALGOS[algo], vocab_size=800, **({"supermerges": 60} if algo == "superbpe" else {}))
    ref = fastsw.train(inputs, weights=weights, backend="python", **options)
    fast = fastsw.train(inputs, weights=weights, backend="numba", **options)
    assert merges(ref) == merges(fast)
    assert len(ref.merges) == 800 - len(ref.alphabet)
    assert ref.training_info["weight_factors"] == {"en": 3, "de": 6, "ru": 18, "zh": 10, "ar": 6, "hi": 15}


# ---- bad input -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(inputs={"en": ["the cat"], "de": []}), ["language 'de' has no text"]),
        (dict(inputs={"en": ["the cat"], "de": [""]}), ["language 'de' has no text"]),
        (dict(inputs={"en": ["the cat"]}, weights={"en": 0}), ["weights['en']", "must be > 0"]),
        (dict(inputs={"en": ["the cat"]}, weights={"en": "-1/2"}), ["must be > 0"]),
        (dict(inputs={"en": ["the cat"]}, weights={"de": 2}), ["'de'", "not one of the languages"]),
        (dict(inputs={"en": ["a"], "de": ["b"]}, shares={"en": 0.5, "de": 0.4}), ["sum to 9/10", "exactly 1"]),
        (dict(inputs={"en": ["a"], "de": ["b"]}, shares={"en": 1}), ["missing: 'de'"]),
        (dict(inputs={"en": ["a"]}, weights={"en": 2}, shares={"en": 1}), ["either weights= or shares="]),
        (dict(inputs=["the cat"], weights={"en": 2}), ["applies to languages"]),
        (dict(inputs={"en": ["the cat"]}, weights={"en": "x"}), ["not a finite number"]),
        (dict(inputs={}), ["empty dict"]),
    ],
)
def test_bad_language_input(kwargs, words):
    with pytest.raises(ValueError) as e:
        fastsw.train(algo="bpe", vocab_size=300, backend="python", **kwargs)
    for word in words:
        assert word in str(e.value)


def test_lang_field_bad_lines(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"text": "a", "lang": "en"}\n{"text": "b"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"x.jsonl line 2: field \"lang\" is missing"):
        fastsw.train(path, lang_field="lang", algo="bpe", vocab_size=300)
    path.write_text('{"text": "a", "lang": "en"}\n{"text": "b", "lang": ""}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"x.jsonl line 2: field \"lang\" is empty;"):
        fastsw.train(path, lang_field="lang", algo="bpe", vocab_size=300)
    plain = tmp_path / "x.txt"
    plain.write_text("a\n", encoding="utf-8")
    with pytest.raises(InputError, match="needs JSON Lines"):
        fastsw.train(plain, lang_field="lang", algo="bpe", vocab_size=300)


def test_weights_on_counts_without_languages(tmp_path):
    path = tmp_path / "c.gz"
    count_corpus(["the cat"], Pretokenizer(), collect_runs=True).save(path)
    with pytest.raises(ValueError, match="count table has none"):
        fastsw.train(from_counts=path, weights={"en": 2}, algo="bpe", vocab_size=300)


# ---- CLI ----------------------------------------------------------------------------------------------------------


@pytest.fixture
def lang_files(tmp_path, en_de):
    en, de = en_de
    (tmp_path / "en.txt").write_text("\n\n\n".join(en), encoding="utf-8")
    (tmp_path / "de.txt").write_text("\n\n\n".join(de), encoding="utf-8")
    return tmp_path / "en.txt", tmp_path / "de.txt"


def test_cli_train_and_count_with_languages(tmp_path, capsys, lang_files):
    en, de = lang_files
    common = [
        "--algo",
        "boundless",
        "--vocab-size",
        "330",
        "--no-progress",
        "--doc-mode",
        "separator",
        "--separator",
        r"\n\n\n",
    ]
    code, _, err = run(
        capsys,
        "train",
        "--lang",
        f"en={en}",
        "--lang",
        f"de={de}",
        "--weight",
        "de=3/2",
        "-o",
        tmp_path / "m.json",
        *common,
    )
    assert code == 0, err
    code, _, err = run(
        capsys,
        "count",
        "--lang",
        f"en={en}",
        "--lang",
        f"de={de}",
        "-o",
        tmp_path / "c.gz",
        "--no-progress",
        "--doc-mode",
        "separator",
        "--separator",
        r"\n\n\n",
    )
    assert code == 0, err
    assert "languages en, de" in err
    code, _, err = run(
        capsys,
        "train",
        "--from-counts",
        tmp_path / "c.gz",
        "--weight",
        "de=1.5",
        "-o",
        tmp_path / "m2.json",
        "--algo",
        "boundless",
        "--vocab-size",
        "330",
        "--no-progress",
    )
    assert code == 0, err
    m1 = fastsw.Tokenizer.load(tmp_path / "m.json")
    m2 = fastsw.Tokenizer.load(tmp_path / "m2.json")
    docs = {"en": en.read_text().split("\n\n\n"), "de": de.read_text().split("\n\n\n")}
    py = fastsw.train(docs, weights={"de": "3/2"}, algo="boundless", vocab_size=330)
    assert merges(m1) == merges(m2) == merges(py)
    assert m1.training_info["weights"] == {"en": "1/1", "de": "3/2"}


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--weight", "fr=2"], ["--weight fr=2", "no --lang fr=PATH"]),
        (["--weight", "de=0"], ["must be > 0"]),
        (["--weight", "de"], ["LANG=WEIGHT"]),
        (["--share", "en=0.5", "--share", "de=0.4"], ["sum to 9/10"]),
        (["--weight", "de=2", "--share", "en=1"], ["either --weight or --share"]),
        (["--weight", "de=2", "--weight", "de=3"], ["given twice"]),
    ],
)
def test_cli_bad_weights(tmp_path, capsys, lang_files, argv, words):
    en, de = lang_files
    out = tmp_path / "bad.json"
    code, _, err = run(
        capsys,
        "train",
        "--lang",
        f"en={en}",
        "--lang",
        f"de={de}",
        *argv,
        "-o",
        out,
        "--algo",
        "bpe",
        "--vocab-size",
        "300",
        "--no-progress",
    )
    assert_error(code, err, *words)
    assert not out.exists()


def test_cli_language_needs_text_and_weight_needs_languages(tmp_path, capsys, lang_files):
    en, _ = lang_files
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    code, _, err = run(
        capsys,
        "train",
        "--lang",
        f"en={en}",
        "--lang",
        f"de={empty}",
        "-o",
        tmp_path / "m.json",
        "--algo",
        "bpe",
        "--vocab-size",
        "300",
        "--no-progress",
    )
    assert code == 2 and "language 'de' has no text" in err and not (tmp_path / "m.json").exists()
    code, _, err = run(
        capsys, "count", "--lang", f"en={en}", "--lang", f"de={empty}", "-o", tmp_path / "c.gz", "--no-progress"
    )
    assert code == 2 and "language 'de' has no text" in err and not (tmp_path / "c.gz").exists()
    code, _, err = run(capsys, "train", en, "--weight", "en=2", "-o", tmp_path / "m.json", "--no-progress")
    assert code == 2 and "--weight weights languages" in err
    code, _, err = run(capsys, "count", "-o", tmp_path / "c.gz")
    assert code == 2 and "give INPUT files to count ('-' for stdin), or --lang" in err


def test_cli_lang_field(tmp_path, capsys, en_de):
    en, de = en_de
    path = tmp_path / "mixed.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for lang, docs in (("en", en), ("de", de)):
            for doc in docs:
                f.write(json.dumps({"body": doc, "language": lang}) + "\n")
    code, _, err = run(
        capsys,
        "count",
        path,
        "--lang-field",
        "language",
        "--text-field",
        "body",
        "-o",
        tmp_path / "c.gz",
        "--no-progress",
    )
    assert code == 0, err
    assert Counts.load(tmp_path / "c.gz").languages == ["en", "de"]
    code, _, err = run(
        capsys,
        "train",
        path,
        "--lang-field",
        "language",
        "--text-field",
        "body",
        "--weight",
        "en=2",
        "-o",
        tmp_path / "m.json",
        "--algo",
        "bpe",
        "--vocab-size",
        "330",
        "--no-progress",
    )
    assert code == 0, err
    expected = fastsw.train({"en": en, "de": de}, weights={"en": 2}, algo="bpe", vocab_size=330)
    assert merges(fastsw.Tokenizer.load(tmp_path / "m.json")) == merges(expected)
    code, _, err = run(capsys, "train", "--lang-field", "language", "-o", tmp_path / "x.json", "--no-progress")
    assert code == 2 and "--lang-field F reads INPUT JSONL files" in err
    code, _, err = run(capsys, "count", path, "--lang-field", "language", "--workers", "2", "-o", tmp_path / "x.gz")
    assert code == 2 and "--workers does not apply to --lang-field" in err and not (tmp_path / "x.gz").exists()
    with pytest.raises(ValueError, match="leave workers unset"):
        fastsw.train(path, lang_field="language", workers=2, algo="bpe", vocab_size=300)


def test_count_file_with_inconsistent_language_columns_is_rejected(tmp_path):
    pretok = Pretokenizer()
    table = Counts.from_languages(
        {
            "en": count_corpus(["big cat"], pretok, collect_runs=True),
            "de": count_corpus(["Hund"], pretok, collect_runs=True),
        }
    )
    table.save(tmp_path / "ok.gz")
    lines = gzip.open(tmp_path / "ok.gz").read().decode().splitlines()
    assert lines[-1] == "[[1, 0], 2, 0]"  # the run "big cat": rows sorted by code points, 0 " cat", 1 "Hund", 2 "big"
    lines[-1] = "[[1, 1], 2, 0]"  # ... claimed for de too, where " cat" and "big" never occur
    with gzip.open(tmp_path / "bad.gz", "wt") as f:
        f.write("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"bad.gz line 5: .*language 'de'"):
        Counts.load(tmp_path / "bad.gz")


# ---- what the model reports: the real corpus, the weighted totals under their own names ------------------------


def test_weights_and_shares_do_not_multiply_the_reported_corpus(en_de):
    en, de = en_de
    real_docs = len(en) + len(de)
    real_bytes = sum(len(d.encode("utf-8")) for d in en + de)
    de_bytes = sum(len(d.encode("utf-8")) for d in de)
    tok = fastsw.train({"en": en, "de": de}, weights={"de": "3/2"}, algo="bpe", vocab_size=300)
    info = tok.training_info
    assert (info["documents"], info["bytes"]) == (real_docs, real_bytes)
    # exact: every English document once, every German one 3/2 times
    assert Fraction(info["weighted_documents"]) == len(en) + Fraction(3, 2) * len(de)
    assert Fraction(info["weighted_bytes"]) == real_bytes + Fraction(1, 2) * de_bytes
    shared = fastsw.train({"en": en, "de": de}, shares={"en": "1/4", "de": "3/4"}, algo="bpe", vocab_size=300)
    assert (shared.training_info["documents"], shared.training_info["bytes"]) == (real_docs, real_bytes)


def test_cli_summary_and_inspect_show_the_real_corpus(tmp_path, capsys, lang_files, en_de):
    en_docs, de_docs = en_de
    en, de = lang_files
    code, _, err = run(
        capsys,
        "train",
        "--lang",
        f"en={en}",
        "--lang",
        f"de={de}",
        "--weight",
        "de=3/2",
        "--algo",
        "bpe",
        "--vocab-size",
        "300",
        "--no-progress",
        "--doc-mode",
        "separator",
        "--separator",
        r"\n\n\n",
        "-o",
        tmp_path / "m.json",
    )
    assert code == 0, err
    real = len(en_docs) + len(de_docs)
    assert f"corpus:      {real} documents" in err, err
    code, out, err = run(capsys, "inspect", tmp_path / "m.json")
    assert code == 0, err
    assert f"trained on:     {real} documents" in out, out
