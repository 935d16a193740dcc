"""SYNTHETIC scale corpora: English text beyond the 100 MB of real text, whose distinct pretokens and supermerge
candidates keep growing as the real text's do (Heaps' law fitted on real prefixes).

The real English training file (``$FASTSW_SHARED/corpus/en/train.jsonl.gz``, 100 MB, 13,297 documents) is too small
to measure training at 1 GB or 5 GB, and repeating it would be wrong: a repeated corpus adds no new pretokens and no
new supermerge candidates, so its count tables (what fastsw's memory depends on) stop growing at 100 MB. Real text
keeps adding both, following Heaps' law ``V(n) = K * n ** beta`` (n in bytes).

How a corpus of N bytes is made (seeded, so the same call writes the same file):

* pass 0 is the real text, verbatim (up to 100 MB);
* pass k >= 1 is the real documents again, in a new seeded order, with two edits on words (space-separated pieces
  made of letters only):

  - **coinage**: a word becomes a new word (its first half + syllables spelled from a running number, e.g.
    ``inter`` -> ``intkalomi``), never seen before; half of the coinages instead repeat an earlier coinage of the same
    pass, so new words also recur (they are not all hapaxes). A pass makes ``2 * (V_p(end) - V_p(start))`` coinages
    (half new), so the distinct pretokens follow the fitted pretoken curve ``V_p``;
  - **swap**: a word is replaced by another word of the same document, so a word sequence that never occurred
    appears (a new supermerge candidate, from known words). The swap rate is set so that the distinct candidates
    follow the fitted candidate curve ``V_c``: ``swaps = (V_c(end) - V_c(start)) / EFFICIENCY`` where
    ``EFFICIENCY`` (new distinct candidates per swap) was measured with ``calibrate`` (see its value below).

Commands::

    python bench/synth_corpus.py fit                     # real curves 10..100 MB, Heaps fits -> bench/results/heaps.json
                                                         # (the fits are also written into FIT below)
    python bench/synth_corpus.py generate --size 1GB     # -> $FASTSW_DATA/synth-en-1GB-s0.jsonl (prints the path)
    python bench/synth_corpus.py calibrate               # 200 MB synthetic: measured vs fitted (sets EFFICIENCY)
    python bench/synth_corpus.py plot --synthetic 200MB,300MB  # real + fitted + SYNTHETIC points -> heaps.png

Output: plain JSON Lines (``{"text": ...}``), written to a temporary file and renamed. Every figure or table that
uses these files must say "synthetic".
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from _corpus import DATA, SHARED, read_docs  # noqa: E402

REAL = SHARED / "corpus" / "en" / "train.jsonl.gz"
RESULTS = HERE / "results"
HEAPS_FILE = RESULTS / "heaps.json"
#: Heaps' law ``(K, beta)`` fitted by ``fit`` on the real English prefixes of 10, 20, ..., 100 MB (n in bytes; candidates
#: at phase-1 vocab 32768, paper profile); ``generate`` draws from these numbers, so a file depends only on size and seed
FIT = {"pretokens": (5.784, 0.6088), "letter_runs": (0.02766, 0.9797), "candidates": (0.03684, 0.9646)}
#: phase-1 vocabulary with which candidates are counted (the benchmark's vocab)
VOCAB = 32768
#: new distinct supermerge candidates per swap (coinages' effect included), measured on a 200 MB synthetic corpus:
#: pass 1 with 2.99 M swaps (and 0.37 M coinages) added 1.62 M distinct candidates
EFFICIENCY = 0.542
_SYLLABLES = ["ka", "lo", "mi", "nu", "re", "sa", "ti", "vo", "be", "da", "fe", "go", "hu", "je", "po", "zu"]


# ---- measuring -----------------------------------------------------------------------------------------------------


def _parse_size(text: str) -> int:
    m = re.fullmatch(r"\s*([0-9.]+)\s*([kKmMgG]?)B?\s*", text)
    if not m:
        raise SystemExit(f"size {text!r}: give a number of bytes or e.g. 500MB, 1GB, 5GB")
    return int(float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2).lower()])


def _label(size: int) -> str:
    return f"{size / 1e9:g}GB" if size >= 1e9 else f"{size / 1e6:g}MB"


def iter_jsonl(path: Path):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            yield json.loads(line)["text"]


def table_sizes(docs) -> dict:
    """Distinct pretokens, letter runs and supermerge candidates (phase 1 to ``VOCAB``, paper profile) of ``docs``,
    with fastsw's own stages (what ``train(algo="boundless")`` reports as ``unique_candidates``)."""
    from fastsw.alphabet import default_alphabet
    from fastsw.corpus.counting import count_corpus
    from fastsw.trainers.bpe_fast import FastBackend
    from fastsw.pretokenizers.pretokenize import make_pretokenizer
    from fastsw.trainers.train import phase1_tokenizer

    pretok = make_pretokenizer("script")
    counts = count_corpus(docs, pretok, collect_runs=True)
    alph = default_alphabet("paper")
    stages = FastBackend()
    merges, words, _ = stages.phase1(counts, alph, "paper", VOCAB - len(alph))
    cands = stages.candidates(counts, words, phase1_tokenizer(alph, merges, pretok, "paper"))
    return {
        "bytes": counts.n_bytes,
        "pretokens": len(counts.pretokens),
        "letter_runs": counts.n_runs,
        "candidates": int(len(cands[2])),
    }


