"""Built-in re-creation of the Unity ML-Agents Reacher environment (modelled in MuJoCo, stepped as PhysX 4.1 steps it).

`ReacherEnvironment` has the interface of `unityagents.UnityEnvironment` 0.4, so
course code runs unchanged apart from the line that creates the environment.
"""

from typing import Any

from reacher.display import pick_headless_gl

pick_headless_gl()

GYMNASIUM_ID = "UnityReacher-v0"


def _register_with_gymnasium() -> None:
    """`gymnasium.make(GYMNASIUM_ID)` and `make_vec` (reacher/gym_env.py). Entry points are
    strings, so nothing heavy is imported until an environment is made."""
    try:
        import gymnasium
    except ImportError:  # the old course venv the genuine Unity client runs in has none
        return
    if GYMNASIUM_ID not in gymnasium.registry:
        gymnasium.register(id=GYMNASIUM_ID, entry_point="reacher.gym_env:ReacherGymEnv",
                           vector_entry_point="reacher.gym_env:ReacherVectorEnv")


_register_with_gymnasium()

# Lazy, so `reacher.launch` imports where mujoco is not installed (an old course venv).
_EXPORTS = {
    "BRAIN_NAME": "reacher.brain",
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
