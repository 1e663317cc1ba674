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
    return (Path("benchmarks/results") / path(name).relative_to(RESULTS)).as_posix()  # RESULTS may be a copy


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
    low, high = form.format(values[0]), form.format(values[-1])
    if low == high:
        return f"{low}{unit}"
    return f"{low}{' to ' if values[0] < 0 else '-'}{high}{unit}"


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


# --------------------------------------------------------------------------- comparisons of bench_train runs

METRICS = {
    "solved_at": ("solved at", lambda s: ep(s["solved_at"])),
    "first_30": ("first 30", lambda s: ep(s.get("first_30"))),
    "low": ("lowest after", lambda s: f"{lowest_after_first_30(s):.2f}" if s.get("first_30") else "-"),
    "updates": ("updates", lambda s: f"{s['updates']:,}"),
    "wall_s": ("wall-clock", lambda s: f"{s['wall_s']:.1f} s"),
    "learning": ("learning", lambda s: f"{s['seconds']['learning']:.1f} s"),
    "acting": ("acting", lambda s: f"{s['seconds']['acting']:.1f} s"),
    "environment": ("environment", lambda s: f"{s['seconds']['environment']:.1f} s"),
    "other": ("storing and the loop", lambda s: f"{s['seconds']['other']:.1f} s"),
}


def _column(spec: str) -> tuple[str, list[str]]:
    """'label: study/glob.json + study/other.json' -> the label and the JSON files' names."""
    label, _, files = spec.rpartition(": ")
    names = []
    for pattern in files.split(" + "):
        found = sorted(RESULTS.glob(pattern.strip()))
        if not found:
            raise FileNotFoundError(f"no result {pattern.strip()}")
        names += [p.relative_to(RESULTS).as_posix() for p in found]
    return label, names


def _by_seed(names: list[str]) -> dict[int, dict[str, Any]]:
    return {s["seed"]: s for name in names for s in json.loads((RESULTS / name).read_text())["seeds"]}


def _summary_value(runs: list[dict[str, Any]], metric: str) -> str:
    if metric == "solved_at":
        return f"{ep(distribution(runs)['median'])}"
    if metric == "low":
        values = [lowest_after_first_30(s) for s in runs if s.get("first_30")]
        return f"{median(values):.2f}" if values else "-"
    if metric in ("learning", "acting", "environment", "other"):
        return f"{median(s['seconds'][metric] for s in runs):.1f} s"
    values = [s[metric] for s in runs if s.get(metric) is not None and (metric == "first_30" or s["solved_at"])]
    if not values:
        return "-"
    m = median(values)
    return f"{m:.1f} s" if metric == "wall_s" else f"{m:,.0f}" if metric == "updates" else f"{m:g}"


@block
def compare(*columns: str, show: str = "solved_at", delta: bool = False) -> str:
    """Runs of bench_train.py seed by seed, side by side: each column ``'label: study/glob.json'``
    (several globs joined by ' + '), each cell the ``show`` metrics (comma-separated: solved_at,
    first_30, low, updates, wall_s); then each column's solved count, medians, 90th percentile and
    worst (an unsolved run ranks worst); then the files."""
    metrics = [m.strip() for m in show.split(",")]
    cols = [_column(c) for c in columns]
    runs = [_by_seed(names) for _, names in cols]
    seed_list = sorted(set().union(*runs))
    head = " / ".join(METRICS[m][0] for m in metrics)
    header = ["seed"] + [f"{label}: {head}" if len(metrics) > 1 else label for label, _ in cols]
    rows = [[s] + [" / ".join(METRICS[m][1](r[s]) for m in metrics) if s in r else "" for r in runs] for s in seed_list]
    dists = [distribution(list(r.values())) for r in runs]
    rows.append(["**solved**"] + [f"{d['n_solved']}/{d['n']}" for d in dists])
    rows.append(["**median**"] + [" / ".join(_summary_value(list(r.values()), m) for m in metrics) for r in runs])
    if len(seed_list) >= 10:
        rows.append(["**90th percentile, worst**"] + [f"{d['p90']}, {d['worst']}" for d in dists])
    patterns = [p.strip().removesuffix(".json") + ".*" for c in columns for p in c.rpartition(": ")[2].split(" + ")]
    notes = ""
    if delta:  # each later column's medians against the first's
        base = [s for s in runs[0].values() if s["solved_at"]]
        for (label, _), r in zip(cols[1:], runs[1:], strict=True):
            mine = [s for s in r.values() if s["solved_at"]]
            parts = []
            for key, what in (("updates", "updates"), ("wall_s", "wall-clock")):
                a, b = median(s[key] for s in base), median(s[key] for s in mine)
                if b / a >= 2:
                    parts.append(f"{b / a:.1f} times the {what}")
                else:
                    parts.append(f"{abs(1 - b / a):.0%} {('fewer' if key == 'updates' else 'less') if b < a else 'more'} {what}")
            notes += f" {label}: {' and '.join(parts)} at the median than {cols[0][0]}."
    files = ", ".join(f"`{p}`" for p in dict.fromkeys(patterns))
    return table(header, rows) + (f"\n\n{notes.strip()}" if notes else "") + f"\n\nFrom {files} (in `benchmarks/results/`)."


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



@block
def test_suite() -> str:
    """README: how long make test's pytest took, and its slowest tests."""
    r = load("make_test.json")
    m = r["machine"]
    counts = ", ".join(f"{n} {k}" for k, n in r["counts"].items())
    slowest = ", ".join(f"`{row['test'].split('::')[0]}` ({row['seconds']:.0f} s)" for row in r["slowest"][:3])
    return (f"On a {m['cpu_count']}-core {m['cpu']}, in a fresh clone, `make test`'s pytest took "
            f"**{r['pytest_s']:.0f} s** ({counts}; `python benchmarks/bench_tests.py`, "
            f"`{rel('make_test.json')}`); its slowest tests are in {slowest}, with the other worker busy.")

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
            f"the earliest possible; median {d['median']:g}, 90th percentile {d['p90']}, worst {d['worst']} "
            f"({files_note('default_20_seeds/' + TWENTY_FILES['gamma095'] + '.txt')}, commit "
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


@block
def solved_at_count() -> str:
    """README: what the solved-at count means, against the course's count."""
    run = committed_run()
    w = run["window"]
    return (f"Episode {w} is the earliest a run can be solved: solving means an average of at least "
            f"{run['target_score']:g} over {w} consecutive episodes, and episodes 1-{w} are the first such window. The "
            f"course's own code counts the episodes before that window, so for this run it would print \"Environment "
            f"solved in {run['solved_at_episode'] - w} episodes\"; a course solution that \"solved in 150 episodes\" "
            f"solved at episode {150 + w} in this count.")


@block
def one_arm_readme() -> str:
    """README: the one-arm version in one sentence."""
    d = {k: distribution(one_arm(k)) for k in ("paths9", "paths4", "gamma095", "gamma099")}
    pair = {k: load(f"bench_train_one_arm_pair_{k}.json")["seeds"] for k in ("goal_paths", "before_goal_paths")}
    ratio = median(a["wall_s"] / b["wall_s"] for a, b in zip(pair["goal_paths"], pair["before_goal_paths"], strict=True))
    return (f"The one-arm version (`--agents 1`, its own settings in `tasks.REACHER_ONE_ARM`; among them goal paths, "
            f"each episode stored again against 9 more goal paths) solved {d['paths9']['n_solved']}/{d['paths9']['n']} "
            f"seeds at a median of {d['paths9']['median']:g} episodes ({d['paths4']['median']:g} with 4 goal paths, "
            f"{d['gamma095']['median']:g} without goal paths, {d['gamma099']['median']:g} with gamma 0.99; "
            f"{files_note('one_arm/')}); goal paths cost about {ratio:.1f} times the wall-clock of none (seeds 0 and 1 "
            f"side by side), and its score still swings from episode to episode.")


