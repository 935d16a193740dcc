"""Initial alphabets and training profiles (SPEC section 3).

An *alphabet* owns the atomic tokens a model starts from: their ids, their bytes,
and how a pretoken becomes a sequence of atomic ids. A *profile* fixes how pairs
are counted and how equal counts are broken. The trainers only ever see ids,
token byte strings and these two objects, so new kinds of atomic tokens (boundary
markers, caps codes, SCRIPT block/index tokens) arrive as new alphabets.

Alphabets:

* ``bytes243`` (profile ``paper``): the 243 bytes that can occur in UTF-8,
  0x00-0xBF then 0xC2-0xF4, ids 0..242 in byte order.
* ``bytes256`` (profile ``hf``): all 256 bytes, ids in the code-point order of
  GPT-2's bytes-to-unicode map (so the space byte, shown as ``Ġ``, sorts after
  the letters), as HF ``tokenizers`` numbers a byte-level alphabet.
* ``chars`` (seed 001's character-level variant): the characters seen in
  training sorted by code point, ids 0..k-1, optionally followed by 256
  byte-fallback tokens for characters outside the alphabet.
* ``atoms`` (:class:`AtomAlphabet`): a byte alphabet (or none) followed by *atomic tokens beyond
  bytes* -- boundary markers and caps codes (:mod:`fastsw.pretokenizers.boundary`), SCRIPT block/index tokens.

Atomic tokens beyond bytes (one mechanism for every scheme)
-----------------------------------------------------------
An atom is identified by a *slot* ``0 <= slot < 2048``. It has two spellings, one per layer:

* in a pretoken (``str``, what pre-tokenizers return, counters count and count files store) it is the
  lone surrogate ``chr(0xD800 + slot)`` (:func:`atom_char`). Text never holds lone surrogates (they
  have no UTF-8; encode and the marker pre-tokenizers reject them), so an atom can never be confused
  with a character of the text -- text that contains ``¦``, ``↑`` or ``⇑`` keeps them as ordinary
  characters (their UTF-8 bytes).
* in a token's bytes (``Tokenizer.vocab``, the model's tie-breaking, the shortcut table, the fast
  kernels) it is a code made of bytes that never occur in UTF-8 (:func:`atom_code`): slots 0-7 are
  *short atoms*, one byte ``0xF8 + slot``; slots 8-2047 are *long atoms*, three bytes
  ``0xF5, 0x80 | slot >> 6, 0x80 | slot & 0x3F``. A token's bytes are the UTF-8 of its text with each
  atom replaced by its code: ``piece.encode("utf-8", ATOM_ERRORS)`` (a registered codec error handler,
  so plain text costs what ``str.encode`` costs), and back with :func:`atom_text`.
  Since no UTF-8 byte sequence contains 0xF5-0xFF, the codes are unambiguous next to any text bytes,
  and byte-wise tie-breaking (profile ``paper``) stays a total order both trainers share.

Slots 0x480-0x4FF are never assigned: they are the surrogates Python's ``surrogateescape`` uses, so a
decoder can carry invalid bytes and atoms in one ``str``. That leaves 8 short and 1,912 long slots
(SCRIPT v3 needs 1,710 long atoms; its byte fallback is the byte alphabet itself).
"""

from __future__ import annotations

import codecs
from typing import Dict, List, Optional, Sequence, Tuple


def bytes_to_unicode() -> Dict[int, str]:
    """GPT-2's reversible map from each byte to a printable character.

    Printable Latin-1 bytes map to themselves; the other 68 bytes map, in byte
    order, to U+0100, U+0101, ... (so the space 0x20 becomes ``Ġ``, U+0120).
    """
    printable = (
        list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    )
    mapping = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in mapping:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


BYTE_TO_UNICODE = bytes_to_unicode()
UNICODE_TO_BYTE = {c: b for b, c in BYTE_TO_UNICODE.items()}


def render(token: bytes) -> str:
    """A token's bytes in GPT-2's rendering (never contains a space)."""
    return "".join(BYTE_TO_UNICODE[b] for b in token)


def unrender(text: str) -> bytes:
    """Inverse of :func:`render`; raises ``KeyError`` for a character outside the map."""
    return bytes(UNICODE_TO_BYTE[c] for c in text)


class Profile:
    """How pairs are counted and how equal counts are broken.

    ``overlapping``: ``False`` counts a run of n equal tokens as floor(n/2) pairs
    (so a merge's count equals the replacements it makes); ``True`` counts every
    adjacent position (``aaa`` has two ``a+a``).
    ``tie``: ``"bytes"`` -- the smaller ``(left bytes, right bytes)`` wins;
    ``"ids"`` -- the smaller ``(left id, right id)`` wins.
    """

    def __init__(self, name: str, overlapping: bool, tie: str):
        self.name = name
        self.overlapping = overlapping
        self.tie = tie

    def __repr__(self) -> str:
        return f"Profile({self.name!r})"


