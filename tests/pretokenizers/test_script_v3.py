"""SCRIPT v3 (seed 002 Appendix B.1/B.2, SPEC section 9): the table, the atomic encoding and its inverse, byte
fallback, drop_unlisted, the no-partial-character rule, and the groups / plain SCRIPT pretokens (compiled kernel
against the plain-Python rule on the shared corpora and on adversarial Unicode)."""

import gzip
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsw.pretokenizers import script_v3 as sv
from conftest import BACKENDS, HYPOTHESIS_EXAMPLES, read_jsonl_texts, shared_path

T = sv.table()


def chars_of(text):
    """(block name, index) per character."""
    atoms = sv.atoms_of_text(text)
    return [(T.block_name(atoms[i]), atoms[i + 1] - T.n_blocks) for i in range(0, len(atoms), 2)]


# -- the table ---------------------------------------------------------------------------------------------


def test_shipped_scripts_file_is_the_shared_one():
    assert sv.SCRIPTS_FILE.read_bytes() == shared_path("unicode/Scripts-16.0.0.txt").read_bytes()


def test_1710_atomic_tokens_for_unicode_16():
    # seed 002 B.1: "reducing the number of SCRIPT tokens from 1,916 to 1,710"; SPEC: at most 1,448 per block
    assert (T.n_blocks, T.n_index, T.n_atoms) == (262, 1448, 1710)
    assert max(len(chars) for _, _, chars in T.blocks) == sv.BLOCK_SIZE == 1448
    # the block size is the (Latin, LM) class: Latin letters are one whole block
    latin = T.classes.index(("Latin", "LM"))
    assert [sub for cid, sub, _ in T.blocks if cid == latin] == [0]
    assert len(T.blocks[T.block_of[ord("a")]][2]) == 1448
    # 174 classes from the file plus Unknown; Han letters need ceil(98687 / 1448) = 69 blocks
    assert len(T.classes) == 175 and T.classes[-1] == ("Unknown", "✭")
    assert sum(1 for cid, _, _ in T.blocks if T.classes[cid] == ("Han", "LM")) == 69
    assert len(T) == 1710 + 115


def test_classes_follow_the_seed():
    # B.1: Latin and Cyrillic letters are separate blocks ...
    assert chars_of("a")[0][0] == "Latin:LM" and chars_of("я")[0][0] == "Cyrillic:LM"
    # ... Arabic-Indic and Devanagari digits share one block with 012
    assert {b for b, _ in chars_of("012٣४")} == {"✭:N"}
    # ... Tibetan letters, digits and punctuation are all one block
    assert {b for b, _ in chars_of("ཀ༣།")} == {"Tibetan:✭"}
    # other high-resource characters drop the script: Thai digits are digits, CJK punctuation is PSF
    assert chars_of("๓")[0][0] == "✭:N" and chars_of("。")[0][0].startswith("✭:PSF")
    assert chars_of(" ")[0][0] == "✭:ZC" and chars_of("\n")[0][0] == "✭:ZC"  # Zs and Cc
    assert chars_of("©")[0][0].startswith("✭:So") and chars_of("\u200b")[0][0].startswith("✭:PSF")  # So, Cf
    # combining marks are Inherited (not high-resource): one class, script kept
    assert chars_of("\u0301")[0][0] == "Inherited:✭"
    # the Scripts file's own category, not Python's older unicodedata: U+1C89 (Unicode 16) is a Cyrillic letter
    assert chars_of("\u1c89")[0][0] == "Cyrillic:LM"
    # file order: class ids by first appearance, indices in file order (ASCII letters first, A before a)
    assert T.classes[:2] == (("✭", "ZC"), ("✭", "PSF"))
    assert chars_of("Aa") == [("Latin:LM", 0), ("Latin:LM", 26)]


def test_every_code_point_round_trips():
    listed = np.flatnonzero(T.block_of >= 0)
    assert len(listed) == 155063
    # each listed code point is exactly one (block, index) slot, and that slot holds it
    slots = T.block_of[listed].astype(np.int64) * T.n_index + T.index_of[listed]
    assert len(np.unique(slots)) == len(listed)
    slot_cp = np.full(T.n_blocks * T.n_index, -1, dtype=np.int64)
    for b, (_, _, chars) in enumerate(T.blocks):
        slot_cp[b * T.n_index : b * T.n_index + len(chars)] = [ord(c) for c in chars]
    assert (slot_cp[slots] == listed).all()
    # every listed code point and every unlisted one of the BMP, encoded and decoded (byte fallback)
    cps = np.concatenate([listed, np.flatnonzero(T.block_of[:0x10000] < 0)]).astype("<u4")
    cps = cps[(cps < 0xD800) | (cps > 0xDFFF)]
    text = cps.tobytes().decode("utf-32-le")
    atoms = sv.atoms_of_text(text)
    assert sv.text_of_atoms(atoms) == text
    unlisted = cps[T.block_of[cps] < 0]
    utf8_len = 1 + (unlisted >= 0x80) + (unlisted >= 0x800) + (unlisted >= 0x10000)
    assert len(atoms) == 2 * len(listed) + int(utf8_len.sum())
    assert sv.text_of_atoms(sv.atoms_of_text(text, drop_unlisted=True)) == "".join(map(chr, listed.tolist()))
    # and all 1,112,064 code points through the pre-tokenizer's spelling (str.translate) and back
    everything = np.concatenate([np.arange(0xD800), np.arange(0xE000, 0x110000)]).astype("<u4")
    text = everything.tobytes().decode("utf-32-le")
    assert sv.unspell(sv.spell(text)) == text


