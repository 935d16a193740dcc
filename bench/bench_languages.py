"""Encoding speed in every language: fastsw against tiktoken and HF ``tokenizers``.

One command:

    python bench/bench_languages.py            # everything
    python bench/bench_languages.py --quick    # 5 languages (superword table: all 12), models from 2 MB, smaller worst cases
    python bench/bench_languages.py --quick --json languages.json   # also the tables for bench/perfpage.py
    python bench/bench_languages.py --quick --langs fr --superword-only   # the superword table alone, French

For each of the 12 languages of ``../shared/corpus`` its held-out text is encoded by

* its own-language model and the English model, plain BPE, ``simple`` pre-tokenizer (vocab 32768,
  trained here by fastsw on the first ``--train-mb`` MB of that language's ``train.jsonl.gz`` and
  cached in ``bench/results/models/``; ``--quick``: 2 MB): fastsw, tiktoken (``to_tiktoken()``) and HF ``tokenizers``
  (``save_hf``), one thread (one document at a time) and the batch APIs (``--threads`` threads);
* its own BoundlessBPE model and the English one (superword models: fastsw only; the ratio is to
  fastsw's plain BPE of the same language and pre-tokenizer);
* its own plain BPE model with the default ``script`` pre-tokenizer (fastsw only);
* in every language of ``--langs``, ``--quick`` included: its own plain BPE, BoundlessBPE and SuperBPE models
  (``simple``; SuperBPE with ``vocab // 8`` supermerges) taking turns, fastsw only: the table "own superword /
  own BPE";
* with ``--o200k`` (needs ``bpe-openai``), tiktoken's o200k_base vocabulary (rank mode).

Before anything is timed, every encoder's ids are compared with fastsw's (and fastsw's with its
reference path on the first documents); a disagreement stops the run. Timing: the encoders of one
input take turns (round-robin) for ``--rounds`` rounds, each encoder's best round counts (a round repeats a
small set until it lasts ~``MIN_ROUND`` s, at most 50 passes, and counts the time per pass; the superword table
takes 100 rounds of ~5 ms, each after an untimed pass of its model, with Python's garbage collector off while
timed); MB/s are
UTF-8 bytes per second. One-thread figures are CPU time (``time.process_time``: one thread works at a
time; fastsw runs a call on >= 1 MiB in a worker thread, so the calling thread's CPU time would miss it):
CPU time moves less than wall time with whatever else the computer runs. Batch figures are wall time
(their point is the threads). The worst cases (English models) are single documents timed
the same way against ordinary English text of the same size class; the figure is the worst case's
time per byte over ordinary text's (target <= 3). Writes ``bench/results/languages-<date>.md``.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import fastsw  # noqa: E402
from _corpus import SHARED, read_docs  # noqa: E402
from _report import add_arguments, missing_peers, parse_args, rounded, sized, table as json_table, write_json  # noqa: E402
from fastsw.encoding import encode_fast as fast_encode  # noqa: E402

LANGS = ["en", "de", "fr", "ru", "fi", "ar", "ko", "zh", "ja", "th", "hi", "my"]
VOCAB = 32768
MIN_ROUND = 0.05  # seconds: a round repeats a small set up to this long (at most 50 passes)
MODELS = HERE / "results" / "models"
SUPERMERGES = VOCAB // 8  # SuperBPE models: phase 2 learns this many supermerges (as bench_script.py's)


def nbytes(docs) -> int:
    return sum(len(d.encode("utf-8")) for d in docs)


def model(lang: str, algo: str, pretokenizer: str, train_mb: float):
    """The cached model ``{algo}-{pretokenizer}-32768-{lang}-{train_mb}MB``, trained when missing."""
    path = MODELS / f"{algo}-{pretokenizer}-{VOCAB}-{lang}-{train_mb:g}MB.json"
    if path.exists():
        return fastsw.load(path)
    docs, _ = read_docs(SHARED / "corpus" / lang / "train.jsonl.gz", int(train_mb * 1e6))
    t0 = time.perf_counter()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # small corpora (hi, my) stop below 32768: said in the report
        kw = {"supermerges": SUPERMERGES} if algo == "superbpe" else {}
        tok = fastsw.train(docs, backend="numba", pretokenizer=pretokenizer, algo=algo, vocab_size=VOCAB, **kw)
    print(f"trained {path.name} in {time.perf_counter() - t0:.1f}s: {tok}", file=sys.stderr)
    MODELS.mkdir(parents=True, exist_ok=True)
    tok.save(path)
    return tok


#: the peers: name -> module
PEERS = {"tiktoken": "tiktoken", "HF": "tokenizers"}


def encoders(tok, threads: int, peers, tmp: Path, name: str):
    """``{name: docs -> list of id lists}`` for one model, with the installed ``peers`` (names of :data:`PEERS`)."""
    fns = {
        "fastsw": lambda docs: [tok.encode_ordinary(d) for d in docs],
        "fastsw batch": lambda docs: tok.encode_batch_to_numpy(docs, num_threads=threads),
    }
    if "tiktoken" in peers:
        enc = tok.to_tiktoken()
        fns["tiktoken"] = lambda docs: [enc.encode_ordinary(d) for d in docs]
        fns["tiktoken batch"] = lambda docs: enc.encode_ordinary_batch(docs, num_threads=threads)
    if "HF" in peers:
        import tokenizers

        path = tmp / f"{name}.tokenizer.json"
        info = tok.save_hf(path, allow_approximate=True)
        if info["exact"]:
            hf = tokenizers.Tokenizer.from_file(str(path))
            fns["HF"] = lambda docs: [hf.encode(d, add_special_tokens=False).ids for d in docs]
            fns["HF batch"] = lambda docs: [e.ids for e in hf.encode_batch(docs, add_special_tokens=False)]
        else:
            print(f"HF export of {name} is not exact ({info['reasons']}): HF not timed", file=sys.stderr)
    return fns


def as_lists(result):
    if isinstance(result, tuple):
        ids, off = result
        flat, b = ids.tolist(), off.tolist()
        return [flat[x:y] for x, y in zip(b, b[1:])]
    return [list(r) for r in result]


def timed(fns, docs, rounds: int, check_reference=None):
    """``{encoder: best seconds}`` after checking every encoder's ids against fastsw's."""
    expected = as_lists(fns["fastsw batch"](docs))
    if check_reference is not None:
        for d, e in zip(docs[: check_reference[1]], expected):
            if check_reference[0].encode_ordinary(d, backend="python") != e:
                sys.exit("fastsw disagrees with its reference path; no timings reported")
    for name, fn in fns.items():
        if as_lists(fn(docs)) != expected:
            sys.exit(f"{name} disagrees with fastsw; no timings reported")
    return best_rounds(fns, docs, rounds)


def best_rounds(fns, docs, rounds: int, max_passes: int = 50, warm: bool = False, min_round: float = 0.0):
    """``{encoder: best seconds per pass over docs}``: the encoders take turns (round-robin) for ``rounds`` rounds,
    a round repeating a pass up to ``min_round`` seconds (default ``MIN_ROUND``; at most ``max_passes`` passes).
    With ``warm``, each round
    starts with one untimed pass and Python's garbage collector is off while a round is timed (as ``timeit``
    does): the timed passes then start with the encoder's own tables in the CPU caches, not the previous
    encoder's, and no collection triggered by the other encoders' allocations lands in them."""
    best = {name: float("inf") for name in fns}
    # small sets (ar, hi, my: 2-9 documents) repeat inside a round until it lasts about MIN_ROUND seconds, so a
    # round is more than a few clock ticks (more work per timing, never less)
    inner = {}
    for name, fn in fns.items():
        t0 = time.perf_counter()
        fn(docs)
        inner[name] = max(1, min(max_passes, int((min_round or MIN_ROUND) / max(time.perf_counter() - t0, 1e-6))))
    for _ in range(rounds):
        for name, fn in fns.items():
            # one-thread encoders: CPU time of the process (see the module notes; not of the calling thread:
            # a call on >= 1 MiB runs its kernel in a worker thread, fast_encode._WORKER_BYTES); batches: wall time
            clock = time.perf_counter if "batch" in name else time.process_time
            if warm:
                fn(docs)
                gc.disable()
            try:
                t0 = clock()
                for _ in range(inner[name]):
                    fn(docs)
                elapsed = clock() - t0
            finally:
                if warm:
                    gc.enable()
            best[name] = min(best[name], elapsed / inner[name])
    return best


#: The superword models timed against plain BPE in every language: (label, algo).
SUPERWORD = (("BoundlessBPE", "boundless"), ("SuperBPE", "superbpe"))
#: The superword table's rounds: many short ones (a round of ~SUPERWORD_ROUND s is less often cut by another
#: process's time slice, whose cache misses the round's CPU time would carry), at least SUPERWORD_ROUNDS of them.
SUPERWORD_ROUND = 0.005
SUPERWORD_ROUNDS = 100


def superword_speeds(langs, heldout, train_mb: float, rounds: int):
    """``{lang: {"BPE": s, "BoundlessBPE": s, "SuperBPE": s}}``: each language's own plain BPE and superword
    models (``simple`` pre-tokenizer) encoding its held-out documents one by one, fastsw one thread, CPU time; the
    three models take turns in every round (the ratios compare passes under the same conditions), each round
    after an untimed pass of its model (``best_rounds(warm=True)``: no model is timed on the caches the one before
    it left), the best round counts. Each model's ids are checked against its reference path on the first
    documents first."""
    out = {}
    for lang in langs:
        docs = heldout[lang]
        toks = {"BPE": model(lang, "bpe", "simple", train_mb)}
        toks.update((label, model(lang, algo, "simple", train_mb)) for label, algo in SUPERWORD)
        for label, tok in toks.items():
            for d in docs[:3]:
                if tok.encode_ordinary(d, backend="python") != tok.encode_ordinary(d):
                    sys.exit(f"{lang} {label}: fastsw disagrees with its reference path; no timings reported")
        out[lang] = in_turns(toks, docs, rounds)
        size = nbytes(docs) / 1e6
        print(
            f"{lang} superword ({size:.3f} MB): "
            + ", ".join(f"own {label} / own BPE {out[lang]['BPE'] / out[lang][label]:.2f}" for label, _ in SUPERWORD),
            file=sys.stderr,
        )
    return out


def in_turns(toks, docs, rounds: int) -> dict:
    """``{label: best seconds per pass}`` of the models ``toks`` (``{label: tokenizer}``) encoding ``docs`` one
    document per call, one thread, taking turns in every round, each round after an untimed pass of its model
    (``best_rounds(warm=True)``). Every round lasts about ``SUPERWORD_ROUND`` seconds or one pass (the smallest
    held-out sets, hi and my, take ~0.2 ms a pass), at least ``SUPERWORD_ROUNDS`` rounds."""
    fns = {label: (lambda docs, tok=tok: [tok.encode_ordinary(d) for d in docs]) for label, tok in toks.items()}
    return best_rounds(fns, docs, max(rounds, SUPERWORD_ROUNDS), max_passes=2000, warm=True, min_round=SUPERWORD_ROUND)


def paired_superword(bpe, boundless, docs, rounds: int) -> float:
    """``boundless``'s encoding speed over ``bpe``'s on ``docs``, the two taking turns (:func:`in_turns`, as in
    :func:`superword_speeds`): a ratio of two timings taken under the same conditions."""
    best = in_turns({"BPE": bpe, "Boundless": boundless}, docs, rounds)
    return best["BPE"] / best["Boundless"]


def superword_rows(speeds, heldout):
    """The rows of the superword table: language, MB, MB/s of each model, each superword model's ratio."""
    rows = []
    for lang, best in speeds.items():
        size = nbytes(heldout[lang]) / 1e6
        rows.append(
            [lang, rounded(size, 3), rounded(size / best["BPE"])]
            + [rounded(size / best[label]) for label, _ in SUPERWORD]
            + [rounded(best["BPE"] / best[label]) for label, _ in SUPERWORD]
        )
    return rows


