"""One module per training algorithm: its config dataclass (the options) and its trainer (the stages after
counting), behind :class:`fastsw.trainers.base.Trainer`; :mod:`fastsw.trainers.registry` lists them by name."""
