"""Values the pages quote that no single result holds: a distribution over seeds from several
files, a diagnosis's turning points, the settings as the code holds them. Each returns numbers
(Records, so a page writes ``d.median``) or a table of them; the sentences are the pages'."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import re
from pathlib import Path
from typing import Any

from benchmarks.bench_crawler import AGENTS
from benchmarks.catalogue import RESULTS, Record, ResultError, ep, files, glob, load, median, rel, rows, seeds, short, table, text

# The 20-arm defaults over seeds 0-19 (each the next's predecessor: "today" is the agent's own update, "gamma095"
# the same settings on the retired hand-written CPU learner), and the one-arm settings' runs.
TWENTY = {
    "today": [f"bench_train_readable_20seeds_{p}.json" for p in ("0-9", "10-19")],
    "gamma095": [f"bench_train_gamma095_20seeds_{p}.json" for p in ("6_13", "0_1", "2_5_7_10", "11_12_14_19")],
    "layer_norm": ["bench_train_layer_norm_20seeds_4_3_9_0-8.json", "bench_train_layer_norm_20seeds_13_10-19.json"],
    "layer_norm_var_mean": ["bench_train_layer_norm_var_mean_20seeds_9_0-8.json",
                            "bench_train_layer_norm_var_mean_20seeds_13_15_10-19.json"],
    "three_step": [f"bench_train_new_default_20seeds_{r}.json" for r in ("0-4", "5-9", "10-14", "15-19")],
    "one_step": ["bench_train_default_20seeds_0-9.json", "bench_train_default_20seeds_10-19.json"],
}
ONE_ARM = {
    "gamma099": ["bench_train_one_arm.json"],
    "gamma095": [f"bench_train_one_arm_gamma095_{part}.json" for part in ("0", "1", "2_4_6_8", "3_5_7_9")],
    "paths4": ["bench_train_one_arm_goal_paths4_u20_a.json", "bench_train_one_arm_goal_paths4_u20_b.json"],
    "paths9": [f"bench_train_one_arm_goal_paths9_u20_{part}.json" for part in ("1", "a", "b")],
    "paths19": [f"bench_train_one_arm_goal_paths19_u20_{part}.json" for part in ("screen_0", "screen_1", "2-9")],
}


def twenty(key: str) -> list[Record]:
    return seeds(*TWENTY[key])


def one_arm(key: str) -> list[Record]:
    return seeds(*ONE_ARM[key])


def lowest_after_first_30(seed: Record) -> float:
    """The lowest episode mean between a run's first episode scoring 30 and its solve."""
    return min(seed.episode_means[seed.first_30 - 1:seed.solved_at or len(seed.episode_means)])


def first_at(values: list[float], level: float = 30) -> int | None:
    """The first episode (from 1) at or above a level."""
    return next((i + 1 for i, v in enumerate(values) if v >= level), None)


def distribution(runs: list[Record]) -> Record:
    """bench_train's figures over seeds: unsolved ranks worst, nearest-rank percentiles (its rules)."""
    from benchmarks.bench_train import rank_with_unsolved
    from ddpg.solved import median_with_unsolved

    solved = [s.solved_at for s in runs]
    done = [s for s in runs if s.solved_at is not None]
    firsts = [s.first_30 for s in runs if s.get("first_30") is not None]
    return Record({"n": len(runs), "n_solved": len(done), "median": median_with_unsolved(solved),
                   "p90": ep(rank_with_unsolved(solved, 0.9)), "worst": ep(rank_with_unsolved(solved, 1.0)),
                   "updates": median(s.updates for s in done) if done else None,
                   "wall": median(s.wall_s for s in done) if done else None,
                   "first_30": median(firsts) if firsts else None})


def twenty_dist(key: str) -> Record:
    return distribution(twenty(key))


def default_row(key: str, what: str, how: str) -> Record:
    """A 20-arm default over seeds 0-19 for the defaults' table: its distribution, its files, and
    how it was run (``how`` may name ``{commit}``, the commit its first file records)."""
    return Record({**twenty_dist(key), "what": what, "files": TWENTY[key][0].split("20seeds_")[0] + "20seeds_*",
                   "how": how.format(commit=short(load(TWENTY[key][0]).git_commit))})


