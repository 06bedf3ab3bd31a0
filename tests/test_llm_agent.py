"""The llm agent (packetrow_agents.llm) against a local chat endpoint that answers with recorded reply styles
(tests/chat_server.py, 127.0.0.1 only): no model runs here. Whole games through the tournament, the retry with the
reason, the fallback, the key from the environment, and the raw replies kept in the transcript and in the tournament's
records."""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from packetrow_agents.chat_endpoint import ChatEndpoint, ChatError
from packetrow_agents.llm import LLMAgent, MoveNotRead, prompt
from packetrow_env.agent_protocol import NoMove
from packetrow_agents.registry import make_agent
from packetrow_arena.records import iter_replay, read_records, validate_file
from packetrow_arena.tournament import run_tournament
from packetrow_cli.main import main
from packetrow_env import Game
from packetrow_env.seat_view import SeatView
from tests.chat_server import ChatServer, listed_moves

# how a model may answer with move n (1-based) of the listed moves: text, its key, or its number, in many styles
STYLES = (
    lambda n, text: f"Move: {text}",
    lambda n, text: str(n),
    lambda n, text: f"Let me think about the boards and my contracts.\n\nFinal answer: {n}",
    lambda n, text: json.dumps({"reasoning": "it fits my hand", "move": text.partition(': ')[0]}),
    lambda n, text: f"```\n{text.upper()}\n```",
    lambda n, text: f"I will go with {text.partition(': ')[0]}.",
    lambda n, text: f"<answer>{n}</answer>",
)
# replies that name no move: the agent must send back the reason and the moves
MALFORMED = ("", "I'm sorry, I can't help with that.", "Move: 99", "take slot 7 of the moon", "take or pass")


def answering(seed: int, malformed: float = 0.3):
    """A recorded-style answer to each request: a random legal move in a random style, or a malformed reply."""
    rng = random.Random(seed)

    def answer(request):
        if rng.random() < malformed:
            return rng.choice(MALFORMED)
        moves = listed_moves(request)
        n = rng.randrange(len(moves)) + 1
        return rng.choice(STYLES)(n, moves[n - 1])

    return answer


def replies(entry: dict) -> list[str]:
    """The raw replies of a decision's attempts (a call that got none has none)."""
    return [attempt["reply"] for attempt in entry["attempts"] if "reply" in attempt]


def test_a_whole_tournament_game_against_the_heuristic_keeps_every_raw_reply(tmp_path):
    with ChatServer(answering(0)) as server:
        agent = LLMAgent(model="recorded", base_url=server.base_url, fallback="random")
        result = run_tournament([agent, "heuristic"], num_players=2, games=2, seed=0, progress=False)
    assert len(result.records) == 2 and all("llm" in record["agents"] for record in result.records)
    played = [entry for entry in agent.transcript if entry["how"] != "forced"]
    assert played and len(server.requests) == sum(len(e["attempts"]) for e in agent.transcript)
    assert [r["json"]["messages"][-1]["content"] for r in server.requests[:1]][0].startswith("Round ")
    assert set(MALFORMED) & {reply for entry in agent.transcript for reply in replies(entry)}  # malformed ones kept
    retried = [entry for entry in agent.transcript if len(entry["attempts"]) > 1 and entry["how"] != "fallback"]
    assert retried and all("error" in a for e in retried for a in e["attempts"][:-1])
    assert all(e["attempts"][-1].keys() == {"reply"} for e in played if e["how"] != "fallback")  # the one read
    summary = agent.summary()
    assert summary["decisions"] == len(agent.transcript) and summary["retried"] == len(retried) + sum(
        len(e["attempts"]) > 1 for e in agent.transcript if e["how"] == "fallback")
    # every decision is matched to its game: the record's agent seed and the move's number there
    for record in result.records:
        seat = record["agents"].index(agent.name)
        mine = [e for e in agent.transcript if e["agent_seed"] == record["agent_seeds"][seat]]
        assert mine and all(record["actions"][e["move_number"]] == e["action"] for e in mine)
        # and the record keeps each of them with its move
        assert [note["move"] for note in record["notes"]] == [e["move_number"] for e in mine]
        assert [note["note"]["attempts"] for note in record["notes"]] == [e["attempts"] for e in mine]
    path = tmp_path / "transcript.jsonl"
    agent.write_transcript(path)
    assert [json.loads(line) for line in path.read_text().splitlines()] == agent.transcript


def scripted(request) -> str:
    """A reply that depends on the request alone (so on no other request, whichever process sends it): the turn's
    hash decides whether the model answers well (the second move listed), answers well only when asked again (a
    rethink), or never answers a move (the fallback moves)."""
    turn = request["messages"][1]["content"]
    kind = int(hashlib.sha256(turn.encode()).hexdigest(), 16) % 4
    asked_again = len(request["messages"]) > 2
    if kind == 0 or (kind == 1 and not asked_again):
        return "I'm not sure." if asked_again else "Move: 99"
    return f"Thinking it over...\nMove: {listed_moves(request)[1]}"


