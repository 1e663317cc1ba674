"""The one place that reads benchmarks/results/: every table and figure in README.md, Report.md
and docs/ is made here, and so is the results index (benchmarks/results/README.md).

Each generated block in those Markdown files is a one-line cog comment naming a block of this
module, with the block's output below it:

    <!-- [[[cog show("twenty_seeds") ]]] -->
    ...generated text...
    <!-- [[[end]]] -->

``make docs`` (``python -m benchmarks.catalogue``) regenerates every block in place;
``python -m benchmarks.catalogue --check`` fails, showing the difference, when a committed page
differs from what the results files give (tests/test_docs_generated.py runs it). The prose
around the blocks is free to change; a figure that comes from a result belongs in a block.

Each study folder of benchmarks/results/ has a manifest, ``study.toml``: its title, the
question it answers, and one entry per result (its date and whether it is current or which
result superseded it; for a result whose file does not record them, its command, commit and
machine). ``index()`` builds the results index from those and from the JSON records themselves.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import json
import re
import statistics
import sys
import tomllib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
# The pages whose blocks `make docs` regenerates, in this order.
PAGES = ["README.md", "Report.md", "docs/*.md", "benchmarks/results/README.md"]
MANIFEST = "study.toml"
INDEX = "README.md"


# --------------------------------------------------------------------------- reading results

def _files() -> list[Path]:
    return sorted(p for p in RESULTS.rglob("*") if p.is_file())


def path(name: str) -> Path:
    """A result file by its name (or its tail, e.g. ``gym_probes/ip_p3_s0.json``), in whichever
    study folder holds it; a name that is not exactly one file is an error."""
    found = [p for p in _files() if p.as_posix().endswith("/" + name)]
    if len(found) != 1:
        raise FileNotFoundError(f"benchmarks/results/ holds {len(found)} files named {name}")
    return found[0]


def rel(name: str) -> str:
    """The path of a result file from the repository root, as the docs name it."""
    return path(name).relative_to(ROOT).as_posix()


def load(name: str) -> dict[str, Any]:
    return json.loads(path(name).read_text())


def text(name: str) -> str:
    return path(name).read_text()


def seeds(*names: str) -> list[dict[str, Any]]:
    """The seeds of one or more bench_train files, in seed order."""
    return sorted((s for name in names for s in load(name)["seeds"]), key=lambda s: s["seed"])


def glob(pattern: str) -> list[str]:
    """The names of the result files matching a glob pattern (``study/pattern``), sorted."""
    return sorted(p.name for p in RESULTS.glob(pattern))


# --------------------------------------------------------------------------- formatting

def ep(value: int | float | None) -> str:
    """A solved-at episode, or 'unsolved'."""
    return "unsolved" if value is None else f"{value:g}"


def num(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def listing(values: Iterable[Any], last: str = "and") -> str:
    """'a, b and c'."""
    values = [str(v) for v in values]
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + f" {last} {values[-1]}"


def span(values: Iterable[float], form: str = "{:.1f}", unit: str = "") -> str:
    """'low-high' of some values."""
    values = sorted(values)
    return f"{form.format(values[0])}-{form.format(values[-1])}{unit}"


def median(values: Iterable[float]) -> float:
    return statistics.median(list(values))


def pct(value: float) -> str:
    return f"{100 * value:.0f}%"


def table(header: list[str], rows: Iterable[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# --------------------------------------------------------------------------- blocks

BLOCKS: dict[str, Callable[..., str]] = {}


def block(fn: Callable[..., str]) -> Callable[..., str]:
    BLOCKS[fn.__name__] = fn
    return fn


def show(name: str, *args: Any, **kwargs: Any) -> None:
    """Write a block's text into the page cog is generating (its one-line comment calls this)."""
    import cog

    out = BLOCKS[name](*args, **kwargs).rstrip("\n")
    cog.outl(out)


# --------------------------------------------------------------------------- bench_train's records

