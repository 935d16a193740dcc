"""The `hf` profile against HF tokenizers' BpeTrainer, seed 001's character-level
worked example, and small hand-worked examples of both counting rules."""

import json

import pytest

import fastsw
from fastsw.alphabet import BYTE_TO_UNICODE, ByteAlphabet, get_profile, unrender
from fastsw.trainers.bpe import apply_merges, learn_merges, word_pairs

from conftest import read_jsonl_texts, shared_path

LANGS = ["en", "de", "ru", "ar", "hi", "ja", "zh", "th", "ko", "my", "fi", "fr"]


def hf_merges(docs, vocab_size):
    """Train HF's BpeTrainer with the GPT-4o split and a byte-level alphabet."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(fastsw.GPT4O_PATTERN), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    hf.train_from_iterator(docs, trainer)
    merges = json.loads(hf.to_str())["model"]["merges"]
    pairs = [m if isinstance(m, list) else m.split(" ") for m in merges]
    return [(unrender(a), unrender(b)) for a, b in pairs]


@pytest.fixture(scope="module")
def multilingual_heldout():
    docs = []
    for lang in LANGS:
        docs += read_jsonl_texts(shared_path(f"corpus/{lang}/heldout.jsonl"), limit=60)
    return docs


def test_hf_profile_equals_hf_bpetrainer(multilingual_heldout):
    vocab_size = 1500
    expected = hf_merges(multilingual_heldout, vocab_size)
    tok = fastsw.train(multilingual_heldout, algo="bpe", vocab_size=vocab_size, profile="hf", pretokenizer="simple")
    mine = [(tok.vocab[m.left], tok.vocab[m.right]) for m in tok.merges]
    assert len(mine) == vocab_size - 256
    assert mine == expected


def test_hf_alphabet_order():
    # ids follow the code-point order of GPT-2's byte map: '!' (0x21) is id 0 and the
    # space byte, rendered 'Ġ' (U+0120), comes after all printable Latin-1 bytes.
    alpha = ByteAlphabet("bytes256")
    assert alpha.tokens[0] == b"!"
    assert alpha.id_of_byte(0x20) == sorted(BYTE_TO_UNICODE.values()).index("Ġ")
    assert alpha.id_of_byte(0x20) > alpha.id_of_byte(ord("z"))
    paper = ByteAlphabet("bytes243")
    assert len(paper) == 243 and paper.id_of_byte(0xBF) == 191 and paper.id_of_byte(0xC2) == 192
    assert paper.id_of_byte(0xC0) == -1 and paper.id_of_byte(0xF5) == -1


def test_seed001_character_level_worked_example():
    # Sennrich et al.'s four words without the end-of-word symbol: low x5, lower x2,
    # newest x6, widest x3. Alphabet d e i l n o r s t w -> ids 0..9. e+s and s+t both
    # occur 9 times; (1, 7) < (7, 8) so e+s wins, then es+t (9), then l+o and o+w tie
    # at 7 and (3, 5) < (5, 9) picks l+o, then lo+w.
    docs = ["low"] * 5 + ["lower"] * 2 + ["newest"] * 6 + ["widest"] * 3
    tok = fastsw.train(docs, algo="bpe", vocab_size=14, profile="hf", alphabet="chars")
    assert [bytes(t) for t in tok.vocab[:10]] == [c.encode() for c in "deilnorstw"]
    assert [(m.id, m.left, m.right) for m in tok.merges] == [(10, 1, 7), (11, 10, 8), (12, 3, 5), (13, 12, 9)]
    assert [tok.vocab[m.id] for m in tok.merges] == [b"es", b"est", b"lo", b"low"]
    assert [m.count for m in tok.merges] == [9, 9, 7, 7]
    assert tok.encode("lowest") == [13, 11]
    assert tok.decode([13, 11]) == "lowest"
    with pytest.raises(ValueError, match="byte_fallback"):
        tok.encode("lowest!")


def test_character_level_byte_fallback():
    docs = ["low"] * 5 + ["lower"] * 2 + ["newest"] * 6 + ["widest"] * 3
    tok = fastsw.train(docs, algo="bpe", vocab_size=10 + 256 + 4, profile="hf", alphabet="chars", byte_fallback=True)
    assert len(tok.alphabet) == 266
    ids = tok.encode("lowest é")
    assert ids[:2] == [10 + 256 + 3, 10 + 256 + 1]  # low | est, merges numbered after the bytes
    assert tok.decode(ids) == "lowest é"
    # ' ' and 'é' are outside the alphabet: their UTF-8 bytes become byte tokens
    assert ids[2:] == [10 + 0x20, 10 + 0xC3, 10 + 0xA9]


def test_counting_rules_by_hand():
    paper, hf = get_profile("paper"), get_profile("hf")
    # aaaa: a+a at positions 0, 1, 2; non-overlapping counts 2, overlapping counts 3
    assert word_pairs([0, 0, 0, 0], paper.overlapping) == {(0, 0): 2}
    assert word_pairs([0, 0, 0, 0], hf.overlapping) == {(0, 0): 3}
    assert word_pairs([0, 0, 0], paper.overlapping) == {(0, 0): 1}
    # replacement is left to right and non-overlapping in both: aaa -> (aa) a
    ranks = {(0, 0): (0, 9)}
    assert apply_merges([0, 0, 0], ranks) == [9, 0]
    # in `paper` a merge's count is the number of replacements it makes
    token_bytes = [b"a", b"b"]
    merges, words = learn_merges([[0, 0, 0, 0, 0], [0, 1]], [3, 2], token_bytes, paper, 1)
    assert merges == [(0, 0, 6)] and words[0] == [2, 2, 0]


def test_paper_ties_compare_left_bytes_then_right_bytes():
    # pairs b+a, a+c and a+b all occur once: the smaller left byte string wins first,
    # then the smaller right one: a+b, a+c, b+a.
    paper = get_profile("paper")
    alpha = ByteAlphabet("bytes243")
    words = [alpha.initial_ids(w) for w in ["ba", "ac", "ab"]]
    token_bytes = list(alpha.tokens)
    merges, _ = learn_merges(words, [1, 1, 1], token_bytes, paper, 3)
    assert [token_bytes[l] + b"+" + token_bytes[r] for l, r, _ in merges] == [b"a+b", b"a+c", b"b+a"]
    # A proper prefix sorts first, and left strings are compared before right ones (not
    # the concatenation): after a+b, the pairs ab+c and a+z both occur twice; left 'a' is a
    # proper prefix of 'ab', so a+z wins although "abc" < "az" as concatenations.
    words = [alpha.initial_ids(w) for w in ["ab", "abc", "az"]]
    token_bytes = list(alpha.tokens)
    merges, _ = learn_merges(words, [10, 2, 2], token_bytes, paper, 3)
    assert [token_bytes[l] + b"+" + token_bytes[r] for l, r, _ in merges] == [b"a+b", b"a+z", b"ab+c"]
