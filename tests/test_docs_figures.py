"""The figures README.md and Report.md quote are the ones in the committed result files.

Each benchmark writes its raw output under benchmarks/results/ (and the committed run its
record, checkpoint_run.json); the prose quotes them. When a benchmark is re-run, this
test says which sentence still holds the old figure.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest

from reacher.fidelity import read_reference_results

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
# The README and the docs pages it links, read as one document: a figure may sit in either.
README = "\n\n".join(path.read_text() for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])
REPORT = (ROOT / "Report.md").read_text()


def flat(text: str) -> str:
    """Prose with its line breaks folded, so a figure may wrap."""
    return re.sub(r"\s+", " ", text)


def expect(fragment: str, *docs: tuple[str, str]) -> None:
    for name, text in docs:
        where = "README.md or docs/" if name == "README.md" else name
        assert fragment in flat(text), f"{where} should say {fragment!r} (from benchmarks/results/ or checkpoint_run.json)"


def test_fidelity_figures():
    fid = json.loads(_path("fidelity.json").read_text())
    readme = ("README.md", README)
    for policy in ("uniform", "gauss", "ou"):
        p = fid["policies"][policy]
        expect(f"**{p['score_mean']:.3f}** +- {p['score_se']:.3f}", readme)
        expect(f"{p['physx']['score_mean']:.3f} +- {p['physx']['score_se']:.3f}", readme)
    u = fid["policies"]["uniform"]
    expect(f"**{u['distance_a_median']:.2f}** / **{u['distance_b_median']:.2f}**", readme)
    expect(f"**{u['cap_fraction_a']:.3f}** / **{u['cap_fraction_b']:.3f}**", readme)
    within = fid["recorded_episode"]["within"]
    expect(f"for the first {within['0.01']} decisions, within 0.1 for {within['0.1']} and within 1 for {within['1.0']}", readme)
    expect(f"already {fid['recorded_episode']['error_after_first_decision']:.1e}".replace("e-03", "e-3"), readme)
    nudged = fid["self_divergence"]
    expect(f"stay within 1e-2 for {nudged['0.001']['0.01']} decisions and within 0.1 for {nudged['0.001']['0.1']}", readme)
    expect(f"(nudged by 1e-6 rad/s: {nudged['1e-06']['0.01']} and {nudged['1e-06']['0.1']})", readme)
    const = fid["constant_path"]
    pairs = zip(const["built_in"], const["physx"], strict=False)
    diffs = [max(abs(a - b) for a, b in zip(row[1:], ref[1:], strict=True)) for row, ref in pairs]
    expect(f"**{diffs[1]:.3f}**, {diffs[2]:.3f}", readme)


def _path(name: str) -> Path:
    """A result file by its name, in whichever study folder of benchmarks/results/ holds it."""
    found = [p for p in RESULTS.rglob("*") if p.as_posix().endswith("/" + name)]
    assert len(found) == 1, f"benchmarks/results/ should hold one {name}"
    return found[0]


def _bench(name: str) -> dict:
    return json.loads(_path(name).read_text())


def _median_updates(bench: dict) -> int:
    return sorted(s["updates"] for s in bench["seeds"])[len(bench["seeds"]) // 2]


def _expect_seed_rows(bench: dict) -> None:
    """A 5-seed table's three rows in Report.md: solved-at, learner updates, wall-clock."""
    seeds, report = bench["seeds"], ("Report.md", REPORT)
    expect(", ".join(str(s["solved_at"]) for s in seeds) + f": median {bench['median_solved_at']:.0f}", report)
    expect(", ".join(f"{s['updates']:,}" for s in seeds) + f": median {_median_updates(bench):,}", report)
    expect(", ".join(f"{s['wall_s']:.1f}" for s in seeds) + f" s: median {bench['median_wall_s']:.1f} s", report)


def test_five_seed_figures():
    bench = _bench("bench_train_5seeds.json")
    assert bench["learner"] == "fast"
    seeds = bench["seeds"]
    docs = [("README.md", README), ("Report.md", REPORT)]
    expect(", ".join(str(s["solved_at"]) for s in seeds) + f": **median {bench['median_solved_at']:.0f}**", docs[0])
    expect(", ".join(f"{s['wall_s']:.1f}" for s in seeds) + f" s: **median {bench['median_wall_s']:.1f} s**", docs[0])
    solved = [s["solved_at"] for s in seeds]
    expect(f"**{bench['median_solved_at']:.0f}** (range {min(solved)}-{max(solved)})", docs[1])
    expect(f"**{bench['median_wall_s']:.1f} s** (range", docs[1])
    expect(f"{bench['learner_updates_per_s']:.0f} updates/s with the update split over 2 threads, "
           f"{bench['learner_1_thread_updates_per_s']:.0f} on 1 thread", docs[0])


def test_learner_comparison_figures():
    """The fast learner against the code before the split (same sitting), and the readable
    learner's own five seeds, row by row in Report.md and as medians in README.md."""
    fast = _bench("bench_train_5seeds.json")
    previous = _bench("bench_train_5seeds_previous_5da63e2.json")
    readable = _bench("bench_train_5seeds_readable.json")
    assert readable["learner"] == "readable"
    for f, p, r in zip(fast["seeds"], previous["seeds"], readable["seeds"], strict=True):
        assert f["seed"] == p["seed"] == r["seed"]
        # The fast learner is the previous code made readable beside it: the same episodes.
        assert f["episode_means"] == p["episode_means"]
        expect(f"| {f['seed']} | {f['solved_at']} | {f['wall_s']:.1f} s | {p['wall_s']:.1f} s | "
               f"{r['solved_at'] or 'unsolved'} | {r['wall_s']:.1f} s |", ("Report.md", REPORT))
    for bench in (previous, readable):
        expect(f"median {bench['median_wall_s']:.1f} s", ("README.md", README), ("Report.md", REPORT))
    expect(f"median solved-at episode {readable['median_solved_at']:.0f}", ("README.md", README))
    expect(f"{readable['learner_updates_per_s']:.0f} updates/s", ("Report.md", REPORT))


def test_environment_speed():
    text = _path("bench_env.txt").read_text()
    rates = re.findall(r"decisions/s: median ([\d,]+)", text)
    assert len(rates) == 2, "bench_env.txt should hold the 20-agent and the 1-agent run"
    expect(f"{rates[0]} decisions/s", ("README.md", README), ("Report.md", REPORT))
    expect(f"{rates[1]} decisions/s", ("README.md", README))


def test_committed_run():
    run = json.loads((ROOT / "checkpoint_run.json").read_text())
    fragment = f"solved the 20-agent Reacher at episode {run['solved_at_episode']} in {run['time_to_solve_s']:.1f} s"
    expect(fragment, ("README.md", README))
    expect(f"episode {run['solved_at_episode']} in {run['time_to_solve_s']:.1f} s", ("Report.md", REPORT))


@pytest.mark.parametrize("name,text", [("README.md", README), ("Report.md", REPORT)])
def test_nothing_links_outside_the_repository(name, text):
    assert "../shared" not in text, f"{name} points outside the repository"


def test_reference_variants_quoted_in_the_readme():
    """The README's 'choices' table quotes the PhysX reference's variants."""
    reference = ROOT / "tests" / "physx_reference"

    def uniform_score(name: str) -> float:
        return read_reference_results(reference / name)["uniform"]["score_mean"]

    base = uniform_score("unity_6_1_1000_arm_episodes.txt")
    iters12 = uniform_score("unity_12_12_1000_arm_episodes.txt")
    no_base = uniform_score("unity_6_1_no_base_collider_1000_arm_episodes.txt")
    expect(f"(uniform {base:.3f} and {iters12:.3f};", ("README.md", README))
    expect(f"scores {no_base:.3f} against {base:.3f}", ("README.md", README))


def test_time_breakdown_figures():
    bench = _bench("bench_train_default_beside_candidate.json")
    for key in ("learning", "environment", "acting"):
        shares = ", ".join(f"{s['seconds'][key] / s['wall_s']:.0%}" for s in bench["seeds"])
        expect(f"{shares}", ("README.md", README))
    other = [round(100 * s["seconds"]["other"] / s["wall_s"]) for s in bench["seeds"]]
    expect(f"{min(other)}-{max(other)}%", ("README.md", README))
    env = [s["seconds"]["environment"] for s in bench["seeds"]]
    expect(f"({min(env):.1f}-{max(env):.1f} s per seed)", ("README.md", README))


def _gym_row(task: str, method: str, row: dict) -> str:
    """The README's row of benchmarks/results/bench_gym.json's summary for one task and method."""
    def num(value, digits=0):
        return "-" if value is None else f"{value:,.{digits}f}"

    ratios = " / ".join(num(row[k], 2) for k in ("ratio_episodes", "ratio_env_steps", "ratio_seconds"))
    return (f"| {task} | {method} | {row['solved']}/{row['seeds']} | {num(row['median_episodes'])} | "
            f"{num(row['median_env_steps'])} | {num(row['median_seconds'], 1)} | {ratios} |")


@pytest.mark.parametrize("name", sorted(p.name for p in RESULTS.rglob("bench_gym*.json")))
def test_gymnasium_benchmark_table(name):
    bench = _bench(name)
    for task, rows in bench["summary"].items():
        for method, row in rows.items():
            expect(_gym_row(task, method, row), ("README.md", README))
    ours = [r for r in bench["runs"] if r["method"] == "ours"]
    for task in bench["summary"]:
        episodes = ", ".join(str(r["solved_at_episode"] or "not solved")
                             for r in sorted(ours, key=lambda r: r["seed"]) if r["task"] == task)
        expect(f"{task}: solved at episodes {episodes}", ("README.md", README))
    expect(f"cap of {bench['cap_s']:g} s", ("README.md", README))


def test_gymnasium_task_runs_quoted():
    mujoco = _bench("reacher_v5_seed0.json")
    expect(f"average return over its last 100 episodes of **{mujoco['final_average']:.2f}**", ("README.md", README))
    expect(f"{mujoco['episodes_run']} episodes ({mujoco['env_steps']:,} steps) in {mujoco['wall_time_s']:.0f} s",
           ("README.md", README))


@pytest.mark.parametrize("task, prefix", [("InvertedPendulum-v5", "ip_p3"), ("InvertedDoublePendulum-v5", "idp_p3"),
                                          ("Reacher-v5", "rv5_p5")])
def test_mujoco_task_figures_are_their_runs_records(task, prefix):
    """docs/gymnasium.md's 5-seed lines are the records in benchmarks/results/gym_probes/, runs of
    the settings TASKS holds now."""
    from ddpg.solved import median_with_unsolved
    from ddpg.tasks import TASKS
    from ddpg.variants import parse_config

    runs = [_bench(f"gym_probes/{prefix}_s{seed}.json") for seed in range(5)]
    entry = TASKS[task]
    for seed, run in enumerate(runs):
        assert run["seed"] == seed and run["env_id"] == task and run["reward_scale"] == entry.reward_scale
        assert parse_config(run["config"]) == parse_config(entry.config)
        assert run["schedule"]["good_score"] == entry.good_score
    episodes = ", ".join(str(r["solved_at_episode"]) for r in runs)
    median = {k: median_with_unsolved([r[k] for r in runs]) for k in ("solved_at_episode", "env_steps_to_solve",
                                                                      "time_to_solve_s")}
    expect(f"{task}: solved at episodes {episodes} (seeds 0-4); median {median['solved_at_episode']:.0f} episodes, "
           f"{median['env_steps_to_solve']:,.0f} steps, {median['time_to_solve_s']:.1f} s", ("README.md", README))


def test_mountaincar_notebook_figures():
    """README quotes the committed MountainCarContinuous notebook's full run."""
    notebook = json.loads((ROOT / "MountainCarContinuous.ipynb").read_text())
    text = "".join("".join(o.get("text", "")) for c in notebook["cells"] if c["cell_type"] == "code"
                   for o in c.get("outputs", []))
    match = re.search(r"Solved at episode (\d+): average [\d.]+ over episodes \d+-\d+, ([\d.]+)s", text)
    assert match, "the committed notebook should hold a full run that solved"
    expect(f"solved at episode {match[1]} in {match[2]} s", ("README.md", README))


def test_ablation_table_is_the_one_built_from_the_results():
    """Report.md's ablation table is bench_ablation.py's table of ablation.json, row for row."""
    from benchmarks import bench_ablation

    data = json.loads(_path("ablation.json").read_text())
    runs = data["runs"]
    for run in runs:
        assert set(run) >= {"variant", "seed", "config", "scores"}
        assert run["config"] == bench_ablation.VARIANTS[run["variant"]][1]
    for variant in {r["variant"] for r in runs}:  # every variant measured over 5 seeds
        assert sorted(r["seed"] for r in runs if r["variant"] == variant) == [0, 1, 2, 3, 4], variant
    baseline = data["baseline"]["runs"]  # what every row but today's default was measured against
    assert sorted(r["seed"] for r in baseline) == [0, 1, 2, 3, 4] and all(r["config"] == {} for r in baseline)
    rows = bench_ablation.summarise(runs, baseline)
    assert rows == data["summary"]
    assert [(r["variant"], r["measured_against"]) for r in rows][:2] == [(bench_ablation.BASELINE, "-"), ("default", "-")]
    assert {r["measured_against"] for r in rows[2:]} == {bench_ablation.BASELINE}
    table = bench_ablation.table(rows)
    assert table == _path("ablation.md").read_text()
    for line in table.splitlines():
        assert line in REPORT, f"Report.md should hold the ablation table row {line!r} (benchmarks/results/ablation.md)"
    for row in rows:  # the runs' solved-at episodes agree with their scores
        mine = [r for r in runs + baseline if r["variant"] == row["variant"]]
        for r in mine:
            assert r["solved_at"] is None or r["solved_at"] == len(r["scores"])


