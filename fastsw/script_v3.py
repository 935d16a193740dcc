"""SCRIPT v3: characters as (block, index) pairs of atomic tokens (seed 002 Appendix B, SPEC section 9).

This module owns the SCRIPT v3 table and everything that follows from it alone: the class of every code point,
the blocks and indices, the atomic encoding of a character and its inverse, byte fallback, ``drop_unlisted``,
the SCRIPT grouping (B.2) and plain SCRIPT pre-tokenization, and the rule that a merge never makes a partial
character. The general mechanism that carries atomic tokens beyond bytes through counting, training, model
files and encoding lives in :mod:`fastsw.alphabet` and its users; the boundary-marker schemes, which build
their spans on the groups defined here, in :mod:`fastsw.boundary`.

Classes (SPEC section 9, "Groups"). Every code point listed in ``data/unicode/Scripts-16.0.0.txt`` (shipped
with the package; the version seed 002's authors used) gets a class from its script and its general category
as written in that file's comment column (``L&`` is a letter): the *supercategory* is ``LM`` (letters, marks),
``N`` (numbers), ``ZC`` (separators, ``Cc``), ``So`` (other symbols) or ``PSF`` (punctuation, the other symbols,
``Cf``). Letters and marks of the 28 high-resource scripts (:data:`HIGH_RESOURCE_SCRIPTS`: the 20
space-using scripts, Han, Hiragana, Katakana, Thai, Myanmar, Khmer, Lao and Common) are ``(script, "LM")``;
their other characters drop the script, ``("✭", supercategory)``; characters of every other script drop the
supercategory, ``(script, "✭")``. Code points that the file does not list (unassigned, private use,
surrogates, noncharacters) are ``("Unknown", "✭")``: *unlisted*.

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

Groups (B.2). Adjacent characters of the same class group together; Hiragana letters group with Han letters
(Katakana does not); Inherited characters join the group before them (at the start of a text they form an
``(Inherited, ✭)`` group of their own). Plain SCRIPT pre-tokenization then attaches a group that is exactly
one space (U+0020) to the group after it when that group is a space-using script's ``LM`` or ``(✭, PSF)``
(so ``" ́"``, a space and a combining mark, stays one pretoken). :func:`group_ends_reference` and
:func:`pretokenize_reference` are the plain-Python rule; :func:`group_ends` and :func:`pretokenize` run one
Numba kernel over the code points, identical on every ``str`` (tests: the shared corpora and Hypothesis).

Design notes
------------
* The table is derived at import from the Scripts file (parse plus numpy fills, about 30 ms), not cached:
  nothing is hand-typed and there is no cache to go stale.
* Per-code-point arrays (``int16``, 2.2 MB each) make both the kernel and the reference one lookup per
  character; the kernel takes the code points as ``uint32`` (``str.encode("utf-32-le", "surrogatepass")``,
  so a lone surrogate is a code point like any other: unlisted).
"""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Dict, List, NamedTuple, Sequence, Tuple

import numpy as np
from numba import njit

__all__ = [
    "SCRIPTS_FILE", "SPACE_USING_SCRIPTS", "HIGH_RESOURCE_SCRIPTS", "DROPPED", "BLOCK_SIZE",
    "KIND_WHOLE", "KIND_BLOCK", "KIND_INDEX", "KIND_BYTE", "FALLBACK_BYTES",
    "supercategory", "class_of_entry", "ScriptTable", "table", "atoms_of_text", "text_of_atoms",
    "bytes_of_atoms", "atom_kinds", "atom_name", "merge_allowed", "merge_allowed_kernel", "RULE_TABLE", "merge_rule", "remove_unlisted",
    "group_ends", "group_ends_reference", "pretokenize", "pretokenize_reference", "readable",
]

SCRIPTS_FILE = Path(__file__).resolve().parent / "data" / "unicode" / "Scripts-16.0.0.txt"

#: The 20 scripts that separate words with spaces (seed 002 B.1 footnote; a fixed list, Unicode has no such
#: property). Their letters and marks are word characters of the boundary schemes and take a leading space.
SPACE_USING_SCRIPTS = ("Latin", "Arabic", "Devanagari", "Hangul", "Ethiopic", "Cyrillic", "Greek", "Hebrew",
                       "Bengali", "Syriac", "Oriya", "Tamil", "Telugu", "Gurmukhi", "Gujarati", "Sinhala",
                       "Malayalam", "Armenian", "Kannada", "Georgian")
#: The 28 high-resource scripts: the space-using ones, 7 more and Common.
HIGH_RESOURCE_SCRIPTS = SPACE_USING_SCRIPTS + ("Han", "Hiragana", "Katakana", "Thai", "Myanmar", "Khmer",
                                               "Lao", "Common")
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