PROFILES = {
    "paper": Profile("paper", overlapping=False, tie="bytes"),
    "hf": Profile("hf", overlapping=True, tie="ids"),
}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"profile {name!r} is not one of {', '.join(PROFILES)}") from None


class Alphabet:
    """The atomic tokens a model starts from.

    Attributes:
        kind: ``"bytes243"``, ``"bytes256"`` or ``"chars"``.
        tokens: list of the atomic tokens' bytes, index = id.
    """

    kind: str
    tokens: List[bytes]

    def __len__(self) -> int:
        return len(self.tokens)

    def initial_ids(self, piece: str) -> List[int]:
        raise NotImplementedError

    def to_config(self) -> dict:
        raise NotImplementedError


def lone_surrogate_error(piece: str) -> ValueError:
    """The error for a pretoken that a byte-level alphabet cannot encode."""
    return ValueError(
        f"pretoken {piece!r} has a lone surrogate, which has no UTF-8 bytes for a byte-level "
        "alphabet; fix the text (e.g. join surrogate pairs) or train with alphabet='chars'"
    )


def has_utf8(text: str) -> bool:
    """Whether ``text`` has a UTF-8 encoding, i.e. no lone surrogate (:func:`check_utf8` names the first one).

    >>> has_utf8("naïve 日本"), has_utf8("a\\ud800b")
    (True, False)
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_utf8(text: str) -> None:
    """``ValueError`` naming the first lone surrogate of ``text`` (it has no UTF-8 encoding) and how to fix it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(
            f"text contains a lone surrogate (U+{ord(text[e.start]):04X} at position {e.start}) that "
            "has no UTF-8 encoding; fix the input, e.g. text.encode('utf-16', 'surrogatepass')"
            ".decode('utf-16') to join surrogate pairs, or replace it"
        ) from None


class ByteAlphabet(Alphabet):
    """Byte-level alphabet: every pretoken is its UTF-8 bytes."""

    def __init__(self, kind: str):
        if kind == "bytes243":
            order = list(range(0x00, 0xC0)) + list(range(0xC2, 0xF5))
        elif kind == "bytes256":
            order = sorted(range(256), key=lambda b: BYTE_TO_UNICODE[b])
        else:
            raise ValueError(f"unknown byte alphabet {kind!r}")
        self.kind = kind
        self.tokens = [bytes([b]) for b in order]
        self._id_of_byte = [-1] * 256
        for i, b in enumerate(order):
            self._id_of_byte[b] = i

    def initial_ids(self, piece: str) -> List[int]:
        table = self._id_of_byte
        # UTF-8 of a ``str`` only uses bytes that have an id; a lone surrogate has no UTF-8.
        try:
            return [table[b] for b in piece.encode("utf-8")]
        except UnicodeEncodeError:
            raise lone_surrogate_error(piece) from None

    def id_of_byte(self, b: int) -> int:
        return self._id_of_byte[b]

    def to_config(self) -> dict:
        return {"kind": self.kind}


class CharAlphabet(Alphabet):
    """Seed 001's character-level alphabet, with optional byte fallback.

    Ids 0..k-1 are the characters in code-point order; with ``byte_fallback`` the
    256 single bytes follow (ids k..k+255) and a character outside the alphabet is
    encoded as its UTF-8 bytes. Without it such a character is an error.
    """

    kind = "chars"

    def __init__(self, chars: Sequence[str], byte_fallback: bool = False):
        chars = sorted(set(chars))
        if any(len(c) != 1 for c in chars):
            raise ValueError("a character alphabet holds single characters")
        self.chars = chars
        self.byte_fallback = bool(byte_fallback)
        self._id_of_char = {c: i for i, c in enumerate(chars)}
        self.tokens = [c.encode("utf-8", "surrogatepass") for c in chars]
        if self.byte_fallback:
            self._byte_base = len(self.tokens)
            self.tokens += [bytes([b]) for b in range(256)]

    def initial_ids(self, piece: str) -> List[int]:
        out = []
        table = self._id_of_char
        for c in piece:
            i = table.get(c)
            if i is not None:
                out.append(i)
            elif self.byte_fallback:
                out.extend(self._byte_base + b for b in c.encode("utf-8"))
            else:
                raise ValueError(
                    f"character {c!r} (U+{ord(c):04X}) is not in this character-level alphabet; "
                    "train with byte_fallback=True to encode unseen characters as bytes"
                )
        return out

    def to_config(self) -> dict:
        return {"kind": "chars", "chars": "".join(self.chars), "byte_fallback": self.byte_fallback}


