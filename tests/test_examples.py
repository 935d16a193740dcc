"""The examples in examples/ run and show what they claim."""

import importlib.util
from fractions import Fraction
from pathlib import Path

from conftest import shared_path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load_example(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_seed001_weights_english_tokens_fall_as_its_share_grows():
    example = load_example("seed001_weights")
    rows = example.run(shared_path("corpus/parallel"))
    by = {r["condition"]: r for r in rows}
    assert list(by) == ["uniform", "80 % English", "50 % English"]
    # exact shares: 1/5 each; 4/5 and 1/20; the 4-decimal square roots 0.8944 and 0.2236 = 0.8944 / 4 give 1/2, 1/8
    assert set(by["uniform"]["shares"].values()) == {Fraction(1, 5)}
    assert by["80 % English"]["shares"] == {"en": Fraction(4, 5), **{l: Fraction(1, 20) for l in "de ru zh ar".split()}}
    assert by["50 % English"]["shares"] == {"en": Fraction(1, 2), **{l: Fraction(1, 8) for l in "de ru zh ar".split()}}
    # evaluation without weights: the more English weighs in training, the fewer tokens English text needs, and
    # the further the languages are from parity
    en = {name: r["tokens"]["en"] for name, r in by.items()}
    assert en["80 % English"] < en["50 % English"] < en["uniform"]
    assert min(rows, key=lambda r: r["tokens"]["en"] / sum(r["tokens"].values()))["condition"] == "80 % English"
    assert by["uniform"]["gini"] < by["80 % English"]["gini"]
    # five languages' shares scale the counts past 64 bits: the exact python fallback trained them
    assert {r["backend"] for r in rows} == {"python"}
    table = example.markdown(rows).splitlines()
    assert len(table) == 2 + 3 and table[0].startswith("| condition | English share | tokens en")
    assert table[3].startswith("| 80 % English | 80.0% | " + str(en["80 % English"]) + " |")