def test_tournament_records_keep_every_reply_with_its_move(tmp_path, capsys):
    with ChatServer(scripted) as server:
        spec = f"llm:model=m,base_url={server.base_url},retries=1,fallback=heuristic"
        argv = ["tournament", "--agents", f"{spec},heuristic", "--players", "2", "--games", "2", "--seed", "3",
                "--no-progress", "--out"]
        assert main([*argv, str(tmp_path / "one")]) == 0
        sent = [request["json"] for request in server.requests]
        assert main([*argv, str(tmp_path / "two"), "--workers", "2", "--chunk-size", "1"]) == 0
    path = tmp_path / "one" / "records.jsonl"
    assert (tmp_path / "two" / "records.jsonl").read_bytes() == path.read_bytes()  # deterministic: the same bytes
    assert validate_file(path) == 3
    records = read_records(path)
    notes = []
    for game in records.games:
        seat = game["agents"].index(spec)
        moves = [move for move, (_, mover, _) in enumerate(iter_replay(records, game["index"])) if mover == seat]
        assert [note["move"] for note in game["notes"]] == moves  # each of the llm's moves, and only those
        assert all(note["seat"] == seat for note in game["notes"])
        notes += [note["note"] for note in game["notes"]]
    # every raw reply, in the order the server was asked
    assert [reply for note in notes for reply in replies(note)] == [scripted(request) for request in sent]
    hows = {note["how"] for note in notes}
    assert {"forced", "fallback", "string"} <= hows
    rethought = [note for note in notes if note["how"] == "string" and len(note["attempts"]) == 2]
    assert rethought and all(note["attempts"][0]["reply"] == "Move: 99" and note["attempts"][1].keys() == {"reply"}
                             and note["attempts"][0]["error"].startswith("there is no move 99") for note in rethought)
    fallen = [note for note in notes if note["how"] == "fallback"]
    assert fallen and all(note["fallback"] == "heuristic" and [a["reply"] for a in note["attempts"]] == [
        "Move: 99", "I'm not sure."] and all("error" in a for a in note["attempts"]) for note in fallen)
    assert all(note["attempts"] == [] for note in notes if note["how"] == "forced")
    capsys.readouterr()
    game = next(game for game in records.games if any(n["note"]["how"] == "fallback" for n in game["notes"]))
    assert main(["replay", str(path), "--game", str(game["index"]), "--notes"]) == 0
    shown = capsys.readouterr().out
    assert '"reply": "Move: 99"' in shown and '"fallback": "heuristic"' in shown and "Replayed scores match" in shown
    assert main(["replay", str(path), "--game", str(game["index"])]) == 0
    assert '"reply"' not in capsys.readouterr().out


