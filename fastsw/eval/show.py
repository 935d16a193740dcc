"""See the tokens: a text cut into a model's tokens, in the terminal, in notebooks and on a comparison page.

One function computes the view, :func:`token_spans` (every token of a text with its id, bytes, character span and
kind); every renderer consumes its :class:`TokenSpan` list and nothing else:

* :meth:`TokenView.to_terminal` -- the text with alternating ANSI background colours (``fastsw show -m MODEL TEXT``),
* :meth:`TokenView._repr_html_` -- the same view as HTML for Jupyter (``tok.show(text)``),
* :func:`page_html` / :func:`write_page` -- one self-contained HTML file comparing models side by side per language,
  with a hover card per token, ``fastsw eval``'s metrics and its charts (``fastsw show --html PAGE``; ``fastsw eval
  --report DIR`` writes it as ``tokens.html`` beside the report).

    >>> import fastsw
    >>> tok = fastsw.train(["the cat sat on the mat"] * 3, vocab_size=255)
    >>> spans = token_spans(tok, "the cat")
    >>> "".join(s.text for s in spans)
    'the cat'
    >>> print(render_terminal(spans))
    the│ cat

How tokens look. Regular tokens alternate between a few background colours; supermerges (superword tokens) take a
colour family of their own and are underlined; special tokens are drawn inverted; markers and caps codes of the
boundary schemes are drawn as ``¦ ↑ ⇑`` in red; a token that is not valid UTF-8 on its own (a piece of a character
that the model splits) is drawn as its bytes in hex, ``‹E6 97›``, so nothing is ever dropped; newlines, tabs and
other control characters are drawn as visible symbols (``↵ → ␍``). Without colour (``--color never``, ``NO_COLOR``,
a pipe, ``str(view)``) tokens are separated by ``│``, supermerges enclosed in ``⟪ ⟫`` and special tokens in
``⟦ ⟧``.

Wide and right-to-left text. Display widths follow ``unicodedata.east_asian_width`` (wide and fullwidth characters
take two cells, combining marks and format characters none); the id rows of ``--ids`` are padded with them, so ids
stay under their tokens for Chinese, Japanese, Korean and emoji. Text stays in logical order: in the terminal each
token that holds right-to-left characters (Arabic, Hebrew, ...) is wrapped in the Unicode bidi isolates FSI ... PDI
(U+2068, U+2069), so a terminal that applies the bidi algorithm reorders inside a token but never across tokens,
and the tokens read left to right in text order; a terminal without bidi shows the same order. On the HTML views
each token is an isolated span (``unicode-bidi: isolate``) and the text block takes the text's own direction
(``dir="auto"``), so an Arabic sample reads right to left, token by token, as an Arabic reader expects.

Character spans. Token ``k`` covers ``text[start:end]``, starts from ``Tokenizer.encode_with_offsets`` (or, for a
pre-tokenizer that gives none, the length of what the tokens before it decode to); a character split over several
tokens is the span of one of them (the others have an empty span), a marker or caps code alone has an empty span,
and the spans of a text join to the text exactly. A model with ``normalize`` set shows the normalized text.
"""

from __future__ import annotations

import html
import json
import os
import unicodedata
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

__all__ = [
    "TokenSpan",
    "TokenView",
    "token_spans",
    "show",
    "render_terminal",
    "use_color",
    "display_width",
    "Sample",
    "sample_documents",
    "page_html",
    "write_page",
    "DEFAULT_SAMPLE_CHARS",
]

#: Characters of each language shown on a comparison page unless ``--sample-chars`` says otherwise.
DEFAULT_SAMPLE_CHARS = 3000

# piece kinds of a token's shown form
TEXT, ATOM, BYTES = "text", "atom", "bytes"


@dataclass(frozen=True)
class TokenSpan:
    """One token of a text, as every view shows it.

    ``id``, ``bytes`` (the token's bytes; a special token's text as UTF-8), ``start``/``end`` (its character span
    in the text: the spans join to the text), ``pieces`` (its shown form as ``(kind, str)`` parts: ``"text"``,
    ``"atom"`` -- a marker, caps code or other atom in readable form -- or ``"bytes"``, the hex of bytes that are
    not UTF-8 on their own), ``supermerge``, ``marker`` (holds a boundary marker or caps code), ``special``,
    ``invalid_utf8`` (holds a piece of a character), ``rank`` (its merge's index in merge order, None for the
    alphabet and special tokens) and ``count`` (its merge's count in training, None when the model has none)."""

    id: int
    bytes: bytes
    start: int
    end: int
    text: str
    pieces: Tuple[Tuple[str, str], ...]
    supermerge: bool = False
    marker: bool = False
    special: bool = False
    invalid_utf8: bool = False
    rank: Optional[int] = None
    count: Optional[int] = None

    @property
    def shown(self) -> str:
        """The token as the views draw it (before whitespace is made visible)."""
        return "".join(p for _, p in self.pieces)


