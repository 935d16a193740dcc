"""Boundary markers and caps codes (seed 002 sections 3-3.2, SPEC section 9): the seed's examples, the
compiled segmentation against its Python reference, exact inverses, training with every trainer, the CLI.

Pretokens are compared in readable form (``show``: the marker atom as ``¦``, the caps codes as ``↑``/``⇑``);
the atoms themselves are lone surrogates, never those characters (see ``test_text_with_marker_characters``).
"""

import gzip
import json
import unicodedata
import warnings

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fastsw
from fastsw.pretokenizers import boundary
from fastsw.alphabet import atom_bytes
from fastsw.pretokenizers.boundary import CAPS, MARKER, SHIFT, BoundaryPretokenizer, show
from fastsw.eval.duplication import model_duplication
from fastsw.pretokenizers.pretokenize import make_pretokenizer

from conftest import BACKENDS, HYPOTHESIS_EXAMPLES, assert_error, read_jsonl_texts, run, shared_path, write_jsonl

SCHEMES = [
    m + c for m in ("boundary[w]", "boundary[w,p]", "boundary[w,p,d]") for c in ("", "+caps", "+shift", "+upper")
]
M, S, C = MARKER.char, SHIFT.char, CAPS.char


def both(scheme, text, **kw):
    """The pretokens of ``text`` from the compiled path, after checking that the reference agrees."""
    p = BoundaryPretokenizer(scheme, **kw)
    assert p.compiled, "the Cython twin is not built (python setup.py build_ext --inplace)"
    fast, ref = p.pretokenize(text), p.pretokenize_reference(text)
    assert fast == ref, (scheme, text, fast, ref)
    return [show(x) for x in fast]


# ---- SPEC section 9's examples (the seed authors' test expectations) -------------------------------------------


@pytest.mark.parametrize(
    "scheme, text, expected",
    [
        ("boundary[w,p]", "a, b", ["¦a¦", ",¦", "¦b¦"]),
        ("boundary[w]", "a, b", ["¦a¦", ",", " ", "¦b¦"]),  # the comma is not marked: the space stays
        ("boundary[w,p,d]", "x = 1", ["¦x¦", "¦=¦", "¦1"]),  # 1 has no space on its right: no marker there
        ("boundary[w]", "latinкириллица", ["¦latin", "кириллица¦"]),  # one span, two pretokens
        ("boundary[w]", " \u0301a", [" ", "\u0301", "¦a¦"]),  # a mark after one space is its own group
        ("boundary[w]", "a \u0301b", ["¦a¦", " ", "\u0301", "¦b¦"]),
        ("boundary[w]+caps", "The cat", ["↑¦the¦", "¦cat¦"]),
        ("boundary[w]+caps", "ΟΔΟΣ", ["⇑¦οδος¦"]),  # one lower() call: final sigma
        ("boundary[w]+caps", "GaN iPhone İstanbul ẞ", ["¦GaN¦", "¦iPhone¦", "¦İstanbul¦", "¦ẞ¦"]),  # literal
        ("boundary[w]+shift", "NASA", ["¦NASA¦"]),  # shift_code alone leaves upper case literal
        ("boundary[w]+upper", "The", ["¦The¦"]),  # caps_code alone leaves title case literal
        ("boundary[w]+caps", "A", ["↑¦a¦"]),  # one letter takes ↑ (single_char_shift)
        ("boundary[w]", "Δx", ["¦Δ", "x¦"]),  # seed: one span, two pretokens
    ],
)
def test_spec_examples(scheme, text, expected):
    assert both(scheme, text) == expected
    p = BoundaryPretokenizer(scheme)
    assert p.decode_text("".join(p.pretokenize(text))) == text


