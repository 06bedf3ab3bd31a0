"""The SB3 self-play VecEnv on the batched engine: pool opponents moved batched, the learner's own rewards."""

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported  # noqa: E402

from packetrow_train.policy_export import export_policy  # noqa: E402
from packetrow_env.scoring import final_rewards  # noqa: E402
from packetrow_env.vector.learner import random_legal  # noqa: E402
from packetrow_train.pool import OpponentPool  # noqa: E402
from packetrow_train.vec_selfplay import SelfPlayVecEnv  # noqa: E402
from tests.test_policy_versions import V1_MODEL  # noqa: E402


def make_env(mixture, num_envs=8, num_players=(2, 3, 4), reward_mode="rank", compiled=True):
    return SelfPlayVecEnv(num_envs, OpponentPool(mixture), num_players=list(num_players), reward_mode=reward_mode,
                          seed=0, compiled_opponents=compiled)


def play_randomly(env, steps: int) -> None:
    """Reset ``env`` and play ``steps`` random legal learner moves."""
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(steps):
        env.step_async(random_legal(env.action_masks(), rng))
        env.step_wait()


def test_episodes_pay_the_learner_his_own_reward():
    """Each finished episode's reward is the learner seat's final reward of its scores (R-SCORE-4)."""
    env = make_env({"random": 1.0, "heuristic": 0.3})
    env.reset()
    rng = np.random.default_rng(0)
    seen = 0
    for _ in range(300):
        env.step_async(random_legal(env.action_masks(), rng))
        obs, rewards, dones, infos = env.step_wait()
        for i in np.flatnonzero(dones):
            info = infos[i]
            assert rewards[i] == pytest.approx(final_rewards(info["scores"], "rank")[info["seat"]])
            assert info["episode"]["r"] == pytest.approx(rewards[i])
            assert len(info["opponents"]) == info["num_players"] - 1
            assert set(info["opponents"]) <= {"random", "heuristic"}
            assert info["terminal_observation"].shape == obs.shape[1:]
            seen += 1
    assert seen > 0


def test_maskable_ppo_trains_against_batched_snapshots():
    """MaskablePPO reads the masks and learns on the VecEnv; snapshot opponents play through one numpy forward."""
    env = make_env({"latest": 1.0, "random": 0.5}, num_envs=16, num_players=(2,))
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=128, n_epochs=1, seed=0,
                        policy_kwargs=dict(net_arch=[32, 32]))
    env.add_snapshot(export_policy(model, "tracked"), 0)
    assert is_masking_supported(env)
    env.reset()
    assert get_action_masks(env).shape == (16, env.action_space.n)
    model.learn(512)
    assert model.num_timesteps >= 512
    assert any(entry[0] == "snapshot" for entry in env.opponents.entries)


def test_games_of_a_player_count_draw_from_its_own_mixture():
    """pool.mixture_by_players: the 4-player games meet only heuristics, the 2-player ones only random players."""
    env = SelfPlayVecEnv(16, OpponentPool({"random": 1.0}, by_players={4: {"heuristic": 1.0}}),
                         num_players=[2, 4], seed=0)
    env.reset()
    rng = np.random.default_rng(0)
    met = set()
    for _ in range(400):
        env.step_async(random_legal(env.action_masks(), rng))
        _, _, dones, infos = env.step_wait()
        met |= {(infos[i]["num_players"], *sorted(set(infos[i]["opponents"]))) for i in np.flatnonzero(dones)}
    assert met == {(2, "random"), (4, "heuristic")}


def test_a_pool_of_snapshots_only_deals_after_the_first_snapshot():
    """Seeding deals nothing yet: a snapshots-only pool gets its first snapshot before the games are dealt."""
    env = make_env({"latest": 1.0}, num_envs=4, num_players=(2,))
    env.seed(1)
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=64, n_epochs=1, seed=0)
    env.add_snapshot(export_policy(model, "tracked"), 0)
    obs = env.reset()
    assert obs.shape == (4, env.observation_space.shape[0])
    assert all(entry[0] == "snapshot" for entry in env.opponents.entries)


def test_heuristic_opponents_move_by_one_compiled_call_per_group(monkeypatch):
    """Heuristic opponents (any threshold) are moved by packetrow_agents.heuristic_batch, one call per group and
    step, never game by game: each waiting game gets HeuristicAgent's action on its seat's view (or, at a tie,
    one of the agent's tied options)."""
    import packetrow_agents.heuristic_batch as heuristic_batch
    import packetrow_env.agent_protocol as agent_protocol
    from packetrow_agents.heuristic import TIE
    from packetrow_env.seat_view import SeatView
    from tests.test_heuristic_batch import RecordingHeuristic

    kernel = heuristic_batch.heuristic_actions
    agents = {}
    calls = []

    def checked(games, rows, mode, rng, threshold, masks):
        out = kernel(games, rows, mode, rng, threshold, masks)
        calls.append((len(rows), threshold))
        agent = agents.setdefault(threshold, RecordingHeuristic(threshold=threshold))
        for k, i in enumerate(rows.tolist()):
            game = games.game(i)
            agent.options = None
            action = agent.act(SeatView(game, game.current_player, mode))
            if agent.options is None:
                assert out[k] == action
            else:
                best = max(v for _, v in agent.options)
                assert out[k] in [a for a, v in agent.options if v >= best - TIE]
        return out

    monkeypatch.setattr(heuristic_batch, "heuristic_actions", checked)
    monkeypatch.setattr(agent_protocol, "SeatView", None)  # the one-game path (Turns.view) would fail
    env = make_env({"heuristic": 1.0, "heuristic:threshold=2": 1.0}, num_envs=8, num_players=(2, 3, 4, 5),
                   compiled=False)  # act()'s path (tests/test_opponents_batch.py: the compiled one)
    play_randomly(env, 60)
    assert {threshold for _, threshold in calls} == {0.0, 2.0}
    assert max(size for size, _ in calls) > 1  # groups of several games in one call


