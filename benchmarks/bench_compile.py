"""Benchmark: does ``torch.compile`` of the readable update come within 1.3x of the fast learner?

Issue 59 asks whether a library path could replace the hand-written fast learner
(``ddpg/backends/fast_cpu.py``, which restates ``ddpg_agent.Agent.learn`` and so must be admitted
by fingerprint): if ``torch.compile`` of the readable update, compile included, trained the default
run within 1.3x of the fast learner's wall-clock on this 2-core CPU, the restated code could go and
an edited agent would train as fast as an unedited one. This script measures that, and nothing else:

    .venv/bin/python -m benchmarks.bench_compile              # the study (about 15 minutes on 2 cores)
    .venv/bin/python -m benchmarks.bench_compile --quick      # a smoke test: tiny settings, 2 episodes

1. Ways to compile the agent's own update (``Compiled``, a back-end as those of ``ddpg/backends``:
   ``learn_many`` and ``policy``), each in its own process: ``torch.compile(agent.learn)``, with and
   without compiled autograd, with a graph break after the critic's loss, and LeanRL's way (the loss
   functions compiled, forward and backward, then the optimisers' steps and the soft update). Each
   wraps the agent's bound methods; none restates them. What fails, and why, goes in the JSON.
2. Updates/s after warm-up (batch 256, the default config) of the readable update eagerly, each
   compiled way, and the fast learner on 1 and 2 threads; the compiled update's first call (the
   compile) and its largest difference from the eager update, one update from the same state.
3. The whole default run (``train.py``: 20 arms, seed 0, to solved), each in its own process, in
   rounds: fast learner, compiled with a cold Inductor cache (a fresh TORCHINDUCTOR_CACHE_DIR),
   compiled with that cache warm, eager readable. The medians of the process wall-clocks (compile,
   imports and saves included), the ratios to the fast learner, and the episodes to solve (a
   compiled update rounds differently, so its run may solve at another episode).

Run it on a quiet machine: the JSON records the load average before and after.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benchmarks.bench_train import learner_updates_per_s, warmed_up_agent
from ddpg import reproducible
from ddpg.rundir import git_commit, write_json
from ddpg.variants import parse_config

ROOT = Path(__file__).resolve().parent.parent
from ddpg_agent import Agent, DDPGConfig  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "learner_speed" / "compile.json"
PARTS = ("td_target", "critic_loss", "actor_loss")  # Agent's loss functions, each compiled (forward and backward)

# The ways tried, each: which of the agent's methods are compiled, and how.
WAYS: dict[str, str] = {
    "learn": "torch.compile(agent.learn)",
    "learn_compiled_autograd": "torch.compile(agent.learn), torch._dynamo.config.compiled_autograd on",
    "learn_break": "torch.compile(agent.learn), a graph break after the critic's loss (so each loss has its own graph)",
    "learn_break_compiled_autograd": "as learn_break, with compiled autograd",
    "parts": "td_target, critic_loss and actor_loss each compiled; optimise (backward, Adam, soft update) eager",
    "parts_step": "as parts, and each torch.optim.Adam's step compiled and the soft update compiled (LeanRL's way)",
}
RUN_WAY = "parts"  # the whole run's way (step 3) when none was measured; else the fastest measured


class Compiled:
    """A back-end (``agent.backend``) running the agent's own update through ``torch.compile``.

    It compiles the agent's bound methods in place (``way``: ``WAYS``), so ``Agent.learn`` as
    loaded, an edit included, is what runs. ``threads``: intra-op threads while learning (train.py
    sets one for acting; Inductor's C++ kernels take the count they were compiled with). Records
    how long each ``learn_many`` call took (the first one compiles).
    """

    name = "compiled"

    def __init__(self, agent: Agent, way: str = RUN_WAY, threads: int = 2) -> None:
        self.agent, self.way, self.threads = agent, way, threads
        self.calls: list[tuple[int, float]] = []  # (updates, seconds) of each learn_many
        torch._dynamo.config.compiled_autograd = way.endswith("compiled_autograd")
        if way.startswith("learn"):
            if "break" in way:
                plain = agent.critic_loss

                def critic_loss(*args: Any) -> torch.Tensor:
                    loss = plain(*args)
                    torch._dynamo.graph_break()  # the two losses' backward passes from separate graphs
                    return loss

                agent.critic_loss = critic_loss  # type: ignore[method-assign]
            self.learn = torch.compile(agent.learn)
        else:
            for part in PARTS:
                setattr(agent, part, torch.compile(getattr(agent, part)))
            if way == "parts_step":
                for optimizer in (agent.actor_optimizer, agent.critic_optimizer):
                    optimizer.step = torch.compile(optimizer.step)  # type: ignore[method-assign]
                agent.soft_update = torch.compile(type(agent).soft_update)  # type: ignore[method-assign]
            self.learn = agent.learn  # the agent's own learn, calling the compiled parts
        agent.backend = self

    def learn_many(self, n_updates: int) -> None:
        before = torch.get_num_threads()
        torch.set_num_threads(self.threads)
        t0 = time.perf_counter()
        try:
            for _ in range(n_updates):
                self.learn(self.agent.memory.sample())
        finally:
            self.calls.append((n_updates, time.perf_counter() - t0))
            torch.set_num_threads(before)

    def policy(self, states: np.ndarray) -> np.ndarray:
        """The agent's own ``policy``, eager (as the readable learner acts)."""
        self.agent.backend = None
        try:
            return self.agent.policy(states)
        finally:
            self.agent.backend = self

    def compile_s(self) -> float | None:
        """The first ``learn_many`` call's time less what its updates take once compiled."""
        if len(self.calls) < 2:
            return None
        later = [s / n for n, s in self.calls[1:] if n]
        return self.calls[0][1] - self.calls[0][0] * float(np.median(later))

    # What saving and resuming ask of a back-end: this one keeps nothing of its own.
    def settle(self) -> None: ...
    def store_optimizers(self) -> None: ...
    def load_optimizers(self) -> None: ...
    def weights_loaded(self) -> None: ...
    def extra_state(self) -> None: ...
    def loaded(self, extra: dict[str, Any] | None) -> None: ...


def _batch_agents(config: DDPGConfig) -> tuple[Agent, Agent, tuple[torch.Tensor, ...]]:
    """Two agents in the same state and one batch from their (identical) buffers."""
    agents = [warmed_up_agent(config, n=5_000, learner="readable", threads=1) for _ in range(2)]
    return agents[0], agents[1], agents[0].memory.sample()


def probe_way(way: str, threads: int, blocks: int, n_updates: int) -> dict[str, Any]:
    """One way, in this process: its difference from the eager update, then its updates/s."""
    config = DDPGConfig()
    torch.set_num_threads(1)
    result: dict[str, Any] = {"way": way, "how": WAYS[way], "threads": threads}
    eager, compiled, batch = _batch_agents(config)
    learner = Compiled(compiled, way, threads)
    try:
        t0 = time.perf_counter()
        learner.learn(tuple(t.clone() for t in batch))
        result["first_update_s"] = round(time.perf_counter() - t0, 2)  # the compile, mostly
    except Exception as exc:  # what failed is the finding
        result["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        result["where"] = traceback.format_exc().strip().splitlines()[-3].strip()
        return result
    eager.learn(batch)
    result["max_abs_difference_after_one_update"] = max(
        float((a - b).abs().max())
        for net in ("actor_local", "critic_local", "actor_target", "critic_target")
        for a, b in zip(getattr(eager, net).parameters(), getattr(compiled, net).parameters(), strict=True)
    )
    breaks = torch._dynamo.utils.counters["graph_break"]  # reason: count, over the compile above
    result["graph_breaks"] = sum(breaks.values())
    result["break_reasons"] = sorted({reason.splitlines()[0][:160] for reason in breaks})
    result["graphs"] = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    agent = warmed_up_agent(config, learner="readable", threads=1)
    learner = Compiled(agent, way, threads)
    learner.learn_many(20)  # compiled again for this agent (its own modules), then timed
    rates = []
    for _ in range(blocks):
        t0 = time.perf_counter()
        agent.learn_many(n_updates)
        rates.append(n_updates / (time.perf_counter() - t0))
    result["updates_per_s"], result["blocks"] = float(np.median(rates)), [round(r, 1) for r in rates]
    return result


def train_run(kind: str, out: str, episodes: int | None, threads: int, way: str = RUN_WAY) -> dict[str, Any]:
    """One whole run of train.py in this process: ``fast``, ``readable`` or ``compiled`` (the readable
    agent train.py builds, with ``Compiled`` attached)."""
    import train
    from ddpg import agents

    learners: list[Compiled] = []
    if kind == "compiled":
        make = agents.make_agent

        def make_compiled(learner: str, *args: Any, **kwargs: Any) -> Agent:
            agent = make("readable", *args, **kwargs)
            learners.append(Compiled(agent, way, threads))
            return agent

        agents.make_agent = make_compiled  # train.py imports it when it runs
    argv = ["--out", out, "--force"] + (["--learner", "readable"] if kind == "readable" else [])
    argv += ["--episodes", str(episodes)] if episodes else []
    status = train.main(argv)
    record = json.loads((Path(out) / "run.json").read_text())
    return {
        "status": status,
        "learner": record["learner"],
        "solved_at_episode": record["solved_at_episode"],
        "episodes_run": record["episodes_run"],
        "learner_updates": record["learner_updates"],
        "train_wall_s": record["wall_time_s"],
        "compile_s": round(learners[0].compile_s() or 0.0, 2) if learners else None,
        "first_learn_many_s": round(learners[0].calls[0][1], 2) if learners and learners[0].calls else None,
    }


def _child(argv: list[str], stats: Path, env: dict[str, str] | None = None) -> tuple[dict[str, Any], float]:
    """Run this script in a fresh process; what it wrote to ``stats`` and its wall-clock."""
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_compile", *argv, "--stats", str(stats)],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    if done.returncode != 0 or not stats.exists():
        tail = (done.stdout + done.stderr).strip().splitlines()[-5:]
        return {"error": f"exit {done.returncode}: " + " | ".join(tail)}, wall
    return json.loads(stats.read_text()), wall


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def median(values: list[float]) -> float | None:
    return round(float(np.median(values)), 1) if values else None


def study(args: argparse.Namespace) -> dict[str, Any]:
    quick = args.quick
    blocks, n_updates = (2, 50) if quick else (5, 1000)
    report: dict[str, Any] = {
        "command": "python -m benchmarks.bench_compile " + " ".join(shlex.quote(a) for a in args.argv),
        "git_commit": git_commit(),
        "torch": torch.__version__,
        "machine": reproducible.machine(),
        "cpus": os.cpu_count(),
        "load_average_before": load(),
        "quick": quick,
    }
    print(
        f"# {report['command']}\n# commit {report['git_commit']}  torch {torch.__version__}  "
        f"{reproducible.cpu_model()}  cpus {os.cpu_count()}  load {report['load_average_before']}",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="bench_compile_") as tmp:
        # 1-2: each compiled way in its own process (a fresh dynamo, its own cache), then the eager
        # readable update and the fast learner, each as bench_train measures them.
        ways = []
        probes = [(way, 2) for way in WAYS] + [(RUN_WAY, 1)]
        for i, (way, threads) in enumerate(probes):
            result, _ = _child(
                ["--probe", way, "--threads", str(threads), "--blocks", str(blocks), "--updates", str(n_updates)],
                Path(tmp) / f"probe{i}.json",
                {"TORCHINDUCTOR_CACHE_DIR": str(Path(tmp) / f"probe{i}")},
            )
            result.setdefault("way", way)
            result.setdefault("threads", threads)
            ways.append(result)
            rate = f"{result['updates_per_s']:.0f} updates/s" if "updates_per_s" in result else result.get("error")
            print(
                f"compiled {way} ({threads} thread(s)): {rate}; first update {result.get('first_update_s')} s; "
                f"graph breaks {result.get('graph_breaks')}; "
                f"difference {result.get('max_abs_difference_after_one_update')}",
                flush=True,
            )
        report["compiled_ways"] = ways
        config = parse_config({})
        rated = {}
        for key, learner, threads in (("eager", "readable", 1), ("fast2", "fast", 2), ("fast1", "fast", 1)):
            got, _ = _child(
                ["--rate", learner, "--threads", str(threads), "--blocks", str(blocks), "--updates", str(n_updates)],
                Path(tmp) / f"rate_{key}.json",
            )
            rated[key] = (got["updates_per_s"], got["blocks"]) if "error" not in got else (float("nan"), [got["error"]])
        eager, fast2, fast1 = rated["eager"], rated["fast2"], rated["fast1"]
        best = max((w for w in ways if "updates_per_s" in w), key=lambda w: w["updates_per_s"], default=None)
        run_way, run_threads = (best["way"], best["threads"]) if best else (RUN_WAY, 2)
        report["updates_per_s"] = {
            "readable_eager": round(eager[0], 1),
            "fast_2_threads": round(fast2[0], 1),
            "fast_1_thread": round(fast1[0], 1),
            "compiled_best": round(best["updates_per_s"], 1) if best else None,
            "compiled_best_way": f"{best['way']} ({best['threads']} threads)" if best else None,
            "batch": config.batch_size,
            "blocks": blocks,
            "updates_per_block": n_updates,
            "blocks_each": {"readable_eager": eager[1], "fast_2_threads": fast2[1], "fast_1_thread": fast1[1]},
        }
        print(
            f"readable eager (1 thread): {eager[0]:.0f} updates/s; fast learner: {fast2[0]:.0f} on 2 threads, {fast1[0]:.0f} on 1",
            flush=True,
        )

        # 3: whole runs, alternating, each its own process.
        cache = Path(tmp) / "run_cache"
        runs: dict[str, list[dict[str, Any]]] = {"fast": [], "compiled_cold": [], "compiled_warm": [], "readable": []}
        episodes = ["--episodes", "2"] if quick else []
        for r in range(args.rounds):
            for kind in runs:
                if kind == "compiled_cold":  # a fresh cache dir: nothing compiled before
                    cache = Path(tmp) / f"run_cache{r}"
                learner = kind.split("_")[0]
                result, wall = _child(
                    [
                        "--run",
                        learner,
                        "--way",
                        run_way,
                        "--out",
                        str(Path(tmp) / f"run_{kind}_{r}"),
                        "--threads",
                        str(run_threads),
                        *episodes,
                    ],
                    Path(tmp) / f"run_{kind}_{r}.json",
                    {"TORCHINDUCTOR_CACHE_DIR": str(cache)} if learner == "compiled" else None,
                )
                result.update(round=r, process_wall_s=round(wall, 1))
                runs[kind].append(result)
                print(
                    f"round {r} {kind}: {wall:.1f} s (train {result.get('train_wall_s')} s), solved at "
                    f"{result.get('solved_at_episode')}, compile {result.get('compile_s')} s "
                    f"{result.get('error', '')}",
                    flush=True,
                )
    report["runs"] = runs
    walls = {k: median([x["process_wall_s"] for x in v if "error" not in x]) for k, v in runs.items()}
    fast = walls["fast"]
    report["whole_run"] = {
        "median_process_wall_s": walls,
        "ratio_to_fast": {k: round(v / fast, 2) if v and fast else None for k, v in walls.items()},
        "median_compile_s": {
            k: median([x["compile_s"] for x in runs[k] if x.get("compile_s") is not None]) for k in ("compiled_cold", "compiled_warm")
        },
        "solved_at_episode": {k: sorted({x.get("solved_at_episode") for x in v}, key=str) for k, v in runs.items()},
        "rounds": args.rounds,
        "way": f"{run_way} ({WAYS[run_way]}), {run_threads} thread(s) while learning: the fastest way measured above",
    }
    ratio = report["whole_run"]["ratio_to_fast"]
    report["within_1_3x"] = {k: (v is not None and v <= 1.3) for k, v in ratio.items() if k != "fast"}
    report["load_average_after"] = load()
    print(
        f"whole run, median of {args.rounds}: "
        + ", ".join(f"{k} {v} s" for k, v in walls.items())
        + "; compiled/fast: "
        + ", ".join(f"{k} {v}" for k, v in ratio.items() if k != "fast")
        + f"; load after {report['load_average_after']}",
        flush=True,
    )
    return report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="tiny settings: 2 episodes a run, 50 updates a block, 1 round")
    p.add_argument("--rounds", type=int, default=2, help="rounds of whole runs (default 2)")
    p.add_argument("--json", default=str(OUT), help=f"results file (default {OUT.relative_to(ROOT)})")
    # what the study's own processes run
    p.add_argument("--probe", choices=WAYS, help=argparse.SUPPRESS)
    p.add_argument("--run", choices=("fast", "compiled", "readable"), help=argparse.SUPPRESS)
    p.add_argument("--rate", choices=("fast", "readable"), help=argparse.SUPPRESS)
    p.add_argument("--way", choices=WAYS, default=RUN_WAY, help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    p.add_argument("--episodes", type=int, help=argparse.SUPPRESS)
    p.add_argument("--threads", type=int, default=2, help=argparse.SUPPRESS)
    p.add_argument("--blocks", type=int, default=5, help=argparse.SUPPRESS)
    p.add_argument("--updates", type=int, default=1000, help=argparse.SUPPRESS)
    p.add_argument("--stats", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.argv = sys.argv[1:] if argv is None else argv
    if args.probe:
        with _quiet_stdout():
            result = probe_way(args.probe, args.threads, args.blocks, args.updates)
        Path(args.stats).write_text(json.dumps(result))
        return 0
    if args.rate:  # in its own process, as every figure here: the code as it is on disk now
        torch.set_num_threads(1)  # as train.py
        rate, rates = learner_updates_per_s(parse_config({}), args.rate, args.threads, n_updates=args.updates, blocks=args.blocks)
        Path(args.stats).write_text(json.dumps({"updates_per_s": rate, "blocks": rates}))
        return 0
    if args.run:
        result = train_run(args.run, args.out, args.episodes, args.threads, args.way)
        Path(args.stats).write_text(json.dumps(result))
        return 0
    if args.quick:
        args.rounds = 1
    report = study(args)
    write_json(args.json, report)
    print(f"# wrote {args.json}")
    return 0


@contextlib.contextmanager
def _quiet_stdout() -> Iterator[None]:
    """The learners' one line each, kept off the probe's output."""
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
        yield


if __name__ == "__main__":
    sys.exit(main())