def test_unlisted_characters_byte_fallback_or_dropped():
    pua, unassigned = "\ue000", "\u0378"
    atoms = sv.atoms_of_text("a" + pua + unassigned)
    assert [sv.atom_name(a) for a in atoms] == ["<Latin:LM>", "<26>", "<xEE>", "<x80>", "<x80>", "<xCD>", "<xB8>"]
    assert sv.text_of_atoms(atoms) == "a" + pua + unassigned
    assert sv.atoms_of_text("a" + pua + unassigned, drop_unlisted=True) == sv.atoms_of_text("a")
    assert sv.remove_unlisted("x\ue000y\U000e0000\ud800z") == "xyz"  # SPEC: U+E000 pua -> pua
    assert sv.remove_unlisted("plain") == "plain"
    with pytest.raises(ValueError, match="lone surrogate.*drop_unlisted=True"):
        sv.atoms_of_text("a\ud800")
    assert sv.atoms_of_text("a\ud800", drop_unlisted=True) == sv.atoms_of_text("a")
    with pytest.raises(TypeError, match="drop_unlisted"):
        sv.atoms_of_text("a", drop_unlisted="yes")


def test_broken_atom_sequences_are_refused_plainly():
    a = sv.atoms_of_text("ab")
    with pytest.raises(ValueError, match="without one of its 1448 index atoms"):
        sv.text_of_atoms(a[:1])
    with pytest.raises(ValueError, match="index atom .* without a block"):
        sv.text_of_atoms(a[1:])
    with pytest.raises(ValueError, match="not a SCRIPT atom id"):
        sv.text_of_atoms([len(T)])
    last = T.n_blocks - 1  # the last block is short: an index past its end is not a character
    assert len(T.blocks[last][2]) < T.n_index
    with pytest.raises(ValueError, match="without one of its"):
        sv.text_of_atoms([last, T.n_atoms - 1])


# -- no partial characters -------------------------------------------------------------------------------


def test_merge_rule():
    kinds = sv.atom_kinds()
    b, i = sv.atoms_of_text("a")
    fb = sv.atoms_of_text("\ue000")
    assert (kinds[b], kinds[i], kinds[fb[0]]) == (sv.KIND_BLOCK, sv.KIND_INDEX, sv.KIND_BYTE)
    W = sv.KIND_WHOLE
    allowed = {(l, r) for l in range(4) for r in range(4) if sv.merge_allowed(l, r)}
    assert allowed == {(W, W), (sv.KIND_BLOCK, sv.KIND_INDEX)}
    # the kernel form agrees on every pair of kinds (token ids 0..3 given kinds 0..3)
    k4 = np.arange(4, dtype=np.uint8)
    assert {(l, r) for l in range(4) for r in range(4) if sv.merge_allowed_kernel(k4, l, r)} == allowed
    assert sv.merge_allowed_kernel.py_func(k4, 1, 2) and not sv.merge_allowed_kernel.py_func(k4, 2, 1)


def _tokens_are_whole(text):
    """Greedy pairwise merging of a text's atoms, allowed merges only: every token decodes on its own."""
    kinds = list(sv.atom_kinds())
    seq = [[a] for a in sv.atoms_of_text(text)]
    kind = [kinds[a] for a in sv.atoms_of_text(text)]
    changed = True
    while changed and len(seq) > 1:
        changed = False
        for j in range(len(seq) - 1):
            if sv.merge_allowed(kind[j], kind[j + 1]):
                seq[j : j + 2] = [seq[j] + seq[j + 1]]
                kind[j : j + 2] = [sv.KIND_WHOLE]
                changed = True
                break
    for tok, k in zip(seq, kind):
        if k == sv.KIND_WHOLE:
            sv.text_of_atoms(tok)  # raises for a partial character
    return seq, kind


def test_merges_never_make_partial_characters():
    seq, kind = _tokens_are_whole("héllo wörld \ue000 日本")
    # everything listed merged into one whole token... up to the unlisted character, whose bytes stay apart
    assert list(kind).count(sv.KIND_BYTE) == 3
    assert sv.text_of_atoms(seq[0]) == "héllo wörld "


# -- groups and plain SCRIPT pretokens --------------------------------------------------------------------


def pretokens_both(text):
    ref = sv.plain_pretokens_reference(text)
    assert sv.plain_pretokens(text) == ref
    assert "".join(ref) == text
    return ref


def test_seed_b2_examples():
    # a single space joins a following word (space-using script) or PSF group ...
    assert pretokens_both("the cat, (sat)") == ["the", " cat", ",", " (", "sat", ")"]
    assert pretokens_both("привет мир") == ["привет", " мир"]
    # ... nothing else does: two spaces stand alone, as does a space before emoji, digits, Han, kana, Thai
    assert pretokens_both("a  b") == ["a", "  ", "b"]
    assert pretokens_both("a 😀") == ["a", " ", "😀"]
    assert pretokens_both("a 42") == ["a", " ", "42"]
    assert pretokens_both("a 日本 かな ไทย") == ["a", " ", "日本", " ", "かな", " ", "ไทย"]
    # no pretoken spans a script change; Hiragana groups with Han, Katakana does not
    assert pretokens_both("Δx") == ["Δ", "x"]
    assert pretokens_both("東京でカメラ") == ["東京で", "カメラ"]
    # Inherited joins the group before it; at the start it is a group of its own; " \u0301" stays one pretoken
    assert pretokens_both("e\u0301te\u0301") == ["e\u0301te\u0301"]
    assert pretokens_both("\u0301\u0301a") == ["\u0301\u0301", "a"]
    assert pretokens_both("a \u0301b") == ["a", " \u0301", "b"]
    # unlisted code points are one (Unknown, ✭) class: they group together
    assert pretokens_both("x\ue000\ue001y") == ["x", "\ue000\ue001", "y"]
    # digits of different scripts are one class, and so one group
    assert pretokens_both("12٣४") == ["12٣४"]