def lowest_after_first_30(seed: dict[str, Any]) -> float:
    """The lowest episode mean between a run's first episode scoring 30 and its solve."""
    means = seed["episode_means"]
    return min(means[seed["first_30"] - 1:seed["solved_at"] or len(means)])


def distribution(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """bench_train's figures over seeds from one or more files: unsolved ranks worst,
    nearest-rank percentiles (benchmarks/bench_train.py's rules)."""
    from benchmarks.bench_train import rank_with_unsolved
    from ddpg.solved import median_with_unsolved

    solved = [s["solved_at"] for s in runs]
    done = [s for s in runs if s["solved_at"] is not None]
    firsts = [s["first_30"] for s in runs if s.get("first_30") is not None]
    return {"list": ", ".join(ep(v) for v in solved), "n": len(runs), "n_solved": len(done),
            "median": median_with_unsolved(solved), "p90": ep(rank_with_unsolved(solved, 0.9)),
            "worst": ep(rank_with_unsolved(solved, 1.0)),
            "updates": median(s["updates"] for s in done) if done else None,
            "wall": median(s["wall_s"] for s in done) if done else None,
            "first_30": median(firsts) if firsts else None}


def files_note(*patterns: str) -> str:
    """'(`benchmarks/results/study/a.txt`, ...)': the files a block stands on, by the names or
    glob patterns (``study/pattern``) given."""
    return "`" + "`, `".join(f"benchmarks/results/{p}" for p in patterns) + "`"


def _config_of(bench: dict[str, Any]) -> dict[str, Any]:
    return bench.get("config", {})


# The 20-arm defaults over seeds 0-19: each the next's predecessor.
TWENTY = {
    "gamma095": [f"bench_train_gamma095_20seeds_{p}.json" for p in ("6_13", "0_1", "2_5_7_10", "11_12_14_19")],
    "layer_norm": ["bench_train_layer_norm_20seeds_4_3_9_0-8.json", "bench_train_layer_norm_20seeds_13_10-19.json"],
    "layer_norm_var_mean": ["bench_train_layer_norm_var_mean_20seeds_9_0-8.json",
                            "bench_train_layer_norm_var_mean_20seeds_13_15_10-19.json"],
    "three_step": [f"bench_train_new_default_20seeds_{r}.json" for r in ("0-4", "5-9", "10-14", "15-19")],
    "one_step": ["bench_train_default_20seeds_0-9.json", "bench_train_default_20seeds_10-19.json"],
}
TWENTY_FILES = {"gamma095": "bench_train_gamma095_20seeds_*", "layer_norm": "bench_train_layer_norm_20seeds_*",
                "layer_norm_var_mean": "bench_train_layer_norm_var_mean_20seeds_*",
                "three_step": "bench_train_new_default_20seeds_*", "one_step": "bench_train_default_20seeds_*"}


def twenty(key: str) -> list[dict[str, Any]]:
    return seeds(*TWENTY[key])


def twenty_dist(key: str) -> dict[str, Any]:
    return distribution(twenty(key))


def commit_of(name: str) -> str:
    return _short(load(name)["git_commit"])


# --------------------------------------------------------------------------- the committed run

def committed_run() -> dict[str, Any]:
    return json.loads((ROOT / "checkpoint_run.json").read_text())


@block
def committed_run_summary() -> str:
    """README: the committed run in one sentence."""
    run = committed_run()
    m = run["machine"]
    return (f"The committed run (seed {run['seed']}, the default settings) **solved the {run['n_agents']}-agent Reacher "
            f"at episode {run['solved_at_episode']} in {run['time_to_solve_s']:.1f} s** of wall-clock on a "
            f"{m['cpu_count']}-core {m['cpu']} (no GPU), alone on the machine: the average over episodes "
            f"{run['solved_at_episode'] - 99}-{run['solved_at_episode']} of the per-episode mean score was "
            f"{run['final_average']:.2f} (`checkpoint_run.json`).")


def checkpoint_eval() -> dict[str, str]:
    t = text("checkpoint_eval.txt")
    twenty_ = re.search(r"20 arm\(s\), 100 episodes, seed 2024: mean ([\d.]+) \(episodes from ([\d.]+) to ([\d.]+)\)", t)
    one = re.search(r"1 arm\(s\), 100 episodes, seed 2025: mean ([\d.]+)", t)
    return {"twenty": twenty_[1], "low": twenty_[2], "high": twenty_[3], "one": one[1]}


@block
def checkpoint_scores() -> str:
    """The committed weights played without noise (benchmarks/eval_checkpoints.py)."""
    e = checkpoint_eval()
    return (f"Played without noise, the committed weights score **{e['twenty']}** on average over 100 episodes of "
            f"the 20-agent environment (every episode between {e['low']} and {e['high']}) and **{e['one']}** on the "
            f"1-agent environment (`.venv/bin/python benchmarks/eval_checkpoints.py`, output in "
            f"{files_note('committed_run/checkpoint_eval.txt')}).")


@block
def committed_run_report() -> str:
    """Report: the committed run, its record and its learning figures."""
    run = committed_run()
    m = run["machine"]
    scores = list(csv.DictReader((ROOT / "checkpoint_scores.csv").open()))
    means = [statistics.fmean(float(v) for k, v in r.items() if k.startswith("agent_")) for r in scores]
    first_30 = next(i + 1 for i, v in enumerate(means) if v >= 30)
    return (f"`.venv/bin/python {run['command'].removeprefix('python ')}` (what `make run` runs, without the progress "
            f"bar; seed {run['seed']}, the defaults, commit {_short(run['git_commit'])}; `checkpoint_run.json` records "
            f"the command) **solved the task at episode {run['solved_at_episode']} in {run['time_to_solve_s']:.1f} s** "
            f"of wall-clock (average of episodes {run['solved_at_episode'] - 99}-{run['solved_at_episode']}: "
            f"{run['final_average']:.2f}) on a {m['cpu_count']}-core {m['cpu']}, alone, with "
            f"{run['learner_updates']:,} learner updates. The per-episode mean first passes 30 at episode {first_30}.")


# --------------------------------------------------------------------------- the 20-arm defaults

@block
def defaults_table() -> str:
    """README and Report: each 20-arm default over seeds 0-19."""
    rows = [("gamma 0.95, layer norm in the critic, 3-step returns, warm-up 20,000, pause while good (today)",
             "gamma095", "`.venv/bin/python benchmarks/bench_train.py --seeds 0-9 --threads 1 --skip-updates` (and "
             "`--seeds 10-19` beside it); measured at commit {commit} with `--config '{{\"gamma\": 0.95}}'`"),
            ("the same with gamma 0.99 (commits 38f155f to 095362e)", "layer_norm",
             "`--config '{{\"gamma\": 0.99}}'`, at commit {commit} without it"),
            ("the same without layer norm (commits 4a72298 to 57be2df)", "three_step", "the same, at commit {commit}"),
            ("one-step, warm-up 2,560, 10 updates while good (the default until commit 4a72298)", "one_step",
             "the same, at commit {commit}")]
    out = []
    for what, key, command in rows:
        d = twenty_dist(key)
        commit = commit_of(TWENTY[key][0])
        out.append([what, f"{d['n_solved']}/{d['n']}", f"{d['median']:g}, {d['p90']}, {d['worst']}",
                    f"{d['updates']:,.0f}", command.format(commit=commit) + f"; `{TWENTY_FILES[key]}`"])
    return table(["default, 20 arms, seeds 0-19", "solved", "solved at: median, 90th percentile, worst",
                  "median updates to solve", "command; result files (`default_20_seeds/`)"], out)


@block
def twenty_seeds() -> str:
    """Report: today's default seed by seed, and its distribution."""
    runs = twenty("gamma095")
    d = distribution(runs)
    rows = [[s["seed"], ep(s["solved_at"]), s["first_30"], f"{s['updates']:,}", f"{s['wall_s']:.1f} s"] for s in runs]
    rows.append(["**median**", f"**{d['median']:g}**", f"{d['first_30']:g}", f"{d['updates']:,.0f}", f"{d['wall']:.1f} s"])
    return (table(["seed", "solved at episode", "first episode with mean >= 30", "learner updates", "wall-clock"], rows)
            + f"\n\n{d['n_solved']}/{d['n']} solved, {sum(s['solved_at'] == 100 for s in runs)} of them at episode 100, "
            f"the earliest possible; median {d['median']:g}, 90th percentile {d['p90']}, worst {d['worst']} ({files_note('default_20_seeds/' + TWENTY_FILES['gamma095'] + '.txt')}, commit "
            f"{commit_of(TWENTY['gamma095'][0])}, two seeds at a time, one thread each).")


def _one_sitting(old: str, new: str) -> tuple[dict[str, Any], dict[str, Any]]:
    return load(old), load(new)


@block
def side_by_side_summary() -> str:
    """README: each new default's wall-clock beside the one it replaced, seeds 0-4, one sitting."""
    old, new = _one_sitting("bench_train_ab_gamma_default_c705db2.json", "bench_train_ab_gamma095_c705db2.json")
    old2, new2 = _one_sitting("bench_train_ab_old_default_e613d18_second.json",
                              "bench_train_ab_layer_norm_default_38f155f.json")
    return (f"On seeds 0-4 in one sitting (side by side, one thread each) today's default solved in a median of "
            f"{new['median_wall_s']:.1f} s against the layer-norm default's {old['median_wall_s']:.1f} s, and that one "
            f"in {new2['median_wall_s']:.1f} s against the one-step default's {old2['median_wall_s']:.1f} s in an "
            f"earlier sitting ({files_note('defaults_side_by_side/')}).")


# --------------------------------------------------------------------------- the settings

HYPERPARAMETER_NOTES = {
    "buffer_size": "replay buffer, in transitions",
    "batch_size": "transitions per update, drawn uniformly with replacement",
    "gamma": "discount: a horizon of about 1 / (1 - gamma) decisions",
    "tau": "soft update of the target networks, after each update",
    "lr_actor": "Adam",
    "lr_critic": "Adam",
    "weight_decay": "L2 on the critic's weights",
    "learn_every": "decisions between learning steps",
    "learn_updates": "updates per learning step",
    "warmup": "transitions stored before the first update",
    "grad_clip": "max norm of the critic's gradient",
    "noise_sigma": "OU noise: scale of the Gaussian increments, one process per arm and action",
    "noise_theta": "OU noise: pull towards 0",
    "noise_decay": "noise scale multiplied by this each episode (1: no decay)",
    "noise_min": "floor of the decayed noise",
    "n_step": "n-step returns",
    "critic_layer_norm": "layer norm before the critic's hidden ReLUs",
    "goal_paths": "each episode stored again against this many more goal paths (variant)",
}


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:g}"
    return "-" if v is None else str(v)