def test_table1_sentence():
    # Seed 002 Table 1's sentence (its cells are not in the stored seed text; these follow SPEC section 9).
    # [w]: the space between two words is elided, the spaces around 3 stay; [w,p] changes nothing here (the
    # period has no space beside it); [w,p,d] marks 3 and elides both spaces; +caps puts ↑ before ¦ash¦ and leaves
    # the mixed-case SolidGoldMagikarp literal, so the count is unchanged.
    text = "Ash caught 3 SolidGoldMagikarp."
    assert both("boundary[w]", text) == ["¦Ash¦", "¦caught¦", " ", "3", " ", "¦SolidGoldMagikarp¦", "."]
    assert both("boundary[w,p]", text) == both("boundary[w]", text)
    assert both("boundary[w,p,d]", text) == ["¦Ash¦", "¦caught¦", "¦3¦", "¦SolidGoldMagikarp¦", "."]
    assert both("boundary[w,p,d]+caps", text) == ["↑¦ash¦", "¦caught¦", "¦3¦", "¦SolidGoldMagikarp¦", "."]
    assert [
        len(both(s, text)) for s in ("boundary[w]", "boundary[w,p]", "boundary[w,p,d]", "boundary[w,p,d]+caps")
    ] == [7, 7, 5, 5]


def test_seed_duplication_examples():
    p = BoundaryPretokenizer("boundary[w,p]+caps")
    # "the sharing the pretoken of " the"
    assert "¦the¦" in both("boundary[w,p]", '"the') and "¦the¦" in both("boundary[w,p]", "a the")
    # Ash / ASH / ash share ¦ash¦
    assert both("boundary[w]+caps", "Ash ASH ash") == ["↑¦ash¦", "⇑¦ash¦", "¦ash¦"]
    # the, cat must not decode to "the , cat": the comma is marked only on its spaced side
    pieces = p.pretokenize("the, cat")
    assert [show(x) for x in pieces] == ["¦the¦", ",¦", "¦cat¦"]
    assert p.decode_text("".join(pieces)) == "the, cat"


def test_nfc_and_drop_unlisted_reproduce_the_authors_pipeline():
    # normalize="nfc" + drop_unlisted: e + U+0301 -> é; a private-use code point is deleted
    tok = fastsw.train(
        ["caf\u00e9 and caf\u00e9"],
        algo="bpe",
        vocab_size=250,
        normalize="nfc",
        pretokenizer={"mode": "boundary", "scheme": "boundary[w,p,d]+caps", "drop_unlisted": True},
    )
    text = "Cafe\u0301 \ue000pua"
    pieces = tok.pretokenizer.pretokenize(unicodedata.normalize("NFC", text))
    assert [show(x) for x in pieces] == ["↑¦café¦", "¦pua¦"]
    assert tok.decode(tok.encode(text)) == "Café pua"
    # the default stays lossless: the private-use character is an "other" span of its own
    p = BoundaryPretokenizer("boundary[w,p,d]+caps")
    assert [show(x) for x in p.pretokenize(text)] == ["↑¦cafe\u0301¦", " ", "\ue000", "¦pua¦"]


# ---- compiled == reference, exact inverse ----------------------------------------------------------------------


def _language_samples():
    corpus = shared_path("corpus")
    langs = sorted(p.name for p in corpus.iterdir() if (p / "train.jsonl.gz").exists())
    assert len(langs) >= 12, langs
    out = {}
    for lang in langs:
        texts, size = [], 0
        with gzip.open(corpus / lang / "train.jsonl.gz", "rt", encoding="utf-8") as f:
            for line in f:
                texts.append(json.loads(line)["text"])
                size += len(texts[-1])
                if size > 10_000:
                    break
        if (corpus / lang / "heldout.jsonl").exists():
            texts += read_jsonl_texts(corpus / lang / "heldout.jsonl", limit=5)
        out[lang] = texts
    return out


@pytest.fixture(scope="module")
def language_samples():
    return _language_samples()


@pytest.mark.parametrize("scheme", ["boundary[w]", "boundary[w,p,d]+caps"])
def test_compiled_equals_reference_on_every_language(language_samples, scheme):
    p = BoundaryPretokenizer(scheme)
    for lang, texts in language_samples.items():
        for text in texts:
            fast = p.pretokenize(text)
            assert fast == p.pretokenize_reference(text), (lang, text[:80])
            assert p.decode_text("".join(fast)) == text, (lang, text[:80])


