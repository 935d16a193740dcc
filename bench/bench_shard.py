"""Files in, shards on disk: ``fastsw shard`` against the data-prep recipes users copy, same documents, same
vocabulary, same output bytes.

    python bench/bench_shard.py                 # 20 MB per corpus, 3 rounds
    python bench/bench_shard.py --quick         # 2 MB per corpus, 2 rounds (smoke run)
    python bench/bench_shard.py --json OUT      # also write the tables for bench/perfpage.py

Corpora (real text of ``../shared/corpus``): English, Chinese, and a 12-language mix (equal bytes of each), each
written as two local JSONL files. Vocabularies: tiktoken's o200k_base, and a fastsw BPE model of 32768 tokens
trained on the bundled sample corpus (``pretokenizer="simple"``), given to the peers as ``to_tiktoken()`` (its
ranks) and ``save_hf`` (the same vocabulary and merges). Every pipeline runs in its own process, on 2 cores, and
is timed from reading the files to the shards on disk (building the tokenizer is not timed); the pipelines take
turns, round after round, and each figure is the best round's. Wall time and CPU time (user + system of the
process and its children, ``resource.getrusage``) are both reported: when other processes compete for the
cores, the CPU time is the steadier measure. Pipelines:

* ``fastsw shard``: ``fastsw.shard(files, tok, out, workers=2)``, formats ``bin`` and ``llmc``.
* llm.c (``dev/data/fineweb.py``): documents read in the main process, ``multiprocessing.Pool(2).imap(tokenize,
  docs, chunksize=16)`` with tiktoken ``encode_ordinary``, shards of ``--shard-tokens`` ids with llm.c's 256 x
  int32 header (uint16 ids: its GPT-2 header; uint32: its Llama 3 header). The recipe's one change: the
  end-of-text token goes after each document (nanoGPT's and fastsw's place) rather than before, so that the bytes
  can be compared.
* nanoGPT (``data/openwebtext/prepare.py``): HF ``datasets.load_dataset("json", data_files=...)`` (local files,
  a fresh cache folder), ``.map(process, num_proc=2)`` with tiktoken ``encode_ordinary`` + EOT, then a
  ``np.memmap`` (uint16, or uint32 for o200k's ids) filled shard by shard as the recipe does.
* HF ``tokenizers``: ``encode_batch`` (Rayon, 2 threads) on batches of 1000 documents read from the files, EOT
  appended, ids written to one flat file.

Every peer's output is compared with fastsw's (llm.c's shards with ``--format llmc``, the flat files with the
one ``bin`` shard); a difference stops the run. Also: a fastsw BPE and a SuperBPE model of the same vocabulary
size trained on the bundled sample corpus, shard speed and the encoder alone (one thread, no reading or writing)
on the mix: superword models against plain BPE. MB = 10**6 bytes of UTF-8 document text; tokens include the
end-of-text tokens.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
from _report import add_arguments, missing_peers, parse_args, sized, write_json  # noqa: E402

LANGS = ["en", "de", "fr", "ru", "fi", "ar", "ko", "zh", "ja", "th", "hi", "my"]
THREADS = 2
SHARD_TOKENS = 10**8


def corpus_docs(name: str, megabytes: float):
    from _corpus import SHARED, read_docs

    if name == "mix":
        docs = []
        for lang in LANGS:
            docs += read_docs(SHARED / f"corpus/{lang}/train.jsonl.gz", megabytes * 1e6 / len(LANGS))[0]
        return docs
    return read_docs(SHARED / f"corpus/{name}/train.jsonl.gz", megabytes * 1e6)[0]


def write_inputs(docs, folder: Path):
    half = len(docs) // 2
    files = []
    for k, part in enumerate((docs[:half], docs[half:])):
        path = folder / f"part{k}.jsonl"
        path.write_text("".join(json.dumps({"text": d}, ensure_ascii=False) + "\n" for d in part), encoding="utf-8")
        files.append(str(path))
    return files


def read_texts(files):
    for f in files:
        with open(f, encoding="utf-8") as fh:
            for line in fh:
                yield json.loads(line)["text"]


# ---- the vocabularies -------------------------------------------------------------------------------------------
#
# A vocabulary is "o200k" or the path of a fastsw BPE model file; for a model file the parent also writes
# PATH.hf.json (save_hf), so that every pipeline builds its tokenizer from the same ranks.


def fastsw_tok(vocab):
    import fastsw

    if vocab == "o200k":
        from fastsw.io import tiktoken_vocab as tv

        return fastsw.Tokenizer.load_tiktoken(tv.bpe_openai_rank_file("o200k_base"), pattern="o200k")
    return fastsw.Tokenizer.load(vocab)


def tiktoken_enc(vocab):
    import tiktoken
    from fastsw.io import tiktoken_vocab as tv

    tok = fastsw_tok(vocab)
    if vocab != "o200k":
        return tok.to_tiktoken()
    return tiktoken.Encoding(
        "o200k_base",
        pat_str=tv.PATTERNS["o200k"],
        mergeable_ranks={t: r for r, t in enumerate(tok.vocab)},
        special_tokens=tv.SPECIAL_TOKENS["o200k"],
    )


def hf_tok(vocab):
    if vocab == "o200k":
        from bench_tiktoken import hf_from_ranks
        from fastsw.io import tiktoken_vocab as tv

        return hf_from_ranks(fastsw_tok(vocab), tv.PATTERNS["o200k"])
    import tokenizers

    return tokenizers.Tokenizer.from_file(vocab + ".hf.json")


def dtype_of(tok):
    from fastsw.encoding.shard import dtype_for

    return dtype_for(tok.n_vocab)


def clock():
    """(wall seconds, CPU seconds of this process and its waited-for children)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter(), me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def since(t0):
    t1 = clock()
    return t1[0] - t0[0], t1[1] - t0[1]