# ---- the one computation ---------------------------------------------------------------------------------------------


def _bytes_pieces(data: bytes) -> List[Tuple[str, str]]:
    """Valid UTF-8 runs as text, the bytes between them as one hex piece each run."""
    s = data.decode("utf-8", "surrogateescape")
    out: List[Tuple[str, str]] = []
    run: List[str] = []
    bad: List[str] = []
    for ch in s:
        if 0xDC80 <= ord(ch) <= 0xDCFF:
            if run:
                out.append((TEXT, "".join(run)))
                run = []
            bad.append(f"{ord(ch) - 0xDC00:02X}")
        else:
            if bad:
                out.append((BYTES, " ".join(bad)))
                bad = []
            run.append(ch)
    if run:
        out.append((TEXT, "".join(run)))
    if bad:
        out.append((BYTES, " ".join(bad)))
    return out


class _Forms:
    """Per model, each token's shown form and flags, made once per id (cached on the tokenizer)."""

    def __init__(self, tok):
        from fastsw.alphabet import split_atoms

        self.tok = tok
        self.n = tok.vocab_size
        self.n_alpha = len(tok.alphabet)
        self.merges = tok.merges
        self.has_counts = any(m.count for m in self.merges)
        self.atoms = hasattr(tok.alphabet, "atoms")
        self.split_atoms = split_atoms
        self.memo: Dict[int, tuple] = {}
        if self.atoms:
            from fastsw.pretokenizers.boundary import CAPS, MARKER, SHIFT

            model_atoms = {a.code for a in tok.pretokenizer.atoms}
            self.marker_codes = {c for c in (MARKER.code, SHIFT.code, CAPS.code) if c in model_atoms}
            self.decoding = tok._decoding_bytes()  # SCRIPT: whole characters back to UTF-8
            self.show_atom = tok.pretokenizer.show

    def _atom_pieces(self, data: bytes) -> List[Tuple[str, str]]:
        from fastsw.alphabet import atom_text

        show_atom = self.show_atom
        out: List[Tuple[str, str]] = []
        for is_atom, part in self.split_atoms(data):
            if is_atom:
                out.append((ATOM, show_atom(atom_text(part))))
            else:
                out.extend(_bytes_pieces(part))
        return out

    def __call__(self, tid: int) -> tuple:
        form = self.memo.get(tid)
        if form is not None:
            return form
        tok = self.tok
        if tid >= self.n:  # a special token
            text = tok._special_by_id[tid].decode("utf-8")
            form = (tok._special_by_id[tid], ((TEXT, text),), False, False, True, False, None, None)
        else:
            data = tok.vocab[tid]
            if self.atoms:
                pieces = self._atom_pieces(self.decoding[tid])
                marker = any(c in data for c in self.marker_codes)
            else:
                pieces = _bytes_pieces(data)
                marker = False
            rank = count = None
            supermerge = False
            if tid >= self.n_alpha and self.merges:
                m = self.merges[tid - self.n_alpha]
                rank, supermerge = tid - self.n_alpha, bool(m.super)
                count = int(m.count) if self.has_counts else None
            invalid = any(kind == BYTES for kind, _ in pieces)
            form = (data, tuple(pieces), supermerge, marker, False, invalid, rank, count)
        self.memo[tid] = form
        return form


def _forms(tok) -> _Forms:
    forms = tok.__dict__.get("_show_forms")
    if forms is None:
        forms = tok._show_forms = _Forms(tok)
    return forms


def _starts(tok, text: str, ids: List[int]) -> List[int]:
    """Where each token starts in ``text`` for a pre-tokenizer without offsets (SCRIPT with markers): the length
    of what the tokens before it decode to (a piece of a character decodes to nothing, so a token that starts inside
    a character gets that character's offset, as ``encode_with_offsets`` gives it).

    Decoding every prefix would be quadratic, so the ids are cut where one token ends with text and the next starts
    with text: no marker pair (two markers that decode to one space) and no character's atoms cross such a cut, and
    caps codes keep lengths, so the lengths of the pieces add up; each piece's prefixes are decoded on their own.
    If the pieces do not add up to the text, every prefix is decoded after all (:func:`_starts_exact`)."""
    forms = _forms(tok)
    starts: List[int] = []
    base = 0
    piece: List[int] = []
    for t in ids:
        if piece and forms(piece[-1])[1][-1:][0][0] == TEXT and forms(t)[1][:1][0][0] == TEXT:
            base += len(tok.decode(piece, errors="ignore"))
            piece = []
        starts.append(base + (len(tok.decode(piece, errors="ignore")) if piece else 0))
        piece.append(t)
    if base + len(tok.decode(piece, errors="ignore")) != len(text):
        return _starts_exact(tok, ids)
    return starts


def _starts_exact(tok, ids: List[int]) -> List[int]:
    """:func:`_starts` by decoding every prefix (quadratic; the rule itself)."""
    return [len(tok.decode(ids[:k], errors="ignore")) for k in range(len(ids))]


