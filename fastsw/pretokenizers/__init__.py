"""Pre-tokenization: a document cut into pretokens (SPEC section 2).

The interface and the table of names:

* :mod:`.base` -- :class:`BasePretokenizer`, every hook the package calls on a pre-tokenizer, with its default;
* :mod:`.registry` -- names to families (:func:`register`, :func:`make_pretokenizer`), the built-in families
  registered in one place.

The families, each a subclass of :class:`BasePretokenizer` with its plain-Python rule (``pretokenize_reference``)
and its fast twin (``pretokenize``):

* :mod:`.pretokenize` -- :class:`Pretokenizer`, the regular expressions: ``script`` (script chunking,
  :mod:`.chunking`), ``simple``, ``none`` and custom patterns; also the normalization of the text before it;
* :mod:`.boundary` -- the boundary markers and caps codes, ``boundary[...]``;
* :mod:`.script_v3` -- the SCRIPT v3 encoding, ``script-v3`` and ``script-v3+boundary[...]``.

:mod:`._unicode` holds the pinned Unicode tables. The compiled twins are the Cython extension ``_pretok``: the
regex family's scanner in ``_pretok.pyx`` (cl100k's in ``_cl100k.pxi``), the markers in ``_boundary.pxi``, the
pretoken counter in ``_counter.pxi``, the encoder's slices in ``_slices.pxi`` and its one-text call in
``_one_text.pxi``; SCRIPT v3's grouping is a Numba kernel inside :mod:`.script_v3`.
"""

from fastsw.pretokenizers.base import BasePretokenizer
from fastsw.pretokenizers.registry import make_pretokenizer, pretokenizer_from_config, register, registered, unregister
from fastsw.pretokenizers.pretokenize import Pretokenizer

__all__ = [
    "BasePretokenizer",
    "Pretokenizer",
    "make_pretokenizer",
    "pretokenizer_from_config",
    "register",
    "registered",
    "unregister",
]