def test_a_tournament_whose_llm_cannot_move_stops_with_one_line_and_keeps_its_finished_games(tmp_path, capsys):
    with ChatServer(lambda request: "No idea.") as server:  # a model that never names a move
        spec = f"llm:model=m,base_url={server.base_url},retries=0,fallback=none"
        status = main(["tournament", "--agents", f"{spec},heuristic", "--players", "2", "--games", "2",
                       "--no-progress", "--workers", "1", "--chunk-size", "1", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 1 and len(err) == 1, err
    assert err[0].startswith("packetrow tournament: error: ") and "gave no legal move in 1 tries" in err[0]
    assert "in tournament game " in err[0] and "Traceback" not in err[0]
    assert err[0].endswith(f"the finished games are in {tmp_path / 'run' / 'records.jsonl'} (--resume plays the rest)")
    assert isinstance(MoveNotRead("x"), NoMove)


def test_a_reply_it_cannot_read_is_sent_back_with_the_reason_and_the_moves():
    answers = iter(["Move: 99", "I'm not sure.", "2"])
    with ChatServer(lambda request: next(answers)) as server:
        agent = LLMAgent(model="m", base_url=server.base_url, retries=2)
        game = Game.new(2, seed=0)
        action = agent.act(SeatView(game))
    assert action == game.legal_actions()[1]
    messages = server.requests[-1]["json"]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert messages[2]["content"] == "Move: 99"
    assert "there is no move 99: the moves are numbered 1-4" in messages[3]["content"]
    assert "1. choose the guildhall" in messages[3]["content"]
    entry = agent.transcript[-1]
    assert replies(entry) == ["Move: 99", "I'm not sure.", "2"] and entry["how"] == "number"
    assert entry["attempts"][1]["error"].startswith("it names none of the legal moves")
    assert agent.move_note() == {"attempts": entry["attempts"], "move": "choose the docks", "how": "number"}


def test_after_the_last_try_the_fallback_moves_or_with_none_the_move_is_not_read():
    with ChatServer(lambda request: "no idea") as server:
        game = Game.new(2, seed=0)
        agent = LLMAgent(model="m", base_url=server.base_url, retries=1, fallback="heuristic")
        action = agent.act(SeatView(game))
        assert action == make_agent("heuristic").act(SeatView(game))
        assert agent.transcript[-1]["how"] == "fallback" and len(server.requests) == 2
        assert agent.move_note()["fallback"] == "heuristic" and replies(agent.move_note()) == ["no idea"] * 2
        strict = make_agent(f"llm:model=m,base_url={server.base_url},retries=0,fallback=none")
        with pytest.raises(MoveNotRead, match="gave no legal move in 1 tries: it names none of the legal moves"):
            strict.act(SeatView(game))
        assert strict.transcript[-1]["how"] == "forfeit" and "move" not in strict.transcript[-1]


def test_a_failed_call_counts_as_a_try():
    answers = iter([(500, '{"error": "overloaded"}'), (200, "not json"), (200, '{"choices": []}'), "pass"])
    with ChatServer(lambda request: next(answers)) as server:
        agent = LLMAgent(model="m", base_url=server.base_url, retries=3)
        game = Game.new(2, seed=0)
        game.step(0)  # the guildhall: the next seat takes or passes
        assert agent.act(SeatView(game)) == 10
    attempts = agent.transcript[-1]["attempts"]
    assert [attempt.keys() for attempt in attempts] == [{"error"}] * 3 + [{"reply"}]  # no reply, then one read
    assert "answered HTTP 500" in attempts[0]["error"] and "not JSON" in attempts[1]["error"]
    assert "not a chat completion" in attempts[2]["error"]
    unreachable = LLMAgent(model="m", base_url=server.base_url, retries=0, timeout=5)  # the server is closed now
    unreachable.act(SeatView(game))
    assert unreachable.transcript[-1]["how"] == "fallback"
    assert unreachable.transcript[-1]["attempts"][0]["error"].startswith("cannot reach http://127.0.0.1:")


def test_the_key_comes_from_the_environment_only(monkeypatch):
    monkeypatch.setenv("PACKETROW_TEST_KEY", "sk-test")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ChatServer(lambda request: "1") as server:
        game = Game.new(2, seed=0)
        make_agent(f"llm:model=m,base_url={server.base_url},key_env=PACKETROW_TEST_KEY").act(SeatView(game))
        make_agent(f"llm:model=m,base_url={server.base_url}").act(SeatView(game))
    assert [r["authorization"] for r in server.requests] == ["Bearer sk-test", None]
    assert server.requests[0]["json"]["model"] == "m" and server.requests[0]["json"]["temperature"] == 0.0
    with pytest.raises(ValueError, match="unknown option 'api_key' for agent 'llm'"):
        make_agent("llm:model=m,api_key=sk-secret")


def test_the_json_view_is_sent_as_json():
    with ChatServer(lambda request: "1") as server:
        make_agent(f"llm:model=m,base_url={server.base_url},view=json").act(SeatView(Game.new(3, seed=1)))
    turn = server.requests[0]["json"]["messages"][1]["content"]
    view = json.loads(turn[:turn.rindex("}") + 1])
    assert view["legal_moves"][0] == "choose the guildhall" and view["seat"] == 0


def test_a_forced_move_asks_no_model():
    game = Game.new(2, seed=0)
    while len(game.legal_actions()) > 1:
        game.step(game.legal_actions()[-1])
    agent = LLMAgent(model="m", base_url="http://127.0.0.1:9/v1")  # nothing listens there: it is never called
    assert agent.act(SeatView(game)) == game.legal_actions()[0] and agent.transcript[-1]["how"] == "forced"


@pytest.mark.parametrize("spec, message", [
    ("llm", "needs a model"), ("llm:model=m,view=xml", "view must be one of text, json"),
    ("llm:model=m,retries=11", "retries must be an integer from 0 to 10"),
    ("llm:model=m,fallback=llm", "cannot be another llm agent"),
    ("llm:model=m,fallback=nobody", "unknown agent 'nobody'"),
    ("llm:model=m,base_url=file:///etc/passwd", r"base_url must be an http\(s\) address")])
def test_bad_options_say_what_is_allowed(spec, message):
    with pytest.raises(ValueError, match=message):
        make_agent(spec)


def test_the_prompts_ship_in_the_package():
    assert "Move: <" in prompt("system") and "{view}" in prompt("turn") and "{error}" in prompt("rethink")
    with pytest.raises(ChatError, match="cannot reach"):
        ChatEndpoint("http://127.0.0.1:9/v1", "m", timeout=5).complete([{"role": "user", "content": "hi"}])
