"""Benchmark: this project's DDPG against Stable-Baselines3's DDPG and TD3, at an equal budget of environment steps.

    make bench-gym                                            # installs requirements-bench.txt first
    .venv/bin/python -m benchmarks.bench_gym                  # every task: 5 seeds of ours, 3 of each peer
    .venv/bin/python -m benchmarks.bench_gym --tasks Pendulum-v1 --seeds 0-2 --peer-seeds 2 --methods ours sb3-td3
    .venv/bin/python -m benchmarks.bench_gym --tasks Pendulum-v1 --budget-steps 2000 --out /tmp/smoke.json

Every run trains until the average return of its last 100 training episodes reaches the
task's threshold, or until the task's budget of environment steps is spent, the same budget
for every method: rl-baselines3-zoo's ``n_timesteps`` where the zoo tunes the task, so the
peers get the training they were tuned for. The criterion is the same for all methods,
counted on their own training episodes (with exploration noise; SB3's through its
``Monitor`` wrapper). A run that has not reached the threshold when its budget is spent is
"not within N steps": how much longer it would have needed is not measured. The wall-clock
cap (``--cap-s``, default 6 h, far above any expected run) only guards against a runaway
run; a run it stops is reported as capped and left out of the counts and medians, since it
says nothing about the budget.

    task                       threshold   budget (env steps)   where the budget comes from
    MountainCarContinuous-v0   90          300,000              zoo n_timesteps (ddpg.yml and td3.yml)
    Pendulum-v1                -200        60,000               3 x zoo n_timesteps (20,000: only the window)
    UnityReacher-v0            30          6,000,000            no zoo entry: 300 episodes of 20 arms
    InvertedPendulum-v5        950         300,000              no zoo entry: fits this machine
    InvertedDoublePendulum-v5  9100        300,000              no zoo entry: fits this machine
    Reacher-v5                 -3.75       300,000              no zoo entry: fits this machine

(The reasons for the last four are at ``BENCH_TASKS``; UnityReacher-v0's steps count each
arm's, as both methods count them. Thresholds: Gymnasium's specs, Pendulum's customary -200
and the course's 30.)

Peers: Stable-Baselines3 (requirements-bench.txt) with the hyperparameters rl-baselines3-zoo
publishes for each task (``ZOO`` below, from the zoo's hyperparams/ddpg.yml and td3.yml at
commit 22e3ff2450fd, 23 April 2026). The zoo has no DDPG or TD3 entry for UnityReacher-v0
nor for the three MuJoCo tasks (nor their v4, v3 or v2 ids, in any version of those two
files): there the peers use the zoo's ``default`` entry for unlisted tasks, which is SB3's
defaults with ``normal`` action noise of 0.1 (UnityReacher-v0 on its native 20-arm vector
environment). Ours: ``train.py --env ID`` with the settings of ``ddpg.tasks.TASKS``.

Each run is its own process with one torch thread (``--jobs`` runs at once, default 2: this
machine has 2 cores); a peer run prints a ``#`` line with its steps, episodes and last-100
average every 10 minutes (``PROGRESS_EVERY_S``). Per task the table gives, for each method:
seeds solved within the budget, median environment steps and wall-clock to the threshold (a run
not solved within the budget ranks worse than any solved one; "not within N steps" when the
median run did not solve), the median final return (the last-100-episode average when the run
stopped), and the step and wall-clock medians' ratios to ours where both solve (above 1: the
peer needs more). The results file (``--out``) is rewritten after every run: the same command
run again after a stop skips the (task, method, seed) runs already in it.

A peer run of 300,000 steps takes 58-85 minutes here, so a sitting of a few hours would
leave its last hour idle or lose the runs under way. ``--suspend-after-s S`` suspends the
peer runs under way after S seconds instead: each keeps its model, replay buffer and
returns so far in ``OUT.suspended/`` (git-ignored) and the same command, run again,
continues it. Such a run's record lists ``resumed_at_steps``: the episode under way at a
suspension is not scored (its steps count), and each continued segment seeds its
environment afresh, so it is not the step-for-step twin of an unbroken run; its wall-clock
is the sum of its segments'.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import CancelledError, ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.bench_train import seed_list
from ddpg.command_line import reproducible
from ddpg.command_line.parsing import positive_float, positive_int
from ddpg.run_folder.atomic import write_json
from ddpg.run_folder.record_file import git_commit, read_record, versions
from ddpg.solved import median_with_unsolved

ROOT = Path(__file__).resolve().parent.parent

WINDOW = 100
# Set by a SIGUSR1 (the sweep's --suspend-after-s) in a run's own process: suspend the run.
SUSPEND = threading.Event()
# A continued segment's seeds: the run's seed plus this for each segment before it.
SEGMENT_SEED = 100_000
# A peer run says how far it has got this often (it runs for an hour or more, silent otherwise).
PROGRESS_EVERY_S = 600.0
# Marks a run's progress line on its stderr, which the sweep passes on to its own output.
PROGRESS_MARK = "bench_gym progress: "
# Serialises the sweep's lines: two runs' progress lines and the main thread's run lines come
# from different threads, and print's separate writes of a line and its newline interleave.
_SAY = threading.Lock()
ZOO_COMMIT = "22e3ff2450fd92033f7f032915e1f64894a09584"
# The zoo's budget for the three MuJoCo tasks, which it does not list: its ``default`` entry's
# 1e6 steps would take a peer 2.8-4.6 h a run at SB3's 60-100 steps/s on this 2-core machine,
# ~1.5 days for their 18 peer runs. 300,000 takes 50-83 min a run, the 18 in 8-12.5 h on 2
# jobs (a night); it is the zoo's own n_timesteps for the PyBullet counterparts it tunes
# (InvertedPendulumSwingupBulletEnv-v0, ReacherBulletEnv-v0), and 3 times the ~100,000 steps
# ours takes (1.7 times its slowest of 5 seeds, 172,674 on InvertedDoublePendulum-v5).
MUJOCO_BUDGET = 300_000
# Per task: the threshold, the budget of environment steps (every arm's step counted), copies
# stepped together (UnityReacher: 20 arms), and where the budget comes from.
BENCH_TASKS: dict[str, dict[str, Any]] = {
    "MountainCarContinuous-v0": {"threshold": 90.0, "budget_steps": 300_000, "num_envs": 1,
                                 "budget_from": f"rl-baselines3-zoo n_timesteps at {ZOO_COMMIT[:12]}"},
    # The zoo's 20,000 steps are 100 episodes of 200, the window itself: a run would be solved
    # within them only if its first 100 episodes averaged -200, which the peers' 10,000 random
    # steps (learning_starts) rule out, and ours took 21,400-22,200 (results/gymnasium/bench_gym.json). The
    # zoo sizes it to train a policy it then evaluates, not for an average of training episodes.
    # Three times it, 300 episodes (12-17 min for a peer that never solves), gives every method
    # 200 episodes past the window.
    "Pendulum-v1": {"threshold": -200.0, "budget_steps": 60_000, "num_envs": 1,
                    "budget_from": f"3 x rl-baselines3-zoo n_timesteps at {ZOO_COMMIT[:12]} (20,000: the window)"},
    # The zoo's default 1e6 would be 50 episodes of 20 arms, fewer than the window. 300 episodes
    # are TASKS' budget for ours (which solves at about 100); SB3 steps the 20 arms 82-100 times a
    # second here (1,650-2,000 steps/s, results/gymnasium/equal_steps.json), so a peer would spend them in
    # 50-61 min, but every seed of both peers solved at episode 100, in 17-20 min.
    "UnityReacher-v0": {"threshold": 30.0, "budget_steps": 6_000_000, "num_envs": 20,
                        "budget_from": "no zoo entry: 300 episodes of 20 arms (ours' TASKS budget)"},
    "InvertedPendulum-v5": {"threshold": 950.0, "budget_steps": MUJOCO_BUDGET, "num_envs": 1,
                            "budget_from": "no zoo entry: the most this machine fits (bench_gym.MUJOCO_BUDGET)"},
    "InvertedDoublePendulum-v5": {"threshold": 9100.0, "budget_steps": MUJOCO_BUDGET, "num_envs": 1,
                                  "budget_from": "no zoo entry: the most this machine fits (bench_gym.MUJOCO_BUDGET)"},
    "Reacher-v5": {"threshold": -3.75, "budget_steps": MUJOCO_BUDGET, "num_envs": 1,
                   "budget_from": "no zoo entry: the most this machine fits (bench_gym.MUJOCO_BUDGET)"},
}
# rl-baselines3-zoo, hyperparams/{ddpg,td3}.yml at ZOO_COMMIT (identical for both algorithms on
# these two tasks); n_timesteps is the budget above.
_ZOO_MCC = {"noise_type": "ornstein-uhlenbeck", "noise_std": 0.5, "gradient_steps": 1, "train_freq": 1,
            "learning_rate": 1e-3, "batch_size": 256, "net_arch": [400, 300]}
_ZOO_PENDULUM = {"gamma": 0.98, "buffer_size": 200_000, "learning_starts": 10_000, "noise_type": "normal",
                 "noise_std": 0.1, "gradient_steps": 1, "train_freq": 1, "learning_rate": 1e-3,
                 "net_arch": [400, 300]}
# The zoo's ``default`` entry (train_freq 1 and gradient_steps 1 are SB3's defaults too).
_ZOO_DEFAULT = {"noise_type": "normal", "noise_std": 0.1}
ZOO: dict[str, dict[str, Any]] = {
    "MountainCarContinuous-v0": _ZOO_MCC,
    "Pendulum-v1": _ZOO_PENDULUM,
    "UnityReacher-v0": _ZOO_DEFAULT,
    "InvertedPendulum-v5": _ZOO_DEFAULT,
    "InvertedDoublePendulum-v5": _ZOO_DEFAULT,
    "Reacher-v5": _ZOO_DEFAULT,
}
METHODS = ("ours", "sb3-ddpg", "sb3-td3")
SIX_HOURS = 6 * 3600.0


# ----------------------------------------------------------------------------- one run
def run_ours(task: str, seed: int, budget_steps: int) -> dict[str, Any]:
    """``train.py --env TASK --max-env-steps BUDGET`` (its ``main``, in this process); what its
    run.json says. A SIGTERM (``run_one``'s wall-clock guard) stops it as it stops train.py."""
    import train as train_script

    spec = BENCH_TASKS[task]
    # Episodes enough for the step budget to stop the run first; saved only at the end, as the
    # peers save nothing (train.py's default of every 10 episodes draws scores.png each time).
    episodes = str(math.ceil(budget_steps / spec["num_envs"]))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        train_script.main(["--env", task, "--seed", str(seed), "--out", str(out), "--episodes", episodes,
                           "--max-env-steps", str(budget_steps), "--save-every", episodes,
                           "--quiet", "--no-progress", "--target", str(spec["threshold"]),
                           "--num-envs", str(spec["num_envs"])])
        record = read_record(out)
    return {"env_steps_to_threshold": record.env_steps_to_solve, "seconds_to_threshold": record.time_to_solve_s,
            "solved_at_episode": record.solved_at_episode, "final_return": record.final_average,
            "episodes": record.episodes_run, "env_steps": record.env_steps, "wall_s": record.wall_time_s,
            "capped": record.interrupted}


def run_sb3(task: str, algo: str, seed: int, budget_steps: int, state: Path | None = None,
            suspend_at_steps: int | None = None, progress_every_s: float = PROGRESS_EVERY_S) -> dict[str, Any]:
    """One Stable-Baselines3 run of ``budget_steps`` steps at most (the zoo's ``n_timesteps``);
    a SIGTERM (``run_one``'s wall-clock guard) ends it after the step under way.

    A SIGUSR1 (``--suspend-after-s``), or reaching ``suspend_at_steps``, suspends it instead:
    the model, its replay buffer and the episode returns so far go to ``state``, and a later
    call with the same ``state`` continues the run from there, so a peer run of an hour or more
    can span sittings. The episode under way at the suspension is not scored (its steps count,
    as the budget's last one), and the continued segment seeds its environment and the model's
    generators afresh; ``resumed_at_steps`` records where each segment began, and
    ``segment_commits`` the code each segment ran.

    Every ``progress_every_s`` seconds it writes a progress line to stderr (``PROGRESS_MARK``,
    then steps, episodes and the last-100 average), which ``run_capped`` passes on: an hour
    with no sign of life would leave whoever waits unable to tell a slow run from a hung one."""
    import gymnasium as gym
    import torch
    from stable_baselines3 import DDPG, TD3
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.noise import NormalActionNoise, OrnsteinUhlenbeckActionNoise
    from stable_baselines3.common.vec_env import DummyVecEnv

    import reacher  # noqa: F401 (importing it registers UnityReacher-v0)

    torch.set_num_threads(1)
    spec, zoo = BENCH_TASKS[task], dict(ZOO[task])
    n = spec["num_envs"]
    if n == 1:
        env = DummyVecEnv([lambda: Monitor(gym.make(task))])
    else:
        env = arms_vec_env(gym.make_vec(task, num_envs=n, vectorization_mode="vector_entry_point"))
    env.seed(seed)
    actions = env.action_space.shape[-1]
    noise_cls = OrnsteinUhlenbeckActionNoise if zoo.pop("noise_type") == "ornstein-uhlenbeck" else NormalActionNoise
    std = zoo.pop("noise_std")
    noise = noise_cls(mean=np.zeros(actions), sigma=std * np.ones(actions))
    if n > 1:
        from stable_baselines3.common.noise import VectorizedActionNoise

        noise = VectorizedActionNoise(noise, n)
    policy_kwargs = {"net_arch": zoo.pop("net_arch")} if "net_arch" in zoo else None
    algorithm = DDPG if algo == "ddpg" else TD3
    progress = _suspended_progress(state)
    if progress is None:
        model = algorithm("MlpPolicy", env, action_noise=noise, seed=seed, device="cpu",
                          policy_kwargs=policy_kwargs, verbose=0, **zoo)
    else:  # a suspended run: its weights, optimisers, step count and replay buffer
        resumed = seed + SEGMENT_SEED * len(progress["resumed_at_steps"])
        env.seed(resumed)
        try:
            model = algorithm.load(state / "model.zip", env=env, device="cpu", action_noise=noise)
            model.load_replay_buffer(state / "replay_buffer.pkl")
        except Exception as exc:  # whatever broke it, the way out is the same
            raise RuntimeError(f"the suspended run in {state} cannot be read ({exc}); delete that folder to "
                               "start the run afresh") from exc
        model.set_random_seed(resumed)

    class Stop(BaseCallback):
        """Tracks the training episodes' returns; stops at the threshold or on a SIGTERM
        (``learn`` itself stops at the budget)."""

        def __init__(self) -> None:
            super().__init__()
            self.means: list[float] = []
            self.pending: list[float] = []  # the arms' returns of the episode under way (n > 1)
            self.solved: dict[str, Any] | None = None
            self.capped = self.suspended = False
            self.start = time.perf_counter()
            self.next_report = self.start + progress_every_s
            if progress is not None:  # the segments before this one: their episodes and seconds
                self.means = list(progress["means"])
                self.start -= progress["seconds"]

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "episode" in info:
                    self.pending.append(info["episode"]["r"])
            while len(self.pending) >= n:  # all arms of a Reacher episode end together
                self.means.append(float(np.mean(self.pending[:n])))
                del self.pending[:n]
                if self.solved is None and len(self.means) >= WINDOW and \
                        np.mean(self.means[-WINDOW:]) >= spec["threshold"]:
                    self.solved = {"episode": len(self.means), "steps": self.num_timesteps,
                                   "seconds": time.perf_counter() - self.start}
                    return False
            now = time.perf_counter()
            if now >= self.next_report:
                self.next_report = now + progress_every_s
                self.report(now)
            self.suspended = SUSPEND.is_set() or (suspend_at_steps is not None and
                                                  self.num_timesteps >= suspend_at_steps)
            return not (self.capped or self.suspended)

        def report(self, now: float) -> None:
            average = f"{np.mean(self.means[-WINDOW:]):.2f}" if self.means else "-"
            print(f"{PROGRESS_MARK}{task} sb3-{algo} seed {seed}: {self.num_timesteps:,} of {budget_steps:,} "
                  f"steps, {len(self.means)} episodes, last-{WINDOW} average {average} "
                  f"(threshold {spec['threshold']:g}), {(now - self.start) / 60:.0f} min", file=sys.stderr, flush=True)

    stop = Stop()
    previous = signal.signal(signal.SIGTERM, lambda *_: setattr(stop, "capped", True))
    resumed_at = [*progress["resumed_at_steps"], model.num_timesteps] if progress else []
    commits = [*(progress["segment_commits"] if progress else []), git_commit()]  # each segment's code
    try:
        model.learn(total_timesteps=budget_steps - model.num_timesteps, callback=stop,
                    reset_num_timesteps=progress is None)
    finally:
        signal.signal(signal.SIGTERM, previous)
    wall = time.perf_counter() - stop.start
    solved = stop.solved
    if stop.suspended and solved is None and not stop.capped and model.num_timesteps < budget_steps:
        if state is None:
            raise RuntimeError("a run suspended without a state folder to keep it in")
        _save_suspended(model, state, {"means": stop.means, "seconds": wall, "resumed_at_steps": resumed_at,
                                      "segment_commits": commits})
        return {"suspended": True, "env_steps": model.num_timesteps, "episodes": len(stop.means)}
    return {"env_steps_to_threshold": solved and solved["steps"],
            "seconds_to_threshold": solved and round(solved["seconds"], 2),
            "solved_at_episode": solved and solved["episode"],
            "final_return": float(np.mean(stop.means[-WINDOW:])) if stop.means else None,
            "episodes": len(stop.means), "env_steps": model.num_timesteps, "wall_s": round(wall, 2),
            "capped": stop.capped,
            **({"resumed_at_steps": resumed_at, "segment_commits": commits} if resumed_at else {})}


def _suspended_progress(state: Path | None) -> dict[str, Any] | None:
    """The progress of the suspended run kept in ``state``, None when there is none. A stop
    between ``_save_suspended``'s two renames leaves the earlier state as ``.old``: it is
    taken back, so no suspension can lose what an earlier one saved."""
    if state is None:
        return None
    old = state.with_name(state.name + ".old")
    if not state.exists() and old.is_dir():
        old.rename(state)
    progress = state / "progress.json"
    return json.loads(progress.read_text()) if progress.is_file() else None


def _save_suspended(model: Any, state: Path, progress: dict[str, Any]) -> None:
    """A suspended run's state, written beside ``state`` and then moved over it, so a stop
    while writing leaves the earlier state (or none) whole, never half of one."""
    partial = state.with_name(state.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    model.save(partial / "model.zip")
    model.save_replay_buffer(partial / "replay_buffer.pkl")
    write_json(partial / "progress.json", progress)
    old = state.with_name(state.name + ".old")
    if state.exists():
        state.rename(old)
    partial.rename(state)
    shutil.rmtree(old, ignore_errors=True)


def arms_vec_env(envs: Any) -> Any:
    """Stable-Baselines3's VecEnv interface over a Gymnasium native vector environment whose
    copies all end together (UnityReacher-v0): SB3 resets in the same step and reads the
    last observation from ``terminal_observation``; returns go in ``info["episode"]``."""
    from stable_baselines3.common.vec_env import VecEnv

    class ArmsVecEnv(VecEnv):
        def __init__(self) -> None:
            super().__init__(envs.num_envs, envs.single_observation_space, envs.single_action_space)
            self.envs, self.returns, self.lengths = envs, np.zeros(envs.num_envs), 0
            self._seed: int | None = None

        def reset(self) -> np.ndarray:
            obs, _ = self.envs.reset(seed=self._seed)
            self._seed = None
            self.returns[:], self.lengths = 0.0, 0
            return obs

        def step_async(self, actions: np.ndarray) -> None:
            self._actions = actions

        def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
            obs, rewards, terminated, truncated, _ = self.envs.step(self._actions)
            self.returns += rewards
            self.lengths += 1
            done = terminated | truncated
            infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
            if done.all():
                for i in range(self.num_envs):
                    infos[i] = {"terminal_observation": obs[i], "TimeLimit.truncated": bool(truncated[i]),
                                "episode": {"r": float(self.returns[i]), "l": self.lengths}}
                obs = self.reset()
            return obs, rewards.astype(np.float32), done, infos

        def seed(self, seed: int | None = None) -> list[int | None]:
            self._seed = seed
            return [seed] * self.num_envs

        def close(self) -> None:
            self.envs.close()

        def get_attr(self, name: str, indices: Any = None) -> list[Any]:
            return [getattr(self.envs, name)] * self.num_envs

        def set_attr(self, name: str, value: Any, indices: Any = None) -> None:
            setattr(self.envs, name, value)

        def env_method(self, name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
            return [getattr(self.envs, name)(*args, **kwargs)]

        def env_is_wrapped(self, wrapper_class: Any, indices: Any = None) -> list[bool]:
            return [False] * self.num_envs

    return ArmsVecEnv()


def run_method(task: str, method: str, seed: int, budget_steps: int, state: Path | None = None) -> dict[str, Any]:
    """One run of ``method``, in this process; a peer run keeps its state in ``state`` if
    suspended (ours runs for minutes, and finishes instead)."""
    if method == "ours":
        return run_ours(task, seed, budget_steps)
    return run_sb3(task, method.removeprefix("sb3-"), seed, budget_steps, state)


def within_budget(run: dict[str, Any], budget_steps: int) -> bool:
    """Whether the run reached the threshold inside the budget: the one definition of solved here."""
    steps = run["env_steps_to_threshold"]
    return steps is not None and steps <= budget_steps


def run_one(task: str, method: str, seed: int, budget_steps: int, cap_s: float, state: Path | None = None,
            suspend_s: float | None = None) -> dict[str, Any]:
    """One run in its own process (this script with --one), so runs share no state and
    ``--jobs`` of them use that many cores; its record for the results file. At ``cap_s`` the
    process gets a SIGTERM, as a batch scheduler's, and reports the run as capped. At
    ``suspend_s`` it gets a SIGUSR1: a peer run saves itself to ``state`` and reports
    ``suspended`` (the next call with that ``state`` continues it); ours finishes."""
    command = [sys.executable, "-m", "benchmarks.bench_gym", "--one", task, method, str(seed), str(budget_steps)]
    stdout, stderr, returncode = run_capped(command + ([str(state)] if state else []), cap_s, suspend_s=suspend_s)
    head = {"task": task, "method": method, "seed": seed}
    if returncode == -signal.SIGUSR1:  # asked before it could listen: nothing saved, it starts afresh
        return {**head, "suspended": True, "env_steps": 0, "episodes": 0}
    if returncode != 0:
        raise RuntimeError(f"{method} on {task}, seed {seed} failed ({returncode}): {stderr[-2000:]}")
    result = json.loads(stdout.strip().splitlines()[-1])
    if result.get("suspended"):
        return {**head, **result}
    return {**head, "solved": within_budget(result, budget_steps), **result}


def say(line: str) -> None:
    """Print ``line`` whole, as one write under a lock, so that lines the sweep's threads print
    at the same moment do not run into each other in its log."""
    with _SAY:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def run_capped(command: list[str], cap_s: float, grace_s: float = 120.0, suspend_s: float | None = None,
               progress: Callable[[str], object] = say) -> tuple[str, str, int]:
    """``command``'s stdout, stderr and exit status; a SIGTERM at ``cap_s`` seconds, which the
    command answers by finishing early (train.py saves and exits 143, a peer run stops), and a
    SIGKILL ``grace_s`` later if it has not: a run that ignores the request must not hang the sweep.
    A SIGUSR1 at ``suspend_s`` seconds, if sooner, asks it to suspend; the cap still holds.
    Its stderr lines that start with ``PROGRESS_MARK`` go to ``progress`` as they come, without
    the mark (prefixed ``#``, so a log of the sweep still reads as its table and comments)."""
    deadline = time.monotonic() + cap_s
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        stdout: list[str] = []
        stderr: list[str] = []

        def drain(stream: Any, lines: list[str], passes_on: bool) -> None:
            for line in stream:
                lines.append(line)
                if passes_on and line.startswith(PROGRESS_MARK):
                    progress("#   " + line.removeprefix(PROGRESS_MARK).rstrip("\n"))

        readers = [threading.Thread(target=drain, args=(proc.stdout, stdout, False), daemon=True),
                   threading.Thread(target=drain, args=(proc.stderr, stderr, True), daemon=True)]
        for reader in readers:
            reader.start()
        try:
            if suspend_s is not None and suspend_s < cap_s:
                try:
                    proc.wait(timeout=max(suspend_s, 0.0))
                except subprocess.TimeoutExpired:
                    proc.send_signal(signal.SIGUSR1)
            proc.wait(timeout=max(deadline - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for reader in readers:  # the pipes close when the process ends: what it wrote last is read
            reader.join()
        return "".join(stdout), "".join(stderr), proc.returncode


def run_line(run: dict[str, Any], budget_steps: int) -> str:
    """A run's line in the log."""
    head = f"{run['task']:26s} {run['method']:9s} seed {run['seed']}: "
    final = "-" if run["final_return"] is None else f"{run['final_return']:.2f}"
    if run["capped"]:
        return head + f"capped at {run['wall_s']:.0f} s ({run['env_steps']:,} steps, final return {final})"
    if within_budget(run, budget_steps):
        return head + (f"solved at episode {run['solved_at_episode']}, {run['env_steps_to_threshold']:,} steps, "
                       f"{run['seconds_to_threshold']:.1f} s")
    return head + f"not within {budget_steps:,} steps ({run['episodes']} episodes, final return {final})"


# ----------------------------------------------------------------------------- summary
def _median_within(runs: list[dict[str, Any]], key: str, budget_steps: int) -> float | None:
    """The median of ``key`` over ``runs``, a run not solved within the budget ranking worse than
    any solved one; None when the median run did not solve, or there are no runs."""
    figures = [r[key] if within_budget(r, budget_steps) else None for r in runs]
    return median_with_unsolved(figures) if figures else None


def summarise(runs: list[dict[str, Any]], budgets: dict[str, int]) -> dict[str, dict[str, Any]]:
    """Per task and method: seeds solved within the task's budget, the medians over the runs
    that were not capped (a run not solved within the budget ranks worse than any solved one),
    and the step and wall-clock medians' ratios to ours where both are solved figures."""
    table: dict[str, dict[str, Any]] = {}
    for task in dict.fromkeys(r["task"] for r in runs):
        budget, rows = budgets[task], {}
        for method in dict.fromkeys(r["method"] for r in runs if r["task"] == task):
            mine = [r for r in runs if r["task"] == task and r["method"] == method]
            measured = [r for r in mine if not r["capped"]]
            finals = [r["final_return"] for r in measured if r["final_return"] is not None]
            rows[method] = {
                "seeds": len(mine), "capped": len(mine) - len(measured),
                "solved": sum(within_budget(r, budget) for r in measured),
                "median_env_steps": _median_within(measured, "env_steps_to_threshold", budget),
                "median_seconds": _median_within(measured, "seconds_to_threshold", budget),
                "median_final_return": float(np.median(finals)) if finals else None,
            }
        ours = rows.get("ours", {})
        for row in rows.values():
            for key in ("env_steps", "seconds"):
                base, value = ours.get(f"median_{key}"), row[f"median_{key}"]
                row[f"ratio_{key}"] = None if not base or value is None else round(value / base, 2)
        table[task] = rows
    return table


def format_table(table: dict[str, dict[str, Any]], budgets: dict[str, int], thresholds: dict[str, float]) -> str:
    """The summary as text, one block a task."""
    def fmt(v: float | None, digits: int = 0) -> str:
        return "-" if v is None else f"{v:,.{digits}f}"

    lines = []
    for task, rows in table.items():
        budget = budgets[task]
        lines.append(f"{task} (threshold {thresholds[task]:g}, budget {budget:,} env steps)")
        lines.append(f"  {'method':9s} {'solved':>7s} {'capped':>6s} {'env steps to threshold':>26s} {'x ours':>6s} "
                     f"{'seconds':>8s} {'x ours':>6s} {'final return':>12s}")
        for method, r in rows.items():
            measured = r["seeds"] - r["capped"]
            if measured == 0:
                steps = "capped"
            elif r["median_env_steps"] is None:
                steps = f"not within {budget:,} steps"
            else:
                steps = fmt(r["median_env_steps"])
            lines.append(f"  {method:9s} {r['solved']:>3d} / {measured:<1d} {r['capped']:>6d} {steps:>26s} "
                         f"{fmt(r['ratio_env_steps'], 2):>6s} {fmt(r['median_seconds'], 1):>8s} "
                         f"{fmt(r['ratio_seconds'], 2):>6s} {fmt(r['median_final_return'], 2):>12s}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- the sweep
def sb3_version() -> str | None:
    """Stable-Baselines3's version, None when it is not installed."""
    try:
        import stable_baselines3
    except ImportError:
        return None
    return stable_baselines3.__version__


def _differences(earlier: dict[str, Any], tasks: dict[str, dict[str, Any]]) -> list[str]:
    """What in a results file differs from this command for the tasks both hold: runs at
    another budget, threshold or set of peer hyperparameters cannot be summarised with these."""
    differ = [f"{task} {key}" for task, spec in tasks.items() if task in earlier["tasks"]
              for key in ("threshold", "budget_steps", "num_envs") if earlier["tasks"][task].get(key) != spec[key]]
    differ += [f"{task} zoo hyperparameters" for task in tasks if task in earlier["zoo"] and earlier["zoo"][task] != ZOO[task]]
    return differ + (["window"] if earlier["window"] != WINDOW else [])


def _table_order(run: dict[str, Any]) -> tuple[int, int, int]:
    """BENCH_TASKS' order of tasks, METHODS' of methods (ours first), then the seed."""
    return list(BENCH_TASKS).index(run["task"]), METHODS.index(run["method"]), run["seed"]


def summary_and_table(tasks: dict[str, dict[str, Any]], runs: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    """The summary of ``runs`` and its table, under the budgets and thresholds a results file
    records for its ``tasks``."""
    budgets = {t: spec["budget_steps"] for t, spec in tasks.items()}
    table = summarise(runs, budgets)
    return table, format_table(table, budgets, {t: spec["threshold"] for t, spec in tasks.items()})


def write_results(out: Path, record: dict[str, Any], runs: list[dict[str, Any]]) -> str:
    """The results file with every run so far and their summary (and the table as .txt); the table."""
    table, text = summary_and_table(record["tasks"], runs)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_json(out, {**record, "summary": table, "runs": runs})
    out.with_suffix(".txt").write_text(record["command"] + "\n\n" + text + "\n")
    return text


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; 1 when a run failed (the runs before it are in the file)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--one"]:  # one run, in its own process; prints its result as JSON
        signal.signal(signal.SIGUSR1, lambda *_: SUSPEND.set())
        state = Path(argv[5]) if len(argv) > 5 else None
        print(json.dumps(run_method(argv[1], argv[2], int(argv[3]), int(argv[4]), state)))
        return 0
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    p.add_argument("--tasks", nargs="+", choices=list(BENCH_TASKS), default=list(BENCH_TASKS))
    p.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    p.add_argument("--seeds", default="5",
                   help="ours' seeds: a count N (seeds 0..N-1; default 5) or seeds and ranges, '0-4', '0,3,7-9'")
    p.add_argument("--peer-seeds", default="3", help="each peer's seeds, as --seeds (default 3: seeds 0-2)")
    p.add_argument("--budget-steps", type=positive_int, default=None,
                   help="every chosen task's budget of environment steps instead of its own (a smoke test; "
                        "the file records it)")
    p.add_argument("--cap-s", type=positive_float, default=SIX_HOURS,
                   help="wall-clock guard per run in seconds, against a runaway run; a run it stops is reported "
                        f"as capped (default {SIX_HOURS:g}: 6 h)")
    p.add_argument("--jobs", type=positive_int, default=2, help="runs at once (default 2, one per core)")
    p.add_argument("--suspend-after-s", type=positive_float, default=None,
                   help="after this many seconds, suspend the peer runs under way (each saves its model, replay "
                        "buffer and returns beside --out, in OUT.suspended/), let ours finish, and start no more "
                        "runs; the same command continues the suspended runs where they stopped")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "gymnasium" / "equal_steps.json"),
                   help="results file, rewritten after every run; the same command again continues it")
    args = p.parse_args(argv)
    seeds: dict[str, list[int]] = {}
    for option, text in (("--seeds", args.seeds), ("--peer-seeds", args.peer_seeds)):
        try:
            seeds[option] = seed_list(text)
        except argparse.ArgumentTypeError as exc:
            p.error(f"{option}: {exc}")
    tasks = {t: dict(BENCH_TASKS[t]) for t in args.tasks}
    if args.budget_steps is not None:
        for task, spec in tasks.items():
            if args.budget_steps % spec["num_envs"]:
                p.error(f"--budget-steps: {task} steps {spec['num_envs']} copies at a time; expected a multiple "
                        f"of {spec['num_envs']}, got {args.budget_steps}")
            spec.update(budget_steps=args.budget_steps, budget_from="--budget-steps")
    peers_version = None
    if set(args.methods) - {"ours"}:
        peers_version = sb3_version()
        if peers_version is None:
            p.error("the peers need Stable-Baselines3: .venv/bin/pip install -r requirements-bench.txt "
                    "(or `make bench-gym`)")

    out = Path(args.out)
    earlier: dict[str, Any] = {"tasks": {}, "zoo": {}, "window": WINDOW, "sittings": [], "runs": []}
    if out.is_file():  # a sweep stopped earlier: continue it
        try:
            earlier = json.loads(out.read_text())
        except json.JSONDecodeError as exc:
            p.error(f"--out {out} is not JSON ({exc.msg} at char {exc.pos}); expected a results file of this "
                    "benchmark, or a path that does not exist yet")
        if "sittings" not in earlier:
            p.error(f"--out {out} holds results of the earlier, wall-clock-capped version of this benchmark "
                    "(no step budgets), which cannot be continued; give another --out")
        differ = _differences(earlier, tasks)
        if differ:
            p.error(f"--out {out} holds runs with other settings ({', '.join(differ)}); give another --out "
                    "to start a new comparison")
    runs: list[dict[str, Any]] = earlier["runs"]
    done = {(r["task"], r["method"], r["seed"]) for r in runs}
    jobs = [(t, m, s) for t in args.tasks for m in args.methods
            for s in seeds["--seeds" if m == "ours" else "--peer-seeds"] if (t, m, s) not in done]
    if done:
        print(f"# continuing {out}: {len(done)} runs already in it, {len(jobs)} to go", flush=True)
    if not jobs:
        print(summary_and_table(earlier["tasks"], runs)[1])
        return 0
    sitting = {"command": "python -m benchmarks.bench_gym " + shlex.join(argv), "git_commit": git_commit(),
               "machine": reproducible.machine(), "platform": platform.platform(), "cpu_count": os.cpu_count(),
               "versions": {**versions(), "stable_baselines3": peers_version}, "jobs": args.jobs,
               "cap_s": args.cap_s, "started": time.strftime("%Y-%m-%d %H:%M:%S")}
    sittings = [*earlier["sittings"], sitting]
    # The file's own provenance is its latest sitting's; every run names the sitting that made it.
    record = {**sitting, "sittings": sittings, "window": WINDOW, "zoo_commit": ZOO_COMMIT,
              "tasks": {**earlier["tasks"], **tasks}, "zoo": {**earlier["zoo"], **{t: ZOO[t] for t in tasks}}}
    states = out.with_name(out.stem + ".suspended")

    def state_of(task: str, method: str, seed: int) -> Path:
        """Where the run keeps its state while suspended."""
        return states / f"{task}__{method}__{seed}"

    for task, method, seed in jobs:  # the plan, so a mistyped seed list shows before hours are spent
        progress = None if method == "ours" else _suspended_progress(state_of(task, method, seed))
        resumes = "" if progress is None else \
            f", from its saved state ({len(progress['means'])} episodes, {progress['seconds'] / 60:.0f} min)"
        print(f"#   to run: {task} {method} seed {seed}{resumes}", flush=True)
    suspend_at = None if args.suspend_after_s is None else time.monotonic() + args.suspend_after_s

    def start(task: str, method: str, seed: int) -> dict[str, Any] | None:
        """The run, or None when the suspension time came before its turn."""
        left = None if suspend_at is None else suspend_at - time.monotonic()
        if left is not None and left <= 0:
            return None
        return run_one(task, method, seed, tasks[task]["budget_steps"], args.cap_s,
                       state=state_of(task, method, seed), suspend_s=left)

    failed: list[str] = []
    waiting = 0
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(start, t, m, s) for t, m, s in jobs]
        for future in as_completed(futures):
            try:
                result = future.result()
            except CancelledError:
                continue
            except RuntimeError as exc:  # the runs under way finish and are kept; the rest wait for a re-run
                failed.append(str(exc))
                pool.shutdown(wait=False, cancel_futures=True)
                continue
            if result is None or result.get("suspended"):
                waiting += 1
                if result is not None:
                    say(f"{result['task']:26s} {result['method']:9s} seed {result['seed']}: suspended at "
                        f"{result['env_steps']:,} steps ({result['episodes']} episodes)")
                continue
            run = {**result, "sitting": len(sittings) - 1}
            runs.append(run)
            runs.sort(key=_table_order)  # runs finish in any order; the file and table read in this one
            say(run_line(run, tasks[run["task"]]["budget_steps"]))
            write_results(out, record, runs)
            shutil.rmtree(state_of(run["task"], run["method"], run["seed"]), ignore_errors=True)
    if states.is_dir() and not any(states.iterdir()):
        states.rmdir()
    if waiting:
        print(f"# {waiting} runs suspended or not started; the same command continues them "
              f"(suspended ones from {states})", flush=True)
    if failed:
        print("\n".join(failed) + f"\nthe runs that finished are in {out}; the same command continues", file=sys.stderr)
        return 1
    print(write_results(out, record, runs))
    print(f"Wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
