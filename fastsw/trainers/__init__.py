"""Training: counts in, merges out.

:mod:`.train` holds :func:`fastsw.train` (resolve the options, read and count, fit, build the model);
:mod:`.base` the trainer interface (a config dataclass of options, the stages); :mod:`.registry` the trainers by
name; :mod:`.algorithms` one module per trainer (its config and its stages). The merge learners keep their
reference module, fast driver and Numba kernels side by side: :mod:`.bpe` + :mod:`.superword`, :mod:`.bpe_fast`,
:mod:`.bpe_kernels`; :mod:`.parity`, :mod:`.parity_fast`, :mod:`.parity_kernels`; :mod:`.mingram`,
:mod:`.mingram_kernels`."""

from fastsw.trainers.base import Common, OptionError, Run, Trainer, TrainerConfig, option
from fastsw.trainers.registry import get_trainer, register_trainer, trainers, unregister_trainer

__all__ = [
    "Trainer",
    "TrainerConfig",
    "Common",
    "Run",
    "OptionError",
    "option",
    "register_trainer",
    "unregister_trainer",
    "get_trainer",
    "trainers",
]
