"""Tokenizer evaluation metrics (SPEC section 8): plain functions over numbers, counts and vocabularies.

This module owns the formulas; it trains and encodes nothing itself. Each metric is a function of counts
(bytes, tokens, documents, per-type counts, a vocabulary) with its formula in the docstring, so it can be checked by
hand and reused on counts from anywhere (weighted counts may be ``Fraction``). A few thin helpers at the end take a
:class:`~fastsw.Tokenizer` and texts, count with the tokenizer's own pretokenizer and encoder, and call the
formulas (``fastsw eval`` builds on them). Invalid input raises one ``ValueError`` (``TypeError`` for a wrong type)
naming the argument; nothing is guessed.

    >>> from fastsw.eval import metrics
    >>> metrics.bytes_per_token(12, 4)
    3.0
    >>> metrics.gini([1, 3])
    0.25
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, Dict, Iterable, Mapping, Optional, Sequence, Union, cast

from fastsw._types import Number

if TYPE_CHECKING:
    from fastsw.tokenizer import Tokenizer

__all__ = [
    "bytes_per_token",
    "chars_per_token",
    "sentences_per_token",
    "renyi_efficiency",
    "type_token_ratio",
    "gini",
    "single_token_share",
    "vocab_duplication",
    "embedding_memory",
    "bits_per_byte",
    "text_metrics",
    "pretoken_type_token_ratio",
    "candidate_type_token_ratio",
    "pretoken_single_token_share",
]

Counts = Union[Mapping[Any, Number], Iterable[Number]]

#: Bytes per element of the dtype names :func:`embedding_memory` accepts.
DTYPE_BYTES = {
    "fp64": 8,
    "float64": 8,
    "fp32": 4,
    "float32": 4,
    "tf32": 4,
    "bf16": 2,
    "bfloat16": 2,
    "fp16": 2,
    "float16": 2,
    "fp8": 1,
    "float8": 1,
    "int8": 1,
}
#: Units :func:`bits_per_byte` accepts for a summed negative log-likelihood.
NLL_UNITS = ("nats", "bits")


# ---- argument checks -----------------------------------------------------------------------------------------------


def _number(name: str, value, *, positive: bool = False) -> Number:
    """``value`` as a finite real >= 0 (> 0 if ``positive``), else one clear error naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a number, not {type(value).__name__} ({value!r})")
    if not math.isfinite(value):
        raise ValueError(f"{name}={value!r} is not finite; pass a finite count")
    if value < 0 or (positive and value == 0):
        need = "> 0" if positive else ">= 0"
        raise ValueError(f"{name}={value!r} must be {need}")
    return value


def _counts(name: str, counts: Counts) -> list:
    """The values of a mapping (``{type: count}``) or an iterable of counts, each checked, as a list."""
    if isinstance(counts, (str, bytes)):
        raise TypeError(
            f"{name} must be a mapping {{type: count}} or a sequence of counts, not a {type(counts).__name__}"
        )
    values = counts.values() if isinstance(counts, Mapping) else counts
    try:
        values = list(values)
    except TypeError:
        raise TypeError(
            f"{name} must be a mapping {{type: count}} or a sequence of counts, not {type(counts).__name__}"
        ) from None
    if not values:
        raise ValueError(f"{name} is empty; pass at least one count")
    for i, v in enumerate(values):
        _number(f"{name}[{i}]", v)
    return values


def _ratio(numerator, denominator) -> float:
    """``numerator / denominator`` rounded once (exact for ints, Fractions and floats alike)."""
    return float(Fraction(numerator) / Fraction(denominator))


# ---- compression ---------------------------------------------------------------------------------------------------


def bytes_per_token(n_bytes: Number, n_tokens: Number) -> float:
    """Compression in UTF-8 bytes per token: ``n_bytes / n_tokens`` (higher means shorter token sequences).

    >>> bytes_per_token(len("héllo".encode("utf-8")), 2)   # 6 bytes in 2 tokens
    3.0
    """
    return _ratio(_number("n_bytes", n_bytes), _number("n_tokens", n_tokens, positive=True))


def chars_per_token(n_chars: Number, n_tokens: Number) -> float:
    """Compression in characters (Unicode code points) per token: ``n_chars / n_tokens``.

    >>> chars_per_token(len("héllo"), 2)   # 5 code points in 2 tokens
    2.5
    """
    return _ratio(_number("n_chars", n_chars), _number("n_tokens", n_tokens, positive=True))