ONE_ARM_FILES = {"gamma099": "bench_train_one_arm.txt", "gamma095": "bench_train_one_arm_gamma095_*.txt",
                 "paths4": "bench_train_one_arm_goal_paths4_u20_{a,b}.*",
                 "paths9": "bench_train_one_arm_goal_paths9_u20_{1,a,b}.*",
                 "paths19": "bench_train_one_arm_goal_paths19_u20_{screen_0,screen_1,2-9}.*"}
ONE_ARM_LABEL = {"gamma099": "gamma 0.99", "gamma095": "gamma 0.95, no goal paths", "paths4": "four goal paths",
                 "paths9": "nine goal paths (today's)", "paths19": "nineteen goal paths"}


def one_arm_dist(key: str) -> Record:
    """One one-arm setting's seeds and distribution, with its label and files."""
    runs = one_arm(key)
    d = distribution(runs)
    return Record({**d, "label": ONE_ARM_LABEL[key], "files": ONE_ARM_FILES[key], "runs": runs,
                   "low": median(lowest_after_first_30(s) for s in runs if s.get("first_30")) if d.first_30 else None,
                   "wall": median(s.wall_s for s in runs)})


def one_arm_pair(before: str, after: str) -> str:
    """Two one-arm settings seed by seed: solved at, first 30 and the lowest episode between them
    (each), the second's wall-clock; then the medians and the files."""
    b, a = one_arm_dist(before), one_arm_dist(after)
    trio = "{solved_at}, {first_30}, {low:.2f}"
    rows = [Record({"seed": y.seed, "b": Record({**x, "low": lowest_after_first_30(x)}),
                    "a": Record({**y, "low": lowest_after_first_30(y)})}) for x, y in zip(b.runs, a.runs, strict=True)]
    rows.append(["**median**", f"**{b.median:g}**, {b.first_30:g}, {b.low:.2f}", f"**{a.median:g}**, {a.first_30:g}, "
                 f"{a.low:.2f}", f"{a.wall:.1f} s"])
    return (table({"seed": "{seed}", f"{b.label}: solved at, first 30, lowest after": lambda r: trio.format(**r.b),
                   f"{a.label}: solved at, first 30, lowest after": lambda r: trio.format(**r.a),
                   f"{a.label.removesuffix(' (today' + chr(39) + 's)')}: wall-clock": "{a.wall_s:.1f} s"}, rows)
            + f"\n\nFrom {files('one_arm/' + b.files, 'one_arm/' + a.files)}.")


def checkpoint_eval() -> Record:
    """The committed weights played without noise (benchmarks/eval_checkpoints.py's printout)."""
    name = "checkpoint_eval.txt"
    return Record({**matches(r"20 arm\(s\), 100 episodes, seed 2024: mean (?P<twenty>[\d.]+) \(episodes from "
                             r"(?P<low>[\d.]+) to (?P<high>[\d.]+)\)", name)[0],
                   **matches(r"1 arm\(s\), 100 episodes, seed 2025: mean (?P<one>[\d.]+)", name)[0]}, name)


# --------------------------------------------------------------------------- bench_train runs side by side

CELL = {"solved_at": ("solved at", lambda s: ep(s.solved_at)), "first_30": ("first 30", lambda s: ep(s.get("first_30"))),
        "low": ("lowest after", lambda s: f"{lowest_after_first_30(s):.2f}" if s.get("first_30") else "-"),
        "updates": ("updates", lambda s: f"{s.updates:,}"), "wall_s": ("wall-clock", lambda s: f"{s.wall_s:.1f} s")}
CELL |= {k: (name, lambda s, k=k: f"{s.seconds[k]:.1f} s") for k, name in (
    ("learning", "learning"), ("acting", "acting"), ("environment", "environment"), ("other", "storing and the loop"))}


