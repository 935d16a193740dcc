"""Type aliases of the public API's annotations (fastsw imports nothing here: every module may import this one)."""

from __future__ import annotations

import os
from fractions import Fraction
from numbers import Real
from typing import Any, Iterable, Mapping, Union

#: A file path argument: a ``str`` or a ``pathlib.Path`` (any ``os.PathLike``).
PathLike = Union[str, "os.PathLike[str]"]
#: A number argument: ``int``, ``float``, ``Fraction`` (the functions accept any ``numbers.Real`` at run time, bool
#: excepted; type checkers do not see ``int`` as a ``numbers.Real``, hence the union).
Number = Union[int, float, Fraction, Real]
#: What :func:`fastsw.train` reads: a path, an iterable of texts or paths, or ``{language: any of these}``.
TrainInputs = Union[PathLike, Iterable[Union[str, "os.PathLike[str]"]], Mapping[str, Any], None]
#: A pre-tokenizer argument: a mode or scheme name (``"script"``, ``"boundary[w,p]+caps"``, ...), a config dict, a
#: :class:`fastsw.Pretokenizer` or a scheme pre-tokenizer object, or None for the profile's default.
PretokenizerSpec = Any
