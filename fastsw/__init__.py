"""fastsw: fast, exact training and use of superword tokenizers.

BPE, BoundlessBPE (Algorithm 1) and SuperBPE, following "Faster Superword
Tokenization": phase 1 learns regular merges inside pretokens, phase 2 learns
supermerges across runs of single-token pretokens from aggregated candidates.

    >>> import fastsw
    >>> tok = fastsw.train(["a document", "another one"], algo="boundless", vocab_size=300)
    >>> tok.decode(tok.encode("a document")) == "a document"
    True
"""

__version__ = "0.1.0"

from typing import TYPE_CHECKING

from fastsw._config import use_numba_cache_dir as _use_numba_cache_dir

_use_numba_cache_dir(__version__)  # before any kernel module is imported (see fastsw._config)

from fastsw.pretokenizers.pretokenize import (
    Pretokenizer,
    GPT4O_PATTERN,
    SCRIPT_SPECIFIC_PATTERN,
    DEFAULT_SCRIPT_SPECIFIC_SCRIPTS,
)
from fastsw.tokenizer import Tokenizer, Merge
from fastsw.files import OutputError

# the documented modules above the tokenizer, reachable as fastsw.io.interop, ... after `import fastsw` (the
# Tokenizer's methods import them themselves: nothing here is needed for them to work)
import fastsw.io.interop  # noqa: E402,F401
import fastsw.io.tiktoken_vocab  # noqa: E402,F401
import fastsw.io.formats  # noqa: E402,F401
import fastsw.io.model_kinds  # noqa: E402,F401
from fastsw.notes import VocabularyNotReachedWarning, OptionWarning, ExtensionMissingWarning, PatternNotCompiledWarning
from fastsw.corpus.memory import MemoryLimitError

load = Tokenizer.load

if TYPE_CHECKING:  # imported at their first use (__getattr__): loading a model and encoding never reads them
    from fastsw.corpus.readers import InputError, iter_documents
    from fastsw.encoding.shard import shard  # fastsw.shard(...); its module's other names: from fastsw.encoding.shard
    from fastsw.eval import metrics  # fastsw.metrics: evaluation formulas
    from fastsw.trainers.train import train

_LAZY = {  # name -> the module that defines it (None: the name is the module)
    "train": "fastsw.trainers.train",
    "shard": "fastsw.encoding.shard",
    "iter_documents": "fastsw.corpus.readers",
    "InputError": "fastsw.corpus.readers",
    "metrics": None,
}


def __getattr__(name: str):
    """The public names of training, sharding, reading and evaluation, imported when first used (the counter,
    the readers and the trainers are a third of ``import fastsw``'s time, which a process that only loads a model
    and encodes does not need)."""
    if name not in _LAZY:
        raise AttributeError(f"module 'fastsw' has no attribute {name!r}")
    import importlib

    module = _LAZY[name]
    value = (
        importlib.import_module(f"fastsw.eval.{name}")
        if module is None
        else getattr(importlib.import_module(module), name)
    )
    globals()[name] = value
    return value


__all__ = [
    "train",
    "load",
    "shard",
    "Tokenizer",
    "Merge",
    "Pretokenizer",
    "iter_documents",
    "InputError",
    "OutputError",
    "VocabularyNotReachedWarning",
    "OptionWarning",
    "ExtensionMissingWarning",
    "PatternNotCompiledWarning",
    "MemoryLimitError",
    "metrics",
    "GPT4O_PATTERN",
    "SCRIPT_SPECIFIC_PATTERN",
    "DEFAULT_SCRIPT_SPECIFIC_SCRIPTS",
    "__version__",
]