def token_spans(tok, text: str, *, allowed_special: Union[str, set] = "all") -> List[TokenSpan]:
    """``text`` encoded by ``tok`` as :class:`TokenSpan` s, in order; their ``text`` fields join to ``text`` (after
    the model's ``normalize``). Special-token strings in ``text`` are shown as special tokens (``allowed_special``
    as in :meth:`fastsw.Tokenizer.encode`; ``set()`` encodes them as ordinary text).

        >>> import fastsw
        >>> tok = fastsw.train(["low lower lowest"] * 3, vocab_size=250)
        >>> [(s.text, s.start, s.end) for s in token_spans(tok, "low lower")][:2]
        [('low', 0, 3), (' lower', 3, 9)]
    """
    from fastsw.pretokenizers.pretokenize import normalize_text

    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if tok.normalize is not None:
        text = normalize_text(text, tok.normalize)
    try:
        ids, starts = tok.encode_with_offsets(text, allowed_special=allowed_special, disallowed_special=())
    except ValueError:
        if not hasattr(tok.alphabet, "atoms"):
            raise
        ids = tok.encode(text, allowed_special=allowed_special, disallowed_special=())
        starts = _starts(tok, text, ids)
    forms = _forms(tok)
    n = len(ids)
    out = []
    for k, tid in enumerate(ids):
        start = starts[k]
        end = max(start, starts[k + 1] if k + 1 < n else len(text))
        data, pieces, sup, marker, special, invalid, rank, count = forms(tid)
        out.append(
            TokenSpan(tid, data, start, end, text[start:end], pieces, sup, marker, special, invalid, rank, count)
        )
    return out


def _label(tok) -> str:
    kind = f"{tok.algo}, vocab {tok.vocab_size:,}"
    if tok.n_super:
        kind += f", {tok.n_super:,} supermerges"
    return kind


class TokenView:
    """A model's tokens of one or more texts (what :meth:`fastsw.Tokenizer.show` returns): ``str(view)`` is the
    terminal view without colour, :meth:`to_terminal` with colour if asked, and in Jupyter the view is drawn as
    HTML (:meth:`_repr_html_`, hover a token for its id, bytes, merge rank and training count).

    Attributes: ``label`` (the model's name on the views), ``texts`` and ``spans`` (one list of
    :class:`TokenSpan` per text), and the summary :meth:`summary` reads.

        >>> import fastsw
        >>> tok = fastsw.train(["the cat sat on the mat"] * 3, vocab_size=255)
        >>> view = tok.show("the cat")
        >>> view.n_tokens == len(tok.encode("the cat")), "│" in str(view)
        (True, True)
    """

    def __init__(
        self,
        tok,
        texts: Union[str, Sequence[str]],
        *,
        label: Optional[str] = None,
        allowed_special: Union[str, set] = "all",
    ):
        if not hasattr(tok, "encode_with_offsets"):  # (this module must not import the tokenizer, which imports it)
            raise TypeError(f"tok must be a fastsw.Tokenizer, got {type(tok).__name__}")
        if isinstance(texts, str):
            texts = [texts]
        texts = list(texts)
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise TypeError(f"texts[{i}] must be a str, got {type(t).__name__}")
        self.tok = tok
        self.label = label if label is not None else _label(tok)
        self.spans = [token_spans(tok, t, allowed_special=allowed_special) for t in texts]
        self.texts = ["".join(s.text for s in spans) for spans in self.spans]  # normalized, as encoded

    @property
    def n_tokens(self) -> int:
        return sum(map(len, self.spans))

    def summary(self) -> dict:
        """``{"tokens", "bytes", "characters", "bytes_per_token", "chars_per_token", "supermerges", "special"}``
        of the texts shown (bytes in UTF-8; the ratios from :mod:`fastsw.eval.metrics`, None for no tokens)."""
        from fastsw.corpus.counting import _doc_bytes
        from fastsw.eval.metrics import bytes_per_token, chars_per_token

        n = self.n_tokens
        n_bytes = sum(map(_doc_bytes, self.texts))
        n_chars = sum(map(len, self.texts))
        flat = [s for spans in self.spans for s in spans]
        return {
            "tokens": n,
            "bytes": n_bytes,
            "characters": n_chars,
            "bytes_per_token": bytes_per_token(n_bytes, n) if n else None,
            "chars_per_token": chars_per_token(n_chars, n) if n else None,
            "supermerges": sum(s.supermerge for s in flat),
            "special": sum(s.special for s in flat),
        }

    def summary_line(self) -> str:
        s = self.summary()
        if not s["tokens"]:
            return "0 tokens"
        parts = [
            f"{s['tokens']:,} tokens",
            f"{s['bytes_per_token']:.2f} bytes/token",
            f"{s['chars_per_token']:.2f} chars/token",
        ]
        if self.tok.n_super:
            parts.append(f"{s['supermerges']:,} supermerge token" + ("" if s["supermerges"] == 1 else "s"))
        if s["special"]:
            parts.append(f"{s['special']:,} special")
        return " · ".join(parts)

    def to_terminal(
        self, *, color: bool = False, ids: bool = False, width: Optional[int] = None, header: bool = True
    ) -> str:
        """The terminal view: a header line (model), the tokens, a summary line; ``color`` for ANSI colours,
        ``ids`` for a row of token ids under each line of tokens (wrapped at ``width`` cells, default the
        terminal's)."""
        lines = [self.label] if header else []
        for spans in self.spans:
            lines.append(render_terminal(spans, color=color, ids=ids, width=width))
        lines.append(self.summary_line())
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_terminal(color=False)

    def __repr__(self) -> str:
        return f"<TokenView {self.label}: {self.summary_line()}>"

    def to_html(self, *, titles: bool = True) -> str:
        """The view as an HTML fragment (inline CSS), each token a ``<span>`` with a hover title if ``titles``."""
        body = _docs_html(self.spans, titles)
        return (
            f"<div class='fsw'>{_CSS_TAG}<div class='fsw-head'>{html.escape(self.label)}</div>{body}"
            f"<div class='fsw-sum'>{html.escape(self.summary_line())}</div></div>"
        )

    def _repr_html_(self) -> str:
        return self.to_html(titles=True)


