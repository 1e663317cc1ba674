"""What generation cannot say about the docs and their result files.

Every table and figure in README.md, Report.md and docs/ is generated from benchmarks/results/
by `make docs` (benchmarks/catalogue.py), and tests/test_docs_generated.py checks the committed
pages are what it gives. What stays here: that the records are of the settings the docs say they
are (the default's twenty seeds made with today's DDPGConfig, the one-arm files with
REACHER_ONE_ARM, the MuJoCo runs with TASKS), that results files agree with what their scripts
compute from their runs, the figures in the two files that are not generated (the notebook's
prose and tasks.py's comments), and the shape of the pages (the README short, the Report at most
300 lines, every docs page linked).
"""

from __future__ import annotations

import dataclasses
import json
import re
import statistics
from pathlib import Path

import pytest

from benchmarks import catalogue, figures

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
REPORT = (ROOT / "Report.md").read_text()


def flat(text: str) -> str:
    """Prose with its line breaks folded, so a figure may wrap."""
    return re.sub(r"\s+", " ", text)


@pytest.mark.parametrize("name,text", [("README.md", README), ("Report.md", REPORT)])
def test_nothing_links_outside_the_repository(name, text):
    assert "../shared" not in text, f"{name} points outside the repository"


def test_the_readme_is_short_and_the_report_is_the_course_report() -> None:
    """A newcomer reads the README in five minutes; the Report is the course's report, at most 300
    lines, and the record of experiments is docs/experiments.md."""
    assert README.count("\n") <= 200, "README.md should stay at most 200 lines; move detail to docs/"
    assert REPORT.count("\n") <= 300, "Report.md should stay at most 300 lines; experiments go to docs/experiments.md"
    for section in ("## Learning algorithm", "## Network architectures", "## Hyperparameters", "### The committed run",
                    "### Twenty seeds", "### One arm", "### What mattered: the ablation", "### The GPU",
                    "## Ideas for future work"):
        assert section in REPORT, f"Report.md should have {section!r}"
    assert "![Per-episode mean score" in REPORT and "(checkpoint_scores.png)" in REPORT
    pages = sorted((ROOT / "docs").glob("*.md"))
    for page in pages:
        assert f"(docs/{page.name})" in README, f"README.md should link docs/{page.name}"


def test_the_reward_plot_is_the_committed_run():
    import numpy as np

    from ddpg.solved import solved_at

    committed = json.loads((ROOT / "checkpoint_run.json").read_text())
    scores = np.loadtxt(ROOT / "checkpoint_scores.csv", delimiter=",", skiprows=1, ndmin=2)[:, 1:]
    assert scores.shape == (committed["episodes_run"], committed["n_agents"])
    assert solved_at(scores.mean(axis=1)) == committed["solved_at_episode"]
    assert "![Rewards of the committed run](checkpoint_scores.png)" in README
    value_map = catalogue.load("mountaincar_value_map_run.json")
    assert (value_map["env_id"], value_map["seed"], value_map["solved_at_episode"]) == ("MountainCarContinuous-v0", 0, 100)


def test_the_defaults_twenty_seeds_are_of_the_settings_the_docs_name():
    """Today's default's files were made with today's DDPGConfig; the layer-norm default's with
    gamma 0.99; the 3-step default's without layer norm; all four over seeds 0-19."""
    from ddpg.loop import GOOD_UPDATES
    from ddpg.run_folder.record import UNRECORDED_SETTINGS
    from ddpg.variants import parse_config
    from ddpg_agent import DDPGConfig

    today = figures.with_built_widths(DDPGConfig())  # a run records the widths model.py built
    previous = dataclasses.replace(today, gamma=0.99)
    for key, config in (("today", today), ("gamma095", today), ("layer_norm", previous)):
        for name in figures.TWENTY[key]:
            bench = catalogue.load(name)
            recorded = figures.with_built_widths(parse_config(bench["config"]))  # null widths: model.py's
            assert recorded == config and bench["schedule"]["good_updates"] == GOOD_UPDATES, name
    for name in figures.TWENTY["three_step"]:  # the records predate the layer-norm key
        bench = catalogue.load(name)
        assert parse_config({**UNRECORDED_SETTINGS, **bench["config"]}) == dataclasses.replace(
            previous, critic_layer_norm=False)
    for name in figures.TWENTY["layer_norm_var_mean"]:
        bench = catalogue.load(name)
        assert bench["config"]["critic_layer_norm"] is True and bench["git_commit"].startswith("b12c905")
    for key in figures.TWENTY:
        assert [s["seed"] for s in figures.twenty(key)] == list(range(20)), key
    # Under Ray Tune on one thread a seed takes the path it takes in bench_train.py.
    runs = sorted((r for r in catalogue.load("ablation.json")["runs"] if r["variant"] == "default"), key=lambda r: r["seed"])
    twenty = {s["seed"]: s["solved_at"] for s in figures.twenty("gamma095")}
    assert [r["solved_at"] for r in runs] == [twenty[k] for k in range(5)]


