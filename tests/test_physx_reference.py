"""The built-in Reacher against PhysX 4.1 running the same arm (tests/physx_reference/).

Tolerances, over 400 arm-episodes per action distribution (the reference's standard
errors are 0.007-0.014 over 1000): mean episode score within 0.04 (uniform, clipped
Gaussian) and 0.10 (Ornstein-Uhlenbeck); median distances after 50 uniform decisions
within 20%; the constant-torque path within 0.05 through decision 30.
"""

from __future__ import annotations

import csv
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from reacher.fidelity import (
    REFERENCE_POLICY_NAMES,
    constant_torque_path,
    horizon,
    measure_policy,
    read_recorded_episode,
    read_reference_cap_fractions,
    read_reference_constant_path,
    read_reference_results,
    replay,
)

DATA = Path(__file__).parent / "physx_reference"
STATS = DATA / "unity_6_1_1000_arm_episodes.txt"
CONST = DATA / "unity_6_1_100_arm_episodes_and_const.txt"
EPISODE = DATA / "uniform_episode_unity_joint.csv"
SCORE_TOLERANCE = {"uniform": 0.04, "gauss": 0.04, "ou": 0.10}
EPISODES = 20  # x 20 arms = 400 arm-episodes


@cache
def ours(policy: str):
    return measure_policy(policy, episodes=EPISODES, seed=0)


@pytest.mark.parametrize("policy", ["uniform", "gauss", "ou"])
def test_random_policies_score_as_in_physx(policy):
    ref = read_reference_results(STATS)[REFERENCE_POLICY_NAMES[policy]]
    stats = ours(policy)
    assert stats.arm_episodes >= 400
    assert abs(stats.score_mean - ref["score_mean"]) <= SCORE_TOLERANCE[policy], (stats, ref)


def test_segments_move_as_far_as_in_physx_after_50_uniform_decisions():
    ref = read_reference_results(STATS)["uniform"]
    stats = ours("uniform")
    assert stats.distance_a_median == pytest.approx(ref["dA50_med"], rel=0.2)
    assert stats.distance_b_median == pytest.approx(ref["dB50_med"], rel=0.2)


def test_the_cap_fires_as_often_as_in_physx():
    """PhysX's own count of clamped steps under uniform actions (about 37% for A, 28% for B)."""
    frac_a, frac_b = read_reference_cap_fractions(CONST)["uniform"]
    stats = ours("uniform")
    assert stats.cap_fraction_a == pytest.approx(frac_a, abs=0.05)
    assert stats.cap_fraction_b == pytest.approx(frac_b, abs=0.05)


def test_constant_torque_path_follows_physx_through_decision_30():
    ref = read_reference_constant_path(CONST)
    path = constant_torque_path(decisions=30, every=15)
    np.testing.assert_array_equal(path[:, 0], ref[:3, 0])
    np.testing.assert_allclose(path[:, 1:], ref[:3, 1:], atol=0.05)


def test_recorded_uniform_episode_is_followed_until_chaos_takes_over():
    """Fed the reference episode's actions and goal, the arm follows PhysX's positions to
    1e-2 for the first decisions and to 1e-1 for longer; the README states the horizons
    (benchmarks/bench_fidelity.py) and why they end."""
    episode = read_recorded_episode(EPISODE)
    obs, _ = replay(episode)
    np.testing.assert_allclose(obs[:, 26:33], episode.observations[:, 26:33], atol=1e-5)  # goal, hand, goal speed
    np.testing.assert_allclose(obs[0], episode.observations[0], atol=1e-6)
    h = horizon(obs, episode.observations)
    assert h.within[1e-2] >= 3
    assert h.within[1e-1] >= 7
    assert h.within[1.0] >= 50


def test_reference_files_are_the_documented_ones():
    """The tests above read these figures: guard against a truncated or swapped file."""
    ref = read_reference_results(STATS)
    assert ref["uniform"]["score_mean"] == pytest.approx(0.1613)
    assert ref["gauss_clip"]["score_mean"] == pytest.approx(0.1217)
    assert ref["ou"]["score_mean"] == pytest.approx(0.7480)
    assert (ref["uniform"]["dA50_med"], ref["uniform"]["dB50_med"]) == pytest.approx((1.988, 4.127))
    with EPISODE.open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 1000 and len(rows[0]) == 2 + 33 + 4 + 2
