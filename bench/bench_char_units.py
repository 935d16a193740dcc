"""Whole characters first (``fastsw.encoding.encode_kernels`` note (7)): what the character table takes and gains.

One command (uses the models ``bench/bench_languages.py`` caches, training them when missing, and ``bpe-openai``'s rank file for ``o200k``):

    python bench/bench_char_units.py --specs zh:own,ko:own,th:own,zh:o200k
    python bench/bench_char_units.py --superword --langs fr,en,de,fi,hi

A spec is ``language:model``, the model ``own`` (that language's plain BPE 32768, ``simple``), ``en`` (the English
one) or ``o200k`` (tiktoken's vocabulary). For each language's held-out text:

* the pretokens that miss the whole-pretoken shortcut: their bytes, the ids they start from with the table (units)
  and the tokens they end as, so the merges per byte without and with the table;
* the one-thread encode (``FastEncoder.encode`` per document, as ``encode_ordinary`` without its small-text path),
  CPU time, best of ``--rounds`` interleaved rounds, of two encoders of the same model in one process, with the
  table and without it (``fast_encode.USE_CHAR_TABLE``), beside tiktoken on the same documents.

``--superword``: instead, ``encode_ordinary`` per document of the own plain BPE and BoundlessBPE models, same timing
(the ratio ``bench/bench_languages.py`` reports, timed with more rounds and no batch encoders in between).
Figures are ratios within one run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import fastsw  # noqa: E402
from _corpus import SHARED, read_docs  # noqa: E402
from fastsw.encoding import encode_kernels as K  # noqa: E402
from bench_languages import model as cached_model  # noqa: E402
from fastsw.encoding import encode_fast as fast_encode  # noqa: E402


def best(fns, rounds: int):
    """Best CPU seconds of each function over ``rounds`` interleaved rounds."""
    out = [float("inf")] * len(fns)
    for _ in range(rounds):
        for k, fn in enumerate(fns):
            t0 = time.process_time()
            fn()
            out[k] = min(out[k], time.process_time() - t0)
    return out


def model(spec_model: str, lang: str, train_mb: float = 20):
    if spec_model == "o200k":
        from fastsw.io import tiktoken_vocab as tv

        return fastsw.Tokenizer.load_tiktoken(tv.bpe_openai_rank_file("o200k_base"), pattern="o200k")
    # bench/bench_languages.py's models (20 MB of training text by default), trained and cached on first use
    return cached_model(lang if spec_model == "own" else spec_model, "bpe", "simple", train_mb)


def tiktoken_of(tok):
    import tiktoken
    from fastsw.io import tiktoken_vocab as tv

    if not isinstance(tok, tv.TiktokenTokenizer):
        return tok.to_tiktoken()
    return tiktoken.Encoding(
        "o200k_base",
        pat_str=tv.PATTERNS["o200k"],
        mergeable_ranks={t: r for r, t in enumerate(tok.vocab)},
        special_tokens={},
    )


def units(tok, enc, docs):
    """``(bytes, units, tokens)`` of the pretokens that miss the shortcut."""
    pieces = [p for d in docs for p in tok.pretokenizer.pretokenize(d)]
    _, offsets = enc.encode_pieces(pieces, shortcut=True)
    missed = [p.encode() for p, k in zip(pieces, np.diff(offsets)) if k > 1]
    data = np.frombuffer(b"".join(missed) or b"\0", np.uint8)
    out = np.empty(max(map(len, missed), default=1), np.int32)
    n_units, s = 0, 0
    for p in missed:
        n_units += K._initial_ids(data, s, s + len(p), enc.byte_ids, enc.chars, out, 0)
        s += len(p)
    n_tokens = int(enc.encode_pieces([p.decode() for p in missed])[0].shape[0]) if missed else 0
    return s, n_units, n_tokens


def char_units(specs, rounds: int, train_mb: float = 20) -> None:
    print(
        "| text | model | missed bytes | merges per byte, bytes -> units | tiktoken ms | without table ms | "
        "with table ms | gain | with table / tiktoken |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for spec in specs:
        lang, which = spec.split(":")
        docs = read_docs(SHARED / "corpus" / lang / "heldout.jsonl")[0]
        tok = model(which, lang, train_mb)
        tables = tok._encoder_tables()
        saved = fast_encode.USE_CHAR_TABLE
        try:
            fast_encode.USE_CHAR_TABLE = False
            off = fast_encode.FastEncoder(tables)
            fast_encode.USE_CHAR_TABLE = True
            on = fast_encode.FastEncoder(tables)
        finally:
            fast_encode.USE_CHAR_TABLE = saved
        tt = tiktoken_of(tok)
        for d in docs:  # the same ids before anything is timed
            if not on.encode(d) == off.encode(d) == tt.encode_ordinary(d):
                sys.exit(f"{spec}: the encoders disagree; no timings reported")
        n_bytes, n_units, n_tokens = units(tok, on, docs)
        t_tt, t_off, t_on = best(
            [
                lambda: [tt.encode_ordinary(d) for d in docs],
                lambda: [off.encode(d) for d in docs],
                lambda: [on.encode(d) for d in docs],
            ],
            rounds,
        )
        print(
            f"| {lang} | {which} | {n_bytes} | {(n_bytes - n_tokens) / n_bytes:.2f} -> "
            f"{(n_units - n_tokens) / n_bytes:.2f} | {t_tt * 1e3:.2f} | {t_off * 1e3:.2f} | {t_on * 1e3:.2f} | "
            f"{t_off / t_on:.2f} | {t_tt / t_on:.2f} |",
            flush=True,
        )


def superword(langs, rounds: int, train_mb: float = 20) -> None:
    print("| text | plain BPE ms | BoundlessBPE ms | BoundlessBPE / plain BPE (speed) |")
    print("|---|---|---|---|")
    for lang in langs:
        docs = read_docs(SHARED / "corpus" / lang / "heldout.jsonl")[0]
        bpe, boundless = (cached_model(lang, algo, "simple", train_mb) for algo in ("bpe", "boundless"))
        for tok in (bpe, boundless):
            tok.encode_ordinary(docs[0])  # build the encoder before timing
        t_bpe, t_bl = best(
            [lambda: [bpe.encode_ordinary(d) for d in docs], lambda: [boundless.encode_ordinary(d) for d in docs]],
            rounds,
        )
        print(f"| {lang} | {t_bpe * 1e3:.2f} | {t_bl * 1e3:.2f} | {t_bpe / t_bl:.2f} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--specs", default="zh:own,ja:own,ko:own,th:own,hi:own,ru:own,zh:o200k,ko:o200k,th:o200k")
    ap.add_argument("--superword", action="store_true", help="BoundlessBPE against plain BPE instead")
    ap.add_argument("--langs", default="fr,en,de,ru,fi,ar,hi")
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--train-mb", type=float, default=20, help="MB of training text per own model (default 20)")
    args = ap.parse_args()
    if args.superword:
        superword(args.langs.split(","), args.rounds, args.train_mb)
    else:
        char_units(args.specs.split(","), args.rounds, args.train_mb)


if __name__ == "__main__":
    main()