_ADVERSARIAL = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60) | st.text(
    alphabet=st.sampled_from(list("aAbZ ,.1\u0301\u0308ΣσςΟİıẞßǅǆ¦↑⇑\n\t ̀κКaé日本ー한\ue000\U0001f600")), max_size=40
)


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_ADVERSARIAL, scheme=st.sampled_from(SCHEMES), single=st.booleans(), min_caps=st.integers(1, 3))
def test_hypothesis_compiled_equals_reference_and_inverse(text, scheme, single, min_caps):
    p = BoundaryPretokenizer(scheme, single_char_shift=single, min_caps_length=min_caps)
    pieces = p.pretokenize(text)
    assert pieces == p.pretokenize_reference(text)
    assert p.decode_text("".join(pieces)) == text
    # never three markers in a row (caps codes ignored), and at most one touching pair per space of the text
    joined = "".join(pieces).replace(S, "").replace(C, "")
    assert M * 3 not in joined
    assert joined.count(M * 2) <= text.count(" ")


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None)
@given(text=_ADVERSARIAL)
def test_hypothesis_drop_unlisted(text):
    p = BoundaryPretokenizer("boundary[w,p,d]+caps", drop_unlisted=True)
    pieces = p.pretokenize(text)
    assert pieces == p.pretokenize_reference(text)
    kept = "".join(ch for ch in text if boundary.class_table().class_name(ch) != ("Unknown", "✭"))
    assert p.decode_text("".join(pieces)) == kept


# ---- tokenizers: every trainer, both backends -----------------------------------------------------------------


@pytest.fixture(scope="module")
def marker_models(sample_docs):
    """BPE, BoundlessBPE and SuperBPE with boundary[w,p,d]+caps on the bundled sample (numba backend), and on every
    third of its documents on both backends (``"python"``, ``"numba-small"``: the reference trainer is slow)."""
    models = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastsw.VocabularyNotReachedWarning)  # SuperBPE may run out of pairs
        for algo, extra in (("bpe", {}), ("boundless", {}), ("superbpe", {"supermerges": 150})):
            for backend, docs, label in (
                ("numba", sample_docs, "numba"),
                ("numba", sample_docs[::3], "numba-small"),
                ("python", sample_docs[::3], "python"),
            ):
                models[algo, label] = fastsw.train(
                    docs, algo=algo, vocab_size=1000, pretokenizer="boundary[w,p,d]+caps", backend=backend, **extra
                )
    return models


def test_backends_train_identical_models(marker_models):
    for algo in ("bpe", "boundless", "superbpe"):
        a, b = marker_models[algo, "python"], marker_models[algo, "numba-small"]
        assert a.merges == b.merges and a.vocab == b.vocab, algo
        assert a.alphabet.to_config() == {
            "kind": "atoms",
            "base": "bytes243",
            "atoms": [[0, "boundary", "¦"], [1, "shift", "↑"], [2, "caps", "⇑"]],
        }
    assert marker_models["superbpe", "numba"].n_super > 0


def test_parity_aware_bpe_and_mingram_train_with_markers(language_samples):
    """The other two trainers take a marker scheme too: parity-aware BPE (both backends, the same merges and
    language choices) and MinGram; markers stay atomic and text round-trips."""
    docs = {lang: language_samples[lang][:20] for lang in ("en", "de")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastsw.VocabularyNotReachedWarning)
        pa = [
            fastsw.train(
                docs,
                algo="parity-bpe",
                ratios={"en": 1, "de": 1},
                vocab_size=400,
                pretokenizer="boundary[w,p,d]+caps",
                backend=backend,
            )
            for backend in BACKENDS
        ]
        mg = fastsw.train(docs["en"] + docs["de"], algo="mingram", vocab_size=400, pretokenizer="boundary[w,p,d]+caps")
    assert pa[0].merges == pa[1].merges and len(pa[0].merges) > 100
    assert pa[0].training_info["parity"]["chosen"] == pa[1].training_info["parity"]["chosen"]
    text = "The CAT sat on the Matte. ΟΔΟΣ, ¦ and ↑ stay text."
    for tok in (pa[1], mg):
        assert tok.alphabet.to_config()["kind"] == "atoms"
        ids = tok.encode(text)
        assert tok.vocab.index(MARKER.code) in ids and tok.decode(ids) == text


def test_no_token_has_touching_markers(marker_models):
    for (algo, _), tok in marker_models.items():
        for tb in tok.vocab:
            squeezed = tb.replace(SHIFT.code, b"").replace(CAPS.code, b"")
            assert MARKER.code * 2 not in squeezed, (algo, tb)


