"""MountainCarContinuous.ipynb: its structure, and that its committed outputs are a full run."""

from __future__ import annotations

import json
from pathlib import Path

from tests._notebook_helpers import assert_sections_in_order, markdown_of

NOTEBOOK = Path(__file__).resolve().parent.parent / "MountainCarContinuous.ipynb"
SECTIONS = [
    "1. Start the Environment",
    "2. The Exploration Scheme, and Why",
    "3. Train, Drawing the Critic and the Policy Every Few Episodes",
    "4. Plot the Rewards",
    "5. What the Critic and the Actor Learned",
    "6. How They Got There: Frames of the Training Animation",
    "7. Watch the Trained Car",
    "8. Close the Environment",
]


def _notebook() -> dict:
    return json.loads(NOTEBOOK.read_text())


def test_sections_in_order_and_a_plain_kernel():
    notebook = _notebook()
    assert notebook["metadata"]["kernelspec"]["name"] == "python3"
    assert_sections_in_order(notebook, SECTIONS)


def test_committed_outputs_are_a_full_solved_run_with_pictures():
    cells = [c for c in _notebook()["cells"] if c["cell_type"] == "code"]
    outputs = [o for c in cells for o in c.get("outputs", [])]
    text = "".join("".join(o.get("text", "")) for o in outputs)
    assert "Solved at episode" in text and "3 episodes" not in text
    assert sum("image/png" in o.get("data", {}) for o in outputs) >= 3  # rewards, final maps, frames
    assert "Traceback" not in text and not any(o.get("output_type") == "error" for o in outputs)


def test_the_exploration_text_matches_the_task_settings():
    from ddpg.tasks import task_for

    config = task_for("MountainCarContinuous-v0").config
    markdown = markdown_of(_notebook())
    assert f"`sigma` {config['noise_sigma']}" in markdown and f"`theta` {config['noise_theta']}" in markdown
    assert f"decays by {round((1 - config['noise_decay']) * 100)}% per episode" in markdown
    assert f"floor of {config['noise_min']}" in markdown
