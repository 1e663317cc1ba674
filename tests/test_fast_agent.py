"""The fast learner (ddpg_fast.FastAgent) is the readable agent (ddpg_agent.Agent) made fast:
the same update, the same schedule, and its two-thread mode is bitwise its one-thread mode."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import torch

import ddpg_fast
from ddpg_agent import Agent
from ddpg_fast import FastAgent, FlatAdam
from tests._agent_helpers import fill

# Every configuration the fast learner supports: threads, clipping, weight decay, sizes.
CONFIGS = [
    {"threads": 2},
    {"threads": 1},
    {"threads": 2, "grad_clip": 0.0},
    {"threads": 2, "grad_clip": 0.02},  # small enough to clip every update
    {"threads": 2, "weight_decay": 1e-3, "lr_actor": 3e-3, "lr_critic": 2e-3},
    {"threads": 1, "actor_fc1": 64, "actor_fc2": 32, "critic_fc1": 48, "critic_fc2": 24,
     "batch_size": 100, "tau": 0.2, "gamma": 0.9},
]


def _fast(threads: int = 2, **options: object) -> FastAgent:
    """A filled FastAgent using ``threads`` threads, even on a one-CPU machine."""
    agent = fill(FastAgent(33, 4, 0, threads=threads, **{"buffer_size": 10_000, "batch_size": 64, **options}))
    agent.two_threads = threads == 2
    return agent


def _readable(**options: object) -> Agent:
    return fill(Agent(33, 4, 0, **{"buffer_size": 10_000, "batch_size": 64, **options}))


def _relative_error(a: torch.Tensor, b: torch.Tensor) -> float:
    return float(torch.linalg.vector_norm(a - b) / torch.linalg.vector_norm(b))


def _readable_state(agent: Agent) -> dict[str, torch.Tensor]:
    """Weights, target weights and Adam moments of the readable agent, flattened in the
    fast agent's order ([actor | critic])."""
    nets = [agent.actor_local, agent.critic_local]
    opts = [agent.actor_optimizer, agent.critic_optimizer]
    flat = lambda tensors: torch.cat([t.detach().reshape(-1) for t in tensors])  # noqa: E731
    params = [p for net in nets for p in net.parameters()]
    zero = torch.zeros(0)
    moments = [(opt.state[p].get("exp_avg", zero), opt.state[p].get("exp_avg_sq", zero))
               for opt, net in zip(opts, nets, strict=True) for p in net.parameters()]
    return {"weights": flat(params),
            "targets": flat([p for net in (agent.actor_target, agent.critic_target) for p in net.parameters()]),
            "exp_avg": flat([m for m, _ in moments]), "exp_avg_sq": flat([v for _, v in moments])}


def _fast_state(agent: FastAgent) -> dict[str, torch.Tensor]:
    return {"weights": agent.flat, "targets": agent.target_flat,
            "exp_avg": agent.optimizer.exp_avg, "exp_avg_sq": agent.optimizer.exp_avg_sq}


