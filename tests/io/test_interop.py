"""Interop: the authors' model format, tiktoken / HF exports, and the
merge-rule vs rank-table conflict detector (SPEC sections 7 and 11)."""

import json
import inspect
import warnings

import pytest
import tiktoken
import tokenizers

import fastsw
from fastsw.io import interop
from fastsw.alphabet import ByteAlphabet, CharAlphabet

from conftest import GOLDEN_RUNS as RUNS, golden_json, shared_path

LANGS = ["en", "de", "ru", "ja", "zh", "th", "ar", "hi", "ko"]


def _merge_view(tok):
    return [(tok.vocab[m.left], tok.vocab[m.right], m.count, m.super) for m in tok.merges]


@pytest.fixture(scope="module")
def train_docs(golden_dir):
    with open(golden_dir / "inputs/wikitext2_valid.jsonl", encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


@pytest.fixture(scope="module", params=sorted(RUNS))
def golden_run(request, golden_dir):
    name = request.param
    gold = golden_json(golden_dir, name)
    path = golden_dir / f"models/{name}_final.model"
    return name, gold, path, interop.load_paper_model(path)


# -- the authors' format --------------------------------------------------------
def test_load_golden_equals_own_training(golden_run, golden_dir):
    name, gold, path, loaded = golden_run
    trained = fastsw.train(golden_dir / "inputs/wikitext2_valid.jsonl", **RUNS[name])
    assert loaded.algo == trained.algo
    assert _merge_view(loaded) == _merge_view(trained)
    assert [(m.id, m.left, m.right) for m in loaded.merges] == [(m.id, m.left, m.right) for m in trained.merges]
    assert loaded.pretokenizer == trained.pretokenizer
    assert dict(loaded.special_tokens) == {"<|endoftext|>": 2000}
    for item in gold["encodings"]:
        assert loaded.encode_ordinary(item["text"]) == item["ids"]


def test_golden_save_reproduces_file(golden_run, train_docs):
    name, gold, path, tok = golden_run
    original = path.read_text(encoding="utf-8").split("\n")
    # Without the corpus only the COUNT column (0) and some FLAGs (reachability bound) differ.
    plain = interop.paper_model_text(tok).split("\n")
    assert len(plain) == len(original)
    for o, p in zip(original, plain):
        if o != p:
            os_, ps = o.split(" "), p.split(" ")
            assert len(os_) == len(ps) and len(os_) in (4, 5), (o, p)
            if len(os_) == 4:  # vocabulary: ID TOKEN COUNT IS_SUPER
                assert os_[:2] == ps[:2] and os_[3] == ps[3] and ps[2] == "0"
            else:  # merges: INDEX LEFT RIGHT COUNT FLAG
                assert os_[:4] == ps[:4]
    # With the training corpus every FLAG is exact; for plain BPE the whole file is identical.
    full = interop.paper_model_text(tok, train_docs).split("\n")
    diffs = [(o, f) for o, f in zip(original, full) if o != f]
    if name != "boundless_2000":
        assert full == original
    # BoundlessBPE: the authors count tokens of runs found with the phase-1 model's eligibility
    # (its dropped merges are not in the file), so ~6% of the vocabulary COUNTs differ slightly.
    assert len(diffs) < 150
    for o, f in diffs:
        os_, fs = o.split(" "), f.split(" ")
        assert len(os_) == 4 and os_[:2] == fs[:2] and os_[3] == fs[3], (o, f)


def test_paper_counts_use_the_encoders_run_rule(train_docs, golden_dir, monkeypatch):
    """The COUNT/FLAG statistics take the runs of eligible pretokens from the encoder itself
    (Tokenizer._flush_run), not from a second copy of the rule."""
    tok = interop.load_paper_model(golden_dir / "models/superbpe_1500_plus500_final.model")
    expected = interop.paper_model_text(tok, train_docs[:50])
    flushed = []
    real = fastsw.Tokenizer._flush_run

    def recording(self, run, out, runs=None):
        flushed.append(len(run))
        return real(self, run, out, runs)

    monkeypatch.setattr(fastsw.Tokenizer, "_flush_run", recording)
    assert interop.paper_model_text(tok, train_docs[:50]) == expected
    assert any(n >= 2 for n in flushed)


def test_save_load_roundtrip(tmp_path, golden_run):
    name, gold, path, tok = golden_run
    out = tmp_path / "m.model"
    interop.save_paper_model(tok, out)
    again = interop.load_paper_model(out)
    assert _merge_view(again) == _merge_view(tok)
    assert again.pretokenizer == tok.pretokenizer and again.algo == tok.algo
    assert dict(again.special_tokens) == dict(tok.special_tokens)


def test_roundtrip_simple_mode(tmp_path, multilingual):
    tok, _ = multilingual
    out = tmp_path / "m.model"
    interop.save_paper_model(tok, out)
    again = interop.load_paper_model(out)
    assert again.pretokenizer == tok.pretokenizer and again.pretokenizer.mode == "simple"
    assert _merge_view(again) == _merge_view(tok)


def test_save_rejects_other_alphabets(tmp_path):
    tok = fastsw.train(["low lower newest widest"] * 3, algo="bpe", vocab_size=260, profile="hf")
    with pytest.raises(ValueError, match="bytes243"):
        interop.save_paper_model(tok, tmp_path / "x.model")


def test_parse_errors_name_file_and_line(tmp_path, golden_dir):
    lines = (golden_dir / "models/bpe_2000_final.model").read_text(encoding="utf-8").split("\n")
    bad = list(lines)
    bad[2010] = "1 h"  # a merge line with too few fields (line 2011)
    p = tmp_path / "bad.model"
    p.write_text("\n".join(bad), encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.model:2011:"):
        interop.load_paper_model(p)
    for row, message in [
        ("0 Ġ t x 1", "COUNT must be an integer"),  # merge line 2011
        ("5 Ġ t 24163 1", "INDEX 5 out of order"),
    ]:
        bad = list(lines)
        bad[2010] = row
        p.write_text("\n".join(bad), encoding="utf-8")
        with pytest.raises(ValueError, match=rf"bad\.model:2011: {message}"):
            interop.load_paper_model(p)
    bad = list(lines)
    bad[3] = "1 \x01 5 maybe"  # vocabulary entry 1 (line 4) with a non-integer IS_SUPER
    p.write_text("\n".join(bad), encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.model:4: IS_SUPER must be an integer"):
        interop.load_paper_model(p)
    p.write_text("BoundlessBPE v3 word\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.model:1:"):
        interop.load_paper_model(p)
    p.write_text("\n".join(lines[:100]), encoding="utf-8")
    with pytest.raises(ValueError, match="unexpected end of file"):
        interop.load_paper_model(p)
    bad = list(lines)
    bad[251] = "248 Ġthx 12671 0"  # vocabulary entry that no merge produces
    p.write_text("\n".join(bad), encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.model:\d+:.*does not produce"):
        interop.load_paper_model(p)


# -- tiktoken and HF exports -----------------------------------------------------------
@pytest.fixture(scope="module")
def multilingual():
    """Plain BPE, simple mode, trained on 60% of the first held-out document of each
    language; held-out paragraphs from the rest."""
    train, test = [], {}
    root = shared_path("corpus")
    for lang in LANGS:
        with open(root / lang / "heldout.jsonl", encoding="utf-8") as f:
            doc = json.loads(f.readline())["text"]
        cut = int(len(doc) * 0.6)
        train.append(doc[:cut])
        test[lang] = [p for p in doc[cut:].split("\n\n") if p.strip()][:30]
        assert test[lang], lang
    tok = fastsw.train(train, algo="bpe", vocab_size=1000, pretokenizer="simple", special_tokens=["<|endoftext|>"])
    return tok, test


def _pieces_with_conflict(tok, text, conflicts):
    bad = [c["token"] for c in conflicts]
    return [p for p in tok.pretokenizer.pretokenize(text) if any(b in p.encode() for b in bad)]


def test_tiktoken_equals_fastsw_multilingual(multilingual):
    tok, test = multilingual
    enc = interop.to_tiktoken(tok)
    conflicts = interop.merge_conflicts(tok)
    for lang, texts in test.items():
        for text in texts:
            mine, theirs = tok.encode_ordinary(text), enc.encode_ordinary(text)
            if mine != theirs:
                assert _pieces_with_conflict(tok, text, conflicts), (lang, text[:60])
        report = interop.verify_export(tok, enc, texts)
        if not conflicts:
            assert report["agreement"] == 1.0 and report["token_count_difference"] == 0, lang
    assert enc.encode("a<|endoftext|>", allowed_special="all")[-1] == tok.special_tokens["<|endoftext|>"]
    assert enc.decode(tok.encode_ordinary("Grüße, 世界")) == "Grüße, 世界"


def test_tiktoken_rank_file(tmp_path, multilingual):
    from tiktoken.load import load_tiktoken_bpe

    tok, test = multilingual
    path = tmp_path / "m.tiktoken"
    interop.write_tiktoken_ranks(tok, path)
    ranks = load_tiktoken_bpe(str(path))
    assert ranks == interop.tiktoken_ranks(tok)
    assert len(ranks) == 256 + tok.vocab_size - len(tok.alphabet)
    # the 13 bytes that never occur in UTF-8 follow all fastsw ids
    assert sorted(r for b, r in ranks.items() if b[0] in (0xC0, 0xC1) or b[0] >= 0xF5 and len(b) == 1) == list(
        range(tok.n_vocab, tok.n_vocab + 13)
    )
    enc = tiktoken.Encoding("x", pat_str=tok.pretokenizer.main_pattern, mergeable_ranks=ranks, special_tokens={})
    assert enc.encode_ordinary(test["de"][0]) == tok.encode_ordinary(test["de"][0])


def test_tiktoken_refusals(golden_run):
    name, gold, path, tok = golden_run
    if tok.algo != "bpe":
        with pytest.raises(ValueError, match="supermerges"):
            interop.to_tiktoken(tok)
        return
    with pytest.raises(ValueError, match="script chunking"):
        interop.to_tiktoken(tok)
    enc = interop.to_tiktoken(tok, allow_approximate=True)  # wikitext is Latin script: agrees on it
    item = gold["encodings"][0]
    assert enc.encode_ordinary(item["text"]) == item["ids"]


def test_hf_equals_fastsw_multilingual(tmp_path, multilingual):
    tok, test = multilingual
    path = tmp_path / "tokenizer.json"
    status = interop.save_hf(tok, path)
    assert status == {"exact": True, "reasons": []}
    hf = tokenizers.Tokenizer.from_file(str(path))
    for lang, texts in test.items():
        report = interop.verify_export(tok, str(path), texts)
        assert report["agreement"] == 1.0, (lang, report)
        assert report["token_count_difference"] == 0 and report["roundtrip_ok"]
    text = test["ja"][0]
    assert hf.decode(hf.encode(text).ids) == text
    assert hf.token_to_id("<|endoftext|>") == tok.special_tokens["<|endoftext|>"]


def test_hf_boundless_is_approximate(tmp_path, golden_dir):
    tok = interop.load_paper_model(golden_dir / "models/boundless_2000_final.model")
    path = tmp_path / "tokenizer.json"
    with pytest.raises(ValueError, match="supermerges are not expressible.*allow_approximate=True"):
        interop.save_hf(tok, path)  # refused unless asked for, as every approximate export
    assert not path.exists()
    status = interop.save_hf(tok, path, allow_approximate=True)
    assert not status["exact"] and any("supermerges" in r for r in status["reasons"])
    with open(golden_dir / "inputs/wikitext2_test.jsonl", encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for _, line in zip(range(300), f)]
    report = interop.verify_export(tok, tokenizers.Tokenizer.from_file(str(path)), texts)
    assert report["documents"] == 300
    assert 0.0 < report["agreement"] < 1.0
    assert report["token_count_difference"] > 0  # no supermerges: more tokens
    assert report["first_difference"] is not None and report["roundtrip_ok"]


def test_verify_export_rejects_unknown():
    tok = fastsw.Tokenizer(
        alphabet=ByteAlphabet("bytes243"), merges=[], pretokenizer=fastsw.Pretokenizer(mode="simple")
    )
    with pytest.raises(TypeError):
        interop.verify_export(tok, 42, ["a"])


@pytest.mark.parametrize(
    "name, write, words",
    [
        ("m.json", lambda tok, p: tok.save(p), ["expected"]),  # a fastsw model
        ("m.tiktoken", lambda tok, p: tok.save_tiktoken(p), ["pass tok.to_tiktoken() instead"]),
        ("cut.json", lambda tok, p: p.write_text('{"version": "1.0", "model": {', encoding="utf-8"), ["EOF"]),
        ("missing.json", lambda tok, p: None, ["No such file"]),
    ],
)
def test_verify_export_names_a_file_it_cannot_load(tmp_path, name, write, words):
    tok = fastsw.train(["a b c ab abc"] * 3, algo="bpe", vocab_size=250, pretokenizer="simple")
    path = tmp_path / name
    write(tok, path)
    with pytest.raises(ValueError) as info:  # was a bare Exception from tokenizers
        tok.verify_export(path, ["a b"])
    message = str(info.value)
    assert message.startswith(f"{path}: not a loadable HF tokenizer.json (") and all(w in message for w in words)
    assert (
        "accepts the path of a tokenizer.json (as written by save_hf), a tokenizers.Tokenizer or a "
        "tiktoken.Encoding" in message
    )


# -- the conflict detector (seed 001: abc / xabc) ------------------------------------
def test_conflicts_seed_example_chars():
    alpha = CharAlphabet("abcx")  # ids a=0 b=1 c=2 x=3
    tok = fastsw.Tokenizer(
        alphabet=alpha,
        merges=[(0, 1, 1, False), (1, 2, 1, False), (0, 5, 1, False)],
        pretokenizer=fastsw.Pretokenizer(mode="simple"),
        profile="hf",
    )
    assert tok.encode("abc") == [4, 2]  # merge rules: ab | c
    assert tok.encode("xabc") == [3, 4, 2]
    conflicts = interop.merge_conflicts(tok)
    kinds = {(c["kind"], c["id"]) for c in conflicts}
    assert kinds == {("unreachable_token", 6), ("rank_table_differs", 6)}
    c = next(c for c in conflicts if c["kind"] == "rank_table_differs")
    assert c["token"] == b"abc" and c["merge_rule_ids"] == [4, 2] and c["rank_table_ids"] == [6]
    assert c["is_pretoken"] is True


def _abc_bytes_model():
    a, b, c = 97, 98, 99  # bytes243 ids of ASCII bytes are the bytes themselves
    return fastsw.Tokenizer(
        alphabet=ByteAlphabet("bytes243"),
        merges=[(a, b, 3, False), (b, c, 2, False), (a, 244, 1, False)],
        pretokenizer=fastsw.Pretokenizer(mode="simple"),
        profile="paper",
    )


def test_conflicts_predict_tiktoken_and_hf_differences(tmp_path):
    tok = _abc_bytes_model()
    assert interop.merge_conflicts(tok)
    enc = interop.to_tiktoken(tok)
    assert tok.encode("xabc") == [ord("x"), 243, ord("c")]
    assert enc.encode_ordinary("xabc") == [ord("x"), 245]  # rank table: x | abc
    assert enc.encode_ordinary("abc") == [245]  # whole-piece lookup
    assert tok.encode("abc") == [243, ord("c")]
    # HF: ignore_merges=True looks whole pieces up (abc), False follows the pair rules like fastsw
    path = tmp_path / "t.json"
    interop.save_hf(tok, path)  # conflicts -> ignore_merges=False
    assert interop.verify_export(tok, str(path), ["abc", "xabc", "x abc"])["agreement"] == 1.0
    interop.save_hf(tok, path, ignore_merges=True)
    report = interop.verify_export(tok, str(path), ["abc", "xabc", "x abc"])
    assert report["agreement"] == pytest.approx(2 / 3)


def test_duplicate_bytes_detected():
    a, b, c = 97, 98, 99
    tok = fastsw.Tokenizer(
        alphabet=ByteAlphabet("bytes243"),
        merges=[(a, b, 3, False), (243, c, 2, False), (b, c, 1, False), (a, 245, 1, False)],
        pretokenizer=fastsw.Pretokenizer(mode="simple"),
        profile="paper",
    )
    dup = [c for c in interop.merge_conflicts(tok) if c["kind"] == "duplicate_bytes"]
    assert dup and dup[0]["token"] == b"abc" and dup[0]["ids"] == [244, 246]
    with pytest.raises(ValueError, match="more than one token"):
        interop.to_tiktoken(tok)
    assert interop.to_tiktoken(tok, drop_duplicates=True).encode_ordinary("abc") == [244]


def test_no_conflicts_in_trained_models(multilingual, golden_run):
    assert interop.merge_conflicts(multilingual[0]) == []
    assert interop.merge_conflicts(golden_run[3]) == []


def test_non_byte_alphabet_rejected():
    tok = fastsw.Tokenizer(
        alphabet=CharAlphabet("ab"),
        merges=[(0, 1, 1, False)],
        pretokenizer=fastsw.Pretokenizer(mode="simple"),
        profile="hf",
    )
    with pytest.raises(ValueError, match="character-level"):
        interop.to_tiktoken(tok)
    with pytest.raises(ValueError, match="character-level"):
        interop.save_hf(tok, "/nonexistent/never-written.json")


def test_tokenizer_methods_delegate_to_interop(tmp_path):
    gold = shared_path("golden/paper_ref/models/bpe_2000_final.model")
    tok = fastsw.Tokenizer.load_paper(gold)
    assert tok.vocab_size == 2000 and tok.algo == "bpe"
    tok.save_paper(tmp_path / "m.model")
    assert fastsw.Tokenizer.load_paper(tmp_path / "m.model").merges == tok.merges
    assert tok.merge_conflicts() == []
    report = tok.save_hf(tmp_path / "tokenizer.json", allow_approximate=True)  # script chunking
    assert report["exact"] is False and "script chunking" in report["reasons"][0]
    check = tok.verify_export(tmp_path / "tokenizer.json", ["A short test .\n"])
    assert check["documents"] == 1


@pytest.mark.parametrize("profile, fillers", [("paper", 13), ("hf", 0)])
def test_tiktoken_n_vocab_counts_the_filler_ranks(sample_docs, profile, fillers):
    # tiktoken needs all 256 bytes; the paper alphabet lacks the 13 that never occur in UTF-8
    # (0xC0, 0xC1, 0xF5-0xFF), so they get ranks after every fastsw id, special tokens included:
    # the exported n_vocab is larger by exactly that many (the README says so).
    tok = fastsw.train(
        sample_docs[:50],
        algo="bpe",
        vocab_size=300,
        profile=profile,
        pretokenizer="simple",
        special_tokens=["<|endoftext|>"],
    )
    enc = interop.to_tiktoken(tok)
    assert enc.n_vocab == tok.n_vocab + fillers
    assert enc.n_vocab == tok.n_vocab + 256 - len(tok.alphabet)


def test_exports_carry_normalization_and_the_none_pretokenizer(tmp_path):
    """An NFC model exports an HF normalizer (and tiktoken, which has none, refuses it); a `none` model exports
    one split over the whole text; both HF exports give fastsw's ids, decomposed input included."""
    docs = ["Café été déjà vu, naïve", "Cafe\u0301 e\u0301te\u0301"] * 20
    probes = docs + ["Cafe\u0301 x y", "naïve déjà"]
    for kw in ({"normalize": "nfc", "pretokenizer": "simple"}, {"pretokenizer": "none"}):
        tok = fastsw.train(docs, algo="bpe", vocab_size=260, **kw)
        path = tmp_path / f"{kw['pretokenizer']}.json"
        assert tok.save_hf(path) == {"exact": True, "reasons": []}
        hf = tokenizers.Tokenizer.from_file(str(path))
        assert [hf.encode(t, add_special_tokens=False).ids for t in probes] == [tok.encode(t) for t in probes]
    enc = tok.to_tiktoken()  # the `none` model: one piece per text
    assert [enc.encode(t) for t in probes] == [tok.encode(t) for t in probes]
    nfc = fastsw.train(docs, algo="bpe", vocab_size=260, normalize="nfc", pretokenizer="simple")
    with pytest.raises(ValueError, match="normalizes text to NFC"):
        nfc.to_tiktoken()


EXPORTS = ("save_paper", "save_hf", "save_tiktoken", "to_tiktoken", "merge_conflicts")


def _run_export(tok, name, tmp_path):
    """Run one export; an export this model supports only approximately is asked for anyway
    (``allow_approximate=True``): support, not exactness, is what is tested here."""
    method = getattr(tok, name)
    kw = {"allow_approximate": True} if "allow_approximate" in inspect.signature(method).parameters else {}
    return method(**kw) if name in ("to_tiktoken", "merge_conflicts") else method(tmp_path / f"out.{name}", **kw)


@pytest.fixture(scope="module")
def export_models():
    from fastsw.io.tiktoken_vocab import bpe_openai_rank_file

    docs = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog"] * 10
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "bpe": fastsw.train(docs, algo="bpe", vocab_size=260, pretokenizer="simple"),
            "boundless": fastsw.train(docs, algo="boundless", vocab_size=260),
            "mingram": fastsw.train(docs, algo="mingram", vocab_size=260),
            "chars": fastsw.train(docs, algo="bpe", vocab_size=30, profile="hf", alphabet="chars"),
            "tiktoken": fastsw.Tokenizer.load_tiktoken(bpe_openai_rank_file("cl100k_base")),
        }


@pytest.mark.parametrize(
    "kind, supported",
    [
        ("bpe", EXPORTS),
        ("boundless", ("save_paper", "save_hf", "merge_conflicts")),
        ("mingram", ("save_hf",)),
        ("chars", ("merge_conflicts",)),
        ("tiktoken", ("save_tiktoken", "to_tiktoken")),
    ],
)
def test_each_export_works_or_says_which_exports_the_model_supports(export_models, kind, supported, tmp_path):
    tok = export_models[kind]
    assert interop.supported_exports(tok) == list(supported)
    for name in EXPORTS:
        if name in supported:
            _run_export(tok, name, tmp_path)
            continue
        with pytest.raises(ValueError) as info:
            _run_export(tok, name, tmp_path)
        message = str(info.value)
        listed = ", ".join(supported)
        assert message.endswith(f"this model supports {listed}"), (kind, name, message)
        assert not (tmp_path / f"out.{name}").exists()
