"""What acting one learning step behind does to learning: ``--learner graph-overlap`` against
``--learner graph`` on the 20-arm default, seed for seed.

    python -m benchmarks.bench_overlap --seeds 0-4 --pair graph --json benchmarks/results/gpu/overlap_cpu_eager_graph.json

``graph-overlap`` lets the GPU replay a learning step while the environment steps, so the arms
act with the actor of the learning step before (ddpg/backends/cuda_graph.py). Whether that
delay costs episodes does not depend on the GPU: here both run the graph back-end's own code
eagerly on this CPU (``CudaGraph(agent, capture=False)``: the same draws, buffer copy and acting
copy, one update at a time), so a machine without a GPU measures it. The batches come from
torch's CPU generator rather than CUDA's, so a seed's run is not the GPU's run of that seed: the
comparison is between the two settings over the same seeds. Slow: the updates are autograd's,
about 2-4 minutes a run on a 2-core CPU; ``--pair`` runs one setting, so the two can run side
by side (one thread each), each with its own ``--json``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from benchmarks.bench_train import distribution, run_seed, seed_list
from ddpg.backends.cuda_graph import CudaGraph
from ddpg.loop import GOOD_SCORE, GOOD_UPDATES
from ddpg.run_folder.atomic import write_json
from ddpg.run_folder.record_file import git_commit
from ddpg_agent import Agent, DDPGConfig

SETTINGS = {"graph": False, "graph-overlap": True}  # learner name: overlap


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n")[0])
    p.add_argument("--seeds", default="0-4", help="seeds and ranges, e.g. '0-4' (default 0-4)")
    p.add_argument("--max-episodes", type=int, default=150, help="episode cap per run (default 150)")
    p.add_argument("--pair", choices=tuple(SETTINGS), default=None, help="only this setting (default both)")
    p.add_argument("--json", default=None, help="write the runs here (after each run)")
    args = p.parse_args(argv)
    try:
        seeds = seed_list(args.seeds)
    except argparse.ArgumentTypeError as exc:
        p.error(f"--seeds: {exc}")
    torch.set_num_threads(1)
    config = DDPGConfig()
    out = Path(args.json) if args.json else None
    report: dict = {"command": "python -m benchmarks.bench_overlap " + " ".join(sys.argv[1:] if argv is None else argv),
                    "git_commit": git_commit(), "device": "cpu (the graph back-end run eagerly)",
                    "config": config.to_dict(), "runs": []}
    for seed in seeds:
        for learner in (args.pair,) if args.pair else tuple(SETTINGS):
            def make(seed: int = seed, overlap: bool = SETTINGS[learner]) -> Agent:
                agent = Agent(33, 4, seed, config=config)
                CudaGraph(agent, capture=False, overlap=overlap)
                return agent

            r = run_seed(seed, config, args.max_episodes, 20, good_score=GOOD_SCORE, good_updates=GOOD_UPDATES,
                         make=make)
            report["runs"].append({"learner": learner, **{k: r[k] for k in ("seed", "solved_at", "updates", "wall_s",
                                                                             "first_30")}})
            print(f"seed {seed}, {learner}: solved at {r['solved_at']}, {r['updates']:,} updates, {r['wall_s']:.1f} s",
                  flush=True)
            if out is not None:
                write_json(out, report)
    for learner in SETTINGS:
        runs = sorted((x for x in report["runs"] if x["learner"] == learner), key=lambda x: x["seed"])
        if runs:
            d = distribution(runs)
            print(f"{learner}: {d['n_solved']}/{d['n_seeds']} solved, median at {d['median_solved_at']}, worst "
                  f"{d['worst_solved_at']}, median updates {d['median_updates']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