# Class flags (ScriptTable.class_flags), used by the grouping and by the boundary schemes' spans.
FLAG_WORD = 1       # (space-using script, LM)
FLAG_PUNCT = 2      # (✭, PSF)
FLAG_DIGIT = 4      # (✭, N)
FLAG_INHERITED = 8  # (Inherited, ✭)
FLAG_UNLISTED = 16  # (Unknown, ✭): no entry in the Scripts file
FLAG_SPACE_JOINS = FLAG_WORD | FLAG_PUNCT  # a one-space group joins a following group of these

_N_CODE_POINTS = 0x110000
_SPACE = 0x20


def supercategory(category: str) -> str:
    """SCRIPT v3's supercategory of a general category as the Scripts file writes it.

    >>> [supercategory(c) for c in ("L&", "Mn", "Nd", "Zs", "Cc", "So", "Sm", "Po", "Cf")]
    ['LM', 'LM', 'N', 'ZC', 'ZC', 'So', 'PSF', 'PSF', 'PSF']
    """
    head = category[:1]
    if head in ("L", "M"):
        return "LM"
    if head == "N":
        return "N"
    if head == "Z" or category == "Cc":
        return "ZC"
    if category == "So":
        return "So"
    if head in ("P", "S") or category == "Cf":
        return "PSF"
    raise ValueError(f"general category {category!r} has no SCRIPT v3 supercategory (the Scripts file lists "
                     "no Cs, Co or Cn code points)")


