"""Shared set-up for the test suite."""

# MuJoCo reads MUJOCO_GL when it is first imported, and some test modules import it directly:
# choose the headless OpenGL backend (when there is no display) before any is collected.
from envkit.display import pick_headless_gl

pick_headless_gl()


import pytest  # noqa: E402

from tests._agent_helpers import QUICK_LEARNING  # noqa: E402


@pytest.fixture
def quick_learning() -> dict:
    """The suite's small, quick learning settings (``_agent_helpers.QUICK_LEARNING``), a copy to change."""
    return dict(QUICK_LEARNING)
