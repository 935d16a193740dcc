"""Evaluate tokenizers per language (``fastsw eval``): every model on every text, as one JSON-ready result.

This module owns the evaluation loop and its outputs (the markdown table, ``report.md``, ``report.json``, the
PNG charts, and the metrics of the tokens page, whose tokens :mod:`fastsw.eval.show` draws); the numbers themselves come
from :mod:`fastsw.eval.metrics` (``text_metrics``, ``gini``), never from a formula written here. matplotlib is imported
only to draw the charts (:func:`write_report`, :func:`metrics_html`).

    >>> import fastsw
    >>> from fastsw.eval.evaluate import evaluate
    >>> tok = fastsw.train(["low lower lowest"] * 3, vocab_size=250)
    >>> result = evaluate({"toy": tok}, {"en": ["low lower"], "de": ["lowest"]})
    >>> result["models"][0]["gini_of"], sorted(result["models"][0]["languages"])
    ('tokens', ['de', 'en'])

Design notes: see docs/internals.md, section "Evaluation".
"""

from __future__ import annotations

import io
import json
import os
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from fastsw._types import PathLike
from fastsw.eval import metrics
from fastsw.eval.duplication import model_duplication

if TYPE_CHECKING:
    from fastsw.progress import Progress
    from fastsw.tokenizer import Tokenizer

__all__ = [
    "evaluate",
    "markdown_table",
    "write_report",
    "metrics_html",
    "tokens_page",
    "REPORT_FILES",
    "MATPLOTLIB_MISSING",
]

#: Files :func:`write_report` always writes (plus ``supermerges.png`` when a model has supermerges).
REPORT_FILES = ("report.md", "report.json", "compression.png", "gini.png", "token_ratio.png")
MATPLOTLIB_MISSING = "install matplotlib (pip install matplotlib) for --report"
#: At most this many (index, count) points of each model's supermerge count curve are kept in the result.
CURVE_POINTS = 512


def _label(item, index: int) -> str:
    return os.fspath(item) if isinstance(item, (str, os.PathLike)) else f"model {index}"


def _load_models(models) -> List[Tuple[str, Tokenizer]]:
    """``[(label, Tokenizer)]`` from a mapping ``{label: Tokenizer or path}`` or a sequence of Tokenizers/paths."""
    from fastsw.tokenizer import Tokenizer

    if isinstance(models, (str, os.PathLike)):
        models = [models]
    items = list(models.items()) if isinstance(models, Mapping) else [(_label(m, i), m) for i, m in enumerate(models)]
    if not items:
        raise ValueError("models is empty; pass at least one model (a path or a Tokenizer)")
    out = []
    for label, model in items:
        if isinstance(model, (str, os.PathLike)):
            model = Tokenizer.load(model)  # errors name the path
        elif not isinstance(model, Tokenizer):
            raise TypeError(f"model {label!r} is a {type(model).__name__}; pass a model path or a fastsw.Tokenizer")
        out.append((str(label), model))
    return out


def _read_texts(texts, reading: Optional[dict]) -> Dict[str, list]:
    """``{language: [documents]}``; a path (or list of paths) is read with :func:`fastsw.iter_documents`."""
    from fastsw.corpus.readers import iter_documents

    if not isinstance(texts, Mapping) or not texts:
        raise ValueError(
            "texts must be a non-empty mapping {language: path or list of documents}, e.g. {'en': 'test.en.jsonl'}"
        )
    out = {}
    for lang, source in texts.items():
        if not isinstance(lang, str) or not lang:
            raise ValueError(f"language {lang!r} must be a non-empty str, e.g. 'en'")
        shown = f"{lang}={os.fspath(source)}" if isinstance(source, (str, os.PathLike)) else lang
        if isinstance(source, (str, os.PathLike)):
            docs = list(iter_documents(Path(source), **(reading or {})))
        elif isinstance(source, (list, tuple)) and source and all(isinstance(s, os.PathLike) for s in source):
            docs = list(iter_documents(list(source), **(reading or {})))
        else:
            docs = metrics._texts(source) if source else []
        if not docs:
            raise ValueError(f"text {shown} has no documents; give a non-empty text for language {lang}")
        if not any(docs):
            raise ValueError(f"text {shown} has only empty documents; give some text for language {lang}")
        out[lang] = docs
    return out


