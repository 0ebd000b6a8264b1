"""exla's settings: each declared once, and resolved in one place.

Every setting is one field of :class:`Options`, declared with
:func:`exla._setting.setting`: its name (the same for the Python keyword, the
``Options`` field, the command line's ``--split-size`` spelling and the C++
core's binding), its flags, environment variable, kind of value, default and
help. The flag parser, the flags' help, the command line, the entry points'
keywords, signatures and docstrings (:mod:`exla._entry_settings`) and the C++
``exla::Options`` (:func:`exla._core.optimize`) are derived from the fields, so
adding a setting means adding a field here and using it.

exla is configured like XLA: with ``--name=value`` flags (XLA's syntax, see
:mod:`exla._flag_syntax`). They can come from

* ``XLA_FLAGS``, next to XLA's own flags, because that is where the paper's
  patched XLA read them (``--xla_tensor_size_threshold=1GB``), and
* ``EXLA_FLAGS``, which holds exla's flags only.

TensorFlow aborts the whole process (``LOG(QFATAL)``) when ``XLA_FLAGS`` holds a
flag XLA does not know, so exla's flags must be removed from ``XLA_FLAGS``
before TensorFlow compiles anything: :func:`split_xla_flags` does that for a
string and :func:`consume_env_flags` for the environment.

Resolution (:func:`resolve_options`): a keyword argument wins over the
setting's environment variable, which wins over ``EXLA_FLAGS``, which wins
over ``XLA_FLAGS``; a keyword that is None leaves the setting to those
sources. Values have one syntax everywhere: booleans :func:`parse_bool`, sizes
:func:`parse_size`.

The settings (generated from the declarations):

"""

from __future__ import annotations

import dataclasses
import logging
import os
import textwrap
from typing import Any, Iterable, Mapping, MutableMapping

from exla import _core, _flag_syntax
from exla._setting import METADATA_KEY, NAMES, OPTIONAL_NAMES, PATH, SIZE, SWITCH, Setting, setting
from exla._setting import as_names as _as_names

__all__ = [
    "Options",
    "parse_size",
    "parse_bool",
    "keyword_bool",
    "env_bool",
    "exla_disabled",
    "resolve_options",
    "resolve_keywords",
    "resolve_passes",
    "explicit_settings",
    "declared_settings",
    "format_size",
    "split_xla_flags",
    "consume_env_flags",
    "strip_xla_flags",
    "EXLA_FLAG_NAMES",
]

_log = logging.getLogger("exla")

# The value syntax (sizes, booleans) lives in exla._values; these names stay
# part of this module's interface.
from exla._values import (  # noqa: E402
    env_bool as env_bool,
    exla_disabled as exla_disabled,
    format_size as format_size,
    keyword_bool as keyword_bool,
    parse_bool as parse_bool,
    parse_size as parse_size,
)