@block
def make_run_episodes() -> str:
    """experiments: what an episode of `make run` took (its printout, committed_run/make_run_seed0.txt)."""
    times = [float(m) for m in re.findall(r"^Episode\s+\d+ .* time\s+([\d.]+)s", text("make_run_seed0.txt"), re.M)]
    return (f"In `make run` (seed 0, two threads, alone) an episode took {span(times[1:], '{:.2f}', ' s')} after the "
            f"warm-up episode (median {median(times[1:]):.2f} s; fewer, or no, updates once an episode scores 33), "
            f"from its per-episode lines in `{rel('make_run_seed0.txt')}`.")


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


# --------------------------------------------------------------------------- diagnoses and costs

@block
def saturation(name: str, episodes: str = "1,2,5,10,20,30") -> str:
    """benchmarks/diagnose_saturation.py's rows at some episodes: score, share of actions at +-1,
    the tanh layer's mean |pre-activation|."""
    rows = {r["episode"]: r for r in load(name)["rows"]}
    at = [rows[int(e)] for e in episodes.split(",")]
    return table(["episode"] + [str(r["episode"]) for r in at], [
        ["mean score"] + [f"{r['score']:.2f}" for r in at],
        ["actions at +-1"] + [f"{100 * r['saturated']:.0f}%" for r in at],
        ["mean pre-activation"] + [f"{r['mean_abs_pre']:.1f}" for r in at]]) + f"\n\nFrom `{rel(name)}`."


def _forgetting(seed: int) -> dict[str, Any]:
    data = load(f"forgetting_one_arm_seed{seed}.json")
    rows = data["rows"]
    score = [r["score"] for r in rows]
    greedy = [r["greedy"] for r in rows]
    windows = [statistics.fmean(score[i - 100:i]) for i in range(100, len(score) + 1)]
    solved = next(i for i, w in enumerate(windows, start=100) if w >= 30)
    first = next(i for i, s in enumerate(score) if s >= 30)
    low = min(range(first + 1, solved), key=lambda i: score[i])
    first_greedy = next(i for i, g in enumerate(greedy) if g >= 30)
    best, fall = greedy[first_greedy], 0.0
    for g in greedy[first_greedy:]:
        best = max(best, g)
        fall = max(fall, best - g)
    return {"solved": solved, "first": first + 1, "first_score": score[first], "greedy_at_first": greedy[first],
            "low": low + 1, "low_score": score[low], "greedy_at_low": greedy[low], "first_greedy": first_greedy + 1,
            "fall": fall, "after": (min(greedy[first_greedy:]), max(greedy[first_greedy:])),
            "q": rows[solved - 1]["q"], "earned": rows[solved - 1]["q_earned"]}


@block
def forgetting(*seeds_: int) -> str:
    """benchmarks/diagnose_forgetting.py on one arm: each probed seed's training and greedy scores."""
    lines = []
    for seed in seeds_:
        f = _forgetting(seed)
        lines.append(f"- seed {seed}: solved at {f['solved']}; first 30 at episode {f['first']} ({f['first_score']:.2f}) "
                     f"with a greedy score of {f['greedy_at_first']:.2f}; the lowest episode after it "
                     f"{f['low_score']:.2f} (episode {f['low']}, greedy {f['greedy_at_low']:.2f}); greedy first at 30 "
                     f"at episode {f['first_greedy']}, then {f['after'][0]:.2f}-{f['after'][1]:.2f}, never more than "
                     f"{f['fall']:.2f} below its best so far; Q(s, mu(s)) {f['q']:.3f} at the solve against "
                     f"{f['earned']:.3f} earned, {1 - f['q'] / f['earned']:.0%} below it "
                     f"(`{rel(f'forgetting_one_arm_seed{seed}.json')}`).")
    return "\n".join(lines)


@block
def batch_norm_diagnosis() -> str:
    """benchmarks/diagnose_batch_norm.py on the ablation's batch_norm row, seed 1."""
    rows = {r["episode"]: r for r in load("diagnose_batch_norm_1.json")["rows"]}
    episodes = sorted(rows)
    first = next(e for e in episodes if rows[e]["score"] >= 30)
    crossed = next(e for e in episodes if rows[e]["mean_q"] > 4)
    peak = max(episodes, key=lambda e: rows[e]["mean_q"])
    after = max(rows[e]["score"] for e in episodes if e >= 82)
    best = max(sum(rows[e]["score"] for e in range(k, k + 100)) / 100 for k in range(1, len(episodes) - 98))
    before = [rows[e] for e in episodes if e <= 79]
    late = [rows[e] for e in episodes if 10 <= e <= 79]
    recent = [rows[e]["act_gap_recent"] for e in range(28, 80)]
    return (f"The run first reached a mean of 30 at episode {first}, then {rows[80]['score']:.2f} at episode 80 and "
            f"{rows[82]['score']:.2f} at 82, and never more than {after:.2f} after (best 100-episode average "
            f"{best:.2f}). The critic's mean Q on replay batches passed 4 at episode {crossed} (about the most any "
            f"policy can earn: some 0.04 a decision, divided by 1 - gamma), was {rows[79]['mean_q']:.2f} at episode 79, "
            f"then " + ", ".join(f"{rows[e]['mean_q']:.2f}" for e in range(80, 84)) + f" and {rows[84]['mean_q']:.2f} "
            f"in episodes 80-84, and peaked at {rows[peak]['mean_q']:,.2f} at episode {peak}. Up to episode 79, on "
            f"replay batches, the action the arms take (evaluation mode, running statistics) differed from the one the "
            f"actor's update improves (training mode, the batch's statistics) by "
            f"{min(r['act_gap'] for r in before):.2f}-{max(r['act_gap'] for r in before):.2f} per component, and the "
            f"target critic (evaluation mode) from the learning critic by "
            f"{100 * min(r['target_gap'] for r in late):.1f}-{100 * max(r['target_gap'] for r in late):.1f}% of |Q|. "
            f"On the latest states the modes disagreed more ({min(recent):.2f}-{max(recent):.2f} per component from "
            f"episode 28 on), but as much before the collapse as after it (`{rel('diagnose_batch_norm_1.json')}`).")


@block
def ablation_seeds() -> str:
    """The ablation's rows seed by seed where the reading needs them, beside the readable learner's
    plain runs of the same seeds (the fair baseline of the rows that run on it)."""
    runs = load("ablation.json")["runs"]
    readable = {s["seed"]: s for s in load("bench_train_5seeds_readable.json")["seeds"]}
    by = {v: {r["seed"]: r for r in runs if r["variant"] == v} for v in ("default", "width_64", "prioritized", "noisy",
                                                                         "batch_norm")}

    def first_30(scores: list[float]) -> str:
        return next((str(i + 1) for i, s in enumerate(scores) if s >= 30), "never")

    rows = []
    for seed in range(5):
        bn = by["batch_norm"][seed]["scores"]
        best = max(statistics.fmean(bn[i:i + 100]) for i in range(len(bn) - 99))
        w = by["width_64"][seed]
        rows.append([seed, ep(by["default"][seed]["solved_at"]),
                     ep(w["solved_at"]) if w["solved_at"] else f"unsolved (last 100: {statistics.fmean(w['scores'][-100:]):.1f})",
                     ep(readable[seed]["solved_at"]), ep(by["prioritized"][seed]["solved_at"]),
                     f"{ep(by['noisy'][seed]['solved_at'])} (first 30: {first_30(by['noisy'][seed]['scores'])})",
                     f"first 30: {first_30(bn)}" + (f" (best episode {max(bn):.1f})" if first_30(bn) == "never" else "")
                     + f"; best 100: {best:.1f}; last 100: {statistics.fmean(bn[-100:]):.1f}"])
    times = [r["wall_time_s"] for r in by["batch_norm"].values()]
    return (table(["seed", "default", "width_64", "readable learner, plain (one-step default)", "prioritized",
                   "noisy", "batch_norm (unsolved at 300)"], rows)
            + f"\n\nbatch_norm's 300-episode runs took {min(times):,.0f}-{max(times):,.0f} s each, two at once. From "
            f"`{rel('ablation.json')}` and `{rel('bench_train_5seeds_readable.json')}`.")


