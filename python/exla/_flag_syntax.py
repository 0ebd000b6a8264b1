"""XLA's flag syntax: how ``XLA_FLAGS``-style text splits into flags.

XLA's rules (``xla/parse_flags_from_env.cc``), which exla follows so that a
string means the same to both:

* a flag is ``--name`` or ``--name=value``; a value may be quoted,
  ``--name="a b"`` (backslash escapes inside double quotes) or ``--name='a b'``;
* ``--name value`` is *not* accepted: XLA treats ``--name`` as a flag without a
  value and silently stops reading at ``value``, ignoring every flag after it;
* a value that does not start with ``-`` names a file holding the flags.

What the flags mean is :mod:`exla.options`' business.
"""

from __future__ import annotations

import dataclasses

__all__ = ["Token", "tokenize", "stray_error", "split_list", "read_flag_file"]


@dataclasses.dataclass(frozen=True)
class Token:
    name: str  # without the leading dashes
    value: str | None  # None for a bare "--name"
    raw: str  # the text of the token, as written
    start: int
    end: int


def tokenize(flags: str, source: str) -> tuple[list[Token], int | None]:
    """Splits ``flags`` the way XLA does.

    Returns the flags and the offset of the first token that is not a flag
    (XLA stops reading there), or None when every token is a flag.
    """
    tokens: list[Token] = []
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
        tokens.append(Token(name, value, flags[pos:end], pos, end))
        pos = end + len(flags[end:]) - len(flags[end:].lstrip())
    return tokens, None


def stray_error(source: str, flags: str, stray: int, previous: Token | None) -> ValueError:
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


def split_list(value: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in value.split(",") if p.strip())


def read_flag_file(flags: str, source: str) -> str:
    # XLA reads the flags from a file when the variable does not start with '-'.
    path = flags.strip()
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        raise ValueError(
            f"{source}: {path!r} does not start with '--', so XLA reads it as the name of a "
            f"file of flags, but it cannot be read: {e.strerror}") from None