@pytest.mark.parametrize("path", ["stack", "per snapshot", "mixed"])
def test_snapshot_opponents_play_their_own_policys_actions(path, monkeypatch):
    """Every waiting snapshot opponent plays its own snapshot's move on its seat's observation: snapshots of one
    architecture through one PolicyStack call for all of them (few rows per snapshot), else (many rows per
    snapshot, or a shallower network among them) one numpy forward per snapshot."""
    import packetrow_agents.policy as policy_module
    import packetrow_agents.policy_batch as policy_batch
    from packetrow_agents.policy import NumpyPolicy, PolicyAgent
    from packetrow_env import actions
    from packetrow_env.compact_observation import encoder as compact_encoder
    from packetrow_train.vec_selfplay import PoolOpponents

    mixed = path == "mixed"
    monkeypatch.setattr(policy_module, "STACK_ROWS_PER_POLICY", 0 if path == "per snapshot" else 10 ** 6)
    stacked = []
    original = policy_batch.PolicyStack.actions
    monkeypatch.setattr(policy_batch.PolicyStack, "actions", lambda *a, **k: stacked.append(1) or original(*a, **k))

    shipped = PolicyAgent.load(V1_MODEL).policy  # a real export of env v1 (the agent shipped until env v2's)
    rng = np.random.default_rng(0)

    def perturbed(deeper: bool) -> NumpyPolicy:
        weights = [w + rng.normal(0, 0.05, w.shape) for w in shipped.weights[:2 if deeper else 1]]
        # today's 61 outputs on the v1 model's layers, which read the v1 vector (the v1 model has 60)
        return NumpyPolicy(weights, shipped.biases[:len(weights)],
                           rng.normal(0, 0.1, (weights[-1].shape[1], actions.NUM_ACTIONS)),
                           rng.normal(0, 0.1, actions.NUM_ACTIONS), embedding=shipped.embedding,
                           index_slices=shipped.index_slices)

    pool = OpponentPool({"uniform": 1.0}, deterministic=True)
    for step in range(4):
        pool.add(perturbed(deeper=not (mixed and step == 3)), step)
    opponents = PoolOpponents(pool, observation_encoding="compact", seed=0, compiled=False)
    from packetrow_env.vector.learner import LearnerGames
    games = LearnerGames(32, num_players=[3, 4], opponents=opponents, seed=1, observation_encoding="compact")
    vg = games.games
    for _ in range(5):  # move some learners and look at the opponents then waiting
        vg.step(random_legal(vg.legal_action_mask(), rng))
        waiting = np.flatnonzero((vg.current_player >= 0) & (vg.current_player != games.learner))
        if len(waiting):
            break
    assert len(waiting) > 5
    masks = vg.legal_action_mask()[waiting]
    # the snapshots' layers are the v1 model's: they read the v1 vector inside the batch's
    observations = compact_encoder().v1_observation(vg.observe("tracked", rows=waiting, encoding="compact"))
    got = opponents.moves(vg, waiting, masks)
    seats = vg.current_player[waiting]
    for k, (i, seat) in enumerate(zip(waiting.tolist(), seats.tolist())):
        policy = opponents.entries[opponents.assigned[i, seat]][2].policy
        assert got[k] == policy.action(observations[k], masks[k], deterministic=True)
    assert (policy_batch.stack_of(tuple(entry[2].policy for entry in opponents.entries)) is None) == mixed
    assert bool(stacked) == (path == "stack")


# --------------------------------------------------------------------------- the agents' batch protocol
class Lowest:
    """A new batched agent: the lowest legal action, in one call for all its games (only act_batch moves it)."""

    calls: list = []
    batches_together = False

    def __init__(self, seed: int = 0):
        self.name = "lowest"

    def reset(self, seed: int) -> None:
        """Nothing to reseed."""

    def act(self, view) -> int:
        raise AssertionError("a batched agent is moved by act_batch, not game by game")

    @classmethod
    def act_batch(cls, agents, turns) -> np.ndarray:
        assert (turns.games.current_player[turns.rows] == turns.seats).all()
        assert (turns.games.legal_action_mask()[turns.rows] == turns.masks).all()
        assert all(isinstance(agents[p], Lowest) for p in turns.player.tolist())
        cls.calls.append(len(turns))
        return turns.masks.argmax(axis=1)