def _summary(runs: list[Record], metric: str) -> str:
    """A column's median of one metric: solved-at with unsolved ranking worst, the rest over solved runs."""
    if metric == "solved_at":
        return ep(distribution(runs).median)
    if metric in ("learning", "acting", "environment", "other"):
        return f"{median(s.seconds[metric] for s in runs):.1f} s"
    if metric == "low":
        values = [lowest_after_first_30(s) for s in runs if s.get("first_30")]
        return f"{median(values):.2f}" if values else "-"
    values = [s[metric] for s in runs if s.get(metric) is not None and (metric == "first_30" or s.solved_at)]
    m = median(values) if values else None
    return "-" if m is None else f"{m:.1f} s" if metric == "wall_s" else f"{m:,.0f}" if metric == "updates" else f"{m:g}"


def compare(*columns: str, show: str = "solved_at", delta: bool = False) -> str:
    """Runs of bench_train.py seed by seed, side by side: each column ``'label: study/glob.json'``
    (several joined by ' + '), each cell the ``show`` metrics; then each column's solved count,
    medians, 90th percentile and worst (unsolved ranks worst), and (``delta``) each later column's
    median updates and wall-clock against the first's; then the files."""
    metrics = [m.strip() for m in show.split(",")]
    labels = [c.rpartition(": ")[0] for c in columns]
    patterns = [p.strip() for c in columns for p in c.rpartition(": ")[2].split(" + ")]
    runs = [{s.seed: s for p in c.rpartition(": ")[2].split(" + ") for name in glob(p)
             for s in load(name).seeds} for c in columns]
    seed_list = sorted(set().union(*runs))
    head = " / ".join(CELL[m][0] for m in metrics)
    dists = [distribution(list(r.values())) for r in runs]
    out = [[s] + [" / ".join(CELL[m][1](r[s]) for m in metrics) if s in r else "" for r in runs] for s in seed_list]
    out.append(["**solved**"] + [f"{d.n_solved}/{d.n}" for d in dists])
    out.append(["**median**"] + [" / ".join(_summary(list(r.values()), m) for m in metrics) for r in runs])
    if len(seed_list) >= 10:
        out.append(["**90th percentile, worst**"] + [f"{d.p90}, {d.worst}" for d in dists])
    notes = ""
    for label, r in zip(labels[1:], runs[1:], strict=True) if delta else ():
        parts = []
        for key, what, fewer in (("updates", "updates", "fewer"), ("wall_s", "wall-clock", "less")):
            a, b = (median(s[key] for s in x.values() if s.solved_at) for x in (runs[0], r))
            parts.append(f"{b / a:.1f} times the {what}" if b / a >= 2 else f"{abs(1 - b / a):.0%} "
                         f"{fewer if b < a else 'more'} {what}")
        notes += f" {label}: {' and '.join(parts)} at the median than {labels[0]}."
    named = ", ".join(dict.fromkeys(f"`{p.removesuffix('.json')}.*`" for p in patterns))
    return (table(["seed"] + [f"{label}: {head}" if len(metrics) > 1 else label for label in labels], out)
            + (f"\n\n{notes.strip()}" if notes else "") + f"\n\nFrom {named} (in `benchmarks/results/`).")


def printout_seeds(name: str) -> list[Record]:
    """The seeds of a bench_train.py printout (.txt) with no JSON beside it."""
    return [Record({"seed": int(m[1]), "solved_at": None if m[2] == "unsolved" else int(m[2]), "wall_s": float(m[3]),
                    "updates": int(m[4]), "final_avg100": float(m[5]),
                    "first_30": int(m[6]) if m[6] and m[6] != "-" else None}, name)
            for m in re.finditer(r"^seed (\d+): solved at episode (\d+|unsolved)[^\n]*?wall ([\d.]+)s\s+updates (\d+)"
                                 r"\s+final avg100 ([\d.]+)(?:\s+first mean >= 30 at episode (\d+|-))?", text(name), re.M)]


