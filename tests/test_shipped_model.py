"""The shipped agent (models/ppo_packetrow.npz) works out of the box: loading, play, tournaments, the terminal."""

from __future__ import annotations

import io

import numpy as np
import pytest
import yaml

from packetrow_agents import make_agent
from packetrow_agents.policy import SHIPPED_MODEL, PolicyAgent
from packetrow_agents.terminal import play
from packetrow_env import actions
from packetrow_env.compact_observation import encoder as compact_encoder
from packetrow_env.engine import Game
from packetrow_env.seat_view import SeatView
from tests.test_policy_versions import V1_MODEL
from tests.test_terminal import Script
from packetrow_cli import main as cli
from packetrow_arena.tournament import run_tournament

CONFIGS = SHIPPED_MODEL.parent.parent / "configs"


def test_the_shipped_model_is_small_and_names_its_committed_config():
    """It was trained on env v2 by committed configs (each phase resumes the one before) whose network and
    observation it has."""
    assert SHIPPED_MODEL.stat().st_size < 5 * 2**20
    agent = PolicyAgent.load()
    config = yaml.safe_load((CONFIGS / f"{agent.metadata['config_name']}.yaml").read_text())
    first = yaml.safe_load((CONFIGS / "ppo_packetrow_v2.yaml").read_text())
    assert agent.metadata["config_name"] == config["name"] == "ppo_packetrow_v2_heuristic"
    network = ("net_arch", "activation", "extractor_layer", "share_extractor")
    for phase in ("ppo_packetrow_v2_finetune", "ppo_packetrow_v2_rank", "ppo_packetrow_v2_heuristic"):
        later = yaml.safe_load((CONFIGS / f"{phase}.yaml").read_text())
        assert [later["ppo"][k] for k in network] == [first["ppo"][k] for k in network]
        assert later["env"]["observation_mode"] == first["env"]["observation_mode"]
    assert agent.observation_mode == config["env"]["observation_mode"]
    assert agent.observation_encoding == config["env"]["observation_encoding"] == "compact"
    first = config["ppo"]["extractor_layer"]
    assert [w.shape[1] for w in agent.policy.weights] == [first, *config["ppo"]["net_arch"]]


def test_R_SHIP_7_the_shipped_agent_chooses_its_payments():
    """Trained on env v2: one output per action, pay actions and 'more' included, reading the v2 vector itself."""
    from tests.test_rules_pay import staged_and_shipped

    agent = PolicyAgent.load()
    assert agent.policy.num_actions == actions.NUM_ACTIONS
    assert agent.policy.observation_size == compact_encoder().size_of(agent.observation_mode)
    game = staged_and_shipped()
    view = SeatView(game)
    logits = agent.policy.logits(view.compact_observation(agent.observation_mode))
    mask = game.legal_action_mask()
    assert agent.act(view) == int(np.argmax(np.where(mask, logits, -np.inf))) >= actions.PAY


def test_the_agent_shipped_before_reads_the_v1_vector_inside_the_v2_one():
    """The env-v1 agent shipped until 0.3.0 (no payment_page, by_board nor action more) keeps playing: it reads
    ``CompactEncoder.v1_observation`` of its seat's vector and the first 60 actions of the mask, through the
    adapter in ``PolicyAgent.act``."""
    agent = PolicyAgent.load(V1_MODEL)
    compact = compact_encoder()
    assert agent.policy.observation_size == compact.v1_size_of(agent.observation_mode) < compact.size
    game = Game.new(4, seed=1)
    for _ in range(60):
        view = SeatView(game)
        vector = compact.v1_observation(compact.encode(game, game.current_player, agent.observation_mode))
        action = agent.act(view)
        assert action == agent.policy.action(vector, game.legal_action_mask()[:actions.NUM_ACTIONS_V1])
        game.step(action)


@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
def test_the_shipped_agent_plays_legal_games_at_every_player_count(num_players):
    game = Game.new(num_players, seed=num_players)
    agents = [make_agent("ppo", seed=p) for p in range(num_players)]
    while not game.is_over:
        mask = game.legal_action_mask()
        action = agents[game.current_player].act(SeatView(game, action_mask=mask))
        assert mask[action]
        game.step(action)
    assert len(game.scores()) == num_players


def test_sampling_differs_from_argmax_but_stays_legal():
    game = Game.new(2, seed=0)
    mask = game.legal_action_mask()
    sampled = {PolicyAgent.load(deterministic=False, seed=s).act(SeatView(game, action_mask=mask)) for s in range(30)}
    assert all(mask[a] for a in sampled)
    assert len({PolicyAgent.load().act(SeatView(game, action_mask=mask)) for _ in range(3)}) == 1


def test_tournament_against_the_heuristic_out_of_the_box(capsys):
    assert cli.main(["tournament", "--agents", "ppo,heuristic", "--players", "2", "--games", "2",
                     "--no-progress"]) == 0
    table = capsys.readouterr().out
    assert "ppo" in table and "heuristic" in table and "2 games of 2 players" in table


def test_play_against_the_shipped_agent_in_the_terminal():
    out = io.StringIO()
    assert play(players=2, opponents="ppo", seed=4, input_fn=Script(out), out=out) == 0
    transcript = out.getvalue()
    assert "opponents: player 1 (ppo)" in transcript
    assert "player 1 (ppo) takes" in transcript and "The game is over" in transcript


def test_the_shipped_agent_still_beats_the_heuristic():
    """A regression guard, not the measurement (the model card: 99.9% of 1000 games): a change to the observation or
    the rules that the model silently no longer fits shows up as lost games."""
    result = run_tournament(["ppo", "heuristic"], 2, 40, seed=11, workers=1, progress=False)
    assert result.row("ppo")["win_rate"] >= 0.75
