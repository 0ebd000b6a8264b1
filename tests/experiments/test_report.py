"""The README's tables are what ``python -m experiments report`` writes from the results files."""

from __future__ import annotations

from experiments import REPO_ROOT, RESULTS_DIR
from experiments.report import README_BLOCKS, readme_text


def test_the_readme_tables_are_generated_from_the_results() -> None:
    readme = (REPO_ROOT / "README.md").read_text()
    # Hand-edit a figure in the README, or change a results file, and this fails.
    assert readme_text(readme, RESULTS_DIR) == readme, (
        "README.md's tables differ from the results: run `python -m experiments report`")


def test_every_block_is_in_the_readme_and_holds_a_table() -> None:
    readme = (REPO_ROOT / "README.md").read_text()
    for name in README_BLOCKS:
        block = readme.split(f"<!-- {name}:start -->", 1)[1].split(f"<!-- {name}:end -->", 1)[0]
        rows = [line for line in block.splitlines() if line.startswith("| ")]
        assert len(rows) >= 3, f"README block {name!r} has no rows"
