"""Corpus in, counts out: reading documents (:mod:`.readers`), the bundled sample (:mod:`.sample`), counting
pretokens serially or on all cores (:mod:`.counting`) or on a Dask cluster (:mod:`.distributed`), and the memory
budget of the count tables (:mod:`.memory`)."""
