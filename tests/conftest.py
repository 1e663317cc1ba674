"""Shared set-up for the test suite."""

# MuJoCo reads MUJOCO_GL when it is first imported, and some test modules import it directly:
# choose the headless OpenGL backend (when there is no display) before any is collected.
from reacher.display import pick_headless_gl

pick_headless_gl()
