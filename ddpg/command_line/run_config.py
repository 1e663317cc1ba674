"""One run's configuration, resolved once: the command line, the task's settings and (on
``--resume``) the recorded run become one frozen ``RunConfig``; nothing writes back.

Precedence, for every setting: what the command line gives, else (resuming) what the run
recorded, else the task's (``ddpg.tasks``: the one arm's, a Gymnasium task's), else the
defaults (``DDPGConfig``'s, the schedule's, Reacher's 1000 decisions and target 30).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any

import torch

from ddpg.command_line.device import resolve_device
from ddpg.command_line.options import GPU_LEARNERS, LEARNERS, UNSET, applied_on_resume
from ddpg.loop import GOOD_SCORE, GOOD_UPDATES, LoopSettings
from ddpg.run_folder.record import RunRecord
from ddpg.solved import SOLVE_SCORE
from ddpg.tasks import DEFAULT_ENV, REACHER_DECISIONS, Task, environment_spec, reacher_task, task_for
from ddpg.variants import parse_config
from ddpg_agent import DDPGConfig


@dataclass(frozen=True)
class RunConfig:
    """Everything train.py needs to run, decided before anything runs."""

    env_id: str  # "reacher" (the built-in Reacher) or a Gymnasium id
    n_agents: int  # arms, or copies of a Gymnasium task
    seed: int
    learner: str  # ddpg.backends.LEARNERS: "auto", "graph", "graph-overlap" or "readable"
    device: str  # "cpu", "cuda" or "cuda:N", resolved (ddpg.command_line.device)
    agent: DDPGConfig  # the agent's settings (a VariantConfig with variants)
    loop: LoopSettings  # episodes and step budget, episode length, target, schedule, reward scale
    out: str
    unity: str | None = None  # a Unity binary instead of the built-in Reacher
    resume: str | None = None  # the run folder to continue
    force: bool = False
    save_every: int = 10
    save_buffer: bool = False
    reproducible: bool = False
    threads: int = 1  # PyTorch's (torch.set_num_threads), for acting and learning
    animate: bool = False
    animate_every: int = 5
    tensorboard: str | None = None
    quiet: bool = False
    progress: bool = True
    command: str = ""
    record: dict[str, Any] = field(default_factory=dict)  # run.json's task fields and resume history

    @property
    def gymnasium(self) -> bool:
        return self.env_id != DEFAULT_ENV


def resolve(args: argparse.Namespace, given: set[str], record: RunRecord | None, command: str) -> RunConfig:
    """The run's configuration from the parsed command line (``given``: the options set, as
    ``ddpg.command_line.parsing.given_options`` names them),
    and the record of the run ``--resume`` continues. ValueError says what is wrong."""
    if record is not None:  # what --resume applies is declared with each option (ddpg.command_line.options)
        applied = applied_on_resume()
        fixed = sorted(given - set(applied))
        if fixed:
            raise ValueError(f"--resume continues a run with its own settings (run.json); leave out {', '.join(fixed)} "
                             f"(on resume only {', '.join(a for a in applied if a != '--resume')} apply)")
        return _resumed(args, given, record, command)
    env_id = args.env
    if env_id == DEFAULT_ENV:
        if args.num_envs is not None:
            raise ValueError("--num-envs is for a Gymnasium task (--env ID); the built-in Reacher takes --agents")
        n_agents = 20 if args.agents is None else args.agents
        task = reacher_task(n_agents)
        max_t = REACHER_DECISIONS if args.max_t is None else args.max_t
        if max_t > REACHER_DECISIONS:
            raise ValueError(f"--max-t must be at most {REACHER_DECISIONS} (episodes end there), got {max_t}")
        target = SOLVE_SCORE if args.target is None else args.target
        good_score = (task.good_score if task else GOOD_SCORE) if args.good_score is UNSET else args.good_score
        if good_score is not None and good_score < 0:  # scores are >= 0: "never good"
            good_score = None
        extra = {"task_why": task.why} if task else {}
        if args.unity is not None:  # the binary is the run's environment: a resume opens it again
            extra["unity"] = args.unity
    else:
        if args.agents is not None:
            raise ValueError("--agents is for the built-in Reacher; a Gymnasium task (--env) takes --num-envs")
        if args.unity is not None:
            raise ValueError("--unity and --env are exclusive: the Unity binary is the Reacher task")
        task = task_for(env_id)
        try:
            spec = environment_spec(env_id)
        except ValueError as exc:
            raise ValueError(f"--env: {exc}") from None
        n_agents = 1 if args.num_envs is None else args.num_envs
        max_t = args.max_t or spec.max_episode_steps or REACHER_DECISIONS
        target = args.target if args.target is not None else (
            task.target if task.target is not None else spec.reward_threshold)
        good_score = task.good_score if args.good_score is UNSET else args.good_score
        extra = {"env_id": env_id, "task_target": task.target, "task_why": task.why}
    if args.max_env_steps is not None and args.max_env_steps < n_agents:  # as --resume's check, with none taken
        raise ValueError(f"--max-env-steps: one step of the {n_agents} arms or copies takes {n_agents} environment "
                         f"steps; pass at least {n_agents}, got {args.max_env_steps}")
    episodes = args.episodes if args.episodes is not None else (task.episodes if task else 300)
    own = bool(task and task.own_episodes)
    if own and good_score is not None:
        raise ValueError(f"--good-score: {env_id}'s agents each live their own episodes, and the schedule judges "
                         "synchronous ones; leave --good-score out")
    loop = LoopSettings(episodes, max_t, target, stop_when_solved=not args.no_stop, good_score=good_score,
                        good_updates=args.good_updates, reward_scale=task.reward_scale if task else 1.0,
                        max_env_steps=args.max_env_steps, own_episodes=own)
    agent = _agent_config(task, args.config)
    problem = _buffer_problem(agent, n_agents, max_t)
    if problem is None and agent.warmup > agent.buffer_size:
        problem = (f"warmup must be at most buffer_size (learning starts once the buffer holds warmup transitions, "
                   f"and it never holds more than buffer_size), got warmup {agent.warmup} and buffer_size "
                   f"{agent.buffer_size}")
    if problem is not None:
        raise ValueError(f"--config: {problem}")
    return _config(args, given, env_id, n_agents, args.seed, args.learner,
                   str(resolve_device(args.device)), agent, loop, args.out, args.reproducible, args.save_every,
                   args.save_buffer, command, extra, threads=args.threads or 1)


def _resumed(args: argparse.Namespace, given: set[str], record: RunRecord, command: str) -> RunConfig:
    """Continue as the run did, whatever ddpg.tasks says now; only what ``applied_on_resume`` names may change."""
    env_id = record.env_id or DEFAULT_ENV
    task = reacher_task(record.n_agents) if env_id == DEFAULT_ENV else task_for(env_id)
    schedule = record.schedule
    # Budgets: what is given, else the run's own (older records lack the episode budget: the task's).
    episodes = args.episodes if args.episodes is not None else (
        record.max_episodes or (task.episodes if task else 300))
    loop = LoopSettings(episodes, record.max_t, record.target_score,
                        stop_when_solved=record.stop_when_solved and not args.no_stop,
                        good_score=schedule.get("good_score"), good_updates=schedule.get("good_updates", GOOD_UPDATES),
                        reward_scale=record.reward_scale,
                        max_env_steps=args.max_env_steps if args.max_env_steps is not None else record.max_env_steps,
                        own_episodes=bool(record.own_episodes))  # a Crawler run from before goes on as it ran
    extra = {k: getattr(record, k) for k in ("env_id", "task_target", "task_why", "unity")
             if getattr(record, k) is not None}
    extra["resumed"] = [*(record.resumed or []), {"command": command}]
    # A record from before each part's learner was kept knows only the last part's: the others are null.
    extra["learners"] = list(record.learners or [*[None] * len(record.resumed or []), record.learner])
    save_every = args.save_every if "--save-every" in given else record.save_every
    save_buffer = args.save_buffer if "--save-buffer" in given else record.save_buffer
    # Where it ran, unless told (a GPU run resumes on the CPU where there is no GPU, and says so);
    # how its updates ran, unless told or not served there (any learner takes any training state).
    recorded = (record.device or {}).get("type", "cpu")
    if "--device" in given:
        device = str(resolve_device(args.device))
    elif recorded == "cuda" and not torch.cuda.is_available():
        print("The run trained on CUDA; PyTorch sees no GPU here, so it resumes on the CPU (--device to choose)")
        device = "cpu"
    else:
        device = str(resolve_device(recorded))
    learner = args.learner if "--learner" in given else record.learner
    on_cuda = device.split(":")[0] == "cuda"
    if "--learner" not in given and (learner not in LEARNERS or (learner in GPU_LEARNERS and not on_cuda)
                                   or (learner == "overlap" and on_cuda)):
        learner = "auto"  # one this code no longer has (the hand-written "fast" one), a GPU one off CUDA, overlap on it
    agent = _agent_config(None, record.config)
    problem = _buffer_problem(agent, record.n_agents, record.max_t)  # a run.json written before this was checked
    if problem is not None:
        raise ValueError(f"--resume: the run cannot continue: its config's {problem}; train it again with a larger "
                         "buffer_size (--config) and --force")
    return _config(args, given, env_id, record.n_agents, record.seed, learner, device, agent, loop,
                   args.resume, record.reproducible, save_every, save_buffer, command, extra, resume=args.resume,
                   unity=record.unity, threads=args.threads if "--threads" in given else record.threads or 1)


def _agent_config(task: Task | None, overrides: dict[str, Any]) -> DDPGConfig:
    try:
        return parse_config({**(task.config if task else {}), **overrides})
    except (TypeError, ValueError) as exc:
        raise ValueError(f"--config: {exc}") from None


def _buffer_problem(agent: DDPGConfig, n_agents: int, max_t: int) -> str | None:
    """What is wrong with buffer_size for this task (None: nothing): the buffer takes at once one
    step's transitions, one per arm or copy, and with goal paths a whole episode's again against
    them; a smaller buffer would stop the run at its first step (or episode end) with a traceback."""
    goal_paths = getattr(agent, "goal_paths", 0)  # a VariantConfig's
    if goal_paths and agent.buffer_size < goal_paths * n_agents * max_t:
        return (f"buffer_size must be at least {goal_paths * n_agents * max_t:,}, the transitions an episode adds at "
                f"its end against its goal paths ({goal_paths} goal paths x {n_agents} arm(s) x {max_t} decisions), "
                f"got {agent.buffer_size}")
    if agent.buffer_size < n_agents:
        return (f"buffer_size must be at least {n_agents}, the transitions of one step (one per arm or copy), "
                f"got {agent.buffer_size}")
    return None


def _config(args: argparse.Namespace, given: set[str], env_id: str, n_agents: int, seed: int, learner: str,
            device: str, agent: DDPGConfig, loop: LoopSettings, out: str, reproducible: bool, save_every: int,
            save_buffer: bool, command: str, record: dict[str, Any], resume: str | None = None,
            unity: str | None = None, threads: int = 1) -> RunConfig:
    if args.animate and env_id == DEFAULT_ENV:
        raise ValueError("--animate needs a Gymnasium task with a 2-D observation, e.g. --env MountainCarContinuous-v0")
    if reproducible and threads != 1:
        raise ValueError(f"--threads: --reproducible pins one thread per operation (so sums split alike on every "
                         f"machine); leave --threads out or pass 1, got {threads}")
    return RunConfig(env_id, n_agents, seed, learner, device, agent, loop, out,
                     unity=args.unity if resume is None else unity, resume=resume,
                     force=args.force, save_every=save_every, save_buffer=save_buffer, reproducible=reproducible, threads=threads,
                     animate=args.animate, animate_every=args.animate_every, tensorboard=args.tensorboard,
                     quiet=args.quiet, progress=not args.no_progress, command=command, record=record)


__all__ = ["UNSET", "RunConfig", "resolve"]
