"""Train the DDPG agent on the multi-agent Reacher (or any Gymnasium task) and record the run.

Command line::

    python train.py --out runs/seed0                    # fast learner, stops when solved
    python train.py --learner readable --out runs/r0    # the plain-autograd agent of ddpg_agent.py
    python train.py --env MountainCarContinuous-v0 --animate --out runs/mcc   # a Gymnasium task (tasks.py)

Notebook use::

    from reacher import ReacherEnvironment
    from ddpg.fast import FastAgent
    from train import train
    env = ReacherEnvironment(num_agents=20, seed=0)
    agent = FastAgent(state_size=33, action_size=4, random_seed=0)
    scores = train(env, agent, out_dir="runs/nb")     # (episodes, agents) array

``train`` accepts any environment with the unityagents 0.4 interface (``brain_names``,
``reset(train_mode=...)[brain]``, ``step(actions)[brain]`` giving ``vector_observations``,
``rewards`` and ``local_done``), so the original Unity binary works too (``--unity PATH``).
The run folder (checkpoints, run.json, scores.csv, scores.png) is written by ``rundir``.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ddpg import reproducible, rundir, value_maps
from ddpg.cli import json_object, non_negative_int, positive_int
from ddpg.fast import FastAgent
from ddpg.metrics import Metrics
from ddpg.tasks import DEFAULT_ENV, GymEnvironment, Task, reacher_task, task_for
from ddpg.variants import VariantAgent, parse_config, variants_of
from ddpg_agent import Agent, DDPGConfig
from reacher.environment import EPISODE_DECISIONS as EPISODE_LIMIT

# The two learners compute the same update (tests/test_fast_agent.py); "fast" is ~2-3x
# quicker on a small CPU, "readable" is the code to learn DDPG from.
LEARNERS: dict[str, type[Agent]] = {"fast": FastAgent, "readable": Agent}
# Training schedule (see ``train``): once an episode's mean score reaches GOOD_SCORE, the
# next episode makes GOOD_UPDATES updates per learning step instead of the config's
# ``learn_updates``: none, so learning pauses while the policy is good and resumes after an
# episode below it.
GOOD_SCORE = 33.0
GOOD_UPDATES = 0
_UNSET = object()  # an option left out, whose default depends on the task

__all__ = ["GOOD_SCORE", "GOOD_UPDATES", "LEARNERS", "main", "train"]


class Stopped(KeyboardInterrupt):
    """Raised in the training loop by Ctrl-C (SIGINT), SIGTERM or SIGHUP."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextmanager
def _stop_on_signals(guard: dict[str, Any]) -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP (a batch scheduler, a closed terminal) stop training.
    While ``guard["saving"]`` is set, a signal waits in ``guard["pending"]`` until the files
    are written (the saver raises it then)."""

    def handler(signum: int, _frame: Any) -> None:
        if guard["saving"]:
            guard["pending"].append(signum)
        else:
            raise Stopped(signum)

    if threading.current_thread() is not threading.main_thread():  # handlers only work there
        yield
        return
    wanted = [signal.SIGINT, signal.SIGTERM] + ([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])
    previous = {sig: signal.signal(sig, handler) for sig in wanted}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def train(env: Any, agent: Agent, n_episodes: int = 300, max_t: int = EPISODE_LIMIT,
          target_score: float | None = rundir.SOLVE_SCORE, window: int = rundir.SOLVE_WINDOW,
          stop_when_solved: bool = True, out_dir: str | os.PathLike[str] | None = None,
          seed: int | None = None, quiet: bool = False, progress: bool = True,
          command: str | None = None, log: Callable[[str], None] | None = None,
          good_score: float | None = GOOD_SCORE, good_updates: int = GOOD_UPDATES,
          extra_record: dict[str, Any] | None = None, save_every: int = 10,
          save_buffer: bool = False, resume: dict[str, Any] | None = None,
          on_episode: Callable[[int, np.ndarray, np.ndarray], None] | None = None,
          reward_scale: float = 1.0, tensorboard_dir: str | os.PathLike[str] | None = None) -> np.ndarray:
    """Run DDPG episodes; return the scores array (episodes x agents).

    Stops at ``n_episodes`` or, with ``stop_when_solved``, at the first episode where the
    trailing ``window``-episode average of the per-episode mean over agents reaches
    ``target_score`` (None: the task has no threshold). ``max_t`` caps the decisions per episode; an episode cut there (or by
    the environment's time limit) is not a terminal state, the agent bootstraps through it.

    Schedule: a policy whose episode scored at least ``good_score`` (mean over agents) needs
    no more updates to stay good, so the next episode makes ``good_updates`` per learning
    step (default none: learning pauses); below it, the config's ``learn_updates``. In a run
    that solves at episode ~105 this saves most of the second half's updates
    (``good_score=None`` turns it off).

    With ``out_dir`` the run folder is written every ``save_every`` episodes and at the end,
    with the full training state (``save_buffer``: the replay buffer too), so the run can be
    resumed; ``resume`` is the ``loop`` part of a saved state, to continue from it. Ctrl-C,
    SIGTERM and SIGHUP abandon the current episode and save every finished one.

    ``reward_scale`` multiplies the rewards the agent learns from (the scores stay the
    task's): a task with large rewards (tasks.TASKS) keeps its Q-values near 1.

    Learning metrics (losses, mean Q, exploration scale, update rate; ``metrics.py``) go to
    metrics.csv in ``out_dir`` and, with ``tensorboard_dir``, to TensorBoard event files.

    ``on_episode(episode, trajectory, scores)`` is called after every episode with the
    first agent's states as the agent saw them, (steps + 1, state_size), and the episode's
    scores (``train.py --animate`` draws the value maps there).
    """
    from tqdm.auto import tqdm

    if n_episodes < 1 or max_t < 1:
        raise ValueError("n_episodes and max_t must be >= 1")
    brain_name = env.brain_names[0]
    info = env.reset(train_mode=True)[brain_name]
    n_agents = len(info.vector_observations)
    loop = resume or {"scores": [], "solved_at": None, "solve_time": None, "wall_before": 0.0}
    rows: list[np.ndarray] = [np.asarray(r, dtype=np.float64) for r in loop["scores"]]
    means: list[float] = [float(r.mean()) for r in rows]
    solved: int | None = loop["solved_at"]
    solve_time: float | None = loop["solve_time"]
    # Transitions experienced (one per live agent per step), in total and when solved.
    env_steps: int = loop.get("env_steps", 0)
    solve_steps: int | None = loop.get("solve_steps")
    stop: KeyboardInterrupt | None = None
    saved_episodes = len(rows) if resume else None
    guard: dict[str, Any] = {"saving": False, "pending": []}
    start = time.perf_counter() - loop["wall_before"]
    trajectory = np.empty((max_t + 1, agent.state_size)) if on_episode is not None else None
    bar = tqdm(total=n_episodes, initial=len(rows), disable=not progress, unit="ep", dynamic_ncols=True,
               leave=False)
    say = log or (lambda msg: tqdm.write(msg))
    # Fixed for the run: asked once (git runs in a subprocess), not at every save.
    provenance = {"versions": rundir.versions(), "machine": reproducible.machine(),
                  "git_commit": rundir.git_commit()} if out_dir is not None else {}
    pinned = reproducible.active()
    metrics = None
    if out_dir is not None or tensorboard_dir is not None:
        earlier = rundir.read_metrics(out_dir)[:len(rows)] if resume and out_dir is not None else []
        metrics = Metrics(agent, 0 if seed is None else seed, tensorboard_dir, earlier)

    def save(final: bool) -> None:
        """The run folder; between episodes also the training state (resumable from here)."""
        nonlocal saved_episodes
        guard["saving"] = True
        scores_now = np.array(rows, dtype=np.float64).reshape(len(rows), n_agents)
        wall = time.perf_counter() - start
        if stop is None:
            state = {"scores": [r.tolist() for r in rows], "solved_at": solved, "solve_time": solve_time,
                     "wall_before": wall, "env_steps": env_steps, "solve_steps": solve_steps}
            rundir.save_training_state(out_dir, agent, state, getattr(env, "random_state", None), save_buffer)
            saved_episodes = len(rows)
        record = {
            "seed": seed,
            "learner": agent.learner,
            "variants": variants_of(agent.config),
            "threads": agent.threads,
            "reproducible": pinned,
            "config": agent.config.to_dict(),
            "schedule": {"good_score": good_score, "good_updates": good_updates},
            "reward_scale": reward_scale,
            "state_size": agent.state_size,
            "action_size": agent.action_size,
            "n_agents": n_agents,
            "episodes_run": len(rows),
            "max_t": max_t,
            "target_score": target_score,
            "window": window,
            "stop_when_solved": stop_when_solved,
            "solved_at_episode": solved,
            "time_to_solve_s": None if solve_time is None else round(solve_time, 2),
            "env_steps": env_steps,
            "env_steps_to_solve": solve_steps,
            "wall_time_s": round(wall, 2),
            "final_average": float(scores_now.mean(axis=1)[-window:].mean()) if len(rows) else None,
            "learner_updates": agent.n_updates,
            "finished": final and stop is None,
            "interrupted": stop is not None,
            "signal": None if stop is None else getattr(stop, "signum", signal.SIGINT.value),
            "resumable_from_episode": saved_episodes,
            "save_buffer": save_buffer,
            "environment": type(env).__module__ + "." + type(env).__name__,
            **provenance,
            "command": command,
            "platform": platform.platform(),
            **(extra_record or {}),
        }
        rundir.write_run(out_dir, agent, scores_now, record)
        if metrics is not None:
            rundir.write_metrics(out_dir, metrics.rows)
        guard["saving"] = final  # after the final save, later signals are only noted
        if not final and guard["pending"]:  # a signal came while saving: stop now
            raise Stopped(guard["pending"][0])

    with _stop_on_signals(guard):
        try:
            for episode in range(len(rows) + 1, n_episodes + 1):
                t0 = time.perf_counter()
                if episode > len(loop["scores"]) + 1:  # the first episode uses the reset above
                    info = env.reset(train_mode=True)[brain_name]
                agent.reset()
                states = np.asarray(info.vector_observations, dtype=np.float64)
                score = np.zeros(n_agents)
                live = np.ones(n_agents, dtype=bool)  # agents whose episode is still running
                if on_episode is not None:
                    trajectory[0] = states[0]
                    steps = 0
                for _ in range(max_t):
                    actions = agent.act(states)
                    info = env.step(actions)[brain_name]
                    next_states = np.asarray(info.vector_observations, dtype=np.float64)
                    rewards = np.asarray(info.rewards, dtype=np.float64)
                    learned = rewards if reward_scale == 1.0 else rewards * reward_scale
                    done = np.asarray(info.local_done, dtype=bool)
                    # A time limit (max_reached; Reacher's only "done") is not a terminal state.
                    terminated = done & ~np.asarray(info.max_reached, dtype=bool)
                    if live.all():
                        agent.step(states, actions, learned, next_states, terminated)
                        env_steps += n_agents
                    else:  # an agent whose episode ended waits for the others: not experience
                        agent.step(states[live], actions[live], learned[live], next_states[live], terminated[live])
                        env_steps += int(live.sum())
                    score += rewards * live
                    if on_episode is not None and live[0]:
                        steps += 1
                        trajectory[steps] = next_states[0]
                    live &= ~done
                    states = next_states
                    if not live.any():
                        break
                if good_score is not None:  # the schedule: fewer updates while the policy is good
                    good = score.mean() >= good_score
                    agent.learn_updates = good_updates if good else agent.config.learn_updates
                rows.append(score)
                means.append(float(score.mean()))
                if on_episode is not None:
                    on_episode(episode, trajectory[:steps + 1].copy(), score.copy())
                avg = float(np.mean(means[-window:]))
                now = time.perf_counter()
                if metrics is not None:
                    metrics.episode(episode, score, avg, now - t0, now - start, env_steps)
                bar.update(1)
                bar.set_postfix(mean=f"{means[-1]:.2f}", avg=f"{avg:.2f}")
                if not quiet:
                    say(f"Episode {episode:4d}  min {score.min():6.2f}  max {score.max():6.2f}  "
                        f"mean {score.mean():6.2f}  avg{window} {avg:6.2f}  "
                        f"time {now - t0:5.2f}s  total {now - start:7.1f}s")
                if solved is None and target_score is not None and episode >= window and avg >= target_score:
                    solved, solve_time, solve_steps = episode, now - start, env_steps
                    say(f"Solved at episode {episode}: average {avg:.2f} over episodes "
                        f"{episode - window + 1}-{episode}, {solve_time:.1f}s")
                    if stop_when_solved:
                        break
                if out_dir is not None and episode % save_every == 0 and episode < n_episodes:
                    save(final=False)
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM / SIGHUP (Stopped)
            stop = exc
            guard["saving"] = True
            agent.settle()  # let a half-handed-over update end before saving
            say(f"Interrupted ({exc if isinstance(exc, Stopped) else 'SIGINT'}) after {len(rows)} complete "
                "episodes; saving what we have.")
        finally:
            guard["saving"] = True  # from here on, a signal waits: the run is being written
            bar.close()
        scores = np.array(rows, dtype=np.float64).reshape(len(rows), n_agents)
        if len(rows):
            last = scores[-window:].mean(axis=0)
            say(f"{window}-episode average per agent (last {min(window, len(rows))} episodes):")
            say("  " + "  ".join(f"{i}:{v:.2f}" for i, v in enumerate(last)))
        if out_dir is not None:
            save(final=True)
            say(f"Wrote the run (checkpoints, scores.csv, metrics.csv, run.json, scores.png, training state) "
                f"to {out_dir}")
        if metrics is not None:
            metrics.close()
    return scores


# ----------------------------------------------------------------------------- CLI
def build_parser() -> argparse.ArgumentParser:
    """Command-line options."""
    p = argparse.ArgumentParser(
        description="Train DDPG on the multi-agent Reacher; writes checkpoints, scores.csv, "
                    "run.json and scores.png into --out.")
    p.add_argument("--episodes", type=positive_int, default=None,
                   help="maximum number of episodes (default 300; a Gymnasium task's from tasks.TASKS)")
    p.add_argument("--max-episodes", type=positive_int, dest="episodes",
                   help="alias of --episodes")
    p.add_argument("--seed", type=non_negative_int, default=0, help="random seed (default 0)")
    p.add_argument("--out", default="runs/latest",
                   help="output folder (default runs/latest); one that holds a run needs --resume or --force")
    p.add_argument("--resume", metavar="DIR", default=None,
                   help="continue the run in DIR to --episodes in total, with its own settings (exactly as "
                        "if never stopped when it was saved with --save-buffer)")
    p.add_argument("--force", action="store_true", help="replace the run already in --out")
    p.add_argument("--save-every", type=positive_int, default=10,
                   help="write the run folder and the full training state every N episodes (default 10)")
    p.add_argument("--save-buffer", action="store_true",
                   help="also save the replay buffer's filled part, so --resume continues exactly; about "
                        "290 MB at one million transitions (the default buffer is full after 50 episodes "
                        "of 20 arms)")
    p.add_argument("--learner", choices=sorted(LEARNERS), default="fast",
                   help="'fast' (default): the hand-written two-thread learner of ddpg_fast.py; "
                        "'readable': the plain-autograd agent of ddpg_agent.py (same update, slower)")
    p.add_argument("--threads", type=int, choices=(1, 2), default=2,
                   help="fast learner: split each update over 2 threads (default) or run it on 1, "
                        "faster when another job keeps the second core busy (same numbers)")
    p.add_argument("--env", default=DEFAULT_ENV, metavar="ID",
                   help="'reacher' (default): the built-in 20-arm Reacher; or any Gymnasium environment id "
                        "with a Box action space, e.g. MountainCarContinuous-v0, Pendulum-v1, Reacher-v5, "
                        "UnityReacher-v0 (per-task settings: tasks.TASKS)")
    p.add_argument("--num-envs", type=positive_int, default=None,
                   help="--env ID: copies of the task stepped together, one scores column each (default 1)")
    p.add_argument("--agents", type=positive_int, default=None,
                   help="number of arms in the built-in environment (default 20; 1 is the course's "
                        "one-arm version, trained with its own settings: tasks.REACHER_ONE_ARM)")
    p.add_argument("--max-t", type=positive_int, default=None,
                   help=f"decisions per episode (default: the task's limit; Reacher: {EPISODE_LIMIT}, "
                        "which is also its maximum)")
    p.add_argument("--no-stop", action="store_true", help="keep training after the task is solved")
    p.add_argument("--target", type=float, default=None,
                   help=f"solve threshold of the 100-episode average (default: Reacher {rundir.SOLVE_SCORE:g}; "
                        "a Gymnasium task's from tasks.TASKS or its spec's reward_threshold)")
    p.add_argument("--config", type=json_object, default={},
                   help="JSON object of DDPGConfig overrides (or variants.VariantConfig keys: replay, "
                        "exploration, batch_norm, preset, ...), or a path to a JSON file")
    p.add_argument("--good-score", type=_good_score, default=_UNSET,
                   help=f"schedule: after an episode scoring at least this (mean over agents), "
                        f"make --good-updates updates per learning step (default {GOOD_SCORE:g} on Reacher, "
                        "off on Gymnasium tasks; 'nan' turns it off)")
    p.add_argument("--good-updates", type=non_negative_int, default=GOOD_UPDATES,
                   help=f"schedule: updates per learning step while the policy is good "
                        f"(default {GOOD_UPDATES}: learning pauses)")
    p.add_argument("--unity", metavar="PATH", default=None,
                   help="use the Unity binary at PATH (needs unityagents) instead of the "
                        "built-in environment")
    p.add_argument("--animate", action="store_true",
                   help="a task with a 2-D observation (MountainCarContinuous-v0): draw Q(s, mu(s)) and mu(s) "
                        "with the episode's trajectory every --animate-every episodes into value_maps/, and "
                        "at the end value_map.png and the animation value_maps.mp4 (GIF without ffmpeg)")
    p.add_argument("--animate-every", type=positive_int, default=5,
                   help="--animate: draw every N episodes (and the first and the last; default 5)")
    p.add_argument("--tensorboard", metavar="DIR", default=None,
                   help="also write the per-episode metrics (scores, losses, mean Q, exploration, updates/s; "
                        "always in metrics.csv) as TensorBoard event files into DIR: tensorboard --logdir DIR")
    p.add_argument("--reproducible", action="store_true",
                   help="pin the math libraries' code paths (AVX2) and thread counts, so the same seed gives the "
                        "same scores on any x86-64 CPU with AVX2 (reproducible.py; the program restarts itself "
                        "pinned); without it a run reproduces only on the machine that made it")
    p.add_argument("--quiet", action="store_true", help="no per-episode lines")
    p.add_argument("--no-progress", action="store_true", help="no tqdm progress bar")
    return p


def make_env(n_agents: int, seed: int, unity: str | None = None, env_id: str = DEFAULT_ENV) -> Any:
    """The built-in ReacherEnvironment, a Unity binary when ``unity`` is a path, or a
    Gymnasium task (``env_id``) with ``n_agents`` copies behind the same interface."""
    if env_id != DEFAULT_ENV:
        return GymEnvironment(env_id, num_envs=n_agents, seed=seed)
    from reacher.launch import make_env as open_env

    return open_env("builtin" if unity is None else unity, num_agents=n_agents, seed=seed)


def make_agent(learner: str, sizes: tuple[int, int, int], config: DDPGConfig, threads: int = 2) -> Agent:
    """The learner's agent; a config with variants (prioritized replay, NoisyNet, batch norm,
    Gaussian noise) gets ``variants.VariantAgent``, the readable learner with them."""
    switched_on = variants_of(config)
    if switched_on:
        if learner == "fast":
            print(f"The variants {switched_on} run on the readable learner (variants.VariantAgent)")
        return VariantAgent(*sizes, config=config)
    return FastAgent(*sizes, config=config, threads=threads) if learner == "fast" else Agent(*sizes, config=config)


def _good_score(text: str) -> float | None:
    """--good-score: a number, or 'off'."""
    if text.strip().lower() == "off":
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'off', got {text!r}") from None
    if not np.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number or 'off', got {text!r}")
    return value


def _settings(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Task | None:
    """Fill the options left unset from the task, which is returned: the built-in Reacher's
    (``tasks.reacher_task``: the one-arm version's settings, or None for DDPGConfig's
    defaults), or the Gymnasium task's entry in ``tasks.TASKS``."""
    if args.env == DEFAULT_ENV:
        if args.num_envs is not None:
            parser.error("--num-envs is for a Gymnasium task (--env ID); the built-in Reacher takes --agents")
        args.agents = 20 if args.agents is None else args.agents
        task = reacher_task(args.agents)  # its config and schedule yield to a resumed run's own
        args.max_t = EPISODE_LIMIT if args.max_t is None else args.max_t
        if args.max_t > EPISODE_LIMIT:
            parser.error(f"--max-t must be at most {EPISODE_LIMIT} (episodes end there), got {args.max_t}")
        if args.episodes is None:
            args.episodes = task.episodes if task else 300
        args.target = rundir.SOLVE_SCORE if args.target is None else args.target
        if args.good_score is _UNSET:
            args.good_score = task.good_score if task else GOOD_SCORE
        elif args.good_score is not None and args.good_score < 0:  # scores are >= 0: "never good"
            args.good_score = None
        return task
    if args.agents is not None:
        parser.error("--agents is for the built-in Reacher; a Gymnasium task (--env) takes --num-envs")
    if args.unity is not None:
        parser.error("--unity and --env are exclusive: the Unity binary is the Reacher task")
    task = task_for(args.env)
    args.agents = 1 if args.num_envs is None else args.num_envs
    args.episodes = task.episodes if args.episodes is None else args.episodes
    if args.good_score is _UNSET:
        args.good_score = task.good_score
    return task


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the process exit status (128 + the signal's number when a
    signal stopped training: 130 for Ctrl-C, 143 for SIGTERM)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    given = set(sys.argv[1:] if argv is None else argv)
    argv_used = sys.argv[1:] if argv is None else argv
    command = "python train.py " + " ".join(shlex.quote(a) for a in argv_used)
    resume: dict[str, Any] | None = None
    extra: dict[str, Any] = {}
    if args.resume is not None:
        fixed = sorted(given & {"--seed", "--config", "--learner", "--agents", "--max-t", "--unity", "--out",
                                "--good-score", "--good-updates", "--threads", "--force", "--env", "--num-envs",
                                "--target", "--reproducible"})
        if fixed:
            parser.error(f"--resume continues a run with its own settings; leave out {', '.join(fixed)}")
        try:
            record = rundir.read_record(args.resume)
        except (FileNotFoundError, ValueError) as exc:
            parser.error(f"--resume: {exc}")
        missing = [k for k in ("seed", "learner", "n_agents", "max_t", "target_score", "environment") if k not in record]
        if missing or not (Path(args.resume) / rundir.STATE_FILE).is_file():
            parser.error(f"--resume: {args.resume} was not saved by train.py with its training state "
                         f"(no {rundir.STATE_FILE}{'; run.json lacks ' + ', '.join(missing) if missing else ''})")
        if not (record["environment"].startswith("reacher.") or record.get("env_id")):
            parser.error("--resume: only runs on the built-in environment or a Gymnasium task can be resumed")
        args.out, args.seed, args.learner = args.resume, record["seed"], record["learner"]
        args.env = record.get("env_id") or DEFAULT_ENV
        args.max_t, args.target = record["max_t"], record["target_score"]
        if args.env == DEFAULT_ENV:
            args.agents = record["n_agents"]
        else:
            args.num_envs = record["n_agents"]
        args.threads = record.get("threads", 2)
        schedule = record.get("schedule", {})
        args.good_score = schedule.get("good_score")
        args.good_updates = schedule.get("good_updates", GOOD_UPDATES)
        args.config = record["config"]
        args.reproducible = bool(record.get("reproducible", False))
        if "--save-buffer" not in given:
            args.save_buffer = bool(record.get("save_buffer", False))
        extra["resumed"] = [*record.get("resumed", []), {"command": command}]
    try:
        reproducible.ensure(args.reproducible, command_line=argv is None)
    except reproducible.NotPinned as exc:
        parser.error(str(exc))
    task = _settings(parser, args)
    reward_scale = 1.0 if task is None else task.reward_scale
    if args.resume is not None:  # learn as the run did, whatever tasks.TASKS says now
        reward_scale = record.get("reward_scale", 1.0)
    try:
        config = parse_config({**(task.config if task else {}), **args.config})
    except (TypeError, ValueError) as exc:
        parser.error(f"--config: {exc}")
    try:
        rundir.check_out_dir(args.out, allow_existing_run=args.force or args.resume is not None)
    except ValueError as exc:
        parser.error(str(exc))
    if args.unity is not None and not os.path.exists(args.unity):
        parser.error(f"--unity: no such file: {args.unity}; expected the path of a Reacher Unity binary")
    torch.set_num_threads(1)  # small matrices: one thread per op is fastest on a small CPU
    torch.manual_seed(args.seed)
    try:
        env = make_env(args.agents, args.seed, args.unity, args.env)
    except (ImportError, RuntimeError) as exc:  # --unity without the unityagents client, or a failed start
        parser.error(f"--unity: {exc}")
    except ValueError as exc:  # an unknown Gymnasium id, or a task DDPG cannot drive
        parser.error(f"--env: {exc}")
    if args.force and rundir.clear_run(args.out):
        print(f"Replacing the run in {args.out} (--force)")
    try:
        if task is not None and args.env == DEFAULT_ENV:
            extra.update(task_why=task.why)
        elif task is not None:
            args.max_t = args.max_t or env.spec.max_episode_steps or EPISODE_LIMIT
            if args.target is None and args.resume is None:
                args.target = task.target if task.target is not None else env.spec.reward_threshold
            extra.update(env_id=args.env, task_target=task.target, task_why=task.why)
            if args.target is None:
                print(f"{args.env} has no solve threshold (pass --target): training runs {args.episodes} episodes")
        brain = env.brains[env.brain_names[0]]
        sizes = (brain.vector_observation_space_size, brain.vector_action_space_size, args.seed)
        agent = make_agent(args.learner, sizes, config, args.threads)
        mapper = None
        if args.animate:
            if args.env == DEFAULT_ENV:
                parser.error("--animate needs a Gymnasium task with a 2-D observation, e.g. "
                             "--env MountainCarContinuous-v0")
            try:
                mapper = value_maps.Recorder(env, agent, args.out, args.animate_every)
            except ValueError as exc:
                parser.error(f"--animate: {exc}")
        if args.resume is not None:
            try:
                saved = rundir.load_training_state(args.resume, agent)
            except (FileNotFoundError, ValueError) as exc:
                parser.error(f"--resume: {exc}")
            env.random_state = saved["environment"]
            resume = saved["loop"]
            extra["resumed"][-1].update(from_episode=len(resume["scores"]), exact=saved["exact"])
            if len(resume["scores"]) >= args.episodes:
                parser.error(f"--resume: the run already has {len(resume['scores'])} episodes; "
                             f"pass --episodes above that")
        train(env, agent, n_episodes=args.episodes, max_t=args.max_t,
              target_score=args.target, stop_when_solved=not args.no_stop,
              out_dir=args.out, seed=args.seed, quiet=args.quiet,
              progress=not args.no_progress, command=command,
              good_score=args.good_score, good_updates=args.good_updates, extra_record=extra,
              save_every=args.save_every, save_buffer=args.save_buffer, resume=resume, on_episode=mapper,
              reward_scale=reward_scale, tensorboard_dir=args.tensorboard)
        if mapper is not None:
            animation = mapper.finish()
            print(f"Wrote {Path(args.out) / rundir.VALUE_MAP_FILE} and the animation {animation}")
    finally:
        env.close()
    record = rundir.read_record(args.out)
    return 128 + record["signal"] if record["interrupted"] else 0


if __name__ == "__main__":
    sys.exit(main())