@block
def hyperparameters() -> str:
    """Report: DDPGConfig's defaults (ddpg_agent.py), the schedule (ddpg/loop.py) and the one-arm
    settings (ddpg/tasks.py's REACHER_ONE_ARM), as the code holds them."""
    from ddpg.loop import GOOD_SCORE, GOOD_UPDATES
    from ddpg.tasks import REACHER_ONE_ARM
    from ddpg_agent import DDPGConfig

    config = DDPGConfig()
    one = REACHER_ONE_ARM.config
    rows = []
    for f in dataclasses.fields(config):
        if f.name.startswith(("actor_fc", "critic_fc")) or f.name == "noise_min":
            continue  # the networks' table; noise_min joins noise_decay's row
        v, o = getattr(config, f.name), one.get(f.name, getattr(config, f.name))
        if f.name == "noise_decay":
            v, o = (f"{_value(x)}, floor {_value(one.get('noise_min', config.noise_min))}" for x in (v, o))
            rows.append(["`noise_decay`, `noise_min`", v, o, "noise scale multiplied by this each episode (1: no "
                         "decay), never below the floor"])
            continue
        rows.append([f"`{f.name}`", _value(v), _value(o), HYPERPARAMETER_NOTES.get(f.name, "")])
    for key, v in one.items():
        if not hasattr(config, key):
            rows.append([f"`{key}`", "-", _value(v), HYPERPARAMETER_NOTES.get(key, "")])
    good = "-" if REACHER_ONE_ARM.good_score is None else _value(REACHER_ONE_ARM.good_score)
    rows.append(["schedule: good score, good updates", f"{_value(GOOD_SCORE)}, {_value(GOOD_UPDATES)}",
                 "- (no schedule)" if good == "-" else f"{good}, {_value(GOOD_UPDATES)}",
                 "after an episode scoring the good score, the next makes `good updates` updates per learning "
                 "step (0: a pause) until one scores below (`train.py`)"])
    return table(["setting", "20 arms (`DDPGConfig`)", "one arm (`tasks.REACHER_ONE_ARM`)", "what"], rows)