def alphabet_from_config(config: dict) -> Alphabet:
    kind = config.get("kind")
    if kind in ("bytes243", "bytes256"):
        return ByteAlphabet(kind)
    if kind == "chars":
        return CharAlphabet(list(config["chars"]), bool(config.get("byte_fallback", False)))
    if kind == "atoms":
        return AtomAlphabet.from_config(config)
    raise ValueError(f"unknown alphabet kind {kind!r}")


#: The alphabet kinds each profile goes with (SPEC section 3), its default byte alphabet first:
#: ``paper`` reproduces the authors' reference from ``bytes243``; ``hf`` uses ``bytes256`` or ``chars``.
PROFILE_ALPHABETS = {"paper": ("bytes243", "atoms"), "hf": ("bytes256", "chars", "atoms")}


def default_alphabet(profile: str) -> Alphabet:
    """The byte alphabet each profile reproduces its reference with."""
    return ByteAlphabet(PROFILE_ALPHABETS[profile][0])


# ---- atomic tokens beyond bytes ---------------------------------------------------------------------------------

ATOM_BASE = 0xD800
#: Number of atom slots (lone surrogates U+D800..U+DFFF).
N_ATOM_SLOTS = 2048
#: Slots 0..N_SHORT_ATOMS-1 are one-byte codes 0xF8+slot.
N_SHORT_ATOMS = 8
#: Slots never assigned (Python's surrogateescape range U+DC80..U+DCFF).
RESERVED_SLOTS = range(0x480, 0x500)
#: The codec error handler name that spells atoms as their codes (encode) and back (decode).
ATOM_ERRORS = "fastsw-atoms"
_LONG_LEAD = 0xF5


def atom_char(slot: int) -> str:
    """The one-character spelling of atom ``slot`` inside a pretoken ``str``.

    >>> hex(ord(atom_char(5)))
    '0xd805'
    """
    return chr(ATOM_BASE + slot)


def is_atom_char(ch: str) -> bool:
    """Whether ``ch`` (one character) is an atom spelling (a lone surrogate)."""
    return 0xD800 <= ord(ch) <= 0xDFFF


def atom_code(slot: int) -> bytes:
    """The bytes of atom ``slot`` in token byte strings: ``0xF8 + slot`` for a short atom (slot < 8), else
    ``0xF5, 0x80 | slot >> 6, 0x80 | slot & 0x3F``. None of these bytes starts a UTF-8 character.

        >>> atom_code(0), atom_code(8)
        (b'\xf8', b'\xf5\x80\x88')
    """
    if not 0 <= slot < N_ATOM_SLOTS or slot in RESERVED_SLOTS:
        raise ValueError(f"atom slot {slot} is outside 0..{N_ATOM_SLOTS - 1} or reserved (0x480-0x4FF)")
    if slot < N_SHORT_ATOMS:
        return bytes([0xF8 + slot])
    return bytes([_LONG_LEAD, 0x80 | (slot >> 6), 0x80 | (slot & 0x3F)])


def _atom_encode_errors(exc):
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    out = bytearray()
    for ch in exc.object[exc.start : exc.end]:
        cp = ord(ch)
        if not 0xD800 <= cp <= 0xDFFF:
            raise exc
        out += atom_code(cp - ATOM_BASE)
    return bytes(out), exc.end


def _atom_decode_errors(exc):
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    data, i = exc.object, exc.start
    b = data[i]
    if b >= 0xF8:
        return atom_char(b - 0xF8), i + 1
    if b == _LONG_LEAD and i + 2 < len(data) and 0x80 <= data[i + 1] < 0xC0 and 0x80 <= data[i + 2] < 0xC0:
        return atom_char(((data[i + 1] & 0x3F) << 6) | (data[i + 2] & 0x3F)), i + 3
    raise exc


codecs.register_error(
    ATOM_ERRORS,
    lambda exc: _atom_encode_errors(exc) if isinstance(exc, UnicodeEncodeError) else _atom_decode_errors(exc),
)