def sentences_per_token(n_sentences: Number, n_tokens: Number) -> float:
    """Seed 001's "compression" on parallel text: ``n_sentences / n_tokens``, the number of sentences (documents,
    lines) divided by their total token count. On a parallel set every language has the same sentences, so a
    larger value means shorter token sequences for the same content.

        >>> sentences_per_token(8, 100)
        0.08
    """
    return _ratio(_number("n_sentences", n_sentences), _number("n_tokens", n_tokens, positive=True))


# ---- distributions -------------------------------------------------------------------------------------------------


def renyi_efficiency(token_counts: Counts, vocab_size: int, *, alpha: Number = 2.5) -> float:
    """Rényi efficiency of a token distribution: ``H_alpha(p) / log |V|``.

    ``p_i = c_i / sum(c)`` from the per-token counts ``token_counts`` (a mapping ``{id: count}`` or the counts
    themselves; zeros are ignored), ``|V| = vocab_size`` (every entry, used or not), and
    ``H_alpha(p) = log(sum_i p_i ** alpha) / (1 - alpha)``. At ``alpha = 1`` this is the limit, Shannon entropy
    ``-sum_i p_i log p_i``; at ``alpha = inf`` it is ``-log max_i p_i``. The log base cancels. 1 means every entry
    is used equally often; values near 0 mean a few tokens carry the text.

        >>> renyi_efficiency({7: 1, 9: 1}, 4)   # two tokens used equally, 4 entries: log 2 / log 4
        0.5
        >>> renyi_efficiency([2, 2, 2, 2], 4, alpha=1)
        1.0
    """
    values = [v for v in _counts("token_counts", token_counts) if v > 0]
    if not values:
        raise ValueError("token_counts are all zero; pass the counts of a non-empty text")
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, Integral):
        raise TypeError(f"vocab_size must be an int, not {type(vocab_size).__name__}")
    vocab_size = int(vocab_size)
    if vocab_size < 2:
        raise ValueError(f"vocab_size={vocab_size} must be >= 2 (log |V| is 0 for one entry)")
    if len(values) > vocab_size:
        raise ValueError(
            f"token_counts has {len(values)} used tokens, more than vocab_size={vocab_size}; "
            f"pass the vocabulary size of the tokenizer that produced them"
        )
    if isinstance(alpha, bool) or not isinstance(alpha, Real) or math.isnan(alpha) or alpha <= 0:
        raise ValueError(f"alpha={alpha!r} must be a number > 0 (1 for Shannon entropy)")
    total = sum(values)
    p = [float(Fraction(v) / Fraction(total)) for v in values]
    if alpha == 1:
        entropy = -sum(q * math.log(q) for q in p)
    elif math.isinf(alpha):
        entropy = -math.log(max(p))
    else:
        entropy = math.log(math.fsum(q**alpha for q in p)) / (1 - alpha)
    return entropy / math.log(vocab_size)


def type_token_ratio(counts: Counts) -> float:
    """Type-token ratio: ``(number of distinct types) / (total occurrences)`` for ``counts`` = ``{type: count}``
    (or one count per distinct type; zero counts are not types). Seed 000 (Figures 2 and 9) reports it for
    pretokens and for supermerge candidates: a low ratio means aggregating by count leaves far fewer entries.

        >>> type_token_ratio({"the": 3, " cat": 1})   # 2 types, 4 occurrences
        0.5
    """
    values = _counts("counts", counts)
    total = sum(values)
    if total == 0:
        raise ValueError("counts are all zero; pass the counts of a non-empty text")
    return _ratio(sum(1 for v in values if v > 0), total)


def gini(values: Counts) -> float:
    """Gini coefficient ``G = sum_i sum_j |x_i - x_j| / (2 n^2 mean(x))`` of ``n`` values (e.g. per-language token
    counts of one parallel text; a mapping ``{language: count}`` or the counts). 0 means every language needs the
    same number of tokens; it grows towards ``1 - 1/n`` as one language takes them all. Computed exactly from
    the sorted values, ``sum_i sum_j |x_i - x_j| = 2 sum_k (2k - n + 1) x_(k)`` (``k`` from 0, ascending).

        >>> gini({"en": 1, "de": 3})   # |1-3| + |3-1| = 4; 2 * 2**2 * 2 = 16
        0.25
    """
    xs = sorted(_counts("values", values))
    n = len(xs)
    total = sum(xs)
    if total == 0:
        raise ValueError("values are all zero; the Gini coefficient needs a positive mean")
    pair_sum = 2 * sum((2 * k - n + 1) * Fraction(x) for k, x in enumerate(xs))
    return _ratio(pair_sum, 2 * n * Fraction(total))  # 2 n^2 mean = 2 n total


