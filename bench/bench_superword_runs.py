"""Where a superword model's extra encoding time goes: its supermerge runs, against plain BPE.

One command (uses the models ``bench/bench_languages.py`` caches, training them when missing):

    python bench/bench_superword_runs.py --langs fr,en,de,hi

For each language's held-out text, the own-language plain BPE and BoundlessBPE models (vocab 32768, ``simple``):

* the runs: pretokens, those that are one eligible token, runs of >= 2 of them, their adjacent pairs, how many are
  supermerge pairs, how many the cross filter keeps together (``fastsw.encoding.encode_fast.cross_pairs``) and the segments
  the runs are cut into;
* the kernel's CPU time per pass over the documents (one call per document, as ``encode_ordinary``), best of
  ``--rounds`` rounds, each configuration warm (one pass untimed, then three timed) and the configurations in turn:
  plain BPE as it runs and with no id eligible, BoundlessBPE with no id eligible (the regular part alone), with
  its runs tracked and cut but not merged (the pair filter cleared), and as it runs.

Compare the ratios within one run more than the absolute figures.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _corpus import SHARED, read_docs  # noqa: E402
from fastsw.encoding import encode_kernels as K  # noqa: E402
from bench_languages import model as cached_model  # noqa: E402
from fastsw.encoding import encode_fast as fast_encode  # noqa: E402


def kernel_args(enc, scanned, flags=None, use_super=None, s_bits=None):
    """The kernel's arguments for each scanned document, some of the model's tables replaced."""
    tables = (
        enc.byte_ids,
        enc.sc_short,
        enc.sc_long,
        enc.tb,
        enc.r_table,
        enc.s_table,
        enc.s_bits if s_bits is None else s_bits,
        enc.flags if flags is None else flags,
        enc.chars,
    )
    return [
        (*s, *tables, 1, enc.use_super if use_super is None else use_super, fast_encode.SHORT_LIMIT) for s in scanned
    ]


def run_stats(tok, enc, scanned):
    """Counts of the runs of single eligible tokens (each pretoken encoded on its own, no supermerges)."""
    supers = dict(tok.super_ranks)
    lefts, rights = fast_encode.cross_pairs(supers)
    cross = set(zip(lefts.tolist(), rights.tolist()))
    c = Counter()
    segments = Counter()
    for s in scanned:
        data, ends = s[0], s[1]
        n = ends.shape[0]
        lengths = ends - np.concatenate(([0], ends[:-1]))
        ids, off = K._encode_docs(data, lengths, np.arange(n + 1, dtype=np.int64), *kernel_args(enc, [()], None, 0)[0])
        sizes = np.diff(off)
        c["pretokens"] += n
        run = []
        for i in range(n + 1):
            if i < n and sizes[i] == 1 and enc.flags[ids[off[i]]] & 1:
                run.append(int(ids[off[i]]))
                c["one eligible token"] += 1
                continue
            if len(run) >= 2:
                c["runs >= 2"] += 1
                seg = 1
                for a, b in zip(run, run[1:]):
                    c["adjacent pairs"] += 1
                    c["supermerge pairs"] += (a, b) in supers
                    if (a, b) in cross:
                        c["kept together"] += 1
                        seg += 1
                    else:
                        segments[min(seg, 4)] += 1
                        seg = 1
                segments[min(seg, 4)] += 1
            run = []
    return c, segments


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--langs", default="fr,en,de,hi")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--train-mb", type=float, default=20, help="MB of training text per model (default 20)")
    args = ap.parse_args()
    fast_encode.warmup()
    for lang in args.langs.split(","):
        docs = read_docs(SHARED / "corpus" / lang / "heldout.jsonl")[0]
        kb = sum(len(d.encode("utf-8")) for d in docs) / 1e3
        bpe = cached_model(lang, "bpe", "simple", args.train_mb)  # bench/bench_languages.py's, trained when missing
        bl = cached_model(lang, "boundless", "simple", args.train_mb)
        e_bpe, e_bl = bpe._fast(), bl._fast()
        s_bpe = [e_bpe._scan(e_bpe._slice_scanner(), [d]) for d in docs]
        s_bl = [e_bl._scan(e_bl._slice_scanner(), [d]) for d in docs]
        c, segments = run_stats(bl, e_bl, s_bl)
        print(
            f"{lang} ({kb:.0f} kB): "
            + ", ".join(f"{k} {v}" for k, v in c.items())
            + "; segments of 1/2/3/4+: "
            + "/".join(str(segments[k]) for k in (1, 2, 3, 4))
        )
        no_pairs = e_bl.s_bits.copy()
        no_pairs[: K._CROSS_WORDS] = 0
        configs = {
            "BPE": kernel_args(e_bpe, s_bpe),
            "BPE, no runs": kernel_args(e_bpe, s_bpe, np.zeros_like(e_bpe.flags)),
            "BoundlessBPE, regular part": kernel_args(e_bl, s_bl, np.zeros_like(e_bl.flags), 0),
            # the pair filter cleared, the cross filter kept: the runs are cut into segments, none is merged
            "BoundlessBPE, runs tracked, not merged": kernel_args(e_bl, s_bl, s_bits=no_pairs),
            "BoundlessBPE": kernel_args(e_bl, s_bl),
        }
        best = {k: float("inf") for k in configs}
        for _ in range(args.rounds):
            for name, calls in configs.items():
                for a in calls:
                    K._encode_docs(*a)
                t0 = time.process_time()
                for _ in range(3):
                    for a in calls:
                        K._encode_docs(*a)
                best[name] = min(best[name], (time.process_time() - t0) / 3)
        for name, sec in best.items():
            print(f"  {name}: {sec * 1e3:.2f} ms ({best['BPE'] / sec:.2f} x BPE's kernel)")


if __name__ == "__main__":
    main()