def test_speed_candidate_figures():
    """Report.md's default-against-candidate table and reading come from the two result files."""
    default = _bench("bench_train_default_beside_candidate.json")
    candidate = _bench("bench_train_candidate_n_step3_good_updates5.json")
    assert candidate["config"]["n_step"] == 3 and candidate["schedule"]["good_updates"] == 5
    assert default["config"]["n_step"] == 1 and default["schedule"]["good_updates"] == 10
    for bench in (default, candidate):
        _expect_seed_rows(bench)
    pairs = list(zip(default["seeds"], candidate["seeds"], strict=True))
    saved = [d["seconds"]["learning"] - c["seconds"]["learning"] for d, c in pairs]
    extra = [c["seconds"]["other"] - d["seconds"]["other"] for d, c in pairs]
    expect(f"saves {min(saved):.1f}-{max(saved):.1f} s per seed", ("Report.md", REPORT))
    expect(f"costs {min(extra):.1f}-{max(extra):.1f} s more per seed", ("Report.md", REPORT))
    assert all(c["solved_at"] <= d["solved_at"] for d, c in pairs)  # "as early or earlier on every seed"
    medians = [_median_updates(b) for b in (default, candidate)]
    expect(f"with {100 * (1 - medians[1] / medians[0]):.0f}% fewer updates", ("Report.md", REPORT))
    learning = [s["seconds"]["learning"] for s in candidate["seeds"]]
    expect(f"learning alone takes {min(learning):.1f}-{max(learning):.1f} s", ("Report.md", REPORT))
    for bench in (default, candidate):
        other = [s["seconds"]["other"] for s in bench["seeds"]]
        expect(f"{min(other):.1f}-{max(other):.1f} s |", ("Report.md", REPORT))


def test_one_arm_figures():
    """README's and Report.md's one-arm figures come from bench_train_one_arm.json."""
    import numpy as np

    bench = _bench("bench_train_one_arm.json")
    assert bench["agents"] == 1 and bench["config"]["lr_critic"] == 3e-4 and bench["schedule"]["good_score"] is None
    seeds = bench["seeds"]
    eps = ", ".join(str(s["solved_at"]) for s in seeds)
    walls = ", ".join(f"{s['wall_s']:.1f}" for s in seeds)
    expect(f"{eps}: **median {bench['median_solved_at']:.0f}**, {bench['n_solved']}/5 solved; "
           f"wall-clock {walls} s: median {bench['median_wall_s']:.1f} s", ("README.md", README))
    for s in seeds:
        expect(f"| {s['seed']} | {s['solved_at']} | {s['wall_s']:.1f} s | {s['updates']:,} |", ("Report.md", REPORT))
    expect(f"| **median** | **{bench['median_solved_at']:.0f}** | **{bench['median_wall_s']:.1f} s** |",
           ("Report.md", REPORT))
    means = [np.array(s["episode_means"]) for s in seeds]
    firsts = [int(np.flatnonzero(m >= 30)[0]) + 1 for m in means]
    expect(", ".join(str(f) for f in firsts[:-1]) + f" and {firsts[-1]}", ("Report.md", REPORT))
    stds = [m[-100:].std() for m in means]
    lows = [m[-100:].min() for m in means]
    expect(f"deviation {min(stds):.1f}-{max(stds):.1f}", ("Report.md", REPORT))
    expect(f"lows of {min(lows):.1f}-{max(lows):.1f}", ("Report.md", REPORT))
    gaps = [s["solved_at"] - f for s, f in zip(seeds, firsts, strict=True)]
    expect(f"needs {min(gaps)}-{max(gaps)} more episodes", ("Report.md", REPORT))
    again = _bench("bench_train_default_beside_candidate.json")
    expect(", ".join(f"{s['wall_s']:.1f}" for s in again["seeds"]) + f" s: median {again['median_wall_s']:.1f} s",
           ("README.md", README))


def test_width_64_reading_comes_from_the_ablation_runs():
    runs = {r["seed"]: r for r in json.loads(_path("ablation.json").read_text())["runs"] if r["variant"] == "width_64"}
    solved = [runs[k]["solved_at"] for k in sorted(runs) if runs[k]["solved_at"] is not None]
    expect(", ".join(map(str, solved[:-1])) + f" and {solved[-1]}; seed 1 averaged "
           f"{sum(runs[1]['scores'][-100:]) / 100:.1f} over its last 100 episodes", ("Report.md", REPORT))
    expect(f"seed 3 took {runs[3]['time_to_solve_s']:,.0f} s for {runs[3]['solved_at']} episodes", ("Report.md", REPORT))