@pytest.mark.parametrize("options", CONFIGS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_fifty_updates_equal_the_readable_learner(options: dict) -> None:
    """The issue's equivalence: same weights, same batches, 50 updates of each."""
    options = dict(options)
    threads = options.pop("threads")
    fast, readable = _fast(threads, **options), _readable(**options)
    assert torch.equal(fast.flat, _readable_state(readable)["weights"])
    torch.manual_seed(1)
    with torch.no_grad():  # move the targets away from the locals so every term matters
        fast.target_flat.add_(0.05 * torch.randn_like(fast.target_flat))
        offset = 0
        for p in (p for net in (readable.actor_target, readable.critic_target) for p in net.parameters()):
            p.copy_(fast.target_flat[offset:offset + p.numel()].view_as(p))
            offset += p.numel()
    start = fast.flat.clone()
    for _ in range(50):
        batch = tuple(t.clone() for t in readable.memory.sample())
        readable.learn(batch)
        fast.learn(tuple(t.clone() for t in batch))
    ours, theirs = _fast_state(fast), _readable_state(readable)
    for key in ours:
        assert _relative_error(ours[key], theirs[key]) < 1e-5, key
    # The 50 updates really moved every part (else the comparison would be empty).
    assert _relative_error(fast.flat[:fast.n_actor], start[:fast.n_actor]) > 1e-3
    assert _relative_error(fast.flat[fast.n_actor:], start[fast.n_actor:]) > 1e-3
    assert fast.n_updates == readable.n_updates == 50


@pytest.mark.parametrize("n", [1, 20])
def test_written_out_policy_acts_bitwise_as_the_module(n: int) -> None:
    """FastAgent.policy skips the nn.Module calls; from the same weights (after updates, and
    after loading other weights in place) its actions are Agent.act's to the last bit."""
    fast = _fast(1, actor_fc1=64, actor_fc2=32)
    readable = Agent(33, 4, 0, buffer_size=1024, actor_fc1=64, actor_fc2=32)
    rng = np.random.default_rng(3)
    fast.learn_many(5)  # weights moved away from their initial values
    for _ in range(2):
        readable.actor_local.load_state_dict(fast.actor_local.state_dict())
        states = rng.standard_normal((n, 33)) * 3
        np.testing.assert_array_equal(fast.act(states, add_noise=False), readable.act(states, add_noise=False))
        np.testing.assert_array_equal(fast.act(states[0], add_noise=False), readable.act(states[0], add_noise=False))
        fast.actor_local.load_state_dict(Agent(33, 4, 7, actor_fc1=64, actor_fc2=32).actor_local.state_dict())
    assert fast.act(states).shape == (n, 4) and not np.array_equal(fast.act(states), fast.act(states))  # + noise


def test_training_steps_follow_the_readable_schedule() -> None:
    """step() stores, learns on the same schedule and draws the same batches: over a short
    stretch of steps both agents stay within float noise of each other."""
    fast = FastAgent(33, 4, 0, buffer_size=5000, batch_size=32, warmup=200, learn_every=5,
                     learn_updates=3)
    readable = Agent(33, 4, 0, buffer_size=5000, batch_size=32, warmup=200, learn_every=5,
                     learn_updates=3)
    rng = np.random.default_rng(0)
    for _ in range(40):
        s, ns, r = rng.standard_normal((10, 33)), rng.standard_normal((10, 33)), rng.uniform(0, 0.04, 10)
        actions = [agent.act(s) for agent in (fast, readable)]
        np.testing.assert_allclose(actions[0], actions[1], rtol=1e-4, atol=1e-5)
        for agent, a in zip((fast, readable), actions, strict=True):
            agent.step(s, a, r, ns)
    # The buffer holds 200 transitions from step 20 on: learning at steps 20, 25, ..., 40.
    assert fast.n_updates == readable.n_updates == 5 * 3
    # The same rows in the same places (the stored actions differ by float noise only).
    torch.testing.assert_close(fast.memory.data, readable.memory.data, rtol=1e-5, atol=1e-6)
    assert _relative_error(fast.flat, _readable_state(readable)["weights"]) < 1e-5


def _learner_state(agent: FastAgent) -> list[torch.Tensor]:
    """Everything an update changes: weights, targets, Adam moments, sampler state."""
    return [agent.flat, agent.target_flat, agent.optimizer.exp_avg, agent.optimizer.exp_avg_sq,
            agent.memory.generator.get_state()]


@pytest.mark.parametrize("options", [{}, {"weight_decay": 1e-4}, {"grad_clip": 0.0}])
def test_two_threads_are_bitwise_one_thread(options: dict) -> None:
    states = []
    for threads in (1, 2):
        agent = _fast(threads, batch_size=256, **options)
        agent.learn_many(150)  # the prefetching path
        for _ in range(5):
            agent.learn(agent.memory.sample())
        states.append(_learner_state(agent))
        assert agent.n_updates == 155
    for one, two in zip(*states, strict=True):
        assert torch.equal(one, two)


@pytest.mark.parametrize("threads", [1, 2])
def test_learn_many_is_learn_in_a_loop(threads: int) -> None:
    looped, batched = _fast(threads), _fast(threads)
    for _ in range(12):
        looped.learn(looped.memory.sample())
    batched.learn_many(12)
    for one, two in zip(_learner_state(looped), _learner_state(batched), strict=True):
        assert torch.equal(one, two)


def test_learner_error_leaves_weights_untouched_and_agent_usable() -> None:
    agents = [_fast(t) for t in (1, 2)]
    for agent in agents:
        agent.learn_many(3)
        before = [t.clone() for t in _learner_state(agent)[:4]]
        s, a, r, ns, disc = (t.clone() for t in agent.memory.sample())
        with pytest.raises(RuntimeError):  # next states of the wrong width (the helper's part)
            agent.learn((s, a, r, ns[:, :5], disc))
        with pytest.raises(RuntimeError):  # states of the wrong width (the caller's part)
            agent.learn((s[:, :5], a, r, ns, disc))
        for old, new in zip(before, _learner_state(agent)[:4], strict=True):
            assert torch.equal(old, new)
        agent.learn_many(4)
    for one, two in zip(*(_learner_state(agent) for agent in agents), strict=True):
        assert torch.equal(one, two)


def test_helper_thread_only_with_a_second_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ddpg_fast, "available_cpus", lambda: 2)
    assert FastAgent(33, 4, 0, buffer_size=100).two_threads
    assert not FastAgent(33, 4, 0, buffer_size=100, threads=1).two_threads
    monkeypatch.setattr(ddpg_fast, "available_cpus", lambda: 1)
    agent = fill(FastAgent(33, 4, 0, buffer_size=10_000, batch_size=64))
    assert not agent.two_threads
    agent.learn_many(2)
    assert agent._helper is None
    with pytest.raises(ValueError, match="threads must be 1 or 2"):
        FastAgent(33, 4, 0, buffer_size=100, threads=3)


