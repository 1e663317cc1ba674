"""Benchmark: this project's DDPG against Stable-Baselines3's DDPG and TD3, side by side.

    make bench-gym                                            # installs requirements-bench.txt first
    .venv/bin/python benchmarks/bench_gym.py                  # all tasks, 5 seeds, 2 runs at a time
    .venv/bin/python benchmarks/bench_gym.py --tasks Pendulum-v1 --seeds 3 --methods ours td3

Every run trains until the average return of 100 consecutive training episodes reaches the
task's threshold (Gymnasium's 90 for MountainCarContinuous-v0; -200 for Pendulum-v1; 30 for
the 20-arm UnityReacher-v0, over the per-episode mean of the arms), or until a cap: the
task's episode budget or a wall-clock limit (``--cap-s``), the same for every method. The
criterion is the same for all methods, counted on their own training episodes (SB3's through
its ``Monitor`` wrapper, with exploration noise, as ours are).

Peers: Stable-Baselines3 (requirements-bench.txt) with the hyperparameters that
rl-baselines3-zoo publishes for each task (``ZOO`` below, copied from the zoo's
hyperparams/ddpg.yml and td3.yml at commit 22e3ff2, April 2026), except the zoo's
``n_timesteps``, replaced by the caps above. The zoo has no entry for UnityReacher-v0: there
the peers use SB3's defaults with the zoo's usual ``normal`` noise of 0.1, on the native
20-arm vector environment (``--cap-s`` applies; state it when quoting the figures).
Ours: ``train.py --env ID`` with the settings of ``tasks.TASKS``.

Each run is its own process with one torch thread (``--jobs`` runs at once, default 2: this
machine has 2 cores). Per task the table gives, for each method: seeds solved, median
episodes and environment steps to the threshold, median wall-clock to it, and each median's
ratio to ours (above 1: the peer needs more). Unsolved runs count as worse than any solved
one in the medians. Results go to benchmarks/results/bench_gym.json (``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from ddpg import reproducible, rundir
from ddpg.cli import positive_int
from ddpg.rundir import git_commit, versions
from ddpg.solved import median_with_unsolved

ROOT = Path(__file__).resolve().parent.parent

WINDOW = 100
# Per task: the threshold, the episode budget, copies stepped together (UnityReacher: 20 arms).
BENCH_TASKS: dict[str, dict[str, Any]] = {
    "MountainCarContinuous-v0": {"threshold": 90.0, "episodes": 300, "num_envs": 1},
    "Pendulum-v1": {"threshold": -200.0, "episodes": 200, "num_envs": 1},
    "UnityReacher-v0": {"threshold": 30.0, "episodes": 300, "num_envs": 20},
}
# rl-baselines3-zoo, hyperparams/{ddpg,td3}.yml at 22e3ff2 (identical for both algorithms on
# these two tasks); n_timesteps left out (the caps replace it).
_ZOO_MCC = {"noise_type": "ornstein-uhlenbeck", "noise_std": 0.5, "gradient_steps": 1, "train_freq": 1,
            "learning_rate": 1e-3, "batch_size": 256, "net_arch": [400, 300]}
_ZOO_PENDULUM = {"gamma": 0.98, "buffer_size": 200_000, "learning_starts": 10_000, "noise_type": "normal",
                 "noise_std": 0.1, "gradient_steps": 1, "train_freq": 1, "learning_rate": 1e-3,
                 "net_arch": [400, 300]}
_NO_ZOO_ENTRY = {"noise_type": "normal", "noise_std": 0.1}
ZOO: dict[str, dict[str, Any]] = {
    "MountainCarContinuous-v0": _ZOO_MCC,
    "Pendulum-v1": _ZOO_PENDULUM,
    "UnityReacher-v0": _NO_ZOO_ENTRY,
}
METHODS = ("ours", "sb3-ddpg", "sb3-td3")


# ----------------------------------------------------------------------------- one run
def run_ours(task: str, seed: int, cap_s: float) -> dict[str, Any]:
    """train.py in a subprocess, killed (SIGTERM: it saves and stops) at the wall-clock cap."""
    spec = BENCH_TASKS[task]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        command = [sys.executable, str(ROOT / "train.py"), "--env", task, "--seed", str(seed), "--out", str(out),
                   "--episodes", str(spec["episodes"]), "--threads", "1", "--quiet", "--no-progress",
                   "--target", str(spec["threshold"])]
        if spec["num_envs"] > 1:
            command += ["--num-envs", str(spec["num_envs"])]
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            _, err = process.communicate(timeout=cap_s)
        except subprocess.TimeoutExpired:
            process.terminate()
            _, err = process.communicate()
        wall = time.perf_counter() - start
        try:
            record = rundir.read_record(out)
        except FileNotFoundError:
            raise RuntimeError(f"train.py wrote no run ({process.returncode}): {err[-2000:]}") from None
    return {"solved_at_episode": record.solved_at_episode, "env_steps_to_solve": record.env_steps_to_solve,
            "time_to_solve_s": record.time_to_solve_s, "episodes_run": record.episodes_run,
            "env_steps": record.env_steps, "wall_s": round(wall, 2), "capped": record.interrupted}


def run_sb3(task: str, algo: str, seed: int, cap_s: float) -> dict[str, Any]:
    """One Stable-Baselines3 run (in this process: the caller runs it in a subprocess)."""
    import gymnasium as gym
    import torch
    from stable_baselines3 import DDPG, TD3
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.noise import NormalActionNoise, OrnsteinUhlenbeckActionNoise
    from stable_baselines3.common.vec_env import DummyVecEnv

    import reacher

    reacher.register_with_gymnasium()

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
    model = (DDPG if algo == "ddpg" else TD3)("MlpPolicy", env, action_noise=noise, seed=seed, device="cpu",
                                             policy_kwargs=policy_kwargs, verbose=0, **zoo)

    class Stop(BaseCallback):
        """Tracks the training episodes' returns; stops at the threshold or a cap."""

        def __init__(self) -> None:
            super().__init__()
            self.means: list[float] = []
            self.pending: list[float] = []  # the arms' returns of the episode under way (n > 1)
            self.solved: dict[str, Any] | None = None
            self.start = time.perf_counter()

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
            return len(self.means) < spec["episodes"] and time.perf_counter() - self.start < cap_s

    stop = Stop()
    model.learn(total_timesteps=10**9, callback=stop)
    wall = time.perf_counter() - stop.start
    solved = stop.solved
    return {"solved_at_episode": solved and solved["episode"], "env_steps_to_solve": solved and solved["steps"],
            "time_to_solve_s": solved and round(solved["seconds"], 2), "episodes_run": len(stop.means),
            "env_steps": model.num_timesteps, "wall_s": round(wall, 2),
            "capped": solved is None and len(stop.means) < spec["episodes"]}


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