def test_markers_are_atomic(marker_models):
    tok = marker_models["bpe", "numba"]
    marker_id = tok.vocab.index(MARKER.code)
    assert marker_id == 243  # after the 243 bytes: never built from bytes
    # the characters ¦ ↑ ⇑ in text are their UTF-8 bytes, not the atoms
    ids = tok.encode("¦", backend="python")
    assert marker_id not in ids and tok.decode(ids) == "¦"


@settings(
    max_examples=HYPOTHESIS_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(text=_ADVERSARIAL, algo=st.sampled_from(["bpe", "boundless", "superbpe"]))
def test_hypothesis_round_trip_every_trainer(marker_models, text, algo):
    tok = marker_models[algo, "numba"]
    ids = tok.encode(text, backend="numba")
    assert ids == tok.encode(text, backend="python")
    assert ids == tok.encode_ordinary(text, shortcut=False, backend="python")
    assert tok.decode(ids) == text
    assert tok.decode_bytes(ids) == text.encode("utf-8")


def test_fast_encoder_equals_reference_on_corpus(marker_models, language_samples):
    tok = marker_models["boundless", "numba"]
    texts = [t for texts in language_samples.values() for t in texts[:5]]
    ids, offsets = tok.encode_batch_to_numpy(texts)
    for k, text in enumerate(texts):
        ref = tok.encode_ordinary(text, backend="python")
        assert ids[offsets[k] : offsets[k + 1]].tolist() == ref
        assert tok.decode(ref) == text


@pytest.fixture(scope="module")
def scheme_models(sample_docs):
    """One small model per scheme, the trainers taking turns (BPE, SuperBPE, BoundlessBPE)."""
    models = {}
    algos = [("bpe", {}), ("superbpe", {"supermerges": 30}), ("boundless", {})]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastsw.VocabularyNotReachedWarning)  # BoundlessBPE stops early here
        for k, scheme in enumerate(SCHEMES):
            algo, extra = algos[k % 3]
            models[scheme] = fastsw.train(sample_docs[k::8], algo=algo, vocab_size=500, pretokenizer=scheme, **extra)
    return models


