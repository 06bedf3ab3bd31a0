"""Baseline agents: legal, deterministic, and blind to what their seat cannot know; the registry."""

import numpy as np
import pytest

from packetrow_agents import HeuristicAgent, RandomAgent, make_agent
from packetrow_agents.policy import SHIPPED_MODEL
from packetrow_agents.registry import AGENTS, agent_options, model_paths, parse_spec, split_specs
from packetrow_env import actions
from packetrow_env.engine import Game
from packetrow_env.seat_view import SeatView
from tests.test_leaks import hidden_starts, random_position, redeal_removed, shuffle_decks, swap_start_with_removed

BASELINES = [RandomAgent, HeuristicAgent]


def play(agents, num_players, seed):
    """A full game; every chosen action is checked against the mask."""
    game = Game.new(num_players, seed=seed)
    actions = []
    while not game.is_over:
        mask = game.legal_action_mask()
        action = agents[game.current_player].act(SeatView(game, action_mask=mask))
        assert isinstance(action, int) and mask[action], action
        game.step(action)
        actions.append(action)
    return actions, game.scores()


@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
@pytest.mark.parametrize("agent_class", BASELINES)
def test_agents_only_return_legal_actions(agent_class, num_players):
    for seed in range(3):
        play([agent_class(seed=seed * 10 + p) for p in range(num_players)], num_players, seed)


@pytest.mark.parametrize("agent_class", BASELINES)
def test_agents_are_deterministic_for_a_seed(agent_class):
    first = play([agent_class(seed=p) for p in range(3)], 3, 5)
    again = play([agent_class(seed=p) for p in range(3)], 3, 5)
    assert first == again
    reseeded = [agent_class(seed=99) for _ in range(3)]
    for p, agent in enumerate(reseeded):
        agent.reset(p)
    assert play(reseeded, 3, 5) == first


@pytest.mark.parametrize("agent_class", BASELINES)
def test_no_agent_cheats_on_hidden_twins(agent_class):
    """On a twin that differs only in what the acting seat cannot know, the same seed picks the same action."""
    rng = np.random.default_rng(0)
    checked = 0
    for n in (2, 3, 4, 5):
        for seed in range(6):
            data = random_position(n, seed, steps=int(rng.integers(5, 120)))
            if data["phase"] == "over":
                continue
            seat = data["current_player"]
            twins = [shuffle_decks(data, rng)]
            twins += [swap_start_with_removed(data, q, rng) for q in hidden_starts(data, seat)]
            if n == 2:
                twins.append(redeal_removed(data, rng))
            game = Game.from_dict(data)
            expected = agent_class(seed=seed).act(SeatView(game))
            for twin in twins:
                other = Game.from_dict(twin)
                assert agent_class(seed=seed).act(SeatView(other)) == expected
                checked += 1
    assert checked > 40


def test_heuristic_ships_whenever_it_can():
    """Rule 1: while a contract can be staged it stages the best paying one; with nothing more to add, it ships."""
    staged = shipped = 0
    for seed in range(20):
        game = Game.new(2, seed=seed)
        cards = game.cards
        agents = [HeuristicAgent(seed=0), RandomAgent(seed=1)]
        while not game.is_over:
            mask = game.legal_action_mask()
            action = agents[game.current_player].act(SeatView(game, action_mask=mask))
            if game.current_player == 0:
                adds = np.flatnonzero(mask[actions.ADD_CONTRACT:actions.SHIP])
                if adds.size:
                    rewards = cards.reward[cards.contract_ids[adds]]
                    assert action - actions.ADD_CONTRACT in adds[rewards == rewards.max()]
                    staged += 1
                elif mask[actions.SHIP]:
                    assert action == actions.SHIP
                    shipped += 1
            game.step(action)
    assert staged >= 10 and shipped >= 10  # the rule was exercised, not skipped


def test_heuristic_beats_random_clearly():
    """A smoke check of strength (the measured figure is in docs/benchmarks.md): it wins most 4-player games."""
    wins = 0
    for seed in range(20):
        seat = seed % 4
        agents = [HeuristicAgent(seed=seed) if p == seat else RandomAgent(seed=seed * 4 + p) for p in range(4)]
        _, scores = play(agents, 4, 1000 + seed)
        wins += scores[seat]["winner"]
    assert wins >= 10


def test_agents_need_a_legal_action_and_the_heuristic_needs_the_game():
    game = Game.new(2, seed=0)
    with pytest.raises(ValueError, match="no legal action"):
        RandomAgent().act(SeatView(game, 1))  # seat 1's view while seat 0 is to act: nothing is legal
    with pytest.raises(ValueError, match="SeatView\\(game, seat\\)"):
        HeuristicAgent().act(SeatView.of_observation(np.zeros(3, np.float32), game.legal_action_mask()))