def run_one(task: str, method: str, seed: int, cap_s: float) -> dict[str, Any]:
    """One run in its own process (ours: train.py; a peer: this script with --one)."""
    if method == "ours":
        result = run_ours(task, seed, cap_s)
    else:
        command = [sys.executable, __file__, "--one", task, method, str(seed), str(cap_s)]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{method} on {task}, seed {seed} failed: {done.stderr[-2000:]}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"{task:26s} {method:9s} seed {seed}: " + (
        f"solved at episode {result['solved_at_episode']}, {result['env_steps_to_solve']} steps, "
        f"{result['time_to_solve_s']:.1f} s" if result["solved_at_episode"] else
        f"not solved ({result['episodes_run']} episodes, {result['wall_s']:.0f} s{', capped' if result['capped'] else ''})"),
        flush=True)
    return {"task": task, "method": method, "seed": seed, **result}


# ----------------------------------------------------------------------------- summary
def summarise(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per task and method: solved count, medians, and each median's ratio to ours."""
    table: dict[str, dict[str, Any]] = {}
    for task in dict.fromkeys(r["task"] for r in runs):
        rows: dict[str, Any] = {}
        for method in dict.fromkeys(r["method"] for r in runs if r["task"] == task):
            mine = [r for r in runs if r["task"] == task and r["method"] == method]
            rows[method] = {
                "seeds": len(mine),
                "solved": sum(r["solved_at_episode"] is not None for r in mine),
                "median_episodes": median_with_unsolved([r["solved_at_episode"] for r in mine]),
                "median_env_steps": median_with_unsolved([r["env_steps_to_solve"] for r in mine]),
                "median_seconds": median_with_unsolved([r["time_to_solve_s"] for r in mine]),
            }
        ours = rows.get("ours")
        for row in rows.values():
            for key in ("median_episodes", "median_env_steps", "median_seconds"):
                base, value = (ours or {}).get(key), row[key]
                row[key.replace("median", "ratio")] = None if not base or value is None else round(value / base, 2)
        table[task] = rows
    return table


def format_table(table: dict[str, dict[str, Any]]) -> str:
    def fmt(v: Any, digits: int = 0) -> str:
        return "-" if v is None else f"{v:,.{digits}f}"

    lines = []
    for task, rows in table.items():
        lines.append(f"{task}")
        lines.append(f"  {'method':9s} {'solved':>7s} {'episodes':>9s} {'x ours':>7s} {'env steps':>10s} "
                     f"{'x ours':>7s} {'seconds':>8s} {'x ours':>7s}")
        for method, r in rows.items():
            lines.append(f"  {method:9s} {r['solved']:>3d} / {r['seeds']:<1d} {fmt(r['median_episodes']):>9s} "
                         f"{fmt(r['ratio_episodes'], 2):>7s} {fmt(r['median_env_steps']):>10s} "
                         f"{fmt(r['ratio_env_steps'], 2):>7s} {fmt(r['median_seconds'], 1):>8s} "
                         f"{fmt(r['ratio_seconds'], 2):>7s}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--one"]:  # a peer's run, in its own process; prints its result as JSON
        task, method, seed, cap = argv[1], argv[2], int(argv[3]), float(argv[4])
        print(json.dumps(run_sb3(task, method.removeprefix("sb3-"), seed, cap)))
        return 0
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", nargs="+", choices=list(BENCH_TASKS), default=list(BENCH_TASKS))
    p.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    p.add_argument("--seeds", type=positive_int, default=5, help="seeds 0..N-1 (default 5)")
    p.add_argument("--cap-s", type=float, default=300.0,
                   help="wall-clock cap per run in seconds, the same for every method (default 300)")
    p.add_argument("--jobs", type=positive_int, default=2, help="runs at once (default 2, one per core)")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "bench_gym.json"))
    args = p.parse_args(argv)
    sb3_version = None
    if set(args.methods) - {"ours"}:
        try:
            import stable_baselines3
        except ImportError:
            p.error("the peers need Stable-Baselines3: .venv/bin/pip install -r requirements-bench.txt "
                    "(or `make bench-gym`)")
        sb3_version = stable_baselines3.__version__
    jobs = [(t, m, s) for t in args.tasks for s in range(args.seeds) for m in args.methods]
    started = time.time()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        runs = list(pool.map(lambda job: run_one(*job, args.cap_s), jobs))
    table = summarise(runs)
    text = format_table(table)
    print(text)
    record = {
        "command": "python benchmarks/bench_gym.py " + " ".join(argv), "git_commit": git_commit(),
        "versions": {**versions(), "stable_baselines3": sb3_version},
        "platform": platform.platform(), "machine": reproducible.machine(),
        "cpu_count": os.cpu_count(), "jobs": args.jobs, "cap_s": args.cap_s,
        "window": WINDOW, "tasks": {t: BENCH_TASKS[t] for t in args.tasks}, "zoo": {t: ZOO[t] for t in args.tasks},
        "elapsed_s": round(time.time() - started, 1), "summary": table, "runs": runs,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(record, indent=2) + "\n")
    Path(args.out).with_suffix(".txt").write_text(record["command"] + "\n\n" + text + "\n")
    print(f"Wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