@settings(
    max_examples=HYPOTHESIS_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(text=_ADVERSARIAL, scheme=st.sampled_from(SCHEMES))
def test_hypothesis_round_trip_every_scheme(scheme_models, text, scheme):
    tok = scheme_models[scheme]
    ids = tok.encode(text)
    assert ids == tok.encode(text, backend="python")
    assert tok.decode(ids) == text


# ---- offsets ------------------------------------------------------------------------------------------------------


def _hand_offsets(scheme, tokens):
    """``token_offsets`` of tokens given as texts (atoms as lone surrogates) or bytes, on a vocabulary of just
    them."""
    from fastsw.alphabet import atom_bytes

    tb = [t if isinstance(t, bytes) else atom_bytes(t) for t in tokens]
    return BoundaryPretokenizer(scheme).token_offsets(list(range(len(tb))), tb, {})


@pytest.mark.parametrize(
    "scheme, tokens, expected",
    [
        # "The cat": the code and the closing marker take no character, the pair's second marker is the space
        ("boundary[w]+caps", [S + M + "the", M, M + "cat" + M], [0, 3, 3]),
        # "THE CAT," (lowercased spans keep their offsets): T=0, the space=3, the comma=7
        ("boundary[w,p]+caps", [C + M + "th", "e" + M, C + M + "cat" + M, ","], [0, 2, 3, 7]),
        # "a, b" under [w]: the comma and the space are literal, so "¦b" opens no pair
        ("boundary[w]", [M + "a" + M, ",", " ", M + "b" + M], [0, 1, 2, 3]),
        # "x = 1" under [w,p,d]: two pairs, "¦=¦" at the first space, "¦1" at the second
        ("boundary[w,p,d]", [M + "x" + M, M + "=" + M, M + "1"], [0, 1, 3]),
        # "Ab é": é's two UTF-8 bytes in two tokens; the second starts inside é and gets é's offset
        ("boundary[w]+caps", [S + M + "ab" + M, MARKER.code + b"\xc3", b"\xa9" + MARKER.code], [0, 2, 3]),
        # "The" split after the code: the code token and the rest both start at T
        ("boundary[w]+caps", [S, M + "the" + M], [0, 0]),
    ],
)
def test_offsets_hand_worked(scheme, tokens, expected):
    assert _hand_offsets(scheme, tokens) == expected


def _check_offsets(tok, text):
    """encode_with_offsets against its definition: every token that does not start inside a character starts at
    len(decode(ids before it)), and the text up to there is what those ids decode to."""
    ids, offsets = tok.encode_with_offsets(text)
    assert ids == tok.encode(text) and len(offsets) == len(ids)
    assert offsets == sorted(offsets) and all(0 <= o <= len(text) for o in offsets)
    for k, t in enumerate(ids):
        if not 0x80 <= tok.vocab[t][0] < 0xC0:
            assert tok.decode(ids[:k]) == text[: offsets[k]], (text, k)


def test_offsets_on_corpus_text(marker_models, language_samples):
    for algo in ("bpe", "superbpe"):
        tok = marker_models[algo, "numba"]
        for texts in language_samples.values():
            _check_offsets(tok, texts[0][:400])
    tok = marker_models["bpe", "numba"]
    ids, offsets = tok.encode_with_offsets("The CAT sat.")
    assert [("The CAT sat."[o]) for o in offsets][:1] == ["T"] and "The CAT sat."[offsets[-1]] == "."


@settings(
    max_examples=HYPOTHESIS_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(text=_ADVERSARIAL, scheme=st.sampled_from(SCHEMES))
def test_hypothesis_offsets(scheme_models, text, scheme):
    _check_offsets(scheme_models[scheme], text)


def test_text_with_marker_characters(marker_models):
    # text that already holds ¦ ↑ ⇑ round-trips: the atoms are lone surrogates, not these characters
    tok = marker_models["superbpe", "numba"]
    for text in ("¦the¦ ↑¦cat¦", "a ¦¦ b ⇑↑", "¦", "↑A"):
        assert tok.decode(tok.encode(text)) == text


def test_save_load_records_the_scheme(marker_models, tmp_path):
    tok = marker_models["boundless", "numba"]
    path = tmp_path / "m.json"
    tok.save(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["pretokenizer"]["scheme"] == "boundary[w,p,d]+caps"
    assert data["alphabet"]["kind"] == "atoms"
    back = fastsw.Tokenizer.load(path)
    text = "The Quick brown FOX, 42 times: ΟΔΟΣ."
    assert back.encode(text) == tok.encode(text) and back.decode(back.encode(text)) == text


def test_counts_round_trip_and_training_from_counts(sample_docs, tmp_path):
    from fastsw.corpus.counting import count_corpus, load_counts

    pretok = make_pretokenizer("boundary[w,p]+shift")
    counts = count_corpus(sample_docs[:30], pretok, collect_runs=True)
    path = tmp_path / "c.jsonl.gz"
    counts.save(path)
    back = load_counts(path)
    assert back.pretoken_multiset() == counts.pretoken_multiset() and back.run_multiset() == counts.run_multiset()
    assert counts.run_multiset()  # letter runs remain where no markers touch (e.g. kana and kanji groups)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastsw.VocabularyNotReachedWarning)  # few supermerge pairs on 30 documents
        a = fastsw.train(
            sample_docs[:30], algo="superbpe", vocab_size=500, supermerges=20, pretokenizer="boundary[w,p]+shift"
        )
        b = fastsw.train(from_counts=path, algo="superbpe", vocab_size=500, supermerges=20)
    assert a.merges == b.merges and b.pretokenizer == a.pretokenizer


@pytest.mark.parametrize("scheme", ["boundary[w]", "boundary[w,p,d]+caps", "boundary[w,p]+shift"])
def test_compiled_counting_equals_the_reference_loop(language_samples, scheme):
    """MarkCounter (the compiled segmentation feeding the default counter's table, one per thread, merged) against
    CountTable's plain loop over the Python reference pre-tokenizer: the same table, order included."""
    from fastsw.corpus.counting import CountTable, NativeCountTable, count_corpus, native_counting

    docs = [t for texts in language_samples.values() for t in texts]
    pretok = make_pretokenizer(scheme)
    assert native_counting(pretok), "the extension is not built"
    ref_pretok = make_pretokenizer(scheme)
    ref_pretok.pretokenize = ref_pretok.pretokenize_reference  # the plain-Python rule, not the Cython twin
    ref = CountTable(ref_pretok, collect_runs=True)
    for doc in docs:
        ref.add(doc)
    b = ref.finish()
    one = NativeCountTable(pretok, collect_runs=True)
    one.add_batch(docs[:7])
    for doc in docs[7:]:
        one.add(doc)
    a = one.finish()
    assert (a.pretokens, a.counts, a.has_letter, a.run_multiset(), a.n_bytes, a.n_documents) == (
        b.pretokens,
        b.counts,
        b.has_letter,
        b.run_multiset(),
        b.n_bytes,
        b.n_documents,
    )
    threaded = count_corpus(docs, pretok, collect_runs=True, threads=2)
    assert threaded.pretoken_multiset() == b.pretoken_multiset() and threaded.run_multiset() == b.run_multiset()
    # no letter run joins two pieces whose junction would hold two touching markers
    for letter_run in b.run_multiset():
        for i, j in zip(letter_run, letter_run[1:]):
            assert not pretok.run_break(i, j)


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(_ADVERSARIAL, max_size=4), scheme=st.sampled_from(SCHEMES), drop=st.booleans())
def test_hypothesis_compiled_counting_equals_reference(texts, scheme, drop):
    from fastsw.corpus.counting import CountTable, NativeCountTable

    pretok = BoundaryPretokenizer(scheme, drop_unlisted=drop)
    ref_pretok = BoundaryPretokenizer(scheme, drop_unlisted=drop)
    ref_pretok.pretokenize = ref_pretok.pretokenize_reference
    fast, ref = NativeCountTable(pretok, collect_runs=True), CountTable(ref_pretok, collect_runs=True)
    fast.add_batch(texts)
    for t in texts:
        ref.add(t)
    a, b = fast.finish(), ref.finish()
    assert (a.pretokens, a.counts, a.has_letter, a.run_multiset(), a.n_bytes) == (
        b.pretokens,
        b.counts,
        b.has_letter,
        b.run_multiset(),
        b.n_bytes,
    )


def test_packing_one_byte_atoms_equals_the_codec():
    """pack_pretokens' vectorized spelling of one-byte atoms against the codec error handler (the reference
    spelling), next to characters whose UTF-8 also starts with 0xED (U+D000..U+D7FF)."""
    import fastsw.trainers.bpe_fast as ft
    from fastsw.alphabet import atom_bytes

    pretok = make_pretokenizer("boundary[w,p,d]+caps")
    pieces = sorted({x for t in ("The CAT, 3 dogs 퀀\ud7ff x íñ", "ΟΔΟΣ 日本 a") for x in pretok.pretokenize(t)})
    pieces += ["\ud000", M + "\ud7a3" + M]
    alphabet = pretok.make_alphabet("paper")
    tokens, offsets, counts = ft.pack_pretokens(pieces, list(range(len(pieces))), alphabet)
    for k, piece in enumerate(pieces):
        assert tokens[offsets[k] : offsets[k + 1]].tolist() == [alphabet.id_of_byte(b) for b in atom_bytes(piece)]
    assert counts.tolist() == list(range(len(pieces)))
    assert ft._pack_short_atoms([chr(0xD800 + 9)]) is None  # a three-byte atom: the codec spells it


_ATOM_PIECE = st.lists(
    st.sampled_from([chr(0xD800 + k) for k in (0, 1, 2, 7, 8, 9, 0x47F, 0x500, 0x7FF)])
    | st.characters(blacklist_categories=("Cs",)),
    max_size=8,
).map("".join)


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None)
@given(pieces=st.lists(_ATOM_PIECE, max_size=6))
def test_hypothesis_packed_atom_bytes_equal_the_codec(pieces):
    """alphabet.atom_bytes_packed (the encoders' and phase 1's spelling of pieces) against atom_bytes (the
    codec), one- and three-byte atoms next to characters whose UTF-8 starts with 0xED."""
    import numpy as np
    from fastsw.alphabet import atom_bytes_packed

    data, lengths = atom_bytes_packed(pieces)
    assert bytes(data) == b"".join(atom_bytes(p) for p in pieces)
    assert lengths.tolist() == [len(atom_bytes(p)) for p in pieces] and lengths.dtype == np.int64


def _bytes_of_pieces(p, texts):
    """The reference for token_bytes_batch: atom_bytes of every piece of the Python rule, byte ends per text."""
    data, ends, doc_pieces = [], [], [0]
    for t in texts:
        pos = 0
        for piece in p.pretokenize_reference(t):
            data.append(atom_bytes(piece))
            pos += len(data[-1])
            ends.append(pos)
        doc_pieces.append(len(ends))
    return b"".join(data), ends, doc_pieces


def _check_token_bytes(p, texts):
    data, ends, doc_pieces = p.token_bytes_batch(texts)
    assert (data, ends.tolist(), doc_pieces.tolist()) == _bytes_of_pieces(p, texts)


def test_token_bytes_batch_on_every_language(language_samples):
    """The fast encoder's input for marker models, written by the compiled segmentation without a str per piece,
    against the reference pieces' atom_bytes."""
    texts = [t for ts in language_samples.values() for t in ts] + ["", "ΟΔΟΣ The CAT a\ue000b"]
    for scheme, drop in (("boundary[w]", True), ("boundary[w,p,d]+caps", False)):
        _check_token_bytes(BoundaryPretokenizer(scheme, drop_unlisted=drop), texts)


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None)
@given(texts=st.lists(_ADVERSARIAL, max_size=4), scheme=st.sampled_from(SCHEMES), drop=st.booleans())
def test_hypothesis_token_bytes_batch(texts, scheme, drop):
    _check_token_bytes(BoundaryPretokenizer(scheme, drop_unlisted=drop), texts)