def show(tok, text: Union[str, Sequence[str]], **kwargs) -> TokenView:
    """:class:`TokenView` of ``text`` (or of several texts) under ``tok``; ``label`` and ``allowed_special`` as
    :class:`TokenView` takes them."""
    return TokenView(tok, text, **kwargs)


# ---- the terminal ----------------------------------------------------------------------------------------------------

_VISIBLE = {"\n": "↵", "\t": "→", "\r": "␍", "\x7f": "␡", "\x0b": "␋", "\x0c": "␌"}
_RTL = frozenset(("R", "AL"))
_FSI, _PDI = "\u2068", "\u2069"


def _visible_char(ch: str) -> str:
    v = _VISIBLE.get(ch)
    if v is not None:
        return v
    if ord(ch) < 0x20:
        return chr(0x2400 + ord(ch))  # ␀ ␁ ... (control pictures)
    return ch


def display_width(s: str) -> int:
    """Terminal cells of ``s``: two for East Asian wide and fullwidth characters, none for combining marks and
    format characters (bidi isolates, zero-width joiners), one otherwise.

        >>> display_width("日本a"), display_width("e\\u0301")
        (5, 1)
    """
    w = 0
    for ch in s:
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        w += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return w


def _is_rtl(s: str) -> bool:
    return any(unicodedata.bidirectional(ch) in _RTL for ch in s)


# 256-colour backgrounds, black text: regular tokens alternate over the first family, supermerges over the second
_REGULAR_BG = (153, 194, 225, 230)
_SUPER_BG = (214, 180)
_RESET = "\x1b[0m"


def _style(span: TokenSpan, k: int, color: bool) -> Tuple[str, str]:
    """(opening, closing) of a token in the terminal."""
    if not color:
        if span.special:
            return "⟦", "⟧"
        if span.supermerge:
            return "⟪", "⟫"
        return "", ""
    if span.special:
        return "\x1b[1;38;5;231;48;5;90m", _RESET
    if span.supermerge:
        return f"\x1b[4;38;5;16;48;5;{_SUPER_BG[k % len(_SUPER_BG)]}m", _RESET
    return f"\x1b[38;5;16;48;5;{_REGULAR_BG[k % len(_REGULAR_BG)]}m", _RESET


def _cells(span: TokenSpan, k: int, color: bool) -> Tuple[List[Tuple[str, int]], bool]:
    """A token drawn for the terminal: its lines (it is cut after each newline it holds, drawn ``↵``) as
    ``(drawn, display width)``, and whether it ends with a newline (then the next token starts a new line)."""
    open_, close = _style(span, k, color)
    lines: List[List[str]] = [[]]
    plain: List[List[str]] = [[]]
    for kind, s in span.pieces:
        if kind == BYTES:
            s = f"‹{s}›"
        for i, seg in enumerate(s.split("\n") if kind == TEXT else [s]):
            if i:  # the newline before this segment
                lines[-1].append("↵")
                plain[-1].append("↵")
                lines.append([])
                plain.append([])
            if not seg:
                continue
            if kind == TEXT:
                seg = "".join(map(_visible_char, seg))
            plain[-1].append(seg)
            if color and kind == ATOM and not span.special:
                seg = f"\x1b[1;38;5;160m{seg}\x1b[22;38;5;16m"
            elif color and kind == BYTES:
                seg = f"\x1b[3;38;5;124m{seg}\x1b[23;38;5;16m"
            lines[-1].append(seg)
    ends_line = span.shown.endswith("\n")
    if ends_line:
        lines.pop()
        plain.pop()
    out = []
    for drawn_parts, text_parts in zip(lines, plain):
        drawn, text = "".join(drawn_parts), "".join(text_parts)
        if _is_rtl(text):  # bidi isolates: a terminal reorders inside this token, never across tokens
            drawn = f"{_FSI}{drawn}{_PDI}"
        out.append(
            (f"{open_}{drawn}{close}", display_width(open_ + text + close) if not color else display_width(text))
        )
    return out, ends_line


