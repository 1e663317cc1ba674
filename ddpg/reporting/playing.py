"""Playing a trained policy: the agent to play (from a run folder or from checkpoint files) and
one greedy episode of it. What watch.py (videos, the viewer) and evaluate.py (scores over many
episodes) both do, here so that neither command is the other's library.

Light on purpose (NumPy and the file names only): the commands import it before parsing their
options, and ``--help`` is answered before PyTorch loads; ``load_agent`` imports the agent's
modules when it is called.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import numpy as np

from ddpg.run_folder.file_names import ACTOR_FILE, CRITIC_FILE
from ddpg.tasks import DEFAULT_ENV
from ddpg.tasks import REACHER_DECISIONS as EPISODE_DECISIONS

PROJECT_ROOT = Path(__file__).resolve().parents[2]
# The committed checkpoints, played when no run or checkpoint is named.
DEFAULT_ACTOR = PROJECT_ROOT / ACTOR_FILE
DEFAULT_CRITIC = PROJECT_ROOT / CRITIC_FILE

FrameSink = Callable[[np.ndarray], None]


def load_agent(actor: str | os.PathLike[str] | None = None, critic: str | os.PathLike[str] | None = None,
               seed: int = 0, run: str | os.PathLike[str] | None = None, device: Any = "cpu") -> Any:
    """An agent to play: from a run folder (its architecture from run.json) or from checkpoint
    files, whose layer sizes are read from them (FileNotFoundError / ValueError if unusable).

    Without ``actor`` the committed checkpoints are used, the critic included; with ``actor``
    alone no critic is loaded. ``critic="none"`` skips it too (acting needs only the actor).
    """
    from ddpg.agents import agent_from_checkpoints, agent_from_run

    if run is not None:
        if actor is not None or critic is not None:
            raise ValueError("--run takes the checkpoints from the run folder; leave out --actor/--critic")
        return agent_from_run(run, seed=seed, device=device)
    if critic is None and actor is None:
        critic = DEFAULT_CRITIC
    if isinstance(critic, str) and critic.lower() == "none":
        critic = None
    return agent_from_checkpoints(actor or DEFAULT_ACTOR, critic, seed=seed, device=device)


# The tasks a bare checkpoint (no --run) can be told from by its sizes: (inputs, actions) -> environment.
# Gymnasium tasks other than these share sizes too often (Pendulum-v1 and MountainCarContinuous-v0
# take 3 and 2 inputs, 1 action each) to guess: their runs' run.json names them (--run).
TASKS_BY_SIZE = {(33, 4): DEFAULT_ENV, (129, 20): "UnityCrawler-v0"}


def environment_for(agent: Any) -> str:
    """The environment a checkpoint loaded without --run plays, from its actor's input and output
    sizes: the Reacher's 33 and 4, the Crawler's 129 and 20. ValueError, naming the sizes and
    --run, for any other: playing it on the Reacher failed in a reshape deep inside."""
    sizes = (int(agent.state_size), int(agent.action_size))
    if sizes not in TASKS_BY_SIZE:
        known = ", ".join(f"{task} {i} and {a}" for (i, a), task in TASKS_BY_SIZE.items())
        raise ValueError(f"the actor takes {sizes[0]} inputs and gives {sizes[1]} actions, which no environment "
                         f"without a run folder has ({known}); pass --run DIR, whose run.json names its task")
    return TASKS_BY_SIZE[sizes]


def played_task(run: str | os.PathLike[str] | None, agent: Any) -> tuple[str, int]:
    """What evaluate.py and watch.py play: the task (a run's, from its run.json; a bare checkpoint's,
    from its sizes: ``environment_for``) and its default number of agents (Reacher's 20 arms, else
    one copy). ValueError, one line, for a checkpoint of no known size."""
    from ddpg.run_folder.record_file import environment_id  # loads PyTorch: after --help

    env_id = (environment_id(run) if run else environment_for(agent)) or DEFAULT_ENV
    return env_id, 20 if env_id == DEFAULT_ENV else 1


def run_episode(
    env: Any,
    agent: Any,
    steps: int = EPISODE_DECISIONS,
    every: int = 1,
    on_frame: FrameSink | None = None,
    width: int = 640,
    height: int = 480,
    train_mode: bool = True,
    at: Collection[int] | None = None,
) -> np.ndarray:
    """Play one episode (or its first `steps` decisions) greedily; return each agent's score, summed
    to its own episode's end (a Crawler's fall) and played until every agent's has ended.

    When `on_frame` is given it receives the rendered start frame and one frame after every
    `every`-th decision, so callers can stream frames to a file instead of holding them all
    (a full 1000-decision episode at 640x480 would be ~900 MB of frames). With `at`, the
    frames are instead those after the decisions it lists (0: the start), however spaced.
    """
    brain_name = env.brain_names[0]
    info = env.reset(train_mode=train_mode)[brain_name]
    states = info.vector_observations
    scores, live = np.zeros(len(states)), np.ones(len(states), dtype=bool)
    if on_frame is not None and (at is None or 0 in at):
        on_frame(env.render(width=width, height=height))
    for t in range(1, steps + 1):
        actions = agent.act(states, add_noise=False)
        info = env.step(actions)[brain_name]
        scores += np.asarray(info.rewards, dtype=np.float64) * live  # an agent's score ends with its episode
        states = info.vector_observations
        if on_frame is not None and (t in at if at is not None else t % every == 0):
            on_frame(env.render(width=width, height=height))
        live &= ~np.asarray(info.local_done, dtype=bool)
        if not live.any():
            break
    return scores


__all__ = ["DEFAULT_ACTOR", "DEFAULT_CRITIC", "EPISODE_DECISIONS", "TASKS_BY_SIZE", "FrameSink", "environment_for",
           "load_agent", "run_episode"]
