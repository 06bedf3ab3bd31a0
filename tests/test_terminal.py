"""`packetrow play`: a person against bots in the terminal (agents/terminal.py).

Scripted stdin plays whole games through the real command entry point; garbage input re-prompts;
save/load round-trips; bad files and options give clear errors; the text view shows nothing a seat
may not know (checked against hidden twins: games that differ only in what the seat cannot know).
"""

from __future__ import annotations

import io
import json
import re
import shutil
import sys

import numpy as np
import pytest

from packetrow_agents import play as play_module
from packetrow_agents import terminal
from packetrow_agents.play import PlayError, narrate, read_save
from packetrow_agents.terminal import HumanAgent, play
from packetrow_env import actions
from packetrow_env.engine import Game
from packetrow_env.render import contract_text
from packetrow_env.seat_view import SeatView
from packetrow_cli import main as cli

LEGAL = re.compile(r"legal actions:\n((?: +\d+ .*\n)+)")


class Script:
    """A fake stdin: answers each prompt from ``extra`` lines first, then with the first listed legal action.

    ``out`` is the text stream the game writes to; the prompt and the answer are echoed into it, as a
    terminal would show them. ``garbage`` maps a prompt number to lines sent before the real answer;
    ``stop_at`` ends the input (EOF) at that prompt number, or sends ``stop_with`` there.
    """

    def __init__(self, out, garbage=None, stop_at=None, stop_with=None):
        self.out = out
        self.garbage = {k: list(v) for k, v in (garbage or {}).items()}
        self.stop_at = stop_at
        self.stop_with = stop_with
        self.prompts = 0
        self.answers = []

    def first_legal(self) -> int:
        listing = LEGAL.findall(self.out.getvalue())[-1]
        return int(listing.split()[0])

    def __call__(self, prompt: str) -> str:
        self.out.write(prompt)
        if prompt == terminal.PROMPT:
            self.prompts += 1
            n = self.prompts
            if self.garbage.get(n):
                line = self.garbage[n].pop(0)
                self.prompts -= 1  # the same decision is asked again
            elif n == self.stop_at:
                if self.stop_with is None:
                    raise EOFError
                line = self.stop_with
            else:
                line = str(self.first_legal())
        else:  # "save before quitting?"
            line = ""
        self.answers.append(line)
        self.out.write(line + "\n")
        return line


# --------------------------------------------------------------------------- whole games
def test_scripted_full_game_through_the_command_with_garbage(monkeypatch, capsys):
    out = io.StringIO()
    script = Script(out, garbage={1: ["", "   ", "xyz", "99", "help", "view", "scores"], 4: ["take 9", "0"]})
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr("builtins.input", script)
    rc = cli.main(["play", "--players", "3", "--opponents", "random,random", "--seed", "3"])
    text = out.getvalue()
    assert rc == 0
    assert "The game is over" in text and "Final scores:" in text and "WINNER" in text
    assert re.search(r"You win!|The winner is player \d|Shared win", text)
    # each garbage line got a short message, then the same decision was asked again
    assert text.count("Please type one of the listed numbers") == 2
    assert "'xyz' is neither an action nor a command" in text
    assert "There is no action 99" in text
    assert "How a round goes" in text and "Commands:" in text
    assert "If the game ended now, with money cards cashed" in text
    assert "Action 0 (choose:guildhall) is not legal now" in text  # '0' at a take decision (prompt 4)
    assert "is not legal now" in text.split("take 9", 1)[1]
    assert "Traceback" not in text
    # opponents' moves are narrated between the person's turns
    assert re.search(r"player [12] \(random\) (takes the .+ from the|passes|chooses the)", text)
    assert capsys.readouterr().err == ""


def test_same_seed_same_game(tmp_path):
    def transcript():
        out = io.StringIO()
        assert play(players=3, opponents="random", seed=11, input_fn=Script(out), out=out) == 0
        return out.getvalue()

    first = transcript()
    assert first == transcript()
    assert "The game is over" in first


@pytest.mark.parametrize("players,seat", [(2, 1), (4, 3), (5, 2)])
def test_every_player_count_and_seat(players, seat):
    out = io.StringIO()
    rc = play(players=players, opponents="random", seed=players, seat=seat, input_fn=Script(out), out=out)
    text = out.getvalue()
    assert rc == 0 and "Final scores:" in text
    assert f"You are player {seat}" in text
    assert f"player {seat} (you)" in text