def test_a_new_batched_agent_needs_no_edit_of_the_pool(monkeypatch):
    """PoolOpponents moves any agent class by its act_batch: registering the class is all it takes."""
    from packetrow_agents import registry

    monkeypatch.setitem(registry.AGENTS, "lowest", ("tests.test_vec_selfplay", "Lowest"))
    monkeypatch.setattr(Lowest, "calls", [])
    env = make_env({"lowest": 1.0, "random": 1.0}, num_envs=8, num_players=(2, 3, 4, 5))
    play_randomly(env, 40)
    assert max(Lowest.calls) > 1  # several games in one call
    assert {entry[1] for entry in env.opponents.entries} == {"lowest", "random"}


def test_each_class_moves_batched_by_the_forms_it_declares():
    """An agent moves batched by its own class's act_batch; a subclass, which may change the rules, and a class
    without act_batch (duck-typed or Agent's default) move game by game, and a subclass has no compiled form until it
    declares one (a heuristic subclass's batch is its own act's moves)."""
    from packetrow_agents import HeuristicAgent, PolicyAgent, RandomAgent, make_agent
    from packetrow_agents.base import Agent
    from packetrow_env.agent_protocol import act_each, batched_form, compiled_form
    from tests.test_heuristic_batch import RecordingHeuristic
    from tests.test_single_agent_env import RecordingAgent

    assert batched_form(RandomAgent()) == (RandomAgent.act_batch, False)
    assert batched_form(HeuristicAgent()) == (HeuristicAgent.act_batch, False)
    assert batched_form(PolicyAgent.load()) == (PolicyAgent.act_batch, True)
    assert batched_form(Lowest()) == (Lowest.act_batch, False)
    assert batched_form(type("Plain", (), {"act": lambda self, view: 0})()) == (act_each, False)
    for agent in (RecordingAgent(), make_agent("ismcts:iters=5"), RecordingHeuristic()):
        method, together = batched_form(agent)
        assert method.__func__ is Agent.__dict__["act_batch"].__func__ and not together
        assert compiled_form(agent, "tracked", "compact", 1) is None
    vg, turns = _turns(seed=2)
    agents = [RecordingHeuristic(seed=1), RecordingHeuristic(seed=2)]  # it changes no rule: compare with act
    expected = [agents[p].act(turns.view(k)) for k, p in enumerate(turns.player.tolist())]
    assert RecordingHeuristic.act_batch(agents, turns).tolist() == expected


def _turns(seed: int, player=None):
    from packetrow_agents.base import Turns
    from packetrow_env.vector import VectorGame

    rng = np.random.default_rng(seed)
    vg = VectorGame([2, 3, 4, 5] * 4, seeds=list(range(16)))
    for _ in range(rng.integers(3, 30)):
        vg.step(random_legal(vg.legal_action_mask(), rng))
    rows = np.flatnonzero(vg.current_player >= 0)
    player = np.arange(len(rows)) % 2 if player is None else player
    return vg, Turns(vg, rows, vg.current_player[rows], player, vg.legal_action_mask()[rows], "tracked", "compact",
                     np.random.default_rng(seed))


def test_policies_that_read_another_observation_move_game_by_game(monkeypatch):
    """PolicyAgent.act_batch batches the policies that read the batch's observations; one trained on another
    observation mode plays its own act on its seat's view; both play the moves they play alone."""
    import packetrow_agents.policy_batch as policy_batch
    from packetrow_agents.policy import NumpyPolicy, PolicyAgent

    stacked = []
    original = policy_batch.PolicyStack.actions
    monkeypatch.setattr(policy_batch.PolicyStack, "actions", lambda *a, **k: stacked.append(1) or original(*a, **k))

    shipped = PolicyAgent.load(V1_MODEL).policy
    # the env-v1 network with an output for 'more' (its 60 outputs of env v1 would move game by game)
    outputs = (np.pad(shipped.action_weight, ((0, 0), (0, 1))), np.append(shipped.action_bias, 0.0))
    current = NumpyPolicy(shipped.weights, shipped.biases, *outputs, embedding=shipped.embedding,
                          index_slices=shipped.index_slices)
    full = NumpyPolicy(shipped.weights, shipped.biases, *outputs, observation_mode="table", embedding=shipped.embedding,
                       index_slices=shipped.index_slices)
    agents = [PolicyAgent(policy=current), PolicyAgent(policy=full)]
    vg, turns = _turns(seed=4)
    monkeypatch.setattr(agents[0], "act", None)  # the agent reading the batch's observations is not asked alone
    got = PolicyAgent.act_batch(agents, turns)
    monkeypatch.undo()
    assert stacked == [1]
    assert got.tolist() == [agents[p].act(turns.view(k)) for k, p in enumerate(turns.player.tolist())]
    assert turns.masks[np.arange(len(got)), got].all()
