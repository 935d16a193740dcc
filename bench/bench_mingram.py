"""MinGram benchmark: training against fastsw BPE, HF ``UnigramTrainer`` and SentencePiece ``unigram``, and
encoding against fastsw BPE and HF's Unigram model, measured in the same run.

Each trainer runs in its own subprocess on the same documents (the first N MB of
``../shared/corpus/en/train.jsonl.gz``), read into memory before the clock starts, so wall time, CPU time and
peak RSS belong to training alone. Encoding then times, on the next N MB of the same file (text none of the
models saw): fastsw BPE and MinGram (``encode_batch_to_numpy``, all cores, and ``encode_ordinary`` per document on
one thread) and HF ``tokenizers`` running the MinGram model exported as a Unigram ``tokenizer.json`` (same
vocabulary and scores; ``encode_batch``, all cores). Before timing, MinGram's fast path must equal its
reference on a sample and the HF export must give the same number of tokens (same objective).

    python bench/bench_mingram.py --mb 10 --vocab 32768
    python bench/bench_mingram.py --mb 50 --vocab 32768 \
        --trainers fastsw-bpe,fastsw-mingram,hf-unigram

Writes ``bench/results/mingram-en-<mb>MB-<vocab>.md`` (and ``.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
from _corpus import SHARED, read_docs  # noqa: E402
from _report import missing_peers  # noqa: E402

TRAINERS = ["fastsw-bpe", "fastsw-mingram", "hf-unigram", "spm-unigram"]
#: the peers: trainer name -> module (the encoding phase's HF Unigram needs tokenizers too)
PEERS = {"hf-unigram": "tokenizers", "spm-unigram": "sentencepiece"}


def load_docs(mb: float, skip_mb: float = 0.0):
    return read_docs(SHARED / "corpus" / "en" / "train.jsonl.gz", int(mb * 1e6), skip_bytes=int(skip_mb * 1e6))


def train_child(name: str, mb: float, vocab: int, out_dir: Path) -> dict:
    import warnings

    docs, n_bytes = load_docs(mb)
    warnings.simplefilter("ignore")
    if name.startswith("fastsw"):
        import fastsw
        from fastsw.encoding import encode_fast as fast_encode
        from fastsw.trainers import bpe_fast as fast_train
        from fastsw.trainers import mingram

        fast_train.warmup()  # JIT (cached) outside the clock, as for every fastsw timing
        fast_encode.warmup()
        mingram.warmup()
    t0, c0 = time.perf_counter(), time.process_time()
    extra = {}
    if name == "fastsw-bpe":
        tok = fastsw.train(docs, algo="bpe", vocab_size=vocab)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        tok.save(out_dir / "bpe.json")
        extra["stages"] = tok.training_info["seconds"]
    elif name == "fastsw-mingram":
        tok = fastsw.train(docs, algo="mingram", vocab_size=vocab)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        tok.save(out_dir / "mingram.json")
        extra["stages"] = tok.training_info["seconds"]
        extra["vocab"] = tok.vocab_size
    elif name == "hf-unigram":
        from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers
        from fastsw import GPT4O_PATTERN

        tok = Tokenizer(models.Unigram())
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(GPT4O_PATTERN), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
        trainer = trainers.UnigramTrainer(
            vocab_size=vocab, show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        )
        tok.train_from_iterator(docs, trainer=trainer)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        extra["vocab"] = tok.get_vocab_size()
    elif name == "spm-unigram":
        import io
        import sentencepiece as spm

        lines = [line for d in docs for line in d.split("\n") if line.strip()]
        model = io.BytesIO()
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines),
            model_writer=model,
            model_type="unigram",
            vocab_size=vocab,
            input_sentence_size=0,
            max_sentence_length=1 << 20,
            num_threads=os.cpu_count() or 1,
            hard_vocab_limit=False,
            minloglevel=2,
        )
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        extra["lines"] = len(lines)
    else:
        raise SystemExit(f"unknown trainer {name}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"trainer": name, "wall": wall, "cpu": cpu, "peak_rss_mb": rss, "bytes": n_bytes, **extra}


def encode_phase(mb: float, out_dir: Path) -> dict:
    import fastsw
    from tokenizers import Tokenizer as HFTokenizer

    docs, n_bytes = load_docs(mb, skip_mb=mb)  # text the models did not see
    bpe = fastsw.load(out_dir / "bpe.json")
    mg = fastsw.load(out_dir / "mingram.json")
    report = mg.save_hf(out_dir / "mingram-unigram.json", allow_approximate=True)
    hf = HFTokenizer.from_file(str(out_dir / "mingram-unigram.json"))
    sample = docs[:200]
    # outputs agree before anything is timed
    assert [mg.encode(d) for d in sample] == [mg.encode(d, backend="python") for d in sample]
    check = fastsw.io.interop.verify_export(mg, hf, sample)
    assert check["roundtrip_ok"] and check["token_count_difference"] == 0, check
    for tok in (bpe, mg):
        tok.encode_batch_to_numpy(docs[:50])
    hf.encode_batch(docs[:50])

    def best_of(fn, repeat=3):
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return min(times)

    res = {"bytes": n_bytes, "hf_export": report, "agreement_on_sample": check["agreement"]}
    res["bpe_batch"] = best_of(lambda: bpe.encode_batch_to_numpy(docs))
    res["mingram_batch"] = best_of(lambda: mg.encode_batch_to_numpy(docs))
    res["hf_unigram_batch"] = best_of(lambda: hf.encode_batch(docs, add_special_tokens=False))
    one = docs[: max(1, len(docs) // 4)]
    one_bytes = sum(len(d.encode("utf-8")) for d in one)
    res["one_thread_bytes"] = one_bytes
    res["bpe_single"] = best_of(lambda: [bpe.encode_ordinary(d) for d in one], 2)
    res["mingram_single"] = best_of(lambda: [mg.encode_ordinary(d) for d in one], 2)
    res["hf_unigram_single"] = best_of(lambda: [hf.encode(d, add_special_tokens=False) for d in one], 2)
    ids_bpe, _ = bpe.encode_batch_to_numpy(docs)
    ids_mg, _ = mg.encode_batch_to_numpy(docs)
    res["bytes_per_token"] = {"bpe": n_bytes / len(ids_bpe), "mingram": n_bytes / len(ids_mg)}
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=10)
    ap.add_argument("--vocab", type=int, default=32768)
    ap.add_argument("--trainers", default=",".join(TRAINERS))
    ap.add_argument("--no-encode", action="store_true")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--dir", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        out = (
            train_child(args.child, args.mb, args.vocab, Path(args.dir))
            if args.child != "encode"
            else encode_phase(args.mb, Path(args.dir))
        )
        print(json.dumps(out))
        return
    trainers = args.trainers.split(",")
    missing = missing_peers({peer: module for peer, module in PEERS.items() if peer in trainers})
    trainers = [name for name in trainers if name not in missing]
    results = {"mb": args.mb, "vocab": args.vocab, "train": {}, "encode": None}
    with tempfile.TemporaryDirectory() as tmp:
        for name in trainers:
            proc = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    name,
                    "--mb",
                    str(args.mb),
                    "--vocab",
                    str(args.vocab),
                    "--dir",
                    tmp,
                ],
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                raise SystemExit(f"{name} failed:\n{proc.stderr}")
            results["train"][name] = json.loads(proc.stdout.strip().splitlines()[-1])
            print(name, results["train"][name], flush=True)
        if not args.no_encode and {"fastsw-bpe", "fastsw-mingram"} <= set(trainers) and "hf-unigram" not in missing:
            proc = subprocess.run(
                [sys.executable, __file__, "--child", "encode", "--mb", str(args.mb), "--dir", tmp],
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                raise SystemExit(f"encoding failed:\n{proc.stderr}")
            results["encode"] = json.loads(proc.stdout.strip().splitlines()[-1])
            print("encode", results["encode"], flush=True)
    write_report(results)


def write_report(r: dict) -> None:
    out = HERE / "results" / f"mingram-en-{r['mb']:g}MB-{r['vocab']}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    (out.with_suffix(".json")).write_text(json.dumps(r, indent=1))
    t = r["train"]
    lines = [
        f"# MinGram, English {r['mb']:g} MB, vocab {r['vocab']}",
        "",
        "| trainer | wall s | CPU s | peak RSS MB | MinGram / this |",
        "|---|---|---|---|---|",
    ]
    mg = t.get("fastsw-mingram", {}).get("wall")
    for name, row in t.items():
        ratio = f"{mg / row['wall']:.2f}" if mg else ""
        lines.append(f"| {name} | {row['wall']:.1f} | {row['cpu']:.1f} | {row['peak_rss_mb']:.0f} | {ratio} |")
    e = r.get("encode")
    if e:
        mbs = lambda k, n: n / 1e6 / e[k]  # noqa: E731
        lines += [
            "",
            f"Encoding {e['bytes'] / 1e6:.1f} MB of unseen English (MB/s; batch = all cores, single = "
            "one thread per document on a quarter of it):",
            "",
            "| encoder | batch MB/s | single MB/s | bytes/token |",
            "|---|---|---|---|",
        ]
        for key, label, bpt in (
            ("bpe", "fastsw BPE", e["bytes_per_token"]["bpe"]),
            ("mingram", "fastsw MinGram", e["bytes_per_token"]["mingram"]),
            ("hf_unigram", "HF Unigram (MinGram export)", e["bytes_per_token"]["mingram"]),
        ):
            lines.append(
                f"| {label} | {mbs(key + '_batch', e['bytes']):.1f} | "
                f"{mbs(key + '_single', e['one_thread_bytes']):.1f} | {bpt:.3f} |"
            )
        lines += [
            "",
            f"MinGram / BPE batch throughput: {e['bpe_batch'] / e['mingram_batch']:.2f}; "
            f"single: {e['bpe_single'] / e['mingram_single']:.2f}. MinGram / HF Unigram batch: "
            f"{e['hf_unigram_batch'] / e['mingram_batch']:.2f}; single: "
            f"{e['hf_unigram_single'] / e['mingram_single']:.2f}. HF export agreement on 200 documents: "
            f"{e['agreement_on_sample']:.3f} (identical token counts).",
        ]
    out.write_text("\n".join(lines) + "\n")
    print(out.read_text())


if __name__ == "__main__":
    main()
