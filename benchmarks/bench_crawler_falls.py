"""Why a trained crawler's episodes end: the parts touching the ground in the decision it falls in, read
from that decision's observation (each part's contact flag, as GroundContact reports it at the
decision's last physics step), over greedy play of all 12 crawlers, each restarting as it falls.

    python -m benchmarks.bench_crawler_falls --run DIR [--decisions 2000] [--json FILE]

A fall is the body or an upper leg touching the ground at any of the decision's 5 physics steps
(``crawler/contacts.py``); the observation shows the last one's contacts, so a part that touched
and lifted again within the decision is counted as "none at the decision's end".
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from crawler import CrawlerEnvironment
from crawler import observation as obs
from crawler.mjcf import PARTS
from ddpg.reporting.playing import load_agent
from ddpg.run_folder.atomic import write_json

CAUSES = ("body", "upper leg", "none at the decision's end")


def touching(observations: np.ndarray) -> np.ndarray:
    """Each part's contact flag (n, 9), PARTS' order, from observations (n, 129)."""
    return np.stack([observations[:, obs.part_start(p) + obs.CONTACT] > 0.5 for p in range(len(PARTS))], axis=1)


def cause(parts: np.ndarray) -> str:
    """Why one crawler fell, from its parts touching (9,): the body, else an upper leg, else none of them."""
    if parts[PARTS.index("body")]:
        return CAUSES[0]
    if any(parts[i] for i, name in enumerate(PARTS) if name.startswith("upper")):
        return CAUSES[1]
    return CAUSES[2]


def falls(run: Path, decisions: int) -> dict[str, Any]:
    agent = load_agent(run=run)
    env = CrawlerEnvironment(num_agents=12, verbose=False, show_viewer=False)
    brain = env.brain_names[0]
    observations = np.asarray(env.reset(train_mode=True)[brain].vector_observations)
    life, lives, causes, parts = np.zeros(env.num_agents, int), [], Counter(), Counter()
    for _ in range(decisions):
        info = env.step(agent.act(observations, add_noise=False))[brain]
        observations = np.asarray(info.vector_observations)
        life += 1
        done = np.asarray(info.local_done, bool)
        fell = done & ~np.asarray(info.max_reached, bool)
        flags = touching(observations)
        for i in np.flatnonzero(fell):
            lives.append(int(life[i]))
            causes[cause(flags[i])] += 1
            parts.update(name for name, on in zip(PARTS, flags[i], strict=True) if on)
        life[done] = 0
    env.close()
    return {"run": str(run), "crawlers": 12, "decisions": decisions, "falls": len(lives),
            "mean_life_at_fall": round(float(np.mean(lives)), 1) if lives else None,
            "by_cause": {c: causes[c] for c in CAUSES}, "parts_touching_at_falls": dict(parts.most_common())}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--run", type=Path, required=True, help="a Crawler run folder (train.py --env UnityCrawler-v0)")
    parser.add_argument("--decisions", type=int, default=2000, help="decisions of greedy play (default 2000)")
    parser.add_argument("--json", type=Path, help="write the record here")
    args = parser.parse_args(argv)
    if args.decisions < 1:
        parser.error(f"--decisions: expected a whole number >= 1, got {args.decisions}")
    if not (args.run / "run.json").is_file():
        parser.error(f"--run {args.run}: no run.json there (expected a run folder of train.py --env UnityCrawler-v0)")
    record = falls(args.run, args.decisions)
    print(json.dumps(record, indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        write_json(args.json, record)


if __name__ == "__main__":
    main()