def fit_heaps(xs, ys):
    """Least squares on log-log: ``(K, beta)`` with ``y ~ K * x ** beta``."""
    beta, log_k = np.polyfit(np.log(np.asarray(xs, float)), np.log(np.asarray(ys, float)), 1)
    return float(np.exp(log_k)), float(beta)


def heaps(model: dict, key: str, n: float) -> float:
    k, beta = model[key]
    return k * n**beta


def cmd_fit(args) -> None:
    points = []
    for mb in range(10, 101, 10):
        docs, _ = read_docs(REAL, mb * 10**6)
        t = time.perf_counter()
        points.append(table_sizes(docs))
        print(f"real {mb} MB: {points[-1]} ({time.perf_counter() - t:.1f} s)", file=sys.stderr)
    model = {
        key: fit_heaps([p["bytes"] for p in points], [p[key] for p in points])
        for key in ("pretokens", "letter_runs", "candidates")
    }
    RESULTS.mkdir(exist_ok=True)
    HEAPS_FILE.write_text(json.dumps({"real": points, "fit": model, "vocab": VOCAB}, indent=1))
    for key, (k, beta) in model.items():
        print(f"{key}: V(n) = {k:.4g} * n^{beta:.4f}")


def load_model() -> dict:
    if not HEAPS_FILE.exists():
        raise SystemExit(f"{HEAPS_FILE} is missing; run 'python bench/synth_corpus.py fit' first")
    return json.loads(HEAPS_FILE.read_text())


# ---- generating ----------------------------------------------------------------------------------------------------