@block
def networks() -> str:
    """Report: the two networks' layers, from DDPGConfig's sizes and the environment's."""
    from ddpg_agent import DDPGConfig
    from reacher.environment import ACTION_SIZE
    from reacher.observation import OBSERVATION_SIZE as STATE_SIZE

    c = DDPGConfig()
    norm = "layer norm, " if c.critic_layer_norm else ""
    return table(["network", "layers"], [
        ["actor", f"{STATE_SIZE} -> {c.actor_fc1} (ReLU) -> {c.actor_fc2} (ReLU) -> {ACTION_SIZE} (tanh)"],
        ["critic", f"{STATE_SIZE} -> {c.critic_fc1} ({norm}ReLU); [{c.critic_fc1} + {ACTION_SIZE} action] -> "
                   f"{c.critic_fc2} ({norm}ReLU) -> 1"]])


# --------------------------------------------------------------------------- one arm

ONE_ARM = {
    "gamma099": ["bench_train_one_arm.json"],
    "gamma095": [f"bench_train_one_arm_gamma095_{part}.json" for part in ("0", "1", "2_4_6_8", "3_5_7_9")],
    "paths4": ["bench_train_one_arm_goal_paths4_u20_a.json", "bench_train_one_arm_goal_paths4_u20_b.json"],
    "paths9": [f"bench_train_one_arm_goal_paths9_u20_{part}.json" for part in ("1", "a", "b")],
    "paths19": [f"bench_train_one_arm_goal_paths19_u20_{part}.json" for part in ("screen_0", "screen_1", "2-9")],
}
ONE_ARM_FILES = {"gamma099": "bench_train_one_arm.txt", "gamma095": "bench_train_one_arm_gamma095_*.txt",
                 "paths4": "bench_train_one_arm_goal_paths4_u20_{a,b}.*",
                 "paths9": "bench_train_one_arm_goal_paths9_u20_{1,a,b}.*",
                 "paths19": "bench_train_one_arm_goal_paths19_u20_{screen_0,screen_1,2-9}.*"}
