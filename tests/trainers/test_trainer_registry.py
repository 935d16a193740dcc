"""The trainer interface from outside the package: a trainer defined here, registered, trained through
fastsw.train() and `fastsw train`, with one rule and one message for a bad option in both."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

import pytest

import fastsw
from fastsw.trainers import (
    OptionError,
    Trainer,
    TrainerConfig,
    get_trainer,
    option,
    register_trainer,
    unregister_trainer,
)
from fastsw.trainers.registry import TRAINERS

from conftest import run, write_jsonl

DOCS = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog"] * 5


@dataclass
class ToyConfig(TrainerConfig):
    """A toy trainer's options: learn exactly ``toy_merges`` BPE merges and tag the model."""

    help_title: ClassVar[str] = "toy trainer"
    help_text: ClassVar[str] = "--algo toy: a fixed number of BPE merges"

    toy_merges: int = option(3, "merges to learn (default: 3)", metavar="K", type=int)
    toy_tag: str = option("plain", "a word recorded in training_info", choices=("plain", "fancy"))

    def validate(self, common) -> None:
        if isinstance(self.toy_merges, bool) or not isinstance(self.toy_merges, int) or self.toy_merges < 1:
            raise OptionError(
                "{toy_merges:v} must be an integer >= 1 (and at most {vocab_size} - alphabet)",
                toy_merges=self.toy_merges,
            )


class ToyTrainer(Trainer):
    name = "toy"
    title = "the toy trainer"
    summary = "a fixed number of BPE merges (a test's trainer)"
    Config = ToyConfig

    def fit(self, run):
        bar = run.bar("toy merges", total=self.config.toy_merges)
        merges, _, _ = run.stages.phase1(run.counts, run.alphabet, run.profile, self.config.toy_merges, progress=bar)
        bar.close()
        run.info["toy"] = {"tag": self.config.toy_tag, "merges": len(merges)}
        return run.tokenizer([(l, r, c, False) for l, r, c in merges], algo="bpe")


@pytest.fixture
def toy():
    register_trainer(ToyTrainer)
    yield ToyTrainer
    unregister_trainer("toy")
    assert "toy" not in TRAINERS


def test_a_trainer_defined_outside_fastsw_trains_through_the_api_and_the_cli(toy, tmp_path, capsys):
    assert get_trainer("toy") is ToyTrainer
    tok = fastsw.train(DOCS, algo="toy", vocab_size=300, toy_merges=4, toy_tag="fancy")
    assert len(tok.merges) == 4 and tok.training_info["toy"] == {"tag": "fancy", "merges": 4}
    # its first merges are plain BPE's (it runs phase 1 on the same counts)
    assert tok.merges == fastsw.train(DOCS, algo="bpe", vocab_size=len(tok.alphabet) + 4).merges
    corpus = write_jsonl(tmp_path / "c.jsonl", DOCS)
    code, _, err = run(
        capsys,
        "train",
        corpus,
        "--algo",
        "toy",
        "--toy-merges",
        "4",
        "--toy-tag",
        "fancy",
        "--vocab-size",
        "300",
        "--no-progress",
        "-o",
        tmp_path / "toy.json",
    )
    assert code == 0, err
    from_cli = fastsw.load(tmp_path / "toy.json")
    assert from_cli.merges == tok.merges and from_cli.training_info["toy"] == {"tag": "fancy", "merges": 4}
    # the defaults of its config apply to both
    assert len(fastsw.train(DOCS, algo="toy", vocab_size=300).merges) == 3


def test_its_flags_and_help_come_from_its_config(toy, capsys):
    code, out, _ = run(capsys, "train", "--help")
    assert code == 0
    group = out[out.index("\ntoy trainer:") :]
    assert "--algo toy: a fixed number of BPE merges" in group
    assert "--toy-merges K" in group and "merges to learn (default: 3)" in group
    assert "--toy-tag {plain,fancy}" in group
    assert "toy: a fixed number of BPE merges (a test's trainer)" in " ".join(out.split())


