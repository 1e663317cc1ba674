"""The notebook's structure: what nbval needs to re-execute and check it (nbval itself runs it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests._notebook_helpers import assert_sections_in_order, markdown_of

NOTEBOOK = Path(__file__).resolve().parent.parent / "Continuous_Control.ipynb"
SECTIONS = [
    "1. Start the Environment",
    "2. Examine the State and Action Spaces",
    "3. Take Random Actions in the Environment",
    "4. Train 20 Agents with DDPG",
    "5. Save the Checkpoints",
    "6. Plot the Rewards",
    "7. Watch the Trained Arms",
    "8. Close the Environment",
]


@pytest.fixture(scope="module")
def notebook() -> dict:
    return json.loads(NOTEBOOK.read_text())


def _code(notebook: dict) -> list[str]:
    return ["".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code"]


def test_runs_in_a_plain_python3_kernel(notebook):
    assert notebook["metadata"]["kernelspec"]["name"] == "python3"


def test_has_the_sections_in_order(notebook):
    assert_sections_in_order(notebook, SECTIONS)


def test_deterministic_cells_are_output_checked_and_have_reference_outputs(notebook):
    checked = [c for c in notebook["cells"] if c["cell_type"] == "code"
               and "".join(c["source"]).startswith("# NBVAL_CHECK_OUTPUT")]
    texts = ["".join(o.get("text", "")) for c in checked for o in c["outputs"]]
    joined = "\n".join(texts)
    assert "Number of agents: 20" in joined
    assert "Size of each action: 4" in joined
    assert "There are 20 agents. Each observes a state with length: 33" in joined
    # Random play's score is not checked: it is the same on every CPU with FMA, and another on
    # one without (the maths library's sin and cos round otherwise); tests/test_environment.py
    # bounds it instead.
    assert "Total score (averaged over agents) this episode:" not in joined
    for cell in checked:  # a checked cell with no stored output would check nothing
        assert cell["outputs"], cell["source"]


def test_stored_outputs_hold_no_errors(notebook):
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            assert output["output_type"] != "error", "".join(cell["source"])


def test_quick_mode_and_the_unity_switch_are_in_the_notebook(notebook):
    code = "\n".join(_code(notebook))
    assert 'os.environ.get("REACHER_QUICK") == "1"' in code
    assert '# env = make_env("Reacher_Linux/Reacher.x86_64")' in code
    # The course's training loop is in the notebook, not hidden in train().
    assert "def ddpg(" in code and "agent.act(states)" in code and "agent.step(" in code
    assert "from train import train" not in code
    # Reloaded as a course user would, from the committed top-level files.
    assert "torch.load(actor_path, weights_only=True)" in code
    assert "Path('checkpoint_actor.pth')" in code


def _outputs(notebook: dict) -> list[dict]:
    return [o for c in notebook["cells"] if c["cell_type"] == "code" for o in c["outputs"]]


def test_committed_outputs_are_a_full_run(notebook):
    """GitHub readers see the full run: every episode line, the solve, the per-agent averages,
    and PNG outputs (the reward plot and a filmstrip of the trained arms)."""
    text = "".join("".join(o.get("text", "")) for o in _outputs(notebook))
    episode_lines = [line for line in text.splitlines() if line.startswith("Episode ")]
    assert len(episode_lines) >= 100
    assert "Solved at episode" in text and "Not solved" not in text
    solved = int(text.split("Solved at episode ")[1].split(":")[0])
    markdown = markdown_of(notebook).split()
    assert f"solved at episode {solved}." in " ".join(markdown), "the text should quote the stored run"
    assert "Average over the last 100 episodes, per agent:" in text
    pngs = [o for o in _outputs(notebook) if "image/png" in o.get("data", {})]
    assert len(pngs) >= 2
    # No embedded video: GitHub does not play it and it would bloat the file.
    assert not any("base64" in "".join(o.get("data", {}).get("text/html", "")) for o in _outputs(notebook))


def test_text_agrees_with_the_random_play_output(notebook):
    """The markdown says a random policy scores about 0.1 to 0.2; the stored output says so too."""
    markdown = markdown_of(notebook)
    assert "about\n0.1 to 0.2 per episode" in json.dumps(markdown) or "about 0.1 to 0.2 per episode" in " ".join(markdown.split())
    text = "".join("".join(o.get("text", "")) for o in _outputs(notebook))
    score = float(text.split("Total score (averaged over agents) this episode:")[1].split()[0])
    assert 0.1 <= score <= 0.2


def test_reproducible_mode_is_one_switch_set_before_the_libraries_load(notebook):
    """REACHER_REPRODUCIBLE=1 pins the math libraries (reproducible.pin) in the first code cell,
    before numpy and torch are imported; the saved record says whether it was on."""
    code = "\n".join(_code(notebook))
    assert code.index("reproducible.pin()") < code.index("import numpy") < code.index("import torch")
    assert 'os.environ.get("REACHER_REPRODUCIBLE") == "1"' in code
    assert "reproducible=reproducible.active(), machine=reproducible.machine()" in code


def test_the_watch_section_shows_the_arms_on_github(notebook):
    """Pictures kept in the outputs (GitHub renders them; it plays no video), and no output that
    points into runs/, which git ignores."""
    cells = notebook["cells"]
    watch = next(i for i, c in enumerate(cells) if c["cell_type"] == "markdown" and "Watch the Trained Arms" in "".join(c["source"]))
    kinds = {kind for c in cells[watch:] if c["cell_type"] == "code" for o in c["outputs"] for kind in o.get("data", {})}
    assert {"image/png", "image/gif"} <= kinds
    text = json.dumps(_outputs(notebook))
    assert "runs/" not in text


def test_one_variable_chooses_one_arm_or_twenty_and_quick_mode_learns(notebook):
    code = "\n".join(_code(notebook))
    assert "NUM_AGENTS = 20" in code and 'make_env("builtin", num_agents=NUM_AGENTS' in code
    assert "reacher_task(num_agents)" in code  # one arm takes its own settings
    assert "assert agent.n_updates > 0" in code  # nbval fails the notebook if quick mode learned nothing
