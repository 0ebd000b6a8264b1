"""The held-out set's writer: distinct texts stored once, later draws appended."""

from __future__ import annotations

import json

from experiments.corpus import heldout
from experiments.fuzzing import heldout_corpus


def _module(program: str, text: str) -> tuple[dict, str]:
    return {"program": program, "variant": "original"}, text


def test_write_stores_each_distinct_text_once(tmp_path):
    index = heldout_corpus.write([_module("a", "A"), _module("b", "A"), _module("c", "C")], tmp_path)
    assert [e["program"] for e in index] == ["a", "c"]
    assert (tmp_path / "c.original.hlo").read_text() == "C"
    assert json.loads((tmp_path / heldout.INDEX.name).read_text()) == index


def test_a_new_draw_is_appended_and_leaves_the_stored_modules(tmp_path):
    heldout_corpus.write([_module("fuzz_3", "A"), _module("fuzz_4", "B")], tmp_path)
    added = heldout_corpus.append_draw([_module("fuzz_5", "B"), _module("fuzz_6", "D")], tmp_path)
    assert [e["program"] for e in added] == ["fuzz_6"]  # B is stored already
    index = json.loads((tmp_path / heldout.INDEX.name).read_text())
    assert [(e["program"], heldout.draw_of(e)) for e in index] == [
        ("fuzz_3", 1), ("fuzz_4", 1), ("fuzz_6", 2)]
    assert (tmp_path / "fuzz_3.original.hlo").read_text() == "A"
    assert heldout_corpus._next_seed(tmp_path) == 7
    again = heldout_corpus.append_draw([_module("fuzz_7", "E")], tmp_path)
    assert heldout.draw_of(again[0]) == 3