def test_compiled_counting_of_drop_unlisted_and_final_sigma():
    """The compiled counter's rarer branches: unlisted code points dropped (the descriptors then refer to a
    filtered copy) and a capital sigma, whose final form only the reference's caps_code decides."""
    from fastsw.corpus.counting import count_corpus, count_corpus_reference

    docs = ["ΟΔΟΣ Σήμερα ΣΗΜΕΡΑ σΣ", "a\ue000b \u0378 The Cat", "\U000e0002", "ΟΔΟΣ Σ Ab"]  # U+E000, U+0378,
    # U+E0002: not in the Scripts file
    for kw in ({}, {"drop_unlisted": True}):
        pretok = BoundaryPretokenizer("boundary[w,p,d]+caps", **kw)
        ref_pretok = BoundaryPretokenizer("boundary[w,p,d]+caps", **kw)
        ref_pretok.pretokenize = ref_pretok.pretokenize_reference
        a = count_corpus(docs, pretok, collect_runs=True, threads=2)
        b = count_corpus_reference(docs, ref_pretok, collect_runs=True)
        assert a.pretoken_multiset() == b.pretoken_multiset() and a.run_multiset() == b.run_multiset()
        assert a.n_bytes == b.n_bytes
    assert {show(p) for p in a.pretokens} >= {"⇑¦οδος¦", "↑¦σήμερα¦", "¦ab¦"}