def test_prioritized_reading_compares_with_the_readable_learner():
    runs = sorted((r for r in json.loads(_path("ablation.json").read_text())["runs"]
                   if r["variant"] == "prioritized"), key=lambda r: r["seed"])
    assert all(r["learner"] == "readable" for r in runs)
    solved = [str(r["solved_at"]) for r in runs]
    median = sorted(r["solved_at"] for r in runs)[len(runs) // 2]
    expect(", ".join(solved[:-1]) + f" and {solved[-1]} (median {median})", ("Report.md", REPORT))
    readable = _bench("bench_train_5seeds_readable.json")
    plain = [str(s["solved_at"]) for s in readable["seeds"]]
    expect(", ".join(plain[:-1]) + f" and {plain[-1]} (median {readable['median_solved_at']:.0f})",
           ("Report.md", REPORT))


def test_noisy_reading_compares_with_the_readable_learner():
    import numpy as np

    runs = sorted((r for r in json.loads(_path("ablation.json").read_text())["runs"]
                   if r["variant"] == "noisy"), key=lambda r: r["seed"])
    assert [r["seed"] for r in runs] == [0, 1, 2, 3, 4] and all(r["learner"] == "readable" for r in runs)
    solved = [str(r["solved_at"]) for r in runs]
    median = sorted(r["solved_at"] for r in runs)[2]
    firsts = sorted(int(np.flatnonzero(np.array(r["scores"]) >= 30)[0]) + 1 for r in runs)
    expect(f"solved at {', '.join(solved[:-1])} and {solved[-1]} (median {median}); the mean first "
           f"reached 30 at a median of episode {firsts[2]}", ("Report.md", REPORT))
    plain = {s["seed"]: s["solved_at"] for s in _bench("bench_train_5seeds_readable.json")["seeds"]}
    later = [r["seed"] for r in runs if r["solved_at"] > plain[r["seed"]]]
    earlier = [r["seed"] for r in runs if r["solved_at"] < plain[r["seed"]]]
    expect(f"later on seeds {later[0]} and {later[1]}, earlier on seed {earlier[0]}", ("Report.md", REPORT))
    assert len(later) == 2 and len(earlier) == 1


def test_batch_norm_reading_comes_from_the_ablation_runs():
    import numpy as np

    runs = sorted((r for r in json.loads(_path("ablation.json").read_text())["runs"]
                   if r["variant"] == "batch_norm"), key=lambda r: r["seed"])
    assert [r["seed"] for r in runs] == [0, 1, 2, 3, 4]
    assert all(r["solved_at"] is None and len(r["scores"]) == 300 for r in runs)  # "none ... within 300"
    means = [np.array(r["scores"]) for r in runs]
    firsts = [int(np.flatnonzero(m >= 30)[0]) + 1 if (m >= 30).any() else None for m in means]
    assert firsts[0] is None and None not in firsts[1:]
    expect(f"first at episodes {', '.join(map(str, firsts[1:-1]))} and {firsts[-1]} (seed 0 never does; "
           f"its best episode is {means[0].max():.1f})", ("Report.md", REPORT))
    best = [np.convolve(m, np.ones(100) / 100, mode="valid").max() for m in means]
    last = [m[-100:].mean() for m in means]
    for label, values in (("the best 100-episode averages are", best), ("the last 100 episodes average", last)):
        expect(f"{label} {', '.join(f'{v:.1f}' for v in values[:-1])} and {values[-1]:.1f}", ("Report.md", REPORT))
    times = [r["wall_time_s"] for r in runs]
    expect(f"({min(times):,.0f}-{max(times):,.0f} s each", ("Report.md", REPORT))


def test_pause_schedule_figures():
    """Report.md's table of the default against pausing learning while good (alone, and with
    3-step returns), one sitting, and README.md's row and reading, from the three result files."""
    default = _bench("bench_train_default_72cc5de.json")
    pause = _bench("bench_train_good_updates0.json")
    n_step = _bench("bench_train_n_step3_good_updates0.json")
    assert [b["schedule"]["good_updates"] for b in (default, pause, n_step)] == [10, 0, 0]
    assert [b["config"].get("n_step", 1) for b in (default, pause, n_step)] == [1, 1, 3]
    assert default["git_commit"] == pause["git_commit"] == n_step["git_commit"]
    for bench in (default, pause, n_step):
        assert [s["seed"] for s in bench["seeds"]] == [0, 1, 2, 3, 4] and bench["n_solved"] == 5
        _expect_seed_rows(bench)
    pairs = list(zip(default["seeds"], pause["seeds"], strict=True))
    later = [p["solved_at"] - d["solved_at"] for d, p in pairs]
    faster = [d["wall_s"] - p["wall_s"] for d, p in pairs]
    assert min(later) > 0 and min(faster) > 0  # "later on every seed, and faster on every seed"
    reading = f"{min(later)}-{max(later)} episodes later and {min(faster):.1f}-{max(faster):.1f} s sooner on every seed"
    expect(reading, ("README.md", README), ("Report.md", REPORT))
    expect(f"median {pause['median_wall_s']:.1f} s against the default's {default['median_wall_s']:.1f} s",
           ("README.md", README))
    expect(f"with {100 * (1 - _median_updates(pause) / _median_updates(default)):.0f}% fewer updates at the median",
           ("Report.md", REPORT))
    expect(f"median {n_step['median_wall_s']:.1f} s, {100 * (1 - n_step['median_wall_s'] / default['median_wall_s']):.0f}% "
           "less than the default", ("Report.md", REPORT))
    earlier = sum(n["solved_at"] < d["solved_at"] for d, n in zip(default["seeds"], n_step["seeds"], strict=True))
    expect(f"solved earlier on {earlier} of the 5 seeds", ("Report.md", REPORT))
    other_n, other_d = ([s["seconds"]["other"] for s in b["seeds"]] for b in (n_step, default))
    expect(f"{min(other_n):.1f}-{max(other_n):.1f} s per seed against {min(other_d):.1f}-{max(other_d):.1f} s)",
           ("Report.md", REPORT))
    # The default re-run follows the earlier sitting's episodes, score for score; only acting got cheaper.
    before = _bench("bench_train_default_beside_candidate.json")
    for now, then in zip(default["seeds"], before["seeds"], strict=True):
        assert now["episode_means"] == then["episode_means"]
    acting = [[s["seconds"]["acting"] for s in b["seeds"]] for b in (default, before)]
    expect(f"acting took {min(acting[0]):.1f}-{max(acting[0]):.1f} s per seed against "
           f"{min(acting[1]):.1f}-{max(acting[1]):.1f} s there", ("Report.md", REPORT))


def test_second_core_figures():
    """Report.md's reading of bench_cores.py's three runs."""
    text = _path("bench_cores.txt").read_text()
    products = re.findall(r"one process ([\d.]+) us per product; .* speed-up ([\d.]+)", text)
    overlap = re.findall(r"(\d+) decisions with acting (\d+) ms, \d+ updates (\d+) ms; .* two threads \d+ ms "
                         r"\(gain ([\d.]+)\), in two processes \d+ ms \(gain ([\d.]+)\)", text)
    assert len(products) == len(overlap) == 3, "bench_cores.txt should hold three runs"
    doc = ("Report.md", REPORT)
    expect("speed-up of " + ", ".join(p[1] for p in products[:-1]) + f" and {products[-1][1]}", doc)
    alone = [float(p[0]) for p in products]
    expect(f"alone took {min(alone):.1f}-{max(alone):.1f} us", doc)
    plays, learns = [int(o[1]) for o in overlap], [int(o[2]) for o in overlap]
    expect(f"decisions take {min(plays)}-{max(plays)} ms and the updates {min(learns)}-{max(learns)} ms", doc)
    shares = [round(100 * p / (p + u)) for p, u in zip(plays, learns, strict=True)]
    expect(f"hide the decisions: {min(shares)}-{max(shares)}% of the stretch", doc)
    expect("the gain was " + ", ".join(o[3] for o in overlap[:-1]) + f" and {overlap[-1][3]}", doc)
    expect("it was " + ", ".join(o[4] for o in overlap[:-1]) + f" and {overlap[-1][4]}", doc)


def test_what_reproduces_where():
    """The two machines' seed-0 runs and 5-seed medians, and the cross-CPU check of --reproducible."""
    first, second = _bench("bench_train_5seeds.json"), _bench("bench_train_5seeds_73a33ce_second_machine.json")
    readme, report = ("README.md", README), ("Report.md", REPORT)
    for bench in (first, second):
        solved = ", ".join(str(s["solved_at"]) for s in bench["seeds"])
        expect(f"{solved} (median **{bench['median_solved_at']:.0f}**)", readme)
        expect(f"{solved} on the", report)
        expect(f"median {bench['median_solved_at']:.0f}", report)
    expect(f"at episode **{first['seeds'][0]['solved_at']}** on the CPU that made", readme)
    expect(f"at **{second['seeds'][0]['solved_at']}** on a second machine", readme)
    # The committed run is seed 0 of the default's 20-seed benchmark, made on the same machine.
    committed = json.loads((ROOT / "checkpoint_run.json").read_text())
    seed_0 = next(s for s in _seeds(LAYER_NORM) if s["seed"] == 0)
    assert committed["solved_at_episode"] == seed_0["solved_at"] and committed["seed"] == 0
    assert committed["machine"]["cpu"] == _bench(LAYER_NORM[0])["machine"]["cpu"]
    check = _path("reproducible_cross_cpu.txt").read_text()
    assert "--reproducible: scores identical True, weights bitwise identical True" in check
    assert "default:        scores identical False, weights bitwise identical False" in check


def test_reproducible_mode_cost_figures():
    """The default and --reproducible over seeds 0-4 in one sitting, as README.md quotes them."""
    default = _bench("bench_train_default_d38f0cf.json")
    pinned = _bench("bench_train_reproducible_d38f0cf.json")
    assert default["reproducible"] is False and pinned["reproducible"] is True
    assert pinned["machine"]["torch_cpu_capability"] == "AVX2" and default["machine"]["cpu"] == pinned["machine"]["cpu"]
    readme = ("README.md", README)
    for mode, bench in (("default", default), ("`--reproducible`", pinned)):
        seeds = bench["seeds"]
        expect(f"| {mode} | " + ", ".join(str(s["solved_at"]) for s in seeds)
               + f": median {bench['median_solved_at']:.0f}, {bench['n_solved']}/5 solved | "
               + ", ".join(f"{s['wall_s']:.1f}" for s in seeds) + f" s: median {bench['median_wall_s']:.1f} s | "
               + f"{bench['learner_updates_per_s']:.0f} / {bench['learner_1_thread_updates_per_s']:.0f} |", readme)
    expect(f"{pinned['median_wall_s'] / default['median_wall_s'] - 1:.0%} more wall-clock to solve and "
           f"{1 - pinned['learner_updates_per_s'] / default['learner_updates_per_s']:.0%} fewer updates per second", readme)
    second = _bench("bench_train_5seeds_73a33ce_second_machine.json")
    expect(f"(median {default['median_solved_at']:.0f} against {second['median_solved_at']:.0f} on the same machine)", readme)
    report = ("Report.md", REPORT)
    for bench in (default, pinned):
        expect(", ".join(str(s["solved_at"]) for s in bench["seeds"]) + f" (median {bench['median_solved_at']:.0f})", report)
        expect(f"median of {bench['median_wall_s']:.1f} s", report)
    expect(f"{pinned['learner_updates_per_s']:.0f} updates/s against {default['learner_updates_per_s']:.0f}", report)


def test_the_readme_is_short_and_its_links_resolve() -> None:
    """A newcomer reads the README in five minutes; everything else is a linked docs page."""
    readme = (ROOT / "README.md").read_text()
    assert readme.count("\n") <= 200, "README.md should stay at most 200 lines; move detail to docs/"
    pages = sorted((ROOT / "docs").glob("*.md"))
    assert pages, "docs/ should hold the README's detail pages"
    for page in pages:
        assert f"(docs/{page.name})" in readme, f"README.md should link docs/{page.name}"
    for source in [ROOT / "README.md", *pages]:
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", source.read_text()):
            if not target.startswith("http"):
                assert (source.parent / target).exists(), f"{source.name} links {target}, which does not exist"


LAYER_NORM = ["bench_train_layer_norm_20seeds_4_3_9_0-8.json", "bench_train_layer_norm_20seeds_13_10-19.json"]
# The same settings with the fast learner's first layer norm (var_mean and elementwise passes).
LAYER_NORM_VAR_MEAN = ["bench_train_layer_norm_var_mean_20seeds_9_0-8.json",
                       "bench_train_layer_norm_var_mean_20seeds_13_15_10-19.json"]
THREE_STEP = [f"bench_train_new_default_20seeds_{r}.json" for r in ("0-4", "5-9", "10-14", "15-19")]
OLD_DEFAULT = ["bench_train_default_20seeds_0-9.json", "bench_train_default_20seeds_10-19.json"]
GAMMA_095 = [f"bench_train_gamma095_20seeds_{part}.json" for part in ("6_13", "0_1", "2_5_7_10", "11_12_14_19")]


def _seeds(names: list[str]) -> list[dict]:
    return sorted((s for name in names for s in _bench(name)["seeds"]), key=lambda s: s["seed"])


def _distribution(seeds: list[dict]) -> dict:
    """bench_train's figures over several files: unsolved ranks worst, nearest-rank percentiles."""
    import statistics

    from benchmarks.bench_train import rank_with_unsolved
    from ddpg.solved import median_with_unsolved

    solved = [s["solved_at"] for s in seeds]
    done = [s for s in seeds if s["solved_at"] is not None]
    name = {None: "unsolved"}
    return {"list": ", ".join(str(name.get(v, v)) for v in solved), "n_solved": len(done),
            "median": median_with_unsolved(solved), "p90": name.get(rank_with_unsolved(solved, 0.9),
                                                                      rank_with_unsolved(solved, 0.9)),
            "worst": name.get(rank_with_unsolved(solved, 1.0), rank_with_unsolved(solved, 1.0)),
            "updates": statistics.median(s["updates"] for s in done),
            "first_30": statistics.median(s["first_30"] for s in seeds if s["first_30"] is not None)}


def test_defaults_over_twenty_seeds():
    """The README's table and the Report's figures for today's default (layer norm), the 3-step
    default before it and the one-step default, recomputed from the seed-by-seed result files;
    the layer-norm runs were made with today's defaults."""
    import dataclasses

    from ddpg.loop import GOOD_UPDATES
    from ddpg.record import UNRECORDED_SETTINGS
    from ddpg.variants import parse_config
    from ddpg_agent import DDPGConfig

    previous = dataclasses.replace(DDPGConfig(), gamma=0.99)  # the layer-norm default, before gamma 0.95
    for name in LAYER_NORM:
        bench = _bench(name)
        assert parse_config(bench["config"]) == previous and bench["schedule"]["good_updates"] == GOOD_UPDATES
    for name in THREE_STEP:  # the layer-norm default without layer norm (the records predate the key)
        bench = _bench(name)
        assert parse_config({**UNRECORDED_SETTINGS, **bench["config"]}) == dataclasses.replace(
            previous, critic_layer_norm=False) and bench["schedule"]["good_updates"] == GOOD_UPDATES
    assert ([s["seed"] for s in _seeds(LAYER_NORM)] == [s["seed"] for s in _seeds(THREE_STEP)]
            == [s["seed"] for s in _seeds(OLD_DEFAULT)] == list(range(20)))
    norm, new, old = (_distribution(_seeds(names)) for names in (LAYER_NORM, THREE_STEP, OLD_DEFAULT))
    readme, report = ("README.md", README), ("Report.md", REPORT)
    for d in (norm, new, old):
        expect(f"| {d['n_solved']}/20 | {d['median']:g}, {d['p90']}, {d['worst']} | {d['updates']:,.0f} |", readme)
    expect(f"solved at {old['list']}. That is {old['n_solved']}/20 solved, a median of {old['median']:g}, "
           f"a 90th percentile of {old['p90']}", report)
    expect(f"at {new['list']}. **{new['n_solved']}/20 solved, median {new['median']:g}, 90th percentile "
           f"{new['p90']}, worst {new['worst']}**", report)
    expect(f"the median run makes {new['updates']:,.0f} learner updates to solve (the one-step default's: "
           f"{old['updates']:,.0f}) and first reaches a mean of 30 at episode {new['first_30']:g} ({old['first_30']:g})",
           report)
    over = sum(s["solved_at"] > 125 for s in _seeds(THREE_STEP))
    early = sum(s["solved_at"] <= 105 for s in _seeds(THREE_STEP))
    expect(f"The median, {new['median']:g}, misses 105 by half an episode ({early} of the 20 seeds solved at 105 "
           "or earlier)", report)
    expect(f"The worst, {new['worst']}, misses 125 by {new['worst'] - 125} episodes, and {over} of the 20 seeds are "
           "above 125", report)
    first = _distribution(_seeds(LAYER_NORM_VAR_MEAN))
    assert [s["seed"] for s in _seeds(LAYER_NORM_VAR_MEAN)] == list(range(20))
    for bench in map(_bench, LAYER_NORM_VAR_MEAN):
        assert bench["config"]["critic_layer_norm"] is True and bench["git_commit"].startswith("b12c905")
    for d, path in ((norm, "`bench_train_layer_norm_20seeds_*.txt`"), (first, "`bench_train_layer_norm_var_mean_20seeds_*.txt`")):
        expect(f"solved at {d['list']}", report)
        expect(f"**{d['n_solved']}/20{' solved' if d is norm else ''}, median {d['median']:g}, 90th percentile "
               f"{d['p90']}, worst {d['worst']}**", report)
        expect(f"| 0-19 | {d['list']} | {d['median']:g} | {d['worst']} | {path} |", report)
    at_100 = sum(s["solved_at"] == 100 for s in _seeds(LAYER_NORM))
    expect(f"{at_100} of the 20 seeds solved at 100, the earliest", report)
    expect(f"The median run makes {norm['updates']:,.0f} learner updates to solve (the 3-step default's: "
           f"{new['updates']:,.0f}) and first reaches a mean of 30 at episode {norm['first_30']:g} ({new['first_30']:g})",
           report)
    expect(f"{first['updates']:,.0f} updates at the median", report)
    late = [s for s in _seeds(LAYER_NORM) if s["solved_at"] > 125]
    other = {s["seed"]: s["solved_at"] for s in _seeds(LAYER_NORM_VAR_MEAN)}
    expect(f"Seeds {late[0]['seed']} and {late[1]['seed']} ({late[0]['solved_at']} and {late[1]['solved_at']}) are slow "
           f"starts on the current path, their mean first reaching 30 at episodes {late[0]['first_30']} and "
           f"{late[1]['first_30']}, and solved at {other[late[0]['seed']]} and {other[late[1]['seed']]} on the other", report)
    expect(f"The worst is met on the first path ({first['worst']}) and missed by {norm['worst'] - 125} episodes on the "
           f"committed one ({norm['worst']}; {len(late)} of the 20 seeds above 125, against "
           f"{sum(s['solved_at'] > 125 for s in _seeds(THREE_STEP))} without layer norm)", report)
    assert first["worst"] <= 125 < norm["worst"] and norm["median"] <= 105 and first["median"] <= 105


def test_the_gamma_default_over_twenty_seeds():
    """Report.md's gamma-0.95 row and reading, from its seed-by-seed files, made with today's defaults
    (then a candidate: the layer-norm default with ``{"gamma": 0.95}``)."""
    from ddpg.loop import GOOD_UPDATES
    from ddpg.variants import parse_config
    from ddpg_agent import DDPGConfig

    for name in GAMMA_095:
        bench = _bench(name)
        assert parse_config(bench["config"]) == DDPGConfig() and bench["schedule"]["good_updates"] == GOOD_UPDATES
    seeds = _seeds(GAMMA_095)
    assert [s["seed"] for s in seeds] == list(range(20))
    d, old = _distribution(seeds), _distribution(_seeds(LAYER_NORM))
    expect(f"| 0-19 | {d['list']} | {d['median']:g} | {d['worst']} | `bench_train_gamma095_20seeds_*.txt` |",
           ("Report.md", REPORT))
    at_100 = sum(s["solved_at"] == 100 for s in seeds)
    late = [s for s in seeds if s["solved_at"] > 100]
    first = {s["seed"]: s["first_30"] for s in seeds}
    slow = [s for s in _seeds(LAYER_NORM) if s["solved_at"] > 125]
    expect(f"solved {at_100} of the 20 seeds at episode 100, the earliest possible, and seed {late[0]['seed']} at "
           f"{late[0]['solved_at']}", ("Report.md", REPORT))
    expect(f"first reached a mean of 30 at episodes {first[slow[0]['seed']]} and {first[slow[1]['seed']]} (against "
           f"{slow[0]['first_30']} and {slow[1]['first_30']})", ("Report.md", REPORT))
    expect(f"first reached 30 at episode {d['first_30']:g} and made {d['updates']:,.0f} learner updates to solve "
           f"(the layer-norm default's: {old['first_30']:g} and {old['updates']:,.0f})", ("Report.md", REPORT))
    expect(f"| {d['n_solved']}/20 | {d['median']:g}, {d['p90']}, {d['worst']} | {d['updates']:,.0f} |",
           ("README.md", README))
    expect(f"0.95}}'`, the row in the candidate table above). Seeds 0-19 solved at {d['list']}: **{d['n_solved']}/20 "
           f"solved, median {d['median']:g}, 90th percentile {d['p90']}, worst {d['worst']}**", ("Report.md", REPORT))
    expect(f"seeds {slow[0]['seed']} and {slow[1]['seed']} ({slow[0]['solved_at']} and {slow[1]['solved_at']}) first "
           f"reached a mean of 30 at episodes {first[slow[0]['seed']]} and {first[slow[1]['seed']]} instead of "
           f"{slow[0]['first_30']} and {slow[1]['first_30']}", ("Report.md", REPORT))


def test_wall_clock_of_gamma_095_against_the_layer_norm_default_in_one_sitting():
    """Issue 25's wall-clock bar for the gamma-0.95 default: seeds 0-4 beside the default it replaced."""
    import dataclasses

    from ddpg.variants import parse_config
    from ddpg_agent import DDPGConfig

    old, new = _bench("bench_train_ab_gamma_default_c705db2.json"), _bench("bench_train_ab_gamma095_c705db2.json")
    assert old["machine"]["cpu"] == new["machine"]["cpu"] and old["threads"] == new["threads"] == 1
    assert old["git_commit"] == new["git_commit"] and old["git_commit"].startswith("c705db2")
    assert parse_config(old["config"]) == dataclasses.replace(DDPGConfig(), gamma=0.99)
    assert parse_config(new["config"]) == DDPGConfig()
    assert [s["seed"] for s in old["seeds"]] == [s["seed"] for s in new["seeds"]] == list(range(5))
    assert new["median_wall_s"] <= old["median_wall_s"]
    expect(f"with {new['median_updates']:,.0f} learner updates at the median against {old['median_updates']:,.0f}",
           ("Report.md", REPORT))
    for bench in (old, new):
        expect("solved at " + ", ".join(str(s["solved_at"]) for s in bench["seeds"]) + " in a median of "
               + f"{bench['median_wall_s']:.1f} s (" + ", ".join(f"{s['wall_s']:.1f}" for s in bench["seeds"]) + " s)",
               ("Report.md", REPORT))
    expect(f"a median of {new['median_wall_s']:.1f} s against the layer-norm default's {old['median_wall_s']:.1f} s",
           ("README.md", README))


@pytest.mark.parametrize("name", ["bench_train_candidate_n3_pause_0-9.json",
                                  "bench_train_candidate_n3_pause_10-11_stopped.json",
                                  "bench_train_candidate_n3_pause_lr_actor3e-4_stopped.json",
                                  "bench_train_candidate_n5_pause_stopped.json",
                                  "bench_train_candidate_td3_n3_pause_stopped.json",
                                  "bench_train_candidate_critic_layer_norm_n3_pause_0-4.json"])
def test_candidate_rows(name):
    """Each candidate's row in the Report lists the seeds its result file holds."""
    bench = _bench(name)
    seeds = [s["seed"] for s in bench["seeds"]]
    assert seeds == list(range(seeds[0], seeds[-1] + 1)) and bench["schedule"]["good_updates"] == 0
    solved = ", ".join(str(s["solved_at"]) for s in bench["seeds"])
    expect(f"| {seeds[0]}-{seeds[-1]} | {solved} |", ("Report.md", REPORT))


def test_saturation_tables():
    """The diagnosis tables in the Report are the probe's rows at episodes 1, 2, 5, 10, 20 and 30."""
    for name in ("saturation_14_old.json", "saturation_14_new.json"):
        rows = {r["episode"]: r for r in _bench(name)["rows"]}
        at = [rows[e] for e in (1, 2, 5, 10, 20, 30)]
        expect("| mean score | " + " | ".join(f"{r['score']:.2f}" for r in at) + " |", ("Report.md", REPORT))
        expect("| actions at +-1 | " + " | ".join(f"{100 * r['saturated']:.0f}%" for r in at) + " |",
               ("Report.md", REPORT))
        expect("| mean pre-activation | " + " | ".join(f"{r['mean_abs_pre']:.1f}" for r in at) + " |",
               ("Report.md", REPORT))


def test_a_fast_seed_saturates_too():
    rows = {r["episode"]: r for r in _bench("saturation_2_old.json")["rows"]}
    expect(f"(seed 2: {100 * rows[1]['saturated']:.0f}% of its actions at +-1 after episode 1, "
           f"{100 * rows[10]['saturated']:.0f}% after episode 10;", ("Report.md", REPORT))
    nine = {r["episode"]: r for r in _bench("saturation_9_new.json")["rows"]}
    expect(f"still had {100 * nine[70]['saturated']:.0f}% of its actions at +-1 at episode 70", ("Report.md", REPORT))


def test_checkpoint_evaluation_figures():
    text = _path("checkpoint_eval.txt").read_text()
    twenty = re.search(r"20 arm\(s\), 100 episodes, seed 2024: mean ([\d.]+) \(episodes from ([\d.]+) to ([\d.]+)\)", text)
    one = re.search(r"1 arm\(s\), 100 episodes, seed 2025: mean ([\d.]+)", text)
    assert twenty and one
    for doc in (("README.md", README), ("Report.md", REPORT)):
        expect(f"**{twenty[1]}** on average over 100 episodes of the 20-agent environment", doc)
        expect(f"**{one[1]}** on the 1-agent environment", doc)
    expect(f"(every episode between {twenty[2]} and {twenty[3]})", ("Report.md", REPORT))


@pytest.mark.parametrize(("old_file", "new_file", "commits", "in_readme"), [
    ("bench_train_ab_old_default_e613d18.json", "bench_train_ab_new_default_4a72298.json", ("e613d18", "4a72298"), False),
    ("bench_train_ab_old_default_e613d18_second.json", "bench_train_ab_layer_norm_default_38f155f.json",
     ("e613d18", "38f155f"), False),
], ids=["3-step default", "layer-norm default"])
def test_wall_clock_against_the_one_step_default_in_one_sitting(old_file, new_file, commits, in_readme):
    """Each new default's wall-clock beside the one-step default it replaced, seeds 0-4."""
    old, new = _bench(old_file), _bench(new_file)
    assert old["machine"]["cpu"] == new["machine"]["cpu"] and old["threads"] == new["threads"] == 1
    assert old["git_commit"].startswith(commits[0]) and new["git_commit"].startswith(commits[1])
    assert old["schedule"]["good_updates"] == 10 and new["schedule"]["good_updates"] == 0
    assert new["median_wall_s"] <= old["median_wall_s"]  # the bar: no slower than the default it replaces
    report = ("Report.md", REPORT)
    for bench in (old, new):
        expect("solved at " + ", ".join(str(s["solved_at"]) for s in bench["seeds"]) + " in a median of "
               + f"{bench['median_wall_s']:.1f} s (" + ", ".join(f"{s['wall_s']:.1f}" for s in bench["seeds"]) + " s)",
               report)
    expect(f"{100 * (1 - new['median_wall_s'] / old['median_wall_s']):.0f}% less wall-clock", report)
    if in_readme:
        expect(f"a median of {new['median_wall_s']:.1f} s against the one-step default's {old['median_wall_s']:.1f} s",
               ("README.md", README))


def test_the_notebooks_run_and_where_it_falls_among_the_twenty_seeds():
    """The committed notebook's full run, and its prose placing that run in the default's
    20-seed distribution (issue 25's bar for it: solved by episode 125)."""
    notebook = json.loads((ROOT / "Continuous_Control.ipynb").read_text())
    cells = notebook["cells"]
    output = "".join("".join(o.get("text", "")) for c in cells if c["cell_type"] == "code" for o in c.get("outputs", []))
    match = re.search(r"Solved at episode (\d+)", output)
    assert match, "the committed notebook should hold a full run that solved"
    solved = int(match[1])
    prose = flat(" ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown"))
    seeds = [s["solved_at"] for s in _seeds(GAMMA_095)]
    d = _distribution(_seeds(GAMMA_095))
    assert f"the default solved between episodes {min(seeds)} and {d['worst']}, at a median of {d['median']:g}" in prose
    earlier, same, later = (sum(v < solved for v in seeds), sum(v == solved for v in seeds),
                            sum(v > solved for v in seeds))
    assert (f"solved at episode {solved}. Of the 20 benchmark seeds, {earlier} solved earlier, {same} at the same "
            f"episode and {later} later") in prose
    assert solved <= 125


