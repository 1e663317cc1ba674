"""The PhysX 4.1 Crawler reference in closed loop (benchmarks/physx/crawler_physx.cpp --serve, played
through benchmarks/physx/server.py).

The binary is built outside the repository (`bash benchmarks/physx/build.sh PHYSX_GIT_DIR`); these
tests find it at $CRAWLER_PHYSX (default /tmp/physx/crawler_physx) and are skipped without it.
They check what a comparison on the same actions relies on: the reference starts in the built-in
Crawler's pose, reports the same sensor rows, falls and stands as its committed output says, and
answers the same bytes to the same actions.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from benchmarks.physx.server import PHYSICS_STEPS, SENSOR_SIZE, PhysXCrawlers, PhysXServerError
from crawler.environment import CrawlerEnvironment
from crawler.fidelity import SplitMix64, policy_action, read_reference
from crawler.mjcf import SENSOR_SLICES

BINARY = Path(os.environ.get("CRAWLER_PHYSX", "/tmp/physx/crawler_physx"))
REFERENCE = Path(__file__).parent / "physx_reference" / "crawler_physx_4_1.txt"
BODY_Y = SENSOR_SLICES["pos"].start + 1


@pytest.fixture
def binary() -> Path:
    if not BINARY.is_file():
        pytest.skip(f"no PhysX Crawler reference at {BINARY} (set CRAWLER_PHYSX, or build it with "
                    "`bash benchmarks/physx/build.sh PHYSX_GIT_DIR`)")
    return BINARY


def test_a_missing_binary_says_how_to_build_it(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"benchmarks/physx/build\.sh"):
        PhysXCrawlers(tmp_path / "crawler_physx", 1)


def test_first_rows_are_the_builtin_crawlers_first_pose(binary):
    env = CrawlerEnvironment(num_agents=2, verbose=False, show_viewer=False)
    env.reset()
    ours = env._record[:, -1].copy()
    env.close()
    with PhysXCrawlers(binary, 2) as physx:
        rows = physx.restart(np.ones(2, dtype=bool))
    assert rows.shape == (2, SENSOR_SIZE)
    np.testing.assert_allclose(rows, ours, atol=1e-4, rtol=0)


def test_still_falls_as_the_committed_reference(binary):
    """No drive: the body drops each decision, as the --episodes mode's still trace (one crawler at
    z = 0 there, at z = -300 here: the same heights to float rounding)."""
    trace = read_reference(REFERENCE)["still"].trace
    still = np.tile(policy_action("still", None), (2, 1))
    with PhysXCrawlers(binary, 2) as physx:
        start = physx.restart(np.ones(2, dtype=bool))[:, BODY_Y]
        heights = [physx.step(still)[:, -1, BODY_Y] for _ in range(3)]
    y = np.column_stack([start, *heights])
    assert (np.diff(y, axis=1) < 0).all(), y
    np.testing.assert_allclose(y[:, 1:], np.tile(trace[:3], (2, 1)), atol=1e-3)


def test_a_step_reports_rows_before_each_physics_step_then_after(binary):
    actions = np.tile(policy_action("stand", None), (3, 1))
    with PhysXCrawlers(binary, 3) as physx:
        first = physx.restart(np.ones(3, dtype=bool))
        one = physx.step(actions)
        two = physx.step(actions)
        # Restarting crawler 1 alone puts it back; the others go on.
        again = physx.restart(np.array([False, True, False]))
    assert one.shape == (3, PHYSICS_STEPS + 1, SENSOR_SIZE)
    np.testing.assert_array_equal(one[:, 0], first)
    np.testing.assert_array_equal(two[:, 0], one[:, -1])
    np.testing.assert_array_equal(again[1], first[1])
    np.testing.assert_array_equal(again[[0, 2]], two[[0, 2], -1])


def test_same_actions_give_identical_bytes(binary):
    rngs = [SplitMix64(e) for e in range(3)]
    actions = [np.stack([policy_action("uniform", r) for r in rngs]) for _ in range(20)]
    replies = []
    for _ in range(2):
        with PhysXCrawlers(binary, 3) as physx:
            out = [physx.restart(np.ones(3, dtype=bool)).tobytes()]
            out += [physx.step(a).tobytes() for a in actions]
            replies.append(out)
    assert replies[0] == replies[1]


@pytest.mark.parametrize("options", [
    ("--hip-y-sign", "plus"), ("--drive-limits", "impulse"), ("--locked", "locked-twist-swing"),
    ("--contact-offset", "0.02"), ("--iters", "8", "4")])
def test_each_reading_runs_without_physx_errors(binary, options):
    stand = policy_action("stand", None)[None]
    with PhysXCrawlers(binary, 1, options) as physx:
        physx.restart(np.ones(1, dtype=bool))
        rows = [physx.step(stand) for _ in range(10)]
        assert np.isfinite(rows).all()
        assert physx.stderr == ""


def test_a_bad_option_is_reported_with_stderr(binary):
    with PhysXCrawlers(binary, 1, ("--hip-y-sign", "sideways")) as physx:
        with pytest.raises(PhysXServerError, match="unknown option"):
            physx.restart(np.ones(1, dtype=bool))


def test_stand_settles_near_the_committed_height(binary):
    """Sanity: the stand action (hips level, knees at 75 degrees, full strength) holds the body
    near the committed reference's stand trace (2.10)."""
    ref = read_reference(REFERENCE)["stand"].trace
    stand = np.tile(policy_action("stand", None), (2, 1))
    with PhysXCrawlers(binary, 2) as physx:
        physx.restart(np.ones(2, dtype=bool))
        heights = np.array([physx.step(stand)[:, -1, BODY_Y] for _ in range(100)])
    print(f"stand: body height after 100 decisions {heights[-1]} (committed reference {ref[99]:.5f})")
    np.testing.assert_allclose(heights[-1], ref[99], atol=0.01)
    np.testing.assert_allclose(heights[:, 0], ref[:100], atol=0.01)


def test_a_saved_state_puts_a_fresh_reference_where_the_first_was(binary):
    """state() and set_state(): a fresh reference put in another's state reports its rows, and
    steps the next decision as the first does but for PhysX's rebuilt caches (well under a
    thousandth of a unit); a malformed state is refused."""
    rng = np.random.default_rng(3)
    actions = rng.uniform(-1.0, 1.0, (12, 3, 20))
    options = ("--hip-y-sign", "plus", "--locked", "locked-twist-swing", "--contact-offset", "0.01")
    with PhysXCrawlers(binary, 3, options) as first, PhysXCrawlers(binary, 3, options) as second:
        first.restart(np.ones(3, dtype=bool))
        second.restart(np.ones(3, dtype=bool))
        for a in actions[:10]:
            now = first.step(a)[:, -1]
        state = first.state()
        assert state.shape == (3, 9, 13)
        np.testing.assert_allclose(second.set_state(state), now, atol=1e-6, rtol=0)  # PhysX renormalises rotations
        ahead, again = first.step(actions[10])[:, -1], second.step(actions[10])[:, -1]
        np.testing.assert_allclose(again, ahead, atol=1e-3, rtol=0)
        assert not np.allclose(ahead, now, atol=1e-2)  # the decision moved them
        with pytest.raises(ValueError, match="9 x 13"):
            second.set_state(state[:, :8])
