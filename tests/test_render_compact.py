"""The compact terminal layout (packetrow_env.render_compact, ``packetrow play --layout compact``): an 80x24 screen."""

from __future__ import annotations

import io
import os
import re

import numpy as np
import pytest

from packetrow_agents import HeuristicAgent, terminal
from packetrow_agents.terminal import HumanAgent
from packetrow_env.render_compact import LEGEND, compact, pack, short_card, wrap
from packetrow_env.engine import Game
from packetrow_env.seat_view import SeatView

ACTIONS = re.compile(r"YOUR TURN, [^:]*: (\d+) ")


def heuristic_positions(n: int, seeds=range(4)):
    """Every position of heuristic games, with the seat to act."""
    for seed in seeds:
        game = Game.new(n, seed=seed)
        agents = [HeuristicAgent(seed=p) for p in range(n)]
        while not game.is_over:
            yield game
            game.step(agents[game.current_player].act(SeatView(game, game.current_player)))
        yield game


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_the_compact_view_fits_80_by_24(n):
    """At most 80 columns always; with the prompt line, at most 24 lines in games played as a person would."""
    names = ["ismcts:seconds=0.2,rollout=random"] * n  # the longest names get shortened
    tallest = 0
    for game in heuristic_positions(n):
        seat = game.current_player if not game.is_over else 0
        lines = compact(SeatView(game, seat), names).split("\n")
        assert max(map(len, lines)) <= 80, "\n".join(lines)
        tallest = max(tallest, len(lines))
        if not game.is_over:
            turn = "\n".join(lines).split("YOUR TURN, ")[1].split(": ", 1)[1]
            listed = [item.split()[0] for item in re.split(r" \|\s+", turn.strip())]
            assert [int(a) for a in listed] == game.legal_actions()
    assert tallest <= 23


def test_the_compact_view_is_the_same_for_hidden_twins():
    """It shows nothing the seat cannot know: re-dealing what he cannot see changes nothing."""
    rng = np.random.default_rng(1)
    for n, seed in ((2, 0), (5, 2)):
        game = Game.new(n, seed=seed)
        checked = 0
        while not game.is_over:
            if game.current_player == 0:
                twin = game.sample_determinization(0, rng)
                assert compact(SeatView(twin, 0)) == compact(SeatView(game, 0))
                checked += 1
            game.step(int(rng.choice(game.legal_actions())))
        assert checked > 5


def test_short_names_and_wrapping():
    game = Game.new(2, seed=0)
    texts = {short_card(SeatView(game, 0), c) for c in range(len(game.cards.kind))}
    assert max(map(len, texts)) <= 16 and "-" == short_card(SeatView(game, 0), -1)
    assert {"ship>GB", "money $5", "captain", "trader", "assistant", "banker"} <= texts
    assert any(re.fullmatch(r"\d (grain|cotton|fur|tobacco)>(GB|FR|NL|SE|ES|DE)\$\d+\*?", t) for t in texts)
    line = " ".join(["word"] * 50)
    assert all(len(part) <= 80 for part in wrap(line)) and " ".join(wrap(line)).split() == line.split()
    lines = pack("first: ", [f"{i} item" for i in range(40)])
    assert all(len(part) <= 80 for part in lines) and all(" | " not in part[-3:] for part in lines[:-1])
    assert max(len(line) for line in LEGEND.split("\n")) <= 80


class Answers:
    """Answers each prompt with the first action the compact view lists, after the ``extra`` lines."""

    def __init__(self, out, extra=()):
        self.out, self.extra = out, list(extra)

    def __call__(self, prompt: str) -> str:
        self.out.write(prompt)
        line = self.extra.pop(0) if self.extra else ACTIONS.findall(self.out.getvalue())[-1]
        self.out.write(line + "\n")
        return line


def test_a_whole_compact_game_in_the_terminal_stays_within_80_columns():
    out = io.StringIO()
    assert terminal.play(players=5, opponents="heuristic", seed=3, input_fn=Answers(out, ["help"]), out=out,
                         layout="compact") == 0
    text = out.getvalue()
    assert "The winner is" in text or "You win!" in text or "Shared win" in text
    assert "Compact view: destinations" in text  # help explains the short names
    assert "=== Your turn" not in text and max(map(len, text.split("\n"))) <= 80


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("size, compact_expected", [((80, 24), True), ((200, 80), False)])
def test_auto_layout_follows_the_terminal_size(monkeypatch, size, compact_expected):
    monkeypatch.setattr(terminal.shutil, "get_terminal_size", lambda *a: os.terminal_size(size))
    game = Game.new(2, seed=0)
    human = HumanAgent(0, out=FakeTerminal())
    assert ("YOUR TURN, " in human.view(SeatView(game, 0))) == compact_expected
    assert "YOUR TURN, " not in HumanAgent(0, out=io.StringIO()).view(SeatView(game, 0))  # not a terminal: full


def test_the_layout_command_switches(capsys):
    game = Game.new(3, seed=0)
    out = io.StringIO()
    human = HumanAgent(0, out=out)
    view = SeatView(game, 0)
    assert human._handle("layout compact", game.legal_action_mask(), view) is None
    assert human.layout == "compact" and "YOUR TURN, " in out.getvalue()
    human._handle("layout sideways", game.legal_action_mask(), view)
    assert "Type 'layout compact'" in out.getvalue() and human.layout == "compact"
    with pytest.raises(ValueError, match="layout must be one of auto, full, compact"):
        HumanAgent(0, layout="tiny")
