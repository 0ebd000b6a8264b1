"""Options and flags shared by every part of exla.

exla is configured like XLA: with ``--name=value`` flags. They can come from

* ``XLA_FLAGS``, next to XLA's own flags, because that is where the paper's
  patched XLA read them (``--xla_tensor_size_threshold=1GB``), and
* ``EXLA_FLAGS``, which holds exla's flags only.

TensorFlow aborts the whole process (``LOG(QFATAL)``) when ``XLA_FLAGS`` holds a
flag XLA does not know, so exla's flags must be removed from ``XLA_FLAGS``
before TensorFlow compiles anything: :func:`split_xla_flags` does that for a
string and :func:`consume_env_flags` for the environment.

XLA's syntax, which this module follows (``xla/parse_flags_from_env.cc``):

* a flag is ``--name`` or ``--name=value``; a value may be quoted,
  ``--name="a b"`` (backslash escapes inside double quotes) or ``--name='a b'``;
* ``--name value`` is *not* accepted: XLA treats ``--name`` as a flag without a
  value and silently stops reading at ``value``, ignoring every flag after it;
* a value that does not start with ``-`` names a file holding the flags.

This module is also the one place where exla's settings are resolved
(:func:`resolve_options`): keyword arguments win over ``EXLA_FLAGS``, which wins
over ``XLA_FLAGS``; the environment variables ``EXLA_STRICT``, ``EXLA_DUMP_TO``
and ``EXLA_DISABLE`` are read here too, with one boolean syntax
(:func:`parse_bool`) and one size syntax (:func:`parse_size`).

Names: a setting has one name in Python and in the binding (``threshold``,
``split_size``, ``memory_limit``, ``passes``, ``dump_dir``); the flags keep XLA's names, and the
C++ core's ``exla::Options`` spells the sizes out. The whole mapping:

==============  ===============================  ==============================
Python          flag                             C++ ``exla::Options``
==============  ===============================  ==============================
threshold       --xla_tensor_size_threshold      tensor_size_threshold
split_size      --xla_tensor_split_size          tensor_split_size
memory_limit    --xla_memory_limit               (Python only: a search over
                                                 the two sizes above)
passes          --exla_passes                    passes
dump_dir        --exla_dump_to, EXLA_DUMP_TO     dump_dir
strict          --exla_strict, EXLA_STRICT       (Python only)
fast_math       --exla_fast_math                 fast_math
==============  ===============================  ==============================
"""

from __future__ import annotations

import dataclasses
import logging
import os
from typing import Iterable, Mapping, MutableMapping