@pytest.mark.parametrize(("old_file", "new_file", "commits"), [
    ("bench_train_ab_old_default_e613d18.json", "bench_train_ab_new_default_4a72298.json", ("e613d18", "4a72298")),
    ("bench_train_ab_old_default_e613d18_second.json", "bench_train_ab_layer_norm_default_38f155f.json", ("e613d18", "38f155f")),
    ("bench_train_ab_gamma_default_c705db2.json", "bench_train_ab_gamma095_c705db2.json", ("c705db2", "c705db2")),
])
def test_each_new_default_ran_beside_the_one_it_replaced(old_file, new_file, commits):
    """One sitting, one machine, one thread each, the same seeds; and the bar each default met."""
    old, new = catalogue.load(old_file), catalogue.load(new_file)
    assert old["machine"]["cpu"] == new["machine"]["cpu"] and old["threads"] == new["threads"] == 1
    assert old["git_commit"].startswith(commits[0]) and new["git_commit"].startswith(commits[1])
    assert [s["seed"] for s in old["seeds"]] == [s["seed"] for s in new["seeds"]] == list(range(5))
    assert new["median_wall_s"] <= old["median_wall_s"]  # no slower than the default it replaces


def test_the_one_arm_files_are_of_their_settings():
    from ddpg.tasks import REACHER_ONE_ARM

    before = {k: v for k, v in {**REACHER_ONE_ARM.config, "goal_paths": 0, "learn_updates": 10}.items()
              if k != "goal_paths"}
    settings = {"gamma095": before, "paths4": {**REACHER_ONE_ARM.config, "goal_paths": 4},
                "paths9": REACHER_ONE_ARM.config, "paths19": {**REACHER_ONE_ARM.config, "goal_paths": 19}}
    for key, config in settings.items():
        for name in figures.ONE_ARM[key]:
            bench = catalogue.load(name)
            assert bench["agents"] == 1 and bench["schedule"]["good_score"] is None, name
            assert {k: bench["config"][k] for k in config} == config, name
        assert [s["seed"] for s in figures.one_arm(key)] == list(range(10)), key
    assert "goal_paths" not in catalogue.load(figures.ONE_ARM["gamma095"][0])["config"]
    # The screen of nine paths is seed 0 of the ten-seed runs, episode for episode.
    screen = catalogue.load("bench_train_one_arm_goal_paths9_u20_screen.json")["seeds"][0]
    assert screen["episode_means"] == figures.one_arm("paths9")[0]["episode_means"]


def test_the_figures_outside_the_generated_pages():
    """The notebook's prose and tasks.py's comments quote the one-arm median and the default's
    twenty seeds; they are not generated, so they are checked against the files here."""
    nine = figures.distribution(figures.one_arm("paths9"))
    four = figures.distribution(figures.one_arm("paths4"))
    before = figures.distribution(figures.one_arm("gamma095"))
    tasks = flat((ROOT / "ddpg" / "tasks.py").read_text().replace("#", ""))
    assert f"(median {nine['median']:g} episodes against {four['median']:g} with four)" in tasks
    assert f"(median {four['median']:g} episodes against {before['median']:g})" in tasks
    notebook = json.loads((ROOT / "Continuous_Control.ipynb").read_text())
    cells = notebook["cells"]
    assert f"a median of {nine['median']:g} over ten seeds" in flat("".join(cells[1]["source"]))
    output = "".join("".join(o.get("text", "")) for c in cells if c["cell_type"] == "code" for o in c.get("outputs", []))
    match = re.search(r"Solved at episode (\d+)", output)
    assert match, "the committed notebook should hold a full run that solved"
    solved = int(match[1])
    prose = flat(" ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown"))
    runs = [s["solved_at"] for s in figures.twenty("today")]
    d = figures.twenty_dist("today")
    assert f"the default solved between episodes {min(runs)} and {d['worst']}, at a median of {d['median']:g}" in prose
    earlier, same, later = (sum(v < solved for v in runs), sum(v == solved for v in runs), sum(v > solved for v in runs))
    assert (f"solved at episode {solved}. Of the 20 benchmark seeds, {earlier} solved earlier, {same} at the same "
            f"episode and {later} later") in prose
    assert solved <= 125


def test_the_ablation_results_are_their_runs():
    """ablation.json's summary and ablation.md are bench_ablation.py's of its runs (the Report's
    table is generated from them); every variant over seeds 0-4 with its own config."""
    from benchmarks import bench_ablation

    data = catalogue.load("ablation.json")
    runs = data["runs"]
    for run in runs:
        assert run["config"] == bench_ablation.VARIANTS[run["variant"]][1]
    for variant in {r["variant"] for r in runs}:
        assert sorted(r["seed"] for r in runs if r["variant"] == variant) == [0, 1, 2, 3, 4], variant
    baseline = data["baseline"]["runs"]
    assert sorted(r["seed"] for r in baseline) == [0, 1, 2, 3, 4] and all(r["config"] == {} for r in baseline)
    rows = bench_ablation.summarise(runs, baseline)
    assert rows == data["summary"] and bench_ablation.table(rows) == catalogue.text("ablation.md")
    for row in rows:
        for r in (r for r in runs + baseline if r["variant"] == row["variant"]):
            assert r["solved_at"] is None or r["solved_at"] == len(r["scores"])