def _update_rates(name: str) -> list[tuple[str, int | None, int | None]]:
    """bench_train.py --updates-only printouts: each command with its updates/s on two threads
    (or the readable learner's one) and on one thread."""
    out = []
    for part in re.split(r"\n(?=(?:# )?(?:\$ )?(?:\.venv/bin/)?python benchmarks/bench_train\.py)", "\n" + text(name)):
        command = re.match(r"(?:# )?(?:\$ )?((?:\.venv/bin/)?python benchmarks/bench_train\.py[^\n]*)", part)
        two = re.search(r"^learner: (\d+) updates/s", part, re.M)
        one = re.search(r"^learner 1 thread: (\d+) updates/s", part, re.M)
        commit = re.search(r"commit ([0-9a-f]{7})", part)
        if command and (two or one):
            out.append((command[1].strip(), commit[1] if commit else "-", int(two[1]) if two else None,
                        int(one[1]) if one else None))
    return out


@block
def update_rates(name: str) -> str:
    """A file of bench_train.py --updates-only runs, one row each."""
    rows = [[f"`{c}`", k, "-" if a is None else f"{a:,}", "-" if b is None else f"{b:,}"]
            for c, k, a, b in _update_rates(name)]
    return (table(["command", "commit", "updates/s (two threads; readable: its one)", "updates/s on one thread"], rows)
            + f"\n\nFrom `{rel(name)}`.")


@block
def cores() -> str:
    """benchmarks/bench_cores.py's three runs."""
    t_ = text("bench_cores.txt")
    products = re.findall(r"one process ([\d.]+) us per product; .* speed-up ([\d.]+)", t_)
    overlap = re.findall(r"(\d+) decisions with acting (\d+) ms, \d+ updates (\d+) ms; .* two threads \d+ ms "
                         r"\(gain ([\d.]+)\), in two processes \d+ ms \(gain ([\d.]+)\)", t_)
    rows = [[i + 1, p[0], p[1], o[1], o[2], f"{round(100 * int(o[1]) / (int(o[1]) + int(o[2])))}%", o[3], o[4]]
            for i, (p, o) in enumerate(zip(products, overlap, strict=True))]
    return (table(["run", "product alone (us)", "two processes: speed-up", "200 decisions (ms)", "200 updates (ms)",
                   "decisions' share", "overlap gain, two threads", "overlap gain, two processes"], rows)
            + f"\n\nFrom `{rel('bench_cores.txt')}`.")


@block
def learner_parts() -> str:
    """benchmarks/bench_learner_parts.py's printout."""
    lines = [ln for ln in text("bench_learner_parts.txt").splitlines() if ln and not ln.startswith("#")]
    return table(["measure", "value"], [ln.rsplit(": ", 1) for ln in lines]) + f"\n\nFrom `{rel('bench_learner_parts.txt')}`."


# --------------------------------------------------------------------------- screens and smaller figures

def printout_seeds(name: str) -> list[dict[str, Any]]:
    """The seeds of a bench_train.py printout (.txt) with no JSON beside it."""
    out = []
    for m in re.finditer(r"^seed (\d+): solved at episode (\d+|unsolved)[^\n]*?wall ([\d.]+)s\s+updates (\d+)\s+"
                         r"final avg100 ([\d.]+)(?:\s+first mean >= 30 at episode (\d+|-))?", text(name), re.M):
        out.append({"seed": int(m[1]), "solved_at": None if m[2] == "unsolved" else int(m[2]), "wall_s": float(m[3]),
                    "updates": int(m[4]), "final_avg100": float(m[5]),
                    "first_30": int(m[6]) if m[6] and m[6] != "-" else None})
    return out


def _screen_runs(name: str) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    if name.endswith(".json"):
        bench = load(name)
        command = bench.get("command", "")
        return command, bench["seeds"], bench
    command = text(name).splitlines()[0].lstrip("# ")
    return command, printout_seeds(name), {}


@block
def screens(*names: str) -> str:
    """Single-seed or few-seed screens: each file's --config (or what its name says), and each
    seed's solved-at episode, first 30 and last 100-episode average."""
    rows = []
    for name in names:
        command, runs, _ = _screen_runs(name)
        config = re.search(r"--config '?(\{.*?\})'?(?: --|$)", command)
        cap = re.search(r"--max-episodes (\d+)", command)
        cells = "; ".join(f"seed {s['seed']}: {ep(s['solved_at'])}"
                          + (f" (first 30: {s['first_30']})" if s.get("first_30") else "")
                          + ("" if s["solved_at"] else f", last 100 averaging {s['final_avg100']:.2f}") for s in runs)
        rows.append([f"`{Path(name).stem}`", f"`{config[1]}`" if config else "-", cap[1] if cap else "-", cells])
    return table(["result (`.txt`, `.json`)", "`--config`", "episode cap", "solved at"], rows)


@block
def seven_screens() -> str:
    """Seed 7's two 60-episode screens on top of 3-step returns with the pause."""
    rows = []
    for name in ("bench_train_screen_seed7_noise_sigma0.3.txt", "bench_train_screen_seed7_warmup20000.txt"):
        command, runs, _ = _screen_runs(name)
        curve = re.search(r"mean score at episodes 5, 10, \.\.\.: ([\d. ]+)", text(name))[1].split()
        s = runs[0]
        rows.append([f"`{re.search(r'--config (.*)$', command)[1]}`", ep(s["solved_at"]) + " (cap 60)",
                     s.get("first_30") or "-", f"{curve[-1]} at episode {5 * len(curve)}", f"`{rel(name)}`"])
    return table(["`--config`", "solved at", "first 30", "mean score", "result"], rows)


@block
def learner_rates() -> str:
    """The learners' updates/s measured after each 5-seed benchmark of the one-step default."""
    fast, readable = load("bench_train_5seeds.json"), load("bench_train_5seeds_readable.json")
    return (f"Measured after each benchmark (`bench_train.py`, its last lines): the fast learner "
            f"{fast['learner_updates_per_s']:.0f} updates/s with each update split over two threads and "
            f"{fast['learner_1_thread_updates_per_s']:.0f} on one; the readable learner "
            f"{readable['learner_updates_per_s']:.0f}. Other work kept the second core busy at times.")


@block
def one_arm_swings() -> str:
    """How much a one-arm run's score swings: its first 30, and over its last 100 episodes."""
    rows = []
    for key in ("gamma099", "gamma095"):
        for s in one_arm(key):
            last = s["episode_means"][-100:]
            first = next(i + 1 for i, v in enumerate(s["episode_means"]) if v >= 30)
            rows.append([ONE_ARM_LABEL[key], s["seed"], first, s["solved_at"] - first, f"{statistics.pstdev(last):.1f}",
                         f"{min(last):.1f}"])
    return ("Where the mean over 20 arms is smooth, one arm's score keeps swinging from episode to episode, so the "
            "100-episode average needs many more episodes after a first 30:\n\n"
            + table(["settings", "seed", "first 30", "episodes from it to the solve", "standard deviation, last 100",
                     "lowest, last 100"], rows))


