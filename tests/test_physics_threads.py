"""The arms stepped on several threads are bitwise the arms stepped on one.

Every check that runs numba's threads runs in a fresh Python process (this file run as a
script, `python tests/test_physics_threads.py CHECK`): numba launches its threads once per
process and GNU OpenMP cannot be used again in a child forked after that, so the test
process itself never launches them and the suite's other tests fork as before.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from reacher import physics, stepper
from reacher.environment import (
    DRAG_FACTOR,
    GRAVITY,
    MAX_ANGULAR_SPEED,
    PHYSICS_DT,
    PHYSICS_STEPS_PER_DECISION,
    ReacherEnvironment,
    goal_offsets,
)

HERE = Path(__file__).resolve()
DECISIONS = 150  # x 4 physics steps: 600 steps, the cap firing hundreds of times


def _run_check(check: str, **env: str) -> dict:
    """Run `check` (a function below) in a fresh process; its JSON result, or fail with its output."""
    environ = {**os.environ, **env}
    done = subprocess.run([sys.executable, str(HERE), check], capture_output=True, text=True, env=environ,
                          cwd=HERE.parent.parent, timeout=300)
    assert done.returncode == 0, f"check {check} failed (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
    return json.loads(done.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------ the checks, run in a child
def _scenario(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Torques (decisions, n, 2, 3) as the environment makes them from random actions, goal
    tracks (decisions, 4, n, 3) moving as the environment moves them, and the reach squared
    (a goal wider than the task's, so that random arms reach it often enough to count)."""
    rng = np.random.default_rng(seed)
    actions = rng.uniform(-1, 1, (DECISIONS, n, 4))
    torques = np.zeros((DECISIONS, n, 2, 3))
    torques[..., 0], torques[..., 2] = 150.0 * actions[..., 0::2], 150.0 * actions[..., 1::2]
    start, speed = rng.uniform(0, 360, n), rng.uniform(-1, 1, n)
    steps = np.arange(1, DECISIONS * PHYSICS_STEPS_PER_DECISION + 1)[:, None]
    goals = goal_offsets(start + steps * speed).reshape(DECISIONS, PHYSICS_STEPS_PER_DECISION, n, 3)
    return torques, goals, 25.0


def _step_all(n: int, seed: int, chunks: int | None) -> dict[str, np.ndarray]:
    """Every state array, and every decision's counts and observations, stepped by `simulate`
    (chunks None) or by `simulate_parallel` in `chunks` blocks."""
    model_env = ReacherEnvironment(num_agents=1, verbose=False)
    arm = model_env._arm
    torques, goals, reach_sq = _scenario(n, seed)
    rng = np.random.default_rng(seed + 1)
    qpos, qvel, body_vel = rng.uniform(-1, 1, (n, 4)), np.zeros((n, 4)), np.zeros((n, 12))
    counts, capped = np.zeros(n, dtype=np.int64), np.zeros(2, dtype=np.int64)
    all_counts, all_obs = np.zeros((DECISIONS, n), dtype=np.int64), np.zeros((DECISIONS, n, 26))
    constants = (*arm.arrays, PHYSICS_DT, GRAVITY, DRAG_FACTOR, MAX_ANGULAR_SPEED)
    for d in range(DECISIONS):
        if chunks is None:
            physics.simulate(qpos, qvel, body_vel, torques[d], goals[d], reach_sq, counts, capped, *constants)
        else:
            physics.simulate_parallel(qpos, qvel, body_vel, torques[d], goals[d], reach_sq, counts, capped,
                                      *constants, chunks)
        all_counts[d] = counts
        physics.observe(qpos, body_vel, *arm.pose_arrays, all_obs[d])
    return {"qpos": qpos, "qvel": qvel, "body_vel": body_vel, "capped": capped, "counts": all_counts,
            "observations": all_obs}


def _compare(reference: dict[str, np.ndarray], other: dict[str, np.ndarray]) -> list[str]:
    return [key for key in reference if not np.array_equal(reference[key], other[key])]


def check_kernel() -> dict:
    """`simulate_parallel` in 2, 3, 4, 7 and n blocks on every numba thread count this process
    launched (NUMBA_NUM_THREADS), against `simulate`, for 20 arms and for 7."""
    import numba

    results = {"numba_threads": numba.config.NUMBA_NUM_THREADS, "layer": stepper.threading_layer(), "runs": []}
    for n in (20, 7):
        serial = _step_all(n, seed=n, chunks=None)
        assert serial["capped"].sum() > 100, "the cap must take part"
        assert 0 < serial["counts"].sum(), "some hands must reach their goals"
        for threads in range(1, numba.config.NUMBA_NUM_THREADS + 1):
            numba.set_num_threads(threads)
            for chunks in sorted({2, 3, 4, 7, n}):
                differ = _compare(serial, _step_all(n, seed=n, chunks=chunks))
                results["runs"].append({"arms": n, "threads": threads, "chunks": chunks, "differ": differ})
    return results


