"""Built-in re-creation of the Unity ML-Agents Crawler (the course's optional challenge), on MuJoCo.

`CrawlerEnvironment` has the interface of `unityagents.UnityEnvironment` 0.4, like
`reacher.ReacherEnvironment`, and `Crawler_Linux/Crawler.x86_64` is a stand-in binary for the
genuine client; it shares the kit every scene uses (`envkit/`: the Unity stand-in, the interface's
data classes, the checks, the viewer). Importing the package registers `UnityCrawler-v0` with Gymnasium.
Every number of the scene, with its source: `crawler/scene.py` and docs/crawler.md.
"""

from envkit import gym as _gym
from envkit.exports import lazy_getattr

GYMNASIUM_ID = "UnityCrawler-v0"
MAX_EPISODE_STEPS = 1000  # decisions: the agent's maxStep 5000 physics steps, 5 per decision (crawler/scene.py)
# ML-Agents' published "Benchmark Mean Reward" for the Crawler of this version (docs/crawler.md)
REWARD_THRESHOLD = 2000.0


def register_with_gymnasium() -> None:
    """Register `GYMNASIUM_ID` (`make` and `make_vec`: crawler/gym_env.py) if it is not yet."""
    _gym.register(GYMNASIUM_ID, "crawler.gym_env:CrawlerGymEnv", "crawler.gym_env:CrawlerVectorEnv",
                  MAX_EPISODE_STEPS, REWARD_THRESHOLD)


_gym.register_if_gymnasium(register_with_gymnasium)  # not in an old unityagents venv

_EXPORTS = {"CrawlerEnvironment": "crawler.environment", "BRAIN_NAME": "crawler.environment"}
__all__ = ["GYMNASIUM_ID", "register_with_gymnasium", *_EXPORTS]

__getattr__ = lazy_getattr(__name__, _EXPORTS)
