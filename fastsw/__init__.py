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

from fastsw._config import use_numba_cache_dir as _use_numba_cache_dir

_use_numba_cache_dir(__version__)  # before any kernel module is imported (see fastsw._config)

from fastsw.pretokenizers.pretokenize import (
    Pretokenizer,
    GPT4O_PATTERN,
    SCRIPT_SPECIFIC_PATTERN,
    DEFAULT_SCRIPT_SPECIFIC_SCRIPTS,
)
from fastsw.tokenizer import Tokenizer, Merge
from fastsw.trainers.train import train
from fastsw.corpus.readers import iter_documents, InputError
from fastsw.files import OutputError
from fastsw.encoding.shard import shard  # noqa: E402 (fastsw.shard(...); the module's other names: from fastsw.encoding.shard import ...)
from fastsw.eval import metrics  # noqa: E402,F401 (fastsw.metrics: evaluation formulas)

# the documented modules above the tokenizer, reachable as fastsw.io.interop, ... after `import fastsw` (the
# Tokenizer's methods import them themselves: nothing here is needed for them to work)
import fastsw.io.interop  # noqa: E402,F401
import fastsw.io.tiktoken_vocab  # noqa: E402,F401
import fastsw.io.formats  # noqa: E402,F401
import fastsw.io.model_kinds  # noqa: E402,F401
from fastsw.notes import VocabularyNotReachedWarning, OptionWarning, ExtensionMissingWarning, PatternNotCompiledWarning
from fastsw.corpus.memory import MemoryLimitError

load = Tokenizer.load

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
