"""Built-in re-creation of the Unity ML-Agents Reacher environment (modelled in MuJoCo, stepped as PhysX 4.1 steps it).

`ReacherEnvironment` has the interface of `unityagents.UnityEnvironment` 0.4, so
course code runs unchanged apart from the line that creates the environment.

Importing the package registers `UnityReacher-v0` with Gymnasium, as Gymnasium's own
plug-ins do (ale_py, gymnasium_robotics): `import reacher` then `gymnasium.make("UnityReacher-v0")`,
or `gymnasium.make("reacher:UnityReacher-v0")`, which imports this package itself. The entry
points are strings, so MuJoCo is not loaded until an environment is made, and where Gymnasium
is not installed (the course's old unityagents venv runs `reacher.launch`) nothing is
registered. The headless GL choice is made where MuJoCo is loaded (`envkit.mujoco_gl`); what the
scenes share (the interface's classes, the checks, the viewer, the Unity stand-in) is `envkit/`.
"""

from envkit import gym as _gym
from envkit.exports import lazy_getattr

GYMNASIUM_ID = "UnityReacher-v0"
# The names the original's academy and brain report (env.brain_names, the banner), here so that
# `from reacher import BRAIN_NAME` loads nothing.
BRAIN_NAME = "ReacherBrain"
ACADEMY_NAME = "Academy"
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
    _gym.register(GYMNASIUM_ID, "reacher.gym_env:ReacherGymEnv", "reacher.gym_env:ReacherVectorEnv",
                  MAX_EPISODE_STEPS, REWARD_THRESHOLD)


_gym.register_if_gymnasium(register_with_gymnasium)  # not in the course's unityagents venv

# Lazy, so `reacher.launch` imports where mujoco is not installed (an old course venv).
_EXPORTS = {
    "ReacherEnvironment": "reacher.environment",
    "BrainInfo": "envkit.brain",
    "BrainParameters": "envkit.brain",
}
__all__ = ["ACADEMY_NAME", "BRAIN_NAME", "GYMNASIUM_ID", "register_with_gymnasium", *_EXPORTS]

__getattr__ = lazy_getattr(__name__, _EXPORTS)