# ---- the pipelines (each runs in a child process) -------------------------------------------------------------


def run_fastsw(files, out, fmt, vocab):
    import fastsw
    from fastsw.encoding.shard import encode_arrays

    tok = fastsw_tok(vocab)
    encode_arrays(tok, ["warm up"] * 4, THREADS)  # the encoder's tables, as the peers' tokenizers are built untimed
    t = clock()
    fastsw.shard(files, tok, out, format=fmt, workers=THREADS, shard_tokens=SHARD_TOKENS)
    return since(t)


def run_encode_only(files, out, vocab):
    """The encoder alone: the documents in memory, one thread, ids to a numpy array (no framing, no output)."""
    from fastsw.encoding.shard import encode_arrays

    tok = fastsw_tok(vocab)
    docs = list(read_texts(files))
    encode_arrays(tok, docs[:10], 1)
    t = clock()
    ids, _ = encode_arrays(tok, docs, 1)
    r = since(t)
    os.makedirs(out)
    np.save(os.path.join(out, "count.npy"), np.array([len(ids) + len(docs)]))
    return r


_ENC = None
_DTYPE = None


def _llmc_tokenize(doc):
    tokens = _ENC.encode_ordinary(doc)
    tokens.append(_ENC.eot_token)
    return np.array(tokens, dtype=_DTYPE)


def run_llmc(files, out, vocab):
    """llm.c's dev/data/fineweb.py loop (see the module docstring for the one change)."""
    import multiprocessing as mp
    from fastsw.encoding.shard import header_bytes

    global _ENC, _DTYPE
    _ENC = tiktoken_enc(vocab)
    _DTYPE = dtype_of(fastsw_tok(vocab))
    os.makedirs(out)
    t = clock()
    with mp.get_context("fork").Pool(THREADS) as pool:
        shard_index = 0
        all_tokens_np = np.empty((SHARD_TOKENS,), dtype=_DTYPE)
        token_count = 0
        for tokens in pool.imap(_llmc_tokenize, read_texts(files), chunksize=16):
            if token_count + len(tokens) < SHARD_TOKENS:
                all_tokens_np[token_count : token_count + len(tokens)] = tokens
                token_count += len(tokens)
            else:
                remainder = SHARD_TOKENS - token_count
                all_tokens_np[token_count : token_count + remainder] = tokens[:remainder]
                _llmc_write(os.path.join(out, f"shard_{shard_index:06d}.bin"), all_tokens_np, header_bytes)
                shard_index += 1
                all_tokens_np[0 : len(tokens) - remainder] = tokens[remainder:]
                token_count = len(tokens) - remainder
        if token_count != 0:
            _llmc_write(os.path.join(out, f"shard_{shard_index:06d}.bin"), all_tokens_np[:token_count], header_bytes)
    return since(t)


