"""The numpy policy in both observation encodings: onehot (observation.Encoder) and compact (an embedding of the
supply slots' card types, as train/compact_extractor.py), its export from SB3, its .npz format and its games."""

from __future__ import annotations

import json

import numpy as np
import pytest

from packetrow_agents.policy import ModelFormatError, NumpyPolicy, PolicyAgent, load_policy
from packetrow_env import actions
from packetrow_env.compact_observation import NUM_SLOTS, encoder as compact_encoder
from packetrow_env.engine import Game
from packetrow_env.observation import encoder
from packetrow_env.seat_view import SeatView
from tests.positions import random_play

COMPACT, ONEHOT = compact_encoder(), encoder()


def encode(encoding: str, game, seat: int, mode: str = "tracked") -> np.ndarray:
    """The seat's observation in an encoding."""
    return (COMPACT if encoding == "compact" else ONEHOT).encode(game, seat, mode)


def size_of(encoding: str, mode: str = "tracked") -> int:
    return COMPACT.size_of(mode) if encoding == "compact" else ONEHOT.size


def random_policy(encoding: str, seed: int = 0, hidden=(16,), dim: int = 4) -> NumpyPolicy:
    """A NumpyPolicy with random weights reading the tracked observation in ``encoding``."""
    rng = np.random.default_rng(seed)
    stage = {}
    features = size_of(encoding)
    if encoding == "compact":
        stage = {"embedding": rng.normal(size=(COMPACT.num_types + 1, dim)), "index_slices": [[0, NUM_SLOTS]]}
        features += NUM_SLOTS * (dim - 1)
    sizes = (features, *hidden)
    weights = [rng.normal(size=(a, b)) / np.sqrt(a) for a, b in zip(sizes, sizes[1:])]
    return NumpyPolicy(weights, [rng.normal(size=w.shape[1]) for w in weights],
                       rng.normal(size=(sizes[-1], actions.NUM_ACTIONS)), rng.normal(size=actions.NUM_ACTIONS),
                       **stage)