def test_learner_speed_with_and_without_layer_norm():
    """The Report's updates/s for the three learners of the layer-norm section, from one sitting."""
    text = _path("bench_train_updates_layer_norm.txt").read_text()
    two = [int(x) for x in re.findall(r"^learner: (\d+) updates/s", text, re.M)]
    one = [int(x) for x in re.findall(r"^learner 1 thread: (\d+) updates/s", text, re.M)]
    assert len(two) == len(one) == 3 and "b12c905" in text.split("\n\n")[-1]
    expect(f"the learner made {one[0]} updates/s on one thread with layer norm, {one[1]} without it and {one[2]} with "
           f"the `var_mean` version; on two threads {two[0]}, {two[1]:,} and {two[2]}", ("Report.md", REPORT))


def test_the_ablations_default_row_follows_the_twenty_seed_paths():
    """Under Ray Tune on one thread a seed takes the path it takes in bench_train.py."""
    runs = sorted((r for r in json.loads(_path("ablation.json").read_text())["runs"] if r["variant"] == "default"),
                  key=lambda r: r["seed"])
    twenty = {s["seed"]: s["solved_at"] for s in _seeds(GAMMA_095)}
    assert [r["solved_at"] for r in runs] == [twenty[k] for k in range(5)]
    solved = [str(r["solved_at"]) for r in runs]
    expect(f"**default** (today's): solved at {', '.join(solved[:-1])} and {solved[-1]} (seeds 0-4)", ("Report.md", REPORT))


def test_batch_norm_diagnosis_figures():
    """The Report's account of batch norm's collapse is the probe's rows."""
    rows = {r["episode"]: r for r in _bench("diagnose_batch_norm_1.json")["rows"]}
    assert len(rows) == 200
    episodes = sorted(rows)
    first = next(e for e in episodes if rows[e]["score"] >= 30)
    crossed = next(e for e in episodes if rows[e]["mean_q"] > 4)
    peak = max(episodes, key=lambda e: rows[e]["mean_q"])
    after = max(rows[e]["score"] for e in episodes if e >= 82)
    best = max(sum(rows[e]["score"] for e in range(k, k + 100)) / 100 for k in range(1, 102))
    before = [rows[e] for e in episodes if e <= 79]
    late = [rows[e] for e in episodes if e >= 10 and e <= 79]
    report = ("Report.md", REPORT)
    expect(f"first reached a mean of 30 at episode {first}", report)
    expect(f"then {rows[80]['score']:.2f} at episode 80 and {rows[82]['score']:.2f} at 82, and never more than "
           f"{after:.2f} after (best 100-episode average {best:.2f})", report)
    expect(f"passed 4 at episode {crossed}", report)
    expect(f"was {rows[79]['mean_q']:.2f} at episode 79, then " + ", ".join(f"{rows[e]['mean_q']:.2f}" for e in range(80, 84))
           + f" and {rows[84]['mean_q']:.2f} in episodes 80-84, and peaked at {rows[peak]['mean_q']:,.2f} at episode {peak}",
           report)
    expect(f"by {min(r['act_gap'] for r in before):.2f}-{max(r['act_gap'] for r in before):.2f} per component", report)
    expect(f"by {100 * min(r['target_gap'] for r in late):.1f}-{100 * max(r['target_gap'] for r in late):.1f}% of |Q|",
           report)
    recent = [rows[e]["act_gap_recent"] for e in range(28, 80)]
    expect(f"({min(recent):.2f}-{max(recent):.2f} per component from episode 28 on)", ("Report.md", REPORT))
    assert max(rows[e]["act_gap_recent"] for e in range(80, 201)) <= max(recent)  # "as much before as after"
    assert all(30 <= rows[e]["score"] <= 35 for e in range(first, 79))  # "scored 30-35 until episode 78"


ONE_ARM_GAMMA = [f"bench_train_one_arm_gamma095_{part}.json" for part in ("0", "1", "2_4_6_8", "3_5_7_9")]


# REACHER_ONE_ARM before goal paths: the settings the gamma-0.95 files were made with.
BEFORE_GOAL_PATHS = {"goal_paths": 0, "learn_updates": 10}


def test_the_one_arm_over_ten_seeds():
    """Report.md's and README's one-arm figures for REACHER_ONE_ARM before goal paths, from its ten
    seeds' files, made with those settings."""
    import numpy as np

    from ddpg.tasks import REACHER_ONE_ARM

    before = {k: v for k, v in {**REACHER_ONE_ARM.config, **BEFORE_GOAL_PATHS}.items() if k != "goal_paths"}
    for name in ONE_ARM_GAMMA:
        bench = _bench(name)
        assert bench["agents"] == 1 and bench["schedule"]["good_score"] is None
        assert {k: bench["config"][k] for k in before} == before and "goal_paths" not in bench["config"]
    seeds = _seeds(ONE_ARM_GAMMA)
    assert [s["seed"] for s in seeds] == list(range(10))
    solved = [s["solved_at"] for s in seeds]
    median, wall = statistics.median(solved), statistics.median(s["wall_s"] for s in seeds)
    report = ("Report.md", REPORT)
    for s in seeds:
        expect(f"| {s['seed']} | {s['solved_at']} | {s['wall_s']:.1f} s | {s['first_30']} |", report)
    expect(f"| **median** | **{median:g}** | **{wall:.1f} s** | |", report)
    expect(f"{sum(v is not None for v in solved)}/10 solved, at a median of {median:g} episodes in a median of "
           f"{wall:.1f} s", report)
    old = {s["seed"]: s["solved_at"] for s in _bench("bench_train_one_arm.json")["seeds"]}
    expect(f"on seeds 0-4 the median is {statistics.median(solved[:5]):g} against {statistics.median(old.values()):g} "
           f"with gamma 0.99, earlier on {sum(solved[k] < old[k] for k in range(5))} of the five", report)
    last = [np.array(s["episode_means"])[-100:] for s in seeds]
    expect(f"is missed by {median - 150:g}, and the swings remain: over each run's last 100 episodes the standard "
           f"deviation is {min(x.std() for x in last):.1f}-{max(x.std() for x in last):.1f} and the lows "
           f"{min(x.min() for x in last):.1f}-{max(x.min() for x in last):.1f}", report)
    expect(f"{median:g} without goal paths", ("README.md", README))