def test_pathological_groups():
    for text in [
        "",
        " ",
        "a" * 100000,
        " " * 5000 + "x",
        "\u0301" * 3000,
        " a" * 3000,
        "\ud800\udc00",
        "a \u0301" * 100,
        "日" * 5000 + "ー",
    ]:
        pretokens_both(text)


def _corpus_texts():
    corpus = shared_path("corpus")
    texts = []
    for lang in sorted(p.name for p in corpus.iterdir() if (p / "heldout.jsonl").exists()):
        texts += read_jsonl_texts(corpus / lang / "heldout.jsonl", limit=200)
        size = 0
        with gzip.open(corpus / lang / "train.jsonl.gz", "rt", encoding="utf-8") as f:
            for line in f:
                texts.append(json.loads(line)["text"])
                size += len(texts[-1])
                if size >= 100_000:
                    break
    for path in sorted((corpus / "parallel").glob("*.jsonl")):
        texts += read_jsonl_texts(path, limit=100)
    assert len(texts) > 2000
    return texts


_SPECIAL = list(" \n\t\u00a0\u3000.,!?-(") + [
    "\u0301",
    "\u0308",
    "\u093f",
    "\u20dd",
    "a",
    "Z",
    "\u00b5",
    "\u0394",
    "\u044f",
    "\u05d0",
    "\u0627",
    "\u4e00",
    "\u3042",
    "\u30a2",
    "\u30fc",
    "\u0e01",
    "\u1000",
    "\uac00",
    "\u0f40",
    "0",
    "\u0663",
    "\u0967",
    "\u00bd",
    "\U0001f600",
    "\ufe0f",
    "\u200d",
    "\ue000",
    "\U000f0000",
    "\u0378",
    "\U000e0001",
    "\U0010ffff",
    "\ud800",
    "\udc00",
    " \u0301",
    "  ",
]
adversarial = st.lists(st.one_of(st.sampled_from(_SPECIAL), st.characters(codec=None)), max_size=40).map("".join)


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(adversarial)
def test_adversarial_groups(text):
    pretokens_both(text)


