"""``RunRecord``: the schema of a run's run.json, defined once.

train.py writes it, the notebook writes one for its own loop, and everything that reads a run
(``--resume``, watch.py, evaluate.py, sweep.py, the benchmarks) reads it through
``RunRecord.from_dict``, so a field has one name and one meaning everywhere. Records written
by earlier versions still load: a missing field takes the value those versions ran with
(``UNRECORDED_SETTINGS`` for the agent's settings), and keys this version does not know are
kept in ``other`` and written back unchanged.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

# Settings older runs did not record because they did not exist yet: such a run ran with
# these values (one-step returns, no layer norm), whatever the defaults are now.
UNRECORDED_SETTINGS = {"n_step": 1, "critic_layer_norm": False}


# A field run.json holds only when it is set, as the versions that added it wrote it.
ONLY_WHEN_SET = {"optional": True}


@dataclass
class RunRecord:
    """One run: what ran (settings, learner, environment, provenance) and what came of it."""

    config: dict[str, Any]  # the agent's settings (DDPGConfig, or VariantConfig with variants)
    seed: int | None = None
    learner: str = "readable"  # how updates ran (ddpg.backends): "graph", "graph-overlap" or "readable" (autograd); "fast"
    # in runs made before the hand-written CPU learner was retired
    variants: list[str] = field(default_factory=list)
    threads: int = 2  # PyTorch's threads (records from before it was recorded ran the fast learner on two)
    # ddpg.command_line.device.describe: "type", and a GPU's name and versions (None: the CPU)
    device: dict[str, Any] | None = field(default=None, metadata=ONLY_WHEN_SET)
    reproducible: bool = False  # train.py --reproducible: the math libraries pinned
    schedule: dict[str, Any] = field(default_factory=dict)  # good_score, good_updates
    reward_scale: float = 1.0  # rewards are learned times this (scores stay the task's)
    state_size: int = 33
    action_size: int = 4
    n_agents: int | None = None
    episodes_run: int = 0
    # the episode budget (train.py --episodes); a resume keeps it unless given
    max_episodes: int | None = field(default=None, metadata=ONLY_WHEN_SET)
    max_t: int | None = None
    target_score: float | None = None
    window: int = 100
    max_env_steps: int | None = field(default=None, metadata=ONLY_WHEN_SET)  # the step budget (train.py --max-env-steps), when one was set
    stop_when_solved: bool = True
    solved_at_episode: int | None = None
    time_to_solve_s: float | None = None
    env_steps: int | None = None  # transitions experienced (one per live agent per step)
    env_steps_to_solve: int | None = None
    wall_time_s: float | None = None
    final_average: float | None = None
    learner_updates: int | None = None
    finished: bool = False  # ran to its end (solved, or its episode or step budget)
    # with max_env_steps: it ended the run (the unfinished episode dropped)
    step_budget_spent: bool | None = field(default=None, metadata=ONLY_WHEN_SET)
    interrupted: bool = False  # stopped by a signal; ``signal`` says which
    signal: int | None = None
    resumable_from_episode: int | None = None
    save_buffer: bool = False  # train.py --save-buffer as the last complete save had it; a resume keeps it unless given
    save_every: int = 10  # train.py --save-every (older records lack it: they ran the default); a resume keeps it unless given
    environment: str | None = None  # the environment's class, e.g. reacher.environment.ReacherEnvironment
    # Each agent's episodes its own (the Crawler, ddpg.loop.LoopSettings.own_episodes): episodes_run and
    # resumable_from_episode count rounds of max_t decisions, and scores.csv has one row per agent-episode,
    # agent_episodes of them; solved_at_episode is an agent-episode's number
    own_episodes: bool | None = field(default=None, metadata=ONLY_WHEN_SET)
    agent_episodes: int | None = field(default=None, metadata=ONLY_WHEN_SET)
    versions: dict[str, Any] | None = None
    machine: dict[str, Any] | None = None
    git_commit: str | None = None
    command: str | None = None
    platform: str | None = None
    # a Gymnasium task's id (train.py --env); None for the built-in Reacher
    env_id: str | None = field(default=None, metadata=ONLY_WHEN_SET)
    task_target: float | None = field(default=None, metadata=ONLY_WHEN_SET)
    task_why: str | None = field(default=None, metadata=ONLY_WHEN_SET)  # the reason for the task's settings (ddpg.tasks)
    # train.py --unity: the Reacher Unity binary the run steps (None: the built-in one)
    unity: str | None = field(default=None, metadata=ONLY_WHEN_SET)
    # one entry per --resume: command, from_episode, exact
    resumed: list[dict[str, Any]] | None = field(default=None, metadata=ONLY_WHEN_SET)
    # each part's learner, the first run's then each resume's (``learner`` is the last part's): an
    # edit between parts sends a resume to the readable learner
    learners: list[str | None] | None = field(default=None, metadata=ONLY_WHEN_SET)  # null: not recorded then
    # the layer shapes of the networks built, by parameter name: what watch.py, evaluate.py and
    # --resume must build again (model.py's widths may have changed since)
    networks: dict[str, dict[str, list[int]]] | None = field(default=None, metadata=ONLY_WHEN_SET)
    other: dict[str, Any] = field(default_factory=dict)  # keys this version does not know


    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunRecord:
        """A record from run.json's object; ValueError when it has no ``config`` object."""
        if not isinstance(data, dict) or not isinstance(data.get("config"), dict):
            raise ValueError("it has no 'config' object; it was not written by train.py")
        names = {f.name for f in dataclasses.fields(cls)} - {"other"}
        known = {k: v for k, v in data.items() if k in names}
        known["config"] = {**UNRECORDED_SETTINGS, **data["config"]}
        return cls(**known, other={k: v for k, v in data.items() if k not in names})

    def to_dict(self) -> dict[str, Any]:
        """run.json's object, in the field order above."""
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "other"
                and not (f.metadata.get("optional") and getattr(self, f.name) is None)}
        return {**data, **self.other}

    def missing_for_resume(self) -> list[str]:
        """The fields ``--resume`` needs that this record lacks (written by an early version)."""
        return [k for k in ("seed", "n_agents", "max_t", "environment") if getattr(self, k) is None]


__all__ = ["UNRECORDED_SETTINGS", "RunRecord"]