def test_eof_and_quit_end_cleanly(tmp_path):
    out = io.StringIO()
    assert play(players=3, opponents="random", seed=1, input_fn=Script(out, stop_at=3), out=out) == 0
    assert "Game stopped (end of input)" in out.getvalue()

    out = io.StringIO()
    script = Script(out, stop_at=2, stop_with="quit")
    assert play(players=3, opponents="random", seed=1, input_fn=script, out=out) == 0
    text = out.getvalue()
    assert "Save this game before quitting?" in text  # no --save: offered; Enter declines
    assert text.rstrip().endswith("Game stopped.")


def test_option_errors_are_clear(capsys, tmp_path):
    assert cli.main(["play", "--players", "4", "--opponents", "random,random"]) == 2
    assert "--opponents lists 2 agents for a 4-player game: give 3" in capsys.readouterr().err
    assert cli.main(["play", "--players", "3", "--opponents", "nobody"]) == 2
    assert "unknown agent 'nobody'" in capsys.readouterr().err
    assert cli.main(["play", "--players", "3", "--seat", "3", "--opponents", "random"]) == 2
    assert "--seat must be a seat of the 3-player game: 0 to 2" in capsys.readouterr().err
    assert cli.main(["play", "--opponents", "random,,random"]) == 2
    assert "empty agent spec" in capsys.readouterr().err


def test_opponent_specs_keep_their_options():
    assert play_module.opponent_specs(["random"], 4) == ["random"] * 3
    with pytest.raises(PlayError, match="option 'path' is given twice"):  # one spec, by the registry's rule
        play(players=2, opponents="ppo:a.npz,path=C:/x.npz", seed=0)
    with pytest.raises(PlayError, match="--opponents: .* empty agent spec at position 2 of 3"):
        play(players=3, opponents="random,,random", seed=0)


def test_bots_get_their_own_tracked_view():
    seen = []
    session = None

    class Spy:
        name = "spy"

        def act(self, view):
            from packetrow_env.observation import encoder
            game = session.game
            seen.append(view.seat == 1 == game.current_player and view.mode == "tracked" and np.array_equal(
                view.observation, encoder().encode(game, 1, "tracked")))
            return int(np.flatnonzero(view.action_mask)[0])

    out = io.StringIO()
    session = terminal.TerminalGame(Game.new(3, seed=0), 0, ["random", "random"], 0, input_fn=Script(out), out=out)
    session.bots[1] = Spy()
    assert session.run() == 0
    assert seen and all(seen)


# --------------------------------------------------------------------------- save and load
def test_save_mid_game_then_load_and_finish(tmp_path):
    path = tmp_path / "game.json"
    out = io.StringIO()
    script = Script(out, garbage={5: [f"save {tmp_path / 'manual.json'}"]}, stop_at=9, stop_with="quit")
    assert play(players=3, opponents="random,random", seed=5, seat=1, save=str(path), input_fn=script, out=out) == 0
    text = out.getvalue()
    assert f"Saved to {tmp_path / 'manual.json'}" in text
    assert f"Game saved to {path}. Resume with: packetrow play --load {path}" in text

    data = json.loads(path.read_text())
    assert data["format"] == "packetrow-play" and data["seat"] == 1 and data["seed"] == 5
    assert data["opponents"] == ["random", "random"]
    saved = Game.from_dict(data["game"])
    assert not saved.is_over and saved.current_player == 1  # saved where the person must act
    manual = json.loads((tmp_path / "manual.json").read_text())
    assert len(manual["game"]["history"]) < len(data["game"]["history"])

    out = io.StringIO()
    assert play(load=str(path), save=str(path), input_fn=Script(out), out=out) == 0
    text = out.getvalue()
    assert f"Resuming in round {saved.state.round}" in text and "You are player 1" in text
    # the first view after loading is the saved position
    assert HumanAgent(1, names=["random", "you", "random"]).view(SeatView(saved, 1)) in text
    assert "Final scores:" in text
    final = Game.from_dict(json.loads(path.read_text())["game"])
    assert final.is_over and final.state.history[:len(saved.state.history)] == saved.state.history

    out = io.StringIO()  # a finished game loads to its scores
    assert play(load=str(path), input_fn=Script(out), out=out) == 0
    assert "This game is already over." in out.getvalue()


