"""Built-in re-creation of the Unity ML-Agents Reacher environment on MuJoCo.

`ReacherEnvironment` has the interface of `unityagents.UnityEnvironment` 0.4, so
course code runs unchanged apart from the line that creates the environment.
"""

import os
from ctypes.util import find_library
from typing import Any


def _pick_headless_gl() -> None:
    """MuJoCo reads MUJOCO_GL when it is first imported: on a machine without a
    display, choose a headless backend that is installed (EGL, then OSMesa)."""
    if "MUJOCO_GL" in os.environ or os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return
    if find_library("EGL"):
        os.environ["MUJOCO_GL"] = "egl"
    elif find_library("OSMesa"):
        os.environ["MUJOCO_GL"] = "osmesa"


_pick_headless_gl()

# Lazy, so `reacher.launch` imports where mujoco is not installed (an old course venv).
_EXPORTS = {
    "BRAIN_NAME": "reacher.environment",
    "ReacherEnvironment": "reacher.environment",
    "BrainInfo": "reacher.brain",
    "BrainParameters": "reacher.brain",
}
__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'reacher' has no attribute {name!r}")
