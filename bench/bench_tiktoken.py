"""tiktoken's own vocabularies and patterns: fastsw against tiktoken, rs-bpe, bpe-openai and HF ``tokenizers``, single
thread and batch, on the 12 languages' held-out text, 10 MB of English and the worst cases.

One command:

    python bench/bench_tiktoken.py                         # the whole run: every encoding below (~12 min on 2 cores)
    python bench/bench_tiktoken.py --vocabs o200k_base     # one of them
    python bench/bench_tiktoken.py --quick                 # 2 MB English, runs of >= 0.1 s (~5 min on 2 cores)
    python bench/bench_tiktoken.py --quick --json tiktoken.json   # also the tables for bench/perfpage.py
    python bench/bench_tiktoken.py --verify-corpus         # no timing: ids on ALL the corpus

The encodings (``--vocabs``): ``o200k_base`` and ``cl100k_base`` with their own patterns, and cl100k_base's ranks
with two other patterns fastsw runs on its compiled scanner: ``cl100k_base-legacy``, the older spelling of
cl100k_base's pattern (older tiktoken releases, Llama 3's tokenizer), and ``gpt2-on-cl100k``, GPT-2's pattern
(r50k_base and p50k_base; their rank files are not shipped with any installed package, so cl100k_base's ranks stand
in: the pattern is what is measured). fastsw and tiktoken run each of them from one ``tiktoken.Encoding``
(``Tokenizer.load_tiktoken`` for the first two, ``Tokenizer.from_tiktoken`` for the others).

Encoders, each given the same vocabulary: fastsw (``Tokenizer.load_tiktoken`` on the rank files of the
``bpe-openai`` package), tiktoken (a ``tiktoken.Encoding`` of the same ranks and pattern), rs-bpe and
bpe-openai (their built-in o200k_base / cl100k_base, so only for those two encodings) and HF ``tokenizers`` (a
byte-level BPE converted from the
ranks: every two-way split as a merge, in the token's rank order, ``ignore_merges=True``, the pattern as an
isolated ``Split``). Single thread: ``encode_ordinary`` (HF: ``encode``) per document. Batch: each library's
batch call on 2 threads (fastsw, tiktoken, bpe-openai: ``num_threads=2``; rs-bpe ``encode_batch_parallel`` and
``ParallelOptions(max_threads=2)``; HF ``encode_batch``: its Rayon pool, one thread per core = 2 here).

Before anything is timed, every encoder's ids (single and batch) are compared with tiktoken's on every input:
fastsw disagreeing stops the run; a peer disagreeing is reported and not timed. Times are the median of
``--repeat`` rounds after a warm-up, each round running every encoder in turn (so whatever else the computer
runs meanwhile falls on all of them alike) and each run repeating a small input until it lasts >= ``--least``
seconds (0.2; ``--quick``: 0.1). One thread is timed in CPU time of the calling thread (every encoder's one-text
call runs there), a batch in wall time. MB = 10**6 bytes of UTF-8. The worst cases ("a" * 10**6, 1 MB of random
code points, 1 MB of letters without spaces) are also given relative to the same encoder's MB/s on the 10 MB of
English. Writes ``bench/results/tiktoken-<vocab>.json`` per vocabulary measured, and ``tiktoken.md`` and
``tiktoken.png`` from all of them.

``--verify-corpus`` encodes every document of ``../shared/corpus/*/`` (held-out and training text) with fastsw
(batch) and tiktoken and compares the ids, for both vocabularies; it stops at the first difference.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")


import fastsw  # noqa: E402
from _corpus import SHARED, read_docs  # noqa: E402
from _report import add_arguments, parse_args, rounded, sized, table as json_table, write_json  # noqa: E402
from fastsw.io import tiktoken_vocab as tv  # noqa: E402

LANGS = ["en", "de", "fr", "ru", "fi", "ar", "ko", "zh", "ja", "th", "hi", "my"]
#: encoding -> (rank file of the bpe-openai package, fastsw pattern name)
VOCABS = {
    "o200k_base": ("o200k_base", "o200k"),
    "cl100k_base": ("cl100k_base", "cl100k"),
    "cl100k_base-legacy": ("cl100k_base", "cl100k_legacy"),
    "gpt2-on-cl100k": ("cl100k_base", "gpt2"),
}
THREADS = 2
ENCODERS = ["fastsw", "tiktoken", "rs-bpe", "bpe-openai", "hf"]
SINGLE_CLOCK = time.thread_time  # one thread's encode runs in the calling thread: its CPU time
BATCH_CLOCK = time.perf_counter  # a batch runs on several threads: wall time


def nbytes(docs) -> int:
    return sum(len(d.encode("utf-8")) for d in docs)


def hf_from_ranks(tok, pattern: str):
    """An HF ``tokenizers`` byte-level BPE with tiktoken's encoding of the vocabulary (see the module doc)."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from fastsw.alphabet import render

    vocab = {render(b): i for i, b in enumerate(tok.vocab)}
    splits = tok._splits[tok._splits[:, 2].argsort(kind="stable")]
    merges = [(render(tok.vocab[x]), render(tok.vocab[y])) for x, y, _ in splits.tolist()]
    hf = Tokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=True))
    # Oniguruma reads cl100k's possessive ``{1,3}+`` as a repeated group ("2024" would be one piece); plain
    # ``{1,3}`` is the same match here (nothing follows it in its alternative)
    pattern = pattern.replace(r"\p{N}{1,3}+", r"\p{N}{1,3}")
    hf.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    hf.decoder = decoders.ByteLevel()
    return hf