def class_of_entry(script: str, category: str) -> Tuple[str, str]:
    """The SCRIPT v3 class ``(script, supercategory)`` of a listed character, ``"✭"`` for a dropped part.

    >>> class_of_entry("Latin", "Ll"), class_of_entry("Devanagari", "Nd"), class_of_entry("Tibetan", "Po")
    (('Latin', 'LM'), ('✭', 'N'), ('Tibetan', '✭'))
    """
    sup = supercategory(category)
    if script in HIGH_RESOURCE_SCRIPTS:
        return (script, "LM") if sup == "LM" else (DROPPED, sup)
    return (script, DROPPED)


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
        class_flags: ``uint8[n_classes]``, ``FLAG_*`` bits of each class.
        group_key: ``int16[n_classes]``, equal for classes that group together (Hiragana letters take Han's).
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
        self.class_flags = np.zeros(len(self.classes), dtype=np.uint8)
        for cid, (script, sup) in enumerate(self.classes):
            flags = 0
            if script in SPACE_USING_SCRIPTS and sup == "LM":
                flags |= FLAG_WORD
            if (script, sup) == (DROPPED, "PSF"):
                flags |= FLAG_PUNCT
            if (script, sup) == (DROPPED, "N"):
                flags |= FLAG_DIGIT
            if script == "Inherited":
                flags |= FLAG_INHERITED
            if cid == unlisted:
                flags |= FLAG_UNLISTED
            self.class_flags[cid] = flags
        self.group_key = np.arange(len(self.classes), dtype=np.int16)
        if ("Hiragana", "LM") in class_ids and ("Han", "LM") in class_ids:
            self.group_key[class_ids[("Hiragana", "LM")]] = class_ids[("Han", "LM")]

        self.block_of = np.full(_N_CODE_POINTS, -1, dtype=np.int16)
        self.index_of = np.full(_N_CODE_POINTS, -1, dtype=np.int16)
        self.blocks: List[Tuple[int, int, str]] = []
        for cid, parts in enumerate(members):
            cps = np.concatenate(parts)  # file order
            for sub, start in enumerate(range(0, len(cps), block_size)):
                chunk = cps[start:start + block_size]
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
    out = {}
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
        raise ValueError(f"U+{ord(c):04X} is a lone surrogate, which has no UTF-8 bytes for byte fallback; "
                         "fix the text (join surrogate pairs) or pass drop_unlisted=True") from None


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
                raise ValueError(f"SCRIPT atom {i} is block {t.block_name(a)} without one of its "
                                 f"{len(chars)} index atoms after it")
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
    kinds[:t.n_blocks] = KIND_BLOCK
    kinds[t.n_blocks:t.n_atoms] = KIND_INDEX
    kinds[t.n_atoms:] = KIND_BYTE
    return kinds


def merge_allowed(left_kind: int, right_kind: int) -> bool:
    """Whether a merge of tokens of these kinds keeps every token whole characters: both whole, or a block
    atom then an index atom (which makes one character).

    >>> merge_allowed(KIND_BLOCK, KIND_INDEX), merge_allowed(KIND_INDEX, KIND_BLOCK), merge_allowed(0, 0)
    (True, False, True)
    """
    return (left_kind == KIND_WHOLE and right_kind == KIND_WHOLE) or (
        left_kind == KIND_BLOCK and right_kind == KIND_INDEX)


@njit(cache=True, nogil=True, inline="always")
def merge_allowed_kernel(kinds, left, right):
    """:func:`merge_allowed` for Numba kernels: ``kinds`` is a ``uint8`` array indexed by token id (0 for every
    merged token), ``left``/``right`` token ids."""
    kl = kinds[left]
    kr = kinds[right]
    return (kl == 0 and kr == 0) or (kl == 1 and kr == 2)


#: The no-partial-character rule as a merge table for the trainers (:class:`fastsw.bpe.PairMerger`, the Numba
#: merge loop): ``RULE_TABLE[left kind][right kind]`` is the merged token's kind, -1 where the merge is forbidden.
RULE_TABLE = np.full((4, 4), -1, dtype=np.int8)
RULE_TABLE[KIND_WHOLE, KIND_WHOLE] = KIND_WHOLE
RULE_TABLE[KIND_BLOCK, KIND_INDEX] = KIND_WHOLE


def merge_rule(kinds: Sequence[int]):
    """The ``merge_rule`` argument of the trainers (``fastsw.bpe.learn_merges``, the fast path) for an alphabet
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


# -- groups and plain SCRIPT pre-tokenization ------------------------------------------------------------------

def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")


def group_ends_reference(text: str) -> List[int]:
    """End offsets (code points) of the SCRIPT groups of ``text``: the plain-Python rule.

    >>> s = "ab́c 日本ごカナ"   # Inherited joins the group before; Hiragana groups with Han, Katakana does not
    >>> [s[a:b] for a, b in zip([0] + group_ends_reference(s), group_ends_reference(s))]
    ['ab́c', ' ', '日本ご', 'カナ']
    """
    t = table()
    flags = t.class_flags.tolist()
    group_key = t.group_key.tolist()
    ends: List[int] = []
    key = -1
    for i, cid in enumerate(t.class_of[_codes(text)].tolist()):
        if i > 0 and flags[cid] & FLAG_INHERITED:
            continue  # joins the group before it
        k = group_key[cid]
        if i > 0 and k != key:
            ends.append(i)
        key = k
    if text:
        ends.append(len(text))
    return ends


def pretokenize_reference(text: str) -> List[str]:
    """Plain SCRIPT pre-tokenization (B.2): the groups, with a group that is exactly one space joined to the
    group after it when that group is a space-using script's letters or ``(✭, PSF)``.

    >>> pretokenize_reference("the sample weighs 42 µg?")   # MICRO SIGN is Common, not a space-using script
    ['the', ' sample', ' weighs', ' ', '42', ' ', 'µ', 'g', '?']
    >>> pretokenize_reference("Δx = 1")                  # Greek and Latin letters are separate groups
    ['Δ', 'x', ' =', ' ', '1']
    """
    t = table()
    ends = group_ends_reference(text)
    out: List[str] = []
    start = 0
    pending = ""  # a one-space group waiting to see the group after it
    for end in ends:
        piece = text[start:end]
        if pending:
            if t.class_flags[t.class_of[ord(piece[0])]] & FLAG_SPACE_JOINS:
                piece = pending + piece
            else:
                out.append(pending)
            pending = ""
        if piece == " ":
            pending = piece
        else:
            out.append(piece)
        start = end
    if pending:
        out.append(pending)
    return out


@njit(cache=True, nogil=True)
def _group_ends(codes, class_of, class_flags, group_key, join_space, stop):
    """Group (or, with ``join_space`` = 1, plain SCRIPT pretoken) end offsets of one text.

    Reads ``codes`` (``uint32[n]`` code points), ``class_of`` (``int16[0x110000]``), ``class_flags`` (``uint8``)
    and ``group_key`` (``int16``, per class); returns ``int64[k]`` end offsets. A group boundary is before every
    non-Inherited character whose group key differs from the current group's. With ``join_space`` a group
    that is exactly U+0020 loses its end when the next group's class has ``FLAG_SPACE_JOINS``.
    """
    n = codes.shape[0]
    ends = np.empty(n, dtype=np.int64)
    k = 0
    if n == 0:
        return ends[:0]
    key = group_key[class_of[codes[0]]]
    start = 0
    for i in range(1, n):
        if (i & 0xFFFFF) == 0 and stop[0] != 0:
            break
        cid = class_of[codes[i]]
        if class_flags[cid] & 8:  # FLAG_INHERITED
            continue
        g = group_key[cid]
        if g == key:
            continue
        key = g
        if join_space == 1 and i - start == 1 and codes[start] == 32 and (class_flags[cid] & 3) != 0:
            start = i - 1  # the space joins the group starting at i
            continue
        ends[k] = i
        k += 1
        start = i
    ends[k] = n
    k += 1
    return ends[:k]


def _kernel_ends(text: str, join_space: int) -> np.ndarray:
    from ._interrupt import call_kernel
    t = table()
    return call_kernel(_group_ends, _codes(text), t.class_of, t.class_flags, t.group_key, np.int64(join_space))


def group_ends(text: str) -> np.ndarray:
    """:func:`group_ends_reference` through the compiled kernel (``int64`` array)."""
    return _kernel_ends(text, 0)


def pretokenize(text: str) -> List[str]:
    """:func:`pretokenize_reference` through the compiled kernel (identical output)."""
    ends = _kernel_ends(text, 1).tolist()
    return [text[a:b] for a, b in zip([0] + ends[:-1], ends)]