def atom_bytes_packed(pieces: Sequence[str]):
    """``(data, lengths)``: the concatenated :func:`atom_bytes` of ``pieces`` as a ``uint8`` array and each piece's
    length in bytes (``int64``) -- the same bytes, without the codec's Python error handler, which runs once per
    atom (0.42 of 0.44 s encoding 0.6 MB of English with a marker model; 0.64 s of phase 1's 1.2 s on 20 MB).

    The pieces are encoded with ``surrogatepass`` (the C encoder spells a lone surrogate ``ED A0-BF 80-BF``, which
    valid UTF-8 never holds: ``ED`` starts U+D000-U+DFFF and the characters use only ``ED 80-9F``); each atom's
    three bytes then become its code, all pieces at once: a one-byte code shortens the piece by two, a three-byte
    code (``F5 ..``) takes the same place. A reserved slot raises the codec's error.

        >>> data, lengths = atom_bytes_packed([atom_char(0) + "the" + atom_char(0), "퀀", atom_char(9)])
        >>> bytes(data) == atom_bytes(atom_char(0) + "the" + atom_char(0)) + "퀀".encode() + atom_code(9)
        True
        >>> lengths.tolist()
        [5, 3, 3]
    """
    import numpy as np
    from fastsw._config import gc_paused

    with gc_paused():
        encoded = [p.encode("utf-8", "surrogatepass") for p in pieces]
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    lead = np.flatnonzero(data == 0xED)  # ED starts a 3-byte sequence: lead + 2 is inside the data
    sur = lead[data[lead + 1] >= 0xA0]
    if sur.size == 0:
        return data, lengths
    slot = ((data[sur + 1].astype(np.int64) & 0x1F) << 6) | (data[sur + 2] & 0x3F)
    if ((slot >= RESERVED_SLOTS.start) & (slot < RESERVED_SLOTS.stop)).any():
        for p in pieces:
            atom_bytes(p)  # raises the codec's error for the reserved slot
    data = data.copy()
    short = slot < N_SHORT_ATOMS
    at, long_at = sur[short], sur[~short]
    data[at] = 0xF8 + slot[short]
    data[long_at] = _LONG_LEAD
    data[long_at + 1] = 0x80 | (slot[~short] >> 6)
    data[long_at + 2] = 0x80 | (slot[~short] & 0x3F)
    if at.size == 0:
        return data, lengths
    keep = np.ones(data.shape[0], dtype=bool)
    keep[at + 1] = False
    keep[at + 2] = False
    owner = np.searchsorted(np.cumsum(lengths), at, side="right")  # the piece each one-byte atom is in
    return data[keep], lengths - 2 * np.bincount(owner, minlength=lengths.shape[0])


def atom_bytes(piece: str) -> bytes:
    """A pretoken's token bytes: its UTF-8 with every atom spelled as its code.

    >>> atom_bytes(atom_char(0) + "the" + atom_char(0))
    b'\xf8the\xf8'
    """
    return piece.encode("utf-8", ATOM_ERRORS)


def atom_text(data: bytes) -> str:
    """Inverse of :func:`atom_bytes` for bytes made of whole atoms and valid UTF-8 (``UnicodeDecodeError``
    otherwise)."""
    return data.decode("utf-8", ATOM_ERRORS)


def split_atoms(data: bytes) -> List[Tuple[bool, bytes]]:
    """Cut token bytes into ``(is_atom, part)`` pieces: each atom code on its own, the text bytes between
    them in runs (which may be partial UTF-8 when a token sequence is cut inside a character)."""
    out: List[Tuple[bool, bytes]] = []
    i, n, start = 0, len(data), 0
    while i < n:
        b = data[i]
        if b >= 0xF8 or b == _LONG_LEAD:
            width = 1 if b >= 0xF8 else 3
            if start < i:
                out.append((False, data[start:i]))
            out.append((True, data[i : i + width]))
            i += width
            start = i
        else:
            i += 1
    if start < n:
        out.append((False, data[start:n]))
    return out


def decode_with_atoms(data: bytes, errors: str = "replace") -> str:
    """Token bytes as a ``str`` with atoms spelled as lone surrogates; the text bytes between atoms are
    decoded with ``errors`` (``"replace"``, ``"strict"``, ``"surrogateescape"``, ...)."""
    if not any(b >= 0xF5 for b in data):
        return data.decode("utf-8", errors)
    return "".join(atom_text(part) if is_atom else part.decode("utf-8", errors) for is_atom, part in split_atoms(data))


class Atom:
    """One atomic token beyond bytes: its ``slot`` (see the module notes), its ``name`` (stable, recorded in
    model files, e.g. ``"boundary"``) and ``shown``, how ``fastsw pretokenize`` prints it (e.g. ``"¦"``)."""

    __slots__ = ("slot", "name", "shown")

    def __init__(self, slot: int, name: str, shown: str):
        atom_code(slot)  # checks the slot
        self.slot, self.name, self.shown = int(slot), str(name), str(shown)

    def __repr__(self) -> str:
        return f"Atom({self.slot}, {self.name!r}, {self.shown!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Atom) and (self.slot, self.name, self.shown) == (other.slot, other.name, other.shown)

    def __hash__(self) -> int:
        return hash((self.slot, self.name))

    @property
    def char(self) -> str:
        return atom_char(self.slot)

    @property
    def code(self) -> bytes:
        return atom_code(self.slot)


