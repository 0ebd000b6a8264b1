"""What a declaration of one of exla's settings holds, and the kinds of value.

Each setting is declared once, as a field of :class:`exla.options.Options`
whose metadata is a :class:`Setting` (made with :func:`setting`): its flags,
environment variable, kind of value, help text and whether the C++ core
reads it. Everything else that names settings (the flag parser, the flags'
help, the command line, the entry points' keywords, their signatures and
docstrings, the C++ options) is derived from those declarations.

A *kind* knows how one sort of value is written in each place: as flag text
(``--xla_tensor_size_threshold=1GB``), as an environment variable, as a Python
keyword, and on the command line.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from typing import Any, Iterable

from exla._flag_syntax import split_list
from exla._values import keyword_bool, parse_bool, parse_size

__all__ = ["Setting", "Kind", "SIZE", "SWITCH", "NAMES", "OPTIONAL_NAMES", "PATH", "setting"]

# The key under which a dataclass field's metadata holds its declaration.
METADATA_KEY = "exla_setting"


class Kind:
    """One sort of value: how it is parsed from each source.

    ``flag_syntax`` is how the flags' help writes the value (``=SIZE``);
    ``annotation`` is the type of the keyword in the entry points' signatures.
    """

    flag_syntax = "=VALUE"
    annotation = "str | None"
    metavar = "VALUE"

    def from_flag(self, text: str | None, flag: str) -> Any:
        """The value of ``--flag=text`` (``text`` None for a bare ``--flag``)."""
        if text is None or text == "":
            raise ValueError(f"{flag} needs a value: {flag}=VALUE")
        return self.from_text(text, flag)

    def from_text(self, text: str, name: str) -> Any:
        """The value that flag or variable text denotes."""
        return text

    def from_keyword(self, value: Any, name: str) -> Any:
        """A keyword argument's value, normalised (so that equal settings compare equal)."""
        return os.fspath(value)

    def from_env(self, text: str, name: str) -> Any:
        """The value of a non-empty environment variable."""
        return self.from_text(text, name)

    def cli_arguments(self) -> dict[str, Any]:
        """``argparse.add_argument`` keywords for this kind's command-line option."""
        return {"metavar": self.metavar}


class _Size(Kind):
    flag_syntax = "=SIZE"
    annotation = "int | str | None"
    metavar = "SIZE"

    def from_text(self, text: str, name: str) -> int:
        return parse_size(text, flag=name)

    def from_keyword(self, value: Any, name: str) -> int:
        return parse_size(value, flag=name)

    def cli_arguments(self) -> dict[str, Any]:
        def size(text: str) -> int:
            try:
                return parse_size(text)
            except ValueError as e:
                raise argparse.ArgumentTypeError(str(e)) from None

        return {"type": size, "metavar": self.metavar}


class _Switch(Kind):
    """A boolean; a bare flag (``--exla_strict``) turns it on."""

    flag_syntax = "[=true|false]"
    annotation = "bool | None"

    def from_flag(self, text: str | None, flag: str) -> bool:
        return True if text is None else parse_bool(text, name=flag)

    def from_text(self, text: str, name: str) -> bool:
        return parse_bool(text, name=name)

    def from_keyword(self, value: Any, name: str) -> bool:
        return keyword_bool(value, name=name)

    def cli_arguments(self) -> dict[str, Any]:
        # Unset (None) unless given, so that the other sources still decide.
        return {"action": "store_const", "const": True}


class _Names(Kind):
    """A comma-separated list of names (passes)."""

    flag_syntax = "=a,b"
    annotation = "Sequence[str] | str | None"
    metavar = "A,B"

    def __init__(self, *, may_be_empty: bool) -> None:
        self._may_be_empty = may_be_empty

    def from_flag(self, text: str | None, flag: str) -> tuple[str, ...]:
        if self._may_be_empty:
            return split_list(text or "")
        return super().from_flag(text, flag)

    def from_text(self, text: str, name: str) -> tuple[str, ...]:
        return split_list(text)

    def from_keyword(self, value: Any, name: str) -> tuple[str, ...]:
        return as_names(value, name)

    def cli_arguments(self) -> dict[str, Any]:
        def names(text: str) -> tuple[str, ...]:
            listed = split_list(text)
            if not listed:
                raise argparse.ArgumentTypeError(
                    "expected comma-separated pass names, e.g. dce,tensor-splitter")
            return listed

        return {"type": names, "metavar": self.metavar}


class _Path(Kind):
    flag_syntax = "=DIR"
    annotation = "str | os.PathLike[str] | None"
    metavar = "DIR"


SIZE: Kind = _Size()
SWITCH: Kind = _Switch()
NAMES: Kind = _Names(may_be_empty=False)
OPTIONAL_NAMES: Kind = _Names(may_be_empty=True)
PATH: Kind = _Path()


def as_names(names: Iterable[str] | str, what: str) -> tuple[str, ...]:
    """Pass names from a list or a comma-separated string.

    >>> as_names("dce, remove-copies", "passes")
    ('dce', 'remove-copies')
    """
    if isinstance(names, str):
        return split_list(names)
    names = tuple(names)
    if not all(isinstance(n, str) for n in names):
        raise ValueError(f"{what} must be pass names (strings), got {names!r}")
    return names


@dataclasses.dataclass(frozen=True)
class Setting:
    """The declaration of one setting (the field's name is its name everywhere in Python).

    Attributes:
      kind: the sort of value (:data:`SIZE`, :data:`SWITCH`, ...).
      help: what it does, one sentence or two; the flags' help, the command
        line and the entry points' docstrings print it.
      flags: exla's flags that set it, without dashes; exla removes them from
        ``XLA_FLAGS`` (XLA would abort on them).
      xla_flag: XLA's own flag that exla also reads; it stays in ``XLA_FLAGS``.
      env: the environment variable that sets it (wins over the flags).
      core: the C++ core's ``exla::Options`` has it, under the same name
        (cc/bindings/python_module.cc binds the fields).
      keyword: the entry points (``exla.function``, ``exla.jit``,
        ``exla.optimize_hlo``, ``exla.explain``, the command line) take it.
    """

    kind: Kind
    help: str
    flags: tuple[str, ...] = ()
    xla_flag: str | None = None
    env: str | None = None
    core: bool = False
    keyword: bool = True
    name: str = ""  # filled in from the field by exla.options

    def all_flags(self) -> tuple[str, ...]:
        return self.flags + ((self.xla_flag,) if self.xla_flag else ())

    def sources(self) -> str:
        """Where else it can be set, e.g. ``--exla_strict, EXLA_STRICT``."""
        return ", ".join([f"--{f}" for f in self.all_flags()] + ([self.env] if self.env else []))


def setting(default: Any, kind: Kind, help: str, **declaration: Any) -> Any:
    """A field of :class:`exla.options.Options` that declares a setting."""
    return dataclasses.field(
        default=default, metadata={METADATA_KEY: Setting(kind, help, **declaration)})