ONE_ARM_GOAL_PATHS = ["bench_train_one_arm_goal_paths4_u20_a.json", "bench_train_one_arm_goal_paths4_u20_b.json"]
ONE_ARM_NINE_PATHS = [f"bench_train_one_arm_goal_paths9_u20_{part}.json" for part in ("1", "a", "b")]


def _lowest_after_first_30(seed: dict) -> float:
    means = seed["episode_means"]
    return min(means[seed["first_30"] - 1:seed["solved_at"] or len(means)])


def _one_arm_seeds(names: list[str], config: dict) -> list[dict]:
    """The seeds of one-arm benchmark files, each file checked to be one arm, no schedule, ``config``."""
    for name in names:
        bench = _bench(name)
        assert bench["agents"] == 1 and bench["schedule"]["good_score"] is None
        assert {k: bench["config"][k] for k in config} == config
    return _seeds(names)


NUMBER_WORDS = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]


def _one_arm_table(before: list[dict], after: list[dict]) -> tuple[tuple, tuple]:
    """Report.md's per-seed table of two one-arm settings (solved at, first 30, lowest after the first
    30; the second's wall-clock) and its median row; returns those medians, the second's first."""
    report = ("Report.md", REPORT)
    for b, a in zip(before, after, strict=True):
        expect(f"| {a['seed']} | {b['solved_at']}, {b['first_30']}, {_lowest_after_first_30(b):.2f} | {a['solved_at']}, "
               f"{a['first_30']}, {_lowest_after_first_30(a):.2f} | {a['wall_s']:.1f} s |", report)

    def medians(seeds: list[dict]) -> tuple:
        return (statistics.median(s["solved_at"] for s in seeds), statistics.median(s["first_30"] for s in seeds),
                statistics.median(_lowest_after_first_30(s) for s in seeds))

    (solved, first, low), (solved0, first0, low0) = medians(after), medians(before)
    expect(f"| **median** | **{solved0:g}**, {first0:g}, {low0:.2f} | **{solved:g}**, {first:g}, {low:.2f} | "
           f"{statistics.median(s['wall_s'] for s in after):.1f} s |", report)
    return (solved, first, low), (solved0, first0, low0)


def test_goal_paths_on_one_arm():
    """Report.md's and README's one-arm figures for four goal paths (REACHER_ONE_ARM from commit
    e9842a7 until nine paths), from its ten seeds' files, against the settings before."""
    from ddpg.tasks import REACHER_ONE_ARM

    four = {**REACHER_ONE_ARM.config, "goal_paths": 4}
    new, old = _one_arm_seeds(ONE_ARM_GOAL_PATHS, four), _seeds(ONE_ARM_GAMMA)
    assert [s["seed"] for s in new] == [s["seed"] for s in old] == list(range(10))
    report = ("Report.md", REPORT)
    (solved, first, low), (solved0, first0, low0) = _one_arm_table(old, new)
    gains = [o["solved_at"] - n["solved_at"] for o, n in zip(old, new, strict=True)]
    assert min(gains) > 0 and all(s["solved_at"] is not None for s in new)
    expect(f"Every seed solved earlier, by {min(gains)} to {max(gains)} episodes: 10/10 at a median of {solved:g} "
           f"against {solved0:g}, the worst {max(s['solved_at'] for s in new)} against "
           f"{max(s['solved_at'] for s in old)}, and the arm first scored 30 at a median episode of {first:g} "
           f"against {first0:g}", report)
    rose = sum(_lowest_after_first_30(n) > _lowest_after_first_30(o) for o, n in zip(old, new, strict=True))
    expect(f"rose on {NUMBER_WORDS[rose]} seeds and fell on {NUMBER_WORDS[10 - rose]}; "
           f"its median is {low:.2f} against {low0:.2f}", report)
    expect(f"is missed by {solved - 130:g} episodes, and the median of the runs' lowest episodes after their "
           f"first 30 ({low:.2f}) is below the 25 asked", report)
    nine = _bench("bench_train_one_arm_goal_paths9_u20_screen.json")
    assert nine["config"]["goal_paths"] == 9 and nine["config"]["learn_updates"] == 20
    expect(f"Nine goal paths solved seed 0 at {nine['seeds'][0]['solved_at']} (four: {new[0]['solved_at']};", report)
    # the wall-clock, both settings side by side in one sitting: the same episodes as the ten-seed runs
    pair = {key: _bench(f"bench_train_one_arm_pair_{key}.json") for key in ("goal_paths", "before_goal_paths")}
    assert pair["goal_paths"]["config"] == {**pair["goal_paths"]["config"], **four}
    assert pair["before_goal_paths"]["config"]["learn_updates"] == 10
    assert "goal_paths" not in pair["before_goal_paths"]["config"]
    now, then = pair["goal_paths"]["seeds"], pair["before_goal_paths"]["seeds"]
    assert [s["solved_at"] for s in now] == [s["solved_at"] for s in new[:2]]
    assert [s["solved_at"] for s in then] == [s["solved_at"] for s in old[:2]]
    expect(f"{now[0]['solved_at']} and {now[1]['solved_at']} in {now[0]['wall_s']:.1f} and {now[1]['wall_s']:.1f} s, "
           f"against {then[0]['solved_at']} and {then[1]['solved_at']} in {then[0]['wall_s']:.1f} and "
           f"{then[1]['wall_s']:.1f} s", report)
    ratios = [a["wall_s"] / b["wall_s"] for a, b in zip(now, then, strict=True)]
    assert all(round(r, 1) == 1.5 for r in ratios)
    fewer = sorted(b["solved_at"] - a["solved_at"] for a, b in zip(now, then, strict=True))
    expect(f"1.5 times the wall-clock for {fewer[0]}-{fewer[1]} fewer episodes", report)
    expect("goal paths cost about 1.5 times the wall-clock of none (seeds 0 and 1 side by side)", ("README.md", README))
    expect(f"{solved:g} with 4 goal paths, {solved0:g} without goal paths", ("README.md", README))
    assert f"(median {solved:g} episodes against {solved0:g})" in flat((ROOT / "ddpg" / "tasks.py").read_text().replace("#", ""))


def test_nine_goal_paths_on_one_arm():
    """Report.md's, README's, the notebook's and tasks.py's one-arm figures for today's REACHER_ONE_ARM
    (nine goal paths), from its ten seeds' files, made with today's settings, against four paths."""
    from ddpg.tasks import REACHER_ONE_ARM

    nine, four = _one_arm_seeds(ONE_ARM_NINE_PATHS, REACHER_ONE_ARM.config), _seeds(ONE_ARM_GOAL_PATHS)
    assert [s["seed"] for s in nine] == [s["seed"] for s in four] == list(range(10))
    assert all(s["solved_at"] is not None for s in nine)
    screen = _bench("bench_train_one_arm_goal_paths9_u20_screen.json")["seeds"][0]
    assert screen["solved_at"] == nine[0]["solved_at"] and screen["episode_means"] == nine[0]["episode_means"]
    report = ("Report.md", REPORT)
    lows = [_lowest_after_first_30(s) for s in nine]
    (solved, _, low), (solved4, _, low4) = _one_arm_table(four, nine)
    later = [(n["seed"], n["solved_at"] - f["solved_at"]) for f, n in zip(four, nine, strict=True)
             if n["solved_at"] > f["solved_at"]]
    assert [seed for seed, _ in later] == [2, 3, 6]
    expect(f"Nine paths solved 10/10 at a median of {solved:g} episodes against {solved4:g}, earlier on seven seeds and "
           f"later on three (seeds 2, 3 and 6, by {later[0][1]}, {later[1][1]} and {later[2][1]} episodes), the worst "
           f"{max(s['solved_at'] for s in nine)} against {max(s['solved_at'] for s in four)}", report)
    rose = sum(_lowest_after_first_30(n) > _lowest_after_first_30(f) for f, n in zip(four, nine, strict=True))
    assert rose == 7 and sum(x < 25 for x in lows) == 5
    expect(f"its median from {low4:.2f} to {low:.2f}; five of the ten runs still had an episode below 25", report)
    middle = sorted(nine, key=lambda s: s["solved_at"])[4:6]
    expect(f"(seeds {middle[0]['seed']} and {middle[1]['seed']}, solved at {middle[0]['solved_at']} and "
           f"{middle[1]['solved_at']}: lows of {_lowest_after_first_30(middle[0]):.2f} and "
           f"{_lowest_after_first_30(middle[1]):.2f})", report)
    assert min(_lowest_after_first_30(s) for s in middle) >= 25 and low >= 25
    expect(f"the median solved-at, {solved:g}, misses the 130 asked by {solved - 130:g} episodes", report)
    # the wall-clock, four and nine paths side by side in one sitting: the same episodes as the ten-seed runs
    bench9, bench4 = (_bench(f"bench_train_one_arm_pair_goal_paths{key}.json") for key in ("9", "4_beside9"))
    assert bench4["config"]["goal_paths"] == 4 and bench9["config"] == {**bench9["config"], **REACHER_ONE_ARM.config}
    pair9, pair4 = bench9["seeds"], bench4["seeds"]
    assert [s["solved_at"] for s in pair9] == [s["solved_at"] for s in nine[:2]]
    assert [s["solved_at"] for s in pair4] == [s["solved_at"] for s in four[:2]]
    expect(f"nine paths solved at the table's episodes, {pair9[0]['solved_at']} and {pair9[1]['solved_at']}, in "
           f"{pair9[0]['wall_s']:.1f} and {pair9[1]['wall_s']:.1f} s, against {pair4[0]['solved_at']} and "
           f"{pair4[1]['solved_at']} in {pair4[0]['wall_s']:.1f} and {pair4[1]['wall_s']:.1f} s", report)
    per_episode = [s["wall_s"] / s["solved_at"] for s in pair9 + pair4]
    expect(f"the same {min(per_episode):.1f}-{max(per_episode):.1f} s an episode", report)
    assert all(a["wall_s"] < b["wall_s"] for a, b in zip(pair9, pair4, strict=True))
    late = sum(s["wall_s"] for s in pair4) - sum(s["wall_s"] for s in pair9)
    expect(f"finished about {round(late, -1):.0f} s later", report)
    rates = _bench("bench_train_one_arm_goal_paths9_rates20_screen.json")
    assert rates["config"]["goal_paths"] == 9 and rates["config"]["lr_critic"] == rates["config"]["lr_actor"] == 1e-3
    assert rates["seeds"][0]["solved_at"] is None and rates["max_episodes"] == 200
    expect(f"left seed 0 unsolved at 200, its last 100 episodes averaging {rates['seeds'][0]['final_avg100']:.2f}", report)
    expect(f"solved 10/10 seeds at a median of {solved:g} episodes", ("README.md", README))
    versions = "".join(json.loads((ROOT / "Continuous_Control.ipynb").read_text())["cells"][1]["source"])
    assert f"a median of {solved:g} over ten seeds" in flat(versions)
    assert f"(median {solved:g} episodes against {solved4:g} with four)" in flat((ROOT / "ddpg" / "tasks.py").read_text().replace("#", ""))


