"""Record the published parity-aware BPE script's runs that ``tests/trainers/test_parity.py`` compares fastsw against.

The script is ``parity_aware_bpe/parity_aware_learn_bpe.py`` of cimeister/parity-aware-bpe (MIT). The tests
need neither the script nor the network: they read the JSON files this writes next to itself, one per
configuration in ``test_parity.PUBLISHED_RUNS`` (merges as hex byte pairs, the language chosen at each step,
None for a global step, and the dev lengths -- or with ratios the training lengths -- the script chose on).

Run it again when the configurations, the shared corpus or the published script change::

    git clone https://github.com/cimeister/parity-aware-bpe
    python tests/data/parity_script/regenerate.py parity-aware-bpe

The clone may also be a bare mirror (the script is then read with ``git show HEAD:...``), and its path may come
from ``$FASTSW_PARITY_SCRIPT_REPO`` instead of the argument. The script needs numpy and tokenizers.
"""

import argparse
import hashlib
import importlib.util
import io
import json
import logging
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # tests/: conftest
sys.path.insert(0, str(HERE.parents[1] / "trainers"))  # test_parity
sys.path.insert(0, str(HERE.parents[2]))  # the repository root: fastsw

from test_parity import LANGS, PUBLISHED_RUNS, inputs_digest, published_inputs  # noqa: E402

from fastsw.alphabet import render, unrender  # noqa: E402

SCRIPT = "parity_aware_bpe/parity_aware_learn_bpe.py"


def read_script(repo: Path):
    """(source, commit or None) of the script in a clone (work tree or bare)."""
    commit = None
    try:
        commit = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    if (repo / SCRIPT).is_file():
        return (repo / SCRIPT).read_text(encoding="utf-8"), commit
    try:
        source = subprocess.run(
            ["git", "-C", str(repo), "show", f"HEAD:{SCRIPT}"], capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"regenerate.py: error: {repo} is not a clone of cimeister/parity-aware-bpe ({e})")
    return source, commit


def import_script(source: str, folder: Path):
    path = folder / "parity_aware_learn_bpe.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("parity_aware_learn_bpe_peer", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Records(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def run_published(script, langs, train, dev, n, *, ratios=None, global_merges=0, window=None, alpha=2):
    """The script on dictionary input (one ``word count`` line per word, words in GPT-2's byte rendering, so
    one character is one byte). Returns merges as byte pairs, the language per step (None: global) and, with
    dev texts, the dev lengths it chose on -- read from its log."""

    def dict_file(counter):
        return io.StringIO("".join(f"{render(w)} {c}\n" for w, c in counter.items()))

    records = _Records()
    script.logger.addHandler(records)
    script.logger.setLevel(logging.INFO)
    try:
        infiles = [dict_file(train[l]) for l in langs]
        devfiles = None if ratios else [dict_file(dev[l]) for l in langs]
        ratio = None if ratios is None else script.numpy.array([float(ratios[l]) for l in langs])
        options = dict(min_frequency=2, is_dict=True, num_global=global_merges, ratio=ratio)
        if window is None:
            _, merges = script.learn_bpe(infiles, io.StringIO(), devfiles, n, **options)
        else:
            _, merges = script.learn_bpe_moving_window(infiles, io.StringIO(), devfiles, n, window, alpha, **options)
    finally:
        script.logger.removeHandler(records)
    chosen, lengths = [], []
    for message in records.messages:
        m = re.match(r"lengths \[([\d\s]+)\]: picking best subword (?:in corpus (\d+)|based on concatenation)", message)
        if m:
            chosen.append(None if m.group(2) is None else langs[int(m.group(2))])
            lengths.append(dict(zip(langs, map(int, m.group(1).split()))))
        elif message.startswith("initial lengths"):  # ratio mode: its lengths are the training texts'
            lengths.append(dict(zip(langs, map(int, re.search(r"\nlengths \[([\d\s]+)\]", message).group(1).split()))))
        elif "picking best subword in corpus" in message:
            chosen.append(langs[int(message.rsplit(" ", 1)[1])])
    return [(unrender(a), unrender(b)) for a, b in merges], chosen, lengths


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "repo",
        nargs="?",
        default=os.environ.get("FASTSW_PARITY_SCRIPT_REPO"),
        help="a clone of cimeister/parity-aware-bpe (default: $FASTSW_PARITY_SCRIPT_REPO)",
    )
    parser.add_argument("--out", type=Path, default=HERE, help="folder for the JSON files (default: this one)")
    args = parser.parse_args(argv)
    if not args.repo:
        parser.error("give the path of a clone of cimeister/parity-aware-bpe (or set FASTSW_PARITY_SCRIPT_REPO)")
    source, commit = read_script(Path(args.repo))
    train, dev = published_inputs()
    digest = inputs_digest(train, dev)
    with tempfile.TemporaryDirectory() as folder:
        script = import_script(source, Path(folder))
        for name, (n, options) in PUBLISHED_RUNS.items():
            merges, chosen, lengths = run_published(script, LANGS, train, dev, n, **options)
            record = {
                "script": {
                    "repository": "cimeister/parity-aware-bpe",
                    "path": SCRIPT,
                    "commit": commit,
                    "sha256": hashlib.sha256(source.encode()).hexdigest(),
                },
                "n": n,
                "options": options,
                "langs": LANGS,
                "inputs_sha256": digest,
                "merges": [f"{a.hex()} {b.hex()}" for a, b in merges],
                "languages": chosen,
                "lengths": [[step[l] for l in LANGS] for step in lengths],
            }
            path = args.out / f"{name}.json"
            tmp = path.with_suffix(".json.tmp")
            tmp.write_text(json.dumps(record, separators=(",", ":")) + "\n", encoding="utf-8")
            tmp.replace(path)
            print(f"{path.name}: {len(merges)} merges, languages {sorted(set(chosen) - {None})}")


if __name__ == "__main__":
    main()
