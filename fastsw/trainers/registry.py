"""The trainers by name: what ``fastsw.train(algo=...)`` and ``fastsw train --algo`` accept.

Every built-in trainer is registered here, in the order ``--help`` lists them; :func:`register_trainer` adds
one of yours (its options then work as keywords of :func:`fastsw.train` and as ``fastsw train`` flags).
"""

from __future__ import annotations

from typing import Dict, List, Type

from fastsw.trainers.base import COMMON_OPTIONS, Trainer, TrainerConfig

__all__ = ["register_trainer", "unregister_trainer", "get_trainer", "trainers", "TRAINERS"]

#: ``algo`` name -> :class:`~fastsw.trainers.base.Trainer` subclass.
TRAINERS: Dict[str, Type[Trainer]] = {}


def register_trainer(trainer: Type[Trainer], *, replace: bool = False) -> Type[Trainer]:
    """Make ``trainer`` known by its ``name`` to :func:`fastsw.train` and ``fastsw train`` (usable as a class
    decorator; returns it). A name already taken is an error unless ``replace=True``; an option name another
    trainer uses must mean the same (same default).

        >>> from fastsw.trainers import get_trainer
        >>> get_trainer("superbpe").title
        'SuperBPE'
    """
    _builtins()
    try:
        name = trainer.name
    except AttributeError:
        name = ""
    if not isinstance(name, str) or not name or name.startswith("-") or " " in name:
        raise ValueError(f"a trainer needs a name (its algo=), not {name!r}")
    if not (isinstance(trainer.Config, type) and issubclass(trainer.Config, TrainerConfig)):
        raise TypeError(f"{trainer.__name__}.Config must be a TrainerConfig dataclass")
    if name in TRAINERS and not replace and TRAINERS[name] is not trainer:
        raise ValueError(f"a trainer named {name!r} is registered already; pass replace=True to replace it")
    for field in trainer.Config.options():
        if field.name in COMMON_OPTIONS or field.name.startswith("_"):
            raise ValueError(
                f"option {field.name!r} of trainer {name!r} is a name fastsw.train() takes for itself; rename it"
            )
        for other in TRAINERS.values():
            for f in other.Config.options():
                if f.name == field.name and f.default != field.default and other.name != name:
                    raise ValueError(
                        f"option {field.name!r} of trainer {name!r} has default {field.default!r}, "
                        f"but trainer {other.name!r} gives it {f.default!r}; rename it"
                    )
    TRAINERS[name] = trainer
    return trainer


def unregister_trainer(name: str) -> None:
    """Forget the trainer registered as ``name`` (e.g. one a test or a notebook registered); a built-in trainer
    cannot be removed."""
    _builtins()
    if name in _BUILTIN_NAMES:
        raise ValueError(f"{name!r} is a built-in trainer; register another class with replace=True instead")
    TRAINERS.pop(name, None)


def get_trainer(name: str) -> Type[Trainer]:
    """The trainer registered as ``name``; an unknown name is a ``ValueError`` listing the known ones."""
    _builtins()
    try:
        return TRAINERS[name]
    except (KeyError, TypeError):
        raise ValueError(f"algo={name!r} is not one of {', '.join(TRAINERS)}") from None


def trainers() -> List[Type[Trainer]]:
    """The registered trainers, built-in ones first."""
    _builtins()
    return list(TRAINERS.values())


_BUILTINS_LOADED = False
_BUILTIN_NAMES = ("bpe", "boundless", "superbpe", "parity-bpe", "mingram")


def _builtins() -> None:
    """Register the built-in trainers (on first use: their modules import the tokenizer, which imports
    :mod:`fastsw.trainers.bpe`, so this package imports none of them when it loads)."""
    global _BUILTINS_LOADED
    if _BUILTINS_LOADED:
        return
    _BUILTINS_LOADED = True
    from fastsw.trainers.algorithms.bpe import BPETrainer
    from fastsw.trainers.algorithms.mingram import MinGramTrainer
    from fastsw.trainers.algorithms.parity_bpe import ParityBPETrainer
    from fastsw.trainers.algorithms.superword import BoundlessTrainer, SuperBPETrainer

    for trainer in (BPETrainer, BoundlessTrainer, SuperBPETrainer, ParityBPETrainer, MinGramTrainer):
        TRAINERS.setdefault(trainer.name, trainer)