def test_exports_refuse_plainly(marker_models):
    tok = marker_models["bpe", "numba"]
    with pytest.raises(ValueError, match="cannot be exported to tiktoken"):
        fastsw.io.interop.to_tiktoken(tok)
    with pytest.raises(ValueError, match="cannot be exported to HF tokenizers"):
        fastsw.io.interop.hf_tokenizer_json(tok)


def test_duplication_statistics(marker_models, sample_docs):
    dup = model_duplication(marker_models["bpe", "numba"])
    assert dup["space"] == 0.0  # a space is never part of a word's pretoken under a marker scheme
    plain = fastsw.train(sample_docs, algo="bpe", vocab_size=1200)
    assert model_duplication(plain)["space"] > 0.05


# ---- bad input -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["boundary[x]", "boundary[w,d]", "boundary[w]+foo", "boundary", "bogus", "boundary[w]caps"]
)
def test_unknown_scheme_is_one_clear_error(name):
    with pytest.raises(ValueError) as e:
        make_pretokenizer(name)
    message = str(e.value)
    assert "boundary[w,p,d]" in message and "script-v3" in message and "+caps" in message


def test_script_v3_names_dispatch_or_say_unavailable():
    try:
        import fastsw.pretokenizers.script_v3 as sv  # noqa: F401

        has_class = hasattr(sv, "ScriptPretokenizer")
    except ImportError:
        has_class = False
    if has_class:
        assert make_pretokenizer("script-v3").mode == "script-v3"
    else:
        with pytest.raises(ValueError, match="not available"):
            make_pretokenizer("script-v3+boundary[w]")