ONE_ARM_LABEL = {"gamma099": "gamma 0.99", "gamma095": "gamma 0.95, no goal paths", "paths4": "four goal paths",
                 "paths9": "nine goal paths (today's)", "paths19": "nineteen goal paths"}


def one_arm(key: str) -> list[dict[str, Any]]:
    return seeds(*ONE_ARM[key])


def _one_arm_medians(runs: list[dict[str, Any]]) -> tuple[float, float, float]:
    return (median(s["solved_at"] for s in runs), median(s["first_30"] for s in runs),
            median(lowest_after_first_30(s) for s in runs))


@block
def one_arm_pair(before: str, after: str) -> str:
    """Two one-arm settings seed by seed: solved at, first 30 and the lowest episode between them
    (each), and the second's wall-clock; the median row."""
    b_runs, a_runs = one_arm(before), one_arm(after)
    rows = [[a["seed"], f"{b['solved_at']}, {b['first_30']}, {lowest_after_first_30(b):.2f}",
             f"{a['solved_at']}, {a['first_30']}, {lowest_after_first_30(a):.2f}", f"{a['wall_s']:.1f} s"]
            for b, a in zip(b_runs, a_runs, strict=True)]
    (s0, f0, l0), (s1, f1, l1) = _one_arm_medians(b_runs), _one_arm_medians(a_runs)
    rows.append(["**median**", f"**{s0:g}**, {f0:g}, {l0:.2f}", f"**{s1:g}**, {f1:g}, {l1:.2f}",
                 f"{median(s['wall_s'] for s in a_runs):.1f} s"])
    b, a = ONE_ARM_LABEL[before], ONE_ARM_LABEL[after]
    return (table(["seed", f"{b}: solved at, first 30, lowest after", f"{a}: solved at, first 30, lowest after",
                   f"{a.removesuffix(' (today' + chr(39) + 's)')}: wall-clock"], rows)
            + f"\n\nFrom {files_note('one_arm/' + ONE_ARM_FILES[before], 'one_arm/' + ONE_ARM_FILES[after])}.")


