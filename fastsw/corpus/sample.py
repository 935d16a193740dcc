"""The sample corpus shipped inside the package (real text in 12 languages).

``fastsw/data/sample/*.txt``: about 40 kB per language (80 kB English) of
public-domain, CC0, CC BY and CC BY-SA text; documents are separated by three
newlines. ``fastsw/data/sample/README.md`` is the attribution table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, List

SAMPLE_DIR = Path(__file__).resolve().parents[1] / "data" / "sample"
SEPARATOR = "\n\n\n"


def sample_files() -> List[Path]:
    """The sample corpus files, one per language, sorted by name."""
    files = sorted(SAMPLE_DIR.glob("*.txt"))
    if not files:
        raise FileNotFoundError(f"the sample corpus is missing from {SAMPLE_DIR}; reinstall fastsw")
    return files


def sample_documents() -> Iterator[str]:
    """Stream the sample corpus's documents."""
    from fastsw.corpus.readers import iter_documents

    return iter_documents(sample_files(), doc_mode="separator", separator=SEPARATOR)