def _curve(tok) -> List[List[int]]:
    """The supermerges' training counts in merge order (seed 000 Figure 10), as ``[index, count]`` points, index
    counted from 1 among supermerges; evenly thinned to :data:`CURVE_POINTS`, the first and last kept."""
    counts = [m.count for m in tok.merges if m.super]
    n = len(counts)
    picks: Iterable[int]
    if n <= CURVE_POINTS:
        picks = range(n)
    else:
        picks = sorted({round(k * (n - 1) / (CURVE_POINTS - 1)) for k in range(CURVE_POINTS)})
    return [[i + 1, int(counts[i])] for i in picks]


def evaluate(
    models: Union[Mapping[str, Union["Tokenizer", PathLike]], Sequence[Union["Tokenizer", PathLike]]],
    texts: Mapping[str, Any],
    *,
    alpha: float = 2.5,
    reading: Optional[dict] = None,
    progress: Optional["Progress"] = None,
) -> dict:
    """Encode every text with every model and measure it with :func:`fastsw.eval.metrics.text_metrics`.

    ``models``: a sequence of model paths or :class:`~fastsw.Tokenizer` objects (labelled by the path, or
    ``"model i"``), or a mapping ``{label: path or Tokenizer}``. ``texts``: a mapping ``{language: path}`` (a file
    as :func:`fastsw.iter_documents` reads it, options in ``reading``) or ``{language: [documents]}``. ``progress``:
    an optional :class:`fastsw.progress.Progress`, advanced once per (model, language).

    Returns a JSON-ready dict, models in the order given::

        {"models": [{"model": LABEL, "algo": ..., "vocab_size": N, "supermerges": S,
                     "languages": {LANG: {"documents", "bytes", "characters", "tokens", "bytes_per_token",
                                          "chars_per_token", "documents_per_token", "renyi_efficiency",
                                          "token_ratio"}},
                     "gini": G, "gini_of": "tokens" | "tokens_per_byte",
                     "supermerge_counts": [[index, count], ...],
                     "duplication": {"space": s, "case": c}}],   # seed 002 Table 5 (fastsw.pretokenizers.boundary)
         "parallel": bool, "reference_language": LANG}

    ``token_ratio`` is the language's tokens (parallel texts) or tokens per byte (otherwise) divided by the
    reference language's (``en`` if given, else the first language).

        >>> import fastsw
        >>> tok = fastsw.train(["ab ab"], vocab_size=244)
        >>> r = evaluate([tok], {"en": ["ab ab"], "de": ["a b a"]})   # [ab][ ][ab] and [a][ ][b][ ][a]
        >>> r["models"][0]["languages"]["de"]["token_ratio"], r["models"][0]["gini_of"]   # 5 tokens / 3
        (1.6666666666666667, 'tokens')
    """
    loaded = _load_models(models)  # models first: loading is cheap, reading a large text is not
    docs = _read_texts(texts, reading)
    langs = list(docs)
    reference = "en" if "en" in docs else langs[0]
    parallel = len({len(d) for d in docs.values()}) == 1
    gini_of = "tokens" if parallel else "tokens_per_byte"
    entries = []
    for label, tok in loaded:
        per_lang = {}
        for lang in langs:
            try:
                per_lang[lang] = metrics.text_metrics(tok, docs[lang], alpha=alpha)
            except ValueError as e:
                raise ValueError(f"model {label} on text {lang}: {e}") from e
            if progress is not None:
                progress.update(1)
        # the quantity compared across languages: tokens (parallel) or tokens per byte, exact
        quantity = {
            lang: Fraction(int(m["tokens"])) if parallel else Fraction(int(m["tokens"]), int(m["bytes"]))
            for lang, m in per_lang.items()
        }
        for lang in langs:
            per_lang[lang]["token_ratio"] = float(quantity[lang] / quantity[reference])
        entries.append(
            {
                "model": label,
                "algo": tok.algo,
                "vocab_size": tok.vocab_size,
                "supermerges": tok.n_super,
                "languages": per_lang,
                "gini": metrics.gini(quantity),
                "gini_of": gini_of,
                "supermerge_counts": _curve(tok),
                "duplication": model_duplication(tok),
            }
        )
    return {"models": entries, "parallel": parallel, "reference_language": reference}