def test_the_equal_step_comparison_is_its_results_file():
    """docs/gymnasium.md's equal-budget table is bench_gym.py's table of equal_steps.json, whose
    summary is recomputed from its runs; every run within its task's recorded budget."""
    from benchmarks import bench_gym

    data = json.loads(_path("equal_steps.json").read_text())
    budgets = {task: spec["budget_steps"] for task, spec in data["tasks"].items()}
    for task, spec in data["tasks"].items():
        assert spec["budget_steps"] == bench_gym.BENCH_TASKS[task]["budget_steps"], task
    for run in data["runs"]:
        assert run["env_steps"] <= budgets[run["task"]] and run["solved"] == bench_gym.within_budget(run, budgets[run["task"]])
    summary, table = bench_gym.summary_and_table(data["tasks"], data["runs"])
    assert summary == data["summary"]
    assert table in (ROOT / "docs" / "gymnasium.md").read_text(), "docs/gymnasium.md should hold equal_steps.txt's table"
    doc = ("docs/gymnasium.md", (ROOT / "docs" / "gymnasium.md").read_text())
    peers = (("sb3-ddpg", "DDPG"), ("sb3-td3", "TD3"))
    runs_of = {(task, method): [run for run in data["runs"] if run["task"] == task and run["method"] == method]
               for task in data["tasks"] for method in bench_gym.METHODS}
    for task in data["tasks"]:  # complete: the prose's "seeds 0-4 of ours and 0-2 of each peer"
        seeds = {m: sorted(run["seed"] for run in runs_of[task, m]) for m in bench_gym.METHODS}
        assert seeds == {"ours": [0, 1, 2, 3, 4], "sb3-ddpg": [0, 1, 2], "sb3-td3": [0, 1, 2]}, (task, seeds)
    expect("**Measured at equal budgets** (`benchmarks/results/gymnasium/equal_steps.{json,txt}`; seeds 0-4 of ours and "
           "0-2 of each peer", doc)
    pendulum = summary["Pendulum-v1"]
    expect(f"SB3's DDPG needs {pendulum['sb3-ddpg']['ratio_env_steps']:.2f} times ours' environment steps and its TD3 "
           f"{pendulum['sb3-td3']['ratio_env_steps']:.2f} times", doc)
    low, high = sorted(pendulum[m]["ratio_seconds"] for m, _ in peers)
    expect(f"and {low:.2f}-{high:.2f} times the wall-clock", doc)
    pole = summary["InvertedPendulum-v5"]
    assert pole["sb3-ddpg"]["solved"] == 0  # its sentence: the per-task loop below
    td3 = pole["sb3-td3"]  # its "solved N of M": the per-task loop below
    expect(f"{td3['ratio_env_steps']:.2f} times ours' median steps", doc)
    expect(f"{td3['ratio_seconds']:.2f} times its wall-clock", doc)
    # The "In short" paragraph.
    assert all(summary[t]["ours"]["solved"] == summary[t]["ours"]["seeds"] == 5 for t in summary)
    solved = {m: sum(summary[t][m]["solved"] for t in summary) for m, _ in peers}
    expect(f"Of the {sum(summary[t]['sb3-ddpg']['seeds'] for t in summary)} runs each peer made (3 seeds on "
           f"{len(summary)} tasks), SB3's DDPG solved {solved['sb3-ddpg']} and its TD3 {solved['sb3-td3']}", doc)
    every = {m: [t for t in summary if summary[t][m]["solved"] == summary[t][m]["seeds"]] for m, _ in peers}
    assert every["sb3-ddpg"] == ["MountainCarContinuous-v0", "Pendulum-v1", "UnityReacher-v0"]
    assert every["sb3-td3"] == every["sb3-ddpg"] + ["InvertedPendulum-v5"]
    expect("each peer all 3 seeds on MountainCarContinuous-v0, Pendulum-v1 and UnityReacher-v0, and TD3 on "
           "InvertedPendulum-v5 too", doc)
    ratios = [summary[t][m] for t in summary for m, _ in peers if summary[t][m]["ratio_env_steps"]]
    steps, seconds = sorted(r["ratio_env_steps"] for r in ratios), sorted(r["ratio_seconds"] for r in ratios)
    expect(f"it needed {steps[0]:.2f}-{steps[-1]:.2f} times ours' environment steps and {seconds[0]:.2f}-"
           f"{seconds[-1]:.2f} times ours' wall-clock", doc)
    unsolved = [t for t in summary if all(summary[t][m]["ratio_env_steps"] is None for m, _ in peers)]
    assert unsolved == ["InvertedDoublePendulum-v5", "Reacher-v5"]
    expect("On InvertedDoublePendulum-v5 and Reacher-v5 neither peer's median run reached the threshold within "
           "300,000 steps", doc)
    hours = {m: sum(run["wall_s"] for run in data["runs"] if run["method"] == m) / 3600 for m in bench_gym.METHODS}
    expect(f"The runs above add up to {sum(hours.values()):.1f} hours of one core (ours {hours['ours']:.1f} of them), "
           f"about {sum(hours.values()) / 2:.0f} hours two at a time", doc)
    for task in ("InvertedPendulum-v5", "InvertedDoublePendulum-v5", "Reacher-v5", "UnityReacher-v0"):
        steps = sorted(run["env_steps_to_threshold"] for run in runs_of[task, "ours"])  # all solved: above
        expect(f"On {task} ours solved all 5 seeds at", doc)
        expect(f"{steps[0]:,}-{steps[-1]:,} steps", doc)
        threshold, budget = data["tasks"][task]["threshold"], data["tasks"][task]["budget_steps"]
        for method, name in peers:
            runs = runs_of[task, method]
            if any(run["solved"] for run in runs):  # the solved ones' figures are the table's
                expect(f"SB3's {name} solved {sum(run['solved'] for run in runs)} of {len(runs)}", doc)
                continue
            finals = sorted(run["final_return"] for run in runs)
            expect(f"SB3's {name} reached {threshold:,g} on none of its {len(runs)} seeds within {budget:,} steps", doc)
            expect(f"averaged {finals[0]:,.2f} to {finals[-1]:,.2f}", doc)
    # UnityReacher-v0: every method solved its median run; the prose gives the peers' ratios and their seconds.
    arms = summary["UnityReacher-v0"]
    expect(f"SB3's DDPG needs {arms['sb3-ddpg']['ratio_env_steps']:.2f} and its TD3 "
           f"{arms['sb3-td3']['ratio_env_steps']:.2f} times ours' environment steps", doc)
    expect(f"{arms['sb3-ddpg']['ratio_seconds']:.2f} and {arms['sb3-td3']['ratio_seconds']:.2f} times ours' "
           "wall-clock", doc)
    for method, name in peers:
        seconds = sorted(run["seconds_to_threshold"] for run in runs_of["UnityReacher-v0", method] if run["solved"])
        expect(f"{name} {seconds[0]:,.1f}-{seconds[-1]:,.1f} s", doc)
    car = summary["MountainCarContinuous-v0"]
    assert all(car[m]["solved"] == car[m]["seeds"] for m in car)
    expect(f"SB3's DDPG needs {car['sb3-ddpg']['ratio_env_steps']:.2f} times ours' environment steps on it and "
           f"its TD3 {car['sb3-td3']['ratio_env_steps']:.2f} times", doc)
    expect(f"{car['sb3-ddpg']['ratio_seconds']:.2f} and {car['sb3-td3']['ratio_seconds']:.2f} times its "
           "wall-clock", doc)

def test_ours_on_the_peers_machine():
    """Some peer runs ran on another CPU than ours' runs in equal_steps.json: the docs say which,
    and give ours' runs on that CPU (equal_steps_ours_xeon.json) and the same-machine ratios."""
    from benchmarks import bench_gym

    data = json.loads(_path("equal_steps.json").read_text())
    xeon = json.loads(_path("equal_steps_ours_xeon.json").read_text())
    summary, _ = bench_gym.summary_and_table(xeon["tasks"], xeon["runs"])
    assert summary == xeon["summary"]
    cpu = {i: sitting["machine"]["cpu"] for i, sitting in enumerate(data["sittings"])}
    unity = [run for run in data["runs"] if run["task"] == "UnityReacher-v0"]
    assert {cpu[run["sitting"]] for run in unity if run["method"] != "ours"} == {xeon["machine"]["cpu"]}
    assert {cpu[run["sitting"]] for run in unity if run["method"] == "ours"} != {xeon["machine"]["cpu"]}
    doc = ("docs/gymnasium.md", (ROOT / "docs" / "gymnasium.md").read_text())
    last = len(cpu) - 1
    expect(f"Sittings 0-8 ran on a 2-core AMD EPYC, sittings 9-{last}", doc)
    assert {cpu[i] for i in range(9)} == {"AMD EPYC"} and {cpu[i] for i in range(9, last + 1)} == {xeon["machine"]["cpu"]}
    ours = xeon["summary"]["UnityReacher-v0"]["ours"]
    peers = data["summary"]["UnityReacher-v0"]
    expect(f"a median of {ours['median_env_steps']:,.0f} steps in {ours['median_seconds']:.1f} s", doc)
    ratios = [round(peers[m]["median_seconds"] / ours["median_seconds"], 2) for m in ("sb3-ddpg", "sb3-td3")]
    expect(f"peers' wall-clock is {ratios[0]:.2f} and {ratios[1]:.2f} times ours'", doc)
    steps = sorted(run["env_steps_to_threshold"] for run in xeon["runs"] if run["task"] == "InvertedDoublePendulum-v5")
    pole = xeon["summary"]["InvertedDoublePendulum-v5"]["ours"]
    assert pole["solved"] == 5
    expect(f"5/5 at {steps[0]:,}-{steps[-1]:,} steps, a median of {pole['median_env_steps']:,.0f} in "
           f"{pole['median_seconds']:.1f} s", doc)


def test_the_cost_of_saving():
    """docs/training.md's figures for what keeping a run safe costs (benchmarks/bench_saving.py)."""
    cost = json.loads(_path("bench_saving.json").read_text())
    readme = ("README.md", README)
    expect(f"take {cost['per_episode_ms']:.2f} ms per episode, {100 * cost['per_episode_share']:.2f}% of the "
           "committed run's mean episode", readme)
    expect(f"the checkpoints would add {cost['checkpoints_ms']:.2f} ms", readme)
    expect(f"A periodic save without the buffer takes {cost['periodic_save_ms']:.0f} ms; the save at a stop, "
           f"with the {cost['buffer_file_mb']:.0f} MB buffer, {cost['stop_save_ms'] / 1000:.1f} s", readme)
    committed = json.loads((ROOT / "checkpoint_run.json").read_text())
    assert cost["committed_episode_ms"] == round(1000 * committed["wall_time_s"] / committed["episodes_run"], 1)


def test_the_readme_says_what_the_solved_at_count_means():
    """Episode 100 is the earliest possible solve; the course's code prints it as 0 episodes."""
    run = json.loads((ROOT / "checkpoint_run.json").read_text())
    window = run["window"]
    readme = ("README.md", README)
    expect(f"Episode {window} is the earliest a run can be solved", readme)
    expect(f"would print \"Environment solved in {run['solved_at_episode'] - window} episodes\"", readme)
    expect(f"\"solved in 150 episodes\" solved at episode {150 + window} in this count", readme)


def test_every_figure_says_where_it_comes_from():
    """The README's reward plot is the committed run's, and the value map is the run whose
    command and record docs/gymnasium.md gives."""
    import numpy as np

    from ddpg.solved import solved_at

    committed = json.loads((ROOT / "checkpoint_run.json").read_text())
    scores = np.loadtxt(ROOT / "checkpoint_scores.csv", delimiter=",", skiprows=1, ndmin=2)[:, 1:]
    assert scores.shape == (committed["episodes_run"], committed["n_agents"])
    assert solved_at(scores.mean(axis=1)) == committed["solved_at_episode"]
    assert "![Rewards of the committed run](checkpoint_scores.png)" in README
    value_map = json.loads(_path("mountaincar_value_map_run.json").read_text())
    assert (value_map["env_id"], value_map["seed"], value_map["solved_at_episode"]) == ("MountainCarContinuous-v0", 0, 100)
    expect("`.venv/bin/python train.py --env MountainCarContinuous-v0 --animate --out runs/mcc` (seed 0)",
           ("README.md", README))
    expect(f"episode {value_map['solved_at_episode']}, its return in the title", ("README.md", README))


def test_the_fast_back_end_kept_its_speed():
    """docs/training.md quotes the before/after sitting of the fast learner's move to a back-end."""
    speed = json.loads(_path("backends_fast_cpu_speed.json").read_text())
    runs = speed["runs"]
    assert [r["code"] for r in runs] == ["old", "new"] * 3
    for threads, key in (("2_threads", "updates_per_s_2_threads"), ("1_thread", "updates_per_s_1_thread")):
        medians = {code: statistics.median(r[key] for r in runs if r["code"] == code) for code in ("old", "new")}
        assert speed[f"median_{threads}"] == medians
        assert speed[f"new_over_old_{threads}"] == round(medians["new"] / medians["old"], 3)
    old_one = [r["updates_per_s_1_thread"] for r in runs if r["code"] == "old"]
    expect(f"gave medians of {speed['median_2_threads']['old']:.0f} and {speed['median_2_threads']['new']:.0f} "
           f"updates/s on two threads (after/before {speed['new_over_old_2_threads']}) and "
           f"{speed['median_1_thread']['old']:.0f} and {speed['median_1_thread']['new']:.0f} on one "
           f"({speed['new_over_old_1_thread']})", ("README.md", README))
    expect(f"{min(old_one):.0f}-{max(old_one):.0f}", ("README.md", README))


def _forgetting_figures(seed: int) -> dict:
    """What Report.md quotes of a diagnose_forgetting.py run, computed from its rows."""
    data = json.loads(_path(f"forgetting_one_arm_seed{seed}.json").read_text())
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
    return {"data": data, "solved": solved, "first": first + 1, "first_score": score[first],
            "greedy_at_first": greedy[first], "low": low + 1, "low_score": score[low], "greedy_at_low": greedy[low],
            "first_greedy": first_greedy + 1, "fall": fall, "after": (min(greedy[first_greedy:]), max(greedy[first_greedy:])),
            "q_at_solved": rows[solved - 1]["q"], "earned_at_solved": rows[solved - 1]["q_earned"]}


@pytest.mark.parametrize("seed", [4, 1])
def test_the_one_arm_forgetting_diagnosis(seed):
    """Report.md's reading of the one arm's falls after its first 30: the figures of each probed seed."""
    f = _forgetting_figures(seed)
    assert f["data"]["agents"] == 1 and f["data"]["config"] == {}  # tasks.REACHER_ONE_ARM as it is
    committed = {s["seed"]: s for name in ("bench_train_one_arm_gamma095_1.json", "bench_train_one_arm_gamma095_2_4_6_8.json")
                 for s in json.loads(_path(name).read_text())["seeds"]}[seed]
    assert f["solved"] == committed["solved_at"] and f["first"] == committed["first_30"]  # the table's run
    expect(f"seed {seed}: solved at {f['solved']}; first 30 at episode {f['first']} ({f['first_score']:.2f}) with "
           f"a greedy score of {f['greedy_at_first']:.2f}; the lowest episode after it {f['low_score']:.2f} (episode "
           f"{f['low']}, greedy {f['greedy_at_low']:.2f}); greedy first at 30 at episode {f['first_greedy']}, then "
           f"{f['after'][0]:.2f}-{f['after'][1]:.2f}, never more than {f['fall']:.2f} below its best so far; "
           f"Q(s, mu(s)) {f['q_at_solved']:.3f} at the solve against {f['earned_at_solved']:.3f} earned",
           ("Report.md", REPORT))


def test_the_faster_targets_screen_on_one_arm():
    screen = {r["seed"]: r["solved_at"] for r in _bench("bench_train_one_arm_tau1e-2_screen.json")["seeds"]}
    today = {s["seed"]: s["solved_at"] for name in ("bench_train_one_arm_gamma095_0.json", "bench_train_one_arm_gamma095_1.json")
             for s in _bench(name)["seeds"]}
    assert _bench("bench_train_one_arm_tau1e-2_screen.json")["config"]["tau"] == 0.01
    expect(f"(tau 1e-2) solved later on seeds 0 and 1 ({screen[0]} and {screen[1]} against {today[0]} and {today[1]};",
           ("Report.md", REPORT))


