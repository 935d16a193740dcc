"""SCRIPT v3 against the default pre-tokenizer: training time, peak memory and bytes per token, same run.

Each (language, pre-tokenizer) trains in its own subprocess on the same documents (the first N MB of
``../shared/corpus/<lang>/train.jsonl.gz``, read into memory before the clock starts), on the fast path, so wall
time, CPU time and peak RSS belong to that training alone. Bytes per token and encoding speed are measured on the
language's held-out split (``heldout.jsonl``) with the trained model, after the subprocess has checked that every
held-out document decodes back exactly and that the fast path's ids equal the reference path's (the reference path's
speed: one pass there). The fast path's speed (one thread, ``encode`` per document -- SCRIPT models too,
:mod:`fastsw.encoding.wide_fast`) is timed here, the models of one corpus and algorithm (saved by their subprocesses)
taking turns for ``--rounds`` rounds, CPU time, the best round each: the ratio compares passes made under the same
conditions. Before any time is reported, the compiled SCRIPT
pretokens must equal the plain-Python rule's on the first documents of each language.

    python bench/bench_script.py                                  # en 10 MB + zh 5 MB, BPE at vocab 32768
    python bench/bench_script.py --quick --json script.json       # en 2 MB + zh 1 MB; the tables for perfpage.py
    python bench/bench_script.py --configs en:1 --vocab 8192 --algos bpe,superbpe
    python bench/bench_script.py --pretokenizers script,script-v3,script-v3+boundary[w,p,d]+caps

Writes ``bench/results/script-<configs>-<vocab>.md``. Ratios are against the default pre-tokenizer (``script``)
in the same run (encoding: the default model's time over this model's, so below 1 is slower).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from _corpus import SHARED, read_docs  # noqa: E402
from _report import add_arguments, parse_args, rounded, sized, table, write_json  # noqa: E402
from bench_languages import best_rounds  # noqa: E402

import fastsw  # noqa: E402
from fastsw.encoding import encode_fast as fast_encode  # noqa: E402
from fastsw.encoding import wide_fast  # noqa: E402


def worker(args) -> None:
    docs, size = read_docs(SHARED / "corpus" / args.lang / "train.jsonl.gz", int(args.mb * 1e6))
    heldout, held_bytes = read_docs(SHARED / "corpus" / args.lang / "heldout.jsonl")
    if args.heldout_docs is not None:
        heldout = heldout[: args.heldout_docs]
        held_bytes = sum(len(doc.encode("utf-8")) for doc in heldout)
    kw = {"supermerges": args.vocab // 8} if args.algo == "superbpe" else {}
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a vocabulary falling short is reported in the table
        tok = fastsw.train(
            docs, algo=args.algo, vocab_size=args.vocab, pretokenizer=args.pretokenizer, backend="numba", **kw
        )
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for doc in heldout:  # exact round trips before anything is timed (and the encoder tables are built)
        if tok.decode(tok.encode(doc)) != doc:
            sys.exit(f"{args.pretokenizer}: a held-out document does not decode back; no figures reported")
    n_tokens = sum(len(tok.encode(doc)) for doc in heldout)
    tok.save(args.save)  # the parent times the encoding of every model of this corpus and algorithm in turns
    t1 = time.perf_counter()
    for doc in heldout:
        if tok.encode(doc, backend="python") != tok.encode(doc):
            sys.exit(f"{args.pretokenizer}: the fast path's ids differ from the reference's; no figures reported")
    encode_ref_s = time.perf_counter() - t1
    char_merges = 0
    from fastsw.pretokenizers.script_v3 import ScriptPretokenizer

    if isinstance(tok.pretokenizer, ScriptPretokenizer):  # SCRIPT: merges that make one character from its two atoms
        from fastsw.alphabet import atom_text
        from fastsw.pretokenizers.script_v3 import unspell

        n_alpha = len(tok.alphabet)
        char_merges = sum(1 for tb in tok.vocab[n_alpha:] if len(unspell(atom_text(tb))) == 1)
    seconds = {k: round(v, 2) for k, v in tok.training_info["seconds"].items()}
    print(
        json.dumps(
            {
                "wall": wall,
                "cpu": cpu,
                "rss_mb": rss_mb,
                "bytes": size,
                "alphabet": len(tok.alphabet),
                "regular": tok.n_regular,
                "super": tok.n_super,
                "char_merges": char_merges,
                "heldout_bytes": held_bytes,
                "heldout_tokens": n_tokens,
                "encode_ref_s": encode_ref_s,
                "stages": seconds,
            }
        )
    )


def check_pretokens(lang: str, n_docs: int = 200) -> None:
    """The compiled SCRIPT path against the plain-Python rule on the first documents (asserted before timing)."""
    from fastsw.pretokenizers.pretokenize import make_pretokenizer

    docs, _ = read_docs(SHARED / "corpus" / lang / "train.jsonl.gz", 400_000)
    for name in ("script-v3", "script-v3+boundary[w,p,d]+caps"):
        p = make_pretokenizer(name)
        for doc in docs[:n_docs]:
            if p.pretokenize(doc) != p.pretokenize_reference(doc):
                sys.exit(f"{lang}: {name} compiled pretokens differ from the reference; no timings reported")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--configs", default=None, help="LANG:MB,... (default en:10,zh:5; --quick: en:2,zh:1)")
    ap.add_argument("--vocab", type=int, default=32768)
    ap.add_argument("--algos", default="bpe", help="comma-separated: bpe, boundless, superbpe")
    ap.add_argument("--pretokenizers", default="script,script-v3")
    ap.add_argument("--rounds", type=int, default=15, help="timed encoding rounds, the best counts (default 15)")
    add_arguments(ap, "en 2 MB + zh 1 MB")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--lang", help=argparse.SUPPRESS)
    ap.add_argument("--mb", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--algo", help=argparse.SUPPRESS)
    ap.add_argument("--pretokenizer", help=argparse.SUPPRESS)
    ap.add_argument("--save", help=argparse.SUPPRESS)
    ap.add_argument("--heldout-docs", type=int, help=argparse.SUPPRESS)
    args = parse_args(ap)
    if args.worker:
        return worker(args)
    if args.configs is None:
        args.configs = sized(args, "en:10,zh:5", "en:2,zh:1", "en:0.05")
    if args.smoke:
        args.vocab, args.rounds, args.heldout_docs = 2500, 1, 20  # above SCRIPT v3's 1,953-token alphabet
    configs = [(c.split(":")[0], float(c.split(":")[1])) for c in args.configs.split(",")]
    pretoks = args.pretokenizers.split(",")
    lines = [
        f"# SCRIPT v3 against the default pre-tokenizer (vocab {args.vocab}, fast path)",
        "",
        "Ratios are against `script` (the default) in the same run.",
        "",
        "| corpus | algo | pre-tokenizer | train s | cpu s | peak RSS MB | × default time | held-out bytes/token "
        "| × default | merges (chars) | supermerges | encode MB/s | × default encode speed | reference encode MB/s "
        "| stages s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    rows = []
    fast_encode.warmup()
    wide_fast.warmup()  # the one-call path of plain SCRIPT models (compiled once, then loaded from the cache)
    for lang, mb in configs:
        check_pretokens(lang, sized(args, 200, 200, 20))
        heldout = read_docs(SHARED / "corpus" / lang / "heldout.jsonl")[0][: args.heldout_docs]
        for algo in args.algos.split(","):
            base = None
            results = {}
            tmp = tempfile.TemporaryDirectory()
            for name in pretoks:
                model_path = str(Path(tmp.name) / f"{len(results)}.json")
                cmd = [
                    sys.executable,
                    __file__,
                    "--worker",
                    "--lang",
                    lang,
                    "--mb",
                    str(mb),
                    "--algo",
                    algo,
                    "--pretokenizer",
                    name,
                    "--vocab",
                    str(args.vocab),
                    "--save",
                    model_path,
                ] + ([] if args.heldout_docs is None else ["--heldout-docs", str(args.heldout_docs)])
                proc = subprocess.run(cmd, capture_output=True, text=True)
                if proc.returncode != 0:
                    sys.exit(f"{lang} {algo} {name} failed:\n{proc.stderr}")
                results[name] = json.loads(proc.stdout.strip().splitlines()[-1])
                results[name]["model"] = fastsw.load(model_path)
            tmp.cleanup()
            # encoding: this corpus's models take turns in every round (one thread, one document per call, CPU
            # time, the best round), so their ratio compares passes under the same conditions
            best = best_rounds(
                {name: (lambda docs, tok=r["model"]: [tok.encode(d) for d in docs]) for name, r in results.items()},
                heldout,
                args.rounds,
            )
            for name, r in results.items():
                r["encode_s"] = best[name]
                bpt = r["heldout_bytes"] / r["heldout_tokens"]
                if name == "script":
                    base = r
                ratio_t = f"{r['wall'] / base['wall']:.2f}" if base else "-"
                ratio_c = f"{bpt / (base['heldout_bytes'] / base['heldout_tokens']):.3f}" if base else "-"
                speed = base["encode_s"] / r["encode_s"] if base else None
                stages = ", ".join(f"{k} {v}" for k, v in r["stages"].items())
                row = (
                    f"| {lang} {r['bytes'] / 1e6:.1f} MB | {algo} | `{name}` | {r['wall']:.1f} | {r['cpu']:.1f} | "
                    f"{r['rss_mb']:.0f} | {ratio_t} | {bpt:.3f} | {ratio_c} | {r['regular']} ({r['char_merges']}) | "
                    f"{r['super']} | {r['heldout_bytes'] / 1e6 / r['encode_s']:.2f} | "
                    f"{'-' if speed is None else f'{speed:.2f}'} | "
                    f"{r['heldout_bytes'] / 1e6 / r['encode_ref_s']:.2f} | {stages} |"
                )
                lines.append(row)
                rows.append(
                    [
                        f"{lang} {r['bytes'] / 1e6:.1f} MB",
                        algo,
                        name,
                        rounded(r["wall"], 1),
                        rounded(r["rss_mb"], 0),
                        rounded(bpt, 3),
                        rounded(r["heldout_bytes"] / 1e6 / r["encode_s"]),
                        rounded(speed),
                    ]
                )
                print(row, file=sys.stderr)
    if args.json:
        write_json(
            args.json,
            table(
                f"SCRIPT v3 against the default pre-tokenizer (vocab {args.vocab})",
                [
                    "corpus",
                    "algo",
                    "pre-tokenizer",
                    "train s",
                    "peak RSS MB",
                    "held-out bytes/token",
                    "encode MB/s",
                    "encode speed / default",
                ],
                rows,
                "Each model trained by fastsw in its own process on the first MB of the language's training text; "
                "encoding: the language's held-out documents one by one, one thread, the models of one corpus "
                f"taking turns for {args.rounds} rounds, the best round in CPU time, ids checked equal to the "
                "reference path's. 'encode speed / default': "
                "the default pre-tokenizer's (`script`) encoding time over this model's, same language and run.",
            ),
        )
    out = HERE / "results" / f"script-{args.configs.replace(':', '').replace(',', '-')}-{args.vocab}.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"\nwritten to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