class AtomAlphabet(Alphabet):
    """A byte alphabet (``base``: ``"bytes243"``, ``"bytes256"`` or None for no bytes) followed by atoms.

    Ids: the base's byte ids first (as in :class:`ByteAlphabet`), then the atoms in the given order.
    ``initial_ids(piece)`` maps each atom character of ``piece`` to its atom id and every other character to
    the base ids of its UTF-8 bytes. ``tokens[i]`` is the atom's code (:func:`atom_code`), so every token's
    bytes are :func:`atom_bytes` of its text.

        >>> from fastsw.alphabet import Atom, AtomAlphabet, atom_char
        >>> a = AtomAlphabet("bytes243", [Atom(0, "boundary", "¦")])
        >>> len(a), a.initial_ids(atom_char(0) + "a")
        (244, [243, 97])
    """

    kind = "atoms"

    def __init__(self, base: Optional[str], atoms: Sequence[Atom]):
        atoms = list(atoms)
        if len({a.slot for a in atoms}) != len(atoms) or len({a.name for a in atoms}) != len(atoms):
            raise ValueError("atoms must have distinct slots and names")
        self.base = None if base is None else ByteAlphabet(base)
        self.atoms = atoms
        base_tokens = list(self.base.tokens) if self.base is not None else []
        self.n_base = len(base_tokens)
        self.tokens = base_tokens + [a.code for a in atoms]
        self._id_of_char = {a.char: self.n_base + i for i, a in enumerate(atoms)}
        self._byte_ids = list(self.base._id_of_byte) if self.base is not None else [-1] * 256
        for i, a in enumerate(atoms):
            if a.slot < N_SHORT_ATOMS:
                self._byte_ids[0xF8 + a.slot] = self.n_base + i

    @property
    def short_only(self) -> bool:
        """True when every atom has a one-byte code (then one byte -> id table covers the alphabet, and the
        fast encoder's kernel runs unchanged)."""
        return self.base is not None and all(a.slot < N_SHORT_ATOMS for a in self.atoms)

    def id_of_byte(self, b: int) -> int:
        """The id of byte ``b``: a base byte, a short atom's code, or -1."""
        return self._byte_ids[b]

    def initial_ids(self, piece: str) -> List[int]:
        table = self._id_of_char
        out: List[int] = []
        byte_ids = self._byte_ids if self.base is not None else None
        for ch in piece:
            i = table.get(ch)
            if i is not None:
                out.append(i)
                continue
            if is_atom_char(ch):
                raise ValueError(f"pretoken {piece!r} holds an atom (U+{ord(ch):04X}) this alphabet does not have")
            if byte_ids is None:
                raise ValueError(f"character {ch!r} (U+{ord(ch):04X}) has no atom in this alphabet")
            out.extend(byte_ids[b] for b in ch.encode("utf-8"))
        return out

    def to_config(self) -> dict:
        return {
            "kind": "atoms",
            "base": self.base.kind if self.base is not None else None,
            "atoms": [[a.slot, a.name, a.shown] for a in self.atoms],
        }

    @classmethod
    def from_config(cls, config: dict) -> "AtomAlphabet":
        atoms = config.get("atoms")
        if not isinstance(atoms, list) or not all(
            isinstance(a, list)
            and len(a) == 3
            and isinstance(a[0], int)
            and isinstance(a[1], str)
            and isinstance(a[2], str)
            for a in atoms
        ):
            raise ValueError("alphabet.atoms must be a list of [slot, name, shown]")
        base = config.get("base")
        if base not in (None, "bytes243", "bytes256"):
            raise ValueError(f"alphabet.base {base!r} is not one of null, 'bytes243', 'bytes256'")
        return cls(base, [Atom(*a) for a in atoms])


def fast_supported(alphabet: Alphabet) -> bool:
    """Whether a model with ``alphabet`` has the fast encoding path of :mod:`fastsw.encoding.encode_fast` (byte
    alphabets, and atoms of one byte); asked without importing that module (and Numba).

    >>> fast_supported(ByteAlphabet("bytes256"))
    True
    """
    return isinstance(alphabet, ByteAlphabet) or (isinstance(alphabet, AtomAlphabet) and alphabet.short_only)
