"""Shared set-up for the test suite."""

# `import reacher` picks a headless OpenGL backend (MUJOCO_GL) when there is no display;
# that must happen before anything imports mujoco, so it happens here, before any test
# module (some import mujoco directly) is collected.
import reacher  # noqa: F401