def test_load_rejects_settings_that_belong_to_the_file(tmp_path, capsys):
    path = tmp_path / "g.json"
    path.write_text(json.dumps(play_module.save_data(Game.new(3, seed=0), 0, ["random", "random"], 0)))
    assert cli.main(["play", "--load", str(path), "--players", "4"]) == 2
    assert "leave out --players" in capsys.readouterr().err


def test_a_bare_position_loads_too(tmp_path):
    path = tmp_path / "position.json"
    path.write_text(json.dumps(Game.new(2, seed=9).to_dict()))
    out = io.StringIO()
    assert play(load=str(path), opponents="random", seed=1, input_fn=Script(out), out=out) == 0
    assert "Final scores:" in out.getvalue()


@pytest.mark.parametrize("content,message", [
    ("not json at all", "is not a saved Packet Row game (not valid JSON"),
    ("[1, 2, 3]", "is not a saved Packet Row game (expected a JSON object"),
    ('{"hello": "world"}', "is not a saved Packet Row game (no 'format'"),
    ('{"format": "packetrow-play", "format_version": 99}', "unsupported save format version 99"),
    ('{"format": "packetrow-play", "format_version": 1, "seat": 0}', "lacks game, opponents, seed"),
    ("[" * 100_000 + "]" * 100_000, "is not a saved Packet Row game (its JSON is nested too deeply)"),
    (b"\xff\xfe\x00binary", "is not a saved Packet Row game (it is not a text file)"),
])
def test_bad_files_give_clear_errors(tmp_path, capsys, content, message):
    path = tmp_path / "bad.json"
    path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    assert cli.main(["play", "--load", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("packetrow play: error: ") and message in err
    assert "Traceback" not in err


def test_a_broken_position_or_a_missing_file_is_a_clear_error(tmp_path):
    data = play_module.save_data(Game.new(3, seed=0), 0, ["random", "random"], 0)
    data["game"]["players"][0]["cash"] = -5
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data))
    with pytest.raises(PlayError, match="the saved position is not valid"):
        read_save(str(path))
    data = play_module.save_data(Game.new(3, seed=0), 0, ["random"], 0)
    path.write_text(json.dumps(data))
    with pytest.raises(PlayError, match="1 opponents saved for a 3-player game"):
        read_save(str(path))
    with pytest.raises(PlayError, match="cannot read"):
        read_save(str(tmp_path / "missing.json"))
    with pytest.raises(PlayError, match="cannot read"):  # a folder
        read_save(str(tmp_path))
    with pytest.raises(PlayError, match="cannot read.*null byte"):
        read_save("game\x00.json")


def test_load_keeps_saving_to_its_file_and_saves_on_quit(tmp_path):
    path = tmp_path / "game.json"
    out = io.StringIO()
    play(players=3, opponents="random", seed=8, save=str(path), input_fn=Script(out, stop_at=3, stop_with="quit"),
         out=out)
    before = len(json.loads(path.read_text())["game"]["history"])
    out = io.StringIO()
    assert play(load=str(path), input_fn=Script(out, stop_at=4, stop_with="quit"), out=out) == 0
    assert f"The game is saved to {path} after each of your moves" in out.getvalue()
    assert f"Game saved to {path}." in out.getvalue()
    assert len(json.loads(path.read_text())["game"]["history"]) > before  # the moves played since loading


def test_failed_saves_are_one_line_and_leave_no_file_behind(tmp_path):
    """Issue 11: a path with a null byte, a folder or a missing folder; the temporary file never collides."""
    (tmp_path / "notes.json.tmp").write_text("the user's own file")
    before = sorted(p.name for p in tmp_path.iterdir())
    (tmp_path / "folder.json").mkdir()
    out = io.StringIO()
    bad = ["save a\x00b", f"save {tmp_path / 'folder.json'}", f"save {tmp_path / 'no' / 'such' / 'dir.json'}",
           f"save {tmp_path / 'notes.json'}"]
    assert play(players=2, opponents="random", seed=3, input_fn=Script(out, garbage={1: bad}, stop_at=2),
                out=out) == 0
    text = out.getvalue()
    assert "Could not save: embedded null byte" in text
    assert text.count("Could not save:") == 3 and "Traceback" not in text
    assert f"Saved to {tmp_path / 'notes.json'}" in text
    assert (tmp_path / "notes.json.tmp").read_text() == "the user's own file"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(before + ["folder.json", "notes.json"])
    assert list((tmp_path / "folder.json").iterdir()) == []