def _llmc_write(filename, toks, header_bytes):
    with open(filename, "wb") as f:  # llm.c's write_datafile: 256 x int32 header, then the ids
        f.write(header_bytes("llmc", _DTYPE, len(toks)))
        f.write(toks.astype(_DTYPE).tobytes())


def run_nanogpt(files, out, vocab):
    """nanoGPT's data/openwebtext/prepare.py, on local JSONL files."""
    import datasets

    enc = tiktoken_enc(vocab)
    dtype = dtype_of(fastsw_tok(vocab))
    cache = tempfile.mkdtemp(dir=os.path.dirname(out))
    os.makedirs(out)
    datasets.disable_progress_bars()
    t = clock()
    dataset = datasets.load_dataset("json", data_files=files, split="train", cache_dir=cache)

    def process(example):
        ids = enc.encode_ordinary(example["text"])
        ids.append(enc.eot_token)
        return {"ids": ids, "len": len(ids)}

    tokenized = dataset.map(process, remove_columns=["text"], num_proc=THREADS)
    arr_len = np.sum(tokenized["len"], dtype=np.uint64)
    arr = np.memmap(os.path.join(out, "train.bin"), dtype=dtype, mode="w+", shape=(int(arr_len),))
    total_batches = min(1024, len(tokenized))
    idx = 0
    for batch_idx in range(total_batches):
        batch = tokenized.shard(num_shards=total_batches, index=batch_idx, contiguous=True).with_format("numpy")
        arr_batch = np.concatenate(batch["ids"])
        arr[idx : idx + len(arr_batch)] = arr_batch
        idx += len(arr_batch)
    arr.flush()
    del arr
    return since(t)


def run_hf(files, out, vocab):
    tok = fastsw_tok(vocab)
    hf = hf_tok(vocab)
    dtype = dtype_of(tok)
    eot = tok.special_tokens["<|endoftext|>"]
    os.makedirs(out)
    t = clock()
    with open(os.path.join(out, "train.bin"), "wb") as f:
        docs = read_texts(files)
        while True:
            batch = [d for _, d in zip(range(1000), docs)]
            if not batch:
                break
            ids = []
            for e in hf.encode_batch(batch, add_special_tokens=False):
                ids += e.ids
                ids.append(eot)
            f.write(np.array(ids, dtype).tobytes())
    return since(t)


PIPELINES = {
    "fastsw shard (bin)": lambda files, out, vocab: run_fastsw(files, out, "bin", vocab),
    "fastsw shard (llmc)": lambda files, out, vocab: run_fastsw(files, out, "llmc", vocab),
    "llm.c Pool + tiktoken": run_llmc,
    "nanoGPT datasets.map + tiktoken": run_nanogpt,
    "HF tokenizers encode_batch": run_hf,
}
ENCODE_ONLY = "fastsw encoder alone (1 thread)"
#: what the peers' pipelines import (a pipeline whose name starts with a missing one's is left out)
PEER_MODULES = {"llm.c": "tiktoken", "nanoGPT": "datasets", "HF": "tokenizers"}
CHILDREN = {**PIPELINES, ENCODE_ONLY: run_encode_only}


def child(args) -> None:
    files = json.loads(args.files)
    secs, cpu = CHILDREN[args.child](files, args.out, args.vocab)
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps({"seconds": secs, "cpu": cpu, "rss_mb": (me + kids) / 1024}))