@block
def one_arm_screens() -> str:
    """The one-arm screens, one or a few seeds each (the tuning log says why each was run)."""
    names = ["bench_train_one_arm_warmup10000_stopped.json", "bench_train_one_arm_n3_warmup5000_stopped.json",
             "bench_train_one_arm_n_step3_partial.txt", "bench_train_one_arm_layer_norm_screen.json",
             "bench_train_one_arm_layer_norm_good33.json", "bench_train_one_arm_layer_norm_good33_u20_stopped.json",
             "bench_train_one_arm_layer_norm_20arm_rates_0.json", "bench_train_one_arm_layer_norm_20arm_rates_1.json",
             "bench_train_one_arm_good33.json", "bench_train_one_arm_gamma095_layer_norm_good33_0.json",
             "bench_train_one_arm_gamma095_layer_norm_good33_1.json", "bench_train_one_arm_gamma09_0.json",
             "bench_train_one_arm_gamma095_u20_0.json", "bench_train_one_arm_gamma095_lr_critic1e-3_0.json",
             "bench_train_one_arm_tau1e-2_screen.json", "bench_train_one_arm_lr_critic5e-4_screen.json",
             "bench_train_one_arm_sigma005_screen.json"] + [f"bench_train_one_arm_sigma005_{k}.json" for k in range(1, 6)] + [
             "bench_train_one_arm_goal_paths9_u20_screen.json", "bench_train_one_arm_goal_paths9_rates20_screen.json"]
    return screens(*names) + "\n\nAll in `benchmarks/results/one_arm/`."


@block
def one_arm_first_100() -> str:
    """One arm, seed 0: what an ensemble of critics makes of the first 100 episodes."""
    rows = []
    for name, what in (("bench_train_one_arm_gamma095_0.json", "today's settings before goal paths"),
                       ("bench_train_one_arm_ensemble5_0.json", "`{\"ensemble\": 5}`"),
                       ("bench_train_one_arm_ensemble5_u20_0.json", "`{\"ensemble\": 5, \"learn_updates\": 20}`"),
                       ("bench_train_one_arm_ensemble5_subset1_0.json", "`{\"ensemble\": 5, \"ensemble_subset\": 1}`")):
        bench = load(name)
        s = bench["seeds"][0]
        means = s["episode_means"]
        rows.append([what, f"{statistics.fmean(means[:100]):.2f}", f"{max(means[:100]):.2f}", s.get("first_30") or "-",
                     f"{ep(s['solved_at'])} (cap {bench['max_episodes']})", f"{statistics.fmean(means[-100:]):.2f}",
                     f"{s['wall_s']:,.1f} s", f"`{Path(name).stem}`"])
    return table(["settings", "average of episodes 1-100", "best of them", "first 30", "solved at",
                  "average of the last 100", "wall-clock", "result (`one_arm/`)"], rows)


@block
def crossq() -> str:
    """CrossQ's critic: 15 episodes of 20 arms, and Pendulum-v1 against plain DDPG."""
    rows = list(csv.DictReader(path("crossq_twin_20_arms_seed0_metrics.csv").open()))
    scores = [float(r["score_mean"]) for r in rows]
    q = max(abs(float(r["mean_q"])) for r in rows)
    firsts = {}
    for method in ("plain", "crossq"):
        pend = list(csv.DictReader(path(f"crossq_pendulum_{method}_seed0_metrics.csv").open()))
        firsts[method] = min(int(r["episode"]) for r in pend if float(r["score_mean"]) > -200)
    default = next(s for s in twenty("gamma095") if s["seed"] == 0)["episode_means"]
    return (f"Over its first {len(rows)} episodes on 20 arms (seed 0, by `train.py`) the mean score stayed between "
            f"{min(scores):.2f} and {max(scores):.2f}, where the default on this seed scored {default[4]:.1f} at episode 5 "
            f"and {default[9]:.1f} at episode 10, and the critic's mean Q within {q:.3f} of zero "
            f"(`{rel('crossq_twin_20_arms_seed0_metrics.csv')}`). On Pendulum-v1 it first scored above -200 at "
            f"episode {firsts['crossq']} against {firsts['plain']} for plain DDPG "
            f"(`{rel('crossq_pendulum_seed0.txt')}` and the metrics beside it).")


@block
def ensemble_on_the_gpu() -> str:
    """What the ensemble's median updates would cost captured on the H200, against the default's."""
    c = gpu()["costs"]
    one, five = c["update_graph_cuda_ms"], c["update_ensemble5_graph_cuda_ms"]
    ens = median(s["updates"] for s in seeds("bench_train_candidate_ensemble5_0-2.json",
                                             "bench_train_candidate_ensemble5_3-9.json"))
    default = median(s["updates"] for s in load("bench_train_default_beside_ensemble.json")["seeds"])
    return (f"On an H200 (`{rel('gpu_nvidia_h200.json')}`) the captured update of five critics took {five:.3f} ms "
            f"against {one:.3f} ms for one, so the ensemble's median {ens:,.0f} updates cost {ens * five / 1000:.1f} s "
            f"of learning against {default * one / 1000:.1f} s for the default's {default:,.0f}, and learning is the "
            f"smallest part of a GPU run.")


@block
def h200_shared16() -> str:
    """Sixteen runs sharing one H200: each sweep over the seeds all four finished."""
    parts = [("default", "the default"), ("tau1.5e-2", "tau 1.5e-2"), ("batch512_tau2e-2", "batch 512, tau 2e-2"),
             ("batch512_tau1.5e-2", "batch 512, tau 1.5e-2")]
    sweeps = [{s["seed"]: s for s in load(f"bench_train_h200_shared16_{p}.json")["seeds"]} for p, _ in parts]
    common = sorted(set.intersection(*(set(s) for s in sweeps)))
    rows = []
    for (_, label), sweep in zip(parts, sweeps, strict=True):
        runs = [sweep[s] for s in common]
        by_102 = sum(r["solved_at"] is not None and r["solved_at"] <= 102 for r in runs)
        unsolved = [r["seed"] for r in runs if r["solved_at"] is None]
        updates = median(r["updates"] if r["solved_at"] else 10**9 for r in runs)
        per_update = median(1000 * r["seconds"]["learning"] / r["updates"] for r in runs)
        rows.append([label, f"{by_102}/{len(runs)}" + (f" (unsolved at 105: seed{'s' if len(unsolved) > 1 else ''} "
                                                      f"{listing(unsolved)})" if unsolved else ""),
                     f"{updates:,.0f}", f"{median(r['wall_s'] for r in runs):.1f} s", f"{per_update:.2f} ms"])
    return (table(["settings", "solved by episode 102", "median updates", "median wall-clock",
                   "median learning time per update"], rows)
            + f"\n\nOver the {len(common)} seeds every sweep finished ({listing(common)}). From "
            f"`benchmarks/results/larger_batches/bench_train_h200_shared16_*`.")


# --------------------------------------------------------------------------- what reproduces where, where the time goes