@settings(max_examples=HYPOTHESIS_EXAMPLES // 2, deadline=None)
@given(st.text())
def test_atoms_round_trip(text):
    atoms = sv.atoms_of_text(text)
    assert sv.text_of_atoms(atoms) == text
    assert len(atoms) >= 2 * len(text) - sum(1 for c in text if T.block_of[ord(c)] < 0) * 2
    dropped = sv.atoms_of_text(text, drop_unlisted=True)
    assert sv.text_of_atoms(dropped) == sv.remove_unlisted(text)


# -- the merge rule in both trainers --------------------------------------------------------------------------


def test_rule_table_is_merge_allowed():
    for l in range(4):
        for r in range(4):
            assert (sv.RULE_TABLE[l, r] >= 0) == sv.merge_allowed(l, r)
            assert sv.RULE_TABLE[l, r] in (-1, sv.KIND_WHOLE)


def _script_words(texts):
    """SCRIPT words of local atom ids with their counts, and their atoms' token bytes (each atom one byte
    string of its own: the first byte its kind, so bytes tie-breaking differs from id order)."""
    from collections import Counter

    words = Counter(tuple(sv.atoms_of_text(t)) for t in texts)
    token_bytes = [bytes([k, a & 0xFF, a >> 8]) for a, k in enumerate(sv.atom_kinds().tolist())]
    return [list(w) for w in words], list(words.values()), token_bytes


def _check_trainers_agree_and_respect_the_rule(texts, n_merges, rule_matters=True):
    from fastsw.alphabet import get_profile
    from fastsw.trainers.bpe import learn_merges
    from fastsw.trainers.bpe_fast import learn_merges_fast

    words, counts, token_bytes = _script_words(texts)
    rule = sv.merge_rule(sv.atom_kinds())
    for profile in ("paper", "hf"):
        ref_bytes, fast_bytes = list(token_bytes), list(token_bytes)
        ref = learn_merges(words, counts, ref_bytes, get_profile(profile), n_merges, merge_rule=rule)
        fast = learn_merges_fast(words, counts, fast_bytes, get_profile(profile), n_merges, merge_rule=rule)
        assert fast == ref and fast_bytes == ref_bytes
        assert all(_decodable(ref[0], len(token_bytes)))  # every new token is whole characters
        if rule_matters:  # without the rule the same words do make partial tokens (the rule is what prevents them)
            free = learn_merges(words, counts, list(token_bytes), get_profile(profile), n_merges)[0]
            assert any(seqs_ok is False for seqs_ok in _decodable(free, len(token_bytes)))
    return ref


def _decodable(merges, n_atoms):
    seqs = [[a] for a in range(n_atoms)]
    for left, right, _ in merges:
        seqs.append(seqs[left] + seqs[right])
        try:
            sv.text_of_atoms(seqs[-1])
            yield True
        except ValueError:
            yield False


def test_trainers_never_make_partial_characters_on_real_text():
    texts = []
    for lang in ("en", "ru", "zh", "hi"):
        texts += [
            w
            for t in read_jsonl_texts(shared_path(f"corpus/{lang}/heldout.jsonl"), limit=4)
            for w in sv.plain_pretokens(t)
        ]
    texts.append("\ue000\ue001 x\ue000")  # unlisted characters: fallback bytes never merge
    merges, _ = _check_trainers_agree_and_respect_the_rule(texts, 300)
    assert len(merges) == 300


@settings(max_examples=HYPOTHESIS_EXAMPLES // 4, deadline=None)
@given(st.lists(st.text(alphabet="ab ́é\ue000日", min_size=1, max_size=8), min_size=1, max_size=12), st.integers(0, 30))
def test_trainers_agree_under_the_rule(texts, n_merges):
    _check_trainers_agree_and_respect_the_rule(texts, n_merges, rule_matters=False)


# -- the pre-tokenizer: script-v3 and script-v3+boundary[...] ----------------------------------------------------

from fastsw.alphabet import RESERVED_SLOTS, atom_bytes, atom_code, atom_text  # noqa: E402
from fastsw.pretokenizers.pretokenize import make_pretokenizer  # noqa: E402

SCHEMES = ("script-v3", "script-v3+boundary[w]", "script-v3+boundary[w,p]", "script-v3+boundary[w,p,d]+caps")


def both_paths(p, text):
    """Compiled and reference pretokens agree, and the pieces decode back to the text."""
    pieces = p.pretokenize(text)
    assert pieces == p.pretokenize_reference(text)
    expected = sv.remove_unlisted(text) if p.drop_unlisted else text
    assert p.decode_text("".join(pieces)) == expected
    return pieces


def test_scheme_names_and_config():
    for name in SCHEMES:
        p = make_pretokenizer(name)
        assert isinstance(p, sv.ScriptPretokenizer) and p.name == name
        assert make_pretokenizer(p.to_config()) == p
        assert len(p.make_alphabet("paper")) == 243 + len(p.atoms)
    assert len(make_pretokenizer("script-v3").atoms) == 1710  # the 1,710 SCRIPT atoms
    assert len(make_pretokenizer("script-v3+boundary[w,p,d]+caps").atoms) == 1713  # + ¦ ↑ ⇑
    assert len(make_pretokenizer("script-v3").make_alphabet("hf")) == 256 + 1710
    for bad in ("script-v4", "script-v3+", "script-v3+boundary[x]", "script-v3+boundary[w]+foo"):
        with pytest.raises(ValueError, match="valid pre-tokenizers: .*script-v3") as e:
            make_pretokenizer(bad)
        assert repr(bad.strip()) in str(e.value) or "+foo" in str(e.value)
    with pytest.raises(ValueError, match="unknown SCRIPT pre-tokenizer settings: colour"):
        sv.ScriptPretokenizer.from_config({"mode": "script-v3", "colour": 1})
    with pytest.raises(TypeError, match="drop_unlisted"):
        sv.ScriptPretokenizer("script-v3", drop_unlisted=1)


def test_pieces_are_atoms_and_fallback_text():
    p = make_pretokenizer("script-v3")
    pieces = both_paths(p, "Hi \ue000")
    a = p.make_alphabet("paper")
    ids = [a.initial_ids(x) for x in pieces]
    # 'H', 'i': two atoms each (no byte of them); the space's two atoms; U+E000: its three UTF-8 bytes
    assert [len(x) for x in ids] == [4, 2, 3]
    assert all(i >= 243 for i in ids[0] + ids[1]) and all(i < 243 for i in ids[2])
    assert [p.show(x) for x in pieces] == ["H<Latin:LM 7>i<Latin:LM 34>", " <✭:ZC 32>", "<xEE x80 x80>"]
    # markers of an inner scheme stay marker atoms; text that holds ¦ keeps it as a character
    q = make_pretokenizer("script-v3+boundary[w,p,d]+caps")
    assert [q.show(x) for x in both_paths(q, "The ¦")] == [
        "↑¦t<Latin:LM 45>h<Latin:LM 33>e<Latin:LM 30>¦",
        " <✭:ZC 32>",
        "¦<✭:So#0 0>",
    ]


def test_bad_input_is_one_clear_error():
    for name in SCHEMES:
        p = make_pretokenizer(name)
        for method in (p.pretokenize, p.pretokenize_reference):
            with pytest.raises(ValueError, match="lone surrogate"):
                method("a\ud800b")
        with pytest.raises(TypeError, match="must be a str"):
            p.pretokenize(b"bytes")


def test_drop_unlisted_is_the_seeds_behaviour():
    p = sv.ScriptPretokenizer("script-v3", drop_unlisted=True)
    assert both_paths(p, "a\ue000b \u0378c") == [sv.spell("ab"), sv.spell(" c")]
    q = sv.ScriptPretokenizer("script-v3+boundary[w]", drop_unlisted=True)
    assert q.decode_text("".join(both_paths(q, "x\ue000y"))) == "xy"


def test_pretokenizer_paths_agree_on_shared_corpus():
    # every corpus language (held-out, train, parallel): compiled grouping + translate spelling against the
    # plain-Python rule, and the atoms decode back to the text
    texts = _corpus_texts()
    for name, sample in (("script-v3", texts[::6]), ("script-v3+boundary[w,p,d]+caps", texts[1::18])):
        p = make_pretokenizer(name)
        bad = [t for t in sample if p.pretokenize(t) != p.pretokenize_reference(t)]
        assert not bad, f"{name}: {len(bad)} documents differ, e.g. {bad[0][:200]!r}"
        assert all(p.decode_text("".join(p.pretokenize(t))) == t for t in sample)
    joined = "".join(texts)
    assert sv.text_of_atoms(sv.atoms_of_text(joined)) == joined


text_no_surrogates = st.lists(
    st.one_of(
        st.sampled_from([c for c in _SPECIAL if not 0xD800 <= ord(c[0]) <= 0xDFFF]), st.characters(codec="utf-8")
    ),
    max_size=30,
).map("".join)


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text_no_surrogates, st.sampled_from(SCHEMES), st.booleans())
def test_pretokenizer_round_trip_hypothesis(text, name, drop):
    both_paths(sv.ScriptPretokenizer(name, drop_unlisted=drop), text)


def _count_both(p, texts):
    """The compiled counter (a SpelledCounter: pieces counted before spelling) and CountTable's loop over the
    plain-Python pre-tokenizer, as Counts."""
    from fastsw.corpus.counting import CountTable, NativeCountTable

    ref_p = sv.ScriptPretokenizer(p.name, drop_unlisted=p.drop_unlisted)
    ref_p.pretokenize = ref_p.pretokenize_reference
    fast, ref = NativeCountTable(p, collect_runs=True), CountTable(ref_p, collect_runs=True)
    assert isinstance(fast.counter, sv.SpelledCounter)
    fast.add_batch(list(texts))
    for t in texts:
        ref.add(t)
    return fast.finish(), ref.finish()


def _same_table(a, b):
    assert (a.pretokens, a.counts, a.has_letter, a.run_multiset(), a.n_bytes, a.n_documents) == (
        b.pretokens,
        b.counts,
        b.has_letter,
        b.run_multiset(),
        b.n_bytes,
        b.n_documents,
    )


def test_compiled_counting_equals_reference_on_shared_corpus():
    from fastsw.corpus.counting import count_corpus, native_counting

    texts = _corpus_texts()
    for name, sample in (("script-v3", texts[::10]), ("script-v3+boundary[w,p,d]+caps", texts[1::20])):
        p = make_pretokenizer(name)
        assert native_counting(p), "the extension is not built"
        a, b = _count_both(p, sample)
        _same_table(a, b)
        threaded = count_corpus(sample, p, collect_runs=True, threads=2)  # per-thread tables, merged
        assert threaded.pretoken_multiset() == b.pretoken_multiset() and threaded.run_multiset() == b.run_multiset()


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(text_no_surrogates, max_size=4), st.sampled_from(SCHEMES), st.booleans())
def test_compiled_counting_hypothesis(texts, name, drop):
    _same_table(*_count_both(sv.ScriptPretokenizer(name, drop_unlisted=drop), texts))


