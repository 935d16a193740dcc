"""The warnings fastsw gives, so that callers can filter them by class: ``UserWarning`` subclasses about a result,
and :class:`ExtensionMissingWarning` and :class:`PatternNotCompiledWarning` (``RuntimeWarning`` subclasses) about
speed: the installation, a pattern without a compiled scanner.

Training and counting warn (:func:`warnings.warn`) where the result differs from what was asked for but is still
usable; the CLI prints the same text as a ``note`` on stderr instead of a Python warning.

    >>> import warnings, fastsw
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", fastsw.VocabularyNotReachedWarning)
    ...     tok = fastsw.train(["doc one", "doc two"], algo="bpe", vocab_size=1000)
    >>> tok.vocab_size < 1000
    True
"""

from __future__ import annotations

__all__ = ["VocabularyNotReachedWarning", "OptionWarning", "ExtensionMissingWarning", "PatternNotCompiledWarning"]


class VocabularyNotReachedWarning(UserWarning):
    """Training stopped before ``vocab_size`` (pairs or supermerge pairs ran out, or the corpus is empty): the
    model is smaller than requested. The message is the note also kept in ``tok.training_info["notes"]``."""


class OptionWarning(UserWarning):
    """An option was adjusted (``workers`` beyond the cores is capped) or has no effect on these inputs
    (``text_field`` with plain-text files)."""


class ExtensionMissingWarning(RuntimeWarning):
    """The compiled extension ``fastsw.pretokenizers._pretok`` cannot be imported, so fastsw runs on its pure-Python paths (the
    same results, slower). Given once per process, at ``import fastsw``, unless ``FASTSW_PUREPYTHON`` asks for
    those paths anyway."""


class PatternNotCompiledWarning(RuntimeWarning):
    """A pre-tokenizer pattern is none of those the compiled scanner runs (GPT-4o's / o200k_base's, cl100k_base's in
    either spelling, GPT-2's; recognised by what they do, however spelled:
    :func:`fastsw.pretokenizers.pretokenize.compiled_pattern`), so it
    runs on the ``regex`` path: the same pretokens, several times slower. Given once per pattern and process, when
    the pattern is first used. Silence it with
    ``warnings.filterwarnings("ignore", category=fastsw.PatternNotCompiledWarning)``."""
