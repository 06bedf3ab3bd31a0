"""The agent protocol (packetrow_env.agent_protocol, docs/agent_protocol.md): every shipped agent speaks it, and an
agent a user writes, with act alone or with a batched or compiled form, plays wherever opponents move."""

from pathlib import Path

import numpy as np
import pytest

from packetrow_agents import registry
from packetrow_agents.base import Agent as BaseAgent
from packetrow_env import agent_protocol
from packetrow_env.agent_protocol import Agent, BatchedAgent, FunctionAgent, Turns, as_agent, batched_form
from packetrow_env.vector import VectorGame
from packetrow_env.vector.gymnasium_env import PacketRowVectorEnv
from packetrow_env.vector.learner import LearnerGames, random_legal
from packetrow_env.vector.opponents import OpponentTable
from packetrow_env.single_agent_env import SingleAgentEnv

DATA = Path(__file__).resolve().parent / "data"


class Lowest:
    """A user's agent with act alone: the lowest legal action; counts its moves."""

    def __init__(self):
        self.moves = 0

    def act(self, view) -> int:
        assert view.current_player == view.seat
        self.moves += 1
        return int(np.flatnonzero(view.action_mask)[0])


class LowestBatched(Lowest):
    """The same moves, batched: only act_batch may move it."""

    calls: list = []

    def act(self, view) -> int:
        raise AssertionError("a batched agent is moved by act_batch, not game by game")

    @classmethod
    def act_batch(cls, agents, turns) -> np.ndarray:
        cls.calls.append(len(turns))
        return turns.masks.argmax(axis=1)


def shipped_agents():
    """One agent of every name the registry builds (small budgets)."""
    options = {"ismcts": "ismcts:iters=5", "search": "search:rollouts=4,determinizations=2,candidates=2",
               "llm": "llm:model=test,base_url=http://127.0.0.1:9/v1",  # built, never asked: no call is made
               "mixture": f"mixture:{DATA / 'mixture.json'}"}
    return [registry.make_agent(options.get(name, name)) for name in registry.AGENTS]


def test_every_shipped_agent_speaks_the_protocol():
    """Each agent the registry builds is an Agent of the env's protocol and of packetrow_agents' (its defaults
    written out), with a batched form, a compiled form that is None or a description the kernel reads, and no note
    before it has moved."""
    for agent in shipped_agents():
        assert isinstance(agent, Agent) and isinstance(agent, BaseAgent) and isinstance(agent, BatchedAgent)
        form = agent_protocol.compiled_form(agent, "tracked", "compact", 1)
        assert form is None or hasattr(form, "kind")
        assert agent_protocol.move_note(agent) is None
    assert set(registry.AGENTS) == {"random", "heuristic", "ismcts", "ppo", "search", "llm", "mixture", "robust",
                                   "mmd"}


def test_an_agent_with_act_alone_plays_in_the_single_agent_env():
    agent = Lowest()
    env = SingleAgentEnv(3, opponents=agent)
    env.reset(seed=0)
    terminated = False
    while not terminated:
        *_, terminated, _, _ = env.step(int(np.flatnonzero(env.action_masks())[-1]))
    assert agent.moves > 0


def test_an_agent_with_act_alone_plays_the_vector_envs_opponents():
    """Given to the vector env, it sits at every opponent seat and moves game by game through act."""
    agent = Lowest()
    env = PacketRowVectorEnv(num_envs=4, num_players=[2, 4], opponents=agent, seed=0)
    _, infos = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(30):
        *_, infos = env.step(random_legal(infos["action_mask"], rng))
    assert agent.moves > 30


def test_act_batch_falls_back_to_act_game_by_game():
    """In a batch of turns, an agent without act_batch plays each turn with its act: the moves it plays alone."""
    vg = VectorGame([2, 3, 4, 5] * 3, seeds=list(range(12)))
    rng = np.random.default_rng(1)
    for _ in range(25):
        vg.step(random_legal(vg.legal_action_mask(), rng))
    rows = np.flatnonzero(vg.current_player >= 0)
    turns = Turns(vg, rows, vg.current_player[rows], np.arange(len(rows)) % 2, vg.legal_action_mask()[rows],
                  "tracked", "onehot", rng)
    agents = [Lowest(), Lowest()]
    method, together = batched_form(agents[0])
    assert method(agents, turns).tolist() == turns.masks.argmax(axis=1).tolist()
    assert agents[0].moves + agents[1].moves == len(rows) and not together