def test_the_equal_step_comparison_is_its_results_file():
    """equal_steps.json's summary is recomputed from its runs, every run within its task's budget,
    and ours on the peers' second machine is the file the docs say."""
    from benchmarks import bench_gym

    data = catalogue.load("equal_steps.json")
    budgets = {task: spec["budget_steps"] for task, spec in data["tasks"].items()}
    for task, spec in data["tasks"].items():
        assert spec["budget_steps"] == bench_gym.BENCH_TASKS[task]["budget_steps"], task
    for run in data["runs"]:
        assert run["env_steps"] <= budgets[run["task"]] and run["solved"] == bench_gym.within_budget(run, budgets[run["task"]])
    assert bench_gym.summary_and_table(data["tasks"], data["runs"])[0] == data["summary"]
    for task in data["tasks"]:
        seeds = {m: sorted(r["seed"] for r in data["runs"] if r["task"] == task and r["method"] == m)
                 for m in bench_gym.METHODS}
        assert seeds == {"ours": [0, 1, 2, 3, 4], "sb3-ddpg": [0, 1, 2], "sb3-td3": [0, 1, 2]}, (task, seeds)
    xeon = catalogue.load("equal_steps_ours_xeon.json")
    assert bench_gym.summary_and_table(xeon["tasks"], xeon["runs"])[0] == xeon["summary"]
    cpu = {i: sitting["machine"]["cpu"] for i, sitting in enumerate(data["sittings"])}
    unity = [run for run in data["runs"] if run["task"] == "UnityReacher-v0"]
    assert {cpu[run["sitting"]] for run in unity if run["method"] != "ours"} == {xeon["machine"]["cpu"]}


@pytest.mark.parametrize("task, prefix", [("InvertedPendulum-v5", "ip_p3"), ("InvertedDoublePendulum-v5", "idp_p3"),
                                          ("Reacher-v5", "rv5_p5")])
def test_mujoco_task_runs_are_of_todays_settings(task, prefix):
    """docs/gymnasium.md's 5-seed lines are runs of the settings TASKS holds now."""
    from ddpg.tasks import TASKS
    from ddpg.variants import parse_config

    entry = TASKS[task]
    for seed in range(5):
        run = catalogue.load(f"gym_probes/{prefix}_s{seed}.json")
        assert run["seed"] == seed and run["env_id"] == task and run["reward_scale"] == entry.reward_scale
        assert parse_config(run["config"]) == figures.with_built_widths(parse_config(entry.config))
        assert run["schedule"]["good_score"] == entry.good_score


def test_the_records_agree_with_themselves():
    """Figures a result file derives from its own runs, recomputed."""
    speed = catalogue.load("backends_fast_cpu_speed.json")
    assert [r["code"] for r in speed["runs"]] == ["old", "new"] * 3
    for threads, key in (("2_threads", "updates_per_s_2_threads"), ("1_thread", "updates_per_s_1_thread")):
        medians = {code: statistics.median(r[key] for r in speed["runs"] if r["code"] == code) for code in ("old", "new")}
        assert speed[f"median_{threads}"] == medians
        assert speed[f"new_over_old_{threads}"] == round(medians["new"] / medians["old"], 3)
    cost = catalogue.load("bench_saving.json")
    committed = json.loads((ROOT / "checkpoint_run.json").read_text())
    assert cost["committed_episode_ms"] == round(1000 * committed["wall_time_s"] / committed["episodes_run"], 1)
    gpu = figures.gpu()
    assert gpu["tests"]["returncode"] == 0 and gpu["graph_capture"] == "captured"
    for row in ("cuda graph", "cuda graph-overlap", f"cpu {figures.cpu_learner()}"):
        assert gpu["summary"][row]["median_wall_s"] == round(statistics.median(
            r["wall_s"] for r in gpu["runs"] if f"{r['device']} {r['learner']}" == row), 1)
    check = catalogue.text("reproducible_cross_cpu.txt")
    assert "--reproducible: scores identical True, weights bitwise identical True" in check
    assert "default:        scores identical False, weights bitwise identical False" in check
    # The fast learner is the code before the split made readable beside it: the same episodes.
    fast, previous = catalogue.load("bench_train_5seeds.json"), catalogue.load("bench_train_5seeds_previous_5da63e2.json")
    assert [s["episode_means"] for s in fast["seeds"]] == [s["episode_means"] for s in previous["seeds"]]
    assert catalogue.load("bench_train_5seeds_readable.json")["learner"] == "readable"