def screen(name: str) -> Record:
    """A screen's command, its --config and episode cap, and its seeds (from its JSON or its printout)."""
    bench = load(name) if name.endswith(".json") else Record({"command": text(name).splitlines()[0].lstrip("# "),
                                                              "seeds": printout_seeds(name)}, name)
    config = re.search(r"--config '?(\{.*?\})'?(?: --|$)", bench.get("command", ""))
    cap = re.search(r"--max-episodes (\d+)", bench.get("command", ""))
    return Record({**bench, "name": name, "stem": Path(name).stem, "config": config[1] if config else None,
                   "cap": cap[1] if cap else None}, name)


# --------------------------------------------------------------------------- the settings

def setting_rows() -> list[Record]:
    """DDPGConfig's fields (the networks' widths aside) and the one-arm overrides beyond them, each
    with the meaning its field's metadata holds: the settings are described once, in the code."""
    from ddpg.tasks import REACHER_ONE_ARM
    from ddpg.variants.config import VariantConfig
    from ddpg_agent import DDPGConfig

    config, one = DDPGConfig(), REACHER_ONE_ARM.config
    known = {f.name: f for f in dataclasses.fields(VariantConfig)} | {f.name: f for f in dataclasses.fields(config)}
    # The networks' widths (null: model.py's own) are the networks' table's.
    names = [f.name for f in dataclasses.fields(config) if not (f.metadata.get("network") and f.default is None)]
    return [Record({"name": name, "doc": known[name].metadata.get("doc") or "(no description)" if name in known else
                    "(no description)", "twenty": getattr(config, name, None), "one": one.get(name, getattr(config, name, None))})
            for name in names + [k for k in one if not hasattr(config, k)]]


def learner_rows() -> list[Record]:
    """The learners as ``ddpg.backends.LEARNER_ROWS`` declares them (what runs, what it serves), in its order."""
    from ddpg.backends import LEARNER_ROWS

    return [Record({"learner": name, "runs": runs, "serves": serves}, f"learner {name}")
            for name, (_, runs, serves) in LEARNER_ROWS.items()]


def variant_rows() -> list[Record]:
    """The variants as ``ddpg.variants.registry.VARIANTS`` declares them, in its order: the config that turns
    each on (its value, or one a preset gives it), its module and piece, and what it does (the piece's docstring)."""
    import inspect

    from ddpg.variants import registry
    from ddpg.variants.config import switch_value

    rows = []
    for v in registry.VARIANTS:
        given = switch_value(v)
        config = json.dumps({v.switch: given}) if given is not None else f'{{"{v.switch}": N}}'
        doc = " ".join((inspect.getdoc(v.piece) or "").split()).removeprefix("The piece (``registry``): ")
        module = v.piece.__module__.rsplit(".", 1)[-1]
        rows.append(Record({"config": config, "module": f"ddpg/variants/{module}.py", "piece": f"{module}.{v.piece.__name__}",
                            "doc": doc.replace("``", "`").replace("|", "\\|"), "settings": ", ".join(f"`{s}`" for s in v.settings) or "-"},
                           f"variant {v.switch}"))
    return rows


def preset_rows() -> list[Record]:
    """``ddpg.variants.config.PRESETS``: each preset's settings."""
    from ddpg.variants.config import PRESETS

    return [Record({"preset": json.dumps({"preset": name}), "sets": ", ".join(f"`{k}` {json.dumps(v)}" for k, v in sets.items())},
                   f"preset {name}") for name, sets in PRESETS.items()]


def value(v: Any) -> str:
    """A setting's value as the hyperparameter table writes it."""
    return ("on" if v else "off") if isinstance(v, bool) else f"{v:,}" if isinstance(v, int) else (
        f"{v:g}" if isinstance(v, float) else "-" if v is None else str(v))


def networks() -> Record:
    """The default config as built: a null width is model.py's own, which the agent's config records."""
    from ddpg_agent import Agent
    from reacher.environment import ACTION_SIZE
    from reacher.observation import OBSERVATION_SIZE

    built = Agent(OBSERVATION_SIZE, ACTION_SIZE, 0, buffer_size=1024).config.to_dict()
    return Record({**built, "state": OBSERVATION_SIZE, "action": ACTION_SIZE}, "the networks DDPGConfig() builds")


