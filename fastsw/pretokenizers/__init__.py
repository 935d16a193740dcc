"""Pre-tokenization: a document cut into pretokens (SPEC section 2).

:mod:`.pretokenize` holds the ``Pretokenizer`` and the regular expressions (the reference path); :mod:`.chunking`
the script chunking; :mod:`.boundary` the boundary markers and caps codes; :mod:`.script_v3` the SCRIPT encoding;
:mod:`._unicode` the pinned Unicode tables. The compiled twin is the Cython extension ``_pretok`` (the scanner in
``_pretok.pyx``, the markers in ``_boundary.pxi``, cl100k's scanner in ``_cl100k.pxi``, the pretoken counter in
``_counter.pxi`` and the encoder's slices in ``_slices.pxi``)."""