@block
def reproducible_cost() -> str:
    """docs/benchmarks.md: the default and --reproducible over seeds 0-4 in one sitting."""
    default, pinned = load("bench_train_default_d38f0cf.json"), load("bench_train_reproducible_d38f0cf.json")
    rows = []
    for mode, bench in (("default", default), ("`--reproducible`", pinned)):
        s = bench["seeds"]
        rows.append([mode, ", ".join(ep(x["solved_at"]) for x in s) + f": median {bench['median_solved_at']:.0f}, "
                     f"{bench['n_solved']}/{len(s)} solved",
                     ", ".join(f"{x['wall_s']:.1f}" for x in s) + f" s: median {bench['median_wall_s']:.1f} s",
                     f"{bench['learner_updates_per_s']:.0f} / {bench['learner_1_thread_updates_per_s']:.0f}"])
    second = load("bench_train_5seeds_73a33ce_second_machine.json")
    return (table(["mode", "solved at episode", "wall-clock to solve", "learner updates/s (2 threads / 1)"], rows)
            + f"\n\nThat is {pinned['median_wall_s'] / default['median_wall_s'] - 1:.0%} more wall-clock to solve and "
            f"{1 - pinned['learner_updates_per_s'] / default['learner_updates_per_s']:.0%} fewer updates per second. "
            f"These were also the first runs with an IEEE-exact Adam square root (commit d38f0cf), which changed every "
            f"path; five seeds of the one-step default solved as before on that machine (median "
            f"{default['median_solved_at']:.0f} against {second['median_solved_at']:.0f}). From "
            f"`{rel('bench_train_default_d38f0cf.json')}`, `{rel('bench_train_reproducible_d38f0cf.json')}`.")


@block
def time_shares() -> str:
    """docs/benchmarks.md: where a run's wall-clock goes, seed by seed."""
    bench = load("bench_train_default_beside_candidate.json")
    rows = [[s["seed"]] + [f"{s['seconds'][k] / s['wall_s']:.0%}" for k in ("learning", "environment", "acting", "other")]
            + [f"{s['seconds']['environment']:.1f} s"] for s in bench["seeds"]]
    return (table(["seed", "learning", "stepping the environment", "acting", "the rest (storing, the loop, resets)",
                   "environment, seconds"], rows)
            + f"\n\nFrom `{rel('bench_train_default_beside_candidate.json')}` (the one-step default, a quiet machine; "
            f"every run of the benchmark prints these per seed).")


@block
def env_speed() -> str:
    """benchmarks/bench_env.py: decisions per second of the built-in Reacher, 20 arms and one."""
    t_ = text("bench_env.txt")
    rates = re.findall(r"^decisions/s: median ([\d,]+)", t_, re.M)
    agent_steps = re.findall(r"^agent-steps/s: median ([\d,]+)", t_, re.M)
    per = re.findall(r"^per decision: (\d+) us", t_, re.M)
    agents = re.findall(r"^agents: (\d+)", t_, re.M)
    return table(["arms", "decisions/s (median)", "agent-steps/s (median)", "per decision"],
                 [[a, r, s, f"{u} us"] for a, r, s, u in zip(agents, rates, agent_steps, per, strict=True)]) + (
        f"\n\nOne core, random actions, rendering off (`.venv/bin/python benchmarks/bench_env.py`, `{rel('bench_env.txt')}`).")


# --------------------------------------------------------------------------- the environment

@block
def fidelity_table() -> str:
    """docs/environment.md: the built-in Reacher against the PhysX 4.1 reference (bench_fidelity.py)."""
    fid = load("fidelity.json")
    pol = fid["policies"]
    u = pol["uniform"]
    const = fid["constant_path"]
    diffs = [max(abs(a - b) for a, b in zip(row[1:], ref[1:], strict=True))
             for row, ref in zip(const["built_in"], const["physx"], strict=False)]

    def score(p: dict[str, Any]) -> list[str]:
        return [f"**{p['score_mean']:.3f}** +- {p['score_se']:.3f}", f"{p['physx']['score_mean']:.3f} +- {p['physx']['score_se']:.3f}"]

    cap = fid["physx_cap_uniform"]
    return table(["1000 arm-episodes per row", "built-in", "PhysX 4.1 reference", "test tolerance"], [
        ["mean episode score, uniform random actions", *score(pol["uniform"]), "+- 0.04"],
        ["mean episode score, Gaussian actions clipped to [-1, 1]", *score(pol["gauss"]), "+- 0.04"],
        ["mean episode score, Ornstein-Uhlenbeck actions (theta 0.15, sigma 0.2)", *score(pol["ou"]), "+- 0.10"],
        ["median distance A / B moved in 50 uniform decisions",
         f"**{u['distance_a_median']:.2f}** / **{u['distance_b_median']:.2f}**",
         f"{u['physx']['dA50_med']:.2f} / {u['physx']['dB50_med']:.2f}", "20%"],
        ["share of physics steps on which the cap scales A / B (uniform)",
         f"**{u['cap_fraction_a']:.3f}** / **{u['cap_fraction_b']:.3f}**", f"{cap[0]:.3f} / {cap[1]:.3f}", "+- 0.05"],
        ["constant torque (1, 0, 0, 0) from rest: largest difference of A's and B's centres at decisions 15 and 30",
         f"**{diffs[1]:.3f}**, {diffs[2]:.3f}", "", "0.05"]]) + f"\n\nFrom `{rel('fidelity.json')}`."


@block
def fidelity_trajectories() -> str:
    """docs/environment.md: how long single trajectories agree, with PhysX and with themselves."""
    fid = load("fidelity.json")
    within = fid["recorded_episode"]["within"]
    nudged = fid["self_divergence"]
    first = f"{fid['recorded_episode']['error_after_first_decision']:.1e}".replace("e-03", "e-3")
    return (f"Fed the reference's recorded uniform episode (the same actions and goal), the built-in arm's segment "
            f"centres stay within 1e-2 of PhysX's for the first {within['0.01']} decisions, within 0.1 for "
            f"{within['0.1']} and within 1 for {within['1.0']}; the gap after the first decision is already {first}. "
            f"Two runs of the built-in arm itself, one with segment B nudged by 0.001 rad/s at the start, stay within "
            f"1e-2 for {nudged['0.001']['0.01']} decisions and within 0.1 for {nudged['0.001']['0.1']} (nudged by "
            f"1e-6 rad/s: {nudged['1e-06']['0.01']} and {nudged['1e-06']['0.1']}).")


@block
def reference_variants() -> str:
    """docs/environment.md: what the PhysX reference's own variants score (tests/physx_reference/)."""
    from reacher.fidelity import read_reference_results

    ref = ROOT / "tests" / "physx_reference"

    def uniform(name: str) -> float:
        return read_reference_results(ref / name)["uniform"]["score_mean"]

    base = uniform("unity_6_1_1000_arm_episodes.txt")
    return table(["question", "choice"], [
        ["solver iterations", f"irrelevant to the converged result; in the reference 6/1 and 12/12 iterations give "
         f"the same statistics (uniform {base:.3f} and {uniform('unity_12_12_1000_arm_episodes.txt'):.3f}; "
         f"`tests/physx_reference/unity_12_12_1000_arm_episodes.txt`)"],
        ["collisions", f"none: the original's joints ignore contacts between the bodies they join, and arms of "
         f"neighbouring agents never meet in the scored task (the reference without the base's collider scores "
         f"{uniform('unity_6_1_no_base_collider_1000_arm_episodes.txt'):.3f} against {base:.3f} under uniform actions: "
         f"`unity_6_1_no_base_collider_1000_arm_episodes.txt`). The ground plane is only drawn."]])