@block
def one_arm_history() -> str:
    """Report and README: the one-arm median over its settings so far."""
    parts = []
    for key in ("paths9", "paths4", "gamma095", "gamma099"):
        runs = one_arm(key)
        d = distribution(runs)
        parts.append([ONE_ARM_LABEL[key], f"{len(runs)}", f"{d['n_solved']}/{d['n']}", f"{d['median']:g}",
                      f"{d['worst']}", f"`{ONE_ARM_FILES[key]}`"])
    return table(["one arm, settings", "seeds", "solved", "median solved at", "worst", "result files (`one_arm/`)"],
                 parts)


# --------------------------------------------------------------------------- the ablation

@block
def ablation_table() -> str:
    """Report: bench_ablation.py's table of ablation.json (the same text as ablation.md)."""
    from benchmarks import bench_ablation

    data = load("ablation.json")
    rows = bench_ablation.summarise(data["runs"], data["baseline"]["runs"])
    if rows != data["summary"]:
        raise ValueError("ablation.json's summary is not its runs' (re-run bench_ablation.py --table-only)")
    out = bench_ablation.table(rows).rstrip("\n")
    if out + "\n" != text("ablation.md") and out != text("ablation.md"):
        raise ValueError("ablation.md is not ablation.json's table (re-run bench_ablation.py --table-only)")
    return out


# --------------------------------------------------------------------------- the GPU

def gpu() -> dict[str, Any]:
    return load("gpu_nvidia_h200.json")


@block
def gpu_costs() -> str:
    """docs/training.md and Report: one update of the default networks on each device."""
    c = gpu()["costs"]
    return table(["update", "ms"], [
        ["eagerly on the GPU (autograd: the course's code with `device = \"cuda\"`)", f"{c['update_eager_cuda_ms']:.3f}"],
        ["captured as a CUDA graph (`graph`)", f"{c['update_graph_cuda_ms']:.3f}"],
        ["the Xeon's CPU, the fast back-end on two threads", f"{c['update_fast_cpu_ms']:.3f}"],
        ["an ensemble of 5 critics (`{\"ensemble\": 5}`): captured on the GPU / readable on the CPU",
         f"{c['update_ensemble5_graph_cuda_ms']:.3f} / {c['update_ensemble5_readable_cpu_ms']:.3f}"],
        ["an ensemble of 10 critics: captured on the GPU / readable on the CPU",
         f"{c['update_ensemble10_graph_cuda_ms']:.3f} / {c['update_ensemble10_readable_cpu_ms']:.3f}"]])


def _gpu_runs() -> dict[tuple[str, str, int], dict[str, Any]]:
    return {(r["device"], r["learner"], r["seed"]): r for r in gpu()["runs"]}