def test_compiled_counting_merges_a_spelled_payload():
    # a worker process sends its table spelled (NativeCountTable.payload); merging unspells it first
    from fastsw.corpus.counting import NativeCountTable

    p = make_pretokenizer("script-v3")
    one, two = NativeCountTable(p, True), NativeCountTable(p, True)
    one.add_batch(["the cat 日本", "x\ue000y"])
    two.add_batch(["the dog 日本"])
    one.merge_payload(two.payload())
    a, b = one.finish(), _count_both(p, ["the cat 日本", "x\ue000y", "the dog 日本"])[1]
    assert a.pretoken_multiset() == b.pretoken_multiset() and a.run_multiset() == b.run_multiset()


# -- training, models, encode / decode ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_corpus():
    from fastsw.corpus.sample import sample_documents

    docs = list(sample_documents())
    english = [d[:20000] for d in docs if sum(c.isascii() for c in d) > 0.95 * len(d)][:4]
    # English enough for supermerges, a little of every language, and unlisted characters (byte fallback)
    return english + [d[:300] for d in docs[::8]] + ["x\ue000y \U000f0000 \u0378!"]


def _whole(tok):
    """Every token after the alphabet spells whole characters: no SCRIPT atom is left over after unspelling."""
    n = len(tok.alphabet)
    for tb in tok.vocab[n:]:
        text = sv.unspell(atom_text(tb))
        assert "\ufffd" not in text and not any(0xD800 + 8 <= ord(c) < 0xE000 for c in text), tb
    return True


# (marker schemes cut supermerge candidates at every elided space, so their superword models get few or none)
RUNS = (
    ("bpe", "script-v3", {}),
    ("boundless", "script-v3", {}),
    ("superbpe", "script-v3", {"supermerges": 100}),
    ("bpe", "script-v3+boundary[w,p,d]+caps", {}),
)


@pytest.fixture(scope="module")
def trained(small_corpus):
    import warnings
    import fastsw

    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SuperBPE may run out of supermerge pairs on this small corpus
        for algo, scheme, kw in RUNS:
            models = [
                fastsw.train(small_corpus, algo=algo, vocab_size=2500, pretokenizer=scheme, backend=b, **kw)
                for b in BACKENDS
            ]
            assert models[0].merges == models[1].merges, (algo, scheme)  # fast training == reference
            out[algo, scheme] = models[1]
    return out


