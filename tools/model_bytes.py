"""Train one small model per pre-tokenizer family on the bundled sample corpus and print each saved model file's
SHA-256: run it on two versions of fastsw and compare the lists (the model files must be byte-identical).

    PYTHONPATH=. python tools/model_bytes.py [OUT_DIR]          # OUT_DIR keeps the model files (default: a temporary directory)
    PYTHONPATH=. python tools/model_bytes.py OUT --compare REF  # and compare them byte for byte with those in REF

Each family is trained with BPE and with SuperBPE (phase 2 reads the letter runs, the supermerge cut and the
counter of the pre-tokenizer; ``none`` has no runs, so BPE only), then the model is saved with ``Tokenizer.save``.
The files are compared byte for byte, except the training record's timings (``"seconds": {...}``), which differ
from run to run and are blanked first. The last line says how many
files were compared and how many differ; the exit status is 1 when one differs or is missing.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
import tempfile
import warnings
from pathlib import Path

import fastsw
from fastsw.notes import VocabularyNotReachedWarning

SAMPLE = Path(fastsw.__file__).resolve().parent / "data" / "sample"
FAMILIES = {
    "script": "script",
    "simple": "simple",
    "none": "none",
    "pattern": {"mode": "simple", "main_pattern": r" ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+"},
    "boundary-w": "boundary[w]",
    "boundary-wpd-caps": "boundary[w,p,d]+caps",
    "script-v3": "script-v3",
    "script-v3-boundary": "script-v3+boundary[w,p,d]+caps",
}
ALGOS = {"bpe": dict(algo="bpe", vocab_size=600), "superbpe": dict(algo="superbpe", vocab_size=700, supermerges=60)}
#: SCRIPT v3's alphabet holds its 1,710 atoms: its models get this many more tokens
EXTRA_VOCAB = {"script-v3": 1800, "script-v3-boundary": 1800}
#: A training record's timings change from run to run; they are blanked before the comparison (and only they)
TIMINGS = re.compile(rb'"seconds":\{[^{}]*\}')


def documents():
    docs = []
    for path in sorted(SAMPLE.glob("*.txt")):
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        docs.extend(lines[:40])
    return docs


def comparable(path: Path) -> bytes:
    """The file's bytes with the training timings blanked (``"seconds":{}``)."""
    data = path.read_bytes()
    blanked, n = TIMINGS.subn(b'"seconds":{}', data)
    if n != 1:
        raise SystemExit(f"{path}: expected one training timings object, found {n}")
    return blanked


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", help="directory for the model files")
    ap.add_argument("--compare", metavar="REF", help="a directory written by an earlier run")
    args = ap.parse_args(argv)
    out = Path(args.out or tempfile.mkdtemp(prefix="fastsw-model-bytes-"))
    out.mkdir(parents=True, exist_ok=True)
    docs = documents()
    warnings.simplefilter("ignore", VocabularyNotReachedWarning)  # a small corpus: fewer supermerges than asked
    for family, spec in FAMILIES.items():
        for algo, options in ALGOS.items():
            if family == "none" and options.get("supermerges"):
                continue  # one pretoken per document: nothing for supermerges to join
            options = dict(options, vocab_size=options["vocab_size"] + EXTRA_VOCAB.get(family, 0))
            tok = fastsw.train(docs, pretokenizer=spec, **options)
            path = out / f"{family}-{algo}.json"
            tok.save(path)
            print(f"{hashlib.sha256(comparable(path)).hexdigest()[:16]}  {path.name}")
    if args.compare:
        ref = Path(args.compare)
        names = sorted(p.name for p in out.glob("*.json"))
        differ = [n for n in names if not (ref / n).is_file() or comparable(ref / n) != comparable(out / n)]
        print(
            f"{len(names)} model files compared with {ref}: {len(differ)} differ"
            + (f" ({', '.join(differ)})" if differ else "")
        )
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
