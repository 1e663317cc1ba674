"""Built-in re-creation of the Unity ML-Agents Crawler (the course's optional challenge), on MuJoCo.

`CrawlerEnvironment` has the interface of `unityagents.UnityEnvironment` 0.4, like
`reacher.ReacherEnvironment`, and `Crawler_Linux/Crawler.x86_64` is a stand-in binary for the
genuine client; it shares Reacher's Unity stand-in (`reacher/unity/`) and the interface's data
classes (`reacher/brain.py`). Importing the package registers `UnityCrawler-v0` with Gymnasium.
Every number of the scene, with its source: `crawler/scene.py` and docs/crawler.md.
"""

from typing import Any

GYMNASIUM_ID = "UnityCrawler-v0"
MAX_EPISODE_STEPS = 1000  # decisions: the agent's maxStep 5000 physics steps, 5 per decision (crawler/scene.py)
# ML-Agents' published "Benchmark Mean Reward" for the Crawler of this version (docs/crawler.md)
REWARD_THRESHOLD = 2000.0


def register_with_gymnasium() -> None:
    """Register `GYMNASIUM_ID` (`make` and `make_vec`: crawler/gym_env.py) if it is not yet."""
    import gymnasium

    if GYMNASIUM_ID not in gymnasium.registry:
        gymnasium.register(id=GYMNASIUM_ID, entry_point="crawler.gym_env:CrawlerGymEnv",
                           vector_entry_point="crawler.gym_env:CrawlerVectorEnv",
                           max_episode_steps=MAX_EPISODE_STEPS, reward_threshold=REWARD_THRESHOLD)


try:
    register_with_gymnasium()
except ImportError:  # no Gymnasium here (an old unityagents venv): nothing to register with
    pass

_EXPORTS = {"CrawlerEnvironment": "crawler.environment", "BRAIN_NAME": "crawler.environment"}
__all__ = ["GYMNASIUM_ID", "register_with_gymnasium", *_EXPORTS]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'crawler' has no attribute {name!r}")