def fastsw_and_tiktoken(name: str):
    """fastsw's tokenizer and the ``tiktoken.Encoding`` of one of :data:`VOCABS`."""
    import tiktoken

    rank_file, pat = VOCABS[name]
    own = rank_file.split("_")[0]  # the rank file's own pattern name
    tok = fastsw.Tokenizer.load_tiktoken(tv.bpe_openai_rank_file(rank_file), pattern=own)
    enc = tiktoken.Encoding(
        name,
        pat_str=tv.PATTERNS[pat],
        mergeable_ranks={t: r for r, t in enumerate(tok.vocab)},
        special_tokens=tv.SPECIAL_TOKENS[own],
    )
    if pat != own:
        tok = fastsw.Tokenizer.from_tiktoken(enc)
    if not tok.pretokenizer.uses_native:
        raise SystemExit(f"{name}: fastsw's pattern is not on the compiled scanner")
    return tok, enc


def make_encoders(name: str):
    """``{encoder: (single docs -> ids, batch docs -> ids)}`` for one of :data:`VOCABS`."""
    rank_file, pat = VOCABS[name]
    tok, enc = fastsw_and_tiktoken(name)
    own = name == rank_file  # rs-bpe and bpe-openai: only their built-in encodings
    out = {
        "fastsw": (
            lambda docs: [tok.encode_ordinary(d) for d in docs],
            lambda docs: tok.encode_ordinary_batch(docs, num_threads=THREADS),
        ),
        "tiktoken": (
            lambda docs: [enc.encode_ordinary(d) for d in docs],
            lambda docs: enc.encode_ordinary_batch(docs, num_threads=THREADS),
        ),
    }
    try:
        if not own:
            raise ImportError(f"no {name} encoding")
        from rs_bpe import openai as rs_openai

        rs = getattr(rs_openai, name)()
        options = rs_openai.ParallelOptions(1, 64, THREADS)  # (min_batch_size, chunk_size, max_threads)
        out["rs-bpe"] = (
            lambda docs: [rs.encode(d) for d in docs],
            lambda docs: rs.encode_batch_parallel(docs, options)[0],
        )
    except ImportError as e:
        if own:
            print(f"rs-bpe not available ({e}); pip install 'fastsw[bench]'", file=sys.stderr)
    try:
        if not own:
            raise ImportError(f"no {name} encoding")
        import bpe_openai

        bo = bpe_openai.get_encoding(name)
        # _encode_plain: encode_ordinary without bpe-openai's 200,000-token chunk limit (the worst cases pass it)
        out["bpe-openai"] = (
            lambda docs: [bo._encode_plain(d) for d in docs],
            lambda docs: (
                bo.encode_ordinary_batch(docs, num_threads=THREADS)
                if max(map(len, docs)) < 150_000
                else [bo._encode_plain(d) for d in docs]
            ),
        )
    except ImportError as e:
        if own:
            print(f"bpe-openai not available ({e}); pip install 'fastsw[bench]'", file=sys.stderr)
    try:
        hf = hf_from_ranks(tok, tv.PATTERNS[pat])
        out["hf"] = (
            lambda docs: [hf.encode(d, add_special_tokens=False).ids for d in docs],
            lambda docs: [e.ids for e in hf.encode_batch(docs, add_special_tokens=False)],
        )
    except Exception as e:  # noqa: BLE001 - a peer that cannot load the vocabulary is reported, not fatal
        print(f"HF tokenizers cannot load {name}: {e}", file=sys.stderr)
    return tok, enc, out