@block
def gpu_runs() -> str:
    """docs/training.md and Report: the 20-arm default trained on the H200 machine, three ways."""
    runs, summary = _gpu_runs(), gpu()["summary"]

    def cell(r: dict[str, Any]) -> str:
        return f"{r['solved_at']}, {r['wall_s']:.1f} s, {r['updates']:,}"

    rows = [[s, cell(runs["cuda", "graph", s]), cell(runs["cuda", "graph-overlap", s]), cell(runs["cpu", "fast", s])]
            for s in sorted({k[2] for k in runs})]
    rows.append(["median wall-clock"] + [f"{summary[k]['median_wall_s']:.1f} s"
                                         for k in ("cuda graph", "cuda graph-overlap", "cpu fast")])
    return table(["seed", "`--device cuda --learner graph`", "`--device cuda --learner graph-overlap` (`auto` on CUDA)",
                  "`--device cpu` (`fast`)"], rows)


@block
def gpu_summary() -> str:
    """README: the GPU in two sentences."""
    g = gpu()
    c, s = g["costs"], g["summary"]
    one = _gpu_runs()["cuda", "graph", 1]["seconds"]
    fixed = one["environment"] + one["acting"] + one["other"]
    return (f"On one {g['gpu']['name'].removeprefix('NVIDIA ')} (`python benchmarks/bench_gpu.py --tests --cuda-learners "
            f"graph,graph-overlap`) a captured update took {c['update_graph_cuda_ms']:.3f} ms against "
            f"{c['update_eager_cuda_ms']:.3f} ms eagerly, and the 20-arm default solved seeds 0-2 in a median of "
            f"{s['cuda graph']['median_wall_s']:.1f} s, {s['cuda graph-overlap']['median_wall_s']:.1f} s with "
            f"`--learner graph-overlap` (the environment stepping while the GPU learns), against "
            f"{s['cpu fast']['median_wall_s']:.1f} s on the same machine's CPU: the environment and acting, about "
            f"{fixed:.0f} s, are the same on either device ({files_note('gpu/gpu_nvidia_h200.json')}).")


# --------------------------------------------------------------------------- the results index

def manifest(study: Path) -> dict[str, Any]:
    return tomllib.loads((study / MANIFEST).read_text())


def studies() -> list[Path]:
    return sorted(p for p in RESULTS.iterdir() if p.is_dir())


def _short(commit: str | None) -> str:
    if not commit:
        return "-"
    dirty = commit.endswith("-dirty")
    return commit.removesuffix("-dirty")[:7] + (" (uncommitted edits)" if dirty else "")


def _machine(data: dict[str, Any]) -> str | None:
    gpu = data.get("gpu")
    machine = data.get("machine")
    if isinstance(gpu, dict) and gpu.get("name"):
        cpu = f", {machine['cpu']} x {machine['cpu_count']}" if isinstance(machine, dict) else ""
        return f"{gpu['name']}{cpu}"
    if isinstance(machine, dict):
        return f"{machine.get('cpu', '?')} x {machine.get('cpu_count', '?')}"
    if data.get("cpu_count"):
        return f"{data['cpu_count']} CPUs"
    return None


def own_record(file: Path) -> dict[str, str | None]:
    """What a JSON result says about itself: command, commit, machine."""
    out: dict[str, str | None] = {"command": None, "commit": None, "machine": None}
    if file.suffix != ".json":
        return out
    data = json.loads(file.read_text())
    if not isinstance(data, dict):
        return out
    command = data.get("command") or data.get("commands")
    if isinstance(command, dict):
        command = "; ".join(command.values())
    out["command"] = command
    commit = data.get("git_commit")
    if commit is None and isinstance(data.get("runs"), list):
        commits = sorted({r["git_commit"] for r in data["runs"] if isinstance(r, dict) and r.get("git_commit")})
        commit = ", ".join(_short(c) for c in commits) or None
    out["commit"] = commit if commit is None or "," in commit else _short(commit)
    out["machine"] = _machine(data)
    return out


def _twins(files: list[Path]) -> dict[Path, list[Path]]:
    """Each result and the files that belong to it: X.json's printout X.txt (or .log, .md, .png of
    the same stem) and its scores/metrics CSVs; a file with no JSON beside it stands alone."""
    rows: dict[Path, list[Path]] = {}
    primary = {Path(str(f.with_suffix("")).removesuffix("_run")): f for f in files if f.suffix == ".json"}
    for f in files:
        if f.suffix == ".json":
            rows.setdefault(f, [])
            continue
        stem = f.with_suffix("")
        owner = primary.get(stem) or primary.get(Path(re.sub(r"_(scores|metrics)$", "", str(stem))))
        if owner is None:
            rows.setdefault(f, [])
        else:
            rows.setdefault(owner, []).append(f)
    return rows


