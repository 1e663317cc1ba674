"""Train the DDPG agent on the multi-agent Reacher and record the run.

Notebook use::

    from reacher import ReacherEnvironment
    from ddpg_agent import Agent
    from train import train
    env = ReacherEnvironment(num_agents=20, seed=0)
    agent = Agent(state_size=33, action_size=4, random_seed=0)
    scores = train(env, agent, out_dir="runs/nb")     # (episodes, agents) array

Command line::

    python train.py --episodes 300 --seed 0 --out runs/seed0

``train`` accepts any environment with the unityagents 0.4 interface (``brain_names``,
``reset(train_mode=...)[brain]``, ``step(actions)[brain]`` giving ``vector_observations``,
``rewards`` and ``local_done``), so the original Unity binary works too (``--unity PATH``).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ddpg_agent import Agent, DDPGConfig, load_checkpoints, save_checkpoints

SOLVE_SCORE = 30.0
SOLVE_WINDOW = 100

__all__ = ["SOLVE_SCORE", "SOLVE_WINDOW", "load_checkpoints", "main", "positive_int", "solved_at",
           "trailing_average", "train"]


def trailing_average(values: np.ndarray, window: int = SOLVE_WINDOW) -> np.ndarray:
    """Mean of the last ``window`` values at each position (fewer at the start)."""
    values = np.asarray(values, dtype=np.float64)
    csum = np.concatenate(([0.0], np.cumsum(values)))
    idx = np.arange(1, len(values) + 1)
    lo = np.maximum(0, idx - window)
    return (csum[idx] - csum[lo]) / (idx - lo)


def solved_at(episode_means: np.ndarray, target: float = SOLVE_SCORE,
              window: int = SOLVE_WINDOW) -> int | None:
    """First 1-based episode E >= window whose mean over episodes E-window+1..E >= target.

    This is the project's "solved-at episode" (the course's "solved in 63 episodes"
    is E = 163). Returns None if never reached.
    """
    means = np.asarray(episode_means, dtype=np.float64)
    if len(means) < window:
        return None
    avg = trailing_average(means, window)[window - 1:]
    hits = np.flatnonzero(avg >= target)
    return int(hits[0]) + window if hits.size else None


def _git_commit() -> str | None:
    """Commit of the code that ran (with '-dirty' if tracked files were modified)."""
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True,
                                text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=here, capture_output=True, text=True, timeout=10).stdout
        return commit + ("-dirty" if dirty.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def _versions() -> dict[str, str | None]:
    """Versions of the interpreter and the main libraries, for the run record."""
    out: dict[str, str | None] = {"python": platform.python_version(),
                                  "torch": torch.__version__, "numpy": np.__version__}
    for pkg in ("mujoco", "unityagents"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


def _write_scores_csv(path: Path, scores: np.ndarray) -> None:
    """One row per episode, one column per agent (plus the episode number)."""
    tmp = path.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["episode"] + [f"agent_{i}" for i in range(scores.shape[1])])
        for ep, row in enumerate(scores, start=1):
            writer.writerow([ep] + [f"{v:.4f}" for v in row])
    os.replace(tmp, path)


def _write_json(path: Path, record: dict[str, Any]) -> None:
    """Write JSON atomically (temp file + rename)."""
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record, indent=2) + "\n")
    os.replace(tmp, path)


def plot_scores(scores: np.ndarray, path: str | os.PathLike[str],
                target: float = SOLVE_SCORE, window: int = SOLVE_WINDOW) -> None:
    """Reward plot: per-episode mean over agents with min-max band, trailing average, target."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    if len(scores):
        ep = np.arange(1, len(scores) + 1)
        mean = scores.mean(axis=1)
        ax.fill_between(ep, scores.min(axis=1), scores.max(axis=1), alpha=0.25,
                        label="min-max over agents")
        ax.plot(ep, mean, lw=1, label="mean over agents")
        ax.plot(ep, trailing_average(mean, window), lw=2, label=f"trailing {window}-episode average")
        solved = solved_at(mean, target, window)
        if solved is not None:
            ax.axvline(solved, color="green", ls=":", label=f"solved at episode {solved}")
    ax.axhline(target, color="red", ls="--", label=f"+{target:g} target")
    ax.set_xlabel("episode")
    ax.set_ylabel("score")
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    tmp = path.with_name(path.stem + ".tmp.png")
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    os.replace(tmp, path)


