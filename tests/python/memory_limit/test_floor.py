"""The program's floor (python/exla/memory_limit/floor.py): the record, its text, and
how a report and the over-limit warning print it."""

from __future__ import annotations

from types import SimpleNamespace

from exla.memory_limit.floor import Floor, Unsplittable, of_stats, unsplittable_of
from exla.memory_limit.limit_plan import LimitPlan
from exla.memory_limit.messages import over_limit_message

MB = 10**6

SORT = Unsplittable("main/sorted", "sort", "f32[1000,1000]", 4 * MB, "cannot slice a sort")
EXP = Unsplittable("main/e", "exponential", "f32[500,1000]", 2 * MB, "no consumer")


def test_floor_counts_arguments_outputs_and_the_largest_unsplittable():
    floor = Floor(3 * MB, 1 * MB, (SORT, EXP))
    # The two need not be live at once: only the larger is certain.
    assert floor.unsplittable_bytes == 4 * MB
    assert floor.total_bytes == 8 * MB
    assert Floor(3 * MB, 1 * MB).total_bytes == 4 * MB


def test_floor_text_names_each_unsplittable_with_its_bytes():
    floor = Floor(3 * MB, 1 * MB, (SORT, EXP))
    assert floor.headline() == ("floor 8 MB (arguments 3 MB + outputs 1 MB + unsplittable "
                                "4 MB: main/sorted 4 MB, main/e 2 MB)")
    assert floor.headline(shown=1).endswith("main/sorted 4 MB and 1 more)")
    assert floor.against(10_400_000) == "plan peak 10.4 MB = 1.30x floor"
    assert str(SORT) == "main/sorted (sort) f32[1000,1000] 4 MB: cannot slice a sort"


def test_floor_of_xla_figures_leaves_out_aliased_outputs_and_sorts_largest_first():
    stats = SimpleNamespace(argument_bytes=3 * MB, output_bytes=2 * MB, alias_bytes=MB)
    again = Unsplittable("main/e", "exponential", "f32[500,1000]", 2 * MB, "another plan's")
    floor = of_stats(stats, [EXP, SORT, again])
    assert (floor.argument_bytes, floor.output_bytes) == (3 * MB, MB)
    assert floor.unsplittable == (SORT, EXP)  # named twice, counted once: the first


def _size(where: str, opcode: str, nbytes: int, output: bool = False) -> SimpleNamespace:
    computation, instruction = where.split("/")
    return SimpleNamespace(computation=computation, instruction=instruction, opcode=opcode,
                           bytes=nbytes, output=output)


def _refusal(where: str, reason: str) -> SimpleNamespace:
    return SimpleNamespace(where=where, shape="f32[10]", reason=reason)


def test_refusals_of_outputs_and_of_removed_instructions_are_not_temporaries():
    sizes = [_size("main/e", "exponential", 40), _size("main/s", "sort", 40, output=True)]
    refusals = [_refusal("main/e", "r1"), _refusal("main/s", "r2"), _refusal("main/gone", "r3")]
    assert unsplittable_of(refusals, sizes) == [
        Unsplittable("main/e", "exponential", "f32[10]", 40, "r1")]


def test_report_gives_the_floor_beside_the_plans_peak():
    plan = LimitPlan(limit=12 * MB, peak_bytes=10_400_000, fits=True,
                     floor=Floor(3 * MB, 1 * MB, (SORT,)))
    lines = plan.summary()
    assert ("  floor 8 MB (arguments 3 MB + outputs 1 MB + unsplittable 4 MB: "
            "main/sorted 4 MB), plan peak 10.4 MB = 1.30x floor") in lines
    assert f"    unsplittable: {SORT}" in lines
    assert not any("below the floor" in line for line in lines)


def test_a_plan_that_fits_is_never_told_no_plan_can_meet_the_limit():
    # The floor comes from the splitter's refusals; XLA's figure for a plan
    # that met the limit outranks it, so the report must not contradict itself.
    plan = LimitPlan(limit=6 * MB, peak_bytes=5 * MB, fits=True,
                     floor=Floor(3 * MB, 1 * MB, (SORT,)))
    assert not any("no plan can meet it" in line for line in plan.summary())


def test_limit_below_the_floor_is_said_by_name():
    plan = LimitPlan(limit=6 * MB, peak_bytes=9 * MB, floor_bytes=4 * MB,
                     floor=Floor(3 * MB, 1 * MB, (SORT,)))
    assert "  the limit is below the floor: no plan can meet it" in plan.summary()
    message = over_limit_message(plan)
    assert ("The limit is below the program's floor 8 MB (arguments 3 MB + outputs 1 MB "
            "+ unsplittable 4 MB: main/sorted 4 MB) (8000000 bytes): no plan can meet it."
            ) in message
    assert message.endswith(f"\n  unsplittable: {SORT}")
    above = LimitPlan(limit=8 * MB, peak_bytes=9 * MB, floor=Floor(3 * MB, 1 * MB, (SORT,)))
    assert "below the program's floor" not in over_limit_message(above)


def test_the_parser_marks_the_leaves_of_the_entry_result_as_outputs(extension):
    # What the floor counts with the outputs, not as temporaries: the entry's
    # root, or the elements of a root tuple (nested ones too).
    from exla import _core

    text = """HloModule outputs

inner {
  p = f32[4] parameter(0)
  ROOT q = f32[4] negate(p)
}

ENTRY outputs {
  x = f32[4] parameter(0)
  a = f32[4] exponential(x)
  b = f32[4] negate(a)
  c = f32[4] call(b), to_apply=inner
  pair = (f32[4], f32[4]) tuple(c, x)
  ROOT t = (f32[4], (f32[4], f32[4])) tuple(b, pair)
}
"""
    outputs = {f"{s.computation}/{s.instruction}" for s in _core.tensor_sizes(text) if s.output}
    assert outputs == {"outputs/b", "outputs/c", "outputs/x"}


def test_what_an_output_is_a_view_of_is_an_output(extension):
    # TensorFlow returns a gradient through a transpose that moves no
    # dimension and a reshape to the same shape: XLA writes the product
    # straight into the output buffer, so none of the three is a temporary
    # beside the outputs (counting the product put a cross entropy's floor
    # above a plan that fit). A real transpose is a new buffer.
    from exla import _core

    text = """
HloModule views

ENTRY views {
  a = f32[4,3] parameter(0)
  b = f32[3,5] parameter(1)
  product = f32[4,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  same = f32[4,5] transpose(product), dimensions={0,1}
  out = f32[4,5] reshape(same)
  moved = f32[5,4] transpose(product), dimensions={1,0}
  ROOT t = (f32[4,5], f32[5,4]) tuple(out, moved)
}
"""
    outputs = {s.instruction for s in _core.tensor_sizes(text) if s.output}
    assert outputs == {"out", "same", "product", "moved"}
    moved_from = {s.instruction for s in _core.tensor_sizes(text.replace(
        "tuple(out, moved)", "tuple(a, moved)").replace("(f32[4,5], f32[5,4])",
                                                       "(f32[4,3], f32[5,4])")) if s.output}
    assert moved_from == {"a", "moved"}