def single_token_share(token_lengths: Sequence[int], counts: Optional[Sequence[Number]] = None) -> float:
    """Share of pretokens encoded as one token: ``sum_i c_i [len_i == 1] / sum_i c_i`` where ``len_i`` is the
    number of tokens pretoken ``i`` became and ``c_i`` its count (every ``c_i = 1`` when ``counts`` is None).

        >>> single_token_share([1, 2, 1], [3, 1, 1])   # 3 + 1 of 5 occurrences are one token
        0.8
    """
    lengths = _counts("token_lengths", token_lengths)
    for i, n in enumerate(lengths):
        if isinstance(n, bool) or not isinstance(n, Integral) or n < 1:
            raise ValueError(f"token_lengths[{i}]={n!r} must be an int >= 1 (a pretoken is at least one token)")
    weights = [1] * len(lengths) if counts is None else _counts("counts", counts)
    if len(weights) != len(lengths):
        raise ValueError(
            f"counts has {len(weights)} entries but token_lengths has {len(lengths)}; pass one count per pretoken"
        )
    total = sum(weights)
    if total == 0:
        raise ValueError("counts are all zero; pass the counts of a non-empty text")
    return _ratio(sum(c for n, c in zip(lengths, weights) if n == 1), total)


# ---- vocabulary ----------------------------------------------------------------------------------------------------


def vocab_duplication(
    vocab: Union["Tokenizer", Sequence[Union[bytes, str]]], *, case_codes: Sequence[str] = ()
) -> Dict[str, float]:
    """Vocabulary duplication as in seed 002 Table 5: the share of entries that duplicate another entry.

    ``vocab`` is a sequence of entries (``bytes`` or ``str``; a :class:`~fastsw.Tokenizer` means its ``vocab``,
    special tokens excluded). Returns ``{"space": s, "case": c}``, each ``(entries in such a pair) / len(vocab)``;
    both entries of a pair count, and the two measures overlap:

    * ``space``: entries ``x`` and ``" " + x`` (differing only by one leading space);
    * ``case``: distinct entries with equal ``str.lower()`` of their UTF-8 text (differing only by capitalization;
      entries that are not valid UTF-8 have no case). With ``case_codes`` (e.g. ``("↑", "⇑")`` for the caps codes
      of SPEC section 9), one leading code is removed first, so a code plus its span duplicates the span.

        >>> vocab_duplication([b"the", b" the", b"The", b"cat"])   # the/ the: space; the/The: case
        {'space': 0.5, 'case': 0.5}
    """
    entries_of = cast(Sequence[Union[bytes, str]], getattr(vocab, "vocab", vocab))  # a Tokenizer: its vocab
    if isinstance(entries_of, (str, bytes)):
        raise TypeError("vocab must be a sequence of entries (bytes or str), not one string")
    entries = []
    for i, e in enumerate(entries_of):
        if isinstance(e, str):
            e = e.encode("utf-8", "surrogatepass")
        elif not isinstance(e, (bytes, bytearray)):
            raise TypeError(f"vocab[{i}] is a {type(e).__name__}; entries must be bytes or str")
        entries.append(bytes(e))
    if not entries:
        raise ValueError("vocab is empty; pass the entries of a vocabulary")
    if isinstance(case_codes, str):
        raise TypeError("case_codes must be a sequence of code strings, e.g. ('↑', '⇑'), not one string")
    codes = [c.encode("utf-8") for c in case_codes]
    if any(not c for c in codes):
        raise ValueError("case_codes contains an empty string; pass the code characters, e.g. ('↑', '⇑')")
    present = set(entries)
    space = sum(1 for e in entries if b" " + e in present or (e[:1] == b" " and len(e) > 1 and e[1:] in present))
    keys = []
    for e in entries:
        for c in codes:
            if e.startswith(c):
                e = e[len(c) :]
                break
        try:
            keys.append(e.decode("utf-8").lower() if e else None)
        except UnicodeDecodeError:
            keys.append(None)
    forms: Dict[str, set] = {}
    for e, k in zip(entries, keys):
        if k is not None:
            forms.setdefault(k, set()).add(e)
    case = sum(1 for k in keys if k is not None and len(forms[k]) > 1)
    n = len(entries)
    return {"space": _ratio(space, n), "case": _ratio(case, n)}


