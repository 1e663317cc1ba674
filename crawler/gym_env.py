"""The built-in Crawler behind Gymnasium's interface: `UnityCrawler-v0`.

    import gymnasium as gym
    import crawler  # registers UnityCrawler-v0 (or gym.make("crawler:UnityCrawler-v0") alone)

    env = gym.make("UnityCrawler-v0")                        # one crawler, a gymnasium.Env
    envs = gym.make_vec("UnityCrawler-v0", num_envs=12, vectorization_mode="vector_entry_point")

Both wrap `CrawlerEnvironment` (its docstring and crawler/observation.py have the spaces).
    observation: Box(-inf, inf, (129,), float32); action: Box(-1, 1, (20,), float32);
    reward: per decision, the sum over its 5 physics steps of 0.03 x the body's velocity toward
        the target + 0.01 x its facing cosine; -1 for a decision in which it falls;
    terminated: the body or an upper leg touched the ground;
    truncated: decision 1000 (the spec's ``max_episode_steps``; ``reward_threshold`` is
        ML-Agents' published benchmark for this Crawler, 2000).
The scene draws nothing at random: every episode starts from the same pose, and `seed` only
seeds Gymnasium's own generator. By default the vector environment autoresets each crawler on
the step after its episode ends (`AutoresetMode.NEXT_STEP`): that step ignores its action and
returns its first observation with reward 0. With `autoreset_mode=AutoresetMode.DISABLED` (what
training uses: envkit.gym_as_unity.GymEnvironment) nothing is wasted: the caller restarts the crawlers
whose episodes ended with `reset(options={"reset_mask": mask})`, at once, and each acts from its
first observation at the next step.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from crawler import MAX_EPISODE_STEPS
from crawler import observation as obs
from crawler.environment import ACTION_SIZE, BRAIN_NAME, DECISION_SECONDS, CrawlerEnvironment
from envkit.gym import checked_render_mode

RENDER_FPS = 1.0 / DECISION_SECONDS  # 15 decisions per simulated second
OBSERVATION_SPACE = spaces.Box(-np.inf, np.inf, (obs.OBSERVATION_SIZE,), np.float32)
ACTION_SPACE = spaces.Box(-1.0, 1.0, (ACTION_SIZE,), np.float32)


def _shaped(actions: Any, shape: tuple[int, ...]) -> np.ndarray:
    """``actions`` as an array of exactly ``shape`` ((20,) for one crawler, (num_envs, 20) for the
    vector), or a one-line ValueError naming it: numpy's reshape would take any 20 x n values in any
    layout (a transposed array) or say only that it cannot reshape. The numbers themselves are
    checked by CrawlerEnvironment (envkit.checks.checked_actions)."""
    try:
        array = np.asarray(actions)
    except ValueError:  # ragged nesting
        array = None
    if array is None or array.shape != shape:
        got = "ragged sequences" if array is None else f"shape {array.shape}"
        raise ValueError(f"actions must have shape {shape} ({ACTION_SIZE} values in [-1, 1] per crawler), got {got}")
    return array


class CrawlerGymEnv(gym.Env):
    """One crawler as a `gymnasium.Env`; see the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": RENDER_FPS}

    def __init__(self, render_mode: str | None = None, width: int = 640, height: int = 480) -> None:
        self.render_mode = checked_render_mode(render_mode)
        self.observation_space, self.action_space = OBSERVATION_SPACE, ACTION_SPACE
        self._size = (width, height)
        self._env = CrawlerEnvironment(num_agents=1, verbose=False, show_viewer=False)
        self._over: str | None = None  # why the episode ended (terminated or truncated): step() needs reset() first
        self._steps = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        info = self._env.reset(train_mode=True)[BRAIN_NAME]
        self._over = None
        self._steps = 0
        return info.vector_observations[0].astype(np.float32), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """One decision. After the episode ends, a RuntimeError asks for reset(), as Reacher's single
        env does: the crawler would otherwise start again silently (CrawlerEnvironment restarts it)."""
        if self._over is not None:
            raise RuntimeError(f"the episode is over ({self._over}): call reset() before step()")
        info = self._env.step(_shaped(action, ACTION_SPACE.shape).reshape(1, ACTION_SIZE))[BRAIN_NAME]
        self._steps += 1
        terminated = bool(info.local_done[0]) and not bool(info.max_reached[0])
        truncated = not terminated and self._steps >= MAX_EPISODE_STEPS
        if terminated or truncated:
            self._over = "terminated: the crawler fell" if terminated else f"truncated at decision {MAX_EPISODE_STEPS}"
        # Gymnasium's terminal observation is the fallen crawler's, not the first pose Unity reports
        observation = self._env.ended_observations[0] if terminated else info.vector_observations[0]
        return observation.astype(np.float32), float(info.rewards[0]), terminated, truncated, {}

    def render(self) -> np.ndarray | None:
        return None if self.render_mode is None else self._env.render(*self._size)

    def close(self) -> None:
        self._env.close()