def _play(threads: int, decisions: int = 1100) -> dict[str, np.ndarray]:
    """A 20-arm environment on `threads` threads through random actions past an episode's end."""
    env = ReacherEnvironment(num_agents=20, seed=3, verbose=False, threads=threads)
    env.reset()
    rng = np.random.default_rng(1)
    observations, rewards = [], []
    for _ in range(decisions):
        info = env.step(rng.uniform(-1.2, 1.2, (20, 4)))["ReacherBrain"]
        observations.append(info.vector_observations)
        rewards.append(info.rewards)
    return {"observations": np.array(observations), "rewards": np.array(rewards), "qpos": env._qpos.copy(),
            "qvel": env._qvel.copy(), "body_vel": env._body_vel.copy(), "capped": np.array(env.cap_counts)}


def check_environment() -> dict:
    """The environment on 1, 2 and 4 threads (4: more than this machine may have)."""
    serial = _play(1)
    return {"used": {t: stepper.usable_threads(t) for t in (2, 4)},
            "differ": {t: _compare(serial, _play(t)) for t in (2, 4)}}


def check_fork() -> dict:
    """A child forked after numba's threads launched steps on one thread (GNU OpenMP would abort it)."""
    import multiprocessing

    serial = _play(1, decisions=200)
    parallel = _play(2, decisions=200)  # launches the threads here, in the parent
    context = multiprocessing.get_context("fork")
    parent_end, child_end = context.Pipe()

    def child() -> None:
        played = _play(2, decisions=200)
        child_end.send((stepper.usable_threads(2), _compare(serial, played)))

    process = context.Process(target=child)
    process.start()
    used, differ = parent_end.recv() if parent_end.poll(120) else (None, ["no answer"])
    process.join(30)
    return {"parent_differ": _compare(serial, parallel), "child_used": used, "child_differ": differ,
            "child_exit": process.exitcode}


def check_openmp_settings() -> dict:
    """PyTorch's thread count and OpenMP's settings for this thread, before and after the threads launch."""
    import torch

    torch.set_num_threads(1)
    runtime = stepper._openmp_runtime()  # None off glibc Linux: PyTorch's count alone is compared

    def settings() -> list[int]:
        omp = [runtime.omp_get_max_threads(), runtime.omp_get_max_active_levels()] if runtime else []
        return [torch.get_num_threads(), *omp]

    before = settings()
    _play(2, decisions=50)
    return {"before": before, "after": settings(), "layer": stepper.threading_layer()}


def check_one_thread() -> dict:
    """Step on one thread; whether numba's threads launched."""
    _play(1, decisions=20)
    return {"layer": stepper._layer}


def check_variable() -> dict:
    """REACHER_THREADS sets the default (the parent sets it)."""
    return {"default": stepper.default_threads(), "env": ReacherEnvironment(num_agents=2, verbose=False).threads}


# ----------------------------------------------------------------------------- the tests
def test_parallel_step_is_bitwise_the_serial_step() -> None:
    result = _run_check("check_kernel")
    assert result["runs"] and all(not run["differ"] for run in result["runs"]), result


def test_more_threads_than_cpus_give_the_same_numbers() -> None:
    """Four numba threads launched on this machine (which may have two CPUs): each block of
    arms on its own OS thread, contending for the cores, and still bitwise the serial step."""
    result = _run_check("check_kernel", NUMBA_NUM_THREADS="4")
    assert result["numba_threads"] == 4
    assert any(run["threads"] == 4 for run in result["runs"])
    assert all(not run["differ"] for run in result["runs"]), result


def test_environment_on_threads_is_bitwise_the_environment_on_one() -> None:
    result = _run_check("check_environment")
    assert result["differ"] == {"2": [], "4": []}, result
    if (os.cpu_count() or 1) >= 2 and result["used"]["2"] == 1:
        pytest.skip(f"numba's threading layer here is a slow one: stepping stayed on one thread ({result})")


def test_a_child_forked_after_the_threads_launched_steps_on_one_thread() -> None:
    result = _run_check("check_fork")
    assert result == {"parent_differ": [], "child_used": 1, "child_differ": [], "child_exit": 0}