def embedding_memory(rows: int, width: int, bytes_per_element: Union[int, str] = 2, *, tied: bool = False) -> int:
    """Bytes of the embedding weights for ``rows`` vocabulary entries: ``rows * width * bytes_per_element`` per
    matrix, times 2 for separate input and output matrices (``tied=False``, the default) or 1 when they are tied.
    ``bytes_per_element`` is a number or a dtype name (``"bf16"``, ``"fp32"``, ... see ``DTYPE_BYTES``). Weights
    only: gradients and optimizer state come on top.

        >>> embedding_memory(50_000, 4096, "bf16") / 1e6   # seed 001: 2 x 409.6 MB
        819.2
    """
    if isinstance(bytes_per_element, str):
        key = bytes_per_element.lower()
        if key not in DTYPE_BYTES:
            raise ValueError(
                f"bytes_per_element={bytes_per_element!r} is not a known dtype; use a number of "
                f"bytes or one of {', '.join(DTYPE_BYTES)}"
            )
        bytes_per_element = DTYPE_BYTES[key]
    for name, v in (("rows", rows), ("width", width), ("bytes_per_element", bytes_per_element)):
        if isinstance(v, bool) or not isinstance(v, Integral):
            raise TypeError(f"{name} must be an int, not {type(v).__name__} ({v!r})")
        if v < 1:
            raise ValueError(f"{name}={v} must be >= 1")
    if not isinstance(tied, bool):
        raise TypeError(f"tied must be True or False, not {tied!r}")
    return int(rows) * int(width) * int(bytes_per_element) * (1 if tied else 2)


def bits_per_byte(nll: Number, n_bytes: Number, *, unit: str = "nats") -> float:
    """Bits per byte: the summed negative log-likelihood of a text's token sequence, in bits, divided by the
    text's UTF-8 byte count: ``nll / n_bytes`` for ``unit="bits"``, ``nll / (ln 2 * n_bytes)`` for ``"nats"``
    (the unit of a summed cross-entropy loss). Unlike perplexity, the denominator does not depend on the tokenizer.

        >>> bits_per_byte(8.0, 4, unit="bits")
        2.0
        >>> round(bits_per_byte(4 * math.log(2), 4), 12)   # 4 bits as nats
        1.0
    """
    if unit not in NLL_UNITS:
        raise ValueError(
            f"unit={unit!r} is not one of {', '.join(NLL_UNITS)}; say which log base the negative log-likelihood uses"
        )
    nll = _number("nll", nll)
    n_bytes = _number("n_bytes", n_bytes, positive=True)
    bits = _ratio(nll, n_bytes)
    return bits / math.log(2) if unit == "nats" else bits


# ---- helpers over a Tokenizer and texts ----------------------------------------------------------------------------


def _texts(texts) -> list:
    if isinstance(texts, str):
        raise TypeError("texts must be a list of documents, not one string; wrap it: [text]")
    texts = list(texts)
    if not texts:
        raise ValueError("texts is empty; pass at least one document")
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"texts[{i}] is a {type(t).__name__}, not str")
    return texts


def _pretoken_counts(pretokenizer, texts):
    from fastsw.corpus.counting import count_corpus

    return count_corpus(texts, pretokenizer, collect_runs=True, threads=1)