def timed(fns, docs, repeat: int, once, clock, least: float) -> dict:
    """Median seconds per pass over ``docs`` of each of ``fns`` (``{encoder: docs -> ids}``), measured with
    ``clock``: ``repeat`` rounds, each running every encoder once in turn (A B C, A B C, ...) so that whatever
    else the computer runs falls on all of them alike; a run repeats the pass until it lasts >= ``least`` seconds.
    ``once[encoder]`` is the time of the warm-up pass (the id check), which sets the passes per run."""
    inner = {who: max(1, int(least / max(once[who], 1e-6))) for who in fns}
    times: dict = {who: [] for who in fns}
    for _ in range(repeat):
        for who, fn in fns.items():
            t0 = clock()
            for _ in range(inner[who]):
                fn(docs)
            times[who].append((clock() - t0) / inner[who])
    return {who: statistics.median(ts) for who, ts in times.items()}


def inputs(english_mb: float, langs=LANGS, n_docs=None, worst_mb: float = 1.0):
    """The held-out text of ``langs`` (the first ``n_docs`` documents of each; None: all), ``english_mb`` of English
    and the worst cases of ``worst_mb`` MB each."""
    out = {}
    for lang in langs:
        out[lang] = read_docs(SHARED / f"corpus/{lang}/heldout.jsonl")[0][:n_docs]
    out[f"en {english_mb:g} MB"] = read_docs(SHARED / "corpus/en/train.jsonl.gz", int(english_mb * 1e6))[0]
    rng = random.Random(15)
    n = int(worst_mb * 10**6)
    size = f"{worst_mb:g} MB"
    worst = {
        "a * 10**6" if worst_mb == 1 else f"a * {n}": ["a" * n],
        f"random code points {size}": [
            "".join(
                chr(rng.choice([rng.randrange(0x20, 0xD800), rng.randrange(0xE000, 0x110000)]))
                for _ in range(n * 26 // 100)
            )
        ],
        f"letters, no spaces {size}": ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(n))],
    }
    return out, worst


def profile_fastsw(tok, docs):
    """Where fastsw's single-thread time goes on ``docs`` (CPU time of this thread): per document, in the order
    ``encode_ordinary`` runs them, the scanner's input call (pretokens and UTF-8, ``scan_utf8``), the kernel and
    the list conversion, summed (less the cost of a clock read, measured); then ``encode_ordinary`` itself, whose
    excess over the three is the per-call Python work. Timing each part alone over all the documents
    instead keeps that part's tables in cache: it left ~20 % of the total unaccounted for."""
    from fastsw.pretokenizers._pretok import scan_utf8

    fast = tok._fast()
    scanner = tok.pretokenizer._any_scanner()
    for d in docs[:50]:
        fast.encode(d)
    clock = time.thread_time
    t0 = clock()
    for _ in range(1000):
        clock()
    tick = (clock() - t0) / 1000  # one clock read, taken off each part below
    t_scan = t_kernel = t_list = 0.0
    for d in docs:
        t0 = clock()
        got = scan_utf8(scanner, [d])
        t1 = clock()
        ids = fast._kernel(*got, True)[0]
        t2 = clock()
        fast.to_list(ids)
        t3 = clock()
        t_scan += t1 - t0 - tick
        t_kernel += t2 - t1 - tick
        t_list += t3 - t2 - tick
    t0 = clock()
    for d in docs:
        tok.encode_ordinary(d)
    t_all = clock() - t0
    return {
        "scan_utf8 (pretokens + UTF-8)": t_scan,
        "kernel": t_kernel,
        "to list": t_list,
        "per-call Python (the rest)": max(t_all - t_scan - t_kernel - t_list, 0.0),
        "total encode_ordinary": t_all,
    }


