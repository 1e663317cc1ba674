"""The training curve of the one SAC known to walk the course's own Crawler build, from the files its
author committed, set beside the study's best candidate by transitions and by updates (docs/crawler.md,
"Against the SAC known to walk"):

    python -m benchmarks.reference_sac_crawler --data DIR --json benchmarks/results/crawler_reference/sac_walks.json

DIR is ``data/`` of a clone of github.com/legalaspro/unity-reacher-crawler-deeprl (MIT; the figures, not
the files, are kept here). Its ``sac_crawler_rewards.npy`` and ``sac_crawler_lengths.npy`` hold, per
episode, the 12 crawlers' score and life in decisions (mean, lowest, highest). How its loop counts
(``utils/crawler_train.py`` and ``train_crawler_sac.py``, commit 4ee73e2): every episode starts the
12 crawlers together; a crawler that falls is left out (its transitions unrecorded) until the last one
falls or decision 1000; each decision of those left is one ``agent.step`` that stores their
transitions and, once more than 20,000 are stored, runs 3 updates of 256. So an episode's transitions
are 12 x its mean life, its decisions its longest life, and its updates 3 per decision after the first
20,000 transitions (counted from the first episode that starts past them: under one episode's worth
fewer than ran).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from ddpg.run_folder.atomic import write_json

SOURCE = "github.com/legalaspro/unity-reacher-crawler-deeprl, data/sac_crawler_{rewards,lengths}.npy, commit 4ee73e2"
UPDATES_PER_DECISION, LEARNING_STARTS, CRAWLERS = 3, 20_000, 12
AT_TRANSITIONS = (100_000, 200_000, 300_000, 500_000, 1_000_000)
AT_UPDATES = (50_000, 100_000, 150_000, 200_000, 300_000)
WINDOW = 8  # episodes averaged at a point: 96 crawler-episodes, as near the study's 100 as whole episodes come


def curve(rewards: np.ndarray, lengths: np.ndarray) -> dict[str, np.ndarray]:
    """Per episode, after it: transitions and updates so far, and the episode's mean score and life."""
    transitions = np.cumsum(lengths[:, 0] * CRAWLERS)
    before = transitions - lengths[:, 0] * CRAWLERS
    learning = before >= LEARNING_STARTS
    updates = np.cumsum(np.where(learning, lengths[:, 2] * UPDATES_PER_DECISION, 0))
    return {"transitions": transitions, "updates": updates, "score": rewards[:, 0], "life": lengths[:, 0]}


def at(c: dict[str, np.ndarray], key: str, level: float) -> dict[str, Any] | None:
    """The point where ``c[key]`` first reaches ``level``: the mean score and life of the WINDOW episodes ending there."""
    reached = np.flatnonzero(c[key] >= level)
    if not len(reached) or reached[0] + 1 < WINDOW:
        return None
    i = int(reached[0])
    last = slice(i + 1 - WINDOW, i + 1)
    return {"at": level, "episode": i + 1, "transitions": round(float(c["transitions"][i])), "updates": int(c["updates"][i]),
            "score": round(float(c["score"][last].mean()), 1), "life": round(float(c["life"][last].mean()), 1)}


def reference(data: Path) -> dict[str, Any]:
    rewards, lengths = np.load(data / "sac_crawler_rewards.npy"), np.load(data / "sac_crawler_lengths.npy")
    if rewards.shape != lengths.shape or rewards.ndim != 2 or rewards.shape[1] != 3:
        raise SystemExit(f"{data}: expected two (episodes, 3) arrays, got {rewards.shape} and {lengths.shape}")
    c = curve(rewards, lengths)
    random_play = c["transitions"] <= LEARNING_STARTS  # uniform random actions until the updates start
    return {"source": SOURCE, "episodes": len(rewards), "transitions": round(float(c["transitions"][-1])),
            "updates": int(c["updates"][-1]), "window_episodes": WINDOW,
            "settings": "SAC, learned temperature, gamma 0.99, 256x256 networks, batch 256, learning rates 3e-4, "
                        "tau 0.005, 1-step targets, no observation normalisation, 3 updates a decision",
            "random_play": {"episodes": int(random_play.sum()), "mean_life": round(float(c["life"][random_play].mean()), 1)},
            "by_transitions": [p for n in AT_TRANSITIONS if (p := at(c, "transitions", n))],
            "by_updates": [p for n in AT_UPDATES if (p := at(c, "updates", n))]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--data", type=Path, required=True, help="data/ of a clone of legalaspro/unity-reacher-crawler-deeprl")
    parser.add_argument("--json", type=Path, help="write the record here")
    args = parser.parse_args(argv)
    missing = [n for n in ("sac_crawler_rewards.npy", "sac_crawler_lengths.npy") if not (args.data / n).is_file()]
    if missing:
        parser.error(f"--data {args.data}: no {', '.join(missing)} there (expected the data/ folder of a clone of "
                     "legalaspro/unity-reacher-crawler-deeprl)")
    record = reference(args.data)
    print(json.dumps(record, indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        write_json(args.json, record)


if __name__ == "__main__":
    main()