@pytest.mark.parametrize("value", [0, -2])
def test_a_bad_option_is_one_rule_and_one_message_in_both(toy, tmp_path, capsys, value):
    with pytest.raises(ValueError) as e:
        fastsw.train(DOCS, algo="toy", vocab_size=300, toy_merges=value)
    api = str(e.value)
    assert api == f"toy_merges={value} must be an integer >= 1 (and at most vocab_size - alphabet)"
    corpus = write_jsonl(tmp_path / "c.jsonl", DOCS)
    code, out, err = run(
        capsys, "train", corpus, "--algo", "toy", "--toy-merges", str(value), "--no-progress", "-o", tmp_path / "m.json"
    )
    assert code == 2 and out == "" and not (tmp_path / "m.json").exists()
    assert err == f"fastsw: error: --toy-merges {value} must be an integer >= 1 (and at most --vocab-size - alphabet)\n"


def test_its_options_belong_to_it(toy, tmp_path, capsys):
    with pytest.raises(ValueError, match=r"^toy_merges= applies to the toy trainer; add algo='toy'$"):
        fastsw.train(DOCS, algo="bpe", vocab_size=300, toy_merges=5)
    fastsw.train(DOCS, algo="bpe", vocab_size=250, toy_merges=3)  # its default: not an option given
    corpus = write_jsonl(tmp_path / "c.jsonl", DOCS)
    code, _, err = run(capsys, "train", corpus, "--toy-merges", "5", "-o", tmp_path / "m.json")
    assert (code, err) == (2, "fastsw: error: --toy-merges applies to the toy trainer; add --algo toy\n")
    code, _, err = run(capsys, "train", corpus, "--algo", "toy", "--supermerges", "5", "-o", tmp_path / "m.json")
    assert code == 2 and err.startswith("fastsw: error: --supermerges applies to SuperBPE; add --algo superbpe")
    with pytest.raises(TypeError, match="unexpected keyword argument 'toy_merge'"):
        fastsw.train(DOCS, algo="toy", vocab_size=300, toy_merge=5)


def test_registering_checks_the_trainer(toy):
    class Nameless(Trainer):
        Config = ToyConfig

    with pytest.raises(ValueError, match="needs a name"):
        register_trainer(Nameless)

    class Again(ToyTrainer):
        pass

    with pytest.raises(ValueError, match="'toy' is registered already; pass replace=True"):
        register_trainer(Again)

    @dataclass
    class Clash(TrainerConfig):
        supermerges: int = option(7, "a different default for another trainer's option")

    class Clashing(Trainer):
        name, Config = "clash", Clash

    with pytest.raises(ValueError, match="option 'supermerges' of trainer 'clash' has default 7"):
        register_trainer(Clashing)
    assert "clash" not in TRAINERS

    @dataclass
    class Taken(TrainerConfig):
        workers: int = option(2, "a name train() has for itself")

    class Taking(Trainer):
        name, Config = "taking", Taken

    with pytest.raises(ValueError, match="option 'workers' of trainer 'taking' is a name fastsw.train"):
        register_trainer(Taking)
    with pytest.raises(ValueError, match="'bpe' is a built-in trainer"):
        unregister_trainer("bpe")


def test_option_errors_name_options_in_either_words():
    e = OptionError(
        "{supermerges:v} must be smaller than {vocab_size:v}; pass {algo:'superbpe} with {supermerges:=S}",
        supermerges=300,
        vocab_size=300,
    )
    assert str(e) == "supermerges=300 must be smaller than vocab_size=300; pass algo='superbpe' with supermerges=S"
    flags = {"supermerges": "--supermerges", "vocab_size": "--vocab-size", "algo": "--algo"}
    assert e.render(flags.get) == (
        "--supermerges 300 must be smaller than --vocab-size 300; pass --algo superbpe with --supermerges S"
    )
    assert json.loads(json.dumps(str(e)))  # a plain message


def test_the_docstring_examples_run():
    import doctest
    from fastsw.trainers import base, registry

    for module in (base, registry):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted >= 2 and result.failed == 0, module.__name__
    assert "nothing" not in TRAINERS  # the example removes what it registered


def test_the_common_options_are_train_s_own():
    import inspect
    from fastsw.trainers import trainers
    from fastsw.trainers.base import COMMON_OPTIONS

    own = set(inspect.signature(fastsw.train).parameters) - {"_count_candidates", "options"}
    trainer_options = {f.name for t in trainers() for f in t.Config.options()}
    assert own - trainer_options == set(COMMON_OPTIONS) and not trainer_options & set(COMMON_OPTIONS)