def catalogue() -> list[dict[str, Any]]:
    """Every study with its results: the records the index is made of. A result file missing from
    its study's manifest, or a manifest entry with no file, is an error."""
    out = []
    for study in studies():
        spec = manifest(study)
        entries = spec.get("files", {})
        files = [p for p in sorted(study.rglob("*")) if p.is_file() and p.name not in (MANIFEST,)]
        rows = _twins(files)
        names = {p.relative_to(study).as_posix() for p in rows}
        missing, extra = names - set(entries), set(entries) - names
        if missing or extra:
            raise ValueError(f"{study.relative_to(ROOT)}/{MANIFEST}: results without an entry {sorted(missing)}, "
                             f"entries without a result {sorted(extra)}")
        results = []
        for primary in sorted(rows, key=lambda p: p.relative_to(study).as_posix()):
            name = primary.relative_to(study).as_posix()
            entry = entries[name]
            record = own_record(primary)
            for key in ("command", "commit", "machine"):
                record[key] = record[key] or entry.get(key)
            results.append({"name": name, "with": [p.relative_to(study).as_posix() for p in rows[primary]],
                            "date": entry["date"], "status": entry.get("status", "current"),
                            "superseded_by": entry.get("superseded_by"), "note": entry.get("note"), **record})
        out.append({"folder": study.name, **{k: v for k, v in spec.items() if k != "files"}, "results": results})
    return out


def _cell(value: str | None) -> str:
    return "-" if not value else value.replace("|", "\\|").replace("\n", " ")


@block
def index() -> str:
    """benchmarks/results/README.md: each study, what it measured, its results, which are current."""
    parts = []
    studies_ = catalogue()
    parts.append(table(["study", "what it measured", "results", "current"],
                       [[f"[{s['folder']}/](#{s['folder']})", s["title"], len(s["results"]),
                         sum(r["status"] == "current" for r in s["results"])] for s in studies_]))
    for s in studies_:
        parts.append(f"### {s['folder']}\n\n**{s['title']}.** {s['question']}")
        if s.get("quoted_in"):
            parts[-1] += " Quoted in " + ", ".join(f"[{q}](../../{q})" for q in s["quoted_in"]) + "."
        rows = []
        for r in s["results"]:
            name = f"`{r['name']}`" + (" with " + ", ".join(f"`{Path(w).name}`" for w in r["with"]) if r["with"] else "")
            status = r["status"]
            if r["superseded_by"]:
                status += f" by `{r['superseded_by']}`"
            if r["note"]:
                status += f": {r['note']}"
            command = f"`{_cell(r['command'])}`" if r["command"] else "-"
            rows.append([name, _cell(status), command, _cell(r["commit"]), r["date"], _cell(r["machine"])])
        parts.append(table(["result", "status", "command", "commit", "date", "machine"], rows))
    return "\n\n".join(parts)


# --------------------------------------------------------------------------- the command

def pages() -> list[str]:
    out = []
    for pattern in PAGES:
        out += sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob(pattern))
    return out


def run(check: bool = False) -> int:
    """Regenerate every block (or, with check, report the pages that would change); cog's status."""
    from cogapp import Cog

    argv = ["cog", "-I", str(ROOT), "-p", "from benchmarks.catalogue import show"]
    argv += ["--check", "--diff", "--check-fail-msg", "run `make docs` and commit the result"] if check else ["-r"]
    cwd = Path.cwd()
    try:
        import os

        os.chdir(ROOT)
        return Cog().main(argv + pages())
    finally:
        os.chdir(cwd)


if __name__ == "__main__":
    sys.exit(run(check="--check" in sys.argv[1:]))