@pytest.mark.timeout(60)  # a regression hangs
def test_update_after_an_interrupted_hand_over_does_not_hang() -> None:
    """Ctrl-C can land between handing a job over and the ``try`` that releases it, or
    between marking a job pending and handing it over; the next update must settle it."""
    agent = _fast(2)
    agent.learn_many(1)
    helper = agent._helper
    assert helper is not None
    reached = []

    def stuck_job() -> None:  # like the real job: waits for the caller's signal
        helper.to_helper.acquire()
        reached.append("released")
        raise RuntimeError("error of the aborted update")

    helper.submit(stuck_job)  # ... and the caller never gets to release it
    agent.learn_many(3)  # settles the stuck job (dropping its error), then learns
    assert reached == ["released"] and not helper.pending
    helper.pending = True  # marked, never handed over
    agent.learn_many(1)
    assert not helper.pending and agent.n_updates == 5
    reference = _fast(1)
    reference.learn_many(5)
    assert torch.equal(reference.flat, agent.flat)


def test_helper_thread_ends_with_its_agent() -> None:
    agent = _fast(2)
    agent.learn_many(1)
    assert agent._helper is not None
    thread = agent._helper._thread
    assert thread.is_alive()
    del agent
    gc.collect()
    thread.join(timeout=5)
    assert not thread.is_alive()


def test_flat_adam_matches_torch_adam() -> None:
    torch.manual_seed(0)
    params = torch.randn(1000)
    lr = torch.full((1000,), 2e-3)
    lr[:300] = 3e-3
    ref = [params[:300].clone().requires_grad_(True), params[300:].clone().requires_grad_(True)]
    opts = [torch.optim.Adam([ref[0]], lr=3e-3), torch.optim.Adam([ref[1]], lr=2e-3)]
    grad = torch.zeros(1000)
    flat = FlatAdam(params, grad, lr)
    for _ in range(20):
        grad.copy_(torch.randn(1000) * torch.rand(1000))
        ref[0].grad, ref[1].grad = grad[:300].clone(), grad[300:].clone()
        flat.step()
        for opt in opts:
            opt.step()
    torch.testing.assert_close(params, torch.cat([r.detach() for r in ref]), rtol=1e-6, atol=1e-7)