def test_lone_surrogate_is_a_clear_error():
    p = BoundaryPretokenizer("boundary[w]")
    for f in (p.pretokenize, p.pretokenize_reference):
        with pytest.raises(ValueError, match="lone surrogate"):
            f("a\ud800b")


def test_alphabet_option_conflicts_with_a_scheme(sample_docs):
    with pytest.raises(ValueError, match="leave alphabet unset"):
        fastsw.train(
            sample_docs[:3], algo="bpe", vocab_size=300, profile="hf", alphabet="chars", pretokenizer="boundary[w]"
        )


# ---- CLI -----------------------------------------------------------------------------------------------------------


def test_cli_pretokenize_shows_markers(capsys, tmp_path):
    path = tmp_path / "t.jsonl"
    write_jsonl(path, ["The cat, 3 ΟΔΟΣ"])
    code, out, err = run(capsys, "pretokenize", "--pretokenizer", "boundary[w,p,d]+caps", path)
    assert code == 0, err
    assert json.loads(out) == ["↑¦the¦", "¦cat¦", ",¦", "¦3¦", "⇑¦οδος¦"]


def test_cli_train_count_encode_decode_inspect(capsys, tmp_path, sample_docs):
    data = write_jsonl(tmp_path / "d.jsonl", sample_docs[:40])
    model = tmp_path / "m.json"
    code, out, err = run(
        capsys,
        "train",
        data,
        "--pretokenizer",
        "boundary[w,p,d]+caps",
        "--algo",
        "boundless",
        "--vocab-size",
        "600",
        "-o",
        model,
        "--no-progress",
    )
    assert code == 0, err
    code, out, err = run(capsys, "inspect", model)
    assert code == 0 and "boundary[w,p,d]+caps" in out and "duplication:" in out, out
    assert '"¦"' in out or "¦" in out
    assert "only by a leading space" in out and "only by case" in out
    text_file = tmp_path / "t.txt"
    text_file.write_text("The CAT sat, 3 times.\n", encoding="utf-8")
    code, ids, err = run(capsys, "encode", "-m", model, text_file)
    assert code == 0, err
    ids_file = tmp_path / "ids.txt"
    ids_file.write_text(ids, encoding="utf-8")
    code, out, err = run(capsys, "decode", "-m", model, ids_file)
    assert code == 0 and out == "The CAT sat, 3 times.\n", (out, err)
    counts = tmp_path / "c.jsonl.gz"
    code, out, err = run(capsys, "count", data, "--pretokenizer", "boundary[w,p,d]+caps", "-o", counts, "--no-progress")
    assert code == 0, err
    code, out, err = run(
        capsys,
        "train",
        "--from-counts",
        counts,
        "--pretokenizer",
        "boundary[w]",
        "--vocab-size",
        "300",
        "-o",
        tmp_path / "m2.json",
        "--no-progress",
    )
    assert_error(code, err, "--pretokenizer boundary[w]", "differs")


def test_cli_unknown_scheme(capsys, tmp_path):
    code, out, err = run(capsys, "pretokenize", "--pretokenizer", "boundary[w,x]", tmp_path / "none.txt")
    assert code == 2 and "boundary[w,p,d]" in err and "Traceback" not in err


def test_eval_reports_duplication(marker_models):
    from fastsw.eval.evaluate import evaluate, markdown_table

    result = evaluate({"marked": marker_models["bpe", "numba"]}, {"en": ["The cat sat on the mat."]})
    assert result["models"][0]["duplication"]["space"] == 0.0
    assert "case duplicates" in markdown_table(result)


def test_atom_bytes_spelling():
    assert atom_bytes(S + M + "ab" + M) == b"\xf9\xf8ab\xf8"


@pytest.mark.parametrize(
    "name",
    ["boundary[w]+shift+upper", "boundary[w,p]+caps+caps", "boundary[w]+upper+shift", "boundary[w,p,d]+caps+shift"],
)
def test_a_scheme_takes_one_caps_flag(name):
    """One rule: at most one of +caps (both codes), +shift, +upper; two flags were read as +caps silently."""
    with pytest.raises(ValueError, match=r"one caps flag.*\+caps"):
        fastsw.pretokenizers.boundary.parse_scheme(name)
    with pytest.raises(ValueError, match="one caps flag"):
        fastsw.train(["Hello World"], algo="bpe", vocab_size=300, pretokenizer=name)