@dataclasses.dataclass(frozen=True)
class Options:
    """exla's settings; each field is the declaration of one setting.

    >>> options = Options(threshold="1GB", passes="dce,remove-copies")
    >>> options.threshold, options.passes, options == Options(threshold=10**9, passes=["dce", "remove-copies"])
    (1000000000, ('dce', 'remove-copies'), True)

    Attributes:
    """

    threshold: int | None = setting(
        None, SIZE, "no tensor larger than this many bytes may remain outside a loop, e.g. "
        "'100MB', '1GiB' or a number of bytes; None: no limit, so nothing is split.",
        flags=("xla_tensor_size_threshold",), core=True)
    split_size: int | None = setting(
        None, SIZE, "the size in bytes of the slices the splitter's loops work on; None: "
        "chosen by the splitter.", flags=("xla_tensor_split_size",), core=True)
    memory_limit: int | None = setting(
        None, SIZE, "XLA's planned peak memory of the whole rewritten program (arguments, "
        "outputs and temporaries, from its buffer assignment) may not exceed this many bytes; "
        "exla searches for a threshold and split size itself (a threshold given too still "
        "bounds every tensor, a split size given too is kept); None: no program-level limit.",
        flags=("xla_memory_limit",))
    passes: tuple[str, ...] | None = setting(
        None, NAMES, "the passes to run, in order; None: the default pipeline.",
        flags=("exla_passes",), core=True)
    disabled_passes: tuple[str, ...] = setting(
        (), OPTIONAL_NAMES, "passes not to run (names that are not exla's are XLA's and "
        "ignored by exla).", xla_flag="xla_disable_hlo_passes")
    dump_dir: str | None = setting(
        None, PATH, "directory to write the module to before the first pass and after every "
        "pass.", flags=("exla_dump_to",), env="EXLA_DUMP_TO", core=True)
    strict: bool = setting(
        False, SWITCH, "raise exla.ExlaError instead of warning and running the original "
        "program when exla fails, or cannot meet the threshold or the memory limit; meant "
        "for tests.", flags=("exla_strict",), env="EXLA_STRICT")
    fast_math: bool = setting(
        False, SWITCH, "allow rewrites that change results beyond the program's own rounding: "
        "the squared-distance expansion |x|^2 + |y|^2 - 2 x.y (a matrix multiply instead of a "
        "loop over differences), whose relative error is about eps |x|^2 / |x - y|^2, so large "
        "for close points.", flags=("exla_fast_math",), core=True)

    def __post_init__(self) -> None:
        # Normalise user-supplied values so that equal settings compare equal.
        for s in _SETTINGS:
            value = getattr(self, s.name)
            if value is not None and s.kind is not SWITCH:
                object.__setattr__(self, s.name, s.kind.from_keyword(value, s.name))

    @classmethod
    def from_flags(cls, flags: str, *, base: "Options | None" = None, source: str = "flags") -> "Options":
        """Reads exla's flags from an ``XLA_FLAGS``-style string.

        XLA's own flags in ``flags`` are ignored, so ``XLA_FLAGS`` can be passed
        as it is. Values set in ``flags`` replace those of ``base``.

        Raises:
          ValueError: a malformed flag, an unknown ``--xla_tensor_*`` or
            ``--exla_*`` flag (a typo of one of exla's), or a bad value.

        >>> Options.from_flags("--xla_tensor_size_threshold=1GB --xla_cpu_enable_fast_math=false") \\
        ...     == Options(threshold="1GB")
        True
        """
        options, _ = _parse(flags, base=base, source=source)
        return options

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "Options":
        """Reads ``XLA_FLAGS`` then ``EXLA_FLAGS`` (which wins) without changing them.

        For the process environment this includes exla's flags that
        :func:`strip_xla_flags` already removed from ``XLA_FLAGS``.
        """
        is_process_env = environ is None or environ is os.environ
        environ = os.environ if environ is None else environ
        base = _removed_from_xla_flags if is_process_env else None
        options, _ = split_xla_flags(environ.get("XLA_FLAGS", ""), base=base)
        return _parse_exla_flags(environ.get("EXLA_FLAGS", ""), options)

    def keywords(self) -> dict[str, Any]:
        """The settings as the entry points' keywords: ``optimize_hlo(text, **options.keywords())``."""
        return {s.name: getattr(self, s.name) for s in _SETTINGS if s.keyword}

    def replace(self, **changes: Any) -> "Options":
        """A copy with ``changes`` applied, e.g. ``options.replace(threshold="1GB")``."""
        return dataclasses.replace(self, **changes)


# ---------------------------------------------------------------------------
# Derived from the declarations
# ---------------------------------------------------------------------------

def _declarations() -> tuple[Setting, ...]:
    return tuple(dataclasses.replace(f.metadata[METADATA_KEY], name=f.name)
                 for f in dataclasses.fields(Options))


_SETTINGS = _declarations()
_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Options)}


def declared_settings() -> tuple[Setting, ...]:
    """Every setting's declaration, in the order of :class:`Options`' fields."""
    return _SETTINGS


# exla's own flags (removed from XLA_FLAGS) and XLA's flags exla also reads
# (left there), by name without the leading dashes.
_OWN_FLAGS = {flag: s for s in _SETTINGS for flag in s.flags}
_XLA_FLAGS_READ = {s.xla_flag: s for s in _SETTINGS if s.xla_flag}

EXLA_FLAG_NAMES: tuple[str, ...] = tuple(f"--{n}" for n in (*_OWN_FLAGS, *_XLA_FLAGS_READ))
"""Every flag exla reads, e.g. ``--xla_tensor_size_threshold``."""

# Prefixes that only exla uses: an unknown flag with one of them is a typo of
# one of exla's flags, and letting it through would make TensorFlow abort.
_EXLA_PREFIXES = ("xla_tensor_", "exla_")

_FLAG_HELP = "exla's flags: " + ", ".join(
    f"--{flag}{s.kind.flag_syntax}" for flag, s in (*_OWN_FLAGS.items(), *_XLA_FLAGS_READ.items()))


def _settings_table() -> str:
    rows = [(s.name, s.sources() or "(keyword only)", "exla::Options" if s.core else "Python")
            for s in _SETTINGS]
    widths = [max(len(r[i]) for r in rows + [("Python", "flags, variable", "read by")])
              for i in range(3)]
    rule = "  ".join("=" * w for w in widths)
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([rule, line(("Python", "flags, variable", "read by")), rule,
                      *map(line, rows), rule, ""])


def _attributes_section(indent: str) -> str:
    return "".join(textwrap.fill(f"{s.name}: {s.help}" + (f" ({s.sources()})" if s.sources() else ""),
                                 width=92, initial_indent=indent, subsequent_indent=indent + "  ")
                   + "\n" for s in _SETTINGS)