def test_registry_builds_agents_from_specs():
    assert parse_spec("ismcts:iters=200,rollout=random") == ("ismcts", {"iterations": 200, "rollout": "random"})
    agent = make_agent("heuristic:threshold=1.5", seed=3)
    assert isinstance(agent, HeuristicAgent) and agent.threshold == 1.5 and agent.name == "heuristic:threshold=1.5"
    assert isinstance(make_agent("random"), RandomAgent)
    assert parse_spec("ppo:models/x.npz,deterministic=false") == ("ppo", {"path": "models/x.npz", "deterministic": False})
    with pytest.raises(ValueError, match="known agents"):
        make_agent("grandmaster")
    with pytest.raises(ValueError, match="key=value"):
        make_agent("heuristic:fast")
    with pytest.raises(ValueError, match="unknown option 'depth' for agent 'random'.*options of 'random': none"):
        make_agent("random:depth=3")
    # every option naming a model file is checked by the parser (and by the browser's model folders)
    assert model_paths(*parse_spec("search:policy=a.npz,value=b.npz")) == ["a.npz", "b.npz"]
    assert model_paths(*parse_spec("search:value=ppo")) == []
    assert model_paths(*parse_spec("search:opponents=heuristic")) == []
    assert model_paths(*parse_spec(f"search:opponents={SHIPPED_MODEL}")) == [str(SHIPPED_MODEL)]
    with pytest.raises(ValueError, match="option opponents of 'search:opponents=ismcts' takes ppo or policy or "
                                         "heuristic or the path of a .npz export"):
        parse_spec("search:opponents=ismcts")
    with pytest.raises(ValueError, match="SB3 checkpoints"):
        parse_spec("search:value=model.zip")


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_every_agents_unknown_option_lists_its_options(name):
    """A mistyped option (ismcts:iter=5) names what the agent accepts, never a Python TypeError."""
    options = agent_options(name)
    with pytest.raises(ValueError, match=f"unknown option 'iter' for agent '{name}'") as error:
        make_agent(f"{name}:iter=5")
    for option in options:
        assert option in str(error.value)
    assert "TypeError" not in str(error.value) and "__init__" not in str(error.value)
    with pytest.raises(ValueError, match="comes from the command's --seed"):
        make_agent(f"{name}:seed=5")


@pytest.mark.parametrize("spec", ["heuristic", "ismcts:iters=20,rollout=random"])
def test_bots_play_a_loaded_game_as_the_original(spec):
    """A loaded game's decks start at their remaining cards; the bots' game clock must not restart there."""
    game = Game.new(2, seed=3)
    rng = np.random.default_rng(0)
    for _ in range(12):
        game.step(int(rng.choice(game.legal_actions())))
    loaded = Game.from_dict(game.to_dict())
    for _ in range(40):
        if game.is_over:
            break
        chosen = [make_agent(spec, seed=7).act(SeatView(g.clone())) for g in (game, loaded)]
        assert chosen[0] == chosen[1]
        game.step(chosen[0])
        loaded.step(chosen[0])


def test_the_heuristics_documented_rival_weight_is_the_one_it_uses():
    text = " ".join(HeuristicAgent.__doc__.split())
    assert f"minus {HeuristicAgent.rival_weight:g} times what the best-served opponent gains" in text


def test_split_specs_continues_options_after_key_equals_and_refuses_empty_specs():
    assert split_specs("heuristic,ismcts:iters=200,rollout=random") == ["heuristic", "ismcts:iters=200,rollout=random"]
    assert split_specs(" random , random ") == ["random", "random"]
    # 'key=' continues the spec before it even where the value has a colon (a Windows path)
    assert split_specs("ppo:a.npz,path=C:/x.npz,random") == ["ppo:a.npz,path=C:/x.npz", "random"]
    assert split_specs("ppo:C:/m.npz,heuristic:threshold=2") == ["ppo:C:/m.npz", "heuristic:threshold=2"]
    for text, where in (("a,,b", "position 2 of 3"), ("random,", "position 2 of 2"), ("", "position 1 of 1")):
        with pytest.raises(ValueError, match=f"empty agent spec at {where}"):
            split_specs(text)
    with pytest.raises(ValueError, match="'heuristic' has no options"):
        split_specs("heuristic,threshold=2")
    with pytest.raises(ValueError, match="no agent comes before it"):
        split_specs("threshold=2,random")


def test_an_option_given_twice_is_refused():
    with pytest.raises(ValueError, match="option 'iterations' is given twice"):
        parse_spec("ismcts:iters=200,iterations=100")