def with_built_widths(config: Any) -> Any:
    """A config with its null widths as model.py builds them: what a run records, so what a result's config holds."""
    return dataclasses.replace(config, **{k: v for k, v in networks().items() if getattr(config, k, 0) is None})


# --------------------------------------------------------------------------- the GPU, diagnoses

def gpu() -> Record:
    return load("gpu_nvidia_h200.json")


def gpu_run(device: str, learner: str, seed: int) -> Record:
    return next(r for r in gpu().runs if (r.device, r.learner, r.seed) == (device, learner, seed))


def gpu_seeds() -> list[Record]:
    """Each seed's runs on the H200 machine, by learner: ``graph``, ``overlap`` (CUDA) and ``cpu``."""
    runs = gpu().runs
    return [Record({"seed": k, "graph": gpu_run("cuda", "graph", k), "overlap": gpu_run("cuda", "graph-overlap", k),
                    "cpu": gpu_run("cpu", cpu_learner(), k)}) for k in sorted({r.seed for r in runs})]


def cpu_learner() -> str:
    """The CPU learner the GPU record compares with: "fast" (the hand-written learner, retired) in
    records made before it was, "readable" since."""
    return "fast" if any(r.learner == "fast" for r in gpu().runs) else "readable"


def saturation(name: str, episodes: str = "1,2,5,10,20,30") -> str:
    """benchmarks/diagnose_saturation.py's rows at some episodes: score, share of actions at +-1,
    the tanh layer's mean |pre-activation|."""
    at = [next(r for r in load(name).rows if r.episode == int(e)) for e in episodes.split(",")]
    return table(["episode"] + [str(r.episode) for r in at], [
        ["mean score"] + [f"{r.score:.2f}" for r in at], ["actions at +-1"] + [f"{100 * r.saturated:.0f}%" for r in at],
        ["mean pre-activation"] + [f"{r.mean_abs_pre:.1f}" for r in at]]) + f"\n\nFrom `{rel(name)}`."


def update_rates(name: str) -> list[Record]:
    """bench_train.py --updates-only printouts: each command, its commit, its updates/s on two
    threads (or the readable learner's one) and on one thread."""
    out = []
    for part in re.split(r"\n(?=(?:# )?(?:\$ )?(?:\.venv/bin/)?python benchmarks/bench_train\.py)", "\n" + text(name)):
        command = re.match(r"(?:# )?(?:\$ )?((?:\.venv/bin/)?python benchmarks/bench_train\.py[^\n]*)", part)
        two, one = (re.search(rf"^{w}: (\d+) updates/s", part, re.M) for w in ("learner", "learner 1 thread"))
        commit = re.search(r"commit ([0-9a-f]{7})", part)
        if command and (two or one):
            out.append(Record({"command": command[1].strip(), "commit": commit[1] if commit else "-",
                               "two": int(two[1]) if two else None, "one": int(one[1]) if one else None}, name))
    return out


def matches(pattern: str, name: str) -> list[Record]:
    """Every match of a regular expression's named groups in a printout, as written there; a
    printout with none is a ResultError naming it."""
    found = [Record(m.groupdict(), name) for m in re.finditer(pattern, text(name), re.M)]
    if not found:
        raise ResultError(f"{rel(name)}: nothing in it reads as {pattern!r}")
    return found



# --------------------------------------------------------------------------- the Crawler (docs/crawler.md)

def crawler_sources() -> str:
    """Every number of the Crawler scene with the file and field it comes from (crawler/scene.py)."""
    from crawler.scene import SOURCES

    return table({"quantity": "{what}", "value": "{value}", "file": "`{file}`", "field or line": "{field}"},
                 [s._asdict() for s in SOURCES])