_COLUMNS = (
    ("documents", "docs"),
    ("bytes", "bytes"),
    ("characters", "chars"),
    ("tokens", "tokens"),
    ("bytes_per_token", "bytes/token"),
    ("chars_per_token", "chars/token"),
    ("documents_per_token", "docs/token"),
    ("renyi_efficiency", "Rényi eff."),
    ("token_ratio", "ratio"),
)


def _cell(value) -> str:
    """Counts as they are; floats with 4 decimals, or 4 significant digits below 0.01 (docs/token)."""
    if isinstance(value, int):
        return str(value)
    value += 0.0  # -0.0 (the Rényi efficiency of a one-token text) is shown as 0.0000
    return f"{value:.4f}" if value == 0 or abs(value) >= 0.01 else f"{value:.3e}"


def markdown_table(result: dict) -> str:
    """The result of :func:`evaluate` as markdown: one row per model × language, then one row per model with its
    Gini coefficient. ``ratio`` is the language's token count (parallel) or tokens per byte against the
    reference language's. Floats have 4 decimals (4 significant digits below 0.01).

        >>> import fastsw
        >>> tok = fastsw.train(["ab ab"], vocab_size=244)
        >>> print(markdown_table(evaluate({"toy": tok}, {"en": ["ab ab"]})).splitlines()[2])   # [ab][ ][ab]
        | toy | en | 1 | 5 | 5 | 3 | 1.6667 | 1.6667 | 0.3333 | 0.1032 | 1.0000 |
    """
    ref = result["reference_language"]
    ratio = f"tokens vs {ref}" if result["parallel"] else f"tokens/byte vs {ref}"
    head = ["model", "language"] + [ratio if key == "token_ratio" else h for key, h in _COLUMNS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for entry in result["models"]:
        for lang, m in entry["languages"].items():
            lines.append("| " + " | ".join([entry["model"], lang] + [_cell(m[key]) for key, _ in _COLUMNS]) + " |")
    of = "token counts (parallel texts)" if result["parallel"] else "tokens per byte (texts not parallel)"
    lines += ["", f"| model | Gini of {of} |", "|---|---|"]
    lines += [f"| {e['model']} | {e['gini']:.4f} |" for e in result["models"]]
    if all("duplication" in e for e in result["models"]):  # seed 002 Table 5: shares of the vocabulary
        lines += ["", "| model | space duplicates | case duplicates |", "|---|---|---|"]
        lines += [
            f"| {e['model']} | {100 * e['duplication']['space']:.1f} % | {100 * e['duplication']['case']:.1f} % |"
            for e in result["models"]
        ]
    return "\n".join(lines) + "\n"


def to_json(result: dict) -> str:
    """The one-line JSON text of a result (what ``fastsw eval --json`` prints and ``report.json`` holds)."""
    return json.dumps(result, ensure_ascii=False)


def _figure_class():
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(MATPLOTLIB_MISSING) from None
    return Figure


def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    return buffer.getvalue()


def _bars(Figure, result: dict, key: str, title: str, ylabel: str) -> bytes:
    """Grouped bars: one group per language, one bar per model."""
    models = result["models"]
    langs = list(models[0]["languages"])
    fig = Figure(figsize=(max(6.0, 0.6 * len(langs) * max(1, len(models)) + 2), 4))
    ax = fig.add_subplot()
    width = 0.8 / len(models)
    for k, entry in enumerate(models):
        xs = [i + (k - (len(models) - 1) / 2) * width for i in range(len(langs))]
        ax.bar(xs, [entry["languages"][lang][key] for lang in langs], width, label=entry["model"])
    ax.set_xticks(range(len(langs)))
    ax.set_xticklabels(langs)
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize="small")
    return _png(fig)


