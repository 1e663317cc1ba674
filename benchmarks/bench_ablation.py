"""Benchmark: the default, each variant, the course's baseline and single changes, 5 seeds
each on the 20-arm Reacher, through ``sweep.py`` (Ray Tune).

    .venv/bin/python -m benchmarks.bench_ablation                          # every variant
    .venv/bin/python -m benchmarks.bench_ablation --variants default,n_step3
    .venv/bin/python -m benchmarks.bench_ablation --report-only            # table + plot from the JSON

Each run stops when solved (trailing 100-episode average of the per-episode mean >= 30) or
at 300 episodes. Two runs go at once, one CPU and one thread each (``--cpus``), so a run's
wall-clock is that of a machine whose other core is busy too. Run folders go to
``runs/ablation/<variant>/seed<k>`` (a second call skips finished runs and continues
interrupted ones), and then:

    benchmarks/results/ablation/ablation.json   "runs": one record per run (variant, group, seed, config,
                                       per-episode mean scores, solved-at, times, learner)
    benchmarks/results/ablation/ablation.md     the table Report.md quotes, each row with the baseline it was
                                       measured against
    benchmarks/results/ablation/ablation.png    mean +- standard deviation learning curves, a panel per group,
                                       each beside its baseline

A variant's record in the JSON is replaced by a new run of it; other variants' are kept.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path
from typing import Any

import numpy as np

from ddpg.command_line import reproducible
from ddpg.command_line.parsing import positive_int
from ddpg.run_folder.atomic import write_json
from ddpg.run_folder.file_names import RECORD_FILE
from ddpg.run_folder.record_file import read_record
from ddpg.run_folder.score_files import read_scores
from ddpg.solved import SOLVE_SCORE, median_with_unsolved
from sweep import Trial, run_sweep

ROOT = Path(__file__).resolve().parent.parent

RESULTS = ROOT / "benchmarks" / "results" / "ablation"
JSON_FILE, TABLE_FILE, PLOT_FILE = RESULTS / "ablation.json", RESULTS / "ablation.md", RESULTS / "ablation.png"
EPISODES = 300
FIRST_MEAN = 30.0  # the table's "first reaches 30": the first episode whose mean over the arms is >= this

# name: (group, config overrides on top of the defaults (variants.parse_config), what it tests)
VARIANTS: dict[str, tuple[str, dict[str, Any], str]] = {
    "default": ("reference", {}, "this repository's defaults (ddpg_agent.DDPGConfig)"),
    "course": ("reference", {"tau": 1e-3, "learn_updates": 10},
               "the course's baseline: tau 1e-3, 10 updates every 20 decisions"),
    "tau_1e-3": ("single changes", {"tau": 1e-3}, "the course's soft-update rate alone"),
    "updates_10": ("single changes", {"learn_updates": 10}, "10 updates every 20 decisions alone"),
    "sigma_0.1": ("single changes", {"noise_sigma": 0.1}, "half the OU noise"),
    "width_64": ("single changes", {"actor_fc1": 64, "actor_fc2": 64, "critic_fc1": 64, "critic_fc2": 64},
                 "64-unit hidden layers instead of 128"),
    # Rows other than "default" were measured as changes from the one-step default of their
    # commit (BASELINE below; ablation.json records each run's config); 3-step returns and the
    # critic's layer norm are now the default's.
    "n_step_3": ("variants", {"n_step": 3}, "3-step returns (on the one-step default; now the default's)"),
    "prioritized": ("variants", {"replay": "prioritized"}, "prioritized replay (alpha 0.6, beta 0.4 -> 1)"),
    "noisy": ("variants", {"exploration": "noisy"}, "NoisyNet actor instead of OU noise"),
    "batch_norm": ("variants", {"batch_norm": True}, "batch norm in actor and critic"),
}


# What every row but "default" was measured against: the default of their commits (November
# 22), before 3-step returns, the critic's layer norm and gamma 0.95 joined it. Its five runs
# are kept in ablation.json under "baseline" (the default rows of the file at commit 5e5dca0,
# run through this script at commits 70dec9e and 1c7058a, as the other rows), so the table and
# the figure set each row beside the baseline it was measured with.
BASELINE = "one_step_default"
BASELINE_WHAT = ("the default before 3-step returns, layer norm and gamma 0.95: one-step returns, gamma 0.99, "
                 "warm-up 2,560, 10 updates while good")


def measured_against(name: str) -> str:
    """The baseline a row was measured against: today's default is its own; every other row the one-step default."""
    return "-" if name == "default" else BASELINE


