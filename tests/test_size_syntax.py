"""exla and the patched XLA accept exactly the same sizes.

`exla.options.parse_size` (Python) and `xla::ParseExlaSize` (the C++ the XLA
patch adds, xla_patches/src/xla/service/exla/exla_size.cc) are two
implementations of one flag syntax, because XLA's flag parsing cannot depend
on exla. This compiles the C++ one and feeds both the same inputs.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess

import pytest

from exla.options import parse_size

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCE = ROOT / "xla_patches" / "src"

DRIVER = r"""
#include <iostream>
#include <string>
#include "xla/service/exla/exla_size.h"
int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    auto size = xla::ParseExlaSize(line);
    std::cout << (size ? std::to_string(*size) : std::string("invalid")) << "\n";
  }
}
"""

INPUTS = [
    "0", "123", "007", "100KB", "100kb", "100MB", "1GB", "2gb", "100KiB", "1MiB", "1GiB",
    "3KIB", "2Mb", "9223372036854775807", "9223372036854775808", "8589934591GiB",
    "8589934592GiB", "", "GB", "-1", "+1", "1.5GB", "1 GB", "7B", "1TB", "1TiB", "1e9",
    "10XB", "abc", "1GB ", " 1GB",
    # Only ASCII digits and units: Python's str.isdigit and \\d also take these.
    "１６KB", "１６", "16ＫＢ", "١٢٣", "1\u00a0GB",
]


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_python_and_patched_xla_accept_the_same_sizes(tmp_path):
    driver = tmp_path / "driver.cc"
    driver.write_text(DRIVER)
    binary = tmp_path / "driver"
    subprocess.run(
        ["g++", "-std=c++17", "-I", str(SOURCE), str(driver),
         str(SOURCE / "xla" / "service" / "exla" / "exla_size.cc"), "-o", str(binary)],
        check=True)
    # XLA splits XLA_FLAGS on whitespace, so a flag value never has any;
    # Python's parse_size additionally strips it for API callers.
    flag_values = [v for v in INPUTS if v == v.strip()]
    output = subprocess.run([str(binary)], input="\n".join(flag_values) + "\n",
                            capture_output=True, text=True, check=True).stdout.split("\n")
    for value, cpp in zip(flag_values, output):
        try:
            python = str(parse_size(value))
        except ValueError:
            python = "invalid"
        assert python == cpp, f"{value!r}: python {python}, patched XLA {cpp}"


@pytest.mark.parametrize("value, accepted", [
    (2**63 - 1, True), (2**63, False), (2**70, False), (float(2**70), False), (-1, False),
])
def test_integer_sizes_have_the_flag_parsers_int64_bound(value, accepted):
    # API callers pass numbers; the flag parsers only see text, whose bound is
    # INT64_MAX (the INPUTS above): a number must meet the same bound, with a
    # precise ValueError, not a TypeError from the binding.
    if accepted:
        assert parse_size(value) == value
    else:
        with pytest.raises(ValueError, match="invalid size"):
            parse_size(value)