def _charts(result: dict) -> Dict[str, bytes]:
    Figure = _figure_class()
    ref = result["reference_language"]
    quantity = "token count" if result["parallel"] else "tokens per byte"
    charts = {
        "compression.png": _bars(Figure, result, "bytes_per_token", "Compression per language", "bytes per token"),
        "token_ratio.png": _bars(
            Figure, result, "token_ratio", f"{quantity.capitalize()} relative to {ref}", f"{quantity} / {ref}'s"
        ),
    }
    fig = Figure(figsize=(max(4.0, 1.2 * len(result["models"]) + 2), 4))
    ax = fig.add_subplot()
    ax.bar(range(len(result["models"])), [e["gini"] for e in result["models"]])
    ax.set_xticks(range(len(result["models"])))
    ax.set_xticklabels([e["model"] for e in result["models"]], rotation=20, ha="right")
    ax.set_title(
        "Gini coefficient of " + ("token counts" if result["parallel"] else "tokens per byte") + " across languages"
    )
    ax.set_ylabel("Gini")
    charts["gini.png"] = _png(fig)
    curves = [e for e in result["models"] if e["supermerge_counts"]]
    if curves:
        fig = Figure(figsize=(6, 4))
        ax = fig.add_subplot()
        for e in curves:
            ax.plot(
                [p[0] for p in e["supermerge_counts"]],
                [p[1] for p in e["supermerge_counts"]],
                label=f"{e['model']} ({e['supermerges']} supermerges)",
            )
        ax.set_yscale("log")
        ax.set_xlabel("supermerge (in merge order)")
        ax.set_ylabel("merge count in training")
        ax.set_title("Supermerge counts (seed 000 Figure 10)")
        ax.legend(fontsize="small")
        charts["supermerges.png"] = _png(fig)
    return charts


def write_report(
    result: dict, directory: Union[str, os.PathLike], pages: Optional[Mapping[str, str]] = None
) -> List[str]:
    """Write ``report.md`` (the :func:`markdown_table` and the charts), ``report.json`` (the result, as
    ``fastsw eval --json`` prints it) and the PNG charts ``compression.png`` (bytes per token per language per
    model), ``gini.png`` (Gini per model), ``token_ratio.png`` (against the reference language) and, when a model
    has supermerges, ``supermerges.png`` (their training counts in merge order) into ``directory`` (created if
    missing). ``pages`` (``{file name: HTML}``, e.g. ``fastsw eval``'s ``tokens.html`` from
    :func:`tokens_page`) are written with them and linked from ``report.md``. Every chart is drawn before the
    first file is written, and the report is written whole or not at all (a temporary folder, renamed). Needs
    matplotlib. Returns the paths written.

        >>> import fastsw, tempfile
        >>> tok = fastsw.train(["ab ab"], vocab_size=244)
        >>> paths = write_report(evaluate({"toy": tok}, {"en": ["ab"]}), tempfile.mkdtemp())
        >>> sorted(os.path.basename(p) for p in paths)[:2]
        ['compression.png', 'gini.png']
    """
    charts = _charts(result)
    pictures = "\n".join(f"![{name[:-4]}]({name})" for name in charts)
    links = "".join(
        f"[See the tokens]({name})\n\n" if name == "tokens.html" else f"[{name}]({name})\n\n" for name in (pages or {})
    )
    markdown = f"# fastsw eval\n\n{links}{markdown_table(result)}\n{pictures}\n"
    files = {
        "report.md": markdown.encode("utf-8"),
        "report.json": (to_json(result) + "\n").encode("utf-8"),
        **charts,
        **{name: text.encode("utf-8") for name, text in (pages or {}).items()},
    }
    return _write_whole(Path(directory), files)


# ---- the tokens page (fastsw.eval.show draws the tokens; the metrics are this module's) --------------------------------


