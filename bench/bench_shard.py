"""Files in, shards on disk: ``fastsw shard`` against the data-prep recipes users copy, same documents, same
vocabulary (o200k_base), same output bytes.

    python bench/bench_shard.py                 # 20 MB per corpus
    python bench/bench_shard.py --quick         # 2 MB per corpus (smoke run)
    python bench/bench_shard.py --json OUT      # also write the table for bench/perfpage.py

Corpora (real text of ``../shared/corpus``): English, Chinese, and a 12-language mix (equal bytes of each), each
written as two local JSONL files. Every pipeline runs in its own process (peak RSS is that process's and its
children's), on 2 cores, and is timed from reading the files to the shards on disk (building the tokenizer is not
timed). Pipelines:

* ``fastsw shard``: ``fastsw.shard(files, tok, out, workers=2)``, formats ``bin`` and ``llmc``.
* llm.c (``dev/data/fineweb.py``): documents read in the main process, ``multiprocessing.Pool(2).imap(tokenize,
  docs, chunksize=16)`` with tiktoken ``encode_ordinary``, shards of ``--shard-tokens`` ids with llm.c's 256 x
  int32 header (uint32 ids: its Llama 3 header). The recipe's one change: the end-of-text token goes after each
  document (nanoGPT's and fastsw's place) rather than before, so that the bytes can be compared.
* nanoGPT (``data/openwebtext/prepare.py``): HF ``datasets.load_dataset("json", data_files=...)`` (local files,
  a fresh cache folder), ``.map(process, num_proc=2)`` with tiktoken ``encode_ordinary`` + EOT, then a uint32
  ``np.memmap`` filled shard by shard as the recipe does (o200k ids do not fit its uint16).
* HF ``tokenizers``: ``encode_batch`` (Rayon, 2 threads) on batches of 1000 documents read from the files, EOT
  appended, ids written to one flat file.

Every peer's output is compared with fastsw's (llm.c's shards with ``--format llmc``, the flat files with the
one ``bin`` shard); a difference stops the run. Also: a fastsw BPE and a SuperBPE model of the same vocabulary
size trained on the bundled sample corpus, shard speed only (superword models against plain BPE). MB = 10**6
bytes of UTF-8 document text; tokens include the end-of-text tokens.
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
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

LANGS = ["en", "de", "fr", "ru", "fi", "ar", "ko", "zh", "ja", "th", "hi", "my"]
THREADS = 2
SHARD_TOKENS = 10 ** 8


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


# ---- the pipelines (each runs in a child process) -------------------------------------------------------------


def o200k():
    import fastsw
    from fastsw import tiktoken_vocab as tv
    return fastsw.Tokenizer.load_tiktoken(tv.bpe_openai_rank_file("o200k_base"), pattern="o200k")


def tiktoken_o200k():
    import tiktoken
    from fastsw import tiktoken_vocab as tv
    tok = o200k()
    return tiktoken.Encoding("o200k_base", pat_str=tv.PATTERNS["o200k"],
                             mergeable_ranks={t: r for r, t in enumerate(tok.vocab)},
                             special_tokens=tv.SPECIAL_TOKENS["o200k"])


def run_fastsw(files, out, fmt, model=None):
    import fastsw
    tok = o200k() if model is None else fastsw.Tokenizer.load(model)
    tok.encode_batch(["warm up"])  # builds the encoder's tables, as the peers' tokenizers are built untimed
    t = time.perf_counter()
    fastsw.shard(files, tok, out, format=fmt, workers=THREADS, shard_tokens=SHARD_TOKENS)
    return time.perf_counter() - t


_ENC = None


def _llmc_tokenize(doc):
    tokens = _ENC.encode_ordinary(doc)
    tokens.append(_ENC.eot_token)
    return np.array(tokens, dtype=np.uint32)


def run_llmc(files, out):
    """llm.c's dev/data/fineweb.py loop (see the module docstring for the one change)."""
    import multiprocessing as mp
    from fastsw.shard import header_bytes
    global _ENC
    _ENC = tiktoken_o200k()
    os.makedirs(out)
    t = time.perf_counter()
    with mp.get_context("fork").Pool(THREADS) as pool:
        shard_index = 0
        all_tokens_np = np.empty((SHARD_TOKENS,), dtype=np.uint32)
        token_count = 0
        for tokens in pool.imap(_llmc_tokenize, read_texts(files), chunksize=16):
            if token_count + len(tokens) < SHARD_TOKENS:
                all_tokens_np[token_count:token_count + len(tokens)] = tokens
                token_count += len(tokens)
            else:
                remainder = SHARD_TOKENS - token_count
                all_tokens_np[token_count:token_count + remainder] = tokens[:remainder]
                _llmc_write(os.path.join(out, f"shard_{shard_index:06d}.bin"), all_tokens_np, header_bytes)
                shard_index += 1
                all_tokens_np[0:len(tokens) - remainder] = tokens[remainder:]
                token_count = len(tokens) - remainder
        if token_count != 0:
            _llmc_write(os.path.join(out, f"shard_{shard_index:06d}.bin"), all_tokens_np[:token_count], header_bytes)
    return time.perf_counter() - t


