"""Every model kind with its own class, registered in one place: a model file's ``algo`` -> the
:class:`fastsw.Tokenizer` subclass that encodes it and the reader of its fields.

The BPE family (``bpe``, ``boundless``, ``superbpe``) is the :class:`fastsw.Tokenizer` itself, read by
:func:`fastsw.io.model_file.model_kwargs`. A kind listed here is a subclass defined with its trainer, so this
module sits above the tokenizer: :meth:`fastsw.Tokenizer.load` imports it when called. A new model kind is one
line in :data:`MODEL_KINDS`.
"""

from __future__ import annotations

from typing import Callable, Dict, NamedTuple, Optional

from fastsw.trainers.mingram import MinGramTokenizer, mingram_from_data

__all__ = ["ModelKind", "MODEL_KINDS", "model_kind"]


class ModelKind(NamedTuple):
    """A model kind: the class :meth:`fastsw.Tokenizer.load` builds and ``read(path, data) -> keyword arguments``
    of that class from the file's parsed JSON object (every failure a ``ValueError`` naming the file)."""

    cls: type
    read: Callable[..., dict]


#: ``algo`` -> :class:`ModelKind`, for every model kind that is not the BPE family's :class:`fastsw.Tokenizer`.
MODEL_KINDS: Dict[str, ModelKind] = {
    "mingram": ModelKind(MinGramTokenizer, mingram_from_data),
}


def model_kind(algo: object) -> Optional[ModelKind]:
    """The registered kind of a model file's ``algo`` field, or None for the BPE family (and unknown values,
    which :func:`fastsw.io.model_file.check_model_data` reports)."""
    return MODEL_KINDS.get(algo) if isinstance(algo, str) else None
