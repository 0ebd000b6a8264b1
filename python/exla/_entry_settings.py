"""The settings keywords of exla's entry points, derived from the declarations.

``exla.function``, ``exla.jit``, ``exla.optimize_hlo`` and ``exla.explain``
take every setting of :class:`exla.options.Options` as a keyword. Each takes
them as ``**settings`` and hands them to one resolver
(:func:`exla.options.resolve_options`, or :func:`exla.options.resolve_keywords`
for ``optimize_hlo``), so no entry point restates a setting. :func:`takes_settings`
gives such a function the signature and the docstring entries a reader
expects: one typed keyword per setting, documented from its declaration.
"""

from __future__ import annotations

import inspect
import textwrap
from typing import Any, Callable, Mapping, TypeVar

from exla import _core
from exla.options import declared_settings

__all__ = ["takes_settings", "split_settings", "check_passes", "MARKER"]

# The line of an entry point's docstring that the settings' entries replace.
MARKER = "{SETTINGS}"

_F = TypeVar("_F", bound=Callable[..., Any])


def _keywords() -> list[Any]:
    return [s for s in declared_settings() if s.keyword]


def _parameters() -> list[inspect.Parameter]:
    return [inspect.Parameter(s.name, inspect.Parameter.KEYWORD_ONLY, default=None,
                              annotation=s.kind.annotation) for s in _keywords()]


def _signature(fn: Callable[..., Any], keep_kwargs: bool) -> inspect.Signature:
    """``fn``'s signature with its ``**`` parameter opened into the settings' keywords."""
    signature = inspect.signature(fn)
    ordinary = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    rest = [p for p in signature.parameters.values() if p.kind is p.VAR_KEYWORD]
    return signature.replace(parameters=ordinary + _parameters() + (rest if keep_kwargs else []))


def settings_doc(indent: str) -> str:
    """The docstring entries of the settings keywords, at ``indent``.

    >>> settings_doc("").splitlines()[0]
    "threshold: no tensor larger than this many bytes may remain outside a loop, e.g. '100MB',"
    """
    entries = []
    for s in _keywords():
        text = f"{s.name}: {s.help}" + (f" Also {s.sources()}." if s.sources() else "")
        entries.append(textwrap.fill(text, width=92, initial_indent=indent,
                                     subsequent_indent=indent + "  "))
    return "\n".join(entries)


def _fill_doc(doc: str | None) -> str | None:
    if not doc or MARKER not in doc:
        return doc
    lines = doc.split("\n")
    return "\n".join(settings_doc(line[:len(line) - len(line.lstrip())])
                     if line.strip() == MARKER else line for line in lines)


def takes_settings(*, keep_kwargs: bool = False) -> Callable[[_F], _F]:
    """Declares that a function's ``**`` parameter takes the settings keywords.

    The function's ``__signature__`` shows one keyword-only parameter per
    setting (default None: the setting's other sources decide) and the
    ``{SETTINGS}`` line of its docstring becomes one entry per setting.
    ``keep_kwargs`` keeps the ``**`` parameter in the signature too, for a
    function that also passes other keywords on (``exla.jit`` to ``jax.jit``).
    """
    def decorate(fn: _F) -> _F:
        fn.__signature__ = _signature(fn, keep_kwargs)  # type: ignore[attr-defined]
        fn.__doc__ = _fill_doc(fn.__doc__)
        return fn

    return decorate


def split_settings(keywords: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(settings, others)``: the keywords that name settings, and the rest.

    >>> split_settings({"threshold": "1MB", "keep_unused": True})
    ({'threshold': '1MB'}, {'keep_unused': True})
    """
    names = {s.name for s in _keywords()}
    settings = {k: v for k, v in keywords.items() if k in names}
    return settings, {k: v for k, v in keywords.items() if k not in names}


def check_passes(settings: Mapping[str, Any]) -> None:
    """Refuses unknown pass names now, for an entry point that compiles later.

    Raises:
      ValueError: a name in ``settings["passes"]`` that is not an exla pass.
    """
    passes = settings.get("passes")
    if passes is None:
        return
    unknown = [p for p in passes if p not in _core.available_passes()]
    if unknown:
        raise ValueError(f"unknown exla passes {unknown}; available: {_core.available_passes()}")