def _coin(word: str, number: int) -> str:
    digits = []
    while True:
        number, d = divmod(number, 16)
        digits.append(_SYLLABLES[d])
        if not number:
            break
    return word[: max(2, len(word) // 2)] + "".join(digits)


def generate(size: int, seed: int = 0, out: Path = None, progress: bool = True) -> Path:
    """Write a SYNTHETIC corpus of about ``size`` bytes of text (see the module docstring) and return its path."""
    from fastsw.files import atomic_open

    fit = FIT
    out = Path(out) if out else DATA / f"synth-en-{_label(size)}-s{seed}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    docs = list(iter_jsonl(REAL))
    real_bytes = sum(len(d.encode("utf-8")) for d in docs)
    n_words = sum(w.isalpha() for d in docs for w in d.split(" "))  # words an edit may touch (82 % of pieces)
    rng = np.random.default_rng(seed)
    written, k, coined, t0 = 0, 0, 0, time.perf_counter()
    with atomic_open(out, "w") as f:
        while written < size:
            start, end = written, written + real_bytes  # rates for a whole pass, also when the file ends in it
            if k == 0:
                order, p_coin, p_swap = range(len(docs)), 0.0, 0.0
            else:
                order = rng.permutation(len(docs))
                new_pretokens = heaps(fit, "pretokens", end) - heaps(fit, "pretokens", start)
                new_candidates = heaps(fit, "candidates", end) - heaps(fit, "candidates", start)
                p_coin = 2 * new_pretokens / n_words
                p_swap = max(0.0, new_candidates / EFFICIENCY / n_words)
            pass_coins = []
            for i in order:
                doc = docs[i]
                if k:
                    words = doc.split(" ")
                    draws = rng.random(len(words))
                    chosen = np.flatnonzero(draws < p_coin + p_swap)
                    partners = rng.integers(0, len(words), size=len(chosen)).tolist()
                    for j, partner in zip(chosen.tolist(), partners):
                        w = words[j]
                        if not w.isalpha():
                            continue
                        if draws[j] < p_coin:
                            if pass_coins and draws[j] < p_coin / 2:
                                words[j] = pass_coins[int(draws[j] / p_coin * 2 * len(pass_coins))]
                            else:
                                words[j] = _coin(w, coined)
                                coined += 1
                                pass_coins.append(words[j])
                        else:
                            words[j] = words[partner]
                    doc = " ".join(words)
                f.write(json.dumps({"text": doc}, ensure_ascii=False))
                f.write("\n")
                written += len(doc.encode("utf-8"))
                if written >= size:
                    break
            k += 1
            if progress:
                print(
                    f"  pass {k - 1}: {written / 1e6:.0f} MB, p_coin {p_coin:.4f} p_swap {p_swap:.4f} "
                    f"({time.perf_counter() - t0:.0f} s)",
                    file=sys.stderr,
                )
    return out


def corpus_path(size: int, seed: int = 0) -> Path:
    """The SYNTHETIC corpus of ``size`` bytes, generated on first use."""
    path = DATA / f"synth-en-{_label(size)}-s{seed}.jsonl"
    return path if path.exists() else generate(size, seed)


def cmd_generate(args) -> None:
    print(generate(_parse_size(args.size), args.seed, args.out))


def cmd_calibrate(args) -> None:
    size = _parse_size(args.size)
    model = load_model()
    path = corpus_path(size, args.seed)
    got = table_sizes(iter_jsonl(path))
    fit = model["fit"]
    for key in ("pretokens", "letter_runs", "candidates"):
        print(f"{key}: synthetic {got[key]} fitted {heaps(fit, key, got['bytes']):.0f}")
    model.setdefault("synthetic", [])
    model["synthetic"] = [p for p in model["synthetic"] if p["bytes"] != got["bytes"]] + [got]
    HEAPS_FILE.write_text(json.dumps(model, indent=1))


def cmd_plot(args) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    model = load_model()
    real, synth, fit = model["real"], model.get("synthetic", []), model["fit"]
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    top = max([p["bytes"] for p in real + synth])
    xs = np.geomspace(real[0]["bytes"], top, 50)
    for ax, key in zip(axes, ("pretokens", "letter_runs", "candidates")):
        k, beta = fit[key]
        ax.plot([p["bytes"] / 1e6 for p in real], [p[key] for p in real], "o", label="real English")
        ax.plot(xs / 1e6, k * xs**beta, "-", label=f"Heaps fit {k:.3g}·n^{beta:.3f} (10-100 MB)")
        if synth:
            ax.plot([p["bytes"] / 1e6 for p in synth], [p[key] for p in synth], "s", label="SYNTHETIC (this script)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("corpus MB")
        ax.set_title(f"distinct {key.replace('_', ' ')}")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    fig.suptitle(f"Heaps' law: real English vs SYNTHETIC scale corpora (candidates at phase-1 vocab {VOCAB})")
    fig.tight_layout()
    fig.savefig(RESULTS / "heaps.png", dpi=120)
    print(RESULTS / "heaps.png")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("fit").set_defaults(func=cmd_fit)
    g = sub.add_parser("generate")
    g.add_argument("--size", required=True)
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--out", type=Path)
    g.set_defaults(func=cmd_generate)
    c = sub.add_parser("calibrate")
    c.add_argument("--size", default="200MB")
    c.add_argument("--seed", type=int, default=0)
    c.set_defaults(func=cmd_calibrate)
    sub.add_parser("plot").set_defaults(func=cmd_plot)
    args = p.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