def load_times(name: str):
    """fastsw's load of a rank file: cold (empty cache: parse, splits, cache write) and warm (cache hit), plus
    the first encode (the fast encoder's tables; the kernels come from Numba's on-disk cache)."""
    rank_file, pat = VOCABS[name]
    if rank_file != name:
        return {}  # the same rank file as cl100k_base's: measured there
    path = tv.bpe_openai_rank_file(name)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        old = os.environ.get("FASTSW_CACHE_DIR")
        os.environ["FASTSW_CACHE_DIR"] = tmp
        try:
            t0 = time.perf_counter()
            fastsw.Tokenizer.load_tiktoken(path, pattern=pat)
            out["cold load (s)"] = time.perf_counter() - t0
            best = None
            for _ in range(3):
                t0 = time.perf_counter()
                tok = fastsw.Tokenizer.load_tiktoken(path, pattern=pat)
                dt = time.perf_counter() - t0
                best = dt if best is None else min(best, dt)
            out["cached load (s)"] = best
            t0 = time.perf_counter()
            tok.encode_ordinary("x " * 200)
            out["first encode (s)"] = time.perf_counter() - t0
        finally:
            if old is None:
                del os.environ["FASTSW_CACHE_DIR"]
            else:
                os.environ["FASTSW_CACHE_DIR"] = old
    return out