def text_metrics(tokenizer: "Tokenizer", texts: Iterable[str], *, alpha: Number = 2.5) -> Dict[str, float]:
    """Encode ``texts`` (documents) with ``tokenizer`` and measure them: the counts ``documents``, ``bytes``
    (UTF-8), ``characters``, ``tokens``, and :func:`bytes_per_token`, :func:`chars_per_token`,
    ``documents_per_token`` (:func:`sentences_per_token`) and :func:`renyi_efficiency` of the token counts.

        >>> import fastsw
        >>> tok = fastsw.train(["low lower lowest"] * 3, vocab_size=250)
        >>> m = text_metrics(tok, ["low lower", "lowest"])
        >>> m["bytes"], m["tokens"] == len(tok.encode_ordinary("low lower")) + len(tok.encode_ordinary("lowest"))
        (15, True)
    """
    from fastsw.corpus.counting import _doc_bytes

    texts = _texts(texts)
    ids = tokenizer.encode_ordinary_batch(texts)
    n_tokens = sum(map(len, ids))
    if n_tokens == 0:
        raise ValueError("texts encode to no tokens (all documents are empty); pass some text")
    n_bytes = sum(map(_doc_bytes, texts))
    n_chars = sum(map(len, texts))
    counts = Counter(t for doc in ids for t in doc)
    return {
        "documents": len(texts),
        "bytes": n_bytes,
        "characters": n_chars,
        "tokens": n_tokens,
        "bytes_per_token": bytes_per_token(n_bytes, n_tokens),
        "chars_per_token": chars_per_token(n_chars, n_tokens),
        "documents_per_token": sentences_per_token(len(texts), n_tokens),
        "renyi_efficiency": renyi_efficiency(counts, tokenizer.vocab_size, alpha=alpha),
    }


def pretoken_type_token_ratio(tokenizer: "Tokenizer", texts: Iterable[str]) -> float:
    """:func:`type_token_ratio` of the pretokens of ``texts`` under ``tokenizer``'s pretokenizer (or a
    :class:`~fastsw.Pretokenizer` given directly): distinct pretokens / pretoken occurrences.

        >>> import fastsw
        >>> pretoken_type_token_ratio(fastsw.Pretokenizer(), ["the cat the cat"])   # the, " cat", " the", " cat"
        0.75
    """
    from fastsw.pretokenizers.base import BasePretokenizer

    pretokenizer = tokenizer if isinstance(tokenizer, BasePretokenizer) else tokenizer.pretokenizer
    counts = _pretoken_counts(pretokenizer, _texts(texts))
    if not counts.counts:
        raise ValueError("texts have no pretokens (all documents are empty); pass some text")
    return type_token_ratio(counts.counts)


def _phase1_words(tokenizer, counts) -> list:
    return [tokenizer.encode_pretoken(p) for p in counts.pretokens]


def candidate_type_token_ratio(tokenizer: "Tokenizer", texts: Iterable[str]) -> float:
    """:func:`type_token_ratio` of the supermerge candidates of ``texts`` (SPEC section 5: maximal runs of >= 2
    consecutive pretokens that ``tokenizer``'s regular merges make single eligible tokens), aggregated by their
    token ids as phase 2 sees them: distinct candidates / candidate occurrences (seed 000 Figures 2 and 9).

        >>> import fastsw
        >>> tok = fastsw.train(["the cat and the dog"] * 4, vocab_size=255)
        >>> candidate_type_token_ratio(tok, ["the cat and the dog", "the cat"])   # 2 distinct runs, 2 occurrences
        1.0
    """
    from fastsw.trainers.superword import ReferenceBackend

    counts = _pretoken_counts(tokenizer.pretokenizer, _texts(texts))
    candidates = ReferenceBackend().candidates(counts, _phase1_words(tokenizer, counts), tokenizer)
    if not candidates:
        raise ValueError(
            "texts have no supermerge candidates (no two adjacent pretokens are single eligible "
            "tokens); pass more text or a larger vocabulary"
        )
    return type_token_ratio(candidates)


def pretoken_single_token_share(tokenizer: "Tokenizer", texts: Iterable[str]) -> float:
    """:func:`single_token_share` of the pretokens of ``texts``: the share of pretoken occurrences that
    ``tokenizer``'s regular merges encode as one token (supermerges across pretokens are not applied).

        >>> import fastsw
        >>> tok = fastsw.train(["the cat"] * 4, vocab_size=248)
        >>> pretoken_single_token_share(tok, ["the cat cat cow"])   # "the", " cat", " cat" of 4 pretokens
        0.75
    """
    counts = _pretoken_counts(tokenizer.pretokenizer, _texts(texts))
    if not counts.counts:
        raise ValueError("texts have no pretokens (all documents are empty); pass some text")
    return single_token_share([len(w) for w in _phase1_words(tokenizer, counts)], counts.counts)
