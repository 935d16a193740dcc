"""The trainer interface: a config dataclass of typed options, and the stages an algorithm implements.

A trainer is a :class:`Trainer` subclass with a ``Config`` dataclass whose fields are its options (each made with
:func:`option`: a default and a one-line doc, from which ``fastsw train --help`` and its flags are generated), and a
:meth:`Trainer.fit` that turns the counted corpus (a :class:`Run`) into a model. :mod:`fastsw.trainers.registry`
maps ``algo=`` names to trainers. :func:`fastsw.train` reads and counts the text the same way for every trainer,
then calls ``fit``.

Errors: a bad option is an :class:`OptionError`. Its message names options through a template, so the API says
``supermerges=300`` and the command line ``--supermerges 300`` for the one rule that :meth:`TrainerConfig.validate`
states once.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Dict, List, Optional, Sequence, Tuple, Type

__all__ = ["OptionError", "option", "TrainerConfig", "Trainer", "Run", "api_words"]


# ---- errors that name options in the caller's words ------------------------------------------------------------


class OptionError(ValueError):
    """A bad option of :func:`fastsw.train`. ``str(error)`` names options as the API takes them
    (``supermerges=300``); :meth:`render` with another speller names them as, e.g., command-line flags.

    ``template`` is a :meth:`str.format` string whose fields are option names; the format spec says how the option
    appears: ``{name}`` the bare name (``supermerges`` / ``--supermerges``), ``{name:=}`` the name as an option
    (``supermerges=`` / ``--supermerges``), ``{name:v}`` with its value (``supermerges=300`` /
    ``--supermerges 300``), ``{name:=S}`` with a placeholder (``supermerges=S`` / ``--supermerges S``) and
    ``{name:'x}`` with a literal string value (``algo='bpe'`` / ``--algo bpe``) and ``{name:=*}`` with the
    placeholder ``values[name + "="]`` (the flag's metavar on the command line). ``values`` holds the values that
    ``{name:v}`` shows.

        >>> e = OptionError("{supermerges:v} must be smaller than {vocab_size:v}", supermerges=300, vocab_size=300)
        >>> str(e)
        'supermerges=300 must be smaller than vocab_size=300'
        >>> e.render(lambda name: "--" + name.replace("_", "-"))
        '--supermerges 300 must be smaller than --vocab-size 300'
    """

    def __init__(self, template: str, **values: Any):
        self.template = template
        self.values = values
        super().__init__(self.render(None))

    def render(
        self, flag: Optional[Callable[[str], str]], metavar: Optional[Callable[[str], Optional[str]]] = None
    ) -> str:
        """The message with options named by ``flag(name)`` (a command-line flag; ``metavar(name)`` its
        placeholder), or as the API takes them (``flag=None``)."""
        return self.template.format_map(_Words(self.values, flag, metavar))


class _Words(dict):
    def __init__(self, values: dict, flag, metavar):
        super().__init__()
        self.given, self.flag, self.metavar = values, flag, metavar

    def __missing__(self, name: str):
        return _Named(name, self.given, self.flag, self.metavar)


class _Named:
    def __init__(self, name: str, values: dict, flag, metavar):
        self.name, self.values, self.flag, self.metavar = name, values, flag, metavar

    def __format__(self, spec: str) -> str:
        name, value = self.name, self.values.get(self.name)
        placeholder = self.values.get(name + "=", "")
        if spec == "r":
            return repr(value)
        if self.flag is None:  # the API's words
            if spec == "":
                return name
            if spec == "=":
                return name + "="
            if spec == "v":
                return f"{name}={value!r}"
            if spec == "=*":
                return f"{name}={placeholder}"
            if spec.startswith("'"):
                return f"{name}={spec[1:]!r}"
            return f"{name}={spec[1:]}"  # "=S"
        flag = self.flag(name)
        if spec in ("", "="):
            return flag
        if spec == "v":
            return f"{flag} {value}"
        if spec == "=*":
            return f"{flag} {(self.metavar and self.metavar(name)) or placeholder}"
        return f"{flag} {spec[1:]}"


def api_words(template: str, **values: Any) -> str:
    """``template`` (as :class:`OptionError` takes it) in the API's words."""
    return OptionError(template, **values).render(None)


# ---- options ---------------------------------------------------------------------------------------------------

#: The options of :func:`fastsw.train` that belong to no trainer (reading, counting, the vocabulary, the backend);
#: a trainer's option may not take one of these names.
COMMON_OPTIONS = (
    "inputs",
    "algo",
    "vocab_size",
    "profile",
    "pretokenizer",
    "normalize",
    "alphabet",
    "byte_fallback",
    "special_tokens",
    "text_field",
    "doc_mode",
    "separator",
    "progress",
    "backend",
    "workers",
    "from_counts",
    "weights",
    "shares",
    "lang_field",
)


def option(
    default: Any,
    doc: str,
    *,
    flag: Optional[str] = None,
    metavar: Optional[str] = None,
    choices: Optional[Sequence[str]] = None,
    type: Optional[Callable[[str], Any]] = None,
    action: Optional[str] = None,
    requires: Optional[str] = None,
    applies: Optional[str] = None,
    group: Optional[type] = None,
) -> Any:
    """A field of a trainer's config: its ``default`` and a one-line ``doc`` (the ``--help`` text).

    The command line's flag is ``--`` + the name with ``-`` for ``_`` unless ``flag`` says otherwise; ``type``
    converts its text (default: the type of ``default``, ``str`` for None), ``choices`` limits it, a ``bool``
    default makes a switch, ``action="append"`` a repeatable flag. ``requires`` names the option it goes with
    (shown in errors), ``applies`` the text that says which algorithms take it (a template as
    :class:`OptionError` takes it; by default the trainers whose config has the field), ``group`` the config class
    whose ``--help`` group shows it (default: the class that declares it)."""
    meta = {
        "doc": doc,
        "flag": flag,
        "metavar": metavar,
        "choices": tuple(choices) if choices else None,
        "type": type,
        "action": action,
        "requires": requires,
        "applies": applies,
        "group": group,
    }
    if isinstance(default, (list, dict, set)):
        return dataclasses.field(default_factory=lambda: default.copy(), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


@dataclass
class TrainerConfig:
    """The options of one trainer (subclass it as a ``@dataclass`` whose fields are made with :func:`option`).

    :meth:`validate` checks the values, and may convert them in place (e.g. ``numpy.int64(10)`` to ``10``); it
    raises one :class:`OptionError` naming the option. ``common`` is what the other options of the run say
    (:class:`Common`).

    ``help_title`` and ``help_text`` name the ``fastsw train --help`` group of the fields the class declares;
    ``help_order`` places it among the groups (smaller first). ``applies`` is the ``applies`` text of the fields
    the class declares without one (see :func:`option`)."""

    help_title: ClassVar[str] = ""
    help_text: ClassVar[str] = ""
    help_order: ClassVar[int] = 100
    applies: ClassVar[Optional[str]] = None

    def validate(self, common: "Common") -> None:
        """Check the options; raise one :class:`OptionError`."""

    @classmethod
    def options(cls) -> List[dataclasses.Field]:
        """The fields that are options, in declaration order."""
        return [f for f in dataclasses.fields(cls) if "doc" in f.metadata]

    @classmethod
    def applies_text(cls, name: str) -> Optional[str]:
        """The ``applies`` text of option ``name``: its field's, else that of the class that declares it (None when
        neither gives one)."""
        for f in dataclasses.fields(cls):
            if f.name == name:
                owner = next(c for c in cls.__mro__ if name in vars(c).get("__annotations__", {}))
                return f.metadata.get("applies") or vars(owner).get("applies")
        return None

    def given(self) -> Dict[str, Any]:
        """The options whose value is not the default."""
        return {f.name: getattr(self, f.name) for f in self.options() if getattr(self, f.name) != _default(f)}


def _default(field: dataclasses.Field) -> Any:
    if field.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        return field.default_factory()  # type: ignore[misc]
    return field.default


@dataclass(frozen=True)
class Common:
    """The options of :func:`fastsw.train` that every trainer shares, as a config's :meth:`~TrainerConfig.validate`
    sees them: ``vocab_size`` (an ``int``), ``profile``, ``alphabet``, ``algo`` (as the caller named it) and
    ``weighted`` (``"weights"``/``"shares"`` when given, else None)."""

    algo: str
    vocab_size: int
    profile: str
    alphabet: str
    weighted: Optional[str] = None


# ---- the stages --------------------------------------------------------------------------------------------------


@dataclass
class Run:
    """What a trainer's :meth:`Trainer.fit` works on: the counted corpus and the run's settings.

    ``counts`` (:class:`fastsw.corpus.counting.Counts`), ``alphabet``, ``pretokenizer``, ``profile`` (its name;
    ``rules`` the :class:`~fastsw.alphabet.Profile`), ``vocab_size``, ``stages`` (the backend object whose methods
    are the merge stages: :class:`fastsw.trainers.superword.ReferenceBackend` or
    :class:`fastsw.trainers.bpe_fast.FastBackend`), ``info`` (``training_info``, filled as the run goes:
    ``info["notes"]`` lists how the vocabulary fell short, ``info["seconds"]`` the stage timings), ``normalize``,
    ``special_tokens``, ``progress`` (draw bars), ``dev_counts`` (parity-aware BPE's dev texts), ``from_counts``
    (trained from count tables), ``count_candidates`` (counts supermerge candidates elsewhere, e.g. on a Dask
    cluster) and ``model_class`` (:class:`fastsw.Tokenizer`, what :meth:`tokenizer` builds)."""

    counts: Any
    alphabet: Any
    pretokenizer: Any
    profile: str
    rules: Any
    vocab_size: int
    stages: Any
    info: dict
    normalize: Optional[str] = None
    special_tokens: Sequence[str] = ()
    progress: bool = False
    dev_counts: Optional[dict] = None
    from_counts: bool = False
    count_candidates: Optional[Callable] = None
    model_class: Any = None

    def bar(self, label: str, total: Optional[int] = None):
        """A progress bar (drawn when the run shows progress); ``bar.close()`` returns its seconds."""
        from fastsw.progress import Progress

        return Progress(label, total=total, enabled=self.progress)

    def note(self, text: str) -> None:
        """Record how the vocabulary fell short of ``vocab_size`` (warned as a
        :class:`~fastsw.notes.VocabularyNotReachedWarning` when the model is returned)."""
        self.info["notes"].append(text)

    def tokenizer(self, merges: Sequence[Tuple[int, int, int, bool]], *, algo: str, reachability=None):
        """The model of ``merges`` (``(left, right, count, is_supermerge)`` in order) with the run's alphabet,
        pre-tokenizer, profile, normalization and special tokens (ids after the vocabulary)."""
        vocab_total = len(self.alphabet) + len(merges)
        specials = {s: vocab_total + i for i, s in enumerate(self.special_tokens)}
        return self.model_class(
            alphabet=self.alphabet,
            merges=list(merges),
            pretokenizer=self.pretokenizer,
            profile=self.profile,
            algo=algo,
            special_tokens=specials,
            training_info=self.info,
            normalize=self.normalize,
            _reachability=reachability,
        )


class Trainer:
    """One training algorithm: its ``name`` (``algo=``), its ``Config`` and its stages.

    Class attributes: ``name``; ``title`` (how messages and ``--help`` name it); ``summary`` (one line: what
    ``--algo NAME`` trains); ``Config`` (a
    :class:`TrainerConfig` dataclass); ``needs_runs`` (phase 2 joins pretokens: the counts must hold letter runs
    and the pre-tokenizer must split text into words). A trainer is made with its validated config; :func:`fastsw.train`
    then calls :meth:`check` once the pre-tokenizer is known, :meth:`phase1_merges` to size the run, and
    :meth:`fit`.

    A minimal trainer (the alphabet only, ignoring the corpus):

        >>> from dataclasses import dataclass
        >>> from fastsw.trainers import Trainer, TrainerConfig, option, register_trainer, unregister_trainer
        >>> @dataclass
        ... class NothingConfig(TrainerConfig):
        ...     label: str = option("none", "a word recorded in training_info")
        >>> class NothingTrainer(Trainer):
        ...     name, title, summary, Config = "nothing", "Nothing", "the alphabet alone", NothingConfig
        ...     def fit(self, run):
        ...         run.info["label"] = self.config.label
        ...         return run.tokenizer([], algo="bpe")
        >>> _ = register_trainer(NothingTrainer)
        >>> import fastsw
        >>> fastsw.train(["some text"], algo="nothing", vocab_size=300, label="x").training_info["label"]
        'x'
        >>> unregister_trainer("nothing")
    """

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    Config: ClassVar[Type[TrainerConfig]] = TrainerConfig
    needs_runs: ClassVar[bool] = False

    def __init__(self, config: TrainerConfig):
        self.config: Any = config  # an instance of its own Config

    def check(self, pretokenizer, common: Common) -> None:
        """Refuse a pre-tokenizer the algorithm cannot train with (after the config is valid, before counting)."""

    def parity(self) -> Optional[dict]:
        """Parity-aware phase 1's options (:func:`fastsw.trainers.parity.parity_options`), or None for plain BPE."""
        return None

    def phase1_merges(self, n_free: int) -> int:
        """How many phase-1 (BPE) merges to learn when ``n_free`` = ``vocab_size`` - alphabet."""
        return n_free

    def record(self) -> dict:
        """What ``training_info["options"]`` records of the config (besides algo, vocab_size, profile)."""
        return {}

    def fit(self, run: Run):
        """The stages after counting: ``run`` -> the model (:class:`fastsw.Tokenizer` or a subclass)."""
        raise NotImplementedError(f"trainer {self.name!r} does not implement fit()")
