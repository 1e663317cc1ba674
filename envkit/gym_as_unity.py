"""A Gymnasium task behind the unityagents 0.4 interface: the reverse of the scenes' Gymnasium
face (``envkit.gym``).

A training loop written for Unity's Reacher talks to its environment through that interface
(``brain_names``, ``reset(train_mode)[brain]``, ``step(actions)[brain]`` with
``vector_observations``, ``rewards``, ``local_done``, ``max_reached``). ``GymEnvironment``
presents a Gymnasium vector environment that way, so one training loop serves the built-in
scenes, the Unity binaries and every Gymnasium task with a Box action space.

What the adapter does between the agent and the task, and why:
  * actions: the agent's tanh outputs in [-1, 1] are mapped linearly onto the task's
    action bounds;
  * endings: ``local_done`` is ``terminated or truncated``, ``max_reached`` is
    ``truncated and not terminated``, so the loop bootstraps through a time limit and
    stops bootstrapping at a true terminal state;
  * episodes: a loop of synchronous episodes (one per sub-environment) lets a sub-environment
    whose episode ends first wait for the others: the vector environment resets it by itself
    (Gymnasium's next-step autoreset) and the loop ignores its steps until every
    sub-environment is done. With ``own_episodes`` none waits instead: autoreset is disabled,
    and the loop restarts each sub-environment as soon as its episode ends (``restart_agents``,
    Gymnasium's partial reset);
  * observations: with ``scale_observations``, mapped to [-1, 1] from the observation space's
    finite bounds. Rewards reach the agent as the task gives them.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from envkit.brain import BrainInfo, BrainParameters


def gymnasium_spec(env_id: str) -> Any:
    """Gymnasium's spec of ``env_id`` (its episode limit, its threshold); ValueError naming the
    expected form for an id Gymnasium does not know."""
    import gymnasium as gym

    try:
        return gym.spec(env_id)
    except gym.error.Error as exc:
        raise ValueError(f"unknown Gymnasium environment {env_id!r} ({exc}); expected an id such as "
                         f"MountainCarContinuous-v0, Pendulum-v1 or Reacher-v5") from None


class GymEnvironment:
    """A Gymnasium task behind the unityagents 0.4 interface (see the module docstring).

    ``GymEnvironment(env_id, num_envs, seed)``: ``num_envs`` copies of the task (the task's
    native vector environment when it registers one, such as ``UnityReacher-v0``, else
    Gymnasium's ``SyncVectorEnv``), seeded ``seed, seed + 1, ...`` at the first reset (a
    native vector environment takes ``seed`` alone).
    ``make_kwargs`` go to ``gymnasium.make_vec`` (e.g. ``goal_size`` for UnityReacher-v0).
    ``scale_observations`` and ``own_episodes`` are the task's choices, which the caller makes
    (the learner's tasks hold them): the kit knows no task. An id that a package registers when
    it is imported (a scene's) needs that package imported first.
    """

    def __init__(self, env_id: str, num_envs: int = 1, seed: int = 0, render_mode: str | None = None,
                 scale_observations: bool = False, own_episodes: bool = False, **make_kwargs: Any) -> None:
        import gymnasium as gym
        from gymnasium.vector import AutoresetMode

        spec = gymnasium_spec(env_id)
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        mode = "vector_entry_point" if spec.vector_entry_point is not None else "sync"
        kwargs = dict(make_kwargs)
        if render_mode is not None:
            kwargs["render_mode"] = render_mode
            # Offscreen frames need no window: keep pygame's SDL (classic control) off the display.
            os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
        self.env_id, self.spec, self.num_envs, self.seed = env_id, spec, int(num_envs), int(seed)
        self._native = mode == "vector_entry_point"
        self.own_episodes = bool(own_episodes)
        if self.own_episodes:  # the loop restarts each copy itself (restart_agents)
            if self._native:
                kwargs["autoreset_mode"] = AutoresetMode.DISABLED
            else:
                kwargs["vector_kwargs"] = {**kwargs.get("vector_kwargs", {}), "autoreset_mode": AutoresetMode.DISABLED}
        self.envs = gym.make_vec(env_id, num_envs=self.num_envs, vectorization_mode=mode, **kwargs)
        try:
            self._check_spaces(gym)
        except ValueError:
            self.envs.close()
            raise
        box = self.envs.single_action_space
        self._action_mid = ((box.high + box.low) / 2.0).astype(np.float64)
        self._action_half = ((box.high - box.low) / 2.0).astype(np.float64)
        obs_box = self.envs.single_observation_space
        self.scale_observations = bool(scale_observations)
        if self.scale_observations:
            finite = np.isfinite(obs_box.low) & np.isfinite(obs_box.high)
            mid = np.where(finite, (obs_box.high + obs_box.low) / 2.0, 0.0)
            half = np.where(finite, (obs_box.high - obs_box.low) / 2.0, 1.0)
            self._obs_mid, self._obs_half = mid.astype(np.float64), half.astype(np.float64)
        self.state_size = int(np.prod(obs_box.shape))
        self.action_size = int(np.prod(box.shape))
        self.brain_names = [env_id]
        self.brains = {env_id: BrainParameters(
            brain_name=env_id, vector_observation_space_size=self.state_size, num_stacked_vector_observations=1,
            vector_action_space_size=self.action_size)}
        self._seeded = False
        self._observations: np.ndarray | None = None

    def _check_spaces(self, gym: Any) -> None:
        act, obs = self.envs.single_action_space, self.envs.single_observation_space
        if not isinstance(act, gym.spaces.Box) or not np.all(np.isfinite(act.low) & np.isfinite(act.high)):
            raise ValueError(f"{self.env_id} has action space {act}; DDPG needs a bounded Box of continuous actions")
        if not isinstance(obs, gym.spaces.Box):
            raise ValueError(f"{self.env_id} has observation space {obs}; expected a Box (a vector of numbers)")

    # ------------------------------------------------------------- unityagents interface
    def reset(self, train_mode: bool = True, **_: Any) -> dict[str, BrainInfo]:
        """Start an episode in every sub-environment (seeded at the first call only)."""
        seed = None
        if not self._seeded:  # a native vector environment takes one seed, Gymnasium's sync one a list
            seed = self.seed if self._native else [self.seed + i for i in range(self.num_envs)]
        observations, _info = self.envs.reset(seed=seed)
        self._seeded = True
        n = self.num_envs
        return {self.env_id: self._info(observations, np.zeros(n), np.zeros(n, bool), np.zeros(n, bool))}

    def step(self, vector_action: Any) -> dict[str, BrainInfo]:
        """One decision of every sub-environment; ``vector_action`` in [-1, 1], (num_envs, action_size)."""
        actions = np.asarray(vector_action, dtype=np.float64).reshape(self.num_envs, self.action_size)
        scaled = (self._action_mid + self._action_half * np.clip(actions, -1.0, 1.0))
        scaled = scaled.reshape((self.num_envs, *self.envs.single_action_space.shape))
        observations, rewards, terminated, truncated, _info = self.envs.step(
            scaled.astype(self.envs.single_action_space.dtype))
        terminated, truncated = np.asarray(terminated, bool), np.asarray(truncated, bool)
        return {self.env_id: self._info(observations, np.asarray(rewards, np.float64), terminated | truncated,
                                        truncated & ~terminated)}

    def restart_agents(self, which: Any) -> np.ndarray:
        """Restart the chosen copies (a boolean mask over them) now, the others going on; their first
        observations as the agent sees them. Only with ``own_episodes`` (autoreset disabled)."""
        if not self.own_episodes:
            raise RuntimeError(f"{self.env_id} was opened with synchronous episodes (autoreset); "
                               "restart_agents needs own_episodes=True")
        mask = np.zeros(self.num_envs, dtype=bool)
        mask[np.asarray(which)] = True
        observations, _info = self.envs.reset(options={"reset_mask": mask})
        return self.observation_to_agent(np.reshape(observations, (self.num_envs, self.state_size)))[mask]

    def observation_to_agent(self, observations: np.ndarray) -> np.ndarray:
        """Observations in the task's units (..., state_size) as the agent sees them."""
        states = np.asarray(observations, dtype=np.float64)
        return (states - self._obs_mid) / self._obs_half if self.scale_observations else states

    def observation_from_agent(self, states: np.ndarray) -> np.ndarray:
        """The inverse of ``observation_to_agent``: back to the task's units."""
        states = np.asarray(states, dtype=np.float64)
        return states * self._obs_half + self._obs_mid if self.scale_observations else states

    def _info(self, observations: np.ndarray, rewards: np.ndarray, done: np.ndarray,
              max_reached: np.ndarray) -> BrainInfo:
        states = self.observation_to_agent(np.reshape(observations, (self.num_envs, self.state_size)))
        return BrainInfo(vector_observations=states, rewards=rewards.tolist(), local_done=done.tolist(),
                         max_reached=max_reached.tolist(), agents=list(range(self.num_envs)),
                         previous_vector_actions=np.zeros((self.num_envs, self.action_size)))

    @property
    def fps(self) -> float:
        """Frames per second of real time in the task's videos (its ``render_fps``)."""
        return float(self.envs.metadata.get("render_fps") or 30)

    def render(self, width: int = 640, height: int = 480) -> np.ndarray:
        """The first sub-environment's frame (its own size: Gymnasium fixes it at ``make``)."""
        frames = self.envs.render()
        if frames is None:
            raise RuntimeError(f"{self.env_id} was made without render_mode='rgb_array'; nothing to render")
        return np.asarray(frames[0])

    @property
    def random_state(self) -> dict[str, Any]:
        """The sub-environments' random generators, saved with a run so a resumed run meets
        the starts the uninterrupted one would."""
        if self._native:  # e.g. UnityReacher-v0: one generator for all its arms
            return {"seeded": self._seeded, "native": self.envs.random_state}
        return {"seeded": self._seeded, "np_random": [e.unwrapped.np_random.bit_generator.state for e in self.envs.envs]}

    @random_state.setter
    def random_state(self, state: dict[str, Any]) -> None:
        if self._native:
            self.envs.random_state = state["native"]
        else:
            for env, saved in zip(self.envs.envs, state["np_random"], strict=True):
                env.unwrapped.np_random.bit_generator.state = saved
        self._seeded = bool(state["seeded"])

    def close(self) -> None:
        self.envs.close()

    def __enter__(self) -> GymEnvironment:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


__all__ = ["GymEnvironment", "gymnasium_spec"]