class CrawlerVectorEnv(VectorEnv):
    """`num_envs` crawlers in one MuJoCo model, stepped together; see the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": RENDER_FPS,
                                          "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int = 12, render_mode: str | None = None, max_episode_steps: int | None = None,
                 width: int = 640, height: int = 480, autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP) -> None:
        limit = MAX_EPISODE_STEPS if max_episode_steps is None else max_episode_steps
        if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or not 0 < limit <= MAX_EPISODE_STEPS:
            raise ValueError(f"max_episode_steps must be an integer from 1 to {MAX_EPISODE_STEPS}, got {max_episode_steps!r}")
        try:
            mode = AutoresetMode(autoreset_mode)
        except ValueError:
            mode = None
        if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.DISABLED):
            raise ValueError(f"autoreset_mode must be AutoresetMode.NEXT_STEP or AutoresetMode.DISABLED, got {autoreset_mode!r}")
        self.metadata = {**self.metadata, "autoreset_mode": mode}
        self.render_mode = checked_render_mode(render_mode)
        self.num_envs = int(num_envs)
        self._env = CrawlerEnvironment(num_agents=self.num_envs, verbose=False, show_viewer=False)
        self.single_observation_space, self.single_action_space = OBSERVATION_SPACE, ACTION_SPACE
        self.observation_space = batch_space(OBSERVATION_SPACE, self.num_envs)
        self.action_space = batch_space(ACTION_SPACE, self.num_envs)
        self._limit = int(limit)
        self._steps = np.zeros(self.num_envs, dtype=np.int64)
        self._pending = np.zeros(self.num_envs, dtype=bool)  # ended: autoreset next step, or (DISABLED) reset first
        self._observations = np.zeros((self.num_envs, obs.OBSERVATION_SIZE), dtype=np.float32)
        self._size = (width, height)

    def reset(self, *, seed: int | list[int] | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Every crawler to its first pose; with ``options={"reset_mask": mask}`` only the masked ones,
        the others going on (Gymnasium's partial reset, for ``AutoresetMode.DISABLED``)."""
        mask = None if options is None else options.get("reset_mask")
        if mask is not None:
            mask = np.asarray(mask)
            if mask.shape != (self.num_envs,) or mask.dtype != np.bool_:
                raise ValueError(f"reset_mask must be a boolean array of shape ({self.num_envs},), got "
                                 f"{mask.dtype} {mask.shape}")
        if seed is not None:
            self._np_random, self._np_random_seed = gym.utils.seeding.np_random(seed if isinstance(seed, int) else seed[0])
        if mask is None:
            info = self._env.reset(train_mode=True)[BRAIN_NAME]
            self._observations = info.vector_observations.astype(np.float32)
            mask = np.ones(self.num_envs, dtype=bool)
        elif mask.any():
            self._observations[mask] = self._env.restart_agents(mask)
        self._steps[mask] = 0
        self._pending[mask] = False
        return self._observations.copy(), {}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        disabled = self.metadata["autoreset_mode"] == AutoresetMode.DISABLED
        if disabled and self._pending.any():
            raise ValueError(f"crawlers {np.flatnonzero(self._pending).tolist()} ended their episodes: restart them "
                             "with reset(options={'reset_mask': mask}) before the next step (autoreset is disabled)")
        info = self._env.step(_shaped(actions, (self.num_envs, ACTION_SIZE)))[BRAIN_NAME]
        fell = np.asarray(info.local_done, bool) & ~np.asarray(info.max_reached, bool)
        # Gymnasium's terminal observations are the fallen crawlers', not the first pose Unity reports
        observations = info.vector_observations.astype(np.float32)
        if fell.any():
            observations[fell] = self._env.ended_observations[fell]
        rewards = np.asarray(info.rewards, dtype=np.float64)
        self._steps += 1
        truncated = (self._steps >= self._limit) & ~fell
        terminated = fell
        if not disabled and self._pending.any():  # NEXT_STEP autoreset: these start again, their actions unused
            observations[self._pending] = self._env.restart_agents(self._pending)
            rewards[self._pending] = 0.0
            terminated[self._pending] = truncated[self._pending] = False
            self._steps[self._pending] = 0
        self._pending = terminated | truncated
        self._observations = observations
        return observations.copy(), rewards, terminated, truncated, {}

    def render(self) -> tuple[np.ndarray, ...] | None:
        if self.render_mode is None:
            return None
        return (self._env.render(*self._size),)

    @property
    def random_state(self) -> dict[str, Any]:
        """Everything a run saves to go on exactly, crawlers mid-episode included: the scene's state
        (CrawlerEnvironment.random_state) and each crawler's decisions and ending here."""
        return {"scene": self._env.random_state, "steps": self._steps.tolist(), "pending": self._pending.tolist(),
                "observations": self._observations.tolist()}

    @random_state.setter
    def random_state(self, state: dict[str, Any]) -> None:
        if isinstance(state, dict) and "scene" in state:
            self._env.random_state = state["scene"]
            self._steps[:] = np.asarray(state["steps"], dtype=np.int64)
            self._pending[:] = np.asarray(state["pending"], dtype=bool)
            self._observations[:] = np.asarray(state["observations"], dtype=np.float32)
        else:  # saved before this held more than the scene's carried-over commands
            self._env.random_state = state

    def close_extras(self, **kwargs: Any) -> None:
        self._env.close()