def run(args):
    texts, worst = inputs(args.english_mb, *sized(args, (LANGS, None, 1.0), (LANGS, None, 1.0), (["en"], 20, 0.001)))
    english = f"en {args.english_mb:g} MB"
    results = {"threads": THREADS, "repeat": args.repeat, "vocabs": {}}
    for name in args.vocabs:
        print(f"== {name}", file=sys.stderr)
        res = results["vocabs"][name] = {
            "load": load_times(name),
            "single": {},
            "batch": {},
            "differs": {},
            "pattern": VOCABS[name][1],
        }
        tok, enc, encoders = make_encoders(name)
        for label, docs in list(texts.items()) + list(worst.items()):
            want = [enc.encode_ordinary(d) for d in docs]
            first = {}  # the id check is each encoder's warm-up pass; its time sets the inner repeats
            for who, (single, batch) in encoders.items():
                try:
                    t0 = time.perf_counter()
                    ok_single = single(docs) == want
                    t1 = time.perf_counter()
                    ok_batch = batch(docs) == want
                    first[who] = (t1 - t0, time.perf_counter() - t1)
                except Exception as e:  # noqa: BLE001 - a peer refusing an input (bpe-openai: too long)
                    if who == "fastsw":
                        raise
                    res["differs"].setdefault(who, []).append(label)
                    print(f"   {who}: fails on {label} ({e}); not timed", file=sys.stderr)
                    continue
                if not (ok_single and ok_batch):
                    if who == "fastsw":
                        raise SystemExit(f"fastsw's ids differ from tiktoken's on {name} / {label}")
                    res["differs"].setdefault(who, []).append(label)
                    print(f"   {who}: ids differ on {label}; not timed", file=sys.stderr)
            size = nbytes(docs)
            ok = {who: fns for who, fns in encoders.items() if label not in res["differs"].get(who, [])}
            # one thread: CPU time of this thread (it moves less than wall time with whatever else the computer
            # runs); batch: wall time (what the threads buy), each a median of interleaved runs
            for kind, k, clock in (("single", 0, SINGLE_CLOCK), ("batch", 1, BATCH_CLOCK)):
                if kind == "batch" and label not in texts:  # the worst cases: one thread only
                    continue
                fns = {w: f[k] for w, f in ok.items()}
                seconds = timed(fns, docs, args.repeat, {w: first[w][k] for w in ok}, clock, args.least)
                res[kind][label] = {w: size / 1e6 / t for w, t in seconds.items()}
            print(
                f"   {label}: " + ", ".join(f"{w} {v:.1f}" for w, v in res["single"][label].items()) + " MB/s",
                file=sys.stderr,
            )
        res["profile"] = profile_fastsw(tok, texts[english])
        res["worst_labels"] = list(worst)
    results["english"] = english
    results["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    args.out.mkdir(parents=True, exist_ok=True)
    for name, res in results["vocabs"].items():
        one = dict(results, vocabs={name: res})
        (args.out / f"tiktoken-{name}.json").write_text(json.dumps(one, indent=1))
    return results


def merged_results(out: Path):
    """The results of every vocabulary measured so far (one JSON per vocabulary and run)."""
    merged = None
    for name in VOCABS:
        path = out / f"tiktoken-{name}.json"
        if path.exists():
            one = json.loads(path.read_text())
            if merged is None:
                merged = dict(one, vocabs={})
            merged["vocabs"].update(one["vocabs"])
            merged["peak_rss_mb"] = max(merged["peak_rss_mb"], one["peak_rss_mb"])
    return merged


def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "-"


def write_report(results, out: Path):
    out.mkdir(parents=True, exist_ok=True)
    english = results["english"]
    lines = [
        "# tiktoken's vocabularies: fastsw and its peers",
        "",
        f"MB/s (10**6 UTF-8 bytes per second), median of {results['repeat']} interleaved runs (one thread: CPU "
        f"time; batch = {THREADS} threads: wall time). "
        "Compare the ratios (same run) more than the absolute figures. "
        f"Ids asserted identical to tiktoken's before timing. Peak RSS {results['peak_rss_mb']:.0f} MB.",
        "",
    ]
    for name, res in results["vocabs"].items():
        load = res["load"]
        lines += [f"## {name}", "", "Loading (fastsw): " + ", ".join(f"{k} {v:.2f}" for k, v in load.items()), ""]
        for mode in ("single", "batch"):
            table = res[mode]
            who = [w for w in ENCODERS if any(w in row for row in table.values())]
            lines += [
                f"### {'single thread' if mode == 'single' else 'batch (2 threads)'}",
                "",
                "| input | " + " | ".join(who) + " | fastsw / tiktoken | fastsw / rs-bpe | fastsw / bpe-openai |",
                "|---" * (len(who) + 4) + "|",
            ]
            for label, row in table.items():
                f = row.get("fastsw")
                lines.append(
                    f"| {label} | "
                    + " | ".join(f"{row[w]:.1f}" if w in row else "-" for w in who)
                    + f" | {ratio(f, row.get('tiktoken'))} | {ratio(f, row.get('rs-bpe'))} | "
                    f"{ratio(f, row.get('bpe-openai'))} |"
                )
            lines.append("")
        single = res["single"]
        lines += [
            "### worst cases, MB/s relative to the same encoder on " + english,
            "",
            "| input | " + " | ".join(ENCODERS) + " |",
            "|---" * (len(ENCODERS) + 1) + "|",
        ]
        for label in res["worst_labels"]:
            row = single.get(label, {})
            lines.append(
                f"| {label} | "
                + " | ".join(
                    f"{row[w] / single[english][w]:.2f}" if w in row and w in single[english] else "-" for w in ENCODERS
                )
                + " |"
            )
        lines.append("")
        if res["differs"]:
            lines += [
                "Ids differ from tiktoken's or the input was refused (not timed): "
                + "; ".join(f"{w}: {', '.join(v)}" for w, v in res["differs"].items()),
                "",
            ]
        prof = res["profile"]
        total = prof["total encode_ordinary"]
        lines += [
            f"fastsw single thread on {english}, where time goes: "
            + ", ".join(f"{k} {v:.2f} s ({100 * v / total:.0f} %)" for k, v in prof.items()),
            "",
        ]
    summary = summary_table(results)
    lines += [
        "## " + summary["title"],
        "",
        "| " + " | ".join(summary["columns"]) + " |",
        "|---" * len(summary["columns"]) + "|",
    ]
    lines += ["| " + " | ".join("-" if c is None else str(c) for c in row) + " |" for row in summary["rows"]]
    lines += ["", summary["notes"], ""]
    (out / "tiktoken.md").write_text("\n".join(lines))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        n_plots = len(results["vocabs"])
        fig, axes = plt.subplots(n_plots, 1, figsize=(12, 4 * n_plots), squeeze=False)
        for ax, (name, res) in zip(axes[:, 0], results["vocabs"].items()):
            labels = [k for k in res["single"] if k not in res["worst_labels"]]
            width = 0.8 / len(ENCODERS)
            for k, who in enumerate(ENCODERS):
                ax.bar(
                    [i + k * width for i in range(len(labels))],
                    [res["single"][lab].get(who, 0) for lab in labels],
                    width,
                    label=who,
                )
            ax.set_xticks([i + 0.4 - width / 2 for i in range(len(labels))], labels, rotation=30)
            ax.set_ylabel("MB/s, one thread")
            ax.set_title(f"{name} (ids identical to tiktoken's)")
            ax.legend(ncol=5, fontsize=8)
        fig.tight_layout()
        fig.savefig(out / "tiktoken.png", dpi=90)
    except ImportError:
        print("matplotlib missing: no plot", file=sys.stderr)
    print((out / "tiktoken.md").read_text())


def summary_table(results):
    """One thread, per language (rows) and encoding: fastsw's MB/s over tiktoken's, and for the encodings rs-bpe
    and bpe-openai have, over theirs too."""
    columns, cells = ["language"], []
    for name, res in results["vocabs"].items():
        peers = ["tiktoken"] + [
            w for w in ("rs-bpe", "bpe-openai") if any(w in res["single"].get(lang, {}) for lang in LANGS)
        ]
        for who in peers:
            columns.append(f"{name}: fastsw / {who}")
            cells.append((res["single"], who))
    rows = []
    for lang in LANGS + ["lowest"]:
        row = [lang]
        for single, who in cells:
            if lang == "lowest":
                got = [
                    single[x]["fastsw"] / single[x][who]
                    for x in LANGS
                    if who in single.get(x, {}) and "fastsw" in single.get(x, {})
                ]
                row.append(rounded(min(got)) if got else None)
            else:
                r = single.get(lang, {})
                row.append(rounded(r["fastsw"] / r[who]) if "fastsw" in r and who in r else None)
        rows.append(row)
    notes = (
        "fastsw's MB/s over each peer's on each language's held-out text, one thread, `encode_ordinary` per "
        "document, same run; above 1 means fastsw is faster. cl100k_base-legacy is cl100k_base with the older "
        "spelling of its pattern (Llama 3's); gpt2-on-cl100k is GPT-2's pattern (r50k_base, p50k_base) over "
        "cl100k_base's ranks. Every pattern runs on fastsw's compiled scanner; ids asserted identical to "
        "tiktoken's before timing."
    )
    return json_table("tiktoken's patterns: fastsw / peer, one thread, per language", columns, rows, notes)


def json_tables(results):
    """The tables ``bench/perfpage.py`` renders: the per-language summary, then per encoding one thread, batch
    and the worst cases."""
    english = results["english"]
    peers = [w for w in ENCODERS if w != "fastsw"]
    out = [summary_table(results)]
    for name, res in results["vocabs"].items():
        load = ", ".join(f"{k} {v:.2f}" for k, v in res["load"].items()) or "as cl100k_base (the same rank file)"
        differs = "; ".join(f"{w}: {', '.join(v)}" for w, v in res["differs"].items())
        notes = (
            f"MB/s (10**6 UTF-8 bytes per second), median of {results['repeat']} interleaved runs (one thread: CPU "
            "time; batch: wall time); ids asserted identical "
            "to tiktoken's before timing; a ratio above 1 means fastsw is faster. fastsw loading: "
            + load
            + f". Peak RSS of the whole run {results['peak_rss_mb']:.0f} MB."
            + (f" Not timed (ids differ or the input was refused): {differs}." if differs else "")
        )
        for mode, title in (("single", "one thread"), ("batch", f"batch ({results['threads']} threads)")):
            rows = []
            for label, row in res[mode].items():
                if label in res["worst_labels"]:
                    continue
                f = row.get("fastsw")
                rows.append(
                    [label]
                    + [rounded(row.get(w)) for w in ENCODERS]
                    + [rounded(f / row[w]) if f and row.get(w) else None for w in peers]
                )
            out.append(
                json_table(
                    f"tiktoken's {name}: {title}",
                    ["input", *[f"{w} MB/s" for w in ENCODERS], *[f"fastsw / {w}" for w in peers]],
                    rows,
                    notes,
                )
            )
        single = res["single"]
        rows = [
            [label]
            + [
                rounded(single[label][w] / single[english][w])
                if w in single.get(label, {}) and w in single[english]
                else None
                for w in ENCODERS
            ]
            for label in res["worst_labels"]
        ]
        out.append(
            json_table(
                f"tiktoken's {name}: worst cases, MB/s relative to the same encoder on {english}",
                ["input", *ENCODERS],
                rows,
                "One document each, one thread.",
            )
        )
    return out


def verify_corpus():
    """Every document of the shared corpus, every encoding: fastsw's ids == tiktoken's."""
    for name in VOCABS:
        tok, enc = fastsw_and_tiktoken(name)
        for lang in LANGS:
            n_docs = n_bytes = 0
            for path in (SHARED / f"corpus/{lang}/heldout.jsonl", SHARED / f"corpus/{lang}/train.jsonl.gz"):
                opener = gzip.open if path.suffix == ".gz" else open
                with opener(path, "rt", encoding="utf-8") as f:
                    batch = []
                    for line in f:
                        batch.append(json.loads(line)["text"])
                        if len(batch) == 2000:
                            n_docs, n_bytes = _check(tok, enc, batch, name, lang, n_docs, n_bytes)
                            batch = []
                    n_docs, n_bytes = _check(tok, enc, batch, name, lang, n_docs, n_bytes)
            print(f"{name} {lang}: {n_docs} documents, {n_bytes / 1e6:.1f} MB: ids identical", flush=True)


def _check(tok, enc, batch, name, lang, n_docs, n_bytes):
    if batch:
        got = tok.encode_ordinary_batch(batch, num_threads=THREADS)
        want = enc.encode_ordinary_batch(batch, num_threads=THREADS)
        if got != want:
            k = next(i for i, (a, b) in enumerate(zip(got, want)) if a != b)
            raise SystemExit(f"{name} {lang}: document {n_docs + k} differs: {batch[k][:200]!r}")
    return n_docs + len(batch), n_bytes + nbytes(batch)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="rounds per input; the median is reported")
    ap.add_argument("--least", type=float, default=0.2, help="seconds a run lasts at least")
    ap.add_argument("--english-mb", type=float, default=10.0)
    ap.add_argument("--out", type=Path, default=HERE / "results")
    ap.add_argument("--verify-corpus", action="store_true", help="no timing: compare ids on the whole corpus")
    ap.add_argument(
        "--vocabs",
        nargs="+",
        default=list(VOCABS),
        choices=list(VOCABS),
        help="measure these (one lock each keeps a run under 10 minutes); the report merges all",
    )
    ap.add_argument("--report-only", action="store_true", help="rewrite the report from the saved JSON")
    add_arguments(ap, "2 MB of English, runs of >= 0.1 s")
    args = parse_args(ap)
    if args.verify_corpus:
        verify_corpus()
        return
    if args.quick:
        args.english_mb, args.least = sized(args, None, 2.0, 0.05), sized(args, None, 0.1, 0.001)
    if args.smoke:
        args.vocabs = ["o200k_base"]
        args.repeat = 1
    results = None if args.report_only else run(args)
    write_report(merged_results(args.out), args.out)
    if args.json:
        write_json(args.json, json_tables(results or merged_results(args.out)))


if __name__ == "__main__":
    main()