def _llmc_write(filename, toks, header_bytes):
    with open(filename, "wb") as f:  # llm.c's write_datafile: 256 x int32 header, then the ids
        f.write(header_bytes("llmc", "uint32", len(toks)))
        f.write(toks.astype(np.uint32).tobytes())


def run_nanogpt(files, out):
    """nanoGPT's data/openwebtext/prepare.py, on local JSONL files."""
    import datasets
    enc = tiktoken_o200k()
    cache = tempfile.mkdtemp(dir=os.path.dirname(out))
    os.makedirs(out)
    datasets.disable_progress_bars()
    t = time.perf_counter()
    dataset = datasets.load_dataset("json", data_files=files, split="train", cache_dir=cache)

    def process(example):
        ids = enc.encode_ordinary(example["text"])
        ids.append(enc.eot_token)
        return {"ids": ids, "len": len(ids)}

    tokenized = dataset.map(process, remove_columns=["text"], num_proc=THREADS)
    arr_len = np.sum(tokenized["len"], dtype=np.uint64)
    arr = np.memmap(os.path.join(out, "train.bin"), dtype=np.uint32, mode="w+", shape=(int(arr_len),))
    total_batches = min(1024, len(tokenized))
    idx = 0
    for batch_idx in range(total_batches):
        batch = tokenized.shard(num_shards=total_batches, index=batch_idx, contiguous=True).with_format("numpy")
        arr_batch = np.concatenate(batch["ids"])
        arr[idx:idx + len(arr_batch)] = arr_batch
        idx += len(arr_batch)
    arr.flush()
    del arr
    return time.perf_counter() - t


def run_hf(files, out):
    from bench_tiktoken import hf_from_ranks
    from fastsw import tiktoken_vocab as tv
    tok = o200k()
    hf = hf_from_ranks(tok, tv.PATTERNS["o200k"])
    eot = tok.special_tokens["<|endoftext|>"]
    os.makedirs(out)
    t = time.perf_counter()
    with open(os.path.join(out, "train.bin"), "wb") as f:
        batch = []
        docs = read_texts(files)
        while True:
            batch = [d for _, d in zip(range(1000), docs)]
            if not batch:
                break
            ids = []
            for e in hf.encode_batch(batch, add_special_tokens=False):
                ids += e.ids
                ids.append(eot)
            f.write(np.array(ids, np.uint32).tobytes())
    return time.perf_counter() - t


PIPELINES = {
    "fastsw shard (bin)": lambda files, out, model: run_fastsw(files, out, "bin", model),
    "fastsw shard (llmc)": lambda files, out, model: run_fastsw(files, out, "llmc", model),
    "llm.c Pool + tiktoken": lambda files, out, model: run_llmc(files, out),
    "nanoGPT datasets.map + tiktoken": lambda files, out, model: run_nanogpt(files, out),
    "HF tokenizers encode_batch": lambda files, out, model: run_hf(files, out),
}


def child(args) -> None:
    files = json.loads(args.files)
    secs = PIPELINES[args.child](files, args.out, args.model)
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps({"seconds": secs, "rss_mb": (me + kids) / 1024}))