__all__ = [
    "Options",
    "parse_size",
    "parse_bool",
    "keyword_bool",
    "env_bool",
    "exla_disabled",
    "resolve_options",
    "resolve_passes",
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

# ---------------------------------------------------------------------------
# Flags
# ---------------------------------------------------------------------------

# exla's own flags (names without the leading dashes) and what they set.
_SIZE_FLAGS = {
    "xla_tensor_size_threshold": "threshold",
    "xla_tensor_split_size": "split_size",
    "xla_memory_limit": "memory_limit",
}
_EXLA_ONLY_FLAGS = {
    **_SIZE_FLAGS,
    "exla_passes": "passes",
    "exla_dump_to": "dump_dir",
    "exla_strict": "strict",
    "exla_fast_math": "fast_math",
}
# XLA's flag that exla also honours for its own pass names. It stays in
# XLA_FLAGS because XLA needs it too.
_SHARED_FLAG = "xla_disable_hlo_passes"

EXLA_FLAG_NAMES: tuple[str, ...] = tuple(f"--{n}" for n in (*_EXLA_ONLY_FLAGS, _SHARED_FLAG))
"""Every flag exla reads, e.g. ``--xla_tensor_size_threshold``."""

# Prefixes that only exla uses: an unknown flag with one of them is a typo of
# one of exla's flags, and letting it through would make TensorFlow abort.
_EXLA_PREFIXES = ("xla_tensor_", "exla_")

_FLAG_HELP = (
    "exla's flags: --xla_tensor_size_threshold=SIZE, --xla_tensor_split_size=SIZE, "
    "--xla_memory_limit=SIZE, "
    "--exla_passes=a,b, --exla_dump_to=DIR, --exla_strict[=true|false], --exla_fast_math[=true|false], "
    "--xla_disable_hlo_passes=a,b"
)

@dataclasses.dataclass(frozen=True)
class _Token:
    name: str  # without the leading dashes
    value: str | None  # None for a bare "--name"
    raw: str  # the text of the token, as written
    start: int
    end: int


def _tokenize(flags: str, source: str) -> tuple[list[_Token], int | None]:
    """Splits ``flags`` the way XLA does.

    Returns the flags and the offset of the first token that is not a flag
    (XLA stops reading there), or None when every token is a flag.
    """
    tokens: list[_Token] = []
    pos = len(flags) - len(flags.lstrip())
    while pos < len(flags):
        if flags[pos] != "-":
            return tokens, pos
        end = pos
        while end < len(flags) and (flags[end].isascii() and (flags[end].isalnum() or flags[end] in "-_")):
            end += 1
        name = flags[pos:end].lstrip("-")
        value: str | None = None
        if end < len(flags) and flags[end] == "=":
            if end + 1 < len(flags) and flags[end + 1] in "'\"":
                quote, end = flags[end + 1], end + 2
                chars = []
                while end < len(flags) and flags[end] != quote:
                    if quote == '"' and flags[end] == "\\" and end + 1 < len(flags):
                        end += 1
                    chars.append(flags[end])
                    end += 1
                if end >= len(flags):
                    raise ValueError(f"{source}: unterminated quote in {flags[pos:]!r}")
                end += 1
                value = "".join(chars)
                if end < len(flags) and not flags[end].isspace():
                    raise ValueError(f"{source}: unexpected text after quoted value in {flags[pos:]!r}")
            else:
                value_end = end + 1
                while value_end < len(flags) and not flags[value_end].isspace():
                    value_end += 1
                value, end = flags[end + 1:value_end], value_end
        elif end < len(flags) and not flags[end].isspace():
            # e.g. "--xla_tensor_size_threshold:1GB"; XLA would take the whole
            # run of non-space characters as an (unknown) flag.
            while end < len(flags) and not flags[end].isspace():
                end += 1
            raise ValueError(
                f"{source}: cannot read flag {flags[pos:end]!r}; flags have the form --name=value")
        tokens.append(_Token(name, value, flags[pos:end], pos, end))
        pos = end + len(flags[end:]) - len(flags[end:].lstrip())
    return tokens, None


def _is_exla_name(name: str) -> bool:
    return name in _EXLA_ONLY_FLAGS or name.startswith(_EXLA_PREFIXES)


def _stray_error(source: str, flags: str, stray: int, previous: _Token | None) -> ValueError:
    word = flags[stray:].split()[0]
    if previous is not None and previous.value is None:
        return ValueError(
            f"{source}: {previous.raw!r} is followed by {word!r}, but flags take their value "
            f"after '=' (XLA does not accept '--flag value'); write "
            f"'--{previous.name}={word}'")
    if previous is not None:
        return ValueError(
            f"{source}: {word!r} after {previous.raw!r} is not a flag; flags have the form "
            f"--name=value and a value with spaces must be quoted: --{previous.name}="
            f"'{previous.value} {word}'")
    return ValueError(f"{source}: {word!r} is not a flag; flags have the form --name=value")


def _split_list(value: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in value.split(",") if p.strip())


def _apply(fields: dict, token: _Token, source: str) -> None:
    """Stores the value of one of exla's flags into ``fields``."""
    flag = f"--{token.name}"
    if token.name == _SHARED_FLAG:
        fields["disabled_passes"] = _split_list(token.value or "")
        return
    if token.name not in _EXLA_ONLY_FLAGS:
        raise ValueError(f"{source}: unknown flag {flag!r}; {_FLAG_HELP}")
    field = _EXLA_ONLY_FLAGS[token.name]
    if field in ("strict", "fast_math"):
        # A bare --exla_strict (--exla_fast_math) turns it on.
        try:
            fields[field] = token.value is None or parse_bool(token.value, name=flag)
        except ValueError as e:
            raise ValueError(f"{source}: {e}") from None
        return
    if token.value is None or token.value == "":
        raise ValueError(f"{source}: {flag} needs a value: {flag}=VALUE")
    if field in ("threshold", "split_size", "memory_limit"):
        fields[field] = parse_size(token.value, flag=flag)
    elif field == "passes":
        fields[field] = _split_list(token.value)
    else:
        fields[field] = token.value


def _read_flag_file(flags: str, source: str) -> str:
    # XLA reads the flags from a file when the variable does not start with '-'.
    path = flags.strip()
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        raise ValueError(
            f"{source}: {path!r} does not start with '--', so XLA reads it as the name of a "
            f"file of flags, but it cannot be read: {e.strerror}") from None


@dataclasses.dataclass(frozen=True)
class Options:
    """exla's settings.

    Attributes:
      threshold: no tensor larger than this many bytes may remain outside a
        loop (``--xla_tensor_size_threshold``); None: no limit.
      split_size: the size in bytes of the slices inside a loop
        (``--xla_tensor_split_size``); None: chosen by the splitter.
      memory_limit: XLA's planned peak memory of the whole rewritten program
        (arguments, outputs and temporaries) may not exceed this many bytes
        (``--xla_memory_limit``); exla then searches for a threshold and
        split size itself (within ``threshold``/``split_size`` when they are
        given too); None: no program-level limit.
      passes: the passes to run, in order (``--exla_passes``); None: the
        default pipeline.
      disabled_passes: passes not to run (``--xla_disable_hlo_passes``; names
        that are not exla passes are XLA's and ignored by exla).
      dump_dir: directory to write the module to before and after every pass
        (``--exla_dump_to``).
      strict: raise instead of warning and falling back to the original
        program when exla fails (``--exla_strict``); meant for tests.
      fast_math: allow rewrites that change results beyond the program's own
        rounding (``--exla_fast_math``): the squared-distance expansion
        ``|x|^2 + |y|^2 - 2 x.y``, whose relative error is about
        ``eps |x|^2 / |x - y|^2``.

    >>> Options(threshold="1GB", passes="dce,remove-copies")
    Options(threshold=1000000000, split_size=None, memory_limit=None, passes=('dce', 'remove-copies'), disabled_passes=(), dump_dir=None, strict=False, fast_math=False)
    """

    threshold: int | None = None
    split_size: int | None = None
    memory_limit: int | None = None
    passes: tuple[str, ...] | None = None
    disabled_passes: tuple[str, ...] = ()
    dump_dir: str | None = None
    strict: bool = False
    fast_math: bool = False

    def __post_init__(self) -> None:
        # Normalise user-supplied values so that equal settings compare equal.
        for name in ("threshold", "split_size", "memory_limit"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, parse_size(value, flag=name))
        if self.passes is not None:
            object.__setattr__(self, "passes", _as_names(self.passes, "passes"))
        object.__setattr__(self, "disabled_passes", _as_names(self.disabled_passes, "disabled_passes"))
        if self.dump_dir is not None:
            object.__setattr__(self, "dump_dir", os.fspath(self.dump_dir))

    @classmethod
    def from_flags(cls, flags: str, *, base: "Options | None" = None, source: str = "flags") -> "Options":
        """Reads exla's flags from an ``XLA_FLAGS``-style string.

        XLA's own flags in ``flags`` are ignored, so ``XLA_FLAGS`` can be passed
        as it is. Values set in ``flags`` replace those of ``base``.

        Raises:
          ValueError: a malformed flag, an unknown ``--xla_tensor_*`` or
            ``--exla_*`` flag (a typo of one of exla's), or a bad value.

        >>> Options.from_flags("--xla_tensor_size_threshold=1GB --xla_cpu_enable_fast_math=false")
        Options(threshold=1000000000, split_size=None, memory_limit=None, passes=None, disabled_passes=(), dump_dir=None, strict=False, fast_math=False)
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

    def replace(self, **changes) -> "Options":
        """A copy with ``changes`` applied, e.g. ``options.replace(threshold="1GB")``."""
        return dataclasses.replace(self, **changes)


def _as_names(names: Iterable[str] | str, what: str) -> tuple[str, ...]:
    if isinstance(names, str):
        return _split_list(names)
    names = tuple(names)
    if not all(isinstance(n, str) for n in names):
        raise ValueError(f"{what} must be pass names (strings), got {names!r}")
    return names


def _parse(flags: str, *, base: Options | None, source: str, keep_xla: bool = True) -> tuple[Options, str]:
    """Parses exla's flags; returns the options and ``flags`` without them.

    With ``keep_xla=False`` (EXLA_FLAGS) any flag that is not exla's is an error.
    """
    text = flags
    if flags.strip() and not flags.lstrip().startswith("-"):
        text = _read_flag_file(flags, source)
    tokens, stray = _tokenize(text, source)
    if stray is not None:
        previous = next((t for t in reversed(tokens) if t.end <= stray), None)
        stray_error = _stray_error(source, text, stray, previous)
        if (previous is not None and _is_exla_name(previous.name)) or not keep_xla:
            raise stray_error
        # XLA accepts this (it stops reading at the stray word), so exla must
        # not break the program; the user almost certainly meant something else.
        _log.warning("%s. XLA stops reading %s there and ignores the flags after it; so does "
                     "exla", stray_error.args[0], source)
    fields: dict = {}
    kept: list[str] = []
    for token in tokens:
        if token.name == _SHARED_FLAG or _is_exla_name(token.name):
            _apply(fields, token, source)
            if token.name == _SHARED_FLAG and keep_xla:
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

    >>> split_xla_flags("--xla_dump_to=/tmp/d --xla_tensor_size_threshold=100MiB")
    (Options(threshold=104857600, split_size=None, memory_limit=None, passes=None, disabled_passes=(), dump_dir=None, strict=False, fast_math=False), '--xla_dump_to=/tmp/d')
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


# ---------------------------------------------------------------------------
# Resolution: the one place where every source of settings meets
# ---------------------------------------------------------------------------

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
        from exla import _core

        names = tuple(_core.default_pipeline())
    return tuple(p for p in names if p not in disabled)


def resolve_options(*, threshold: int | str | None = None, split_size: int | str | None = None,
                    memory_limit: int | str | None = None, passes: Iterable[str] | str | None = None, strict: bool = False,
                    dump_dir: str | None = None, fast_math: bool = False,
                    environ: Mapping[str, str] | None = None) -> Options:
    """exla's settings for one function: keywords, then ``EXLA_FLAGS``, ``XLA_FLAGS``, the environment.

    Keywords that are None leave the flags' value. ``strict`` is on when the
    keyword, ``--exla_strict`` or ``EXLA_STRICT`` says so, ``fast_math`` when
    the keyword or ``--exla_fast_math`` does; ``EXLA_DUMP_TO``
    wins over ``--exla_dump_to``. The result has the concrete pass list (the
    default pipeline when none was given) with the disabled passes removed.

    Raises:
      ValueError: a malformed flag, size, pass list, boolean variable or keyword.

    >>> resolve_options(threshold="1GB", environ={"EXLA_STRICT": "no"}).threshold
    1000000000
    """
    from exla import _core

    environ = os.environ if environ is None else environ
    options = Options.from_env(environ)
    keywords = {"threshold": threshold, "split_size": split_size, "memory_limit": memory_limit,
                "passes": passes,
                "dump_dir": dump_dir}
    options = options.replace(**{k: v for k, v in keywords.items() if v is not None})
    names = options.passes if options.passes is not None else tuple(_core.default_pipeline())
    names = resolve_passes(names, options.disabled_passes)
    dump = environ.get("EXLA_DUMP_TO") or options.dump_dir
    strict = keyword_bool(strict, name="strict") or options.strict or env_bool("EXLA_STRICT", environ)
    return options.replace(passes=names, dump_dir=dump, strict=strict,
                           fast_math=keyword_bool(fast_math, name="fast_math") or options.fast_math)