def test_training_every_algo(trained, small_corpus):
    for (algo, scheme), tok in trained.items():
        assert tok.n_regular > 300 and _whole(tok)
        if algo != "bpe":
            assert tok.n_super > 0, (algo, scheme)
        assert tok.pretokenizer.name == scheme and len(tok.alphabet) == 243 + len(tok.pretokenizer.atoms)
        for doc in small_corpus:
            assert tok.decode(tok.encode(doc)) == doc
        # the first merge makes a character: a block atom with an index atom
        first = tok.merges[0]
        assert len(sv.unspell(atom_text(tok.vocab[first.left] + tok.vocab[first.right]))) == 1


def test_save_load_encode_identical(trained, small_corpus, tmp_path):
    import fastsw

    tok = trained["boundless", "script-v3"]
    path = tmp_path / "m.json"
    tok.save(path)
    back = fastsw.Tokenizer.load(path)
    assert back.merges == tok.merges and back.pretokenizer == tok.pretokenizer
    assert back.alphabet.to_config() == tok.alphabet.to_config()
    for doc in small_corpus:
        assert back.encode(doc) == tok.encode(doc)
    assert back.decode_bytes(back.encode("日本 \ue000")) == "日本 \ue000".encode()


@settings(max_examples=HYPOTHESIS_EXAMPLES // 2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=text_no_surrogates)
def test_encode_decode_exact_hypothesis(trained, text):
    for tok in trained.values():
        ids = tok.encode(text)
        assert tok.decode(ids) == text
        assert ids == tok.encode(text, backend="python")


def _encode_texts():
    """Held-out text of several languages, one long mixed document (more than 256 distinct initial ids and
    tokens: the chunked paths), unlisted characters (byte fallback) and empty text."""
    texts = []
    for lang in ("en", "zh", "ja", "ru", "ko", "ar"):
        texts += read_jsonl_texts(shared_path(f"corpus/{lang}/heldout.jsonl"))[:2]
    return [t[:3000] for t in texts] + ["".join(t[:400] for t in texts), "x\ue000y \U000f0000 日本", "", " "]


def test_fast_encoder_equals_reference(trained):
    """WideFastEncoder (the kernel reading three-byte atom codes through its wide byte table, with the model's
    shortcut) against the reference path, for every trained SCRIPT model: documents one by one, in one batch, and
    pieces as whole pretokens (the reachability path); the text made of the model's eligible `` word`` tokens is one
    long supermerge run."""
    from fastsw.encoding import wide_fast as wide_encode

    for key, tok in trained.items():
        words = [tok.decode([t]) for t in sorted(tok._eligible)]
        texts = _encode_texts() + ["".join(w for w in words if w[:1] == " " and w[1:].isalpha()) * 2]
        tok._cache.clear()
        enc = tok._fast()
        assert isinstance(enc, wide_encode.WideFastEncoder), key
        ref = [tok.encode(t, backend="python") for t in texts]
        assert [tok.encode(t, backend="numba") for t in texts] == ref, key
        assert tok.encode_batch(texts, backend="numba") == ref, key
        ids, offsets = enc.encode_docs(texts)  # one call over all texts (the batch path)
        assert [ids[offsets[k] : offsets[k + 1]].tolist() for k in range(len(texts))] == ref, key
        pieces = tok.pretokenizer.pretokenize(texts[0])  # spelled pieces (the reachability path)
        ids, offsets = enc.encode_pieces(pieces)
        assert [ids[offsets[k] : offsets[k + 1]].tolist() for k in range(len(pieces))] == [
            tok.encode_pretoken(p, shortcut=False) for p in pieces
        ], key
        assert [tok.encode(t, backend="numba", shortcut=False) for t in texts[:3]] == ref[:3], key


def test_wide_tables_read_characters_and_atom_codes(trained):
    # the kernel's wide tables: a three-byte atom code is one id (alphabet.initial_ids); a listed character (UTF-8 in
    # the kernel's input) is its token when its two atoms' pair merges, else its two atoms; an unlisted character is
    # its bytes' ids; a marker its atom's id
    from fastsw.encoding import encode_kernels as K
    from fastsw.encoding.wide_fast import wide_byte_ids

    tok = trained["bpe", "script-v3+boundary[w,p,d]+caps"]
    enc = tok._fast()
    table = wide_byte_ids(tok.alphabet)
    pieces = tok.pretokenizer.pretokenize("The cat, 日本 \ue000 ꙮ a")
    data, lengths = enc._pieces_bytes(pieces)
    assert b"\xf5" not in data.tobytes() and "日本".encode() in data.tobytes()  # characters as their UTF-8
    wide = {i for i in range(len(tok.alphabet)) if tok.vocab[i][:1] == b"\xf5"}

    def pairs_first(ids):  # left to right: an atom and the atom after it, merged when the pair has a merge
        out = []
        for x in ids:
            if out and out[-1] in wide and x in wide and (out[-1], x) in tok.regular_ranks:
                out[-1] = tok.regular_ranks[out[-1], x][1]
            else:
                out.append(x)
        return out

    out = np.empty(2 * data.shape[0], np.int32)
    got, start = [], 0
    for n in lengths.tolist():
        m = K._initial_ids(data, start, start + n, table, enc.chars, out, 0)
        got.append(out[:m].tolist())
        start += n
    assert got == [pairs_first(tok.alphabet.initial_ids(p)) for p in pieces]
    assert sum(map(len, got)) < sum(len(tok.alphabet.initial_ids(p)) for p in pieces)  # characters were merged
    # a character whose atoms do not merge (none in this model's merges) is its two atoms
    atoms = tok.alphabet.initial_ids(sv.spell("ꙮ"))
    assert len(atoms) == 2 and tuple(atoms) not in tok.regular_ranks
    assert any(g[k : k + 2] == atoms for g in got for k in range(len(g)))


def test_wide_encoder_never_answers_an_ascii_character_with_its_byte(trained):
    # the tokens' bytes reach the kernel with their characters as UTF-8, so the character "a" and the fallback byte
    # 0x61 have the same bytes there: a pretoken that is one ASCII character is its character token (or atoms),
    # never the byte token the whole-pretoken shortcut would find for those bytes
    for tok in trained.values():
        for text in ("a", "a b", "x", "1 2", "日 a"):
            assert tok.encode(text, backend="numba") == tok.encode(text, backend="python")
            assert all(i >= tok.alphabet.n_base for i in tok.encode(text, backend="numba"))


def test_atom_pairs_first_is_required_for_the_fast_encoder(trained):
    # a model where an index atom is also the left of another merge: the pairs of atoms may not be merged first, so
    # "auto" encodes on the reference path and the fast encoder refuses plainly
    import fastsw
    from fastsw.encoding.wide_fast import WideFastEncoder, atom_pairs_first

    tok = trained["bpe", "script-v3"]
    assert atom_pairs_first(tok.alphabet, tok.regular_ranks)
    first = tok.merges[0]  # block + index
    merges = [(m.left, m.right, m.count, m.super) for m in tok.merges[:50]] + [(first.right, ord("x"), 1, False)]
    odd = fastsw.Tokenizer(alphabet=tok.alphabet, merges=merges, pretokenizer=tok.pretokenizer)
    assert not atom_pairs_first(odd.alphabet, odd.regular_ranks)
    assert odd._resolve_backend("auto") == "python"
    with pytest.raises(ValueError, match="backend='python'"):
        WideFastEncoder(odd._encoder_tables())
    assert odd.decode(odd.encode("the cat 日本")) == "the cat 日本"


def _spelled_reference(p, texts, spelled=True):
    """The reference pieces' token bytes: (bytes, each piece's end in bytes from its text's start, pieces per text);
    with ``spelled`` False, the pieces' characters unspelled (their UTF-8, other atoms as their codes), and the ends
    of plain SCRIPT's pieces in code points (``text_bytes_batch``)."""
    data, ends, firsts = b"", [], [0]
    for t in texts:
        pos = 0
        for piece in p.pretokenize_reference(t):
            if not spelled:
                piece = sv.unspell(piece, broken=None)
            code = atom_bytes(piece)
            data += code
            pos += len(piece) if not spelled and p.inner is None and not p.drop_unlisted else len(code)
            ends.append(pos)
        firsts.append(len(ends))
    return data, ends, firsts


def _same_spelled(p, texts):
    for got, spelled in ((p.token_bytes_batch(texts), True), (p.text_bytes_batch(texts), False)):
        data, ends, firsts = _spelled_reference(p, texts, spelled)
        assert bytes(got[0]) == (data or b"\0") and got[1].tolist() == ends and got[2].tolist() == firsts
        assert not got[0].flags.writeable  # the byte path's read-only type: one kernel signature


def test_token_bytes_batch_equals_reference_on_shared_corpus():
    # the compiled spelling (one table of every code point's bytes) against the reference pieces' atom_bytes; the
    # unspelled input of the fast encoder against the same pieces' characters as UTF-8
    texts = _corpus_texts()
    for name, sample in (("script-v3", texts[::6]), ("script-v3+boundary[w,p,d]+caps", texts[1::18])):
        p = make_pretokenizer(name)
        _same_spelled(p, sample)  # one batch
        for t in sample[:20]:
            _same_spelled(p, [t])  # one text
    _same_spelled(make_pretokenizer("script-v3"), [])
    for batch in (make_pretokenizer("script-v3").token_bytes_batch, make_pretokenizer("script-v3").text_bytes_batch):
        with pytest.raises(ValueError, match="lone surrogate"):
            batch(["ok", "x\ud800"])
    if hasattr(sv._spell_bytes, "signatures"):  # compiled (not NUMBA_DISABLE_JIT): one signature
        assert len(sv._spell_bytes.signatures) == 1


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(text_no_surrogates, max_size=4), st.sampled_from(SCHEMES), st.booleans())
def test_token_bytes_batch_hypothesis(texts, name, drop):
    _same_spelled(sv.ScriptPretokenizer(name, drop_unlisted=drop), texts)


