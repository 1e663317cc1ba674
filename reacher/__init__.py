"""Built-in re-creation of the Unity ML-Agents Reacher environment (modelled in MuJoCo, stepped as PhysX 4.1 steps it).

`ReacherEnvironment` has the interface of `unityagents.UnityEnvironment` 0.4, so
course code runs unchanged apart from the line that creates the environment.

Importing the package registers `UnityReacher-v0` with Gymnasium, as Gymnasium's own
plug-ins do (ale_py, gymnasium_robotics): `import reacher` then `gymnasium.make("UnityReacher-v0")`,
or `gymnasium.make("reacher:UnityReacher-v0")`, which imports this package itself. The entry
points are strings, so MuJoCo is not loaded until an environment is made, and where Gymnasium
is not installed (the course's old unityagents venv runs `reacher.launch`) nothing is
registered. The headless GL choice is made where MuJoCo is loaded (`reacher.mujoco_gl`).
"""

from typing import Any

GYMNASIUM_ID = "UnityReacher-v0"
# The original's episode length (reacher.environment.EPISODE_DECISIONS) and the course's solve
# score (ddpg.solved.SOLVE_SCORE), defined here so that the registration below can state them
# without loading anything: generic tools read them from the spec (Gymnasium's TimeLimit, SB3's zoo).
MAX_EPISODE_STEPS = 1000
# The physics step and the steps per decision (reacher.environment steps them), here so that the
# command lines can state a decision's length without loading MuJoCo.
PHYSICS_DT = 0.02
PHYSICS_STEPS_PER_DECISION = 4
REWARD_THRESHOLD = 30.0


def register_with_gymnasium() -> None:
    """Register `GYMNASIUM_ID` (`make` and `make_vec`: reacher/gym_env.py) if it is not yet;
    importing the package already did, so this is only for code written before it did."""
    import gymnasium

    if GYMNASIUM_ID not in gymnasium.registry:
        gymnasium.register(id=GYMNASIUM_ID, entry_point="reacher.gym_env:ReacherGymEnv",
                           vector_entry_point="reacher.gym_env:ReacherVectorEnv",
                           max_episode_steps=MAX_EPISODE_STEPS, reward_threshold=REWARD_THRESHOLD)


try:
    register_with_gymnasium()
except ImportError:  # no Gymnasium here (the course's unityagents venv): nothing to register with
    pass


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