__doc__ += _settings_table()
Options.__doc__ = (Options.__doc__ or "").rstrip(" ") + _attributes_section("      ")


# ---------------------------------------------------------------------------
# Flags
# ---------------------------------------------------------------------------

def _is_exla_name(name: str) -> bool:
    return name in _OWN_FLAGS or name.startswith(_EXLA_PREFIXES)


def _apply(fields: dict, token: _flag_syntax.Token, source: str) -> None:
    """Stores the value of one of exla's flags into ``fields``."""
    flag = f"--{token.name}"
    declaration = _OWN_FLAGS.get(token.name) or _XLA_FLAGS_READ.get(token.name)
    if declaration is None:
        raise ValueError(f"{source}: unknown flag {flag!r}; {_FLAG_HELP}")
    try:
        fields[declaration.name] = declaration.kind.from_flag(token.value, flag)
    except ValueError as e:
        raise ValueError(f"{source}: {e}") from None


def _parse(flags: str, *, base: Options | None, source: str, keep_xla: bool = True) -> tuple[Options, str]:
    """Parses exla's flags; returns the options and ``flags`` without them.

    With ``keep_xla=False`` (EXLA_FLAGS) any flag that is not exla's is an error.
    """
    text = flags
    if flags.strip() and not flags.lstrip().startswith("-"):
        text = _flag_syntax.read_flag_file(flags, source)
    tokens, stray = _flag_syntax.tokenize(text, source)
    if stray is not None:
        previous = next((t for t in reversed(tokens) if t.end <= stray), None)
        stray_error = _flag_syntax.stray_error(source, text, stray, previous)
        if (previous is not None and _is_exla_name(previous.name)) or not keep_xla:
            raise stray_error
        # XLA accepts this (it stops reading at the stray word), so exla must
        # not break the program; the user almost certainly meant something else.
        _log.warning("%s. XLA stops reading %s there and ignores the flags after it; so does "
                     "exla", stray_error.args[0], source)
    fields: dict = {}
    kept: list[str] = []
    for token in tokens:
        if token.name in _XLA_FLAGS_READ or _is_exla_name(token.name):
            _apply(fields, token, source)
            if token.name in _XLA_FLAGS_READ and keep_xla:  # XLA needs it too
                kept.append(token.raw)
        elif keep_xla:
            kept.append(token.raw)
        else:
            raise ValueError(
                f"{source}: {('--' + token.name)!r} is not one of exla's flags (XLA's own flags "
                f"belong in XLA_FLAGS); {_FLAG_HELP}")
    if stray is not None:
        kept.append(text[stray:].strip())
    options = dataclasses.replace(base or Options(), **fields)
    if not fields:
        remaining = flags  # untouched, so a flag-file reference stays a file reference
    else:
        remaining = " ".join(kept)
    return options, remaining


def _parse_exla_flags(flags: str, base: Options | None = None) -> Options:
    options, _ = _parse(flags, base=base, source="EXLA_FLAGS", keep_xla=False)
    return options


def split_xla_flags(xla_flags: str, *, base: Options | None = None) -> tuple[Options, str]:
    """Separates exla's flags from XLA's.

    Args:
      xla_flags: the value of ``XLA_FLAGS``.
      base: options that the flags found update.

    Returns:
      ``(options, remaining)``: exla's options and the flags to give XLA.
      ``--xla_disable_hlo_passes`` is read and also kept, since it is XLA's too.
      When ``xla_flags`` holds no exla flag, ``remaining`` is ``xla_flags``
      unchanged.

    Raises:
      ValueError: a malformed exla flag, ``--flag value`` for one of exla's
        flags, or an unknown ``--xla_tensor_*``/``--exla_*`` flag (a typo of
        exla's, which would otherwise make TensorFlow abort the process).

    >>> options, remaining = split_xla_flags("--xla_dump_to=/tmp/d --xla_tensor_size_threshold=100MiB")
    >>> options == Options(threshold="100MiB"), remaining
    (True, '--xla_dump_to=/tmp/d')
    """
    return _parse(xla_flags, base=base, source="XLA_FLAGS")


# exla's flags already removed from os.environ["XLA_FLAGS"] by this process,
# so that reading the options later still sees them.
_removed_from_xla_flags = Options()


def strip_xla_flags(environ: MutableMapping[str, str] | None = None) -> Options:
    """Removes exla's flags from ``XLA_FLAGS`` and returns them as options.

    Must run before XLA (TensorFlow's or jaxlib's) first reads ``XLA_FLAGS``:
    both abort the process on a flag they do not know. Options removed from
    ``os.environ`` earlier in the process are remembered and included.

    Raises:
      ValueError: as :func:`split_xla_flags`.
    """
    global _removed_from_xla_flags
    is_process_env = environ is None or environ is os.environ
    environ = os.environ if environ is None else environ
    base = _removed_from_xla_flags if is_process_env else None
    flags = environ.get("XLA_FLAGS", "")
    options, remaining = split_xla_flags(flags, base=base)
    if remaining != flags:
        _log.debug("removed exla's flags from XLA_FLAGS: %r -> %r", flags, remaining)
        if remaining.strip():
            environ["XLA_FLAGS"] = remaining
        else:
            del environ["XLA_FLAGS"]
        if is_process_env:
            _removed_from_xla_flags = options
    return options