def save_outputs(out_dir: str | os.PathLike[str], agent: Agent, scores: np.ndarray,
                 record: dict[str, Any], plot: bool = True) -> None:
    """Write checkpoints, scores.csv, run.json and scores.png into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    save_checkpoints(agent, out / "checkpoint_actor.pth", out / "checkpoint_critic.pth")
    _write_scores_csv(out / "scores.csv", scores)
    _write_json(out / "run.json", record)
    if plot:
        plot_scores(scores, out / "scores.png")


def train(env: Any, agent: Agent, n_episodes: int = 300, max_t: int = 1000,
          target_score: float = SOLVE_SCORE, window: int = SOLVE_WINDOW,
          stop_when_solved: bool = True, out_dir: str | os.PathLike[str] | None = None,
          seed: int | None = None, quiet: bool = False, progress: bool = True,
          command: str | None = None, log: Callable[[str], None] | None = None,
          ) -> np.ndarray:
    """Run DDPG episodes; return the scores array (episodes x agents).

    Stops at ``n_episodes`` or, with ``stop_when_solved``, at the first episode where the
    trailing ``window``-episode average of the per-episode mean over agents reaches
    ``target_score``. ``max_t`` caps the decisions per episode (the environment itself
    ends episodes at 1000); a cut episode is not a terminal, the agent bootstraps through
    it. Ctrl-C stops cleanly: completed episodes are kept and saved. With ``out_dir``
    the checkpoints, scores.csv, run.json and scores.png are written there at the end.
    """
    from tqdm.auto import tqdm

    if n_episodes < 1 or max_t < 1:
        raise ValueError("n_episodes and max_t must be >= 1")
    brain_name = env.brain_names[0]
    info = env.reset(train_mode=True)[brain_name]
    n_agents = len(info.vector_observations)
    rows: list[np.ndarray] = []
    means: list[float] = []
    solved: int | None = None
    solve_time: float | None = None
    interrupted = False
    start = time.perf_counter()
    bar = tqdm(total=n_episodes, disable=not progress, unit="ep", dynamic_ncols=True,
               leave=False)
    say = log or (lambda msg: tqdm.write(msg))
    try:
        for episode in range(1, n_episodes + 1):
            t0 = time.perf_counter()
            if episode > 1:
                info = env.reset(train_mode=True)[brain_name]
            agent.reset()
            states = np.asarray(info.vector_observations, dtype=np.float64)
            score = np.zeros(n_agents)
            for _ in range(max_t):
                actions = agent.act(states)
                info = env.step(actions)[brain_name]
                next_states = np.asarray(info.vector_observations, dtype=np.float64)
                rewards = np.asarray(info.rewards, dtype=np.float64)
                dones = np.asarray(info.local_done, dtype=bool)
                agent.step(states, actions, rewards, next_states, dones)
                score += rewards
                states = next_states
                if dones.any():
                    break
            rows.append(score)
            means.append(float(score.mean()))
            avg = float(np.mean(means[-window:]))
            now = time.perf_counter()
            bar.update(1)
            bar.set_postfix(mean=f"{means[-1]:.2f}", avg=f"{avg:.2f}")
            if not quiet:
                say(f"Episode {episode:4d}  min {score.min():6.2f}  max {score.max():6.2f}  "
                    f"mean {score.mean():6.2f}  avg{window} {avg:6.2f}  "
                    f"time {now - t0:5.2f}s  total {now - start:7.1f}s")
            if solved is None and episode >= window and avg >= target_score:
                solved, solve_time = episode, now - start
                say(f"Solved at episode {episode}: average {avg:.2f} over episodes "
                    f"{episode - window + 1}-{episode}, {solve_time:.1f}s")
                if stop_when_solved:
                    break
    except KeyboardInterrupt:
        interrupted = True
        say(f"Interrupted after {len(rows)} complete episodes; saving what we have.")
    finally:
        bar.close()
    wall = time.perf_counter() - start
    scores = np.array(rows, dtype=np.float64).reshape(len(rows), n_agents)
    if len(rows):
        last = scores[-window:].mean(axis=0)
        say(f"{window}-episode average per agent (last {min(window, len(rows))} episodes):")
        say("  " + "  ".join(f"{i}:{v:.2f}" for i, v in enumerate(last)))
    if out_dir is not None:
        record = {
            "seed": seed,
            "config": agent.config.to_dict(),
            "n_agents": n_agents,
            "episodes_run": len(rows),
            "max_t": max_t,
            "target_score": target_score,
            "window": window,
            "solved_at_episode": solved,
            "time_to_solve_s": None if solve_time is None else round(solve_time, 2),
            "wall_time_s": round(wall, 2),
            "final_average": float(scores.mean(axis=1)[-window:].mean()) if len(rows) else None,
            "learner_updates": agent.n_updates,
            "interrupted": interrupted,
            "environment": type(env).__module__ + "." + type(env).__name__,
            "versions": _versions(),
            "git_commit": _git_commit(),
            "command": command,
            "platform": platform.platform(),
        }
        save_outputs(out_dir, agent, scores, record)
        say(f"Wrote checkpoints, scores.csv, run.json and scores.png to {out_dir}")
    return scores


# ----------------------------------------------------------------------------- CLI
def _int_at_least(minimum: int, text: str, expected: str) -> int:
    """Parse an argparse integer >= minimum; the error says what was expected and got."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {value}")
    return value


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (also used by watch.py and the benchmarks)."""
    return _int_at_least(1, text, "a positive integer")


def _seed(text: str) -> int:
    """argparse type: an integer >= 0."""
    return _int_at_least(0, text, "a non-negative integer")


def _config_json(text: str) -> dict[str, Any]:
    """argparse type: a JSON object (inline, or the path of a .json file) of overrides."""
    source = text
    if not text.lstrip().startswith("{") and os.path.isfile(text):
        source = Path(text).read_text()
    try:
        value = json.loads(source)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(
            f"malformed JSON ({exc.msg} at char {exc.pos}); expected an object such as "
            "'{\"lr_actor\": 0.001, \"batch_size\": 128}' or a path to a .json file"
        ) from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(
            f"expected a JSON object of DDPGConfig fields, got {type(value).__name__}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """Command-line options."""
    p = argparse.ArgumentParser(
        description="Train DDPG on the multi-agent Reacher; writes checkpoints, scores.csv, "
                    "run.json and scores.png into --out.")
    p.add_argument("--episodes", type=positive_int, default=300,
                   help="maximum number of episodes (default 300)")
    p.add_argument("--max-episodes", type=positive_int, dest="episodes",
                   help="alias of --episodes")
    p.add_argument("--seed", type=_seed, default=0, help="random seed (default 0)")
    p.add_argument("--out", default="runs/latest", help="output folder (default runs/latest)")
    p.add_argument("--agents", type=positive_int, default=20,
                   help="number of arms in the built-in environment (default 20)")
    p.add_argument("--max-t", type=positive_int, default=1000,
                   help="decisions per episode (default 1000 = the environment's limit)")
    p.add_argument("--no-stop", action="store_true",
                   help="keep training after the task is solved")
    p.add_argument("--target", type=float, default=SOLVE_SCORE,
                   help="solve threshold of the 100-episode average (default 30)")
    p.add_argument("--config", type=_config_json, default={},
                   help="JSON object of DDPGConfig overrides, or a path to a JSON file")
    p.add_argument("--unity", metavar="PATH", default=None,
                   help="use the Unity binary at PATH (needs unityagents) instead of the "
                        "built-in environment")
    p.add_argument("--quiet", action="store_true", help="no per-episode lines")
    p.add_argument("--no-progress", action="store_true", help="no tqdm progress bar")
    return p


def make_env(n_agents: int, seed: int, unity: str | None = None) -> Any:
    """The built-in ReacherEnvironment, or a Unity binary when ``unity`` is a path."""
    from reacher.launch import make_env as open_env

    return open_env("builtin" if unity is None else unity, num_agents=n_agents, seed=seed)


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the process exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        config = DDPGConfig.from_dict({**DDPGConfig().to_dict(), **args.config})
    except (TypeError, ValueError) as exc:
        parser.error(f"--config: {exc}")
    torch.manual_seed(args.seed)
    env = make_env(args.agents, args.seed, args.unity)
    try:
        brain = env.brains[env.brain_names[0]]
        agent = Agent(brain.vector_observation_space_size, brain.vector_action_space_size,
                      args.seed, config=config)
        argv_used = sys.argv[1:] if argv is None else argv
        command = "python train.py " + " ".join(shlex.quote(a) for a in argv_used)
        train(env, agent, n_episodes=args.episodes, max_t=args.max_t,
              target_score=args.target, stop_when_solved=not args.no_stop,
              out_dir=args.out, seed=args.seed, quiet=args.quiet,
              progress=not args.no_progress, command=command)
    finally:
        env.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
