"""Comparing tokenizers: the metric formulas (:mod:`.metrics`), evaluation per language and its reports
(:mod:`.evaluate`), vocabulary duplication (:mod:`.duplication`) and seeing the tokens (:mod:`.show`)."""
