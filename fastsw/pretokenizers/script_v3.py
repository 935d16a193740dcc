"""SCRIPT v3: characters as (block, index) pairs of atomic tokens (seed 002 Appendix B, SPEC section 9).

This module owns the SCRIPT v3 table and everything that follows from it alone: the blocks and indices of every
code point, the atomic encoding of a character and its inverse, byte fallback, ``drop_unlisted``, plain SCRIPT
pre-tokenization (B.2's space attachment on top of the shared groups), the ``script-v3`` pre-tokenizers and the rule
that a merge never makes a partial character. The general mechanism that carries atomic tokens beyond bytes through
counting, training, model files and encoding lives in :mod:`fastsw.alphabet` and its users; the groups and the
boundary-marker schemes in :mod:`fastsw.pretokenizers.boundary`; the trainers apply the merge rule they are given
(:class:`fastsw.trainers.bpe.PairMerger`, the Numba merge loop).

Classes (SPEC section 9, "Groups"). Every code point listed in ``data/unicode/Scripts-16.0.0.txt`` (shipped
with the package; the version seed 002's authors used) gets a class from its script and its general category
as written in that file's comment column (``L&`` is a letter): the *supercategory* is ``LM`` (letters, marks),
``N`` (numbers), ``ZC`` (separators, ``Cc``), ``So`` (other symbols) or ``PSF`` (punctuation, the other symbols,
``Cf``). Letters and marks of the 28 high-resource scripts (:data:`HIGH_RESOURCE_SCRIPTS`: the 20
space-using scripts, Han, Hiragana, Katakana, Thai, Myanmar, Khmer, Lao and Common) are ``(script, "LM")``;
their other characters drop the script, ``("✭", supercategory)``; characters of every other script drop the
supercategory, ``(script, "✭")``. Code points that the file does not list (unassigned, private use,
surrogates, noncharacters) are ``("Unknown", "✭")``: *unlisted*. (:mod:`fastsw.pretokenizers.boundary`'s class table folds
Hiragana letters into Han's class, since they group together; the blocks keep them apart, as B.1 counts them.)

Blocks. The classes are numbered in file order of their first character, and each class's characters, in
file order, are cut into blocks of :data:`BLOCK_SIZE` = 1,448 (the size of the ``(Latin, LM)`` class, so Latin
letters are one block): Han letters fill 69 blocks, Hangul 9, most classes one. A listed character is the pair
(block token, index token) of its block and its position there: 262 block tokens and 1,448 shared index
tokens, the 1,710 SCRIPT tokens of Unicode 16. An unlisted character is, by default, its UTF-8 bytes as
byte-fallback atomic tokens (the 115 byte values UTF-8 uses outside ASCII; ASCII is all listed), so
encoding is lossless on every ``str`` that has UTF-8; ``drop_unlisted=True`` deletes it instead, as the
seed's authors do. Local atom ids: blocks ``0..261``, indices ``262..1709``, fallback bytes ``1710..1824``
(:func:`atoms_of_text`, :func:`text_of_atoms`).

No partial characters. A block token followed by its index token is a character; a token is *whole* when it
is one or more whole characters (every merged token, and a marker or caps code of the boundary schemes). A
merge ``left + right`` is allowed iff both are whole, or ``left`` is a block token and ``right`` an index
token (:func:`merge_allowed`, the kind of every atomic token in :func:`atom_kinds`; a merged token's kind is
:data:`KIND_WHOLE`). Fallback bytes are never whole, so an unlisted character stays as its bytes and is never
merged with anything: a merge cannot make half of one either.

Groups (B.2). The grouping rule is :func:`fastsw.pretokenizers.boundary.groups` (``markers=False``), shared with the marker
schemes: adjacent characters of one class group, Hiragana letters with Han letters, Inherited characters join the
group before them. Plain SCRIPT pre-tokenization then attaches a group that is exactly one space (U+0020) to the
group after it when that group is a space-using script's ``LM`` or ``(✭, PSF)`` (so ``" ́"``, a space and a
combining mark, stays one pretoken): :func:`plain_pretokens_reference` is the plain-Python rule,
:func:`plain_pretokens` the compiled twin (one Numba kernel over the code points), identical on every ``str``.

Pre-tokenizer. :class:`ScriptPretokenizer` (``"script-v3"``, ``"script-v3+boundary[w,p,d]+caps"``, ...) follows
the protocol of :mod:`fastsw.alphabet`'s atoms: its pieces hold each listed character as two atom characters
(lone surrogates, slots :data:`SLOTS`), unlisted characters as themselves (the alphabet's base bytes are their
fallback), markers of an inner scheme as that scheme's atoms; :class:`ScriptAlphabet` carries the
no-partial-character rule to both trainers (``merge_rule``).

Design notes: see docs/internals.md, section "SCRIPT v3".
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
from numba import njit

from fastsw.alphabet import check_utf8, has_utf8
from fastsw._compiling import stamp_module
from fastsw.encoding.c_entry import _readonly
from fastsw.encoding.encode_kernels import _encode_docs, _pair_bit
from fastsw.pretokenizers._unicode import compile_pattern

# the 20 space-using and the 28 high-resource scripts (seed 002 B.1 footnote), as the class rule's owner lists them
from fastsw.pretokenizers.boundary import HIGH_RESOURCE_SCRIPTS, SPACE_USING_SCRIPTS, SchemeSettings, class_table

__all__ = [
    "SCRIPTS_FILE",
    "SPACE_USING_SCRIPTS",
    "HIGH_RESOURCE_SCRIPTS",
    "DROPPED",
    "BLOCK_SIZE",
    "SLOTS",
    "KIND_WHOLE",
    "KIND_BLOCK",
    "KIND_INDEX",
    "KIND_BYTE",
    "FALLBACK_BYTES",
    "RULE_TABLE",
    "supercategory",
    "class_of_entry",
    "ScriptTable",
    "table",
    "atoms_of_text",
    "text_of_atoms",
    "bytes_of_atoms",
    "atom_kinds",
    "atom_name",
    "merge_allowed",
    "merge_allowed_kernel",
    "merge_rule",
    "remove_unlisted",
    "readable",
    "plain_pretokens",
    "plain_pretokens_reference",
    "script_atoms",
    "spell",
    "spell_reference",
    "unspell",
    "ScriptAlphabet",
    "ScriptPretokenizer",
]

SCRIPTS_FILE = Path(__file__).resolve().parents[1] / "data" / "unicode" / "Scripts-16.0.0.txt"

#: The name of a dropped part of a class (script or supercategory).
DROPPED = "✭"
UNLISTED_CLASS = ("Unknown", DROPPED)
#: Indices per block: the size of the (Latin, LM) class, so Latin letters stay one block (seed 002: "at most
#: 1,448 indices per block"; a test checks both).
BLOCK_SIZE = 1448

# Atom kinds for the no-partial-character rule (uint8 in the kernel form).
KIND_WHOLE, KIND_BLOCK, KIND_INDEX, KIND_BYTE = 0, 1, 2, 3

#: The byte values of byte-fallback atoms: every byte UTF-8 uses outside ASCII (0x80-0xBF, 0xC2-0xF4).
FALLBACK_BYTES = tuple(range(0x80, 0xC0)) + tuple(range(0xC2, 0xF5))

_N_CODE_POINTS = 0x110000


def supercategory(category: str) -> str:
    """SCRIPT v3's supercategory of a general category as the Scripts file writes it (the rule of
    :mod:`fastsw.pretokenizers.boundary`'s class table).

    >>> [supercategory(c) for c in ("L&", "Mn", "Nd", "Zs", "Cc", "So", "Sm", "Po", "Cf")]
    ['LM', 'LM', 'N', 'ZC', 'ZC', 'So', 'PSF', 'PSF', 'PSF']
    """
    from fastsw.pretokenizers.boundary import _supercategory

    return _supercategory(category)


def class_of_entry(script: str, category: str) -> Tuple[str, str]:
    """The SCRIPT v3 class ``(script, supercategory)`` of a listed character, ``"✭"`` for a dropped part: the class
    rule of :mod:`fastsw.pretokenizers.boundary`, except that Hiragana letters keep their own class (the groups join them to Han
    letters; the blocks keep them apart, B.1).

    >>> class_of_entry("Latin", "Ll"), class_of_entry("Devanagari", "Nd"), class_of_entry("Tibetan", "Po")
    (('Latin', 'LM'), ('✭', 'N'), ('Tibetan', '✭'))
    >>> class_of_entry("Hiragana", "Lo")
    ('Hiragana', 'LM')
    """
    from fastsw.pretokenizers.boundary import _class_of

    cls = _class_of(script, category)
    return (script, "LM") if script == "Hiragana" and cls[1] == "LM" else cls


def _parse_scripts(path: Path) -> List[Tuple[int, int, str, str]]:
    """``(first, last, script, category)`` of every data line of a Scripts file, in file order."""
    entries = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            data, _, comment = line.partition("#")
            if not data.strip():
                continue
            try:
                cps, script = (part.strip() for part in data.split(";"))
                first, _, last = cps.partition("..")
                category = comment.split()[0]
                entries.append((int(first, 16), int(last or first, 16), script, category))
            except (ValueError, IndexError) as e:
                raise ValueError(f"{path}:{lineno}: not a Scripts.txt line ({line.strip()!r}): {e}") from e
    return entries


class ScriptTable:
    """The SCRIPT v3 table, derived from a Scripts file (use :func:`table` for the shipped one).

    Attributes:
        classes: ``(script, supercategory)`` per class id, in file order; the last is ``("Unknown", "✭")``.
        class_of: ``int16[0x110000]``, the class id of every code point.
        block_of, index_of: ``int16[0x110000]``, a code point's block and index (-1: unlisted).
        blocks: ``(class id, sub-block number, characters)`` per block id.
        n_blocks, n_index, n_atoms: 262, 1448, 1710 for Unicode 16.
    """

    def __init__(self, path=SCRIPTS_FILE, block_size: int = BLOCK_SIZE):
        entries = _parse_scripts(Path(path))
        class_ids: Dict[Tuple[str, str], int] = {}
        members: List[List[np.ndarray]] = []
        self.class_of = np.full(_N_CODE_POINTS, -1, dtype=np.int16)
        for first, last, script, category in entries:
            cls = class_of_entry(script, category)
            cid = class_ids.setdefault(cls, len(class_ids))
            if cid == len(members):
                members.append([])
            cps = np.arange(first, last + 1, dtype=np.int64)
            if (self.class_of[cps] != -1).any():
                raise ValueError(f"{path}: code points {first:04X}..{last:04X} are listed twice")
            self.class_of[cps] = cid
            members[cid].append(cps)
        self.classes = tuple(class_ids) + (UNLISTED_CLASS,)
        unlisted = len(self.classes) - 1
        self.class_of[self.class_of == -1] = unlisted

        self.block_of = np.full(_N_CODE_POINTS, -1, dtype=np.int16)
        self.index_of = np.full(_N_CODE_POINTS, -1, dtype=np.int16)
        self.blocks: List[Tuple[int, int, str]] = []
        for cid, parts in enumerate(members):
            cps = np.concatenate(parts)  # file order
            for sub, start in enumerate(range(0, len(cps), block_size)):
                chunk = cps[start : start + block_size]
                self.block_of[chunk] = len(self.blocks)
                self.index_of[chunk] = np.arange(len(chunk), dtype=np.int16)
                self.blocks.append((cid, sub, "".join(map(chr, chunk.tolist()))))
        self.n_blocks = len(self.blocks)
        self.n_index = max(len(chars) for _, _, chars in self.blocks)
        self.n_atoms = self.n_blocks + self.n_index
        self.n_fallback = len(FALLBACK_BYTES)
        self._sub_blocks = [sum(1 for c, _, _ in self.blocks if c == cid) for cid in range(len(self.classes))]
        self._fallback_atom = {b: self.n_atoms + i for i, b in enumerate(FALLBACK_BYTES)}

    def __len__(self) -> int:
        """Atomic tokens including byte fallback (1,825 for Unicode 16)."""
        return self.n_atoms + self.n_fallback

    def block_name(self, block: int) -> str:
        """``"Latin:LM"``, ``"✭:PSF"``, ``"Tibetan:✭"``; ``"Han:LM#3"`` for a class cut into several blocks."""
        cid, sub, _ = self.blocks[block]
        script, sup = self.classes[cid]
        return f"{script}:{sup}" + (f"#{sub}" if self._sub_blocks[cid] > 1 else "")

    def class_name(self, cid: int) -> str:
        return "{}:{}".format(*self.classes[cid])


@functools.lru_cache(maxsize=None)
def table() -> ScriptTable:
    """The SCRIPT v3 table of the shipped ``Scripts-16.0.0.txt`` (built once per process)."""
    return ScriptTable()


@functools.lru_cache(maxsize=None)
def _char_atoms() -> Dict[str, Tuple[int, ...]]:
    """``{character: (block atom, index atom)}`` for every listed character."""
    t = table()
    out: Dict[str, Tuple[int, ...]] = {}
    for block, (_, _, chars) in enumerate(t.blocks):
        base = t.n_blocks
        for i, c in enumerate(chars):
            out[c] = (block, base + i)
    return out


def _check_drop(drop_unlisted) -> bool:
    if not isinstance(drop_unlisted, bool):
        raise TypeError(f"drop_unlisted must be True or False, not {drop_unlisted!r}")
    return drop_unlisted


def atoms_of_text(text: str, *, drop_unlisted: bool = False) -> List[int]:
    """The SCRIPT atom ids (local: blocks, then indices, then fallback bytes) of ``text``.

    A listed character is two atoms, (block, index); an unlisted one is its UTF-8 bytes as fallback atoms, or
    nothing with ``drop_unlisted=True``. A lone surrogate has no UTF-8: ``ValueError`` unless it is dropped.

    >>> t = table(); a = atoms_of_text("a")
    >>> t.block_name(a[0]), a[1] - t.n_blocks
    ('Latin:LM', 26)
    >>> len(atoms_of_text("\\ue000")), atoms_of_text("\\ue000", drop_unlisted=True)
    (3, [])
    """
    drop = _check_drop(drop_unlisted)
    atoms = _char_atoms()
    out: List[int] = []
    for c in text:
        pair = atoms.get(c)
        if pair is not None:
            out.extend(pair)
        elif not drop:
            out.extend(_fallback_atoms(c))
    return out


def _fallback_atoms(c: str) -> List[int]:
    fb = table()._fallback_atom
    try:
        return [fb[b] for b in c.encode("utf-8")]
    except UnicodeEncodeError:
        raise ValueError(
            f"U+{ord(c):04X} is a lone surrogate, which has no UTF-8 bytes for byte fallback; "
            "fix the text (join surrogate pairs) or pass drop_unlisted=True"
        ) from None


def bytes_of_atoms(atoms: Sequence[int]) -> bytes:
    """The UTF-8 bytes of a sequence of local atom ids: each (block, index) pair is its character, each fallback
    atom its byte. ``ValueError`` for a block atom without its index, an index atom without its block, or an
    index past the end of its block.

    >>> bytes_of_atoms(atoms_of_text("naïve \\ue000"))
    b'na\\xc3\\xafve \\xee\\x80\\x80'
    """
    t = table()
    out = bytearray()
    i, n = 0, len(atoms)
    while i < n:
        a = atoms[i]
        if 0 <= a < t.n_blocks:
            chars = t.blocks[a][2]
            j = atoms[i + 1] - t.n_blocks if i + 1 < n else -1
            if not 0 <= j < len(chars):
                raise ValueError(
                    f"SCRIPT atom {i} is block {t.block_name(a)} without one of its {len(chars)} index atoms after it"
                )
            out += chars[j].encode("utf-8")
            i += 2
        elif t.n_blocks <= a < t.n_atoms:
            raise ValueError(f"SCRIPT atom {i} is an index atom ({a - t.n_blocks}) without a block atom before it")
        elif t.n_atoms <= a < len(t):
            out.append(FALLBACK_BYTES[a - t.n_atoms])
            i += 1
        else:
            raise ValueError(f"{a!r} is not a SCRIPT atom id (0..{len(t) - 1})")
    return bytes(out)


def text_of_atoms(atoms: Sequence[int], errors: str = "strict") -> str:
    """Inverse of :func:`atoms_of_text` (``errors`` as in ``bytes.decode``, for broken fallback bytes).

    >>> text_of_atoms(atoms_of_text("Δx = 1 ✓"))
    'Δx = 1 ✓'
    """
    return bytes_of_atoms(atoms).decode("utf-8", errors)


def atom_kinds() -> np.ndarray:
    """``uint8[1825]``: the kind of every local atom (``KIND_BLOCK``, ``KIND_INDEX``, ``KIND_BYTE``), the array
    form of the no-partial-character rule for kernels (a merged token is ``KIND_WHOLE``)."""
    t = table()
    kinds = np.empty(len(t), dtype=np.uint8)
    kinds[: t.n_blocks] = KIND_BLOCK
    kinds[t.n_blocks : t.n_atoms] = KIND_INDEX
    kinds[t.n_atoms :] = KIND_BYTE
    return kinds


def merge_allowed(left_kind: int, right_kind: int) -> bool:
    """Whether a merge of tokens of these kinds keeps every token whole characters: both whole, or a block
    atom then an index atom (which makes one character).

    >>> merge_allowed(KIND_BLOCK, KIND_INDEX), merge_allowed(KIND_INDEX, KIND_BLOCK), merge_allowed(0, 0)
    (True, False, True)
    """
    return (left_kind == KIND_WHOLE and right_kind == KIND_WHOLE) or (
        left_kind == KIND_BLOCK and right_kind == KIND_INDEX
    )


@njit(cache=True, nogil=True, inline="always")
def merge_allowed_kernel(kinds, left, right):
    """:func:`merge_allowed` for Numba kernels: ``kinds`` is a ``uint8`` array indexed by token id (0 for every
    merged token), ``left``/``right`` token ids."""
    kl = kinds[left]
    kr = kinds[right]
    return (kl == 0 and kr == 0) or (kl == 1 and kr == 2)


#: The no-partial-character rule as a merge table for the trainers (:class:`fastsw.trainers.bpe.PairMerger`, the Numba
#: merge loop): ``RULE_TABLE[left kind][right kind]`` is the merged token's kind, -1 where the merge is forbidden.
RULE_TABLE = np.full((4, 4), -1, dtype=np.int8)
RULE_TABLE[KIND_WHOLE, KIND_WHOLE] = KIND_WHOLE
RULE_TABLE[KIND_BLOCK, KIND_INDEX] = KIND_WHOLE


def merge_rule(kinds: Sequence[int]):
    """The ``merge_rule`` argument of the trainers (``fastsw.trainers.bpe.learn_merges``, the fast path) for an alphabet
    whose token ``i`` has kind ``kinds[i]``: ``(uint8 kinds, RULE_TABLE)``."""
    return np.asarray(kinds, dtype=np.uint8), RULE_TABLE


def atom_name(atom: int) -> str:
    """A readable name of one local atom: ``<Latin:LM>`` (block), ``<26>`` (index), ``<xEE>`` (fallback byte).

    >>> [atom_name(a) for a in atoms_of_text("a\\ue000")]
    ['<Latin:LM>', '<26>', '<xEE>', '<x80>', '<x80>']
    """
    t = table()
    if 0 <= atom < t.n_blocks:
        return f"<{t.block_name(atom)}>"
    if t.n_blocks <= atom < t.n_atoms:
        return f"<{atom - t.n_blocks}>"
    if t.n_atoms <= atom < len(t):
        return f"<x{FALLBACK_BYTES[atom - t.n_atoms]:02X}>"
    raise ValueError(f"{atom!r} is not a SCRIPT atom id (0..{len(t) - 1})")


def readable(text: str, *, drop_unlisted: bool = False) -> str:
    """A pretoken with its SCRIPT atoms spelled out, for ``fastsw pretokenize``: each listed character as
    ``char<block index>``, each unlisted one as its fallback bytes (``<xEE x80 x80>``) or nothing when dropped.

    >>> readable(" Δx")
    ' <✭:ZC 32>Δ<Greek:LM 22>x<Latin:LM 49>'
    """
    t = table()
    atoms = _char_atoms()
    drop = _check_drop(drop_unlisted)
    out = []
    for c in text:
        pair = atoms.get(c)
        if pair is not None:
            out.append(f"{c}<{t.block_name(pair[0])} {pair[1] - t.n_blocks}>")
        elif not drop:
            out.append("<" + " ".join(f"x{FALLBACK_BYTES[a - t.n_atoms]:02X}" for a in _fallback_atoms(c)) + ">")
    return "".join(out)


def remove_unlisted(text: str) -> str:
    """``text`` without the code points that have no entry in the Scripts file (the seed authors' deletion:
    unassigned, private use, surrogates, noncharacters).

    >>> remove_unlisted("\\ue000pua\\U000e0000")
    'pua'
    """
    t = table()
    unlisted = len(t.classes) - 1
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    keep = t.class_of[cps] != unlisted
    if keep.all():
        return text
    return cps[keep].astype("<u4").tobytes().decode("utf-32-le", "surrogatepass")


# -- plain SCRIPT pre-tokenization (B.2) ------------------------------------------------------------------------


def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")


def plain_pretokens_reference(text: str) -> List[str]:
    """Plain SCRIPT pre-tokenization (B.2) as text pieces, the plain-Python rule: the groups of
    :func:`fastsw.pretokenizers.boundary.groups` (``markers=False``: the grouping rule is written once, there), with a group
    that is exactly one space joined to the group after it when that group is a space-using script's letters
    or ``(✭, PSF)``.

    >>> plain_pretokens_reference("the sample weighs 42 µg?")   # MICRO SIGN is Common, not a space-using script
    ['the', ' sample', ' weighs', ' ', '42', ' ', 'µ', 'g', '?']
    >>> plain_pretokens_reference("Δx = 1, a \\u0301b")       # script change; space + combining mark stays one
    ['Δ', 'x', ' =', ' ', '1', ',', ' a', ' \\u0301', 'b']
    """
    from fastsw.pretokenizers.boundary import K_PUNCT, K_WORD, class_table, groups

    kind = class_table().kind
    out: List[str] = []
    pending = False  # a one-space group waiting for the group after it
    for start, end, cls in groups(text, markers=False):
        piece = text[start:end]
        if pending:
            if kind[cls] in (K_WORD, K_PUNCT):
                piece = " " + piece
            else:
                out.append(" ")
            pending = False
        if piece == " ":
            pending = True
        else:
            out.append(piece)
    if pending:
        out.append(" ")
    return out


@njit(cache=True, nogil=True)
def _plain_ends(codes, cls, kind, stop):
    """End offsets (``int64``) of the plain SCRIPT pretokens of one text: the compiled twin of
    :func:`plain_pretokens_reference`. Reads ``codes`` (``uint32[n]`` code points), ``cls`` (``uint16[0x110000]``,
    class per code point) and ``kind`` (``uint8`` per class: 1 word, 3 punct, 4 Inherited, as
    :mod:`fastsw.pretokenizers.boundary`). A group continues over its own class and over Inherited code points; a group that is
    exactly U+0020 loses its end when the next group is word or punct."""
    n = codes.shape[0]
    ends = np.empty(n, dtype=np.int64)
    k = 0
    if n == 0:
        return ends[:0]
    cur = cls[codes[0]]
    start = 0  # start of the current pretoken
    for i in range(1, n):
        if (i & 0xFFFFF) == 0 and stop[0] != 0:
            break
        c = cls[codes[i]]
        if c == cur or kind[c] == 4:
            continue
        cur = c
        if i - start == 1 and codes[start] == 32 and (kind[c] == 1 or kind[c] == 3):
            continue  # the space joins the group starting at i
        ends[k] = i
        k += 1
        start = i
    ends[k] = n
    k += 1
    return ends[:k]


#: Texts of at least this many code points run the kernel in a worker thread (Ctrl-C safe,
#: :func:`fastsw._interrupt.call_kernel`); shorter ones in the calling thread, where a thread start would cost
#: more than the kernel (measured: most of the counting time of 2 MB of English went to thread starts).
_WORKER_CHARS = 1 << 20
_NO_STOP = np.zeros(1, dtype=np.int64)


def _plain_end_array(text: str, codes: Optional[np.ndarray] = None) -> np.ndarray:
    """The end offsets of ``text``'s plain SCRIPT pretokens (``int64``), from the kernel (``codes``: the text's
    :func:`_codes`, when the caller has them)."""
    t = class_table()
    if not text:
        return np.zeros(0, dtype=np.int64)
    if len(text) >= _WORKER_CHARS:
        from fastsw._interrupt import call_kernel

        return call_kernel(_plain_ends, _codes(text) if codes is None else codes, t.cls, t.kind)
    return _plain_ends(_codes(text) if codes is None else codes, t.cls, t.kind, _NO_STOP)


@njit(cache=True, nogil=True)
def _plain_text_ids(
    data, cls, kind, stop, joins, ids, short, long, tb, ranks, sranks, sbits, flags, chars, shortcut, sup, limit
):
    """The ids (int32) of one plain SCRIPT text given as its UTF-8 ``data`` (read-only uint8, valid UTF-8, not
    empty): its code points, their pretokens' ends (:func:`_plain_ends`, with ``cls``, ``kind`` and ``stop`` as
    there) turned into byte ends, then
    :func:`fastsw.encoding.encode_kernels._encode_docs` with the model's tables in its order (``ids``, the byte
    table, ... ``chars``) and switches. The same ids as ``text_bytes_batch`` and the kernel called from Python,
    without the Python work between them (a UTF-32 copy of the text, four numpy arrays and two kernel calls).

    ``joins`` (uint64, :func:`fastsw.encoding.wide_fast.join_bits`; empty: none) is the bit set of the pairs of
    character tokens that some merge joins; a pretoken is cut between two characters whose tokens' pair is not in
    it (:func:`_cut_ends`), for a model without supermerges (``sup`` 0)."""
    n = data.shape[0]
    m = 0
    for i in range(n):  # code points: the bytes that are not continuation bytes
        m += (data[i] & 0xC0) != 0x80
    codes = np.empty(m, np.uint32)
    starts = np.empty(m + 1, np.int64)  # each code point's first byte
    k = 0
    for i in range(n):
        b = np.int64(data[i])
        if b & 0xC0 != 0x80:
            codes[k] = b & (0x7F if b < 0x80 else 0x1F if b < 0xE0 else 0x0F if b < 0xF0 else 0x07)
            starts[k] = i
            k += 1
        else:
            codes[k - 1] = (codes[k - 1] << 6) | (b & 0x3F)
    starts[m] = n
    ends = _plain_ends(_readonly(codes), cls, kind, stop)
    if sup == 0 and joins.shape[0] != 0:
        ends = _cut_ends(codes, starts, ends, joins, chars)
    for j in range(ends.shape[0]):
        ends[j] = starts[ends[j]]  # in bytes: the last is n, so the kernel reads them as byte ends
    doc = np.zeros(2, np.int64)
    doc[1] = ends.shape[0]
    got, _ = _encode_docs(
        data, ends, doc, ids, short, long, tb, ranks, sranks, sbits, flags, chars, shortcut, sup, limit
    )
    return got


@njit(cache=True, nogil=True, inline="always")
def _char_token(chars, cp):
    """The token of the character ``cp`` in the table of characters ``chars``
    (:func:`fastsw.encoding.wide_fast.wide_chars`), or -1 (its two atoms, or not listed)."""
    blk = chars[cp >> 8]
    if blk < 0:
        return np.int64(-1)
    return max(chars[blk + (cp & 255)], np.int64(-1))


@njit(cache=True, nogil=True, inline="always")
def _cut_ends(codes, starts, ends, joins, chars):
    """``ends`` (the pretokens' ends in code points) with a cut added inside a pretoken between two non-ASCII
    characters that are tokens of their own and whose pair is not in ``joins``
    (:func:`fastsw.encoding.wide_fast.join_bits`): no merge ever joins what lies on the two sides, so each side's
    merges are those of the whole pretoken, in the same order, and its ids the same; a side that is one token is a
    hit of the whole-pretoken shortcut, where the whole pretoken ran the merge loops. (A pretoken that is one token
    has no such pair, so it is never cut.) ``starts``: each code point's first byte, then the text's length; a
    pretoken with fewer than two non-ASCII characters (at most one byte more than code points) is not looked at, and
    when no pretoken is left, ``ends`` is returned as it is (no copy: most English texts)."""
    some = False
    a = 0
    for j in range(ends.shape[0]):
        if starts[ends[j]] - starts[a] > ends[j] - a + 1:
            some = True
            break
        a = ends[j]
    if not some:
        return ends
    out = np.empty(codes.shape[0], np.int64)
    k = 0
    a = 0
    for j in range(ends.shape[0]):
        b = ends[j]
        if starts[b] - starts[a] > b - a + 1:  # two non-ASCII characters or more
            prev = np.int64(-1)
            for i in range(a, b):
                c = codes[i]
                cur = _char_token(chars, c) if c >= 0x80 else np.int64(-1)
                bit = _pair_bit(prev, cur)
                clear = (joins[bit >> 6] >> np.uint64(bit & 63)) & np.uint64(1) == 0
                out[k] = i
                k += np.int64((prev >= 0) & (cur >= 0) & clear)  # no branch: a third of the pairs are cut
                prev = cur
        out[k] = b
        k += 1
        a = b
    return out[:k]


def _plain_end_offsets(text: str) -> List[int]:
    return _plain_end_array(text).tolist()


def plain_pretokens(text: str) -> List[str]:
    """:func:`plain_pretokens_reference` through the compiled kernel (identical output)."""
    ends = _plain_end_offsets(text)
    return [text[a:b] for a, b in zip([0] + ends[:-1], ends)]


# -- atoms in pretokens: the pre-tokenizer ---------------------------------------------------------------------

#: The atom slots (fastsw.alphabet) of the SCRIPT tokens: the long slots, skipping the reserved 0x480-0x4FF.
SLOTS = tuple(range(8, 0x480)) + tuple(range(0x500, 0x800))


@functools.lru_cache(maxsize=None)
def script_atoms():
    """The 1,710 SCRIPT atoms (:class:`fastsw.alphabet.Atom`): blocks, then indices. Names (recorded in model
    files) ``script-block:Latin:LM``, ``script-index:26``; shown as ``<Latin:LM>``, ``<26>``."""
    from fastsw.alphabet import Atom

    t = table()
    atoms = [Atom(SLOTS[b], f"script-block:{t.block_name(b)}", f"<{t.block_name(b)}>") for b in range(t.n_blocks)]
    atoms += [Atom(SLOTS[t.n_blocks + i], f"script-index:{i}", f"<{i}>") for i in range(t.n_index)]
    return tuple(atoms)


@functools.lru_cache(maxsize=None)
def _spelling() -> Dict[int, str]:
    """``{code point: block atom char + index atom char}`` for every listed character (a ``str.translate``
    table: unlisted characters and atoms of other schemes stay as they are)."""
    from fastsw.alphabet import atom_char

    t = table()
    out: Dict[int, str] = {}
    for block, (_, _, chars) in enumerate(t.blocks):
        b = atom_char(SLOTS[block])
        for i, c in enumerate(chars):
            out[ord(c)] = b + atom_char(SLOTS[t.n_blocks + i])
    return out


def spell(piece: str) -> str:
    """A text piece with each listed character as its two SCRIPT atoms (lone surrogates, see
    :mod:`fastsw.alphabet`); unlisted characters (byte fallback) and other atoms stay as they are."""
    return piece.translate(_spelling())


def spell_reference(piece: str) -> str:
    """:func:`spell` character by character (the readable twin)."""
    from fastsw.alphabet import atom_char

    atoms = _char_atoms()
    out = []
    for c in piece:
        pair = atoms.get(c)  # None for unlisted characters and for other schemes' atoms (lone surrogates)
        out.append(c if pair is None else atom_char(SLOTS[pair[0]]) + atom_char(SLOTS[pair[1]]))
    return "".join(out)


@functools.lru_cache(maxsize=None)
def _slot_atom() -> List[int]:
    """atom slot -> local atom id (blocks, then indices), -1 for a slot SCRIPT does not use."""
    out = [-1] * 0x800
    for a in range(table().n_atoms):
        out[SLOTS[a]] = a
    return out


@functools.lru_cache(maxsize=None)
def _code_bytes() -> np.ndarray:
    """``uint64[0x110000]``: the bytes of every code point in a piece whose characters are not spelled, little-endian,
    and their number in the top byte: an atom (a lone surrogate) its code (1 or 3 bytes; a reserved slot 0 bytes: it
    has none), any other code point its UTF-8. :func:`_spelled_bytes` is this table with the listed characters
    spelled.

    >>> [int(v) >> 56 for v in _code_bytes()[[ord("a"), ord("日"), 0xD800, 0xD808]]]
    [1, 3, 1, 3]
    """
    from fastsw.alphabet import N_SHORT_ATOMS, RESERVED_SLOTS

    cp = np.arange(_N_CODE_POINTS, dtype=np.int64)
    n8 = 1 + (cp >= 0x80) + (cp >= 0x800) + (cp >= 0x10000)
    lead = np.select([n8 == 1, n8 == 2, n8 == 3], [cp, 0xC0 | (cp >> 6), 0xE0 | (cp >> 12)], 0xF0 | (cp >> 18))
    packed = lead.astype(np.uint64)
    for k in range(1, 4):  # continuation byte k of a character of more than k bytes
        more = n8 > k
        cont = 0x80 | ((cp[more] >> (6 * (n8[more] - 1 - k))) & 0x3F)
        packed[more] |= cont.astype(np.uint64) << np.uint64(8 * k)
    length = n8.astype(np.uint64)
    slot = cp[0xD800:0xE000] - 0xD800
    short = slot < N_SHORT_ATOMS
    packed[0xD800:0xE000] = np.where(short, (0xF8 + slot).astype(np.uint64), _atom_code(slot))
    length[0xD800:0xE000] = np.where(short, 1, 3)
    length[0xD800 + RESERVED_SLOTS.start : 0xD800 + RESERVED_SLOTS.stop] = 0
    return packed | (length << np.uint64(56))


def _atom_code(slot: np.ndarray) -> np.ndarray:
    """The three-byte codes of long atom slots, packed little-endian (``uint64``)."""
    return (0xF5 | ((0x80 | (slot >> 6)) << 8) | ((0x80 | (slot & 0x3F)) << 16)).astype(np.uint64)


@functools.lru_cache(maxsize=None)
def _spelled_bytes() -> np.ndarray:
    """``uint64[0x110000]``: the token bytes of every code point in a SCRIPT piece, little-endian, and their number
    in the top byte: a listed character's block and index atom codes (6 bytes), an atom of an inner scheme (a lone
    surrogate) its code (1 or 3 bytes; a reserved slot 0 bytes: it has none), any other code point its UTF-8 (byte
    fallback). The table of :func:`_spell_bytes`, the vectorised twin of :func:`spell` followed by
    :func:`fastsw.alphabet.atom_bytes`; tests compare them.

    >>> t = [int(v) for v in _spelled_bytes()[[ord("a"), ord("日"), 0xE000]]]
    >>> from fastsw.alphabet import atom_bytes
    >>> all(v.to_bytes(8, "little")[:v >> 56] == atom_bytes(spell(c)) for v, c in zip(t, "a日\ue000"))
    True
    """
    t = table()
    codes = _code_bytes()
    packed = codes & np.uint64(0x00FFFFFFFFFFFFFF)
    length = codes >> np.uint64(56)
    listed = np.flatnonzero(t.block_of >= 0)
    slots = np.asarray(SLOTS, np.int64)
    packed[listed] = _atom_code(slots[t.block_of[listed]]) | (
        _atom_code(slots[t.n_blocks + t.index_of[listed]]) << np.uint64(24)
    )
    length[listed] = 6
    return packed | (length << np.uint64(56))


@njit(cache=True, nogil=True)
def _spell_bytes(codes, spelled, ends, doc_pieces, doc_starts, atoms_ok):
    """The token bytes of pretokens given as code points, and their ends in bytes (the fast encoder's input).

    Reads ``codes`` (``uint32``, the texts' code points, concatenated), ``spelled`` (:func:`_spelled_bytes`),
    ``ends`` (``int64``, each pretoken's end in code points from its text's start), ``doc_pieces`` (``int64``, the
    texts' first pretokens, one more than texts), ``doc_starts`` (``int64``, each text's first code point) and
    ``atoms_ok`` (0: a lone surrogate is an error, not an atom). Returns ``(data uint8, byte_ends int64, bad)``:
    every code point's bytes in order (``data`` never empty), each pretoken's end in bytes from its text's start,
    and the number of code points that have no bytes (a reserved atom slot, or a surrogate when ``atoms_ok`` is
    0); their bytes are left out."""
    data = np.zeros(6 * codes.shape[0] + 1, np.uint8)  # six bytes at most per code point
    byte_ends = np.empty(ends.shape[0], np.int64)
    bad = 0
    w = 0
    for d in range(doc_pieces.shape[0] - 1):
        i = doc_starts[d]
        first = w
        for k in range(doc_pieces[d], doc_pieces[d + 1]):
            stop = doc_starts[d] + ends[k]
            while i < stop:
                c = codes[i]
                v = spelled[c]
                size = np.int64(v >> np.uint64(56))
                if size == 6:  # a listed character: its two atom codes (most code points)
                    data[w] = np.uint8(v & np.uint64(0xFF))
                    data[w + 1] = np.uint8((v >> np.uint64(8)) & np.uint64(0xFF))
                    data[w + 2] = np.uint8((v >> np.uint64(16)) & np.uint64(0xFF))
                    data[w + 3] = np.uint8((v >> np.uint64(24)) & np.uint64(0xFF))
                    data[w + 4] = np.uint8((v >> np.uint64(32)) & np.uint64(0xFF))
                    data[w + 5] = np.uint8((v >> np.uint64(40)) & np.uint64(0xFF))
                elif size == 0 or (atoms_ok == 0 and 0xD800 <= c <= 0xDFFF):
                    bad += 1
                    size = 0
                else:
                    for j in range(size):
                        data[w + j] = np.uint8((v >> np.uint64(8 * j)) & np.uint64(0xFF))
                w += size
                i += 1
            byte_ends[k] = w - first
    return data[: max(w, 1)], byte_ends, bad


def unspell(s: str, broken: Optional[str] = "\ufffd") -> str:
    """The inverse of :func:`spell` on a ``str`` whose atoms are lone surrogates: each block atom followed by an
    index atom of that block becomes its character; any other SCRIPT atom (a broken sequence, e.g. from decoding
    arbitrary ids) becomes ``broken`` (U+FFFD; None keeps the atom); every other character (text, other schemes' atoms, surrogateescape bytes)
    stays.

    >>> unspell(spell("naïve 日本 \\ue000"))
    'naïve 日本 \\ue000'
    """
    if has_utf8(s):
        return s  # no atom at all
    t = table()
    slot_atom = _slot_atom()
    out = []
    i, n = 0, len(s)
    nb = t.n_blocks
    while i < n:
        cp = ord(s[i])
        a = slot_atom[cp - 0xD800] if 0xD800 <= cp < 0xE000 else -1
        if a < 0:
            out.append(s[i])
            i += 1
            continue
        if a < nb and i + 1 < n:
            cp2 = ord(s[i + 1])
            j = slot_atom[cp2 - 0xD800] - nb if 0xD800 <= cp2 < 0xE000 else -1
            chars = t.blocks[a][2]
            if 0 <= j < len(chars):
                out.append(chars[j])
                i += 2
                continue
        out.append(s[i] if broken is None else broken)
        i += 1
    return "".join(out)


def _alphabet_base():
    from fastsw.alphabet import AtomAlphabet

    return AtomAlphabet


class ScriptAlphabet(_alphabet_base()):  # type: ignore[misc]  # a base class returned by a call
    """The alphabet of a SCRIPT model: the profile's byte alphabet (byte fallback for unlisted characters), the
    inner marker scheme's atoms (if any), then the 1,710 SCRIPT atoms. Its :attr:`merge_rule` is what the trainers
    read to refuse partial characters; a saved model records it as a plain ``atoms`` alphabet (encoding and
    decoding need no rule: a model's merges never make a partial character)."""

    @property
    def merge_rule(self):
        """``(kinds, RULE_TABLE)`` over this alphabet's ids: bytes ``KIND_BYTE``, marker-scheme atoms
        ``KIND_WHOLE``, SCRIPT blocks ``KIND_BLOCK``, SCRIPT indices ``KIND_INDEX``."""
        rule = self.__dict__.get("_rule")
        if rule is None:
            slot_atom = _slot_atom()
            nb = table().n_blocks
            kinds = [KIND_BYTE] * self.n_base
            for a in self.atoms:
                local = slot_atom[a.slot]
                kinds.append(KIND_WHOLE if local < 0 else KIND_BLOCK if local < nb else KIND_INDEX)
            rule = self._rule = merge_rule(kinds)
        return rule


class ScriptPretokenizer(SchemeSettings):
    """SCRIPT v3 as a pre-tokenizer: ``"script-v3"`` (plain SCRIPT pretokens, B.2) or ``"script-v3+boundary[...]"``
    (a marker scheme's pretokens, :class:`fastsw.pretokenizers.boundary.BoundaryPretokenizer`), every listed character then
    spelled as its (block, index) atoms. ``fastsw.train(..., pretokenizer="script-v3")`` makes one.

    Args:
        name: ``"script-v3"`` or ``"script-v3+"`` followed by a marker scheme name (``boundary[w,p,d]+caps``, ...).
        drop_unlisted: delete code points that have no entry in the Scripts file first (the seed authors'
            behaviour). Default False: they stay, as byte-fallback tokens, so encoding is lossless on every ``str``.
        single_char_shift, min_caps_length: the caps-code parameters of an inner marker scheme.

        >>> p = ScriptPretokenizer("script-v3")
        >>> [p.show(x) for x in p.pretokenize("Hi 日本")]
        ['H<Latin:LM 7>i<Latin:LM 34>', ' <✭:ZC 32>', '日<Han:LM#8 1127>本<Han:LM#9 6>']
        >>> p.decode_text("".join(p.pretokenize("Hi 日本")))
        'Hi 日本'
        >>> q = ScriptPretokenizer("script-v3+boundary[w]+caps")
        >>> [q.show(x) for x in q.pretokenize("The cat")]
        ['↑¦t<Latin:LM 45>h<Latin:LM 33>e<Latin:LM 30>¦', '¦c<Latin:LM 28>a<Latin:LM 26>t<Latin:LM 45>¦']
    """

    mode = "script-v3"
    _DEFAULT_SCHEME, _LABEL = "script-v3", "SCRIPT"
    letter_pattern = r"\p{L}"

    def __init__(
        self,
        name: str = _DEFAULT_SCHEME,
        *,
        drop_unlisted: bool = False,
        single_char_shift: bool = True,
        min_caps_length: int = 2,
    ):
        from fastsw.pretokenizers.boundary import BoundaryPretokenizer
        from fastsw.pretokenizers.registry import valid_names_message

        if not isinstance(name, str) or not (name.strip() == "script-v3" or name.strip().startswith("script-v3+")):
            raise ValueError(f"unknown pre-tokenizer {name!r}; {valid_names_message()}")
        name = name.strip()
        self.drop_unlisted = _check_drop(drop_unlisted)
        self.inner = None
        if name != "script-v3":
            inner = name[len("script-v3+") :]
            try:
                self.inner = BoundaryPretokenizer(
                    inner,
                    drop_unlisted=drop_unlisted,
                    single_char_shift=single_char_shift,
                    min_caps_length=min_caps_length,
                )
            except ValueError as e:  # name the whole scheme, not just its marker part
                raise ValueError(str(e).replace(repr(inner), repr(name), 1)) from None
        elif (
            not isinstance(single_char_shift, bool)
            or isinstance(min_caps_length, bool)
            or not isinstance(min_caps_length, int)
            or min_caps_length < 1
        ):
            raise ValueError("single_char_shift must be True or False and min_caps_length an int >= 1")
        self.single_char_shift = single_char_shift
        self.min_caps_length = min_caps_length

    # -- configuration ------------------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return "script-v3" + ("" if self.inner is None else "+" + self.inner.name)

    def __repr__(self) -> str:
        return f"ScriptPretokenizer({self.name!r})"

    # -- atoms ---------------------------------------------------------------------------------------------------
    @property
    def atoms(self):
        """The inner scheme's atoms (markers, caps codes), then the 1,710 SCRIPT atoms."""
        return (list(self.inner.atoms) if self.inner is not None else []) + list(script_atoms())

    def make_alphabet(self, profile: str) -> ScriptAlphabet:
        """The profile's byte alphabet followed by :attr:`atoms`, with the no-partial-character merge rule."""
        from fastsw.alphabet import PROFILE_ALPHABETS

        return ScriptAlphabet(PROFILE_ALPHABETS[profile][0], self.atoms)

    #: Its alphabet (:class:`ScriptAlphabet`) forbids merges that make a partial character.
    has_merge_rule = True

    # -- splitting -----------------------------------------------------------------------------------------------
    def native_counter(self, collect_runs: bool):
        """The compiled twin of :class:`fastsw.corpus.counting.CountTable` for this pre-tokenizer (a
        :class:`SpelledCounter`), or None without the extension or with ``FASTSW_PUREPYTHON``."""
        from fastsw._config import pure_python
        from fastsw.pretokenizers.boundary import _letter_scanner

        if pure_python():
            return None
        try:
            from fastsw.pretokenizers._pretok import EndsCounter
        except ImportError:
            return None
        if self.inner is not None:
            counter = self.inner.native_counter(collect_runs)
        else:
            scanner = _letter_scanner()
            counter = None if scanner is None else EndsCounter(scanner, collect_runs)
        return None if counter is None else SpelledCounter(self, counter)

    def token_bytes_batch(self, texts: Sequence[str]):
        """The fast encoder's input for ``texts`` without a ``str`` per pretoken (:mod:`fastsw.encoding.wide_fast`):
        ``(data, piece_ends, doc_pieces)``, the token bytes of every pretoken (:func:`fastsw.alphabet.atom_bytes` of
        :meth:`pretokenize`'s pieces, concatenated; read-only ``uint8``), each pretoken's end in bytes from its text's
        start (``int64``) and the texts' first pretokens (``int64``, one more than texts). Every code point's bytes
        come from one table (:func:`_spelled_bytes`, written by :func:`_spell_bytes`); None for an inner scheme's atom
        in a reserved slot (then the pieces' route raises the codec's error). Tests compare it with the reference
        pieces' ``atom_bytes``.

            >>> data, ends, docs = ScriptPretokenizer().token_bytes_batch(["Hi 日本", ""])
            >>> p = ScriptPretokenizer().pretokenize("Hi 日本")
            >>> from fastsw.alphabet import atom_bytes
            >>> bytes(data) == b"".join(map(atom_bytes, p)), ends.tolist(), docs.tolist()
            (True, [12, 18, 30], [0, 3, 3])
        """
        return self._bytes_batch(texts, _spelled_bytes())

    def text_bytes_batch(self, texts: Sequence[str]):
        """The input of the fast encoder of a SCRIPT model (:class:`fastsw.encoding.wide_fast.WideFastEncoder`):
        :meth:`token_bytes_batch` with every character as its UTF-8 instead of its two atoms (the kernel finds a
        character's atoms, or its token, in the encoder's table of characters, one look-up instead of two atom
        codes and a pair). Each pretoken's end counts bytes from its text's start, or, for plain SCRIPT, code points
        (``data`` is then the texts' UTF-8 as it is, which the kernel reads in code points). None as in
        :meth:`token_bytes_batch`. Tests compare it with the reference pieces' bytes, characters unspelled.

            >>> data, ends, docs = ScriptPretokenizer().text_bytes_batch(["Hi 日本", ""])
            >>> bytes(data).decode(), ends.tolist(), docs.tolist()
            ('Hi 日本', [2, 3, 5], [0, 3, 3])
        """
        if self.inner is not None or self.drop_unlisted:
            return self._bytes_batch(texts, _code_bytes())
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"text must be a str, not {type(text).__name__}")
        try:
            utf8 = "".join(texts).encode("utf-8")
        except UnicodeEncodeError:
            for text in texts:
                self._text(text)  # raises for the lone surrogate
            raise
        ends = [_plain_end_array(text) for text in texts]
        doc_pieces = np.zeros(len(ends) + 1, np.int64)
        np.cumsum(np.fromiter(map(len, ends), np.int64, len(ends)), out=doc_pieces[1:])
        piece_ends = ends[0] if len(ends) == 1 else np.concatenate(ends) if ends else np.zeros(0, np.int64)
        return np.frombuffer(utf8 or b"\0", np.uint8), piece_ends, doc_pieces

    def _bytes_batch(self, texts: Sequence[str], spelled: np.ndarray):
        """:meth:`token_bytes_batch` with each code point's bytes from ``spelled`` (:func:`_spelled_bytes`,
        :func:`_code_bytes`)."""
        plain = self.inner is None
        raws, ends, codes = [], [], None
        for text in texts:
            # plain SCRIPT: a lone surrogate is found by the kernel below (then _text raises its error)
            s = self._text(text, check=not plain)
            if plain:
                codes = _codes(s)
                e = _plain_end_array(s, codes)
            else:
                pieces = self.inner.pretokenize(s)  # type: ignore[union-attr]  # not plain: inner is set
                s = "".join(pieces)
                e = np.cumsum(np.fromiter(map(len, pieces), np.int64, len(pieces)))
            raws.append(s)
            ends.append(e)
        if len(raws) == 1 and codes is not None:  # one text (encode): its arrays as they are
            doc_pieces = np.array((0, len(ends[0])), np.int64)
            doc_starts = np.array((0, len(raws[0])), np.int64)
            piece_ends = ends[0]
        else:
            codes = _codes("".join(raws))
            n_pieces = np.fromiter(map(len, ends), np.int64, len(ends))
            doc_pieces = np.zeros(len(ends) + 1, np.int64)
            np.cumsum(n_pieces, out=doc_pieces[1:])
            doc_starts = np.zeros(len(raws) + 1, np.int64)
            np.cumsum(np.fromiter(map(len, raws), np.int64, len(raws)), out=doc_starts[1:])
            piece_ends = (np.concatenate(ends) if len(ends) != 1 else ends[0]) if ends else np.zeros(0, np.int64)
        data, byte_ends, bad = _spell_bytes(
            codes, spelled, np.ascontiguousarray(piece_ends, np.int64), doc_pieces, doc_starts, int(not plain)
        )
        if bad:
            if plain:
                for text in texts:
                    self._text(text)  # raises for the lone surrogate
            return None
        data.flags.writeable = False  # the type of the byte path's read-only view of UTF-8: one kernel signature
        return data, byte_ends, doc_pieces

    def _text(self, text: str, check: bool = True) -> str:
        """``text`` checked (a ``str``; with ``check``, without lone surrogates) and, with ``drop_unlisted``, without
        its unlisted code points."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, not {type(text).__name__}")
        if (check or self.drop_unlisted) and not has_utf8(text):
            check_utf8(text)
        return remove_unlisted(text) if self.drop_unlisted else text

    def pretokenize(self, text: str) -> List[str]:
        """The pretokens of ``text``, SCRIPT atoms as lone surrogates (compiled grouping, ``str.translate``
        spelling); identical to :meth:`pretokenize_reference`."""
        text = self._text(text)
        table = _spelling()
        if self.inner is None:
            spelled = text.translate(table)
            if len(spelled) == 2 * len(text):  # every character listed: cut the spelled text at twice the offsets
                ends = _plain_end_offsets(text)
                return [spelled[2 * a : 2 * b] for a, b in zip([0] + ends[:-1], ends)]
            pieces = plain_pretokens(text)
        else:
            pieces = self.inner.pretokenize(text)
        return [p.translate(table) for p in pieces]

    def pretokenize_reference(self, text: str) -> List[str]:
        """The plain-Python rule: :func:`plain_pretokens_reference` (or the marker scheme's reference), each piece
        spelled character by character (:func:`spell_reference`)."""
        text = self._text(text)
        pieces = plain_pretokens_reference(text) if self.inner is None else self.inner.pretokenize_reference(text)
        return [spell_reference(p) for p in pieces]

    def has_letter(self, piece: str) -> bool:
        """Phase-2 eligibility, decided on the characters the atoms spell."""
        return _has_letter(piece)

    # -- the inverse ---------------------------------------------------------------------------------------------
    def decode_text(self, s: str) -> str:
        """The text of a ``str`` of pretokens (atoms as lone surrogates): SCRIPT atoms back to characters, then the
        marker scheme's inverse."""
        s = unspell(s)
        return s if self.inner is None else self.inner.decode_text(s)

    @staticmethod
    def decoding_bytes(token_bytes: Sequence[bytes]) -> List[bytes]:
        """Each token's bytes with its SCRIPT characters as their UTF-8 (``Tokenizer.decode`` joins these once per
        call instead of spelling every character back): a token that is whole characters becomes plain text bytes;
        an atom on its own and other schemes' atoms keep their codes, so :meth:`decode_text` still sees them.

            >>> ScriptPretokenizer.decoding_bytes([spell("日").encode("utf-8", "fastsw-atoms"), b"x"])
            [b'\xe6\x97\xa5', b'x']
        """
        from fastsw.alphabet import ATOM_ERRORS, atom_text

        return [
            tb if 0xF5 not in tb else unspell(atom_text(tb), broken=None).encode("utf-8", ATOM_ERRORS)
            for tb in token_bytes
        ]

    def token_widths(self, token_bytes: Sequence[bytes]) -> Optional[List[Tuple[bool, int]]]:
        """Per token ``(starts inside a character, characters it completes)`` for ``Tokenizer.encode_with_offsets``:
        a block atom on its own starts its character and completes it (1), the index atom after it starts inside it
        and adds none; a token of whole characters counts them; fallback bytes follow UTF-8 (a continuation byte
        starts inside). None with a marker scheme, whose markers and caps codes rewrite the text
        (``encode_with_offsets`` then refuses, as for the marker schemes)."""
        if self.inner is not None:
            return None
        from fastsw.alphabet import atom_text

        t = table()
        slot_atom = _slot_atom()
        out = []
        for tb in token_bytes:
            if len(tb) == 3 and tb[0] == 0xF5:
                a = slot_atom[((tb[1] & 0x3F) << 6) | (tb[2] & 0x3F)]
                if 0 <= a < t.n_atoms:
                    out.append((False, 1) if a < t.n_blocks else (True, 0))
                    continue
            if 0xF5 in tb:  # whole characters
                out.append((False, len(unspell(atom_text(tb), broken=None))))
            else:  # fallback bytes: the UTF-8 rule
                out.append((0x80 <= tb[0] < 0xC0, len(tb) - sum(0x80 <= b < 0xC0 for b in tb)))
        return out

    def show(self, piece: str) -> str:
        """A pretoken (or token) in a readable form: each SCRIPT character as ``c<block index>``, an atom on its own
        (a partial character) as ``<block>`` or ``<index>``, an unlisted character as its fallback bytes, markers
        as ``¦ ↑ ⇑``."""
        from fastsw.pretokenizers.boundary import show as show_markers

        t = table()
        slot_atom = _slot_atom()
        out = []
        for c in unspell(piece, broken=None):
            cp = ord(c)
            if 0xD800 <= cp <= 0xDFFF:
                a = slot_atom[cp - 0xD800]
                out.append(
                    show_markers(c) if a < 0 else f"<{t.block_name(a)}>" if a < t.n_blocks else f"<{a - t.n_blocks}>"
                )
            else:
                out.append(readable(c))
        return "".join(out)

    def entry_text(self, piece: str) -> str:
        """A vocabulary entry's text for the duplication statistics (seed 002 Table 5,
        :func:`fastsw.pretokenizers.boundary.model_duplication`): characters as themselves, markers as ``¦ ↑ ⇑``.
        ``UnicodeDecodeError`` for a partial character (a lone block or index atom), which has no text."""
        text = unspell(piece)
        if "\ufffd" in text and "\ufffd" not in piece:
            raise UnicodeDecodeError("script-v3", piece.encode("utf-8", "surrogatepass"), 0, 1, "partial character")
        if self.inner is not None:
            from fastsw.pretokenizers.boundary import show

            return show(text)
        return text

    @property
    def run_break(self):
        """The inner marker scheme's letter-run cut for counting (None for plain SCRIPT)."""
        return None if self.inner is None else self.inner.run_break

    @property
    def supermerge_forbidden(self):
        """The inner marker scheme's supermerge rule (SCRIPT needs none: supermerge candidates are pretokens that
        are one phase-1 token, always whole characters)."""
        return None if self.inner is None else self.inner.supermerge_forbidden


class SpelledCounter:
    """Counting for :class:`ScriptPretokenizer` without spelling every occurrence: the compiled counter counts the
    pieces *before* spelling (a marker scheme's ``MarkCounter``, or an ``EndsCounter`` over the plain grouping's
    ends), and :meth:`pretokens` spells each distinct piece once. Spelling is one-to-one (:func:`unspell` undoes
    it), a piece's letters are its characters' (``has_letter`` reads the characters the atoms spell) and the
    inner scheme cuts letter runs where the spelled pieces would be cut, so the table -- order, counts, letter
    flags, runs -- is the reference's (``CountTable`` over :meth:`ScriptPretokenizer.pretokenize_reference`).
    The interface of ``fastsw.pretokenizers._pretok.Counter`` that :class:`fastsw.corpus.counting.NativeCountTable` uses; a table
    merged in (``merge_table``, from a worker process) comes spelled and is unspelled first."""

    def __init__(self, pretokenizer: "ScriptPretokenizer", counter):
        self.pretokenizer = pretokenizer
        self.counter = counter
        self.plain = pretokenizer.inner is None

    @property
    def n_documents(self):
        return self.counter.n_documents

    @property
    def n_bytes(self):
        return self.counter.n_bytes

    def add_batch(self, docs: List[str]) -> None:
        if not self.plain:
            self.counter.add_batch(docs)
            return
        texts = [self.pretokenizer._text(d) for d in docs]  # TypeError, lone surrogates, drop_unlisted
        self.counter.add_ends(texts, [_plain_end_array(t) for t in texts], docs)

    def merge(self, other: "SpelledCounter") -> None:
        self.counter.merge(other.counter)

    def merge_table(self, pretokens, counts, has_letter, runs, n_documents, n_bytes) -> None:
        self.counter.merge_table(
            [unspell(p, broken=None) for p in pretokens], counts, has_letter, runs, n_documents, n_bytes
        )

    def pretokens(self):
        pieces, counts, letter = self.counter.pretokens()
        spelling = _spelling()
        return [p.translate(spelling) for p in pieces], counts, letter

    def runs(self):
        return self.counter.runs()

    def take_runs(self):
        return self.counter.take_runs()

    def take_raw_runs(self):
        return self.counter.take_raw_runs()


_LETTER = compile_pattern(r"\p{L}")


@functools.lru_cache(maxsize=1 << 16)
def _has_letter(piece: str) -> bool:
    """Whether the characters a spelled piece stands for include a letter (memoized: counting asks it once per
    pretoken occurrence, and pretokens repeat)."""
    return _LETTER.search(unspell(piece)) is not None


# the kernels' cache entries are stamped with the files of the encoding kernels they call, too
stamp_module(__name__)
