"""Missed pretokens start from whole characters where that cannot change the ids (the kernels'
module note (7)): the character table's flags on hand-worked merge tables, the ids against the reference
(``apply_merges``, tiktoken's algorithm) on random merge and rank tables over multi-byte characters, and the
same ids with and without the table on real text of every script that has such characters."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fastsw.encoding import encode_kernels as K
from fastsw.encoding import encode_fast as fast_encode
from fastsw.alphabet import ByteAlphabet
from fastsw.trainers.bpe import apply_merges
from fastsw.io.interop import rank_table_encode
from fastsw.pretokenizers.pretokenize import Pretokenizer
from fastsw.io.tiktoken_vocab import two_way_splits

from conftest import HYPOTHESIS_EXAMPLES, read_jsonl_texts, shared_path

ALPHABET = ByteAlphabet("bytes256")
BASE = list(ALPHABET.tokens)  # the 256 bytes by id
ID = {t: i for i, t in enumerate(BASE)}


def encoder(token_bytes, regular_ranks, use_table=True):
    """A FastEncoder over ``token_bytes`` (the 256 bytes first) with no shortcut (every piece is merged)."""
    tables = fast_encode.EncoderTables(
        list(token_bytes), regular_ranks, {}, {}, frozenset(), Pretokenizer(), ALPHABET, len(token_bytes)
    )
    saved = fast_encode.USE_CHAR_TABLE
    fast_encode.USE_CHAR_TABLE = use_table
    try:
        return fast_encode.FastEncoder(tables)
    finally:
        fast_encode.USE_CHAR_TABLE = saved


def model(merges):
    """``(token bytes, ranks)`` of a merge list of byte strings, as Tokenizer numbers them."""
    vocab = list(BASE)
    ids = dict(ID)
    ranks = {}
    for left, right in merges:
        ids[left + right] = len(vocab)
        ranks[(ids[left], ids[right])] = (len(ranks), len(vocab))
        vocab.append(left + right)
    return vocab, ranks


def ids_of(enc, pieces):
    ids, offsets = enc.encode_pieces(pieces, shortcut=False)
    return [ids[a:b].tolist() for a, b in zip(offsets, offsets[1:])]


def unit(enc, key):
    """The token of a key of the encoder's character table and ``allows(before, after)``: whether the table
    lets it be taken between those neighbouring bytes (None: the pretoken's end), as the kernel decides."""
    block = enc.chars[key >> 8]
    record = block + K._RECORD * (key & 255) if block >= 0 else -1
    if record < 0 or enc.chars[record] < 0:
        return None, None

    unit_bytes = b" " + chr(key - K._CHAR_KEYS).encode() if key >= K._CHAR_KEYS else chr(key).encode()

    def allows(before, after):  # the unit in a pretoken of itself and these bytes around it
        data = bytes([before] if before is not None else []) + unit_bytes + bytes([after] if after is not None else [])
        text = np.frombuffer(data, np.uint8)
        out = np.zeros(16, np.int32)
        n = K._initial_ids(text, 0, len(text), enc.byte_ids, enc.chars, out, 0)
        start = 1 if before is not None else 0
        return n == len(text) - len(unit_bytes) + 1 and out[start] == enc.chars[record]

    return int(enc.chars[record]), allows


E_ACUTE = "é".encode()  # C3 A9


def test_a_merge_onto_the_lead_byte_keeps_the_bytes_after_ascii():
    # x + C3 (rank 0) comes before C3 + A9 (rank 1): after an ASCII byte the character's lead byte may be taken
    vocab, ranks = model([(b"x", b"\xc3"), (b"\xc3", b"\xa9"), (b"x\xc3", b"\xa9")])
    enc = encoder(vocab, ranks)
    e, xe = 257, 258
    token, allows = unit(enc, ord("é"))
    assert token == e
    assert not allows(ord("x"), None) and not allows(ord(" "), None)  # not after ASCII: x + C3 comes first
    assert allows(0xA9, None) and allows(None, ord("x")) and allows(None, 0xC3) and allows(0xA9, 0xE4)
    assert ids_of(enc, ["xé", "aé", "éé", "é"]) == [[xe], [ID[b"a"], e], [e, e], [e]]
    assert ids_of(enc, ["xé"]) == [apply_merges([ID[b"x"], ID[b"\xc3"], ID[b"\xa9"]], ranks)]


def test_a_merge_onto_the_last_byte_keeps_the_bytes_before_ascii():
    # A9 + y (rank 0) comes before C3 + A9 (rank 1): "éy" is C3 + "\xa9y", never é + y
    vocab, ranks = model([(b"\xa9", b"y"), (b"\xc3", b"\xa9")])
    enc = encoder(vocab, ranks)
    ay, e = 256, 257
    token, allows = unit(enc, ord("é"))
    assert token == e
    assert not allows(None, ord("y")) and not allows(None, ord("a"))  # not before ASCII: A9 + y comes first
    assert allows(None, 0xC3) and allows(ord("y"), None) and allows(0xA9, 0xE4)
    assert ids_of(enc, ["éy", "éé", "yé"]) == [[ID[b"\xc3"], ay], [e, e], [ID[b"y"], e]]


def test_the_neighbouring_byte_decides_not_only_its_kind():
    # A9 + C3 (rank 0) joins é's last byte to the next character's lead byte: é is not taken after é (whose last
    # byte is A9), but after ü (BC) it is
    vocab, ranks = model([(b"\xa9", b"\xc3"), (b"\xc3", b"\xa9"), (b"\xc3", b"\xbc")])
    enc = encoder(vocab, ranks)
    a9c3, e, u = 256, 257, 258
    token, allows = unit(enc, ord("é"))
    assert token == e and not allows(0xA9, None) and allows(0xBC, None) and not allows(None, 0xC3)
    assert ids_of(enc, ["éé", "üé", "éü"]) == [
        [ID[b"\xc3"], a9c3, ID[b"\xa9"]],
        [u, e],
        [ID[b"\xc3"], a9c3, ID[b"\xbc"]],
    ]


def test_a_merge_after_the_character_is_made_does_not_stop_it():
    # é + y comes after é is made (merge order): é is taken whole before y as anywhere
    vocab, ranks = model([(b"\xc3", b"\xa9"), (E_ACUTE, b"y")])
    enc = encoder(vocab, ranks)
    token, allows = unit(enc, ord("é"))
    assert token == 256
    assert all(allows(b, a) for b in (None, ord("y"), 0xA9) for a in (None, ord("y"), 0xC3))
    assert ids_of(enc, ["éy", "yéy"]) == [[257], [ID[b"y"], 257]]


def test_a_space_and_a_character_are_one_unit():
    # " " + C3 is the first merge, so é after a space is never taken alone; " é" is, at a pretoken's start
    vocab, ranks = model([(b" ", b"\xc3"), (b" \xc3", b"\xa9"), (b"\xc3", b"\xa9")])
    enc = encoder(vocab, ranks)
    space_e, e = 257, 258
    token, allows = unit(enc, K._CHAR_KEYS + ord("é"))
    assert token == space_e and allows(None, None) and allows(ord("a"), 0xC3)
    token, allows = unit(enc, ord("é"))
    assert token == e and not allows(ord(" "), None) and allows(0xA9, None)
    assert ids_of(enc, [" éé", "a é", " é"]) == [[space_e, e], [ID[b"a"], space_e], [space_e]]
    text = np.frombuffer(" éé".encode(), np.uint8)
    out = np.zeros(8, np.int32)
    # two units, not five bytes
    assert K._initial_ids(text, 0, len(text), enc.byte_ids, enc.chars, out, 0) == 2
    assert out[:2].tolist() == [space_e, e]


def test_rank_mode_a_pair_with_the_character_ranked_before_it():
    # tiktoken ranks: "éy" 256, "yz" 257, "é" 258 (a token may rank before its part). In "éyz", y + z (257) is
    # taken before C3 + A9 (258) makes é, so é + y (256) never meets y: [é, yz]; é taken first would give [éy, z]
    by_rank = BASE + ["éy".encode(), b"yz", E_ACUTE]
    rank_of = {t: r for r, t in enumerate(by_rank)}
    s = two_way_splits(by_rank, rank_of).astype(np.int64)
    enc = encoder(by_rank, fast_encode.PairArrays(s[:, 0], s[:, 1], s[:, 2], s[:, 2]))
    token, allows = unit(enc, ord("é"))
    assert token == 258 and not allows(None, ord("y")) and allows(None, 0xC3)  # é + y ranks before é is made
    assert ids_of(enc, ["éyz", "ééé"]) == [[258, 257], [258, 258, 258]]
    assert rank_table_encode("éyz".encode(), rank_of) == [258, 257]


def test_no_table_without_char_tokens_or_when_switched_off():
    vocab, ranks = model([(b"a", b"b")])
    assert encoder(vocab, ranks).chars.shape[0] == K._CHAR_BLOCKS  # no character token: an empty table
    vocab, ranks = model([(b"\xc3", b"\xa9")])
    assert encoder(vocab, ranks, use_table=False).chars is fast_encode.NO_CHARS


def test_a_character_in_a_block_without_units_is_its_bytes():
    # 中 (U+4E2D) is a unit; 文 (U+6587) sits in a block of 256 code points with none, so the kernel writes its three
    # bytes without decoding it (the English model on Thai): the ids of the byte-by-byte path and of apply_merges
    zh, wen = "中".encode(), "文".encode()
    vocab, ranks = model([(zh[:1], zh[1:2]), (zh[:2], zh[2:]), (wen[1:2], wen[2:])])
    on = encoder(vocab, ranks)
    off = encoder(vocab, ranks, use_table=False)
    assert unit(on, ord("中"))[0] is not None and on.chars[ord("文") >> 8] < 0
    pieces = ["中文中", "文", "x文中", " 文文", "文中文\u0e01"]
    expect = [apply_merges([ID[bytes([b])] for b in p.encode()], ranks) for p in pieces]
    assert ids_of(on, pieces) == ids_of(off, pieces) == expect


CHARS = ["a", " ", "é", "ü", "中", "文", "𝄞"]  # 1, 2, 3 and 4 bytes; é and ü share their lead byte


def random_strings(data, n, max_chars):
    return [data.draw(st.text(st.sampled_from(CHARS), min_size=1, max_size=max_chars)).encode() for _ in range(n)]


def random_vocabulary(data):
    """Byte strings that cut characters anywhere: substrings of random text over CHARS."""
    words = random_strings(data, 4, 4)
    extra = []
    for _ in range(data.draw(st.integers(0, 24))):
        w = data.draw(st.sampled_from(words))
        i = data.draw(st.integers(0, len(w) - 1))
        j = data.draw(st.integers(i + 1, min(len(w), i + 6)))
        if j - i >= 2 and w[i:j] not in extra:
            extra.append(w[i:j])
    return extra


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None)
@given(data=st.data())
def test_merge_rules_equal_apply_merges_on_random_tables(data):
    # merges in a random order of random substrings (each needs its parts to exist first, as in training)
    merges, have = [], {bytes([b]) for b in range(256)}
    for t in random_vocabulary(data):
        splits = [k for k in range(1, len(t)) if t[:k] in have and t[k:] in have]
        if splits:
            k = data.draw(st.sampled_from(splits))
            merges.append((t[:k], t[k:]))
            have.add(t)
    vocab, ranks = model(merges)
    enc = encoder(vocab, ranks)
    pieces = random_strings(data, 6, 12)
    got = ids_of(enc, [p.decode() for p in pieces])
    assert got == [apply_merges([ID[p[i : i + 1]] for i in range(len(p))], ranks) for p in pieces]