def metrics_html(result: dict) -> str:
    """The result of :func:`evaluate` as an HTML fragment: per model a table of the :func:`markdown_table` columns,
    its Gini coefficient, duplication and size, then the charts as inline PNG (without matplotlib a note says so)."""
    import base64
    import html

    ref = result["reference_language"]
    ratio = f"tokens vs {ref}" if result["parallel"] else f"tokens/byte vs {ref}"
    head = "".join(f"<th>{html.escape(ratio if key == 'token_ratio' else h)}</th>" for key, h in _COLUMNS)
    of = "token counts (parallel texts)" if result["parallel"] else "tokens per byte (texts not parallel)"
    out = [
        "<section id='metrics'><h2>Metrics</h2><div class='note'>fastsw eval on the whole texts (not only the "
        "samples above)</div>"
    ]
    for e in result["models"]:
        rows = "".join(
            f"<tr><td>{html.escape(lang)}</td>" + "".join(f"<td>{_cell(m[key])}</td>" for key, _ in _COLUMNS) + "</tr>"
            for lang, m in e["languages"].items()
        )
        notes = [f"Gini of {of} across languages: <b>{e['gini']:.4f}</b>"]
        if "duplication" in e:
            d = e["duplication"]
            notes.append(
                f"duplication: {100 * d['space']:.1f} % of entries differ from another only by a leading "
                f"space, {100 * d['case']:.1f} % only by case"
            )
        notes.append(f"{html.escape(e['algo'])}, vocab {e['vocab_size']:,}, {e['supermerges']:,} supermerges")
        out.append(
            f"<h3>{html.escape(e['model'])}</h3><table><tr><th>language</th>{head}</tr>{rows}</table>"
            + "".join(f"<div class='note'>{x}</div>" for x in notes)
        )
    try:
        charts = _charts(result)
    except ImportError as e:
        out.append(f"<p class='note'>No charts: {html.escape(str(e))}.</p>")
    else:
        out.append(
            "<div class='charts'>"
            + "".join(
                f"<img alt='{html.escape(name[:-4])}' src='data:image/png;base64,{base64.b64encode(data).decode()}'>"
                for name, data in charts.items()
            )
            + "</div>"
        )
    return "".join(out) + "</section>"


def tokens_page(
    models: Mapping[str, Any],
    texts: Mapping[str, Any],
    result: dict,
    *,
    reading: Optional[dict] = None,
    sample_chars: Optional[int] = None,
    command: str = "",
    allowed_special="all",
) -> str:
    """The comparison page of an evaluation (:func:`fastsw.eval.show.page_html`; ``fastsw eval --report DIR`` writes it
    as ``tokens.html``, ``fastsw show --html`` as its page): ``models`` ``{label: Tokenizer}`` and ``texts``
    ``{language: path or [documents]}`` as :func:`evaluate` took them, ``result`` its result. Each language shows
    its first ``sample_chars`` characters (default :data:`fastsw.eval.show.DEFAULT_SAMPLE_CHARS`), and the page says
    how much of the text that is."""
    from fastsw.corpus.readers import iter_documents
    from fastsw.eval.show import DEFAULT_SAMPLE_CHARS, page_html, sample_documents

    samples = {}
    for lang, source in texts.items():
        path = isinstance(source, (str, os.PathLike))
        docs = iter_documents(Path(source), **(reading or {})) if path else iter(source)
        sample = sample_documents(docs, DEFAULT_SAMPLE_CHARS if sample_chars is None else sample_chars)
        measured = result["models"][0]["languages"][lang]
        sample.total_chars, sample.total_documents = measured["characters"], measured["documents"]
        sample.source = os.fspath(source) if path else ""
        samples[lang] = sample
    return page_html(models, samples, metrics=metrics_html(result), command=command, allowed_special=allowed_special)


def _write_whole(directory: Path, files: Dict[str, bytes]) -> List[str]:
    """Write ``files`` (name -> bytes) into ``directory`` whole or not at all: into a temporary folder next to
    it first, which becomes ``directory`` (renamed) when that does not exist yet, else whose files replace
    their namesakes in it (each target checked by :func:`fastsw.files.resolve_output_path` before anything is
    written). On any failure the temporary folder is removed and ``directory`` is as it was."""
    import shutil
    import tempfile

    from fastsw.files import _write_error, resolve_output_path

    targets = [directory / name for name in files]
    exists = directory.is_dir()
    if exists:
        for path in targets:
            resolve_output_path(path)  # a directory, FIFO, ... at a report file's name: refused before writing
    parent = directory.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", suffix=".tmp", dir=parent))
    except OSError as e:
        raise _write_error(str(directory), str(parent), e) from e
    try:
        for name, data in files.items():
            try:
                with open(tmp / name, "wb") as f:
                    f.write(data)
                    f.flush()
                    os.fsync(f.fileno())
            except OSError as e:
                raise _write_error(str(directory / name), str(parent), e) from e
        umask = os.umask(0)
        os.umask(umask)
        if not exists:
            os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes 0700; a plain mkdir would not
            for name in files:
                os.chmod(tmp / name, 0o666 & ~umask)
            os.rename(tmp, directory)
        else:
            for name in files:
                os.chmod(tmp / name, 0o666 & ~umask)
                os.replace(tmp / name, directory / name)
            tmp.rmdir()
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return [str(path) for path in targets]