def test_spelled_bytes_table_is_spell_then_atom_bytes():
    # every listed block start, ASCII, a stride over all code points, and every atom slot
    spelled = sv._spelled_bytes()
    cps = sorted(set(range(128)) | set(range(0, 0x110000, 97)) | {ord(c[0]) for _, _, c in T.blocks})
    for cp in cps:
        if 0xD800 <= cp <= 0xDFFF:
            continue
        v = int(spelled[cp])
        assert v.to_bytes(8, "little")[: v >> 56] == atom_bytes(sv.spell(chr(cp))), hex(cp)
    for slot in range(0x800):
        v = int(spelled[0xD800 + slot])
        if slot in RESERVED_SLOTS:
            assert v >> 56 == 0
        else:
            assert v.to_bytes(8, "little")[: v >> 56] == atom_code(slot), slot


def test_exports_are_refused_plainly(trained, tmp_path):
    tok = trained["bpe", "script-v3"]
    for call in (
        lambda: tok.to_tiktoken(),
        lambda: tok.save_hf(tmp_path / "t.json"),
        lambda: tok.save_paper(tmp_path / "p.txt"),
    ):
        with pytest.raises(ValueError, match="script-v3"):
            call()
    assert not list(tmp_path.iterdir())


def test_cli_train_encode_decode_pretokenize_inspect(tmp_path, capsys):
    from conftest import run, write_jsonl
    from fastsw.corpus.sample import sample_documents

    docs = [d[:2000] for d in sample_documents()][::6] + ["ΟΔΟΣ \ue000 x"]
    data = write_jsonl(tmp_path / "in.jsonl", docs)
    model = tmp_path / "m.json"
    code, out, err = run(
        capsys,
        "train",
        data,
        "--algo",
        "bpe",
        "--vocab-size",
        "2100",
        "--pretokenizer",
        "script-v3+boundary[w,p,d]+caps",
        "-o",
        model,
    )
    assert code == 0, err
    assert "1956 alphabet" in err  # 243 bytes + ¦ ↑ ⇑ + 1,710 SCRIPT atoms
    code, ids, err = run(capsys, "encode", "-m", model, data)
    assert code == 0, err
    lines = tmp_path / "ids.txt"
    lines.write_text(ids)
    code, out, err = run(capsys, "decode", "-m", model, "--jsonl", lines)
    assert code == 0, err
    assert [json.loads(line)["text"] for line in out.splitlines()] == docs
    code, out, err = run(capsys, "pretokenize", "-m", model, data)
    # ΟΔΟΣ: caps code, markers, lowercased (final sigma) and each letter with its block and index
    assert json.loads(out.splitlines()[-1]) == [
        "⇑¦" + sv.readable("οδος") + "¦",
        " <✭:ZC 32>",
        "<xEE x80 x80>",
        " <✭:ZC 32>",
        "¦x<Latin:LM 49>¦",
    ]
    assert sv.readable("ς") == "ς<Greek:LM 67>"
    code, out, err = run(capsys, "inspect", model)
    assert code == 0 and "pretokenizer:   script-v3+boundary[w,p,d]+caps" in out, err
    assert '"<Latin:LM>" + "<' in out  # the first merges join a block and an index atom into a character
    code, out, err = run(capsys, "train", data, "--vocab-size", "1000", "--pretokenizer", "script-v3", "-o", model)
    assert code == 2 and "1953" in err and "Traceback" not in err


