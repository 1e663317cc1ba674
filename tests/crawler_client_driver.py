"""Plays the Crawler stand-in with the genuine unityagents 0.4 client, as the course's
Crawler.ipynb does: run by tests/test_crawler.py under .venv-unity/bin/python (not collected).

Usage: crawler_client_driver.py PORT. Prints one JSON object with what it saw.
"""

from __future__ import annotations

import json
import sys
import warnings

import numpy as np
from unityagents import UnityEnvironment

warnings.filterwarnings("ignore")

env = UnityEnvironment(file_name="Crawler_Linux/Crawler.x86_64", base_port=int(sys.argv[1]), seed=0)
try:
    brain_name = env.brain_names[0]
    brain = env.brains[brain_name]
    info = env.reset(train_mode=True)[brain_name]
    n, size = len(info.agents), brain.vector_action_space_size
    rng = np.random.default_rng(0)
    steps, total = 0, np.zeros(n)
    while steps < 1000:
        info = env.step(np.clip(rng.standard_normal((n, size)), -1, 1))[brain_name]
        total += info.rewards
        steps += 1
        if np.any(info.local_done):
            break
    print(json.dumps({"brain": brain_name, "agents": n, "actions": size,
                      "observations": int(info.vector_observations.shape[1]), "steps": steps,
                      "done": [bool(d) for d in info.local_done], "finite": bool(np.isfinite(total).all())}))
finally:
    env.close()