def test_launching_the_threads_leaves_pytorch_and_openmp_as_they_were() -> None:
    """Numba's omp layer sets OpenMP's thread count for the launching thread; PyTorch shares
    that runtime, and its one-thread learner ran ten times slower on two OpenMP threads."""
    pytest.importorskip("torch")
    result = _run_check("check_openmp_settings")
    assert result["after"] == result["before"], result


def test_reacher_threads_variable_sets_the_default() -> None:
    assert _run_check("check_variable", REACHER_THREADS="3") == {"default": 3, "env": 3}
    assert _run_check("check_variable", REACHER_THREADS="") == {
        "default": stepper.default_threads(), "env": stepper.default_threads()}


def test_default_threads_follow_the_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(stepper.THREADS_VARIABLE, raising=False)
    for cpus in (1, 2, 4, 16, 64):
        monkeypatch.setattr(stepper, "available_cpus", lambda cpus=cpus: cpus)
        assert stepper.default_threads() == stepper.default_threads_for(cpus)
        assert 1 <= stepper.default_threads() <= max(1, cpus)
    monkeypatch.setenv(stepper.THREADS_VARIABLE, "0")
    with pytest.raises(ValueError, match="REACHER_THREADS must be a positive integer"):
        stepper.default_threads()


def test_stalling_threads_send_the_steps_to_one_thread_for_a_while(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parallel steps slower than STALL_S (a thread that got no CPU) make the stepper go to one
    thread for RETRY_AFTER steps, then try the threads again; the numbers never change. The
    threads are faked here (no thread pool in the test process): a 'parallel' step that runs the
    serial step and, on request, stalls on the stepper's clock, a fake one (a real step of a loaded
    machine can take longer than STALL_S, which made this test fail under load)."""
    calls = []
    stall = {"on": True}
    clock = {"now": 0.0}

    def fake_parallel(*args):
        calls.append("parallel")
        if stall["on"]:
            clock["now"] += stepper.STALL_S * 1.5
        physics.simulate(*args[:-1])

    monkeypatch.setattr(stepper, "time", SimpleNamespace(perf_counter=lambda: clock["now"]))
    monkeypatch.setattr(stepper, "usable_threads", lambda threads: 2)
    monkeypatch.setattr(stepper.numba, "set_num_threads", lambda n: None)
    monkeypatch.setattr(stepper, "simulate_parallel", fake_parallel)
    monkeypatch.setattr(stepper, "RETRY_AFTER", 10)
    stepped = ReacherEnvironment(num_agents=4, seed=5, verbose=False, threads=2)
    serial = ReacherEnvironment(num_agents=4, seed=5, verbose=False, threads=1)
    for env in (stepped, serial):
        env.reset()
    rng = np.random.default_rng(0)

    def step_both() -> None:
        actions = rng.uniform(-1, 1, (4, 4))
        a, b = (env.step(actions)["ReacherBrain"].vector_observations for env in (stepped, serial))
        assert np.array_equal(a, b)

    for _ in range(stepper.STALLS_TO_FALL_BACK):
        step_both()
    assert stepped._stepper.fallbacks == 1 and stepped._stepper.threads_now == 1
    assert len(calls) == stepper.STALLS_TO_FALL_BACK
    for _ in range(10):
        step_both()
    assert len(calls) == stepper.STALLS_TO_FALL_BACK and stepped._stepper.threads_now == 2  # tried again
    stall["on"] = False
    for _ in range(stepper.STALL_WINDOW + 5):
        step_both()
    assert stepped._stepper.fallbacks == 1 and len(calls) == stepper.STALLS_TO_FALL_BACK + stepper.STALL_WINDOW + 5
    stall["on"] = True
    for _ in range(stepper.STALLS_TO_FALL_BACK):
        step_both()
    assert stepped._stepper.fallbacks == 2  # a second stall: twice as long on one thread (20 steps)
    for _ in range(19):
        step_both()
    assert stepped._stepper.threads_now == 1
    step_both()
    assert stepped._stepper.threads_now == 2
    assert np.array_equal(stepped._body_vel, serial._body_vel) and stepped.cap_counts == serial.cap_counts


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True, None])
def test_threads_argument_is_checked(bad: object) -> None:
    if bad is None:
        assert ReacherEnvironment(num_agents=1, verbose=False, threads=None).threads == stepper.default_threads()
        return
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        ReacherEnvironment(num_agents=1, verbose=False, threads=bad)


def test_one_thread_never_launches_numba_threads() -> None:
    """threads=1 runs the serial loop: no thread pool started, no OpenMP state touched."""
    assert _run_check("check_one_thread") == {"layer": None}


if __name__ == "__main__":
    print(json.dumps(globals()[sys.argv[1]]()))