def run_child(name, files, out, model=None):
    cmd = [sys.executable, __file__, "--child", name, "--files", json.dumps(files), "--out", str(out)]
    if model:
        cmd += ["--model", str(model)]
    done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "TOKENIZERS_PARALLELISM": "true"})
    if done.returncode != 0:
        raise SystemExit(f"{name} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 MB per corpus")
    ap.add_argument("--mb", type=float, default=None, help="megabytes of text per corpus (default 20, quick 2)")
    ap.add_argument("--json", metavar="OUT", default=None, help="write the table as JSON for bench/perfpage.py")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--files", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--out", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--model", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    import fastsw
    mb = args.mb or (2 if args.quick else 20)
    command = "python bench/bench_shard.py" + (" --quick" if args.quick else "") + \
        (f" --mb {args.mb:g}" if args.mb else "")
    work = Path(tempfile.mkdtemp(prefix="bench-shard-"))
    o200k()  # builds the cached tables once, outside the timed runs
    rows, ratios = [], []
    for corpus in ("en", "zh", "mix"):
        docs = corpus_docs(corpus, mb)
        nbytes = sum(len(d.encode("utf-8")) for d in docs)
        folder = work / corpus
        folder.mkdir()
        files = write_inputs(docs, folder)
        results = {}
        for name in PIPELINES:
            out = folder / name.split()[0].replace(".", "") / name.split()[-1].strip("()")
            out.parent.mkdir(exist_ok=True)
            results[name] = run_child(name, files, out)
            results[name]["out"] = out
        fbin, fllmc = results["fastsw shard (bin)"]["out"], results["fastsw shard (llmc)"]["out"]
        tokens = json.loads((fbin / "manifest.json").read_text())["tokens"]
        for name in PIPELINES:
            if not name.startswith("fastsw"):
                check_same(name, results[name]["out"], fbin, fllmc)
        fastest_peer = min(r["seconds"] for n, r in results.items() if not n.startswith("fastsw"))
        for name, r in results.items():
            rows.append([corpus, name, round(nbytes / r["seconds"] / 1e6, 2), round(tokens / r["seconds"] / 1e6, 3),
                         round(r["rss_mb"]), round(fastest_peer / r["seconds"], 2)])
            print("\t".join(map(str, rows[-1])), flush=True)
        ratios.append((corpus, fastest_peer / results["fastsw shard (bin)"]["seconds"]))
    # superword models against plain BPE, both trained here on the bundled sample corpus
    from fastsw.sample import sample_documents
    sample = list(sample_documents())
    folder = work / "superword"
    folder.mkdir()
    files = write_inputs(corpus_docs("mix", mb), folder)
    models = {"bpe": dict(algo="bpe"), "superbpe": dict(algo="superbpe", supermerges=1000)}
    sw = {}
    for algo, kw in models.items():
        path = folder / f"{algo}.json"
        fastsw.train(sample, vocab_size=8000, special_tokens=["<|endoftext|>"], **kw).save(path)
        r = run_child("fastsw shard (bin)", files, folder / f"out-{algo}", model=path)
        tokens = json.loads((folder / f"out-{algo}" / "manifest.json").read_text())["tokens"]
        sw[algo] = r["seconds"]
        nbytes = sum(len(d.encode("utf-8")) for d in read_texts(files))
        rows.append(["mix", f"fastsw shard (bin), {algo} 8k", round(nbytes / r["seconds"] / 1e6, 2),
                     round(tokens / r["seconds"] / 1e6, 3), round(r["rss_mb"]), None])
        print("\t".join(map(str, rows[-1])), flush=True)
    notes = ("Speed vs fastest peer: the fastest peer's seconds over this pipeline's (>1 is faster). fastsw shard "
             "(bin) vs the fastest peer: " + ", ".join(f"{c} {x:.2f}x" for c, x in ratios) +
             f". SuperBPE 8k / BPE 8k shard speed (MB/s): {sw['bpe'] / sw['superbpe']:.2f}. Every peer's output "
             "bytes equal fastsw's.")
    print(notes)
    table = {"title": "Preparing training data: files in, token shards on disk (o200k_base, 2 threads)",
             "command": command,
             "columns": ["corpus", "pipeline", "MB/s", "M tokens/s", "peak RSS (MB)", "speed vs fastest peer"],
             "rows": rows, "notes": notes}
    if args.json:
        Path(args.json).write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