def consume_env_flags(environ: MutableMapping[str, str] | None = None) -> Options:
    """exla's options from the environment; removes exla's flags from ``XLA_FLAGS``.

    ``EXLA_FLAGS`` values win over ``XLA_FLAGS`` values.

    Raises:
      ValueError: a malformed flag or value in either variable.
    """
    options = strip_xla_flags(environ)
    environ = os.environ if environ is None else environ
    return _parse_exla_flags(environ.get("EXLA_FLAGS", ""), options)


def resolve_passes(passes: Iterable[str] | str | None, disabled: Iterable[str] = ()) -> tuple[str, ...] | None:
    """The pass list to run: ``passes`` (None: the default pipeline) less ``disabled``.

    Returns None for "the C++ core's default pipeline" when nothing is
    disabled, so that the core keeps its own handling of that pipeline (it
    skips the clean-ups until another pass changed the module). Names in
    ``disabled`` that are not exla's (``--xla_disable_hlo_passes`` also names
    XLA's passes) are ignored.

    >>> resolve_passes(None), resolve_passes("dce, remove-copies", ["dce"])
    (None, ('remove-copies',))
    """
    names = None if passes is None else _as_names(passes, "passes")
    disabled = set(_as_names(disabled, "disabled_passes"))
    if not disabled:
        return names
    if names is None:
        names = tuple(_core.default_pipeline())
    return tuple(p for p in names if p not in disabled)


# ---------------------------------------------------------------------------
# Resolution: the one place where every source of settings meets
# ---------------------------------------------------------------------------

def explicit_settings(keywords: Mapping[str, Any], *, where: str = "exla") -> dict[str, Any]:
    """The settings given as keyword arguments, checked and normalised; None ones left out.

    Raises:
      TypeError: a keyword that is not a setting (as Python's own message).
      ValueError: a bad value (a size, a boolean that is not True or False).

    >>> explicit_settings({"threshold": "1GB", "strict": None})
    {'threshold': 1000000000}
    """
    by_name = {s.name: s for s in _SETTINGS if s.keyword}
    for name in keywords:
        if name not in by_name:
            raise TypeError(f"{where}() got an unexpected keyword argument {name!r}")
    return {name: by_name[name].kind.from_keyword(value, name)
            for name, value in keywords.items() if value is not None}


def _from_variables(environ: Mapping[str, str]) -> dict[str, Any]:
    """The settings set by their own environment variables (``EXLA_STRICT``...)."""
    return {s.name: s.kind.from_env(environ[s.env], s.env) for s in _SETTINGS
            if s.env and environ.get(s.env, "").strip()}


def resolve_keywords(environ: Mapping[str, str] | None = None, **settings: Any) -> Options:
    """The settings of one call that reads no flags: keywords, then environment variables.

    This is :func:`exla.optimize_hlo`'s resolution: its caller hands it the
    settings of the module. A keyword that is None leaves the setting's
    environment variable (``EXLA_STRICT``, ``EXLA_DUMP_TO``), then its default.

    >>> resolve_keywords({"EXLA_STRICT": "1"}, threshold="1KB").strict
    True
    """
    environ = os.environ if environ is None else environ
    explicit = explicit_settings(settings, where="optimize_hlo")
    return Options(**{**_from_variables(environ), **explicit})


def resolve_options(*, environ: Mapping[str, str] | None = None, **settings: Any) -> Options:
    """exla's settings for one function: keywords, environment variables, ``EXLA_FLAGS``, ``XLA_FLAGS``.

    ``settings`` are the keywords of :class:`Options`; those that are None
    leave the setting to the other sources. The result has the concrete pass
    list (the default pipeline when none was given) with the disabled passes
    removed.

    Raises:
      TypeError: a keyword that is not a setting.
      ValueError: a malformed flag, size, pass list, boolean variable or keyword.

    >>> resolve_options(threshold="1GB", environ={"EXLA_STRICT": "no"}).threshold
    1000000000
    """
    environ = os.environ if environ is None else environ
    explicit = explicit_settings(settings, where="resolve_options")
    options = Options.from_env(environ).replace(**{**_from_variables(environ), **explicit})
    names = options.passes if options.passes is not None else tuple(_core.default_pipeline())
    return options.replace(passes=resolve_passes(names, options.disabled_passes))