def first_reaching(means: np.ndarray, level: float = FIRST_MEAN) -> int | None:
    """First episode (1-based) whose mean over the arms is >= level."""
    hits = np.flatnonzero(means >= level)
    return int(hits[0]) + 1 if len(hits) else None


def collect(names: list[str], runs_dir: Path) -> list[dict[str, Any]]:
    """One record per finished run folder of the named variants."""
    records = []
    for name in names:
        group, overrides, _ = VARIANTS[name]
        for folder in sorted((runs_dir / name).glob("seed*")):
            if not (folder / RECORD_FILE).is_file():
                continue
            run = read_record(folder)
            if not run.finished:
                continue
            means = read_scores(folder).mean(axis=1)
            records.append({
                "variant": name, "group": group, "seed": run.seed, "config": overrides,
                "scores": [round(float(m), 4) for m in means],
                "solved_at": run.solved_at_episode, "time_to_solve_s": run.time_to_solve_s,
                "wall_time_s": run.wall_time_s, "first_mean_30": first_reaching(means),
                "learner": run.learner, "threads": run.threads, "git_commit": run.git_commit,
            })
    return records


def summarise(runs: list[dict[str, Any]], baseline: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Per variant: solved count, solved-at median and range, first mean >= 30, wall-clock, and
    the baseline it was measured against; the baseline's own row first (``baseline``: its runs)."""
    named = [(BASELINE, "baseline", BASELINE_WHAT, baseline or [])] + [
        (name, group, what, [r for r in runs if r["variant"] == name]) for name, (group, _, what) in VARIANTS.items()]
    rows = []
    for name, group, what, mine in named:
        if not mine:
            continue
        solved = [r["solved_at"] for r in mine if r["solved_at"] is not None]
        firsts = [r["first_mean_30"] for r in mine]
        rows.append({
            "variant": name, "group": group, "seeds": len(mine), "solved": len(solved),
            "median_solved_at": median_with_unsolved([r["solved_at"] for r in mine]),
            "solved_at_range": [min(solved), max(solved)] if solved else None,
            "median_first_mean_30": median_with_unsolved(firsts),
            "median_time_to_solve_s": median_with_unsolved([r["time_to_solve_s"] for r in mine]),
            "learner": mine[0]["learner"], "what": what,
            "measured_against": "-" if name == BASELINE else measured_against(name),
        })
    return rows


def _fmt(value: float | None, digits: int = 0, unit: str = "") -> str:
    return "-" if value is None else f"{value:.{digits}f}{unit}"


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| variant | what | measured against | solved | solved at: median (range) | first episode with mean "
             ">= 30: median | time to solve: median | learner |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        span = "" if r["solved_at_range"] is None else f" ({r['solved_at_range'][0]}-{r['solved_at_range'][1]})"
        lines.append(f"| {r['variant']} | {r['what']} | {r['measured_against']} | {r['solved']}/{r['seeds']} | "
                     f"{_fmt(r['median_solved_at'])}{span} | {_fmt(r['median_first_mean_30'])} | "
                     f"{_fmt(r['median_time_to_solve_s'], unit=' s')} | {r['learner']} |")
    return "\n".join(lines) + "\n"


def plot(runs: list[dict[str, Any]], baseline: list[dict[str, Any]], path: Path) -> None:
    """Mean +- standard deviation of the per-episode mean score over seeds, a panel per group,
    each row beside the baseline it was measured against (dotted): today's default beside the
    one-step default it replaced, every other row beside that one-step default, its baseline.
    Runs stop when solved, so each curve ends where its first seed stopped."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def curve(ax: Any, scores: list[list[float]], label: str, **style: Any) -> None:
        n = min(len(c) for c in scores)
        stack = np.stack([np.array(c[:n]) for c in scores])
        x, mean, std = np.arange(1, n + 1), stack.mean(axis=0), stack.std(axis=0)
        ax.plot(x, mean, label=f"{label} ({len(scores)} seeds)", **style)
        if not style:
            ax.fill_between(x, mean - std, mean + std, alpha=0.2)

    panels = {"today's default": ["default"]}
    for name, (group, _, _) in VARIANTS.items():
        if name != "default":
            panels.setdefault(group if group != "reference" else "the course's settings", []).append(name)
    panels = {title: [n for n in names if any(r["variant"] == n for r in runs)] for title, names in panels.items()}
    panels = {title: names for title, names in panels.items() if names}
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.2), squeeze=False, sharey=True)
    for ax, (title, names) in zip(axes[0], panels.items(), strict=True):
        for name in names:
            curve(ax, [r["scores"] for r in runs if r["variant"] == name], name)
        if baseline:
            which = "the default it replaced" if names == ["default"] else "their baseline"
            curve(ax, [r["scores"] for r in baseline], f"one-step default, {which}", color="black", ls=":", lw=1.2)
        ax.axhline(SOLVE_SCORE, color="grey", lw=0.8, ls="--")
        ax.set_title(title)
        ax.set_xlabel("episode")
        ax.legend(fontsize=7.5, loc="lower right")
    axes[0][0].set_ylabel("score (mean over 20 arms)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_outputs(runs: list[dict[str, Any]], command: str, baseline: dict[str, Any]) -> list[dict[str, Any]]:
    rows = summarise(runs, baseline.get("runs"))
    write_json(JSON_FILE, {"command": command, "episodes_cap": EPISODES, "platform": platform.platform(),
                           "machine": reproducible.machine(), "cpus_per_run": 1, "runs_at_once": 2, "summary": rows,
                           "runs": runs, "baseline": baseline})
    TABLE_FILE.write_text(table(rows))
    plot(runs, baseline.get("runs") or [], PLOT_FILE)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description="DDPG variants and ablations over seeds on Reacher, via sweep.py")
    p.add_argument("--variants", default=",".join(VARIANTS),
                   help=f"comma-separated names (default: all): {', '.join(VARIANTS)}")
    p.add_argument("--seeds", type=positive_int, default=5)
    p.add_argument("--cpus", type=positive_int, default=2, help="runs at once (default 2)")
    p.add_argument("--runs-dir", default=str(ROOT / "runs" / "ablation"))
    p.add_argument("--report-only", action="store_true",
                   help="only rebuild the table and the plot from benchmarks/results/ablation/ablation.json")
    args = p.parse_args(argv)
    names = [n.strip() for n in args.variants.split(",") if n.strip()]
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        p.error(f"unknown variant(s) {unknown}; known: {list(VARIANTS)}")
    saved = json.loads(JSON_FILE.read_text()) if JSON_FILE.is_file() else {"runs": []}
    command = saved.get("command", "")
    if not args.report_only:
        trials = [Trial(name, seed, VARIANTS[name][1]) for name in names for seed in range(args.seeds)]
        run_sweep(trials, EPISODES, args.runs_dir, cpus=args.cpus)
        fresh = collect(names, Path(args.runs_dir))
        # Only a variant with every seed finished replaces its records (a stopped sweep leaves
        # some unfinished: the same command continues them).
        done = {n for n in names if sum(r["variant"] == n for r in fresh) >= args.seeds}
        fresh = [r for r in fresh if r["variant"] in done]
        for name in sorted(set(names) - done):
            print(f"{name}: not every seed has finished; its results are left as they were "
                  "(run the same command again to continue)")
        saved["runs"] = [r for r in saved["runs"] if r["variant"] not in done] + fresh
        if done:
            command = "python -m benchmarks.bench_ablation" + (" " + " ".join(argv or sys.argv[1:])).rstrip()
    rows = write_outputs(saved["runs"], command, saved.get("baseline", {}))
    print(table(rows))
    print(f"Wrote {JSON_FILE.name}, {TABLE_FILE.name} and {PLOT_FILE.name} in {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