def crawler_observation_rows() -> str:
    """The 129 observation values by index range, each with its source line (crawler/observation.py)."""
    from crawler import observation as o

    return table(["index", "values", "frame", "added by"], [[i, w, f, f"`{src}`"] for i, w, f, src in o.blocks()])


def crawler_action_rows() -> str:
    """The 20 action values by index range, each with its source line (crawler/actions.py)."""
    from crawler.actions import ACTIONS

    return table(["index", "what it sets", "read by"], [[i, w, f"`{src}`"] for i, w, src in ACTIONS])


def crawler_physx_rows() -> str:
    """The built-in Crawler against PhysX 4.1, policy by policy (crawler_physics/crawler_physx.json)."""
    data = load("crawler_physx.json").policies
    rows = []
    for policy in ("still", "stand", "uniform", "gauss"):
        m, p = data[policy].mujoco, data[policy].physx
        h30 = "-" if m.median_height30 is None else f"{m.median_height30:.2f} / {p.median_height30:.2f}"
        rows.append([policy, m.episodes, f"{m.median_decisions:g} / {p.median_decisions:g}",
                     f"{m.mean_score:.2f} / {p.mean_score:.2f}", f"{m.median_top_speed:.2f} / {p.median_top_speed:.2f}", h30])
    return table(["policy", "episodes", "decisions, median (MuJoCo / PhysX)", "score, mean", "top body speed, median",
                  "body height at decision 30, median"], rows)


def crawler_seeds() -> list[Record]:
    """The 5-seed Crawler benchmark's seeds (crawler_5_seeds/bench_crawler_5seeds.json)."""
    return list(load("bench_crawler_5seeds.json").seeds)


def crawler_walks(stage: str) -> dict[str, list[Record]]:
    """The Crawler study's seeds at one stage (crawler_walks/<stage>/<candidate>/seed<k>/seed.json): each
    candidate's, in seed order, the candidates by their median seed's greedy score, best first."""
    found: dict[str, list[Record]] = {}
    for name in sorted(p.relative_to(RESULTS).as_posix() for p in RESULTS.glob(f"crawler_walks/{stage}/*/seed*/seed.json")):
        record = load(name)
        found.setdefault(record.candidate, []).append(record)
    for runs in found.values():
        runs.sort(key=lambda r: r.seed)
    return dict(sorted(found.items(), key=lambda kv: -median([r.greedy_score for r in kv[1]])))


def crawler_walks_table(stage: str) -> str:
    """One row per candidate of a stage of the study, and Reacher's settings at the same budget (the
    crawler_5_seeds study's DDPG): each seed's greedy mean over its crawler-episodes, their median, its
    training average at the end (noisy too, but over 100 crawler-episodes), and each seed's transitions
    and wall-clock (minutes; "x2": beside another seed, each on one core)."""
    def row(name: str, what: str, runs: list[Record], jobs: int | None) -> list[str]:
        scores = [r.greedy_score for r in runs]
        walls = ", ".join(f"{r.wall_s / 60:.0f}" for r in runs)
        return [f"`{name}`", what, ", ".join(str(r.seed) for r in runs), ", ".join(f"{s:.1f}" for s in scores),
                f"**{median(scores):.1f}**", ", ".join(f"{r.final_avg100:.1f}" for r in runs), f"{max(r.env_steps for r in runs):,}",
                walls + ("" if jobs in (None, 1) else f" (x{jobs})")]

    rows_ = [row(name, runs[0].why, runs, max(r.jobs for r in runs)) for name, runs in crawler_walks(stage).items()]
    if stage == "screen":  # Reacher's settings were run at the screen's budget
        base = load("bench_crawler_5seeds.json")
        rows_.append(row("reacher", "the baseline: DDPGConfig's defaults, tuned on Reacher (`crawler_5_seeds/`)",
                         list(base.seeds), None))
    if not rows_:
        return f"No seed of the {stage} stage is committed yet."
    return table(["candidate", "settings", "seeds", "greedy mean of each seed", "median",
                  "training average at the end (100 crawler-episodes)", "transitions a seed", "minutes a seed"], rows_)