def run_child(name, files, out, vocab):
    cmd = [
        sys.executable,
        __file__,
        "--child",
        name,
        "--files",
        json.dumps(files),
        "--out",
        str(out),
        "--vocab",
        str(vocab),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "TOKENIZERS_PARALLELISM": "true"})
    if done.returncode != 0:
        raise SystemExit(f"{name} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def best_of(names, files, folder: Path, vocab, rounds):
    """Every pipeline of ``names`` ``rounds`` times, taking turns; per pipeline the best wall and the best CPU
    time, the largest peak RSS, and the last round's output folder."""
    results = {}
    for r in range(rounds):
        for name in names:
            out = folder / f"round{r}" / name.split()[0].replace(".", "") / name.split()[-1].strip("()")
            out.parent.mkdir(parents=True, exist_ok=True)
            got = run_child(name, files, out, vocab)
            was = results.get(name)
            results[name] = (
                got
                if was is None
                else {
                    "seconds": min(was["seconds"], got["seconds"]),
                    "cpu": min(was["cpu"], got["cpu"]),
                    "rss_mb": max(was["rss_mb"], got["rss_mb"]),
                }
            )
            results[name]["out"] = out
    return results


def shard_files(folder: Path):
    return sorted(p for p in folder.iterdir() if p.name.startswith("shard_") and not p.name.endswith(".idx.npy"))


def check_same(name, folder: Path, fastsw_bin: Path, fastsw_llmc: Path):
    if name.startswith("llm.c"):
        mine, theirs = shard_files(fastsw_llmc), shard_files(folder)
        same = len(mine) == len(theirs) and all(a.read_bytes() == b.read_bytes() for a, b in zip(mine, theirs))
    else:
        mine = shard_files(fastsw_bin)
        same = len(mine) == 1 and mine[0].read_bytes() == (folder / "train.bin").read_bytes()
    if not same:
        raise SystemExit(f"{name}: its output differs from fastsw's ({folder})")


def train_models(folder: Path, smoke: bool = False):
    """The fastsw models trained on the bundled sample corpus: ``{name: path}`` (``smoke``: small vocabularies
    under the same names)."""
    import fastsw
    from fastsw.corpus.sample import sample_documents

    sample = list(sample_documents())
    k = 8 if smoke else 1
    specs = {
        "bpe32k": dict(algo="bpe", vocab_size=32768 // k, pretokenizer="simple"),
        "bpe8k": dict(algo="bpe", vocab_size=8000 // k),
        "superbpe8k": dict(algo="superbpe", vocab_size=8000 // k, supermerges=1000 // k),
    }
    paths = {}
    for name, kw in specs.items():
        tok = fastsw.train(sample, special_tokens=["<|endoftext|>"], **kw)
        paths[name] = str(folder / f"{name}.json")
        tok.save(paths[name])
        if name == "bpe32k":
            info = tok.save_hf(paths[name] + ".hf.json")
            if not info["exact"]:
                raise SystemExit(f"the HF export of the 32k model is not exact: {info['reasons']}")
            tok.to_tiktoken()  # refuses an approximate export
    return paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(ap, "2 MB per corpus, 2 rounds")
    ap.add_argument("--mb", type=float, default=None, help="megabytes of text per corpus (default 20, quick 2)")
    ap.add_argument("--rounds", type=int, default=None, help="rounds of every pipeline (default 3, quick 2)")
    ap.add_argument("--corpora", default=None, help="comma-separated: en, zh, mix (default: all; --smoke: en)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--files", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--out", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--vocab", default=None, help=argparse.SUPPRESS)
    args = parse_args(ap)
    if args.child:
        child(args)
        return
    mb = args.mb or sized(args, 20, 2, 0.02)
    rounds = args.rounds or sized(args, 3, 2, 1)
    args.corpora = args.corpora or sized(args, "en,zh,mix", "en,zh,mix", "en")
    missing = missing_peers(PEER_MODULES)
    args.pipelines = [name for name in PIPELINES if not any(name.startswith(peer) for peer in missing)]
    command = (
        "python bench/bench_shard.py"
        + (" --smoke" if args.smoke else " --quick" if args.quick else "")
        + (f" --mb {args.mb:g}" if args.mb else "")
        + (f" --rounds {args.rounds}" if args.rounds else "")
        + (f" --corpora {args.corpora}" if args.corpora != "en,zh,mix" else "")
    )
    work = Path(tempfile.mkdtemp(prefix="bench-shard-"))
    try:
        run(args, mb, rounds, command, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(args, mb, rounds, command, work: Path) -> None:
    fastsw_tok("o200k")  # builds the cached tables once, outside the timed runs
    models = train_models(work, smoke=args.smoke)
    vocabs = {"o200k_base": "o200k", "fastsw BPE 32k": models["bpe32k"]}
    columns = [
        "corpus",
        "pipeline",
        "MB/s",
        "M tokens/s",
        "CPU s",
        "M tokens per CPU s",
        "peak RSS (MB)",
        "vs fastest peer (wall)",
        "vs fastest peer (CPU)",
    ]
    tables, summary = [], []
    for vocab_name, vocab in vocabs.items():
        rows = []
        for corpus in args.corpora.split(","):
            docs = corpus_docs(corpus, mb)
            nbytes = sum(len(d.encode("utf-8")) for d in docs)
            folder = work / vocab_name.replace(" ", "_") / corpus
            folder.mkdir(parents=True)
            files = write_inputs(docs, folder)
            results = best_of(args.pipelines, files, folder, vocab, rounds)
            fbin, fllmc = results["fastsw shard (bin)"]["out"], results["fastsw shard (llmc)"]["out"]
            tokens = json.loads((fbin / "manifest.json").read_text())["tokens"]
            for name in args.pipelines:
                if not name.startswith("fastsw"):
                    check_same(name, results[name]["out"], fbin, fllmc)
            peers = {n: r for n, r in results.items() if not n.startswith("fastsw")}
            wall_peer = min((r["seconds"] for r in peers.values()), default=float("nan"))
            cpu_peer = min((r["cpu"] for r in peers.values()), default=float("nan"))
            for name, r in results.items():
                rows.append(
                    [
                        corpus,
                        name,
                        round(nbytes / r["seconds"] / 1e6, 2),
                        round(tokens / r["seconds"] / 1e6, 3),
                        round(r["cpu"], 2),
                        round(tokens / r["cpu"] / 1e6, 3),
                        round(r["rss_mb"]),
                        round(wall_peer / r["seconds"], 2),
                        round(cpu_peer / r["cpu"], 2),
                    ]
                )
                print(vocab_name, "\t".join(map(str, rows[-1])), flush=True)
            mine = results["fastsw shard (bin)"]
            summary.append(
                f"{vocab_name} {corpus}: {wall_peer / mine['seconds']:.2f}x wall, {cpu_peer / mine['cpu']:.2f}x CPU"
            )
        tables.append(
            {
                "title": f"Preparing training data: files in, token shards on disk ({vocab_name}, {THREADS} threads)",
                "command": command,
                "columns": columns,
                "rows": rows,
                "notes": "vs fastest peer: the fastest peer's seconds (wall, or CPU) over this pipeline's "
                "(>1 is faster). Every peer's output bytes equal fastsw's.",
            }
        )
    # superword models against plain BPE, both trained here on the bundled sample corpus
    folder = work / "superword"
    folder.mkdir()
    files = write_inputs(corpus_docs("mix", mb), folder)
    nbytes = sum(len(d.encode("utf-8")) for d in read_texts(files))
    rows, sw = [], {}
    for algo in ("bpe8k", "superbpe8k"):
        got = best_of(["fastsw shard (bin)", ENCODE_ONLY], files, folder / algo, models[algo], rounds)
        for name, r in got.items():
            if name == ENCODE_ONLY:
                tokens = int(np.load(r["out"] / "count.npy")[0])
            else:
                tokens = json.loads((r["out"] / "manifest.json").read_text())["tokens"]
            rows.append(
                [
                    "mix",
                    f"{name}, {algo}",
                    round(nbytes / r["seconds"] / 1e6, 2),
                    round(tokens / r["seconds"] / 1e6, 3),
                    round(r["cpu"], 2),
                    round(tokens / r["cpu"] / 1e6, 3),
                    round(r["rss_mb"]),
                ]
            )
            print("\t".join(map(str, rows[-1])), flush=True)
        sw[algo] = got
    ratio = {
        f"{what} {k}": sw["bpe8k"][n][k] / sw["superbpe8k"][n][k]
        for what, n in (("shard", "fastsw shard (bin)"), ("encoder", ENCODE_ONLY))
        for k in ("seconds", "cpu")
    }
    notes = (
        "SuperBPE 8k speed over BPE 8k (MB/s; same text): shard " + f"{ratio['shard seconds']:.2f} wall, "
        f"{ratio['shard cpu']:.2f} CPU; the encoder alone {ratio['encoder seconds']:.2f} wall, "
        f"{ratio['encoder cpu']:.2f} CPU. SuperBPE models encode fewer, longer tokens; where the two "
        "ratios agree, the difference is the encoder's, not the pipeline's."
    )
    tables.append(
        {
            "title": "Superword against plain BPE in fastsw shard (models trained on the sample corpus)",
            "command": command,
            "columns": ["corpus", "pipeline", "MB/s", "M tokens/s", "CPU s", "M tokens per CPU s", "peak RSS (MB)"],
            "rows": rows,
            "notes": notes,
        }
    )
    print("fastsw shard (bin) vs the fastest peer: " + "; ".join(summary))
    print(notes)
    if args.json:
        write_json(args.json, tables)


if __name__ == "__main__":
    main()