def render_terminal(
    spans: Sequence[TokenSpan], *, color: bool = False, ids: bool = False, width: Optional[int] = None
) -> str:
    """The tokens of one text for the terminal (see the module notes for the look); with ``ids``, a row of ids
    under each line of tokens, every id left-aligned under its token, lines wrapped at ``width`` cells (default:
    the terminal's width, 100 when there is no terminal)."""
    if not ids:
        out: List[str] = []
        for k, span in enumerate(spans):
            lines, ends = _cells(span, k, color)
            out.append("\n".join(drawn for drawn, _ in lines))
            if ends:
                out.append("\n")
            elif not color and k + 1 < len(spans):
                out.append("│")
        return "".join(out)
    if width is None:
        import shutil

        width = shutil.get_terminal_size((100, 24)).columns
    width = max(width, 20)
    rows: List[str] = []
    tok_row: List[str] = []
    id_row: List[str] = []
    used = 0

    def flush():
        nonlocal tok_row, id_row, used
        if tok_row:
            rows.append("".join(tok_row).rstrip(" "))
            rows.append("".join(id_row).rstrip(" "))
        tok_row, id_row, used = [], [], 0

    for k, span in enumerate(spans):
        lines, ends = _cells(span, k, color)
        for i, (drawn, w) in enumerate(lines):
            if i:
                flush()
            label = str(span.id) if i == 0 else ""
            cell = max(w, len(label)) + 1
            if used and used + cell > width:
                flush()
            tok_row.append(drawn + " " * (cell - w))
            id_row.append(label + " " * (cell - len(label)))
            used += cell
        if ends:
            flush()
    flush()
    return "\n".join(rows)