@settings(max_examples=HYPOTHESIS_EXAMPLES, deadline=None)
@given(data=st.data())
def test_rank_tables_equal_tiktoken_on_random_tables(data):
    # rank mode: every two-way split of a token is a pair of its rank, and a part may rank after the token
    extra = random_vocabulary(data)
    order = data.draw(st.permutations(range(len(extra))))
    by_rank = BASE + [extra[k] for k in order]
    rank_of = {t: r for r, t in enumerate(by_rank)}
    s = two_way_splits(by_rank, rank_of).astype(np.int64)
    enc = encoder(by_rank, fast_encode.PairArrays(s[:, 0], s[:, 1], s[:, 2], s[:, 2]))
    pieces = random_strings(data, 6, 12)
    assert ids_of(enc, [p.decode() for p in pieces]) == [rank_table_encode(p, rank_of) for p in pieces]


@pytest.mark.parametrize("lang", ["ru", "ar", "ko", "zh", "ja", "th", "hi", "my"])
def test_same_ids_with_and_without_the_table_on_real_text(multilingual_boundless, lang):
    tables = multilingual_boundless._encoder_tables()
    on, off = (fast_encode.FastEncoder(tables) for _ in range(2))
    off.chars = fast_encode.NO_CHARS  # before its first call gathers the tables
    texts = read_jsonl_texts(shared_path(f"corpus/{lang}/heldout.jsonl"))[:6]
    assert on.chars.shape[0] > K._CHAR_BLOCKS  # the model has characters the table takes
    for text in texts:
        assert on.encode(text) == off.encode(text) == multilingual_boundless.encode_ordinary(text, backend="python")
