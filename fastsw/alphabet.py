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
"""
from __future__ import annotations

from typing import Dict, List, Sequence


def bytes_to_unicode() -> Dict[int, str]:
    """GPT-2's reversible map from each byte to a printable character.

    Printable Latin-1 bytes map to themselves; the other 68 bytes map, in byte
    order, to U+0100, U+0101, ... (so the space 0x20 becomes ``Ġ``, U+0120).
    """
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
                 + list(range(ord("®"), ord("ÿ") + 1)))
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
    return ValueError(f"pretoken {piece!r} has a lone surrogate, which has no UTF-8 bytes for a byte-level "
                      "alphabet; fix the text (e.g. join surrogate pairs) or train with alphabet='chars'")


def check_utf8(text: str) -> None:
    """``ValueError`` naming the first lone surrogate of ``text`` (it has no UTF-8 encoding) and how to fix it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(
            f"text contains a lone surrogate (U+{ord(text[e.start]):04X} at position {e.start}) that "
            "has no UTF-8 encoding; fix the input, e.g. text.encode('utf-16', 'surrogatepass')"
            ".decode('utf-16') to join surrogate pairs, or replace it") from None


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
                    "train with byte_fallback=True to encode unseen characters as bytes")
        return out

    def to_config(self) -> dict:
        return {"kind": "chars", "chars": "".join(self.chars), "byte_fallback": self.byte_fallback}


def alphabet_from_config(config: dict) -> Alphabet:
    kind = config.get("kind")
    if kind in ("bytes243", "bytes256"):
        return ByteAlphabet(kind)
    if kind == "chars":
        return CharAlphabet(list(config["chars"]), bool(config.get("byte_fallback", False)))
    raise ValueError(f"unknown alphabet kind {kind!r}")


#: The alphabet kinds each profile goes with (SPEC section 3), its default byte alphabet first:
#: ``paper`` reproduces the authors' reference from ``bytes243``; ``hf`` uses ``bytes256`` or ``chars``.
PROFILE_ALPHABETS = {"paper": ("bytes243",), "hf": ("bytes256", "chars")}


def default_alphabet(profile: str) -> Alphabet:
    """The byte alphabet each profile reproduces its reference with."""
    return ByteAlphabet(PROFILE_ALPHABETS[profile][0])