@block
def unity_speed() -> str:
    """docs/unity.md: steps per second through the Unity protocol and directly (bench_unity.py)."""
    names = {"protocol (unityagents 0.4 + stand-in)": "genuine `unityagents` 0.4 + stand-in",
             "stand-in side only (no client)": "the stand-in's own work, no client (decode, simulate, encode)",
             "direct (reacher.ReacherEnvironment)": "direct `reacher.ReacherEnvironment`"}
    rows, rate = [], {}
    for line in text("bench_unity.txt").splitlines():
        m = re.match(r"(.+?)\s+(\d+)\s+(\d+)\s+(\d+)\s+\[", line)
        if m:
            rows.append([names[m[1].strip()], m[2], f"{int(m[3]):,}", f"{int(m[4]):,}"])
            rate[m[1].strip(), int(m[2])] = int(m[3])
    proto, side = rate["protocol (unityagents 0.4 + stand-in)", 20], rate["stand-in side only (no client)", 20]
    direct = rate["direct (reacher.ReacherEnvironment)", 20]
    return (table(["interface", "agents", "steps/s", "agent-steps/s"], rows)
            + f"\n\nThrough the protocol a 20-agent step takes about {1000 / proto:.1f} ms, of which the stand-in's side "
            f"takes about {1000 / side:.2f} ms; the built-in environment directly is about {direct / proto:.0f} times "
            f"faster (`{rel('bench_unity.txt')}`).")


# --------------------------------------------------------------------------- Gymnasium tasks

@block
def mountaincar_notebook() -> str:
    """docs/gymnasium.md: the committed MountainCarContinuous notebook's full run."""
    notebook = json.loads((ROOT / "MountainCarContinuous.ipynb").read_text())
    out = "".join("".join(o.get("text", "")) for c in notebook["cells"] if c["cell_type"] == "code"
                  for o in c.get("outputs", []))
    m = re.search(r"Solved at episode (\d+): average [\d.]+ over episodes \d+-\d+, ([\d.]+)s", out)
    return (f"It is committed with the outputs of a full run: solved at episode {m[1]} in {m[2]} s, with the final "
            f"maps and four frames of the animation.")


@block
def mountaincar_value_map() -> str:
    """docs/gymnasium.md: the run the value-map figure comes from."""
    run = load("mountaincar_value_map_run.json")
    return (f"both carry the trajectory of the episode that solved the task (episode {run['solved_at_episode']}, its "
            f"return in the title). Made by `.venv/bin/{run['command']}` (seed {run['seed']}), whose `value_map.png` it "
            f"is; the run's record is `{rel('mountaincar_value_map_run.json')}`.")


def _equal() -> dict[str, Any]:
    return load("equal_steps.json")


@block
def equal_steps_budgets() -> str:
    """docs/gymnasium.md: each task's threshold and budget of environment steps, as the results file records them."""
    tasks = _equal()["tasks"]
    return table(["task", "threshold", "budget (environment steps)", "where the budget comes from"],
                 [[task, f"{spec['threshold']:g}", f"{spec['budget_steps']:,}", spec["budget_from"]]
                  for task, spec in tasks.items()])


@block
def equal_steps_table() -> str:
    """docs/gymnasium.md: bench_gym.py's table of equal_steps.json (its .txt), recomputed from its runs."""
    from benchmarks import bench_gym

    data = _equal()
    summary, out = bench_gym.summary_and_table(data["tasks"], data["runs"])
    if summary != data["summary"]:
        raise ValueError("equal_steps.json's summary is not its runs'")
    return "```\n" + out.rstrip("\n") + "\n```\n\nFrom `" + rel("equal_steps.json") + "`."


@block
def equal_steps_runs() -> str:
    """docs/gymnasium.md: each task's runs at equal budgets, by method: how many solved, the steps and
    seconds of those that did, the final returns, episodes and minutes of those that did not."""
    data = _equal()
    rows = []
    for task in data["tasks"]:
        for method in ("ours", "sb3-ddpg", "sb3-td3"):
            runs = [r for r in data["runs"] if r["task"] == task and r["method"] == method]
            done = [r for r in runs if r["solved"]]
            rest = [r for r in runs if not r["solved"]]
            solved = (f"{span([r['env_steps_to_threshold'] for r in done], '{:,}')} steps, "
                      f"{span([r['seconds_to_threshold'] for r in done], '{:,.1f}', ' s')}, episodes "
                      f"{span([r['solved_at_episode'] for r in done], '{}')}") if done else "-"
            unsolved = (f"last 100 averaging {span([r['final_return'] for r in rest], '{:,.2f}')} after "
                        f"{span([r['episodes'] for r in rest], '{:,}')} episodes, "
                        f"{span([r['wall_s'] / 60 for r in rest], '{:.0f}')} minutes") if rest else "-"
            rows.append([task, method, f"{len(done)}/{len(runs)}", solved, unsolved])
    return table(["task", "method", "solved", "the solved runs", "the runs that did not solve within the budget"], rows)


@block
def equal_steps_in_short() -> str:
    """docs/gymnasium.md: the equal-budget comparison in a paragraph."""
    data = _equal()
    summary = data["summary"]
    peers = (("sb3-ddpg", "DDPG"), ("sb3-td3", "TD3"))
    solved = {m: sum(summary[t][m]["solved"] for t in summary) for m, _ in peers}
    runs_each = sum(summary[t]["sb3-ddpg"]["seeds"] for t in summary)
    ratios = [summary[t][m] for t in summary for m, _ in peers if summary[t][m]["ratio_env_steps"]]
    steps, seconds = sorted(r["ratio_env_steps"] for r in ratios), sorted(r["ratio_seconds"] for r in ratios)
    every = {m: [t for t in summary if summary[t][m]["solved"] == summary[t][m]["seeds"]] for m, _ in peers}
    unsolved = [t for t in summary if all(summary[t][m]["ratio_env_steps"] is None for m, _ in peers)]
    ours_all = all(summary[t]["ours"]["solved"] == summary[t]["ours"]["seeds"] for t in summary)
    hours = {m: sum(r["wall_s"] for r in data["runs"] if r["method"] == m) / 3600 for m in ("ours", "sb3-ddpg", "sb3-td3")}
    return (f"**In short**: ours reached the threshold on {'all 5 seeds of every task' if ours_all else 'not every seed'}. "
            f"Of the {runs_each} runs each peer made (3 seeds on {len(summary)} tasks), SB3's DDPG solved "
            f"{solved['sb3-ddpg']} and its TD3 {solved['sb3-td3']}: DDPG all 3 seeds on {listing(every['sb3-ddpg'])}, "
            f"TD3 on {listing(every['sb3-td3'])}. Where a peer's median run solved, it needed "
            f"{steps[0]:.2f}-{steps[-1]:.2f} times ours' environment steps and {seconds[0]:.2f}-{seconds[-1]:.2f} times "
            f"ours' wall-clock (UnityReacher-v0's compare two machines, see \"Two machines\"). On {listing(unsolved)} "
            f"neither peer's median run reached the threshold within the budget. The runs add up to "
            f"{sum(hours.values()):.1f} hours of one core (ours {hours['ours']:.1f} of them), about "
            f"{sum(hours.values()) / 2:.0f} hours two at a time.")