def positions(encoding: str, count: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """Observations (of the acting seat) and masks of random positions of 2-5 player games."""
    games = running_games(count)
    return (np.stack([encode(encoding, g, g.current_player) for g in games]),
            np.stack([g.legal_action_mask() for g in games]))


def running_games(count: int) -> list:
    """``count`` games of 2-5 players after some random moves, none over."""
    games = [random_play(Game.new(2 + s % 4, seed=s), 9 * s % 140, s) for s in range(3 * count)]
    return [g for g in games if not g.is_over][:count]


# --------------------------------------------------------------------------- the input stage
def test_compact_logits_embed_the_index_floats_then_read_the_rest():
    policy = random_policy("compact", hidden=())
    obs, _ = positions("compact")
    assert policy.observation_encoding == "compact" and policy.observation_size == COMPACT.size_of("tracked")
    features = np.concatenate([policy.embedding[obs[:, :NUM_SLOTS].astype(int)].reshape(len(obs), -1),
                               obs[:, NUM_SLOTS:]], axis=1)
    np.testing.assert_allclose(policy.logits(obs), features @ policy.action_weight + policy.action_bias,
                               rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(policy.logits(obs[3]), policy.logits(obs)[3], rtol=1e-5, atol=1e-6)
    nudged = obs.copy()
    nudged[:, :NUM_SLOTS] += np.float32(0.3)  # index floats are rounded, as CompactExtractor does
    np.testing.assert_array_equal(policy.logits(nudged), policy.logits(obs))


def test_index_slices_anywhere_embed_in_order():
    embedding = np.arange(12, dtype=np.float32).reshape(6, 2)  # 5 types + empty, dim 2
    policy = NumpyPolicy([], [], np.eye(9, dtype=np.float32), np.zeros(9), embedding=embedding,
                         index_slices=[[1, 2], [3, 5]])
    assert policy.observation_size == 6
    features = policy.logits(np.array([0.5, 2.0, 0.25, 9.0, 0.0, 7.0]))  # 9 is clipped to the last type, 5
    np.testing.assert_array_equal(features, [4, 5, 10, 11, 0, 1, 0.5, 0.25, 7.0])


@pytest.mark.parametrize("stage, message", [
    ({"embedding": np.zeros((5, 2))}, "needs both its embedding and its index slices"),
    ({"embedding": np.zeros(5), "index_slices": [[0, 2]]}, "embedding must be a float matrix"),
    ({"embedding": np.zeros((5, 2), int), "index_slices": [[0, 2]]}, "embedding must be a float matrix"),
    ({"embedding": np.zeros((5, 2)), "index_slices": [0, 2]}, r"shape \(k, 2\)"),
    ({"embedding": np.zeros((5, 2)), "index_slices": [[0.0, 2.0]]}, "integer pairs"),
    ({"embedding": np.zeros((5, 2)), "index_slices": [[2, 4], [0, 1]]}, "ascending, non-overlapping"),
    ({"embedding": np.zeros((5, 2)), "index_slices": [[0, 8]]}, "need more than the network's 10 input features"),
    ({"embedding": np.zeros((5, 2)), "index_slices": [[7, 9]]}, "reach past the 8 observation floats"),
])
def test_bad_input_stages_are_refused(stage, message):
    with pytest.raises(ModelFormatError, match=message):
        NumpyPolicy([], [], np.zeros((10, 3)), np.zeros(3), **stage)


# --------------------------------------------------------------------------- the .npz format
@pytest.mark.parametrize("encoding", ["onehot", "compact"])
def test_save_and_load_keep_the_encoding(encoding, tmp_path):
    policy = random_policy(encoding, hidden=(8, 8))
    policy.metadata["num_timesteps"] = 7
    path = policy.save(tmp_path / "p.npz")
    with np.load(path, allow_pickle=False) as data:
        meta, files = json.loads(str(data["meta"])), set(data.files)
    assert meta["format_version"] == (2 if encoding == "compact" else 1)  # onehot files stay format 1
    assert meta["observation_encoding"] == encoding
    assert ({"embedding", "index_slices"} <= files) == (encoding == "compact")
    loaded = load_policy(path)
    assert loaded.observation_encoding == encoding and loaded.observation_size == size_of(encoding)
    assert loaded.metadata == {"num_timesteps": 7}
    obs, _ = positions(encoding, 4)
    np.testing.assert_array_equal(loaded.logits(obs), policy.logits(obs))


def test_format_1_files_without_an_encoding_load_as_onehot(tmp_path):
    """A format-1 file written before observation_encoding existed (as the rules-v0 shipped model was)."""
    path = random_policy("onehot").save(tmp_path / "old.npz")
    rewrite(path, lambda arrays, meta: (meta.pop("observation_encoding", None), meta.update(format_version=1)))
    policy = load_policy(path)
    assert policy.observation_encoding == "onehot" and "observation_encoding" not in policy.metadata
    assert policy.observation_size == (policy.weights[0] if policy.weights else policy.action_weight).shape[0]


def rewrite(path, change) -> None:
    """Rewrite a saved policy's arrays (and its metadata, as a dict) with ``change(arrays, meta)``."""
    with np.load(path, allow_pickle=False) as data:
        arrays = {key: data[key] for key in data.files}
    meta = json.loads(str(arrays.pop("meta")))
    change(arrays, meta)
    arrays["meta"] = np.array(json.dumps(meta))
    with open(path, "wb") as f:
        np.savez(f, **arrays)


@pytest.mark.parametrize("change, message", [
    (lambda a, m: a.pop("index_slices"), r"do not match 1 hidden layers and the compact encoding"),
    (lambda a, m: a.pop("embedding"), r"do not match 1 hidden layers and the compact encoding"),
    (lambda a, m: m.update(format_version=1), "a compact policy needs format 2"),
    (lambda a, m: m.update(format_version=3), "policy format 3, this code reads formats 1 to 2"),
    (lambda a, m: m.update(observation_encoding="sparse"), "unknown observation_encoding 'sparse'"),
    (lambda a, m: m.update(observation_encoding="onehot"), r"do not match 1 hidden layers and the onehot encoding"),
    (lambda a, m: a.update(embedding=np.tile(a["embedding"], 40)), "need more than the network's"),
    (lambda a, m: a.update(index_slices=np.array([[0, 24], [COMPACT.size - 4, COMPACT.size - 2]])),
         r"reach past the \d+ observation floats"),
    (lambda a, m: a.update(embedding=a["embedding"][0]), "embedding must be a float matrix"),
    (lambda a, m: a.update(index_slices=np.array([[0, 24, 1]])), r"shape \(k, 2\)"),
    (lambda a, m: a.update(index_slices=np.array([[0.0, 24.0]])), "integer pairs"),
    (lambda a, m: a.update(index_slices=np.array([[0, 2**64 - 1]], np.uint64)), "ascending, non-overlapping"),
    (lambda a, m: a.update(index_slices=np.array([[0, 23]])), "contradict the metadata"),
    (lambda a, m: a.update(embedding=a["embedding"][:, :2]), "contradict the metadata"),
])
def test_bad_compact_files_are_refused(change, message, tmp_path):
    path = random_policy("compact").save(tmp_path / "p.npz")
    rewrite(path, change)
    with pytest.raises(ModelFormatError, match=message):
        load_policy(path)


# --------------------------------------------------------------------------- playing
@pytest.mark.parametrize("encoding", ["onehot", "compact"])
@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
def test_policy_agents_play_full_games(encoding, num_players):
    """Every seat a policy agent of the encoding (argmax and sampling) plays legal moves to the game's end."""
    agents = [PolicyAgent(policy=random_policy(encoding, seed=s), deterministic=s % 2 == 0, seed=s)
              for s in range(num_players)]
    game = Game.new(num_players, seed=num_players)
    moves = 0
    while not game.is_over:
        seat = game.current_player
        view = SeatView(game, seat)
        action = agents[seat].act(view)
        assert game.legal_action_mask()[action]
        if agents[seat].deterministic:  # argmax of the seat's own vector in the policy's encoding
            logits = agents[seat].policy.logits(encode(encoding, game, seat))
            assert action == int(np.argmax(np.where(game.legal_action_mask(), logits, -np.inf)))
        game.step(action)
        moves += 1
    assert moves > 20 and agents[0].observation_encoding == encoding


def test_a_compact_agent_reads_the_vector_of_a_view_without_a_game():
    policy = random_policy("compact", seed=3)
    obs, masks = positions("compact", 6)
    agent = PolicyAgent(policy=policy)
    assert [agent.act(SeatView.of_observation(o, m)) for o, m in zip(obs, masks)] == \
        [int(np.argmax(np.where(m, policy.logits(o), -np.inf))) for o, m in zip(obs, masks)]
    onehot, _ = positions("onehot", 1)
    with pytest.raises(ModelFormatError, match=f"observation has {ONEHOT.size} floats but the model reads"):
        agent.act(SeatView.of_observation(onehot[0], masks[0]))


# --------------------------------------------------------------------------- export from SB3
@pytest.mark.parametrize("encoding, first, share", [("onehot", 0, True), ("compact", 0, True), ("compact", 24, True),
                                                     ("compact", 24, False)])
def test_export_matches_the_torch_policy_on_real_observations(encoding, first, share, tmp_path):
    """The numpy logits and probabilities equal MaskablePPO's (after an update) on real positions of 2-5 players,
    also with the compact extractor's first layer (ppo.extractor_layer), shared by both networks or one each."""
    torch = pytest.importorskip("torch")
    gym = pytest.importorskip("gymnasium")
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from packetrow_train.policy_export import export_policy, export_value, import_policy
    from packetrow_train.compact_extractor import compact_policy_kwargs

    class AllSeats(gym.Env):
        """Random 2-5 player games where the learner moves for every seat (enough to update a policy)."""

        observation_space = gym.spaces.Box(0.0, float(max(COMPACT.high, ONEHOT.high)), (size_of(encoding),),
                                           np.float32)
        action_space = gym.spaces.Discrete(actions.NUM_ACTIONS)

        def reset(self, seed=None, options=None):
            super().reset(seed=seed)
            self.game = Game.new(int(self.np_random.integers(2, 6)), seed=int(self.np_random.integers(2**31)))
            return encode(encoding, self.game, self.game.current_player), {}

        def step(self, action):
            self.game.step(int(action))
            if self.game.is_over:
                return np.zeros(size_of(encoding), np.float32), 1.0, True, False, {}
            return encode(encoding, self.game, self.game.current_player), 0.0, False, False, {}

        def action_masks(self):
            return self.game.legal_action_mask()

    kwargs = {"net_arch": [32, 16]}
    if encoding == "compact":
        kwargs = compact_policy_kwargs(embed_dim=4, hidden=first, share_features_extractor=share, **kwargs)
    model = MaskablePPO("MlpPolicy", AllSeats(), n_steps=64, batch_size=64, n_epochs=1, learning_rate=0.01, seed=0,
                        device="cpu", policy_kwargs=kwargs)
    model.learn(64)
    policy = load_policy(export_policy(model, "tracked", {"observation_encoding": encoding}).save(tmp_path / "p.npz"))
    assert policy.observation_encoding == encoding and policy.observation_size == size_of(encoding)
    assert [w.shape[1] for w in policy.weights] == [first] * bool(first) + [32, 16]
    assert policy.metadata["num_timesteps"] == 64
    obs, masks = positions(encoding, 16)
    with torch.no_grad():
        tensor = torch.as_tensor(obs)
        features = model.policy.pi_features_extractor(tensor)  # a Box observation needs no preprocessing
        logits = model.policy.action_net(model.policy.mlp_extractor.forward_actor(features)).numpy()
        probabilities = model.policy.get_distribution(tensor, action_masks=masks).distribution.probs.numpy()
    np.testing.assert_allclose(policy.logits(obs), logits, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(policy.probabilities(obs, masks), probabilities, rtol=1e-4, atol=1e-6)
    predicted, _ = model.predict(obs, action_masks=masks, deterministic=True)
    agent = PolicyAgent(policy=policy)
    games = running_games(16)
    assert [agent.act(SeatView(g)) for g in games] == list(predicted)  # the agent encodes the view itself
    other = "onehot" if encoding == "compact" else "compact"
    with pytest.raises(ModelFormatError, match=f"the metadata says observation_encoding '{other}'"):
        export_policy(model, "tracked", {"observation_encoding": other})

    # import_policy is export's inverse: a fresh model given the export exports the same arrays
    fresh = MaskablePPO("MlpPolicy", AllSeats(), seed=1, device="cpu", policy_kwargs=kwargs)
    import_policy(fresh, policy)
    again = export_policy(fresh, "tracked")
    for name in ("weights", "biases", "action_weight", "action_bias", "embedding"):
        np.testing.assert_equal(getattr(again, name), getattr(policy, name))
    value_net = fresh.policy.mlp_extractor.value_net[0].weight
    assert torch.equal(value_net, fresh.policy.mlp_extractor.policy_net[0].weight) == (not share)  # own value features
    # the value network exports too, as a one-output network that no agent plays
    value = load_policy(export_value(model, "tracked").save(tmp_path / "v.npz"))
    with torch.no_grad():
        np.testing.assert_allclose(value.logits(obs)[:, 0], model.policy.predict_values(tensor)[:, 0].numpy(),
                                   rtol=1e-4, atol=1e-5)
    with pytest.raises(ModelFormatError, match="is a value network"):
        PolicyAgent(path=tmp_path / "v.npz")
    narrow = MaskablePPO("MlpPolicy", AllSeats(), seed=1, device="cpu", policy_kwargs=dict(kwargs, net_arch=[8]))
    with pytest.raises(ModelFormatError, match="do not match the model's"):
        import_policy(narrow, policy)


def test_a_compact_agent_plays_the_compact_env_to_the_end():
    """The env's compact observation is what the agent encodes from the env's seat view, and both give one action."""
    import packetrow_env

    env = packetrow_env.env(num_players=3, observation_encoding="compact")
    env.reset(seed=5)
    agent = PolicyAgent(policy=random_policy("compact", seed=2))
    moves = 0
    for name in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        view = env.unwrapped.seat_view()
        assert np.array_equal(view.compact_observation(), obs["observation"])
        action = agent.act(view)
        assert action == agent.act(SeatView.of_observation(obs["observation"], obs["action_mask"]))
        env.step(action)
        moves += 1
    assert moves > 20 and env.unwrapped.game.is_over