def test_a_batched_agent_is_moved_in_batches(monkeypatch):
    monkeypatch.setattr(LowestBatched, "calls", [])
    games = LearnerGames(8, num_players=[3, 4], opponents=LowestBatched(), seed=0)
    rng = np.random.default_rng(0)
    for _ in range(10):
        games.step(random_legal(games.action_masks(), rng))
    assert max(LowestBatched.calls) > 1


def test_a_list_sits_clockwise_from_the_learner():
    """One agent per opponent seat, as SingleAgentEnv takes them; too few for a game is refused."""
    agents = [Lowest(), Lowest(), Lowest()]
    table = OpponentTable(agents)
    table.seat(np.array([0, 1]), np.array([4, 3]), np.array([1, 2]))
    assert table.assigned[:2, :4].tolist() == [[2, -1, 0, 1], [0, 1, -1, -1]]
    with pytest.raises(ValueError, match="4 opponents are needed for a 5-player game, got 3"):
        table.seat(np.array([0]), np.array([5]), np.array([0]))


def test_a_callable_is_adapted_in_one_place():
    """A callable f(observation, action_mask) becomes a FunctionAgent; anything else is refused."""
    def lowest(observation, mask):
        return int(np.flatnonzero(mask)[0])

    agent = as_agent(lowest)
    assert isinstance(agent, FunctionAgent) and isinstance(agent, Agent) and agent.name == "lowest"
    env = SingleAgentEnv(2, opponents=lowest)
    env.reset(seed=1)
    assert isinstance(env.seated[1 - env.seat], FunctionAgent)
    mine = Lowest()
    assert as_agent(mine) is mine
    with pytest.raises(ValueError, match="not an agent"):
        as_agent(3)


def test_a_subclass_gives_itself_a_compiled_form():
    """The kernel plays a subclass that declares its compiled form; one that does not moves elsewhere."""
    from packetrow_agents import HeuristicAgent
    from packetrow_agents.compiled_opponent import ELSEWHERE, HEURISTIC, CompiledOpponent
    from packetrow_agents.opponents_batch import OpponentKernel, kind_of

    class Cautious(HeuristicAgent):
        def compiled_form(self, observation_mode, observation_encoding, observation_size):
            return CompiledOpponent(HEURISTIC, threshold=float(self.threshold))

    class Renamed(HeuristicAgent):
        """Inherits no form: it may have changed the rules."""

    kernel = OpponentKernel(None, "tracked", "compact")
    kernel.set_agents([Cautious(threshold=2.0), Renamed()])
    assert kernel.kinds.tolist() == [HEURISTIC, ELSEWHERE]
    with pytest.deprecated_call():
        assert kind_of(Cautious(), "tracked", "compact", kernel.observation_size) == HEURISTIC


def test_the_old_names_still_work_and_warn():
    from packetrow_agents import RandomAgent
    from packetrow_agents.base import batch_method
    from packetrow_env.engine import Game
    from packetrow_env.vector.learner import RowObservations
    from packetrow_env.single_agent_env import choose

    with pytest.deprecated_call():
        assert batch_method(RandomAgent) == RandomAgent.act_batch
    game = Game.new(2, seed=0)
    with pytest.deprecated_call():
        assert choose(lambda observation, mask: int(np.flatnonzero(mask)[0]), game, game.current_player) == \
            int(np.flatnonzero(game.legal_action_mask())[0])
    vg = VectorGame([2, 2], seeds=[0, 1])
    with pytest.deprecated_call():
        assert np.asarray(RowObservations(vg, np.arange(2), "tracked", "onehot")).shape[0] == 2
    table = OpponentTable(Lowest())
    table.seat(np.arange(2), np.array([2, 2]), 1 - vg.current_player)
    with pytest.deprecated_call():
        assert table.act(vg, np.arange(2), None, vg.legal_action_mask()).tolist() == \
            vg.legal_action_mask().argmax(axis=1).tolist()