@block
def ours_on_xeon() -> str:
    """docs/gymnasium.md: ours again on the Xeon the later peer runs used, and the same-machine ratios."""
    data, xeon = _equal(), load("equal_steps_ours_xeon.json")
    cpu = [s["machine"]["cpu"] for s in data["sittings"]]
    epyc = [i for i, c in enumerate(cpu) if c == "AMD EPYC"]
    other = [i for i, c in enumerate(cpu) if c != "AMD EPYC"]
    ours = xeon["summary"]["UnityReacher-v0"]["ours"]
    peers = data["summary"]["UnityReacher-v0"]
    ratios = [peers[m]["median_seconds"] / ours["median_seconds"] for m in ("sb3-ddpg", "sb3-td3")]
    steps = sorted(r["env_steps_to_threshold"] for r in xeon["runs"] if r["task"] == "InvertedDoublePendulum-v5")
    pole = xeon["summary"]["InvertedDoublePendulum-v5"]["ours"]
    return (f"Sittings {span(epyc, '{}')} ran on a 2-core AMD EPYC, sittings {span(other, '{}')} on a 2-core "
            f"{xeon['machine']['cpu']}; each sitting's record names its CPU. Ours again on that CPU "
            f"(`{xeon['command']}`, commit {_short(xeon['git_commit'])}):\n\n"
            f"- UnityReacher-v0: {ours['solved']}/{ours['seeds']}, a median of {ours['median_env_steps']:,.0f} steps in "
            f"{ours['median_seconds']:.1f} s, so on one machine the peers' wall-clock is {ratios[0]:.2f} and "
            f"{ratios[1]:.2f} times ours'.\n"
            f"- InvertedDoublePendulum-v5: {pole['solved']}/{pole['seeds']} at {steps[0]:,}-{steps[-1]:,} steps, a "
            f"median of {pole['median_env_steps']:,.0f} in {pole['median_seconds']:.1f} s.")


@block
def gym_capped() -> str:
    """docs/gymnasium.md: the earlier comparison under a 300 s cap (bench_gym.json, bench_gym_reacher.json)."""
    rows, stopped, lines = [], [], []
    for name in ("bench_gym.json", "bench_gym_reacher.json"):
        bench = load(name)
        for task, methods in bench["summary"].items():
            for method, row in methods.items():
                ratios = " / ".join(num(row[k], 2) for k in ("ratio_episodes", "ratio_env_steps", "ratio_seconds"))
                rows.append([task, method, f"{row['solved']}/{row['seeds']}", num(row["median_episodes"]),
                             num(row["median_env_steps"]), num(row["median_seconds"], 1), ratios])
            ours = sorted((r for r in bench["runs"] if r["method"] == "ours" and r["task"] == task), key=lambda r: r["seed"])
            lines.append(f"- {task}: solved at episodes {', '.join(str(r['solved_at_episode'] or 'not solved') for r in ours)} "
                         f"(seeds 0-4), in {', '.join(num(r['time_to_solve_s'], 1) for r in ours)} s.")
            for method in methods:
                capped = [r for r in bench["runs"] if r["task"] == task and r["method"] == method and r["capped"]]
                if capped:
                    stopped.append(f"{method} on {task}: {len(capped)} run(s) stopped by the cap of {bench['cap_s']:g} s "
                                   f"after {span([r['episodes_run'] for r in capped], '{}')} episodes "
                                   f"({span([r['env_steps'] for r in capped], '{:,}')} steps)")
    return ("\n".join(lines) + "\n\n" + table(["task", "method", "solved", "median episodes", "median env steps",
                                                "median seconds", "x ours (episodes / steps / seconds)"], rows)
            + "\n\nRuns stopped by the cap: " + "; ".join(stopped) + f". From `{rel('bench_gym.json')}` and "
            f"`{rel('bench_gym_reacher.json')}`.")


@block
def mujoco_runs() -> str:
    """docs/gymnasium.md: the small MuJoCo tasks over seeds 0-4, from their runs' records."""
    from ddpg.solved import median_with_unsolved

    lines = []
    for task, prefix in (("InvertedPendulum-v5", "ip_p3"), ("InvertedDoublePendulum-v5", "idp_p3"),
                         ("Reacher-v5", "rv5_p5")):
        runs = [load(f"gym_probes/{prefix}_s{seed}.json") for seed in range(5)]
        med = {k: median_with_unsolved([r[k] for r in runs]) for k in ("solved_at_episode", "env_steps_to_solve",
                                                                         "time_to_solve_s")}
        lines.append(f"- {task}: solved at episodes {', '.join(str(r['solved_at_episode']) for r in runs)} (seeds 0-4); "
                     f"median {med['solved_at_episode']:.0f} episodes, {med['env_steps_to_solve']:,.0f} steps, "
                     f"{med['time_to_solve_s']:.1f} s.")
    return "\n".join(lines) + "\n\nFrom `benchmarks/results/gymnasium/gym_probes/` (`ip_p3_s*.json`, `idp_p3_s*.json`, `rv5_p5_s*.json`)."


@block
def reacher_v5_generic() -> str:
    """docs/gymnasium.md: Reacher-v5 with the generic entry, before tuning."""
    run = load("reacher_v5_seed0.json")
    return (f"**Before tuning**, Reacher-v5's generic entry (one update per step, warm-up 1000, OU noise 0.2) ended "
            f"{run['episodes_run']} episodes ({run['env_steps']:,} steps) in {run['wall_time_s']:.0f} s at an average "
            f"return over its last 100 episodes of **{run['final_average']:.2f}** (seed {run['seed']}; "
            f"`{rel('reacher_v5_seed0.json')}`).")


# --------------------------------------------------------------------------- docs/training.md

@block
def fast_backend_speed() -> str:
    """The fast learner before and after it became a back-end, alternating in one sitting."""
    speed = load("backends_fast_cpu_speed.json")
    old_one = [r["updates_per_s_1_thread"] for r in speed["runs"] if r["code"] == "old"]
    return (f"`bench_train.py --updates-only`, the code before and after alternating three times in one sitting "
            f"(`{rel('backends_fast_cpu_speed.json')}`), gave medians of {speed['median_2_threads']['old']:.0f} and "
            f"{speed['median_2_threads']['new']:.0f} updates/s on two threads (after/before "
            f"{speed['new_over_old_2_threads']}) and {speed['median_1_thread']['old']:.0f} and "
            f"{speed['median_1_thread']['new']:.0f} on one ({speed['new_over_old_1_thread']}), while the same code's "
            f"runs drifted by more than that (before, on one thread, {min(old_one):.0f}-{max(old_one):.0f}).")


@block
def environment_threads() -> str:
    """docs/environment.md: a 20-arm step on one and two threads, from bench_env.py's records."""
    rows = []
    for name in ("threads_2cores_no_fallback.json", "threads_2cores_one_busy_job_no_fallback.json",
                 "threads_2cores_one_busy_job.json", "threads_2cores.json"):
        r = load(name)
        by = {row["threads"]: row for row in r["rows"]}
        one, two = by[1], by[2]
        what = manifest(path(name).parent)["files"][name]["note"]
        rows.append([f"`{rel(name)}`", what, f"{one['env_us']['median']:.0f} / {one['physics_us']['median']:.0f}",
                     f"{two['env_us']['median']:.0f} / {two['physics_us']['median']:.0f}",
                     f"{two['env_speed_up_vs_1']:.2f} (physics {two['physics_speed_up_vs_1']:.2f})",
                     "yes" if r["bitwise_equal"] else "NO"])
    return table(["record", "what", "1 thread: step / physics (us)", "2 threads: step / physics (us)",
                  "speed-up on 2 (median of the pairs)", "bitwise equal"], rows)