# --------------------------------------------------------------------------- nothing hidden is shown
def test_the_transcript_never_names_an_opponents_hidden_starting_contract():
    for seed in range(3):
        out = io.StringIO()
        script = Script(out)
        session = terminal.TerminalGame(Game.new(4, seed=seed), 0, ["random"] * 3, seed, input_fn=script, out=out)
        starts = [int(c) for c in session.game.state.starting_contract[:4]]
        assert session.run() == 0
        text = out.getvalue()
        during = text.split("The game is over")[0]
        assert contract_text(session.game, starts[0]) in during  # the person sees his own
        for p in (1, 2, 3):
            assert contract_text(session.game, starts[p]) not in during


def test_views_and_narration_are_identical_for_hidden_twins():
    """A twin re-deals what the person cannot know (decks, opponents' held starting contracts): same text."""
    rng = np.random.default_rng(0)
    for n, seed in ((2, 0), (3, 1), (5, 2)):
        game = Game.new(n, seed=seed)
        names = ["you"] + ["random"] * (n - 1)
        human = HumanAgent(0, names=names)
        twins_checked = narrated = 0
        while not game.is_over:
            action = int(rng.choice(game.legal_actions()))
            twin = game.sample_determinization(0, rng)
            if game.current_player == 0:
                assert human.view(SeatView(twin, 0)) == human.view(SeatView(game, 0))
                twins_checked += 1
            after = game.clone()
            after.step(action)
            # An opponent's move that is illegal in the twin reveals his starting contract (he ships it), and
            # the end reveals hands in its final shipments, as the game does; every other move reads the same.
            if twin.legal_action_mask()[action] and not after.is_over:
                twin_after = twin.clone()
                twin_after.step(action)
                assert narrate(twin, action, twin_after, 0, names) == narrate(game, action, after, 0, names)
                narrated += 1
            game = after
        assert twins_checked > 5 and narrated > 20


def test_human_agent_reads_names_numbers_and_commands():
    out = io.StringIO()
    game = Game.new(3, seed=0)
    game.step(2)  # the market; seat 1 to act
    lines = iter(["", "take 3", "Take 1", "take:0"])
    agent = HumanAgent(1, input_fn=lambda prompt: next(lines), out=out)
    assert agent.act(SeatView(game)) == actions.TAKE + 1  # 'Take 1' = take:1
    assert "Action 7 (take:3) is not legal now" in out.getvalue()
    lines = iter(["pass"])
    assert HumanAgent(1, input_fn=lambda prompt: next(lines), out=io.StringIO()).act(SeatView(game)) == actions.PASS


# --------------------------------------------------------------------------- the installed command
def test_the_installed_command_in_a_pseudo_terminal(tmp_path):
    pexpect = pytest.importorskip("pexpect")
    exe = shutil.which("packetrow")
    if exe is None:
        pytest.skip("the packetrow command is not installed")
    save = tmp_path / "pty.json"
    # the full layout, whatever the pseudo terminal's size (auto picks compact when the table would not fit)
    child = pexpect.spawn(exe, ["play", "--players", "3", "--opponents", "random", "--seed", "2", "--layout", "full",
                                "--save", str(save)], encoding="utf-8", timeout=30, dimensions=(50, 200))
    try:
        for turn in range(3):
            child.expect(r"legal actions:\r\n\s+(\d+)")
            number = child.match.group(1)
            child.expect_exact("Your move")
            if turn == 0:
                child.sendline("help")
                child.expect_exact("Commands:")
                child.expect_exact("Your move")
            child.sendline(number)
        child.expect_exact("Your move")
        child.sendline("xyz")
        child.expect_exact("is neither an action nor a command")
        child.sendline("quit")
        child.expect_exact("Resume with: packetrow play --load")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    assert json.loads(save.read_text())["format"] == "packetrow-play"