def use_color(choice: str = "auto", stream=None) -> bool:
    """Whether to draw colours: ``"always"``, ``"never"``, or ``"auto"`` = only when ``stream`` (default stdout)
    is a terminal, the environment variable ``NO_COLOR`` is unset or empty (https://no-color.org) and ``TERM``
    is not ``dumb``."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    if choice != "auto":
        raise ValueError(f"color={choice!r} must be 'auto', 'always' or 'never'")
    import sys

    stream = sys.stdout if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def legend(color: bool) -> str:
    """One line that says how the terminal view marks things."""
    if not color:
        return (
            "key: │ between tokens, ⟪supermerge⟫, ⟦special⟧, ¦ ↑ ⇑ markers and caps codes, "
            "‹E6 97› bytes of a split character, ↵ → newline and tab"
        )
    a = _style(TokenSpan(0, b"", 0, 0, "", ()), 0, True)
    b = _style(TokenSpan(0, b"", 0, 0, "", ()), 1, True)
    s = _style(TokenSpan(0, b"", 0, 0, "", (), supermerge=True), 0, True)
    sp = _style(TokenSpan(0, b"", 0, 0, "", (), special=True), 0, True)
    return (
        f"key: {a[0]}token{a[1]}{b[0]}token{b[1]} {s[0]}supermerge{s[1]} {sp[0]}special{sp[1]} "
        "\x1b[1;38;5;160m¦ ↑ ⇑\x1b[0m markers and caps codes  \x1b[3;38;5;124m‹E6 97›\x1b[0m bytes of a split "
        "character  ↵ → newline and tab"
    )


# ---- HTML ------------------------------------------------------------------------------------------------------------

_CSS = """
.fsw{font:14px/1.5 system-ui,sans-serif;color:#222}
.fsw-head{font-weight:600;margin:4px 0}
.fsw-docs{border:1px solid #ddd;border-radius:4px;margin:4px 0;background:#fff;padding:2px 8px}
.fsw-doc{white-space:pre-wrap;word-break:break-word;font:15px/1.9 ui-monospace,'DejaVu Sans Mono',monospace;
 padding:4px 0}
.fsw-doc+.fsw-doc{border-top:1px dotted #ccc}
.fsw-doc .t{unicode-bidi:isolate;border-radius:2px;padding:1px 0;cursor:default}
.fsw-doc .c0{background:#cfe3ff}.fsw-doc .c1{background:#d6f5d6}.fsw-doc .c2{background:#f8d5e8}
.fsw-doc .c3{background:#fff3c4}
.fsw-doc .s0{background:#ffb347;text-decoration:underline;text-decoration-thickness:2px}
.fsw-doc .s1{background:#f5c78e;text-decoration:underline;text-decoration-thickness:2px}
.fsw-doc .sp{background:#5b1f6b;color:#fff;font-weight:600}
.fsw-doc .a{color:#c00;font-weight:700}
.fsw-doc .b{color:#900;font-style:italic;font-size:80%;border:1px dashed #c66;border-radius:2px}
.fsw-doc .w{color:#888}
.fsw-doc .t:hover,.fsw-doc .t.on{outline:2px solid #333}
.fsw-sum{color:#555;font-size:13px}
"""
_CSS_TAG = f"<style>{_CSS}</style>"


def _token_class(span: TokenSpan, k: int) -> str:
    if span.special:
        return "sp"
    if span.supermerge:
        return f"s{k % 2}"
    return f"c{k % 4}"


def _span_inner(span: TokenSpan) -> str:
    out = []
    for kind, s in span.pieces:
        if kind == ATOM:
            out.append(f"<span class='a'>{html.escape(s)}</span>")
        elif kind == BYTES:
            out.append(f"<span class='b'>{html.escape(s)}</span>")
        else:
            buf = []
            for ch in s:
                v = _visible_char(ch)
                if v != ch:
                    buf.append(f"<span class='w'>{v}</span>" + ("\n" if ch == "\n" else ""))
                else:
                    buf.append(html.escape(ch))
            out.append("".join(buf))
    return "".join(out)


def _title(span: TokenSpan) -> str:
    facts = [
        f"id {span.id}",
        "bytes " + (span.bytes.hex(" ").upper() or "(none)"),
        "in the text " + json.dumps(span.text, ensure_ascii=False),
    ]
    if span.rank is not None:
        facts.append(f"merge rank {span.rank}")
    if span.supermerge:
        facts.append("supermerge")
    if span.special:
        facts.append("special token")
    if span.count is not None:
        facts.append(f"training count {span.count:,}")
    return " · ".join(facts)


def _doc_html(spans: Sequence[TokenSpan], titles: bool) -> str:
    parts = []
    for k, span in enumerate(spans):
        title = f" title='{html.escape(_title(span), quote=True)}'" if titles else ""
        # the characters it stands for, where they differ from what it shows (markers, pieces of a character)
        covers = f" data-x='{html.escape(span.text, quote=True)}'" if span.text != span.shown else ""
        parts.append(
            f"<span class='t {_token_class(span, k)}' data-t='{span.id}'{covers}{title}>{_span_inner(span)}</span>"
        )
    return f"<div class='fsw-doc' dir='auto' data-n='{len(spans)}'>{''.join(parts)}</div>"


def _docs_html(views_spans: Sequence[Sequence[TokenSpan]], titles: bool) -> str:
    """The documents of a text, one block each, in one frame (documents are encoded one by one)."""
    return "<div class='fsw-docs'>" + "".join(_doc_html(spans, titles) for spans in views_spans) + "</div>"


# ---- the comparison page ---------------------------------------------------------------------------------------------


@dataclass
class Sample:
    """The part of a language's text a page shows: ``documents`` (the shown texts, the last one possibly cut),
    ``shown_chars`` of ``total_chars`` characters and the number of ``total_documents`` (None when not known)."""

    documents: List[str]
    shown_chars: int
    total_chars: Optional[int] = None
    total_documents: Optional[int] = None
    source: str = ""
    complete: bool = False  # every document was taken whole

    def note(self) -> str:
        """What part of the text is shown, for the reader."""
        docs = len(self.documents)
        if self.total_chars is None:
            if self.complete:
                return f"showing all {self.shown_chars:,} characters ({_docs(docs)})"
            return f"showing the first {self.shown_chars:,} characters"
        if self.shown_chars >= self.total_chars:
            return f"showing all {self.total_chars:,} characters ({_docs(self.total_documents or docs)})"
        share = 100 * self.shown_chars / self.total_chars if self.total_chars else 100
        of = f" of {self.total_documents:,}" if self.total_documents is not None else ""
        return (
            f"showing the first {self.shown_chars:,} of {self.total_chars:,} characters ({share:.2g} %; "
            f"{docs:,}{of} documents)"
        )


def _docs(n: int) -> str:
    return f"{n:,} document" + ("" if n == 1 else "s")


def sample_documents(documents, max_chars: Optional[int]) -> Sample:
    """The first documents of ``documents`` (an iterable of ``str``, read lazily) up to ``max_chars`` characters in
    all (None: all of them); the last one is cut at the last whitespace of its final quarter when there is one.

        >>> s = sample_documents(["one two three", "four"], 9)
        >>> s.documents, s.shown_chars
        (['one two '], 8)
    """
    if max_chars is not None and max_chars < 1:
        raise ValueError(f"max_chars={max_chars} must be >= 1")
    docs: List[str] = []
    used = 0
    it = iter(documents)
    for doc in it:
        if max_chars is not None and used + len(doc) > max_chars:
            room = max_chars - used
            cut = doc[:room]
            space = max(cut.rfind(" "), cut.rfind("\n"))
            if space >= room * 3 // 4 and space > 0:
                cut = cut[: space + 1]
            if cut:
                docs.append(cut)
                used += len(cut)
            return Sample(docs, used)
        docs.append(doc)
        used += len(doc)
        if max_chars is not None and used >= max_chars:
            return Sample(docs, used, complete=next(it, None) is None)
    return Sample(docs, used, complete=True)


_PAGE_CSS = """
body{margin:0;padding:16px 24px 80px;font:14px/1.5 system-ui,sans-serif;color:#222;background:#fafafa}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 4px;border-bottom:1px solid #ccc}
h3{font-size:15px;margin:16px 0 4px}
.cmd{font:12px ui-monospace,monospace;color:#555;background:#eee;padding:4px 6px;border-radius:3px;
 overflow-wrap:anywhere}
.note{color:#666;font-size:13px;margin:2px 0 8px}
.cols{display:grid;gap:12px}
.col{min-width:0}
table{border-collapse:collapse;margin:6px 0 12px;font-size:13px;background:#fff}
th,td{border:1px solid #ccc;padding:2px 8px;text-align:right}th{background:#f0f0f0}
td:first-child,th:first-child{text-align:left}
.charts img{max-width:48%;margin:4px;border:1px solid #ddd;background:#fff}
.key span.t{margin-right:6px;padding:1px 4px}
#card{position:absolute;display:none;z-index:10;background:#fff;border:1px solid #888;border-radius:6px;
 box-shadow:0 2px 10px rgba(0,0,0,.25);padding:8px 10px;font:13px/1.45 system-ui,sans-serif;min-width:220px;
 max-width:420px;pointer-events:none}
#card dl{display:grid;grid-template-columns:auto 1fr;gap:0 10px;margin:0}
#card dt{color:#666}#card dd{margin:0;font-family:ui-monospace,monospace;overflow-wrap:anywhere}
"""

_PAGE_JS = """
(function(){
  var models = JSON.parse(document.getElementById('fsw-data').textContent);
  var card = document.getElementById('card'), cur = null;
  function row(k, v){ return '<dt>' + k + '</dt><dd>' + v + '</dd>'; }
  function esc(s){ return String(s).replace(/[&<>"']/g, function(c){
    return {'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'}[c]; }); }
  function show(el){
    var m = models[+el.closest('.col').dataset.model], info = m.tokens[el.dataset.t];
    var k = Array.prototype.indexOf.call(el.parentNode.children, el);
    if (!info) return;
    var kind = info[4].length ? info[4].join(', ') : 'regular';
    var html = '<div><b>' + esc(m.label) + '</b></div><dl>' + row('id', '<span id="card-id">' + el.dataset.t +
      '</span>') + row('bytes', esc(info[0] || '(none)')) + row('text', esc(info[1])) +
      row('merge rank', info[2] === null ? '— (alphabet or special)' : info[2]) +
      row('supermerge', info[4].indexOf('supermerge') >= 0 ? 'yes' : 'no') +
      row('training count', info[3] === null ? '—' : Number(info[3]).toLocaleString('en')) +
      row('in the text', esc(JSON.stringify(el.dataset.x !== undefined ? el.dataset.x : info[1]))) +
      row('kind', esc(kind)) + row('token', '#' + (k + 1) + ' of ' + el.parentNode.children.length) + '</dl>';
    card.innerHTML = html;
    var r = el.getBoundingClientRect();
    card.style.display = 'block';
    var left = window.scrollX + r.left, top = window.scrollY + r.bottom + 6;
    var w = card.offsetWidth;
    if (left + w > window.scrollX + document.documentElement.clientWidth - 8)
      left = Math.max(window.scrollX + 8, window.scrollX + document.documentElement.clientWidth - w - 8);
    card.style.left = left + 'px'; card.style.top = top + 'px';
    if (cur) cur.classList.remove('on');
    cur = el; el.classList.add('on');
  }
  document.addEventListener('mouseover', function(e){
    var el = e.target.closest ? e.target.closest('section .fsw-doc .t') : null;
    if (el) show(el);
  });
  document.addEventListener('mouseout', function(e){
    var el = e.target.closest ? e.target.closest('section .fsw-doc .t') : null;
    if (el && !(e.relatedTarget && el.contains(e.relatedTarget))) {
      card.style.display = 'none'; el.classList.remove('on'); cur = null; }
  });
})();
"""


def _token_table(views: Sequence[TokenView]) -> dict:
    """``{id: [hex, text, rank, count, [kinds]]}`` of every token the views show (the hover card's facts)."""
    table = {}
    for view in views:
        for spans in view.spans:
            for s in spans:
                if s.id in table:
                    continue
                kinds = [
                    name
                    for name, on in (
                        ("supermerge", s.supermerge),
                        ("special token", s.special),
                        ("marker/caps code", s.marker),
                        ("piece of a character (not UTF-8 alone)", s.invalid_utf8),
                    )
                    if on
                ]
                table[s.id] = [s.bytes.hex(" ").upper(), s.shown, s.rank, s.count, kinds]
    return table


def page_html(
    models: Mapping[str, object],
    samples: Mapping[str, Sample],
    *,
    metrics: str = "",
    command: str = "",
    title: str = "fastsw: tokens compared",
    allowed_special: Union[str, set] = "all",
) -> str:
    """One self-contained HTML page (inline CSS and JavaScript, no network): per language, the sample tokenized by
    every model (``{label: Tokenizer}``) side by side, a hover card per token (id, bytes in hex and as text, merge
    rank, supermerge or not, training count); then ``metrics``, an HTML fragment (``fastsw eval``'s tables and
    charts, :func:`fastsw.eval.evaluate.metrics_html`). ``command`` is printed at the top (the command that made the
    page). :func:`fastsw.eval.evaluate.tokens_page` makes the page of an evaluation."""
    labels = list(models)
    if not labels:
        raise ValueError("models is empty; give at least one model")
    if not samples:
        raise ValueError("samples is empty; give at least one text")
    views_by_lang = {
        lang: [TokenView(models[label], s.documents, label=label, allowed_special=allowed_special) for label in labels]
        for lang, s in samples.items()
    }
    data = []
    for i, label in enumerate(labels):
        table = _token_table([views[i] for views in views_by_lang.values()])
        data.append({"label": label, "tokens": table})
    cols = f"grid-template-columns:repeat({len(labels)},minmax(0,1fr))"
    sections = []
    for lang, views in views_by_lang.items():
        s = samples[lang]
        source = f" ({html.escape(s.source)})" if s.source else ""
        colhtml = []
        for i, view in enumerate(views):
            docs = _docs_html(view.spans, False)
            colhtml.append(
                f"<div class='col fsw' data-model='{i}'><div class='fsw-head'>{html.escape(view.label)}"
                f" <span class='note'>{html.escape(_label(view.tok))}</span></div>"
                f"<div class='fsw-sum'>{html.escape(view.summary_line())}</div>{docs}</div>"
            )
        sections.append(
            f"<section data-lang='{html.escape(lang, quote=True)}'><h2>{html.escape(lang)}</h2>"
            f"<div class='note'>{html.escape(s.note())}{source}</div>"
            f"<div class='cols' style='{cols}'>{''.join(colhtml)}</div></section>"
        )
    key = (
        "<div class='fsw key note'><div class='fsw-doc' style='display:inline-block;white-space:normal;padding:4px 8px;background:#fff'>"
        "<span class='t c0'>token</span><span class='t c1'>token</span><span class='t s0'>supermerge</span>"
        "<span class='t sp'>special</span><span class='t c2'><span class='a'>¦ ↑ ⇑</span> markers, caps codes"
        "</span><span class='t c3'><span class='b'>E6 97</span> bytes of a split character</span></div> "
        "Hover a token for its id, bytes, merge rank and training count.</div>"
    )
    cmd = f"<div class='cmd'>{html.escape(command)}</div>" if command else ""
    payload = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width,initial-scale=1'>"
        f"<title>{html.escape(title)}</title><style>{_CSS}{_PAGE_CSS}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>{cmd}{key}{''.join(sections)}{metrics}"
        f"<div id='card' role='tooltip'></div>"
        f"<script type='application/json' id='fsw-data'>{payload}</script>"
        f"<script>{_PAGE_JS}</script></body></html>\n"
    )


def write_page(path, models: Mapping[str, object], samples: Mapping[str, Sample], **kwargs) -> str:
    """:func:`page_html` written to ``path`` atomically (a temporary file renamed over it); returns ``path``."""
    from fastsw.files import atomic_write_text

    text = page_html(models, samples, **kwargs)
    atomic_write_text(path, text)
    return os.fspath(path)


def render_models(
    models: Mapping[str, object],
    texts: Mapping[str, object],
    *,
    sample_chars: Optional[int] = None,
    color: bool = False,
    ids: bool = False,
    allowed_special: Union[str, set] = "all",
    headers: bool = False,
) -> str:
    """``fastsw show``'s terminal output: for each text (``{language: iterable of documents}``, sampled to
    ``sample_chars``; with ``headers`` a line naming the language and how much is shown), every model
    (``{label: Tokenizer}``) one under the other -- a header line, the tokens, a summary line -- then a key to the
    colours when ``color``."""
    out: List[str] = []
    for lang, documents in texts.items():
        sample = sample_documents(documents, sample_chars)
        if headers or sample_chars is not None:
            out.append((f"── {lang} ({sample.note()})" if headers else f"── {sample.note()}") + "\n")
        for i, (label, tok) in enumerate(models.items()):
            view = TokenView(tok, sample.documents, label=f"{label} · {_label(tok)}", allowed_special=allowed_special)
            out.append(view.label + "\n")
            for spans in view.spans:
                body = render_terminal(spans, color=color, ids=ids)
                out.append(body + ("" if body.endswith("\n") or not body else "\n"))
            out.append(view.summary_line() + "\n")
            if i + 1 < len(models):
                out.append("\n")
    if color:
        out.append(legend(True) + "\n")
    return "".join(out)
