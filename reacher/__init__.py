"""Built-in re-creation of the Unity ML-Agents Reacher environment (modelled in MuJoCo, stepped as PhysX 4.1 steps it).

`ReacherEnvironment` has the interface of `unityagents.UnityEnvironment` 0.4, so
course code runs unchanged apart from the line that creates the environment.

Importing the package only defines names. Two things are explicit calls:
`register_with_gymnasium()` makes `gymnasium.make("UnityReacher-v0")` work (ddpg.tasks calls
it), and the headless GL choice is made where MuJoCo is loaded (`reacher.mujoco_gl`).
"""

from typing import Any

GYMNASIUM_ID = "UnityReacher-v0"


def register_with_gymnasium() -> None:
    """`gymnasium.make(GYMNASIUM_ID)` and `make_vec` (reacher/gym_env.py); idempotent. Entry
    points are strings, so nothing heavy is imported until an environment is made."""
    import gymnasium

    if GYMNASIUM_ID not in gymnasium.registry:
        gymnasium.register(id=GYMNASIUM_ID, entry_point="reacher.gym_env:ReacherGymEnv",
                           vector_entry_point="reacher.gym_env:ReacherVectorEnv")


# Lazy, so `reacher.launch` imports where mujoco is not installed (an old course venv).
_EXPORTS = {
    "BRAIN_NAME": "reacher.brain",
    "ReacherEnvironment": "reacher.environment",
    "BrainInfo": "reacher.brain",
    "BrainParameters": "reacher.brain",
}
__all__ = ["GYMNASIUM_ID", "register_with_gymnasium", *_EXPORTS]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'reacher' has no attribute {name!r}")
