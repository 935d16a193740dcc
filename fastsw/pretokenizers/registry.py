"""Pre-tokenizers by name: the one table from the names users pass to their families.

``fastsw.train(..., pretokenizer=NAME)``, ``fastsw train --pretokenizer NAME`` and ``fastsw count`` take a name;
model files and count tables store :meth:`~fastsw.pretokenizers.base.BasePretokenizer.to_config`, whose ``"mode"``
is a registered name. :func:`make_pretokenizer` and :func:`pretokenizer_from_config` find the family here, and
nowhere else compares a name.

A name belongs to the family registered under it, or under its longest registered prefix followed by ``[`` or
``+``: ``boundary[w,p,d]+caps`` is the ``boundary`` family's, ``script-v3+boundary[w]`` the ``script-v3`` family's;
the family parses the rest (:meth:`~fastsw.pretokenizers.base.BasePretokenizer.from_name`).

The built-in families are registered at the end of this module, in one place; :func:`register` adds yours
(docs/pretokenizers.md, "Adding a pre-tokenizer"), and so does an installed package that declares an entry point in
the group ``fastsw.pretokenizers`` (``NAME = "module:Class"``): it is registered the first time a name is not
found, so ``fastsw train --pretokenizer NAME`` and ``fastsw.load`` find it in every process.

    >>> [family_of(name) for name in ("none", "boundary[w,p,d]+caps", "script-v3+boundary[w]")]
    ['none', 'boundary', 'script-v3']
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any, Dict, List, Optional, Type, TypeVar, Union

from fastsw.pretokenizers.base import BasePretokenizer

__all__ = [
    "register",
    "unregister",
    "registered",
    "make_pretokenizer",
    "pretokenizer_from_config",
    "valid_names_message",
]

F = TypeVar("F", bound=Type[BasePretokenizer])


class _Entry:
    """A registered family: its class, or ``"module:Class"`` until first use (a built-in family's module is
    imported only when one of its names is used), and how error messages list its names."""

    __slots__ = ("target", "description")

    def __init__(self, target: Union[type, str], description: str):
        self.target = target
        self.description = description

    def family(self) -> Type[BasePretokenizer]:
        if isinstance(self.target, str):
            module, _, attr = self.target.partition(":")
            self.target = _check_family(getattr(importlib.import_module(module), attr))
        return self.target  # type: ignore[return-value]


_FAMILIES: Dict[str, _Entry] = {}
#: The entry-point group through which installed packages register pre-tokenizer families.
ENTRY_POINT_GROUP = "fastsw.pretokenizers"
_plugins_loaded = False


def _load_plugins() -> bool:
    """Register the families that installed packages declare in :data:`ENTRY_POINT_GROUP` (once per process;
    a name already taken is left to its family, with a warning). Whether this call registered any."""
    global _plugins_loaded
    if _plugins_loaded:
        return False
    _plugins_loaded = True
    added = False
    import importlib.metadata  # here: reading the installed packages' metadata is not needed before a lookup

    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in _FAMILIES:
            if _FAMILIES[ep.name].target != ep.value:
                warnings.warn(
                    f"the pre-tokenizer entry point {ep.name} = {ep.value!r} is ignored: the name is taken "
                    f"by {_FAMILIES[ep.name].target!r}",
                    RuntimeWarning,
                    stacklevel=3,
                )
            continue
        try:
            register(ep.name, ep.value)
            added = True
        except ValueError as e:
            warnings.warn(
                f"the pre-tokenizer entry point {ep.name} = {ep.value!r} is ignored: {e}", RuntimeWarning, stacklevel=3
            )
    return added


def _check_family(family) -> Type[BasePretokenizer]:
    if not (isinstance(family, type) and issubclass(family, BasePretokenizer)):
        raise TypeError(
            f"a pre-tokenizer family must be a subclass of fastsw.pretokenizers.BasePretokenizer, not {family!r}"
        )
    return family


def register(
    name: str,
    family: Union[Type[BasePretokenizer], str, None] = None,
    *,
    description: Optional[str] = None,
    replace: bool = False,
) -> Any:
    """Register the pre-tokenizer class ``family`` under ``name``; returns ``family`` (or, without it, a decorator
    that registers the class it decorates).

    Args:
        name: what users pass (``pretokenizer=name``, ``--pretokenizer name``) and what the family's
            ``to_config()["mode"]`` records in model files. Letters, digits, ``-``, ``_`` and ``.``; names
            ``name[...]`` and ``name+...`` belong to the family too (its ``from_name`` parses them).
        family: a subclass of :class:`~fastsw.pretokenizers.base.BasePretokenizer`, or ``"module:Class"``
            (imported on first use).
        description: how the error for an unknown name lists this family (default: ``name``).
        replace: allow replacing a registered family; otherwise a taken name is a ``ValueError``.

    A model file trained with a registered family loads where the same registration has run (import your module
    before ``fastsw.load``).

        >>> from fastsw.pretokenizers import BasePretokenizer, register, unregister, make_pretokenizer
        >>> @register("chars")
        ... class Chars(BasePretokenizer):
        ...     mode = "chars"
        ...     def pretokenize_reference(self, text):
        ...         return list(text)
        ...     def to_config(self):
        ...         return {"mode": "chars"}
        ...     @classmethod
        ...     def from_config(cls, config):
        ...         return cls()
        >>> make_pretokenizer("chars").pretokenize("hi!")
        ['h', 'i', '!']
        >>> unregister("chars")
    """
    if family is None:

        def decorator(cls: F) -> F:
            register(name, cls, description=description, replace=replace)
            return cls

        return decorator
    if not isinstance(name, str) or not name or not all(c.isalnum() or c in "-_." for c in name):
        raise ValueError(f"a pre-tokenizer name is letters, digits, '-', '_' and '.', not {name!r}")
    if not isinstance(family, str):
        _check_family(family)
    if name in _FAMILIES and not replace:
        raise ValueError(
            f"the pre-tokenizer name {name!r} is taken (by {_FAMILIES[name].target!r}); pass "
            "replace=True to replace it, or choose another name"
        )
    _FAMILIES[name] = _Entry(family, description or name)
    return family


def unregister(name: str) -> None:
    """Remove the family registered under ``name`` (``KeyError`` when there is none)."""
    if name not in _FAMILIES:
        raise KeyError(f"no pre-tokenizer is registered under {name!r}")
    del _FAMILIES[name]


def registered() -> List[str]:
    """The registered names, in the order of registration.

    >>> registered()[:5]
    ['script', 'simple', 'none', 'boundary', 'script-v3']
    """
    _load_plugins()
    return list(_FAMILIES)


def valid_names_message() -> str:
    """The list of valid names that every error about an unknown pre-tokenizer ends with."""
    _load_plugins()
    return "valid pre-tokenizers: " + ", ".join(e.description for e in _FAMILIES.values())


def family_of(name: str) -> Optional[str]:
    """The registered name whose family ``name`` belongs to (itself, or its longest registered prefix followed by
    ``[`` or ``+``), or None.

        >>> family_of("boundary[w,p]+caps"), family_of("script-v3+boundary[w]"), family_of("script"), family_of("x")
        ('boundary', 'script-v3', 'script', None)
    """
    if name in _FAMILIES:
        return name
    best = _longest_prefix(name)
    if best is None and _load_plugins():
        best = name if name in _FAMILIES else _longest_prefix(name)
    return best


def _longest_prefix(name: str) -> Optional[str]:
    best = None
    for known in _FAMILIES:
        if name.startswith(known) and name[len(known)] in "[+" and (best is None or len(known) > len(best)):
            best = known
    return best


def make_pretokenizer(spec) -> BasePretokenizer:
    """A pre-tokenizer from what users pass as ``pretokenizer=``: a name (``"script"``, ``"simple"``, ``"none"``,
    ``"boundary[w,p,d]+caps"``, ``"script-v3"``, ``"script-v3+boundary[w]"``, or a registered one), a config dict
    (:meth:`~fastsw.pretokenizers.base.BasePretokenizer.to_config`, e.g. a custom pattern
    ``{"mode": "simple", "main_pattern": ...}``) or a pre-tokenizer object (returned as it is). An unknown name
    is one ``ValueError`` listing the valid ones.

        >>> make_pretokenizer("simple").pretokenize("Hello world")
        ['Hello', ' world']
        >>> make_pretokenizer("boundary[w]").name
        'boundary[w]'
    """
    if isinstance(spec, BasePretokenizer):
        return spec
    if isinstance(spec, str):
        name = spec.strip()
        family = family_of(name)
        if family is None:
            raise ValueError(f"unknown pre-tokenizer {spec!r}; {valid_names_message()}")
        return _FAMILIES[family].family().from_name(name)
    if isinstance(spec, dict):
        return pretokenizer_from_config(spec)
    raise ValueError(
        f"pretokenizer must be a name ({', '.join(repr(n) for n in _FAMILIES)}), a dict of settings "
        f"or a pre-tokenizer object, not {spec!r}"
    )


def pretokenizer_from_config(config: dict) -> BasePretokenizer:
    """The pre-tokenizer a stored config describes (a model file's or a count table's ``pretokenizer``): the family
    registered under its ``"mode"`` (``"script"`` when absent) reads it.

        >>> pretokenizer_from_config(make_pretokenizer("boundary[w,p]").to_config()).name
        'boundary[w,p]'
    """
    if not isinstance(config, dict):
        raise ValueError(f"a pre-tokenizer config must be a dict of settings, not {config!r}")
    mode = config.get("mode", "script")
    if isinstance(mode, str) and mode not in _FAMILIES:
        _load_plugins()
    if not isinstance(mode, str) or mode not in _FAMILIES:
        raise ValueError(f"pretokenizer mode {mode!r} is not one of {', '.join(_FAMILIES)}")
    return _FAMILIES[mode].family().from_config(config)


def _family_for_mode(mode: str) -> Optional[Type[BasePretokenizer]]:
    """The class registered under ``mode`` (an installed package's too), or None."""
    if mode not in _FAMILIES:
        _load_plugins()
    entry = _FAMILIES.get(mode)
    return None if entry is None else entry.family()


# ---- the built-in families, in one place ----------------------------------------------------------------------------
_REGEX = "fastsw.pretokenizers.pretokenize:Pretokenizer"
register("script", _REGEX, description="script (default)")
register("simple", _REGEX)
register("none", _REGEX)
register(
    "boundary",
    "fastsw.pretokenizers.boundary:BoundaryPretokenizer",
    description="boundary[w], boundary[w,p], boundary[w,p,d], each optionally followed by +caps, +shift or "
    "+upper (e.g. boundary[w,p,d]+caps)",
)
register(
    "script-v3",
    "fastsw.pretokenizers.script_v3:ScriptPretokenizer",
    description="script-v3 and script-v3+boundary[...] (e.g. script-v3+boundary[w,p,d]+caps)",
)
