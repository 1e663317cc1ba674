"""Shared set-up for the test suite."""

# MuJoCo reads MUJOCO_GL when it is first imported, and some test modules import it directly:
# choose the headless OpenGL backend (when there is no display) before any is collected.
import os

from envkit.display import pick_headless_gl

pick_headless_gl()

# make test runs a test file on each core (pytest -n auto): a Crawler stepped on two threads
# would only take the other worker's core (the tests that compare thread counts name theirs).
os.environ.setdefault("CRAWLER_THREADS", "1")
# Likewise PyTorch: one thread per operation in each worker and in what it starts (the notebooks'
# kernels, train.py sets its own), as train.py runs. Two workers each on two OpenMP threads spin
# against each other: a 20-update learn_many took 100x longer so on a busy 2-core machine.
os.environ.setdefault("OMP_NUM_THREADS", "1")


import pytest  # noqa: E402
import torch  # noqa: E402

from tests._agent_helpers import QUICK_LEARNING  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture
def quick_learning() -> dict:
    """The suite's small, quick learning settings (``_agent_helpers.QUICK_LEARNING``), a copy to change."""
    return dict(QUICK_LEARNING)