ENSEMBLE = ["bench_train_candidate_ensemble5_0-2.json", "bench_train_candidate_ensemble5_3-9.json"]


def _row(seeds: list[dict], key: str, form: str = "{:,}") -> str:
    return ", ".join(form.format(s[key]) for s in seeds)


def test_the_critic_ensemble_figures():
    """The ensemble's 20-arm table and its reading, from its runs and the default's in the same sitting."""
    import statistics

    from ddpg.variants import parse_config
    from ddpg_agent import DDPGConfig

    ensemble, default = _seeds(ENSEMBLE), _bench("bench_train_default_beside_ensemble.json")["seeds"]
    assert all(parse_config(_bench(name)["config"]).variants() == {"ensemble": 5} for name in ENSEMBLE)
    assert parse_config(_bench("bench_train_default_beside_ensemble.json")["config"]) == DDPGConfig()
    assert [s["seed"] for s in ensemble] == [s["seed"] for s in default] == list(range(10))
    report = ("Report.md", REPORT)
    for column in (default, ensemble):
        expect(f"| {_row(column, 'solved_at', '{}')} |", report)
        expect(f"{_row(column, 'updates')}: median {statistics.median(s['updates'] for s in column):,.0f}", report)
        expect(f"{_row(column, 'first_30', '{}')}: median {statistics.median(s['first_30'] for s in column):g}", report)
        expect(f"{_row(column, 'wall_s', '{:.1f}')} s: median {statistics.median(s['wall_s'] for s in column):.1f} s", report)
    fewer = [e["seed"] for e, d in zip(ensemble, default, strict=True) if e["updates"] < d["updates"]]
    expect(f"fewer updates on {len(fewer)} of the 10 seeds", report)
    ratio = statistics.median(s["wall_s"] for s in ensemble) / statistics.median(s["wall_s"] for s in default)
    expect(f"is {ratio:.1f} times the default's", report)


def test_the_one_arm_ensemble_and_crossq_figures():
    report = ("Report.md", REPORT)
    for name in ("bench_train_one_arm_gamma095_0.json", "bench_train_one_arm_ensemble5_0.json",
                 "bench_train_one_arm_ensemble5_u20_0.json", "bench_train_one_arm_ensemble5_subset1_0.json"):
        means = _bench(name)["seeds"][0]["episode_means"]
        expect(f"averaged {sum(means[:100]) / 100:.2f} over its first 100 episodes (best {max(means[:100]):.2f}", report)
    import csv

    rows = list(csv.DictReader(_path("crossq_twin_20_arms_seed0_metrics.csv").open()))
    scores = [float(r["score_mean"]) for r in rows]
    expect(f"between {min(scores):.2f} and {max(scores):.2f}", report)
    assert max(abs(float(r["mean_q"])) for r in rows) < 0.013
    for method, first in (("plain", 12), ("crossq", 37)):
        rows = list(csv.DictReader(_path(f"crossq_pendulum_{method}_seed0_metrics.csv").open()))
        assert min(int(r["episode"]) for r in rows if float(r["score_mean"]) > -200) == first
    expect("first above -200 at episode 37 against 12", report)


def test_the_ten_critics_and_update_cost_figures():
    redq = _seeds(["bench_train_candidate_redq_0.json", "bench_train_candidate_redq_1.json"])
    report = ("Report.md", REPORT)
    expect(f"solved at {redq[0]['solved_at']} and {redq[1]['solved_at']} with {redq[0]['updates']:,} and "
           f"{redq[1]['updates']:,} updates", report)
    costs = _path("update_costs_ensemble.txt").read_text()
    blocks = {head.strip(): re.findall(r"^learner(?: 1 thread)?: (\d+) updates/s", body, re.M)
              for head, body in (part.split("\n", 1) for part in costs.split("## ")[1:])}
    fast, readable = blocks["--learner fast"][1], blocks["--learner readable"][0]  # the fast one on one thread
    ensemble, ten = blocks['--config {"ensemble": 5}'][0], blocks['--config {"preset": "redq"}'][0]
    expect(f"{ensemble} ensemble updates a second on the readable learner against {fast} of the default's on the fast "
           f"learner and {readable} on the readable one", report)
    expect(f"ten critics {ten} a second", report)


def test_the_gpu_figures():
    """docs/training.md and README quote the H200 run of benchmarks/bench_gpu.py."""
    gpu, probe = _bench("gpu_nvidia_h200.json"), _bench("gpu_nvidia_h200_probe.json")
    readme = ("README.md", README)
    costs, summary = gpu["costs"], gpu["summary"]
    assert gpu["tests"]["returncode"] == 0 and gpu["graph_capture"] == "captured"
    expect(f"({gpu['tests']['summary'].split(' in ')[0]}: the checks of the no-GPU message)", readme)
    for key in ("update_eager_cuda_ms", "update_graph_cuda_ms", "update_fast_cpu_ms"):
        expect(f"| {costs[key]:.3f} |", readme)
    for n in (5, 10):
        expect(f"| {costs[f'update_ensemble{n}_graph_cuda_ms']:.3f} / {costs[f'update_ensemble{n}_readable_cpu_ms']:.3f} |",
               readme)
    expect(f"{costs['act_fast_cpu_us']:.1f} us per decision on the CPU", readme)
    expect(f"{costs['act_graph_cpu_copy_us']:.1f} us on the graph back-end's CPU copy of the actor, "
           f"{costs['act_eager_cuda_us']:.1f} us eagerly on the GPU", readme)
    p = probe["costs"]
    expect(f"gave {p['update_graph_cuda_ms']:.3f} ms per graphed update, {p['update_eager_cuda_ms']:.3f} ms eagerly and "
           f"{p['update_fast_cpu_ms']:.3f} ms on its CPU", readme)
    expect(f"a captured update took {costs['update_graph_cuda_ms']:.3f} ms against {costs['update_eager_cuda_ms']:.3f} ms "
           "eagerly", readme)
    runs = {(r["device"], r["learner"], r["seed"]): r for r in gpu["runs"]}

    def cell(r: dict) -> str:
        return f"{r['solved_at']}, {r['wall_s']:.1f} s, {r['updates']:,}"

    for seed in (0, 1, 2):
        expect(f"| {seed} | {cell(runs['cuda', 'graph', seed])} | {cell(runs['cuda', 'graph-overlap', seed])} | "
               f"{cell(runs['cpu', 'fast', seed])} |", readme)
    graph, overlap, cpu = summary["cuda graph"], summary["cuda graph-overlap"], summary["cpu fast"]
    for row in (graph, overlap, cpu):
        assert row["median_wall_s"] == round(statistics.median(
            r["wall_s"] for r in gpu["runs"] if summary[f"{r['device']} {r['learner']}"] is row), 1)
    expect(f"| median wall-clock | {graph['median_wall_s']:.1f} s | {overlap['median_wall_s']:.1f} s | "
           f"{cpu['median_wall_s']:.1f} s |", readme)
    expect(f"solved seeds 0-2 in a median of {graph['median_wall_s']:.1f} s, {overlap['median_wall_s']:.1f} s with "
           f"`--learner graph-overlap`", readme)
    expect(f"against {cpu['median_wall_s']:.1f} s on the same machine's CPU", readme)
    expect(f"(at {graph['worst_solved_at']} by `graph`, at {overlap['worst_solved_at']} by `graph-overlap`)", readme)
    expect(f"the CPU took {graph['cpu_over_cuda']:.2f} and {overlap['cpu_over_cuda']:.2f} times as long", readme)
    assert not any(any(aims.values()) for aims in summary["aims_met"].values())  # the prose says: not met
    one = runs["cuda", "graph", 1]["seconds"]
    expect(f"stepping the environment {one['environment']:.1f} s, acting {one['acting']:.1f} s, learning "
           f"{one['learning']:.1f} s, the rest of the loop (storing transitions, n-step returns, resets) "
           f"{one['other']:.1f} s", readme)
    assert round(one["environment"] + one["acting"] + one["other"]) == 28
    cpu_learning = [runs["cpu", "fast", s]["seconds"]["learning"] for s in (0, 1, 2)]
    expect(f"{min(cpu_learning):.1f}-{max(cpu_learning):.1f} s of each CPU run", readme)
    cuda_updates = [r["updates"] for r in gpu["runs"] if r["device"] == "cuda"]
    expect(f"({min(cuda_updates):,} to {max(cuda_updates):,} here)", readme)


def test_the_ensemble_on_the_gpu():
    costs = _bench("gpu_nvidia_h200.json")["costs"]
    one, five = costs["update_graph_cuda_ms"], costs["update_ensemble5_graph_cuda_ms"]
    report = ("Report.md", REPORT)
    expect(f"the captured update of five critics took {five:.3f} ms against {one:.3f} ms for one", report)
    expect(f"11,500 ensemble updates cost {11_500 * five / 1000:.1f} s of learning against {15_000 * one / 1000:.1f} s "
           "for the default's 15,000", report)
    expect(f"its captured update cost {five:.3f} ms against one critic's {one:.3f} ms", report)


def test_the_overlap_figures():
    """docs/training.md's case for --learner graph-overlap: the H200's waits and the five CPU seeds."""
    readme = ("README.md", README)
    gpu = _bench("gpu_nvidia_h200.json")
    runs = {(r["device"], r["learner"], r["seed"]): r for r in gpu["runs"]}

    def waits(learner: str) -> str:
        ms = [runs["cuda", learner, s]["seconds"]["learning"] / runs["cuda", learner, s]["updates"] * 1000
              for s in (0, 1, 2)]
        return f"{min(ms):.2f}-{max(ms):.2f}"

    expect(f"the host then waited {waits('graph-overlap')} ms per update instead of {waits('graph')} ms", readme)
    summary = gpu["summary"]
    expect(f"the median wall-clock fell from {summary['cuda graph']['median_wall_s']:.1f} s to "
           f"{summary['cuda graph-overlap']['median_wall_s']:.1f} s", readme)
    for learner, how in (("graph", "in step"), ("graph-overlap", "one step behind")):
        seeds = sorted(_bench(f"overlap_cpu_eager_{learner}.json")["runs"], key=lambda r: r["seed"])
        assert [r["seed"] for r in seeds] == [0, 1, 2, 3, 4] and all(r["learner"] == learner for r in seeds)
        median = statistics.median(r["updates"] for r in seeds)
        updates = ", ".join(format(r["updates"], ",") for r in seeds)
        expect(f"{how}, solved at {', '.join(str(r['solved_at']) for r in seeds)} with "
               f"{updates} updates (median {median:,.0f})", readme)
    one = runs["cuda", "graph", 1]["seconds"]
    assert runs["cuda", "graph", 1]["solved_at"] == 100  # it stopped there: 100 episodes of 1,000 steps
    fixed = one["environment"] + one["acting"] + one["other"]
    expect(f"about {20 * gpu['costs']['update_graph_cuda_ms']:.1f} ms of the GPU (20 x "
           f"{gpu['costs']['update_graph_cuda_ms']:.3f} ms)", readme)
    expect(f"about {fixed / 100_000 * 20 * 1000:.1f} ms of the CPU (stepping, acting and the loop, {fixed:.1f} s per "
           "100,000 steps in the seed-1 run above)", readme)
    in_step = ", ".join(str(runs["cuda", "graph", s]["solved_at"]) for s in (0, 1, 2))
    behind = ", ".join(str(runs["cuda", "graph-overlap", s]["solved_at"]) for s in (0, 1, 2))
    expect(f"seeds 0-2 solved at {in_step} in step and {behind} one step behind", readme)


def test_the_faster_critic_and_less_noise_on_one_arm():
    report = ("Report.md", REPORT)
    critic = _bench("bench_train_one_arm_lr_critic5e-4_screen.json")["seeds"][0]
    expect(f"learning rate 5e-4: seed 0 solved at {critic['solved_at']}", report)
    sigma = [_bench("bench_train_one_arm_sigma005_screen.json")["seeds"][0]] + [
        _bench(f"bench_train_one_arm_sigma005_{seed}.json")["seeds"][0] for seed in range(1, 6)]
    today = {s["seed"]: s for name in ("0", "1", "2_4_6_8", "3_5_7_9")
             for s in _bench(f"bench_train_one_arm_gamma095_{name}.json")["seeds"]}
    assert [s["seed"] for s in sigma] == list(range(6))
    earlier = [s for s in sigma if s["solved_at"] is not None and s["solved_at"] < today[s["seed"]]["solved_at"]]
    unsolved = [s["seed"] for s in sigma if s["solved_at"] is None]
    assert unsolved == [4] and len(sigma[4]["episode_means"]) == 300
    expect(f"earlier on {len(earlier)} of seeds 0-5, but seed 4 unsolved at 300", report)