@functools.cache
def _final_curves() -> tuple[str, tuple[tuple[tuple[int, int, float], ...], ...]]:
    """The study's best final candidate and each seed's rounds (transitions, updates so far, training average),
    read once for every point the pages ask of it."""
    name, runs = next(iter(crawler_walks("final").items()))
    curves = []
    for r in runs:
        metrics = rows(f"benchmarks/results/crawler_walks/final/{name}/seed{r.seed}/metrics.csv")
        updates = itertools.accumulate(int(m.updates) for m in metrics)
        curves.append(tuple((int(m.env_steps), u, float(m.average100)) for m, u in zip(metrics, updates, strict=True)))
    return name, tuple(curves)


def crawler_here_at(kind: str, level: int) -> Record | None:
    """The study's best final candidate at the first round of each seed that reaches ``level`` ``kind``
    ("transitions" or "updates"; a seed within one decision of a point of transitions, as its budget's 999,996 is of
    1,000,000, counts as reaching it): the median, lowest and highest seed's training average over the last 100
    crawler-episodes, and the other count (the median seed's). None when a seed never gets there."""
    name, curves = _final_curves()
    column = ("transitions", "updates").index(kind)
    reached = level - (AGENTS if kind == "transitions" else 0)  # a decision is 12 transitions
    found = [next((x for x in curve if x[column] >= reached), None) for curve in curves]
    if None in found:
        return None
    avg = sorted(x[2] for x in found)
    return Record({"candidate": name, "median": median(avg), "lowest": avg[0], "highest": avg[-1],
                   "other": median([x[1 - column] for x in found])})


def crawler_against_reference(kind: str) -> str:
    """The SAC known to walk the course's own build (crawler_reference/sac_walks.json) where it first reaches
    each point of ``kind`` ("transitions" or "updates"): its training score (96 crawler-episodes), mean life and
    the other count; beside it the study's best final candidate there (``crawler_here_at``)."""
    other = ("updates", "transitions")[("transitions", "updates").index(kind)]
    name = _final_curves()[0]
    rows_ = []
    for p in load("sac_walks.json")[f"by_{kind}"]:
        h = crawler_here_at(kind, p.at)
        here = ["-", "-"] if h is None else [f"{h.median:.1f} ({h.lowest:.1f} to {h.highest:.1f})", f"{h.other:,.0f}"]
        rows_.append([f"{p.at:,}", f"{p.score:.1f}", f"{p.life:.0f}", f"{p[other]:,}", *here])
    return table([kind, "reference: training score", "reference: mean life (decisions)", f"reference: {other}",
                  f"`{name}`: training average, median seed (lowest to highest)", f"`{name}`: {other}"], rows_)


def crawler_genuine_rows() -> str:
    """The genuine-trained SAC and uniform random play by engine and reading (crawler_genuine/*.json):
    first lives of 12 crawlers, as the actor's own notebook plays them."""
    def reading(r: Record) -> str:
        if "options" not in r.engine:
            return f"{r.engine.name}, {r.engine.substeps} substeps (the built-in Crawler)"
        return f"PhysX 4.1 reference `{' '.join(r.engine.options)}`" if r.engine.options else "PhysX 4.1 reference, as before"

    def cell(part: Record) -> str:
        return f"{part.mean_score:.1f} ± {part.score_se:.1f}"

    records = [load(name.split("/")[-1]) for name in glob("crawler_genuine/genuine_*.json")]
    records.sort(key=lambda r: (-r.actor.full_lives, -r.actor.mean_score))
    return table({"engine and reading": reading, "SAC greedy: score ± s.e.": lambda r: cell(r.actor),
                  "SAC: mean life (decisions)": "{actor.mean_life:.1f}",
                  "SAC: lives reaching 1000": lambda r: f"{100 * r.actor.full_lives:.0f}%",
                  "random: mean first life ± s.e.": lambda r: f"{r.random.mean_life:.1f} ± {r.random.life_se:.1f}"},
                 records)
