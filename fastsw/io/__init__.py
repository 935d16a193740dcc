"""Model files and other formats: fastsw's own model file (:mod:`.model_file`), the authors' format and HF's
(:mod:`.interop`), tiktoken vocabularies (:mod:`.tiktoken_vocab`) and reading any of them by content
(:mod:`.formats`)."""
