"""Tests of the replay buffer, noise, networks, learning step and checkpoints."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import torch
from torch import nn

from ddpg_agent import Agent, DDPGConfig, OUNoise, ReplayBuffer, load_checkpoints, save_checkpoints
from model import Actor, Critic
from tests._agent_helpers import filled_agent


def _transitions(n: int, start: int = 0) -> tuple[np.ndarray, ...]:
    """n transitions whose states carry their index in every column (to identify rows)."""
    idx = np.arange(start, start + n, dtype=np.float64)
    states = np.repeat(idx[:, None], 33, axis=1)
    actions = np.full((n, 4), 0.5)
    rewards = idx * 0.001
    next_states = states + 0.5
    return states, actions, rewards, next_states, np.full(n, 0.99)


# --------------------------------------------------------------------------- buffer
def test_buffer_adds_all_agents_at_once_with_shapes() -> None:
    buf = ReplayBuffer(33, 4, buffer_size=50, batch_size=8, seed=0)
    buf.add(*_transitions(20))
    assert len(buf) == 20
    assert buf.data.shape == (50, 33 + 4 + 1 + 33 + 1)
    np.testing.assert_allclose(buf.data[:20, 0].numpy(), np.arange(20))
    s, a, r, ns, d = buf.sample()
    assert s.shape == (8, 33) and a.shape == (8, 4) and r.shape == (8, 1)
    assert ns.shape == (8, 33) and d.shape == (8, 1)
    assert s.dtype == torch.float32
    # Each sampled row stays consistent across its fields.
    torch.testing.assert_close(ns, s + 0.5)
    torch.testing.assert_close(r[:, 0], s[:, 0] * 0.001)
    torch.testing.assert_close(d, torch.full((8, 1), 0.99))


def test_buffer_wraps_around() -> None:
    buf = ReplayBuffer(33, 4, buffer_size=50, batch_size=8, seed=0)
    for k in range(3):
        buf.add(*_transitions(20, start=100 * k))
    assert len(buf) == 50 and buf.pos == 10
    first_col = buf.data[:, 0].numpy()
    # Third batch (200..219): 200..209 went to rows 40..49, 210..219 wrapped to rows 0..9.
    np.testing.assert_allclose(first_col[40:50], np.arange(200, 210))
    np.testing.assert_allclose(first_col[0:10], np.arange(210, 220))
    np.testing.assert_allclose(first_col[10:20], np.arange(10, 20))  # oldest survivors
    np.testing.assert_allclose(first_col[20:40], np.arange(100, 120))


def test_buffer_sampling_covers_the_buffer() -> None:
    buf = ReplayBuffer(33, 4, buffer_size=64, batch_size=32, seed=1)
    buf.add(*_transitions(64))
    seen = set()
    for _ in range(50):
        seen.update(buf.sample()[0][:, 0].int().tolist())
    assert seen == set(range(64))


def test_buffer_samples_only_filled_rows() -> None:
    buf = ReplayBuffer(33, 4, buffer_size=1000, batch_size=256, seed=0)
    buf.add(*_transitions(5))
    values = buf.sample()[0][:, 0]
    assert values.max().item() <= 4


# ---------------------------------------------------------------------------- noise
@pytest.mark.parametrize("kind", ["ou", "gaussian"])
def test_noise_is_zero_mean(kind: str) -> None:
    noise = OUNoise(4, seed=0, sigma=0.2, kind=kind)
    samples = np.stack([noise.sample(20) for _ in range(5000)])
    assert samples.shape == (5000, 20, 4)
    assert abs(samples.mean()) < 0.01
    assert samples.std() > 0.05


def test_noise_decays_to_its_floor() -> None:
    noise = OUNoise(4, seed=0, sigma=0.2, decay=0.5, scale_min=0.1, kind="gaussian")
    before = np.std([noise.sample(20) for _ in range(200)])
    noise.reset()
    assert noise.scale == pytest.approx(0.5)
    after = np.std([noise.sample(20) for _ in range(200)])
    assert after == pytest.approx(before * 0.5, rel=0.1)
    for _ in range(10):
        noise.reset()
    assert noise.scale == pytest.approx(0.1)


# ------------------------------------------------------------------------- networks
def test_default_agent_builds_default_architecture() -> None:
    agent = Agent(state_size=33, action_size=4, random_seed=0)
    cfg = DDPGConfig()
    assert agent.actor_local.fc1.out_features == cfg.actor_fc1
    assert agent.actor_local.fc2.out_features == cfg.actor_fc2
    assert agent.critic_local.fcs1.out_features == cfg.critic_fc1
    assert agent.critic_local.fc2.out_features == cfg.critic_fc2
    assert isinstance(agent.actor_target, Actor) and isinstance(agent.critic_target, Critic)


def test_paper_initialisation_ranges() -> None:
    actor = Actor(33, 4, seed=0, fc1_units=64, fc2_units=32)
    assert actor.fc1.weight.abs().max() <= 1 / np.sqrt(33)
    assert actor.fc2.weight.abs().max() <= 1 / np.sqrt(64)
    assert actor.fc3.weight.abs().max() <= 3e-3
    critic = Critic(33, 4, seed=0, fcs1_units=64, fc2_units=32)
    assert critic.fc2.in_features == 68
    assert critic.fc3.weight.abs().max() <= 3e-3


def test_config_round_trip_and_unknown_key() -> None:
    cfg = DDPGConfig(lr_actor=2e-3, n_step=3)
    assert DDPGConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match=r"unknown config key.*'nope'"):
        DDPGConfig.from_dict({"nope": 1})
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        DDPGConfig(batch_size=0)
    with pytest.raises(ValueError, match="learner_threads must be 1 or 2"):
        DDPGConfig(learner_threads=3)


# ---------------------------------------------------------------------------- act
def test_act_shapes_and_bounds() -> None:
    agent = Agent(33, 4, 0, buffer_size=100, noise_sigma=5.0)
    states = np.random.default_rng(0).standard_normal((20, 33)) * 10
    clean = agent.act(states, add_noise=False)
    assert clean.shape == (20, 4)
    assert np.all(np.abs(clean) <= 1.0)
    np.testing.assert_array_equal(clean, agent.act(states, add_noise=False))
    noisy = agent.act(states, add_noise=True)
    assert noisy.shape == (20, 4)
    assert np.all(np.abs(noisy) <= 1.0)
    assert not np.allclose(noisy, clean)
    assert np.isclose(np.abs(noisy), 1.0).any()  # huge noise is clipped, not wrapped
    assert agent.act(states[0], add_noise=False).shape == (4,)


# ------------------------------------------------------------------------ learning
def test_soft_update_formula() -> None:
    local, target = nn.Linear(3, 2), nn.Linear(3, 2)
    before = [p.detach().clone() for p in target.parameters()]
    Agent.soft_update(local, target, 0.1)
    for t, b, lp in zip(target.parameters(), before, local.parameters(), strict=True):
        torch.testing.assert_close(t, 0.1 * lp + 0.9 * b)


def test_learn_soft_updates_the_agents_targets() -> None:
    agent = filled_agent(tau=0.05)
    old_target = [p.detach().clone() for p in agent.critic_target.parameters()]
    agent.learn()
    for t, old, lp in zip(agent.critic_target.parameters(), old_target,
                          agent.critic_local.parameters(), strict=True):
        torch.testing.assert_close(t, 0.05 * lp + 0.95 * old)


@pytest.mark.parametrize("options", [{}, {"target_noise": 0.2, "obs_norm": True},
                                     {"policy_delay": 2}])
def test_manual_gradients_equal_autograd(options: dict) -> None:
    grads = []
    for learner in ("manual", "autograd"):
        agent = filled_agent(learner=learner, **options)
        if options.get("obs_norm"):
            agent.set_obs_normalisation()
        agent.n_updates = 1  # with policy_delay 2 this is a critic-only update
        torch.manual_seed(1)
        with torch.no_grad():  # move targets away from locals so all terms matter
            agent._target_flat.add_(0.05 * torch.randn_like(agent._target_flat))
        batch = [t.clone() for t in agent.memory.sample()]
        agent._update_actor = agent.n_updates % agent.config.policy_delay == 0
        getattr(agent, f"_gradients_{learner}")(*batch)
        grads.append(agent._grad.clone())
    if options.get("policy_delay"):
        assert grads[0][: agent._actor_grad.numel()].abs().sum() == 0
    torch.testing.assert_close(grads[0], grads[1], rtol=1e-4, atol=1e-6)
    assert grads[0].abs().sum() > 0


def _threaded_agent(threads: int, **options: object) -> Agent:
    """A filled agent whose updates run on ``threads`` threads, even on a one-CPU machine
    (where the agent itself would choose one thread for speed)."""
    agent = filled_agent(learner_threads=threads, **options)
    agent._two_threads = threads == 2
    return agent


def _learner_state(agent: Agent) -> list[torch.Tensor]:
    """Everything an update changes: weights, targets, Adam moments, sampler state."""
    opt = agent.optimizer if agent.config.policy_delay == 1 else agent.optimizer_critic
    return [agent._local_flat, agent._target_flat, opt.exp_avg, opt.exp_avg_sq,
            agent.memory.generator.get_state(), agent.last_critic_loss]


@pytest.mark.parametrize("options", [{}, {"target_noise": 0.2, "obs_norm": True},
                                     {"policy_delay": 2}, {"weight_decay": 1e-4}])
def test_two_thread_learner_is_bitwise_the_one_thread_learner(options: dict) -> None:
    states = []
    for threads in (1, 2):
        agent = _threaded_agent(threads, batch_size=256, **options)
        if options.get("obs_norm"):
            agent.set_obs_normalisation()
        agent.learn_many(150)  # prefetching path
        for _ in range(5):
            agent.learn()
        agent.learn(tuple(t.clone() for t in agent.memory.sample()))
        states.append(_learner_state(agent))
        assert agent.n_updates == 156
    for one, two in zip(*states, strict=True):
        assert torch.equal(one, two)


@pytest.mark.parametrize("threads", [1, 2])
def test_learn_many_is_learn_in_a_loop(threads: int) -> None:
    looped, batched = _threaded_agent(threads), _threaded_agent(threads)
    for _ in range(12):
        looped.learn()
    batched.learn_many(12)
    for one, two in zip(_learner_state(looped), _learner_state(batched), strict=True):
        assert torch.equal(one, two)


def test_learner_error_leaves_weights_untouched_and_agent_usable() -> None:
    agents = [_threaded_agent(t) for t in (1, 2)]
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
    import ddpg_agent

    monkeypatch.setattr(ddpg_agent, "_available_cpus", lambda: 2)
    assert Agent(33, 4, 0, buffer_size=100)._two_threads
    assert not Agent(33, 4, 0, buffer_size=100, learner_threads=1)._two_threads
    assert not Agent(33, 4, 0, buffer_size=100, learner="autograd")._two_threads
    monkeypatch.setattr(ddpg_agent, "_available_cpus", lambda: 1)
    agent = filled_agent()
    assert not agent._two_threads
    agent.learn()
    assert agent._helper is None


@pytest.mark.timeout(60)  # a regression hangs
def test_update_after_an_interrupted_hand_over_does_not_hang() -> None:
    """Ctrl-C can land between handing a job over and the ``try`` that releases it, or
    between marking a job pending and handing it over; the next update must settle it."""
    agent = _threaded_agent(2)
    agent.learn()
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
    agent.learn()
    assert not helper.pending and agent.n_updates == 5
    reference = _threaded_agent(1)
    for _ in range(5):
        reference.learn()
    assert torch.equal(reference._local_flat, agent._local_flat)


def test_helper_thread_ends_with_its_agent() -> None:
    agent = _threaded_agent(2)
    agent.learn()
    assert agent._helper is not None
    thread = agent._helper._thread
    assert thread.is_alive()
    del agent
    gc.collect()
    thread.join(timeout=5)
    assert not thread.is_alive()


def test_adam_matches_torch_adam() -> None:
    agent = filled_agent(lr_actor=3e-3, lr_critic=2e-3, grad_clip=0.0)
    ref_actor = [p.detach().clone().requires_grad_(True) for p in agent.actor_local.parameters()]
    ref_critic = [p.detach().clone().requires_grad_(True) for p in agent.critic_local.parameters()]
    opts = [torch.optim.Adam(ref_actor, lr=3e-3), torch.optim.Adam(ref_critic, lr=2e-3)]
    for _ in range(3):
        agent._grad.copy_(torch.randn_like(agent._grad))
        flat_refs = ref_actor + ref_critic
        offset = 0
        for p in flat_refs:
            p.grad = agent._grad[offset:offset + p.numel()].view_as(p).clone()
            offset += p.numel()
        agent.optimizer.step()
        for opt in opts:
            opt.step()
    for p, ref in zip(list(agent.actor_local.parameters()) + list(agent.critic_local.parameters()),
                      ref_actor + ref_critic, strict=True):
        torch.testing.assert_close(p.detach(), ref.detach(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("learner", ["manual", "autograd"])
def test_one_learning_step_lowers_critic_loss(learner: str) -> None:
    agent = filled_agent(learner=learner, lr_critic=1e-3)
    s, a, r, ns, d = (t.clone() for t in agent.memory.sample())
    with torch.no_grad():
        y = r + d * agent.critic_target(ns, agent.actor_target(ns))

    def loss() -> float:
        with torch.no_grad():
            return float(((agent.critic_local(s, a) - y) ** 2).mean())

    before = loss()
    agent.learn((s, a, r, ns, d))
    assert loss() < before


def test_policy_delay_moves_actor_every_other_update() -> None:
    agent = filled_agent(policy_delay=2)
    actor0 = agent.actor_local.fc1.weight.detach().clone()
    critic0 = agent.critic_local.fc2.weight.detach().clone()
    agent.learn()  # update 0: actor and critic
    actor1 = agent.actor_local.fc1.weight.detach().clone()
    agent.learn()  # update 1: critic only
    assert not torch.equal(actor0, actor1)
    torch.testing.assert_close(agent.actor_local.fc1.weight.detach(), actor1, rtol=0, atol=0)
    assert not torch.equal(critic0, agent.critic_local.fc2.weight.detach())


def test_obs_normalisation_is_set_from_buffer_and_saved(tmp_path) -> None:
    agent = filled_agent(obs_norm=True)
    agent.set_obs_normalisation()
    states = agent.memory.data[: len(agent.memory), :33]
    normed = agent.actor_local.obs_scale * states + agent.actor_local.obs_bias
    assert normed.mean(0).abs().max() < 1e-3 and (normed.std(0) - 1).abs().max() < 1e-2
    torch.testing.assert_close(agent.critic_target.obs_scale, agent.actor_local.obs_scale)
    save_checkpoints(agent, tmp_path / "a.pth", tmp_path / "c.pth")
    fresh = load_checkpoints(Agent(33, 4, 0), tmp_path / "a.pth", tmp_path / "c.pth")
    torch.testing.assert_close(fresh.actor_target.obs_bias, agent.actor_local.obs_bias)
    x = np.random.default_rng(0).standard_normal((3, 33))
    np.testing.assert_allclose(fresh.act(x, add_noise=False), agent.act(x, add_noise=False),
                               rtol=1e-5, atol=1e-6)


def test_step_follows_learning_schedule() -> None:
    agent = Agent(33, 4, 0, buffer_size=1000, batch_size=16, warmup=40, learn_every=5,
                  learn_updates=3)
    rng = np.random.default_rng(0)
    for _ in range(10):
        s = rng.standard_normal((4, 33))
        agent.step(s, rng.uniform(-1, 1, (4, 4)), [0.0] * 4, s, [False] * 4)
    # 40 transitions are reached at step 10; learning happens at steps 5 and 10 only if
    # the buffer holds >= 40, so only step 10 learns.
    assert agent.n_updates == 3


def test_fewer_updates_once_the_last_episode_scored_well() -> None:
    agent = Agent(33, 4, 0, buffer_size=1000, batch_size=16, warmup=4, learn_every=1,
                  learn_updates=3, good_score=0.5, learn_updates_good=1)
    rng = np.random.default_rng(0)

    def episode(reward: float) -> int:
        agent.reset()
        before = agent.n_updates
        for _ in range(5):
            s = rng.standard_normal((4, 33))
            agent.step(s, rng.uniform(-1, 1, (4, 4)), [reward] * 4, s, [False] * 4)
        return agent.n_updates - before

    assert episode(0.2) == 3 * 5  # return 1.0 per agent, but no finished episode yet
    assert episode(0.01) == 1 * 5  # the previous episode scored 1.0 >= 0.5
    assert agent.last_episode_score == pytest.approx(1.0)
    assert episode(0.0) == 3 * 5  # the previous one scored 0.05
    agent.reset()
    assert agent.last_episode_score == 0.0


def _stored_discounts(agent: Agent) -> np.ndarray:
    return agent.memory.data[: len(agent.memory), -1].numpy()


def test_time_limit_done_bootstraps_but_terminal_does_not() -> None:
    rng = np.random.default_rng(0)
    s = rng.standard_normal((3, 33))
    a = rng.uniform(-1, 1, (3, 4))
    boot = Agent(33, 4, 0, buffer_size=100, gamma=0.9)
    boot.step(s, a, [0.1] * 3, s, [True] * 3)
    np.testing.assert_allclose(_stored_discounts(boot), 0.9, rtol=1e-6)
    term = Agent(33, 4, 0, buffer_size=100, gamma=0.9, bootstrap_on_done=False)
    term.step(s, a, [0.1] * 3, s, [True] * 3)
    np.testing.assert_allclose(_stored_discounts(term), 0.0)


def test_n_step_returns_and_flush_at_episode_end() -> None:
    agent = Agent(33, 4, 0, buffer_size=100, gamma=0.5, n_step=3, learn_updates=0)
    states = [np.full((2, 33), float(t)) for t in range(6)]
    a = np.zeros((2, 4))
    rewards = [1.0, 2.0, 4.0, 8.0, 16.0]
    for t in range(5):
        agent.step(states[t], a, [rewards[t]] * 2, states[t + 1], [t == 4] * 2)
    data = agent.memory.data[: len(agent.memory)].numpy()
    # Per start time: 3-step returns while possible, then shorter ones cut by the done.
    expected = {0: (1 + 0.5 * 2 + 0.25 * 4, 0.125, 3.0), 1: (2 + 0.5 * 4 + 0.25 * 8, 0.125, 4.0),
                2: (4 + 0.5 * 8 + 0.25 * 16, 0.125, 5.0), 3: (8 + 0.5 * 16, 0.25, 5.0),
                4: (16.0, 0.5, 5.0)}
    assert len(data) == 10
    for row in data:
        ret, disc, nxt = expected[int(row[0])]
        assert row[37] == pytest.approx(ret)
        assert row[-1] == pytest.approx(disc)
        assert row[38] == pytest.approx(nxt)


# ---------------------------------------------------------------------- checkpoints
def test_checkpoints_round_trip_into_fresh_agent(tmp_path) -> None:
    agent = filled_agent(seed=3)
    for _ in range(3):
        agent.learn()
    actor_path, critic_path = tmp_path / "checkpoint_actor.pth", tmp_path / "checkpoint_critic.pth"
    save_checkpoints(agent, actor_path, critic_path)
    fresh = Agent(state_size=33, action_size=4, random_seed=0)
    fresh.actor_local.load_state_dict(torch.load(actor_path, weights_only=True))
    fresh.critic_local.load_state_dict(torch.load(critic_path, weights_only=True))
    states = np.random.default_rng(0).standard_normal((5, 33))
    np.testing.assert_array_equal(fresh.act(states, add_noise=False),
                                  agent.act(states, add_noise=False))
    other = load_checkpoints(Agent(33, 4, 1), actor_path, critic_path)
    torch.testing.assert_close(other.actor_target.fc1.weight, agent.actor_local.fc1.weight)
    # Loaded weights live in the agent's flat storage, so training continues from them.
    other.memory = agent.memory
    other.learn()


def test_missing_and_corrupt_checkpoints_give_clear_errors(tmp_path) -> None:
    agent = Agent(33, 4, 0, buffer_size=100)
    with pytest.raises(FileNotFoundError, match=r"checkpoint not found: .*nothing\.pth"):
        load_checkpoints(agent, tmp_path / "nothing.pth")
    bad = tmp_path / "bad.pth"
    bad.write_bytes(b"this is not a torch file")
    with pytest.raises(ValueError, match=r"cannot read checkpoint .*bad\.pth"):
        load_checkpoints(agent, bad)
    wrong = tmp_path / "wrong.pth"
    torch.save(Actor(33, 4, 0, fc1_units=64).state_dict(), wrong)
    with pytest.raises(ValueError, match="does not match the network architecture"):
        load_checkpoints(agent, wrong)
