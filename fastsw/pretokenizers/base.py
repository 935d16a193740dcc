"""The pre-tokenizer interface: :class:`BasePretokenizer` declares every hook that fastsw calls on a pre-tokenizer.

A pre-tokenizer cuts a document into pretokens (phase-1 merges never cross a pretoken boundary; supermerges join
runs of whole pretokens). Every family subclasses :class:`BasePretokenizer` and overrides what it needs; the
counting, the trainers, the encoders, the decoder, the model files and the command line call the hooks directly,
and each default below is what they do for a family that does not override it. A family is found by its name
through :mod:`fastsw.pretokenizers.registry` (``register``, ``make_pretokenizer``); docs/pretokenizers.md,
"Adding a pre-tokenizer", shows a whole one.

Hooks by stage (who calls each is in its docstring):

* naming and model files: :attr:`~BasePretokenizer.mode`, :attr:`~BasePretokenizer.name`,
  :meth:`~BasePretokenizer.from_name`, :meth:`~BasePretokenizer.to_config`, :meth:`~BasePretokenizer.from_config`;
* splitting: :meth:`~BasePretokenizer.pretokenize_reference` (the plain-Python rule, the one hook without a
  default), :meth:`~BasePretokenizer.pretokenize` (its fast twin), :meth:`~BasePretokenizer.native_scanner`,
  :attr:`~BasePretokenizer.uses_native`, :meth:`~BasePretokenizer.pretoken_ends`;
* counting: :attr:`~BasePretokenizer.letter_pattern`, :meth:`~BasePretokenizer.has_letter`,
  :meth:`~BasePretokenizer.native_counter`, :attr:`~BasePretokenizer.run_break`;
* training: :attr:`~BasePretokenizer.splits_text`, :attr:`~BasePretokenizer.atoms`,
  :meth:`~BasePretokenizer.make_alphabet`, :attr:`~BasePretokenizer.has_merge_rule`,
  :attr:`~BasePretokenizer.supermerge_forbidden`;
* encoding: :meth:`~BasePretokenizer.token_bytes_batch`;
* decoding and offsets: :meth:`~BasePretokenizer.decode_text`, :meth:`~BasePretokenizer.decoding_bytes`,
  :attr:`~BasePretokenizer.token_offsets`, :meth:`~BasePretokenizer.token_widths`;
* display: :meth:`~BasePretokenizer.show`, :meth:`~BasePretokenizer.entry_text`.

Three hooks are rules that most families do not have (:attr:`~BasePretokenizer.run_break`,
:attr:`~BasePretokenizer.supermerge_forbidden`, :attr:`~BasePretokenizer.token_offsets`): they default to
``None`` and a family that has the rule defines a method of that name. The callers test ``is None`` once, outside
their loops, so a family without the rule pays nothing per pretoken.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Dict, List, Optional, Sequence, Tuple

import numpy as np

from fastsw.pretokenizers._unicode import compile_pattern

# A pretoken is a possible part of a supermerge only if it contains a letter.
LETTER_PATTERN = r"\p{L}"

__all__ = ["BasePretokenizer", "LETTER_PATTERN"]


class BasePretokenizer:
    """The base of every pre-tokenizer: each hook with its default, its meaning and its callers.

    A subclass must define :meth:`pretokenize_reference`, :meth:`to_config` and :meth:`from_config` (and
    :attr:`mode`); everything else has a default. Register the class under a name with
    :func:`fastsw.pretokenizers.register` so that ``fastsw.train(..., pretokenizer=NAME)``, ``fastsw train
    --pretokenizer NAME`` and the model files find it.

        >>> import re
        >>> from fastsw.pretokenizers import BasePretokenizer
        >>> class Words(BasePretokenizer):
        ...     mode = "words"
        ...     def pretokenize_reference(self, text):  # the pieces concatenate back to the text
        ...         return re.findall(r" ?[^ ]+| +", text)
        ...     def to_config(self):
        ...         return {"mode": self.mode}
        ...     @classmethod
        ...     def from_config(cls, config):
        ...         return cls()
        >>> Words().pretokenize("a b"), Words().has_letter(" b"), Words().name
        (['a', ' b'], True, 'words')

    The pieces concatenate back to the text, unless the family has :attr:`atoms` and a :meth:`decode_text` that
    restores it. docs/pretokenizers.md, "Adding a pre-tokenizer", registers and trains a complete one.
    """

    # -- naming and model files ---------------------------------------------------------------------------------
    #: The family's name as model files record it (``to_config()["mode"]``): the registry reads a stored
    #: pre-tokenizer back with the family registered under this name. Families: ``"script"``, ``"simple"``,
    #: ``"none"`` (:class:`fastsw.Pretokenizer`), ``"boundary"``, ``"script-v3"``.
    mode: str = ""

    @property
    def name(self) -> str:
        """The name :func:`fastsw.pretokenizers.make_pretokenizer` takes for this pre-tokenizer, as users spell it
        (``"script"``, ``"boundary[w,p,d]+caps"``, ...). Read by error messages, ``fastsw inspect`` and the
        exports' refusals. Default: :attr:`mode`."""
        return self.mode

    @classmethod
    def from_name(cls, name: str) -> "BasePretokenizer":
        """The pre-tokenizer a user names ``name`` (already stripped), a name of this family: ``name`` is the
        family's registered name or starts with it followed by ``[`` or ``+`` (``boundary[w]+caps``). Called by
        :func:`~fastsw.pretokenizers.make_pretokenizer`. Default: ``cls()``; a family with parameters in its
        names parses them here and raises ``ValueError`` for a bad one."""
        return cls()

    def to_config(self) -> Dict[str, Any]:
        """A JSON-serialisable dict with ``"mode": self.mode`` and every setting; :meth:`from_config` inverts it.
        Called by :meth:`fastsw.Tokenizer.save` (the model file's ``pretokenizer``), by counting (the count
        table's) and by the workers of parallel and distributed counting, which rebuild the pre-tokenizer from it.
        Must be overridden."""
        raise NotImplementedError(f"{type(self).__name__} must define to_config()")

    @classmethod
    def from_config(cls, config: Dict[str, Any]) -> "BasePretokenizer":
        """The pre-tokenizer :meth:`to_config` described (``ValueError`` for an unknown setting). Called by
        :func:`fastsw.pretokenizers.registry.pretokenizer_from_config` when a model file or a count table is read.
        Must be overridden."""
        raise NotImplementedError(f"{cls.__name__} must define from_config()")

    def __eq__(self, other) -> bool:
        """Equal when of the same class with equal settings (:meth:`to_config`)."""
        return type(other) is type(self) and self.to_config() == other.to_config()

    __hash__ = None  # type: ignore[assignment]  # equal by settings, caches inside: not hashable

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    # -- splitting ----------------------------------------------------------------------------------------------
    def pretokenize_reference(self, text: str) -> List[str]:
        """The pretokens of ``text``, in order, by the plain-Python rule: the readable specification that the fast
        path (:meth:`pretokenize`) must match; tests compare the two. Called by the ``python`` backend and by
        :meth:`pretokenize` when there is no fast path. Must be overridden."""
        raise NotImplementedError(f"{type(self).__name__} must define pretokenize_reference()")

    def pretokenize(self, text: str) -> List[str]:
        """The pretokens of ``text``, identical to :meth:`pretokenize_reference`, by the fast path when the
        family has one. Called by counting (:class:`fastsw.corpus.counting.CountTable`), the encoders and ``fastsw
        pretokenize``. Default: :meth:`pretokenize_reference`."""
        return self.pretokenize_reference(text)

    def native_scanner(self) -> Optional[Any]:
        """The compiled scanner (``fastsw.pretokenizers._pretok.Scanner``) whose pretokens are exactly this
        pre-tokenizer's, all substrings of the text, or None. Called by the fast encoder
        (:class:`fastsw.encoding.encode_fast.FastEncoder`), which then reads pretoken ends straight from UTF-8
        (``scan_utf8``), and by :meth:`pretoken_ends`. Default: None."""
        return None

    @property
    def uses_native(self) -> bool:
        """Whether :meth:`pretoken_ends` works (a :meth:`native_scanner`). Read by the fast encoder, which then
        cuts the text by end offsets, with no ``str`` per pretoken. Default: ``native_scanner() is not None``."""
        return self.native_scanner() is not None

    def pretoken_ends(self, text: str) -> np.ndarray:
        """End offsets (code points, ``int64``) of the pretokens of ``text``, by the :meth:`native_scanner`.
        ``ValueError`` without one (see :attr:`uses_native`). Called by the fast encoder."""
        scanner = self.native_scanner()
        if scanner is None:
            raise ValueError(
                "pretoken_ends needs the compiled scanner: default patterns, the built "
                "fastsw.pretokenizers._pretok extension and FASTSW_PUREPYTHON unset; use pretokenize()"
            )
        return scanner.pretoken_ends(text)

    # -- counting -----------------------------------------------------------------------------------------------
    #: The phase-2 eligibility test as a regex: a pretoken can be part of a supermerge only if it has a match.
    #: The compiled counters test ``\p{L}`` (:data:`LETTER_PATTERN`), so counting uses them only for this value.
    #: Read by :meth:`has_letter` and :func:`fastsw.corpus.counting.native_counting`.
    letter_pattern: str = LETTER_PATTERN

    def has_letter(self, piece: str) -> bool:
        """Whether ``piece`` (a pretoken) may be part of a supermerge. Called by counting once per distinct
        pretoken. Default: a match of :attr:`letter_pattern`."""
        letter = self.__dict__.get("_letter_re")
        if letter is None:
            letter = self.__dict__["_letter_re"] = compile_pattern(self.letter_pattern)
        return letter.search(piece) is not None

    def native_counter(self, collect_runs: bool) -> Optional[Any]:
        """A compiled counter for this pre-tokenizer (the interface of ``fastsw.pretokenizers._pretok.Counter``:
        ``add_batch``, ``merge``, ``merge_table``, ``pretokens``, ``runs``, ``n_documents``, ``n_bytes``), or None.
        Called by :func:`fastsw.corpus.counting.count_corpus`, one per thread; it must count exactly as
        :class:`fastsw.corpus.counting.CountTable` over :meth:`pretokenize_reference` does. Default: None (counting
        runs :meth:`pretokenize` in Python)."""
        return None

    #: A rule that cuts letter runs between two pieces, ``run_break(prev, piece) -> bool``, or None (no rule):
    #: counting starts a new run at ``piece`` where it is true, so no supermerge candidate spans that point.
    #: Called by :class:`fastsw.corpus.counting.CountTable` per pretoken when not None. Marker schemes: never two
    #: touching markers in one token.
    run_break: Optional[Callable[[str, str], bool]] = None

    # -- training -----------------------------------------------------------------------------------------------
    #: False when every document is one pretoken (``none``): the trainers with supermerges, which join runs of
    #: pretokens, refuse such a pre-tokenizer. Read by :func:`fastsw.train`.
    splits_text: bool = True

    @property
    def atoms(self) -> Sequence[Any]:
        """The atomic tokens beyond bytes that the pieces hold (:class:`fastsw.alphabet.Atom`, spelled in a
        pretoken ``str`` as lone surrogates): markers, caps codes, SCRIPT's block and index tokens. Empty (the
        default): the pieces are substrings of the text. Read by the tokenizer (reachability) and
        :mod:`fastsw.eval.show`."""
        return ()

    def make_alphabet(self, profile: str) -> Optional[Any]:
        """The alphabet a model trained with this pre-tokenizer starts from (:class:`fastsw.alphabet.Alphabet`),
        or None (the default): the ``alphabet`` option of :func:`fastsw.train` decides (the profile's bytes, or
        characters). A family with :attr:`atoms` returns the profile's bytes followed by them. Called by
        :func:`fastsw.train`."""
        return None

    #: True when the alphabet of :meth:`make_alphabet` forbids some merges (its ``merge_rule``: SCRIPT's tokens are
    #: whole characters); a trainer that cannot apply a merge rule (parity-aware BPE) refuses the pre-tokenizer.
    #: Read by :func:`fastsw.train`.
    has_merge_rule: bool = False

    #: A rule on two phase-1 tokens' bytes, ``supermerge_forbidden(left, right) -> bool``, or None (no rule): the
    #: trainer cuts supermerge candidates between two tokens where it is true. Called by :func:`fastsw.train`
    #: once per distinct adjacent pair. Marker schemes: never two touching markers in one token.
    supermerge_forbidden: Optional[Callable[[bytes, bytes], bool]] = None

    # -- encoding -----------------------------------------------------------------------------------------------
    def token_bytes_batch(self, texts: Sequence[str]) -> Optional[Tuple[bytes, np.ndarray, np.ndarray]]:
        """The fast encoder's input for ``texts`` without a ``str`` per pretoken, for a family with
        :attr:`atoms`: ``(data, piece_ends, doc_pieces)``, the token bytes of every pretoken concatenated, each
        pretoken's end in bytes and the texts' first pretokens; or None (the default): the encoder spells the
        pieces of :meth:`pretokenize`. Called by :class:`fastsw.encoding.encode_fast.FastEncoder` (and its wide
        twin) for models with atoms: the marker schemes and SCRIPT v3 build it without a ``str`` per pretoken."""
        return None

    # -- decoding and offsets -----------------------------------------------------------------------------------
    def decode_text(self, s: str) -> str:
        """The text that a ``str`` of joined pretokens stands for: the inverse of pre-tokenization for a family
        with :attr:`atoms` (markers back to spaces, caps codes re-case their word). Called by
        :meth:`fastsw.Tokenizer.decode` for models with atoms. Default: ``s`` unchanged."""
        return s

    def decoding_bytes(self, token_bytes: Sequence[bytes]) -> Sequence[bytes]:
        """Each token's bytes as the decoder should join them (made once per model). SCRIPT v3 turns its
        whole-character tokens back into UTF-8 here, so decoding does not spell every character back. Called by
        :meth:`fastsw.Tokenizer.decode`. Default: ``token_bytes`` unchanged."""
        return token_bytes

    #: A rule ``token_offsets(ids, token_bytes, special_by_id) -> List[int]`` that gives where each token starts in
    #: the decoded text, or None (no rule: the offsets follow the tokens' UTF-8, or :meth:`token_widths`). Marker
    #: schemes: a marker pair stands for a space, other atoms for nothing. Called by
    #: :meth:`fastsw.Tokenizer.encode_with_offsets` and ``decode_with_offsets``.
    token_offsets: Optional[Callable[[Sequence[int], Sequence[bytes], Dict[int, bytes]], List[int]]] = None

    def token_widths(self, token_bytes: Sequence[bytes]) -> Optional[List[Tuple[bool, int]]]:
        """Per token ``(starts inside a character, characters it completes)`` for a family with :attr:`atoms`
        whose pieces still map one to one to the text (SCRIPT v3: a character is two atoms), or None (the
        default): the offsets follow the UTF-8 bytes, and a model with atoms and neither this nor
        :attr:`token_offsets` has no offsets. Called by :meth:`fastsw.Tokenizer.encode_with_offsets`, once per
        model."""
        return None

    # -- display ------------------------------------------------------------------------------------------------
    def show(self, piece: str) -> str:
        """A pretoken (or a token's text, atoms as lone surrogates) in readable form: markers as ``¦ ↑ ⇑``, SCRIPT
        characters as themselves. Called by ``fastsw pretokenize``, ``fastsw inspect`` and
        :meth:`fastsw.Tokenizer.show` for models with :attr:`atoms`. Default: ``piece`` unchanged."""
        return piece

    def entry_text(self, piece: str) -> str:
        """A vocabulary entry's text (atoms as lone surrogates) for the duplication statistics;
        ``UnicodeDecodeError`` when it has no text (a partial character). Called by
        :func:`fastsw.eval.duplication.model_duplication` for models with :attr:`atoms`. Default: :meth:`show`."""
        return self.show(piece)

    #: The hooks in the order of this class, for the interface's documentation and its tests.
    HOOKS: ClassVar[Tuple[str, ...]] = (
        "mode",
        "name",
        "from_name",
        "to_config",
        "from_config",
        "pretokenize_reference",
        "pretokenize",
        "native_scanner",
        "uses_native",
        "pretoken_ends",
        "letter_pattern",
        "has_letter",
        "native_counter",
        "run_break",
        "splits_text",
        "atoms",
        "make_alphabet",
        "has_merge_rule",
        "supermerge_forbidden",
        "token_bytes_batch",
        "decode_text",
        "decoding_bytes",
        "token_offsets",
        "token_widths",
        "show",
        "entry_text",
    )