def test_faster_targets_on_twenty_arms():
    """Report.md's tau-2e-2 paragraph, from its three files against the default's 20-seed files."""
    names = [f"bench_train_candidate_tau2e-2_{part}.json" for part in ("0-4", "5-12", "13-19")]
    for name in names:
        bench = _bench(name)
        assert bench["agents"] == 20 and bench["config"]["tau"] == 0.02 and bench["config"]["gamma"] == 0.95
    tau, default = _seeds(names), _seeds(GAMMA_095)
    assert [s["seed"] for s in tau] == [s["seed"] for s in default] == list(range(20))
    solved = [s["solved_at"] for s in tau]
    report = ("Report.md", REPORT)
    expect(f"Seeds 0-19 solved at {', '.join(map(str, solved))} with a median of "
           f"{statistics.median(s['updates'] for s in tau):,.0f} learner updates against the default's "
           f"{statistics.median(s['updates'] for s in default):,.0f}", report)
    fewer = sum(a["updates"] < b["updates"] for a, b in zip(tau, default, strict=True))
    more = sum(a["updates"] > b["updates"] for a, b in zip(tau, default, strict=True))
    expect(f"fewer on {fewer} seeds, more on {more}, and seeds 9 and 19 needed {tau[9]['updates']:,} and "
           f"{tau[19]['updates']:,}", report)
    late = [s for s in tau if s["solved_at"] > 102]
    assert [s["seed"] for s in late] == [19]
    expect(f"Seed 19 at {late[0]['solved_at']} misses the bar of 20/20 by episode 102", report)


def test_goal_paths_on_twenty_arms():
    """Report.md's 20-arm goal-path screen, from its two files and the default's run beside the ensemble."""
    names = ["bench_train_candidate_goal_paths1_0-2.json", "bench_train_candidate_goal_paths1_3-4.json"]
    assert all(_bench(name)["config"]["goal_paths"] == 1 and _bench(name)["agents"] == 20 for name in names)
    paths, default = _seeds(names), _bench("bench_train_default_beside_ensemble.json")["seeds"][:5]
    assert [s["seed"] for s in paths] == [s["seed"] for s in default] == list(range(5))
    assert all(s["solved_at"] == 100 for s in paths)
    fewer = sum(a["updates"] < b["updates"] for a, b in zip(paths, default, strict=True))
    words = ["no", "one", "two", "three", "four", "five"]
    ours, theirs = [f"{s['updates']:,}" for s in paths], [f"{s['updates']:,}" for s in default]
    expect(f"seeds 0-4 all solved at 100 with {', '.join(ours[:4])} and {ours[4]} updates, against "
           f"{', '.join(theirs[:4])} and {theirs[4]} for the default", ("Report.md", REPORT))
    expect(f"fewer on {words[fewer]} seeds, more on {words[5 - fewer]}", ("Report.md", REPORT))


def _h200_common(names: list[str]) -> tuple[list[int], list[dict[int, dict]]]:
    """The seeds every sweep of the 16-run GPU call finished, and each sweep's runs by seed."""
    sweeps = [{s["seed"]: s for s in _bench(name)["seeds"]} for name in names]
    return sorted(set.intersection(*(set(sweep) for sweep in sweeps))), sweeps


def test_larger_batches_on_twenty_arms():
    """Report.md's batch-size paragraph and the tuning log's GPU-machine table, from their files."""
    report, log = ("Report.md", REPORT), ("tuning_log.md", _path("tuning_log.md").read_text())
    # The screens that learned later in episodes.
    for name, batch in (("bench_train_candidate_u10_batch512_tau2e-2_0-4.json", 512),
                        ("bench_train_candidate_u5_batch1024_tau4e-2_0-4.json", 1024)):
        bench = _bench(name)
        assert bench["config"]["batch_size"] == batch and bench["seeds"][2]["solved_at"] is None
    ranges = []
    for name in ("bench_train_candidate_u10_batch512_tau2e-2_0-4.json", "bench_train_candidate_u5_batch1024_tau4e-2_0-4.json"):
        solved = [s["updates"] for s in _bench(name)["seeds"] if s["solved_at"] is not None]
        ranges.append(f"{min(solved):,}-{max(solved):,}")
    expect(f"counted {ranges[0]} and {ranges[1]} updates on the seeds that solved", report)
    assert _bench("bench_train_candidate_lr2e-3_stopped.json")["seeds"][0]["solved_at"] is None
    n5 = _bench("bench_train_candidate_nstep5_stopped.json")["seeds"]
    expect(f"5-step returns needed {n5[0]['updates']:,} and {n5[1]['updates']:,} updates on seeds 0 and 1", report)
    # Batch 512, tau 1.5e-2 over seeds 0-9 against the default's 20-seed files.
    bench = _bench("bench_train_candidate_batch512_tau1.5e-2_0-9.json")
    assert bench["config"]["batch_size"] == 512 and bench["config"]["tau"] == 0.015 and bench["agents"] == 20
    ours, default = bench["seeds"], _seeds(GAMMA_095)[:10]
    assert [s["seed"] for s in ours] == [s["seed"] for s in default] == list(range(10))
    assert all(s["solved_at"] == 100 for s in ours)
    fewer = sum(a["updates"] < b["updates"] for a, b in zip(ours, default, strict=True))
    more = sum(a["updates"] > b["updates"] for a, b in zip(ours, default, strict=True))
    expect(f"all solved at 100, with a median of {statistics.median(s['updates'] for s in ours):,.0f} updates "
           f"against {statistics.median(s['updates'] for s in default):,.0f} for the default on the same seeds, "
           f"fewer on {fewer} seeds and more on {more}", report)
    rest = _bench("bench_train_candidate_batch512_tau1.5e-2_10-19.json")
    assert rest["config"] == bench["config"] and rest["jobs"] == 2
    twenty, default20 = ours + rest["seeds"], _seeds(GAMMA_095)
    assert [s["seed"] for s in twenty] == [s["seed"] for s in default20] == list(range(20))
    assert all(s["solved_at"] == 100 for s in twenty)
    fewer = sum(a["updates"] < b["updates"] for a, b in zip(twenty, default20, strict=True))
    more = sum(a["updates"] > b["updates"] for a, b in zip(twenty, default20, strict=True))
    med, med_default = (statistics.median(s["updates"] for s in runs_) for runs_ in (twenty, default20))
    expect(f"20/20 at episode 100 and a median of {med:,.0f} updates against the default's {med_default:,.0f} "
           f"(fewer on {fewer} seeds, more on {more})", report)
    expect(f"its {round(100 * (1 - med / med_default))}% fewer updates", report)
    # All twenty side by side with the default: seeds 0-4, then the rest in a second sitting.
    both = {}
    for side, names in (("ours", ["bench_train_pair_batch512_tau1.5e-2.json", "bench_train_pair2_batch512_tau1.5e-2.json"]),
                        ("default", ["bench_train_pair_default_beside_batch512.json",
                                     "bench_train_pair2_default_beside_batch512.json"])):
        both[side] = {s["seed"]: s for name in names for s in _bench(name)["seeds"]}
    paired = sorted(set(both["ours"]) & set(both["default"]))
    assert paired == list(range(paired[-1] + 1))
    walls = {side: statistics.median(both[side][s]["wall_s"] for s in paired) for side in both}
    ups = {side: statistics.median(both[side][s]["updates"] for s in paired) for side in both}
    slower = sum(both["ours"][s]["wall_s"] > both["default"][s]["wall_s"] for s in paired)
    verdict = "do not repay" if walls["ours"] >= walls["default"] else "repay"
    expect(f"over seeds 0-{paired[-1]} (seeds 0-4, then 5-{paired[-1]} in a second sitting", report)
    expect(f"it took a median of {walls['ours']:.1f} s against {walls['default']:.1f} s ({ups['ours']:,.0f} updates "
           f"against {ups['default']:,.0f}), slower on {slower} of the {len(paired)} seeds", report)
    expect(f"{verdict} their cost here", report)
    expect(f"seeds 0-{paired[-1]} beside the default: a median of {walls['ours']:.1f} s against "
           f"{walls['default']:.1f} s", ("README.md", README))
    # What an update costs: the file's one-thread rates.
    costs = _path("update_costs_batch512.txt").read_text()
    in_turn = {b: [int(m) for m in re.findall(rf"learner 1 thread: (\d+) updates/s \(batch {b},", costs)] for b in (256, 512)}
    one = {b: sorted(rates) for b, rates in in_turn.items()}
    assert len(one[256]) == len(one[512]) == 3
    expect(f"{one[512][0]}-{one[512][-1]} a second on one thread against {one[256][0]}-{one[256][-1]} for the default's", report)
    # The pair in one sitting.
    pair = _bench("bench_train_pair_batch512_tau1.5e-2.json")["seeds"]
    beside = _bench("bench_train_pair_default_beside_batch512.json")["seeds"]
    assert [s["seed"] for s in pair] == [s["seed"] for s in beside] == list(range(5))

    def runs(seeds: list[dict]) -> str:
        solved = ", ".join(str(s["solved_at"]) for s in seeds)
        updates = ", ".join(f"{s['updates']:,}" for s in seeds)
        return f"{solved} with {updates} updates in a median of {statistics.median(s['wall_s'] for s in seeds):.1f} s"
    expect(runs(pair), report)
    expect(runs(beside).replace(" in a median of ", " in "), report)
    assert statistics.median(s["wall_s"] for s in pair) < statistics.median(s["wall_s"] for s in beside)
    # Sixteen runs sharing one H200: the seeds all four sweeps finished.
    parts = ["default", "tau1.5e-2", "batch512_tau2e-2", "batch512_tau1.5e-2"]
    names = [f"bench_train_h200_shared16_{part}.json" for part in parts]
    assert all(_bench(name)["learner"] == "graph-overlap" and _bench(name)["jobs"] == 4 for name in names)
    common, sweeps = _h200_common(names)
    assert common == [*range(12), 13]
    figures = {}
    for part, sweep in zip(parts, sweeps, strict=True):
        runs_ = [sweep[s] for s in common]
        by_102 = sum(r["solved_at"] is not None and r["solved_at"] <= 102 for r in runs_)
        updates = statistics.median(r["updates"] if r["solved_at"] else 10**9 for r in runs_)
        figures[part] = (by_102, updates, statistics.median(r["wall_s"] for r in runs_))
        expect(f"{by_102}/13", log)
        expect(f"| {updates:,.0f} | {figures[part][2]:.1f} s |", log)
    per_update = {part: statistics.median(1000 * sweep[s]["seconds"]["learning"] / sweep[s]["updates"] for s in common)
                  for part, sweep in zip(parts, sweeps, strict=True)}
    expect(f"a batch-512 update took a median of {per_update['batch512_tau1.5e-2']:.2f} ms of learning against the "
           f"default's {per_update['default']:.2f} ms "
           f"({per_update['batch512_tau1.5e-2'] / per_update['default']:.1f} times", report)
    ratios = [a / b for a, b in zip(in_turn[256], in_turn[512], strict=True)]  # the runs alternated
    expect(f"where this CPU's single thread takes {min(ratios):.1f}-{max(ratios):.1f} times", report)
    unsolved = [s for s in common if sweeps[0][s]["solved_at"] is None]
    ours, theirs = figures["batch512_tau1.5e-2"], figures["default"]
    expect(f"solved {ours[0]}/13 by episode 102 with a median of {ours[1]:,.0f} updates and {ours[2]:.1f} s, "
           f"against the default's {theirs[0]}/13 (seeds {unsolved[0]} and {unsolved[1]} unsolved at 105), "
           f"{theirs[1]:,.0f} updates and {theirs[2]:.1f} s", report)
    expect(f"all 13 solved by episode 102, with a median of {ours[1]:,.0f} updates and {ours[2]:.1f} s, where the "
           f"default solved {theirs[0]} of them by 102 (two were unsolved at 105) with {theirs[1]:,.0f} updates and "
           f"{theirs[2]:.1f} s", ("README.md", README))


ONE_ARM_NINETEEN_PATHS = ["bench_train_one_arm_goal_paths19_u20_screen_0.json",
                          "bench_train_one_arm_goal_paths19_u20_screen_1.json", "bench_train_one_arm_goal_paths19_u20_2-9.json"]


def test_nineteen_goal_paths_on_one_arm():
    """Report.md's figures for nineteen goal paths on one arm (measured, not the default), from its ten
    seeds' files, made with today's settings but for the paths, against nine paths (today's default)."""
    from ddpg.tasks import REACHER_ONE_ARM

    assert REACHER_ONE_ARM.config["goal_paths"] == 9
    nineteen = {**REACHER_ONE_ARM.config, "goal_paths": 19}
    new, nine = _one_arm_seeds(ONE_ARM_NINETEEN_PATHS, nineteen), _seeds(ONE_ARM_NINE_PATHS)
    assert [s["seed"] for s in new] == [s["seed"] for s in nine] == list(range(10))
    assert all(s["solved_at"] is not None for s in new)
    report = ("Report.md", REPORT)
    (solved, _, low), (solved9, _, low9) = _one_arm_table(nine, new)
    pairs = list(zip(nine, new, strict=True))
    earlier = sum(n["solved_at"] < f["solved_at"] for f, n in pairs)
    later = [(n["seed"], n["solved_at"] - f["solved_at"]) for f, n in pairs if n["solved_at"] > f["solved_at"]]
    expect(f"Nineteen paths solved 10/10 at a median of {solved:g} episodes against {solved9:g}, earlier on "
           f"{NUMBER_WORDS[earlier]} seeds and later on {NUMBER_WORDS[len(later)]} ("
           + ", ".join(f"seed {seed} by {by}" for seed, by in later)
           + f"), the worst {max(s['solved_at'] for s in new)} against {max(s['solved_at'] for s in nine)}; the median of "
           f"the lowest episodes after the first 30 is {low:.2f} against {low9:.2f}", report)
    expect(f"The screen's seeds 0 and 1 solved at {new[0]['solved_at']} and {new[1]['solved_at']}", report)
    per_episode = [s["wall_s"] / s["solved_at"] for s in new]
    expect(f"{min(per_episode):.1f}-{max(per_episode):.1f} s an episode", report)
