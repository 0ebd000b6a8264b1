"""The READMEs' tables are what ``python -m experiments report`` writes from the results files."""

from __future__ import annotations

import pytest

from experiments import REPO_ROOT, RESULTS_DIR
from experiments.report import README_BLOCKS, readme_text


@pytest.mark.parametrize("readme", sorted(README_BLOCKS))
def test_the_readme_tables_are_generated_from_the_results(readme: str) -> None:
    text = (REPO_ROOT / readme).read_text()
    # Hand-edit a figure in the README, or change a results file, and this fails.
    assert readme_text(text, RESULTS_DIR, readme) == text, (
        f"{readme}'s tables differ from the results: run `python -m experiments report`")


@pytest.mark.parametrize("readme", sorted(README_BLOCKS))
def test_every_block_is_in_the_readme_and_holds_a_table(readme: str) -> None:
    text = (REPO_ROOT / readme).read_text()
    for name in README_BLOCKS[readme]:
        block = text.split(f"<!-- {name}:start -->", 1)[1].split(f"<!-- {name}:end -->", 1)[0]
        rows = [line for line in block.splitlines() if line.startswith("| ")]
        assert len(rows) >= 3, f"{readme} block {name!r} has no rows"
