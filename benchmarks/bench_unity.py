"""Steps per second of the built-in Reacher through the Unity protocol (the genuine
unityagents 0.4 client driving the stand-in executable) and directly, 20 and 1 agents;
also the stand-in's own share (message decoding, simulation, encoding, no client).

Run from the project venv: `.venv/bin/python -m benchmarks.bench_unity` (needs
`make unity` for the protocol figures). Each figure is the median over --repeats blocks of
--steps random-action steps, after a warm-up, in one environment per process.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
UNITY_PYTHON = ROOT / ".venv-unity" / "bin" / "python"
STANDINS = {
    20: "Reacher_Linux_NoVis/Reacher.x86_64",
    1: "Reacher_One_Linux_NoVis/Reacher_One_Linux_NoVis.x86_64",
}
WARMUP_STEPS = 20


def _time_blocks(env: object, num_agents: int, steps: int, repeats: int) -> list[float]:
    """Steps per second of each block of `steps` steps with uniform random actions."""
    rng = np.random.default_rng(0)
    brain = env.brain_names[0]
    env.reset(train_mode=True)
    for _ in range(WARMUP_STEPS):
        env.step(rng.uniform(-1, 1, (num_agents, 4)))[brain]
    rates = []
    for _ in range(repeats):
        actions = rng.uniform(-1, 1, (steps, num_agents, 4))
        start = time.perf_counter()
        for a in actions:
            env.step(a)[brain]
        rates.append(steps / (time.perf_counter() - start))
    return rates


class _StandInSide:
    """The stand-in's own work per step without the client: decode the action message,
    simulate, encode the reply. Looks like an environment to _time_blocks."""

    def __init__(self, num_agents: int) -> None:
        from envkit.unity import protocol as proto
        from envkit.unity.standin import StandIn
        from reacher.standin import SCENE

        self._proto = proto
        self._standin = StandIn(SCENE.factory(), num_agents)
        self.brain_names = self._standin.env.brain_names

    def _message(self, command: int) -> Any:
        msg = self._proto.UnityMessage()
        msg.header.status = 200
        msg.unity_input.rl_input.command = command
        return msg

    def reset(self, train_mode: bool = True) -> dict:
        self._standin.handle(self._message(self._proto.RESET))
        return {}

    def step(self, actions: np.ndarray) -> dict:
        msg = self._message(self._proto.STEP)
        per_agent = msg.unity_input.rl_input.agent_actions[self.brain_names[0]].value
        for a in actions.tolist():
            per_agent.add(vector_actions=a)
        reply = self._standin.handle(self._proto.UnityMessage.FromString(msg.SerializeToString()))
        reply.SerializeToString()
        return {self.brain_names[0]: None}

    def close(self) -> None:
        self._standin.close()


def child(mode: str, num_agents: int, steps: int, repeats: int, port: int) -> list[float]:
    """Measure in this process: 'protocol' needs unityagents, 'direct' the reacher package."""
    if mode == "protocol":
        from unityagents import UnityEnvironment

        env = UnityEnvironment(file_name=STANDINS[num_agents], base_port=port, no_graphics=True)
    elif mode == "standin":
        env = _StandInSide(num_agents)
    else:
        from reacher import ReacherEnvironment

        env = ReacherEnvironment(num_agents=num_agents, verbose=False, show_viewer=False)
    try:
        return _time_blocks(env, num_agents, steps, repeats)
    finally:
        env.close()


def run_child(python: Path | str, mode: str, args: argparse.Namespace, n: int) -> list[float]:
    """Run one measurement in a fresh process (the client allows one env per process)."""
    cmd = [str(python), __file__, "--child", mode, str(n), "--steps", str(args.steps)]
    cmd += ["--repeats", str(args.repeats), "--port", str(args.port)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{mode} benchmark with {n} agent(s) failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    """Print the medians, with the machine they were measured on."""
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000, help="steps per timed block")
    parser.add_argument("--repeats", type=int, default=5, help="timed blocks; median taken")
    parser.add_argument("--port", type=int, default=5105, help="client port (worker 0)")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "AGENTS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, n = args.child[0], int(args.child[1])
        print(json.dumps(child(mode, n, args.steps, args.repeats, args.port)))
        return

    print(
        f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPU(s), "
        f"Python {platform.python_version()}; median of {args.repeats} x {args.steps} "
        f"steps, random actions"
    )
    print(f"{'interface':<40} {'agents':>6} {'steps/s':>9} {'agent-steps/s':>14}  runs")
    runs = [
        ("stand-in side only (no client)", sys.executable, "standin"),
        ("direct (reacher.ReacherEnvironment)", sys.executable, "direct"),
    ]
    if UNITY_PYTHON.exists():
        runs.insert(0, ("protocol (unityagents 0.4 + stand-in)", UNITY_PYTHON, "protocol"))
    else:
        print(f"(no {UNITY_PYTHON}: run `make unity` for the protocol figures)")
    for label, python, mode in runs:
        for n in (20, 1):
            rates = run_child(python, mode, args, n)
            median = statistics.median(rates)
            spread = ", ".join(f"{r:.0f}" for r in rates)
            print(f"{label:<40} {n:>6} {median:>9.0f} {median * n:>14.0f}  [{spread}]")


if __name__ == "__main__":
    main()
