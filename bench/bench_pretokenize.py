"""Throughput of the compiled pre-tokenizer (fastsw.pretokenizers._pretok) against regex, single core.

For each text (10 MB of English, then the first ``--prefix-mb`` of every language's train file):

* ``regex.findall``: ``GPT4O_PATTERN`` over each document (what the "simple" mode computes);
* ``reference``: ``Pretokenizer.pretokenize_reference`` (script chunking + regex), mode "script";
* ``native simple`` / ``native script``: ``Pretokenizer.pretokenize`` (list of str);
* ``ends script``: ``Pretokenizer.pretoken_ends`` (end offsets only, no str objects);
* ``count simple`` / ``count script``: ``fastsw.pretokenizers._pretok.Counter`` on one thread, i.e. scanning *and*
  counting the pretokens as training does (a ``str`` only per distinct pretoken). These are the
  figures that compare with ``regex.findall``'s, which does not even count.

Outputs are asserted identical before anything is timed.  Prints a markdown table of MB/s (UTF-8
bytes) and the ratios native/regex.  Usage: ``python bench/bench_pretokenize.py [--repeat 3]``.
"""

import argparse
import time

from fastsw.pretokenizers.pretokenize import HAVE_NATIVE_PRETOKENIZER, Pretokenizer
from _corpus import SHARED, read_docs


def read_prefix(path, max_bytes):
    return read_docs(path, max_bytes)


def best_time(fn, docs, repeat):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter_ns()
        for doc in docs:
            fn(doc)
        best = min(best, time.perf_counter_ns() - start)
    return best / 1e9


def best_count_time(pretok, docs, repeat):
    from fastsw.pretokenizers._pretok import Counter

    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter_ns()
        counter = Counter(pretok._get_scanner(), False)
        for i in range(0, len(docs), 4096):
            counter.add_batch(docs[i : i + 4096])
        counter.pretokens()
        best = min(best, time.perf_counter_ns() - start)
    return best / 1e9


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--english-mb", type=float, default=10.0)
    parser.add_argument("--prefix-mb", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not HAVE_NATIVE_PRETOKENIZER:
        raise SystemExit("fastsw.pretokenizers._pretok is not built (or FASTSW_PUREPYTHON=1); run pip install -e .")

    script = Pretokenizer()
    simple = Pretokenizer(mode="simple")
    assert script.uses_native and simple.uses_native
    findall = simple._main.findall  # the compiled GPT4O_PATTERN
    script.pretokenize("warm up the tables")
    simple.pretokenize("warm up the tables")

    corpus = SHARED / "corpus"
    texts = [("en (10 MB)", corpus / "en" / "train.jsonl.gz", args.english_mb)]
    for lang_dir in sorted(p for p in corpus.iterdir() if (p / "train.jsonl.gz").exists()):
        if lang_dir.name != "en":
            texts.append((lang_dir.name, lang_dir / "train.jsonl.gz", args.prefix_mb))

    rows = []
    for name, path, mb in texts:
        docs, size = read_prefix(path, mb * 1e6)
        for doc in docs:  # identical output before timing
            assert simple.pretokenize(doc) == findall(doc), (name, doc[:100])
            expected = script.pretokenize_reference(doc)
            assert script.pretokenize(doc) == expected, (name, doc[:100])
            assert script.pretoken_ends(doc)[-1:].tolist() == ([len(doc)] if doc else [])
        mbs = {}
        for label, fn in [
            ("regex.findall", findall),
            ("reference", script.pretokenize_reference),
            ("native simple", simple.pretokenize),
            ("native script", script.pretokenize),
            ("ends script", script.pretoken_ends),
        ]:
            mbs[label] = size / 1e6 / best_time(fn, docs, args.repeat)
        mbs["count simple"] = size / 1e6 / best_count_time(simple, docs, args.repeat)
        mbs["count script"] = size / 1e6 / best_count_time(script, docs, args.repeat)
        rows.append((name, size, mbs))
        print(f"{name}: done", flush=True)

    print()
    print(
        "| text | MB | regex.findall | reference (script) | native simple | native script | ends script "
        "| count simple | count script | simple / findall | count simple / findall | count script / reference |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, size, m in rows:
        print(
            f"| {name} | {size / 1e6:.1f} | {m['regex.findall']:.1f} | {m['reference']:.1f} "
            f"| {m['native simple']:.1f} | {m['native script']:.1f} | {m['ends script']:.1f} "
            f"| {m['count simple']:.1f} | {m['count script']:.1f} "
            f"| {m['native simple'] / m['regex.findall']:.1f}x | {m['count simple'] / m['regex.findall']:.1f}x "
            f"| {m['count script'] / m['reference']:.1f}x |"
        )
    print(
        "\nMB/s of UTF-8 input, best of",
        args.repeat,
        "runs, one core; native = list of str, "
        "ends = int64 end offsets only, count = scan and count with the compiled counter (one thread).",
    )


if __name__ == "__main__":
    main()