@block
def admission() -> str:
    """docs/training.md: what admitting the fast learner costs at start, and its speed before and after."""
    a = load("admission.json")
    cost = {c["agents"]: c["median_s"] * 1e3 for c in a["check"]}
    two, one = a["median_2_threads"], a["median_1_thread"]
    rounds = sum(1 for r in a["runs"] if r["code"] == "old")
    steady = all(abs(x["new_over_old"] - 1) <= 0.05 for x in (two, one))
    return (f"The check costs {cost[20]:.0f} ms at start on the 20-arm default and {cost[1]:.0f} ms on the one-arm "
            f"one (medians of {a['check'][0]['repeats']} calls). The fast learner's update is the same code as before "
            f"the check; " + ("timed, it is within 5% of before: " if steady else "timed on a machine other jobs kept busy, the "
                              "medians moved with the load more than 5% one way or the other: ") +
            f"`bench_train.py --updates-only`, the code before the check (commit {a['runs'][0]['git_commit'][:7]}) and "
            f"after alternating {rounds} times in one sitting, gave medians of {two['old']:.0f} and {two['new']:.0f} "
            f"updates/s on two threads (after/before {two['new_over_old']:.3f}) and {one['old']:.0f} and "
            f"{one['new']:.0f} on one ({one['new_over_old']:.3f}); the readable learner an edited agent runs on did "
            f"{a['median_readable']:.0f}, {two['new'] / a['median_readable']:.1f} times fewer "
            f"(`{rel('admission.json')}`, `python benchmarks/bench_admission.py --old <a checkout of the code before>`).")


@block
def gpu_acting() -> str:
    """docs/training.md: acting for 20 arms on each device, and the probe machine's update costs."""
    c, p = gpu()["costs"], load("gpu_nvidia_h200_probe.json")["costs"]
    tests = gpu()["tests"]["summary"].split(" in ")[0]
    return (f"The CUDA tests of `tests/test_backends.py` passed there ({tests}: the checks of the no-GPU message), and "
            f"the capture held. Acting for 20 arms: {c['act_fast_cpu_us']:.1f} us per decision on the CPU (the fast "
            f"back-end's written-out pass), {c['act_graph_cpu_copy_us']:.1f} us on the graph back-end's CPU copy of the "
            f"actor, {c['act_eager_cuda_us']:.1f} us eagerly on the GPU. An earlier, shorter call on another H200 "
            f"machine (`{rel('gpu_nvidia_h200_probe.json')}`) gave {p['update_graph_cuda_ms']:.3f} ms per graphed "
            f"update, {p['update_eager_cuda_ms']:.3f} ms eagerly and {p['update_fast_cpu_ms']:.3f} ms on its CPU: the "
            f"CPU-side figures move from machine to machine more than the graph's.")


@block
def gpu_reading() -> str:
    """docs/training.md: where a GPU run's time goes, and the GPU issue's aims."""
    g = gpu()
    runs, s = _gpu_runs(), g["summary"]
    one = runs["cuda", "graph", 1]["seconds"]
    graph, overlap, cpu = s["cuda graph"], s["cuda graph-overlap"], s["cpu fast"]
    learning = [runs["cpu", "fast", k]["seconds"]["learning"] for k in (0, 1, 2)]
    updates = [r["updates"] for r in g["runs"] if r["device"] == "cuda"]
    met = any(any(a.values()) for a in s["aims_met"].values())
    return (f"Where the time went in the `graph` run of seed 1: stepping the environment {one['environment']:.1f} s, "
            f"acting {one['acting']:.1f} s, learning {one['learning']:.1f} s, the rest of the loop (storing "
            f"transitions, n-step returns, resets) {one['other']:.1f} s. Against the GPU issue's aims (3/3 solved by "
            f"episode 102, a median of at most 30 s, at least twice as fast as the CPU): the worst solves were at "
            f"{graph['worst_solved_at']} by `graph` and at {overlap['worst_solved_at']} by `graph-overlap`; the medians "
            f"{graph['median_wall_s']:.1f} s and {overlap['median_wall_s']:.1f} s against {cpu['median_wall_s']:.1f} s "
            f"on the CPU; the CPU took {graph['cpu_over_cuda']:.2f} and {overlap['cpu_over_cuda']:.2f} times as long. "
            f"**{'Met' if met else 'Not met'}**: the GPU can only save the CPU's learning time, which was "
            f"{min(learning):.1f}-{max(learning):.1f} s of each CPU run. A seed's updates to solve on CUDA "
            f"({min(updates):,} to {max(updates):,} here) are another draw than on the CPU (CUDA's generator draws "
            f"the batches).")


@block
def gpu_overlap() -> str:
    """docs/training.md: what graph-overlap saves on the H200, and what acting a step behind does (on the CPU)."""
    g = gpu()
    runs, s, c = _gpu_runs(), g["summary"], g["costs"]

    def waits(learner: str) -> str:
        ms = [runs["cuda", learner, k]["seconds"]["learning"] / runs["cuda", learner, k]["updates"] * 1000 for k in (0, 1, 2)]
        return f"{min(ms):.2f}-{max(ms):.2f}"

    one = runs["cuda", "graph", 1]["seconds"]
    fixed = one["environment"] + one["acting"] + one["other"]
    lines = [f"On the H200 the host then waited {waits('graph-overlap')} ms per update instead of {waits('graph')} ms, "
             f"and the median wall-clock fell from {s['cuda graph']['median_wall_s']:.1f} s to "
             f"{s['cuda graph-overlap']['median_wall_s']:.1f} s. It does not hide all of the learning: a learning step's "
             f"20 replays take about {20 * c['update_graph_cuda_ms']:.1f} ms of the GPU (20 x "
             f"{c['update_graph_cuda_ms']:.3f} ms), while the 20 environment steps beside them take about "
             f"{fixed / 100_000 * 20 * 1000:.1f} ms of the CPU (stepping, acting and the loop, {fixed:.1f} s per 100,000 "
             f"steps in the seed-1 run above)."]
    for learner, how in (("graph", "in step"), ("graph-overlap", "one step behind")):
        seeds_ = sorted(load(f"overlap_cpu_eager_{learner}.json")["runs"], key=lambda r: r["seed"])
        lines.append(f"On this project's CPU, {how}, solved at {', '.join(str(r['solved_at']) for r in seeds_)} with "
                     f"{', '.join(format(r['updates'], ',') for r in seeds_)} updates (median "
                     f"{median(r['updates'] for r in seeds_):,.0f}; `{rel(f'overlap_cpu_eager_{learner}.json')}`).")
    in_step = ", ".join(str(runs["cuda", "graph", k]["solved_at"]) for k in (0, 1, 2))
    behind = ", ".join(str(runs["cuda", "graph-overlap", k]["solved_at"]) for k in (0, 1, 2))
    lines.append(f"On the GPU, seeds 0-2 solved at {in_step} in step and {behind} one step behind.")
    return "\n\n".join(lines)


@block
def saving_costs() -> str:
    """docs/training.md: what keeping a run safe costs (benchmarks/bench_saving.py)."""
    c = load("bench_saving.json")
    return (f"For the default agent at its worst case (a full buffer of one million transitions, {c['episodes']} "
            f"episodes of scores), the copy kept for a stop and the three progress files take {c['per_episode_ms']:.2f} ms "
            f"per episode, {100 * c['per_episode_share']:.2f}% of the committed run's mean episode; the checkpoints would "
            f"add {c['checkpoints_ms']:.2f} ms, so they are written with the training state rather than every episode. A "
            f"periodic save without the buffer takes {c['periodic_save_ms']:.0f} ms; the save at a stop, with the "
            f"{c['buffer_file_mb']:.0f} MB buffer, {c['stop_save_ms'] / 1000:.1f} s (`{rel('bench_saving.json')}`).")


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
            parts[-1] += " Quoted in " + ", ".join(f"[{q.replace('.md#', '.md, ')}](../../{q})" for q in s["quoted_in"]) + "."
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