def test_parity_aware_bpe_refuses_script_plainly():
    import fastsw

    train = {"en": ["the cat sat"], "de": ["die Katze"]}
    for kw in ({"algo": "parity-bpe"}, {"algo": "boundless", "phase1": "parity-bpe"}):
        with pytest.raises(ValueError, match="parity-aware BPE cannot train with pretokenizer 'script-v3'"):
            fastsw.train(train, vocab_size=3000, dev=train, pretokenizer="script-v3", **kw)


def test_count_then_train_from_counts_is_the_same_model(tmp_path, capsys):
    import fastsw
    from conftest import run, write_jsonl

    docs = ["The cat sat on the mat. 日本語の文 \ue000"] * 3 + ["Другой текст, other text."] * 2
    data = write_jsonl(tmp_path / "in.jsonl", docs)
    code, out, err = run(capsys, "count", data, "--pretokenizer", "script-v3", "-o", tmp_path / "c.counts")
    assert code == 0, err
    a = fastsw.train(from_counts=tmp_path / "c.counts", algo="superbpe", vocab_size=2000, supermerges=5)
    b = fastsw.train(docs, algo="superbpe", vocab_size=2000, supermerges=5, pretokenizer="script-v3")
    assert a.merges == b.merges and a.pretokenizer == b.pretokenizer and len(a.merges) > 30


def test_encode_with_offsets(trained):
    # a rare character (ꙮ) stays as its block and index atoms, U+E000 as three fallback bytes: a token that starts
    # inside a character gets that character's offset
    text = "The cat 日本 \ue000 ꙮx ΟΔΟΣ"
    for tok in trained.values():
        if tok.pretokenizer.inner is not None:  # markers and caps codes rewrite the text: no offsets
            with pytest.raises(ValueError, match="rewrites it"):
                tok.encode_with_offsets(text)
            continue
        ids, offsets = tok.encode_with_offsets(text)
        assert ids == tok.encode(text)
        expected = [len(tok.decode(ids[:i], errors="ignore").replace("\ufffd", "")) for i in range(len(ids))]
        assert offsets == expected and offsets[-1] == len(text) - 1


def test_wide_encoder_has_room_for_two_atoms_per_byte(trained):
    # an ASCII character (one byte of UTF-8) whose atoms do not merge is written as its two atoms: a text of such
    # characters has twice as many ids as bytes, and the fast encoder's buffers must hold them all
    for tok in trained.values():
        unmerged = [c for c in "~^`|\\{}\x07" if len(tok.encode(c, backend="python")) == 2]
        assert unmerged, tok.pretokenizer.name
        for text in ("".join(unmerged) * 40, unmerged[0] * 300, "a" + unmerged[0] * 7):
            want = tok.encode(text, backend="python")
            assert len(want) > len(text.encode())
            assert tok.encode(text, backend="numba") == want
            assert tok.encode_batch([text, text[:5]], backend="numba") == [want, tok.encode(text[:5], backend="python")]