SUPERWORD_COLUMNS = (
    ["language", "text MB", "BPE MB/s"]
    + [f"{label} MB/s" for label, _ in SUPERWORD]
    + [f"own {label} / own BPE" for label, _ in SUPERWORD]
)


def worst_inputs(scale: float):
    rng = random.Random(14)
    mb = lambda x: int(x * scale)  # noqa: E731
    letters = "".join(
        c for c in " ".join(read_docs(SHARED / "corpus" / "en" / "train.jsonl.gz", mb(6_000_000))[0]) if c.isalpha()
    )[: mb(5_000_000)]
    chars, size = [], 0
    while size < mb(10_000_000):
        cp = rng.randrange(0x110000)
        if 0xD800 <= cp < 0xE000:
            continue
        chars.append(chr(cp))
        size += len(chars[-1].encode("utf-8"))
    return {
        '"a" repeated': "a" * mb(10**7),
        "random code points": "".join(chars),
        "letters, no spaces": letters,
        "spaces": " " * mb(10**6),
        '"ab" repeated': "ab" * mb(500_000),
    }


def json_tables(summary, worst_data, args, heldout, superword):
    """The tables ``bench/perfpage.py`` renders: per language (one thread, and batch), and the worst cases."""

    def mbs(res, model, who):
        return rounded(size / res[model][who]) if who in res.get(model, {}) else None

    def over(res, model, who, peer, base_model=None):
        a, b = res.get(base_model or model, {}), res.get(model, {})
        if peer in a and who in b:
            return rounded(a[peer] / b[who])
        return None

    rows, batch = [], []
    for lang, res in summary.items():
        size = nbytes(heldout[lang]) / 1e6
        rows.append(
            [
                lang,
                rounded(size, 3),
                mbs(res, "own BPE", "fastsw"),
                mbs(res, "own BPE", "tiktoken"),
                mbs(res, "own BPE", "HF"),
                over(res, "own BPE", "fastsw", "tiktoken"),
                over(res, "own BPE", "fastsw", "HF"),
                over(res, "en BPE", "fastsw", "tiktoken"),
                rounded(res["paired"]["own"]),
                rounded(res["paired"]["en"]),
            ]
        )
        batch.append(
            [
                lang,
                mbs(res, "own BPE", "fastsw batch"),
                mbs(res, "own BPE", "tiktoken batch"),
                mbs(res, "own BPE", "HF batch"),
                over(res, "own BPE", "fastsw batch", "tiktoken batch"),
                over(res, "own BPE", "fastsw batch", "HF batch"),
            ]
        )
    models = (
        f"Models: plain BPE (`simple` pre-tokenizer) and BoundlessBPE, vocab {VOCAB}, trained by fastsw on up to "
        f"{args.train_mb:g} MB of each language's training text (small corpora stop below {VOCAB}); "
        "tiktoken and HF run the same model (`to_tiktoken()`, `save_hf`). Text: each language's held-out "
        f"file. Every encoder's ids were checked equal to fastsw's before timing; best of {args.rounds} "
        "round-robin rounds. A ratio above 1 means fastsw is faster."
    )
    return [
        json_table(
            "Encoding, one thread: fastsw against tiktoken and HF, per language",
            [
                "language",
                "text MB",
                "fastsw MB/s",
                "tiktoken MB/s",
                "HF MB/s",
                "fastsw / tiktoken",
                "fastsw / HF",
                "en model: fastsw / tiktoken",
                "own Boundless / own BPE",
                "en Boundless / en BPE",
            ],
            rows,
            models + " One document per call, CPU time. 'en model': the English model on this language's "
            "text; 'Boundless / BPE': the superword model's speed over plain BPE's, both fastsw, the two taking "
            f"turns in each of at least {SUPERWORD_ROUNDS} rounds (an untimed pass first, the best round counts).",
        ),
        json_table(
            f"Encoding, batch ({args.threads} threads), own-language BPE model",
            ["language", "fastsw MB/s", "tiktoken MB/s", "HF MB/s", "fastsw / tiktoken", "fastsw / HF"],
            batch,
            models + " fastsw `encode_batch_to_numpy(docs)`, tiktoken `encode_ordinary_batch`, HF "
            "`encode_batch`; wall time.",
        ),
        json_table(
            "Superword models against plain BPE, every language (fastsw, one thread)",
            SUPERWORD_COLUMNS,
            superword_rows(superword, heldout),
            f"Each language's own models, `simple` pre-tokenizer, vocab {VOCAB}, trained by fastsw on up to "
            f"{args.train_mb:g} MB of its training text (SuperBPE: {SUPERMERGES} supermerges; small corpora stop "
            "below the vocabulary size); its held-out documents one per call, CPU time; the three models take "
            f"turns in each of {max(args.rounds, SUPERWORD_ROUNDS)} rounds, the best round counts. "
            "'own X / own BPE': the superword model's speed over plain BPE's (target >= 0.8).",
        ),
        json_table(
            "Worst cases: one document, fastsw one thread, English models",
            ["model", "input", "MB", "MB/s", "time per byte / ordinary text"],
            worst_data,
            "Each input as one document, against ordinary English text of the same size class"
            + (" (--quick: a tenth of the full sizes)." if args.quick else "."),
        ),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--langs", default=",".join(LANGS))
    ap.add_argument(
        "--train-mb", type=float, default=None, help="MB of training text per model (default 20; --quick: 2)"
    )
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--o200k", action="store_true", help="also tiktoken's o200k_base (needs bpe-openai)")
    ap.add_argument("--worst-only", action="store_true", help="only the worst cases")
    ap.add_argument(
        "--superword-only",
        action="store_true",
        help="only the superword table (own BoundlessBPE and SuperBPE / own BPE), printed; no report written",
    )
    add_arguments(
        ap,
        "en, zh, ja, th, ko against the peers (the superword table keeps every language); models from 2 MB; worst "
        "cases at a tenth of the size",
    )
    args = parse_args(ap)
    if args.train_mb is None:
        args.train_mb = sized(args, 20, 2, 0.05)
    langs = sized(args, args.langs, "en,zh,ja,th,ko", "en").split(",")
    if args.smoke:
        args.rounds = 1
    peers = [p for p in PEERS if p not in missing_peers(PEERS)]
    if args.worst_only:
        langs = []
    t0 = time.perf_counter()
    fast_encode.warmup()
    warm = time.perf_counter() - t0
    # superword models against plain BPE: every language of --langs, --quick included
    super_langs = [] if args.worst_only else sized(args, args.langs, args.langs, "en").split(",")
    n_docs = sized(args, None, None, 20)
    heldout = {
        lang: read_docs(SHARED / "corpus" / lang / "heldout.jsonl")[0][:n_docs] for lang in {*langs, *super_langs}
    }
    superword = superword_speeds(super_langs, heldout, args.train_mb, args.rounds)
    if args.superword_only:
        return
    en_bpe = model("en", "bpe", "simple", args.train_mb)
    en_bl = model("en", "boundless", "simple", args.train_mb)
    o200k = None
    if args.o200k:
        from fastsw.io.tiktoken_vocab import bpe_openai_rank_file

        o200k = fastsw.Tokenizer.load_tiktoken(bpe_openai_rank_file("o200k_base"), pattern="o200k")

    rows, summary = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        en_fns = encoders(en_bpe, args.threads, peers, tmp, "en-bpe")
        o_fns = None
        if o200k is not None:
            import base64
            import gzip

            import tiktoken
            from fastsw.io.tiktoken_vocab import O200K_PATTERN, bpe_openai_rank_file

            # tiktoken's Encoding built from the same rank file (no download)
            ranks = {}
            with gzip.open(bpe_openai_rank_file("o200k_base"), "rt") as f:
                for line in f:
                    b64, r = line.split()
                    ranks[base64.b64decode(b64)] = int(r)
            enc = tiktoken.Encoding("o200k_base", pat_str=O200K_PATTERN, mergeable_ranks=ranks, special_tokens={})
            o_fns = {
                "fastsw": lambda docs: [o200k.encode_ordinary(d) for d in docs],
                "fastsw batch": lambda docs: o200k.encode_batch_to_numpy(docs, num_threads=args.threads),
                "tiktoken": lambda docs: [enc.encode_ordinary(d) for d in docs],
                "tiktoken batch": lambda docs: enc.encode_ordinary_batch(docs, num_threads=args.threads),
            }
        for lang in langs:
            docs = heldout[lang]
            size = nbytes(docs) / 1e6
            own = model(lang, "bpe", "simple", args.train_mb)
            own_bl = model(lang, "boundless", "simple", args.train_mb)
            own_script = model(lang, "bpe", "script", args.train_mb)
            res = {}
            for mname, fns, ref in (
                ("own BPE", encoders(own, args.threads, peers, tmp, f"{lang}-bpe"), own),
                ("en BPE", en_fns, en_bpe),
            ):
                res[mname] = timed(fns, docs, args.rounds, (ref, 3))
            for mname, tok, ref in (
                ("own BoundlessBPE", own_bl, own_bl),
                ("en BoundlessBPE", en_bl, en_bl),
                ("own BPE, script", own_script, own_script),
            ):
                res[mname] = timed(encoders(tok, args.threads, (), tmp, mname), docs, args.rounds, (ref, 3))
            if o_fns is not None:
                res["o200k"] = timed(o_fns, docs, args.rounds)
            # the superword ratios from paired rounds (the two models taking turns), not from the separate
            # timings above: the own models' from the superword table (the same models), the English ones here
            own_pair = superword.get(lang)
            res["paired"] = {
                "own": own_pair["BPE"] / own_pair["BoundlessBPE"]
                if own_pair
                else paired_superword(own, own_bl, docs, args.rounds),
                "en": paired_superword(en_bpe, en_bl, docs, args.rounds),
            }
            summary[lang] = res
            for mname, best in res.items():
                if mname == "paired":
                    continue
                base = res["own BPE" if mname.startswith("own") else "en BPE"]
                for name, sec in best.items():
                    ratios = []
                    for peer in ("tiktoken", "HF") if "batch" not in name else ("tiktoken batch", "HF batch"):
                        if peer in best and peer != name and not name.startswith(peer.split()[0]):
                            ratios.append(f"{best[peer] / sec:.2f}x {peer}")
                    if mname not in ("own BPE", "en BPE", "o200k") and name in base:
                        ratios.append(
                            f"{base[name] / sec:.2f}x fastsw {'own' if mname.startswith('own') else 'en'}"
                            f" BPE{' simple' if 'script' in mname else ''}"
                        )
                    rows.append(f"| {lang} | {mname} | {name} | {size / sec:.1f} | {', '.join(ratios)} |")
            line = " ".join(
                f"{m}: {size / b['fastsw']:.1f} MB/s"
                + (f" ({b['tiktoken'] / b['fastsw']:.2f}x tiktoken)" if "tiktoken" in b else "")
                for m, b in res.items()
                if m != "paired"
            )
            print(f"{lang} ({size:.3f} MB): {line}", file=sys.stderr)

        # worst cases, English models, one document each, against ordinary text of the same size class
        scale = sized(args, 1.0, 0.1, 0.001)
        ordinary = " ".join(read_docs(SHARED / "corpus" / "en" / "train.jsonl.gz", int(6e6 * scale))[0])
        ordinary = ordinary.encode("utf-8")[: int(5e6 * scale)].decode("utf-8", "ignore")
        worst = worst_inputs(scale)
        worst_rows, worst_data = [], []
        for mname, tok in (("en BPE", en_bpe), ("en BoundlessBPE", en_bl)):
            # one document: "fastsw batch" (the ids every encoder is checked against) is the same call
            one = lambda docs, tok=tok: [tok.encode_ordinary(d) for d in docs]  # noqa: E731
            fns = {"fastsw": one, "fastsw batch": one}
            base = timed(fns, [ordinary], 3)["fastsw"]
            base_rate = len(ordinary.encode("utf-8")) / base
            worst_rows.append(
                f"| {mname} | ordinary English text, one document | "
                f"{len(ordinary.encode('utf-8')) / 1e6:.1f} | {base_rate / 1e6:.1f} | 1.00 |"
            )
            worst_data.append(
                [
                    mname,
                    "ordinary English text, one document",
                    rounded(len(ordinary.encode("utf-8")) / 1e6),
                    rounded(base_rate / 1e6),
                    1.0,
                ]
            )
            for label, text in worst.items():
                size = len(text.encode("utf-8"))
                sec = timed(fns, [text], 3)["fastsw"]
                rate = size / sec
                worst_rows.append(
                    f"| {mname} | {label} | {size / 1e6:.1f} | {rate / 1e6:.1f} | {base_rate / rate:.2f} |"
                )
                worst_data.append([mname, label, rounded(size / 1e6), rounded(rate / 1e6), rounded(base_rate / rate)])
                print(worst_rows[-1], file=sys.stderr)

    if args.json:
        write_json(args.json, json_tables(summary, worst_data, args, heldout, superword))
    lines = [
        f"# Encoding speed in every language ({time.strftime('%Y-%m-%d')})",
        "",
        f"Figures are ratios within one run; one-thread "
        f"figures are CPU time, batch figures wall time. "
        f"Batch encoders use {args.threads} threads. Held-out text of each language; models of vocab "
        f"{VOCAB} trained by fastsw on up to {args.train_mb:g} MB of each language's training text "
        f"(small corpora stop below 32768: hi 17250, my 7012; with `script` also ja and th). "
        f"Best of {args.rounds} "
        f"round-robin rounds; every encoder's ids were checked equal to fastsw's (and fastsw's to its "
        f"reference path on the first 3 documents) before timing. JIT warm-up {warm:.2f}s.",
        "",
        "## Targets (one thread)",
        "",
        "| language | own BPE / tiktoken | en BPE / tiktoken | own Boundless / own BPE | "
        "en Boundless / en BPE | own BPE script / simple | o200k / tiktoken |",
        "|---|---|---|---|---|---|---|",
    ]
    for lang, res in summary.items():
        f = lambda m, p="tiktoken": f"{res[m][p] / res[m]['fastsw']:.2f}" if m in res else "-"  # noqa: E731
        g = lambda m, base: f"{res[base]['fastsw'] / res[m]['fastsw']:.2f}"  # noqa: E731
        lines.append(
            f"| {lang} | {f('own BPE')} | {f('en BPE')} | {res['paired']['own']:.2f} | "
            f"{res['paired']['en']:.2f} | {g('own BPE, script', 'own BPE')} | {f('o200k')} |"
        )
    lines += [
        "",
        "Targets: own and en BPE >= 1.5 x tiktoken; superword (Boundless) >= 0.8 x fastsw plain BPE.",
        "",
        "## Superword models against plain BPE, every language (fastsw, one thread)",
        "",
        "| " + " | ".join(SUPERWORD_COLUMNS) + " |",
        "|" + "---|" * len(SUPERWORD_COLUMNS),
    ]
    lines += ["| " + " | ".join(str(x) for x in row) + " |" for row in superword_rows(superword, heldout)]
    lines += [
        "",
        f"Each language's own models (vocab {VOCAB}, SuperBPE with {SUPERMERGES} supermerges), its held-out "
        "documents one per call, CPU time; the models take turns in every round. Target: >= 0.8.",
        "",
        "## Worst cases (one document, fastsw one thread)",
        "",
        "| model | input | MB | MB/s | time per byte / ordinary text |",
        "|---|---|---|---|---|",
    ]
    lines += worst_rows
    lines += [
        "",
        "Target: no worst case above 3.",
        "",
        "## All figures",
        "",
        "| language | model | encoder | MB/s | ratios |",
        "|---|---|---|---|---|",
    ]
    lines += rows
    tag = ("-quick" if args.quick else "") + ("-worst" if args.worst_only else "")
    out = HERE / "results" / f"languages-{time.strftime('%Y%m%d-%H%M%S')}{tag}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
