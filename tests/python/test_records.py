"""The C++ core's result records as Python classes (cc/bindings/record_class.h).

Each record is declared once, as a C++ struct, and bound with its fields
named once; these tests check what the binding gives every record (read-only
fields, construction, equality, hashing, copies, pickles, plain data) on the
records the public modules hand out.
"""

from __future__ import annotations

import copy
import json
import pickle

import pytest

import exla
from exla import _core, predict
from exla._splitter_result import of_records
from exla.options import Options

from .conftest import KMV_TEMPLATE

pytestmark = pytest.mark.usefixtures("extension")

KMV = KMV_TEMPLATE.format(n=1000)  # a 4 MB kernel matrix, split under 1 MB


def _loop():
    optimized = _core.optimize(KMV, Options(threshold="1MB", passes=["tensor-splitter"]))
    (loop,) = of_records(optimized.passes).loops
    return loop


def test_fields_are_read_only():
    loop = _loop()
    with pytest.raises(AttributeError):
        loop.chunk = 1
    assert loop.chunk * loop.chunks + loop.remainder == loop.extent == 1000


def test_lists_read_as_tuples_and_nested_records_as_records():
    timeline = predict.predict_timeline(KMV)
    assert isinstance(timeline.live_bytes, tuple) and isinstance(timeline.peak_buffers, tuple)
    assert isinstance(timeline.prediction, predict.MemoryPrediction)
    assert timeline.peak_bytes == timeline.prediction.peak_bytes == exla.predict_peak(KMV)
    assert _loop().extents == (1000, 1000)


def test_construction_by_position_or_keyword_keeps_the_cpp_defaults():
    loop = predict.LoopTime("main", "w", flops=10)
    assert (loop.computation, loop.instruction, loop.flops) == ("main", "w", 10)
    assert loop.trips == 1 and not loop.trips_known  # LoopCost's defaults in C++
    with pytest.raises(TypeError, match="unexpected field 'trip'"):
        predict.LoopTime(trip=2)
    with pytest.raises(TypeError, match="too many positional"):
        predict.LoopTime(*range(8))


def test_equality_hash_copies_and_pickles_follow_the_fields():
    loop = _loop()
    same = type(loop)(*(getattr(loop, name) for name in loop._fields))
    assert same == loop and hash(same) == hash(loop) and same is not loop
    other = loop._replace(chunk=loop.chunk + 1)
    assert other != loop and other.chunk == loop.chunk + 1 and other.where == loop.where
    assert pickle.loads(pickle.dumps(loop)) == loop
    assert copy.deepcopy(loop) == loop
    assert loop != tuple(getattr(loop, name) for name in loop._fields)


def test_asdict_is_plain_data_with_the_derived_values():
    cost = predict.predict_cost("HloModule m\n\nENTRY e {\n  x = f32[256]{0} parameter(0)\n"
                                "  ROOT y = f32[256]{0} exponential(x)\n}")
    assert json.loads(json.dumps(cost._asdict()))["flops"] == cost.flops
    data = _loop()._asdict()
    assert data["where"] == "kmv_1000/k" and data["extents"] == [1000, 1000]
    assert data["description"].startswith("kmv_1000/k f32[1000,1000]")


def test_report_dict_holds_the_loops_as_data():
    _, report = exla.optimize_hlo(KMV, threshold="1MB")
    data = json.loads(json.dumps(report.to_dict()))
    assert [loop["where"] for loop in data["split_loops"]] == ["kmv_1000/k"]

