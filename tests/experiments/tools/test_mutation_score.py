"""experiments.tools.mutation_score: the operators' mutants of small C++ snippets (no build)."""

from __future__ import annotations

import pytest

from experiments.tools import mutation_score


def _edits(snippet: str, operator: str) -> list[tuple[str, str]]:
    return [(m.original, m.replacement) for m in mutation_score.mutants_of("x.cc", snippet)
            if m.operator == operator]


def test_comparisons_flip_but_templates_and_shifts_do_not():
    snippet = "  if (a < b && c >= d) out << std::vector<int>{} >> x;\n"
    assert _edits(snippet, "comparison") == [("<", "<="), (">=", ">")]


def test_equality_swaps():
    assert _edits("  return a == b || c != d;\n", "equality") == [("==", "!="), ("!=", "==")]


def test_off_by_one_drops_a_unit_step_and_shifts_slice_bounds():
    assert _edits("  int n = k + 1;\n", "off_by_one") == [(" + 1", "")]
    assert _edits("  ok = b.start == 0 && b.limit == n;\n", "off_by_one") == [
        ("b.start", "(b.start + 1)"), ("b.limit", "(b.limit + 1)")]


def test_off_by_one_leaves_declarations_assignments_and_the_memory_limit():
    assert _edits("  int64_t start = 0;\n  Split(limit);\n  x.start = 2;\n", "off_by_one") == []


def test_drop_term_drops_an_accumulation_or_a_term():
    assert _edits("  total += bytes;\n", "drop_term") == [("total += bytes;", "(void)total;")]
    assert _edits("  int gap = p->offset - cursor;\n", "drop_term") == [(" - cursor", "")]
    assert _edits("  int n = a + b->size();\n", "drop_term") == []


def test_swap_dimensions_swaps_indices_and_operand_sides():
    snippet = "  f(shape.dim(0), dims[1], d.lhs_batch, d.rhs_contracting);\n"
    assert _edits(snippet, "swap_dimensions") == [
        ("dim(0)", "dim(1)"), ("dims[1]", "dims[0]"), ("lhs_batch", "rhs_batch"),
        ("rhs_contracting", "lhs_contracting")]


def test_comments_strings_and_preprocessor_lines_are_not_mutated():
    snippet = '#include <vector>\n  // if (a < b)\n  s = "a < b";\n'
    assert mutation_score.mutants_of("x.cc", snippet) == []


def test_apply_changes_exactly_the_site():
    text = "int f(int a, int b) {\n  return a < b;\n}\n"
    (mutant,) = mutation_score.mutants_of("x.cc", text)
    assert mutation_score.apply(mutant, text) == "int f(int a, int b) {\n  return a <= b;\n}\n"
    with pytest.raises(ValueError, match="changed"):
        mutation_score.apply(mutant, text.replace("a < b", "a > b"))


def test_the_sample_is_seeded_and_takes_every_operator_in_turn():
    text = "".join(f"  x{i} = a < b == c + 1 + d;\n  t += s;\n  f(dim(0));\n" for i in range(5))
    mutants = mutation_score.mutants_of("x.cc", text)
    first = mutation_score.sample(mutants, 10, seed=3)
    assert first == mutation_score.sample(mutants, 10, seed=3)
    assert first != mutation_score.sample(mutants, 10, seed=4)
    assert [m.operator for m in first[:5]] == list(mutation_score.OPERATORS)


def test_summary_scores_killed_over_judged_with_and_without_equivalents():
    equivalent = next(iter(mutation_score.EQUIVALENT))
    rows = [{"status": s, "id": f"m{i}"}
            for i, s in enumerate(("killed", "killed", "survived", "not_compiled"))]
    rows.append({"status": "survived", "id": equivalent})
    assert mutation_score.summarize(rows) == {
        "killed": 2, "survived": 2, "not_compiled": 1, "equivalent": 1, "mutants": 5,
        "score": 0.5, "score_of_killable": 0.667}
