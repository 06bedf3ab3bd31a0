"""The web app's HTTP API (packetrow serve): full games, refused requests, no hidden card (R-INFO), replays."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

pytest.importorskip("flask")

from packetrow_agents.play import read_save  # noqa: E402
from packetrow_arena.replay import replay_game  # noqa: E402
from packetrow_env.engine import Game  # noqa: E402
from packetrow_cli.main import main  # noqa: E402
from packetrow_arena.tournament import load_games, run_tournament  # noqa: E402
from packetrow_web import create_app  # noqa: E402
from packetrow_web.sessions import PlaySession, Replay  # noqa: E402
from tests.test_leaks import random_position, twins  # noqa: E402


@pytest.fixture()
def app(tmp_path):
    return create_app(tmp_path / "saves")


@pytest.fixture()
def client(app):
    return app.test_client()


def session_of(app, view) -> PlaySession:
    return app.config["SESSIONS"].get(view["id"], PlaySession)


def new_game(client, **options) -> dict:
    response = client.post("/api/games", json=options)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def play_to_end(client, view, rng) -> tuple[dict, int]:
    """Play a game through the API, the person choosing uniformly among the offered actions; (last view, requests)."""
    requests = 0
    while not view["over"]:
        if view["current_player"] == view["you"]:
            assert view["actions"], "the person is to act but no action is offered"
            action = view["actions"][int(rng.integers(len(view["actions"])))]["id"]
            response = client.post(f"/api/games/{view['id']}/act", json={"action": action})
        else:
            assert view["actions"] == [] and view["waiting_for"]
            response = client.post(f"/api/games/{view['id']}/advance")
        assert response.status_code == 200, response.get_json()
        view = response.get_json()
        requests += 1
    return view, requests


# --------------------------------------------------------------------------- playing
@pytest.mark.parametrize("players, seat", [(2, 0), (3, 2), (5, 1)])
def test_a_full_game_through_the_api_ends_with_the_engines_scores(app, client, players, seat):
    view = new_game(client, players=players, seat=seat, opponents=["random"], seed=players)
    assert view["you"] == seat and view["num_players"] == players and view["kind"] == "play"
    final, requests = play_to_end(client, view, np.random.default_rng(seat))
    game = session_of(app, view).game
    assert game.is_over and requests == len(game.state.history)
    expected = game.scores()
    assert [{k: row[k] for k in expected[0]} for row in final["scores"]] == expected
    assert final["actions"] == [] and final["current_player"] is None
    assert any("Final scores" in line for line in final["log"])


def test_the_default_game_is_two_players_against_the_shipped_agent(client):
    view = client.post("/api/games").get_json()
    assert view["num_players"] == 2 and view["opponents"] == ["ppo"] and view["you"] == 0
    assert len(view["boards"]) == 4 and all(len(b["future"]) == 2 for b in view["boards"])
    assert view["actions"] and all({"id", "name", "text", "group"} <= set(a) for a in view["actions"])


def test_a_bot_move_is_one_request_and_is_narrated(client):
    view = new_game(client, players=2, seat=1, opponents=["heuristic"], seed=3)
    assert view["current_player"] == 0 and view["waiting_for"] == "player 0 (heuristic)"
    after = client.post(f"/api/games/{view['id']}/advance").get_json()
    assert after["log"] and after["log"][0].startswith("player 0 (heuristic) chooses the ")


def test_several_games_at_once_do_not_interfere(app, client):
    views = [new_game(client, players=n, opponents=["random"], seed=10 + n) for n in (2, 3, 4)]
    results = {}

    def run(view, k):
        results[k] = play_to_end(app.test_client(), view, np.random.default_rng(k))[0]

    threads = [threading.Thread(target=run, args=(view, k)) for k, view in enumerate(views)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for k, view in enumerate(views):
        alone = Game.new(view["num_players"], seed=10 + view["num_players"])
        game = session_of(app, view).game
        for action in game.state.history:  # each game's moves replay on its own deal: nothing crossed over
            alone.step(action)
        assert alone.to_dict() == game.to_dict()
        assert [row["vp"] for row in results[k]["scores"]] == [row["vp"] for row in game.scores()]


def test_concurrent_requests_on_one_game_are_serialised(app, client):
    view = new_game(client, players=4, seat=0, opponents=["random"], seed=5)
    client.post(f"/api/games/{view['id']}/act", json={"action": view["actions"][0]["id"]})
    codes = []

    def advance():
        codes.append(app.test_client().post(f"/api/games/{view['id']}/advance").status_code)

    threads = [threading.Thread(target=advance) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    game = session_of(app, view).game
    assert set(codes) <= {200, 409} and codes.count(200) == len(game.state.history) - 1
    Game.from_dict(game.to_dict())  # a consistent position


# --------------------------------------------------------------------------- refused requests
def snapshot(app, view):
    session = session_of(app, view)
    return json.dumps(session.game.to_dict()), list(session.log)


@pytest.mark.parametrize("body, status, message", [
    ({"action": 10_000}, 409, "not legal now"),
    ({"action": -1}, 409, "not legal now"),
    ({"action": "pass"}, 400, "must be an action id"),
    ({"action": True}, 400, "must be an action id"),
    ({"action": 1.5}, 400, "must be an action id"),
    ({}, 400, "send {'action'"),
    ([1, 2], 400, "must be a JSON object"),
])
def test_bad_moves_are_refused_and_change_nothing(app, client, body, status, message):
    view = new_game(client, players=3, opponents=["random"], seed=1)
    before = snapshot(app, view)
    response = client.post(f"/api/games/{view['id']}/act", json=body)
    assert response.status_code == status and message in response.get_json()["error"]
    assert snapshot(app, view) == before


def test_illegal_actions_malformed_json_and_wrong_turns_change_nothing(app, client):
    view = new_game(client, players=3, opponents=["random"], seed=2)
    key = view["id"]
    before = snapshot(app, view)
    legal = {a["id"] for a in view["actions"]}
    illegal = next(a for a in range(48) if a not in legal)
    response = client.post(f"/api/games/{key}/act", json={"action": illegal})
    assert response.status_code == 409 and f"action {illegal} is not legal now" in response.get_json()["error"]
    response = client.post(f"/api/games/{key}/act", data="{not json", content_type="application/json")
    assert response.status_code == 400 and "not valid JSON" in response.get_json()["error"]
    response = client.post(f"/api/games/{key}/advance")
    assert response.status_code == 409 and "your move" in response.get_json()["error"]
    assert snapshot(app, view) == before
    client.post(f"/api/games/{key}/act", json={"action": view["actions"][0]["id"]})  # now a bot is to act
    moved = snapshot(app, view)
    response = client.post(f"/api/games/{key}/act", json={"action": 10})
    assert response.status_code == 409 and "not your move" in response.get_json()["error"]
    assert snapshot(app, view) == moved


def test_unknown_ids_and_routes_get_json_errors(client):
    for method, path in [("get", "/api/games/nope"), ("post", "/api/games/nope/act"), ("post", "/api/games/nope/advance"),
                         ("get", "/api/watch/nope/0"), ("get", "/api/nothing")]:
        response = getattr(client, method)(path, json={"action": 0})
        assert response.status_code == 404 and response.is_json and response.get_json()["error"]
    response = client.get("/api/games")
    assert response.status_code == 405 and response.get_json()["error"]


@pytest.mark.parametrize("options, message", [
    ({"players": 6}, "players must be an integer from 2 to 5"),
    ({"players": "3"}, "players must be an integer"),
    ({"players": 3, "seat": 3}, "seat must be an integer from 0 to 2"),
    ({"opponents": ["bogus"]}, "unknown agent 'bogus'"),
    ({"opponents": ["ismcts:iter=5"]}, "unknown option 'iter'"),
    ({"players": 4, "opponents": ["random", "random"]}, "lists 2 agents for a 4-player game"),
    ({"opponents": []}, "opponents must be a list"),
    ({"colour": "red"}, "unknown option 'colour'"),
    ({"seed": -1}, "seed must be an integer"),
    # one spec parser (packetrow_agents.registry.split_specs) for every list of agents
    ({"opponents": "random,,random"}, "empty agent spec at position 2 of 3"),
    ({"opponents": "ppo:a.npz,path=C:/x.npz"}, "option 'path' is given twice"),
])
def test_bad_options_are_refused(app, client, options, message):
    response = client.post("/api/games", json=options)
    assert response.status_code == 400 and message in response.get_json()["error"]
    assert not app.config["SESSIONS"]._items


# --------------------------------------------------------------------------- no hidden card (R-INFO)
def saved_text(position: dict, seat: int, opponents="random") -> str:
    n = position["num_players"]
    return json.dumps({"format": "packetrow-play", "format_version": 1, "seat": seat, "seed": 7,
                       "opponents": [opponents] * (n - 1), "game": position})


def page_view(client, position: dict, seat: int) -> dict:
    """Everything the page is sent for ``seat`` after loading a position: the view, and after an illegal move."""
    response = client.post("/api/games/load", json={"text": saved_text(position, seat)})
    assert response.status_code == 200, response.get_json()
    view = response.get_json()
    key = view.pop("id")
    fetched = client.get(f"/api/games/{key}").get_json()
    fetched.pop("id")
    refused = client.post(f"/api/games/{key}/act", json={"action": 9999}).get_json()
    return {"view": json.dumps(view, sort_keys=True), "fetched": json.dumps(fetched, sort_keys=True),
            "refused": json.dumps(refused, sort_keys=True)}


CASES = [(n, seed, steps) for n in (2, 3, 4, 5) for seed, steps in ((n, 0), (10 + n, 25), (20 + n, 70), (30 + n, 140))]


@pytest.mark.parametrize("n, seed, steps", CASES)
def test_hidden_twins_get_identical_responses(client, n, seed, steps):
    """R-INFO-2: positions differing only in what the person's seat cannot know give byte-identical responses."""
    position = random_position(n, seed, steps)
    rng = np.random.default_rng(seed)
    exercised = 0
    for seat in range(n):
        base = page_view(client, position, seat)
        for name, twin in twins(position, seat, rng, "tracked"):
            assert page_view(client, twin, seat) == base, (name, seat)
            exercised += 1
    assert exercised >= 2 * n


def test_the_twin_check_can_fail(client):
    """A public change (cash) and the full view of a twin both change what is sent: the comparison sees cards."""
    position = random_position(3, 4, 60)
    seat = 0
    changed = json.loads(json.dumps(position))
    changed["players"][1]["cash"] += 1
    assert page_view(client, changed, seat) != page_view(client, position, seat)
    twin = next(t for name, t in twins(position, seat, np.random.default_rng(0)) if name.startswith("start of seat"))
    full = [json.dumps(Replay.parse(json.dumps(p)).view(0, 0, None)["players"]) for p in (position, twin)]
    assert full[0] != full[1]
    seat_views = [json.dumps(Replay.parse(json.dumps(p)).view(0, 0, seat)["players"]) for p in (position, twin)]
    assert seat_views[0] == seat_views[1]


def test_no_response_carries_a_deck_or_a_card_id(client):
    view = new_game(client, players=2, opponents=["random"], seed=9)
    text = json.dumps(view)
    for word in ('"deck":[', '"removed"', '"rng"', '"starting_contract"', '"history"'):
        assert word not in text.replace(" ", "")

    def cards(node):
        if isinstance(node, dict):
            if "kind" in node and "text" in node:
                yield node
            for value in node.values():
                yield from cards(value)
        elif isinstance(node, list):
            for value in node:
                yield from cards(value)

    shown = list(cards(view))
    assert len(shown) > 10 and not any("id" in card for card in shown)
    assert all(isinstance(b["deck"], int) for b in view["boards"])
    opponent = view["players"][1]
    assert opponent["hidden_cards"] == 1 and opponent["holds_starting_contract"] is True and opponent["hand"] == []


# --------------------------------------------------------------------------- save and resume
def test_save_and_resume_use_the_terminal_format(app, client, tmp_path):
    view = new_game(client, players=3, seat=1, opponents=["heuristic", "random"], seed=4)
    view, _ = (client.post(f"/api/games/{view['id']}/advance").get_json(), None)
    response = client.post(f"/api/games/{view['id']}/save", json={"name": "mine"})
    assert response.status_code == 200 and response.get_json()["saved"] == "mine.json"
    saved = read_save(str(tmp_path / "saves" / "mine.json"))  # what 'packetrow play --load' reads
    assert saved["seat"] == 1 and saved["opponents"] == ["heuristic", "random"] and saved["seed"] == 4
    assert saved["game"].to_dict() == session_of(app, view).game.to_dict()
    assert client.get("/api/saves").get_json()["saves"][0]["name"] == "mine.json"
    resumed = client.post("/api/games/load", json={"name": "mine.json"}).get_json()
    uploaded = client.post("/api/games/load", json={"text": (tmp_path / "saves" / "mine.json").read_text()}).get_json()
    for other in (resumed, uploaded):
        assert other["id"] != view["id"]
        # the log (and its move numbers, log_moves) is the session's own: a resumed game's starts afresh
        assert {k: v for k, v in other.items() if k not in ("id", "log", "log_moves")} == \
               {k: v for k, v in view.items() if k not in ("id", "log", "log_moves")}
    final, _ = play_to_end(client, resumed, np.random.default_rng(0))
    assert final["over"]


@pytest.mark.parametrize("body, status, message", [
    ({"name": "../secret.json"}, 400, "no saved game"),
    ({"name": "absent.json"}, 404, "no saved game 'absent.json'"),
    ({"text": "{"}, 400, "not valid JSON"),
    ({"text": "[1]"}, 400, "not a saved Packet Row game"),
    ({"text": json.dumps({"format": "packetrow-play", "format_version": 9})}, 400, "unsupported save format"),
    ({"text": json.dumps(Game.new(2, seed=0).to_dict())}, 400, "Watch tab"),
    ({}, 400, "send {'name'"),
])
def test_bad_loads_are_refused(client, body, status, message):
    response = client.post("/api/games/load", json=body)
    assert response.status_code == status and message in response.get_json()["error"], response.get_json()


def test_bad_save_names_are_refused(client, tmp_path):
    view = new_game(client, players=2, opponents=["random"], seed=0)
    for name in ("../up", "/abs", "", "a/b", 5):
        response = client.post(f"/api/games/{view['id']}/save", json={"name": name})
        assert response.status_code == 400 and "save name" in response.get_json()["error"]
    assert not (tmp_path / "up.json").exists()


# --------------------------------------------------------------------------- watching
@pytest.fixture(scope="module")
def tournament_file(tmp_path_factory):
    result = run_tournament(["heuristic", "random", "random"], num_players=3, games=3, seed=2, progress=False)
    games_path, _ = result.write(tmp_path_factory.mktemp("tournament"))
    return games_path


@pytest.mark.parametrize("name", ["games.jsonl", "records.jsonl"])
def test_watching_a_tournament_game_shows_the_replayed_scores(client, tournament_file, name):
    """Acceptance: the final scores shown equal those 'packetrow replay' checks (the recorded and replayed ones), from
    the games file and from the record file (packetrow_arena.records) written beside it."""
    text = (tournament_file.parent / name).read_text()
    response = client.post("/api/watch", json={"text": text, "name": name})
    assert response.status_code == 200, response.get_json()
    answer = response.get_json()
    assert [g["index"] for g in answer["games"]] == [0, 1, 2]
    for record in load_games(tournament_file):
        first = client.get(f"/api/watch/{answer['id']}/{record['index']}?move=0&seat=full").get_json()
        moves = first["moves"]
        assert moves == len(record["actions"]) and first["next"]
        last = client.get(f"/api/watch/{answer['id']}/{record['index']}?move={moves}&seat=1").get_json()
        shown = [{k: row[k] for k in record["scores"][0]} for row in last["scores"]]
        assert shown == record["scores"] == replay_game(record).scores()
        assert last["next"] is None and len(last["history"]) == moves


def test_a_record_file_with_notes_is_watched_as_one_without(client, tournament_file):
    """Notes (an agent's per-move annotations, such as the llm agent's raw replies) change nothing Watch shows."""
    header, *games = (tournament_file.parent / "records.jsonl").read_text().splitlines()
    noted = [json.dumps({**json.loads(game), "notes": [{"move": 0, "seat": 0, "note": {
        "attempts": [{"reply": "Move: 99", "error": "there is no move 99"}, {"reply": "1"}], "how": "number"}}]})
        for game in games]
    answers = [client.post("/api/watch", json={"text": "\n".join([header, *lines]), "name": "records.jsonl"})
               for lines in (games, noted)]
    assert [answer.status_code for answer in answers] == [200, 200]
    plain, with_notes = (answer.get_json() for answer in answers)
    assert with_notes["games"] == plain["games"]
    shown = [client.get(f"/api/watch/{answer['id']}/1?move=5&seat=0").get_json() for answer in (plain, with_notes)]
    first, second = ({**view, "id": None} for view in shown)  # each watched file has its own id
    assert first == second


def test_a_record_file_of_another_version_is_refused_naming_the_line(client, tournament_file):
    lines = (tournament_file.parent / "records.jsonl").read_text().splitlines()
    header = json.loads(lines[0])
    text = "\n".join([json.dumps({**header, "version": 99})] + lines[1:])
    response = client.post("/api/watch", json={"text": text, "name": "old.jsonl"})
    assert response.status_code == 400 and response.get_json()["error"].startswith(
        "old.jsonl, line 1: record format version 99")


def test_watching_from_a_seat_hides_what_that_seat_cannot_know(client, tournament_file):
    answer = client.post("/api/watch", json={"text": tournament_file.read_text()}).get_json()
    seat_view = client.get(f"/api/watch/{answer['id']}/0?move=10&seat=0").get_json()
    full_view = client.get(f"/api/watch/{answer['id']}/0?move=10&seat=full").get_json()
    assert seat_view["mode"] == "tracked" and full_view["mode"] == "full"
    assert [p["hidden_cards"] for p in seat_view["players"]] == [0, 1, 1]
    assert [p["hidden_cards"] for p in full_view["players"]] == [0, 0, 0]
    starts = [sum(c["starting"] for g in p["hand"] for c in g["cards"] if c["kind"] == "contract")
              for p in full_view["players"]]
    assert starts == [1, 1, 1]


def test_watching_a_saved_game_replays_its_moves(app, client):
    view = new_game(client, players=2, opponents=["random"], seed=8)
    for _ in range(12):
        if view["current_player"] == view["you"]:
            view = client.post(f"/api/games/{view['id']}/act", json={"action": view["actions"][0]["id"]}).get_json()
        else:
            view = client.post(f"/api/games/{view['id']}/advance").get_json()
    saved = json.dumps(session_of(app, view).saved())
    answer = client.post("/api/watch", json={"text": saved, "name": "game.json"}).get_json()
    moves = len(session_of(app, view).game.state.history)
    assert answer["games"][0]["moves"] == moves
    last = client.get(f"/api/watch/{answer['id']}/0?move={moves}&seat=0").get_json()
    assert last["round"] == view["round"] and last["boards"] == view["boards"]


@pytest.mark.parametrize("text, message", [
    ("", "send the file's text"),
    (json.dumps({"num_players": 2, "seed": 0, "actions": [], "scores": []}) + "\nnot json", "line 2: not a JSON game"),
    ("{\"x\": 1}", "lacks num_players, seed, actions, scores"),
    (json.dumps({"num_players": 9, "seed": 0, "actions": [], "scores": []}), "num_players must be 2-5"),
])
def test_bad_watch_files_are_refused(client, text, message):
    response = client.post("/api/watch", json={"text": text, "name": "f"})
    assert response.status_code == 400 and message in response.get_json()["error"], response.get_json()


def test_a_tampered_record_is_refused(client, tournament_file):
    record = load_games(tournament_file)[0]
    record["scores"][0]["vp"] += 5
    answer = client.post("/api/watch", json={"text": json.dumps(record)}).get_json()
    response = client.get(f"/api/watch/{answer['id']}/0?move=0")
    assert response.status_code == 422 and "the file records" in response.get_json()["error"]
    for query, message in (("move=999", "move must be from 0 to"), ("move=x", "move must be a move number"),
                           ("seat=7", "seat must be from 0 to"), ("seat=me", "seat must be a seat number")):
        good = client.post("/api/watch", json={"text": tournament_file.read_text()}).get_json()
        response = client.get(f"/api/watch/{good['id']}/0?{query}")
        assert response.status_code == 400 and message in response.get_json()["error"]
    response = client.get(f"/api/watch/{answer['id']}/5")
    assert response.status_code == 404 and "no game 5" in response.get_json()["error"]


# --------------------------------------------------------------------------- the command
def test_serve_is_a_packetrow_command(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["serve", "--help"])
    assert stop.value.code == 0
    text = capsys.readouterr().out
    for flag in ("--host", "--port", "--open", "--save-dir"):
        assert flag in text


def test_the_page_and_its_files_are_served(client):
    page = client.get("/")
    assert page.status_code == 200 and b"Packet Row" in page.data and b"/static/app.js" in page.data
    for name in ("app.js", "style.css"):
        assert client.get(f"/static/{name}").status_code == 200


def test_the_pay_phase_offers_each_payment_with_the_cards_it_gives_up(app, client):
    """R-SHIP-7: when a shipment can be paid in several ways, the page gets one button per option and its cards."""
    from packetrow_env import actions

    for seed in range(80):
        view = new_game(client, players=2, opponents=["heuristic"], seed=seed)
        rng = np.random.default_rng(seed)
        while not view["over"]:
            if view["current_player"] != view["you"]:
                view = client.post(f"/api/games/{view['id']}/advance").get_json()
                continue
            pays = [a for a in view["actions"] if a["group"] == "pay"]
            if pays:
                break
            shipping = [a for a in view["actions"] if a["group"] in ("contract", "ship")]
            choice = shipping or view["actions"]
            view = client.post(f"/api/games/{view['id']}/act",
                               json={"action": choice[int(rng.integers(len(choice)))]["id"]}).get_json()
        if not view["over"]:
            break
    assert view["phase"] == "pay" and len(pays) >= 2, "no pay phase reached"
    session = session_of(app, view)
    options = session.game.payment_options()
    assert [a["id"] for a in pays] == [actions.PAY + k for k in range(len(options))]
    for action, option in zip(pays, options):
        assert [card["name"] for card in action["payment"]] == [session.game.cards.describe(c) for c in option]
        assert action["text"].startswith("pay ")
    before = snapshot(app, view)
    response = client.post(f"/api/games/{view['id']}/act", json={"action": actions.PAY + len(options)})
    assert response.status_code == 409 and snapshot(app, view) == before
    after = client.post(f"/api/games/{view['id']}/act", json={"action": pays[-1]["id"]}).get_json()
    assert after["phase"] != "pay" and not any(a["group"] == "pay" for a in after["actions"])


# --------------------------------------------------------------------------- what the server depends on
def test_the_web_app_uses_the_play_module_not_the_terminal_nor_training():
    import subprocess
    import sys
    code = ("import sys, packetrow_web.app, packetrow_web.sessions\n"
            "print(sorted(m for m in sys.modules if m.startswith('packetrow_train') or m == 'packetrow_agents.terminal'))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def test_sessions_annotations_resolve(tmp_path):
    import typing

    from packetrow_web.sessions import Sessions
    assert "save_dir" in typing.get_type_hints(Sessions.__init__)  # os.PathLike: os is imported
    assert Sessions(tmp_path / "saves").save_dir == tmp_path / "saves"


def test_the_browser_and_the_terminal_seat_the_same_bots():
    from packetrow_agents.play import Session
    from packetrow_agents.terminal import TerminalGame

    specs = ["random", "heuristic"]
    web = PlaySession(Game.new(3, seed=4), 1, specs, 4)
    terminal = TerminalGame(Game.new(3, seed=4), 1, specs, 4)
    assert isinstance(web, Session) and isinstance(terminal, Session)
    assert web.names == terminal.names == ["random", "you", "heuristic"]
    assert web.game.current_player == 0  # the random bot, seeded alike: the same draws
    assert [web.bot_move(0) for _ in range(8)] == [terminal.bot_move(0) for _ in range(8)]


def test_R_SHIP_7_every_payment_is_choosable_in_the_browser(client):
    """A pay decision of 22 options (tests/test_rules_pay_pages.py): the view offers the first page's 12 and 'more'
    (the page's 'More ways to pay…'), which shows the other 10; paying with one of them is a legal move."""
    from packetrow_env.actions import MORE
    from tests.test_rules_pay_pages import HAND_22, paying

    game = paying(HAND_22)
    view = client.post("/api/games/load", json={"text": saved_text(game.to_dict(), 0)}).get_json()
    groups = [a["group"] for a in view["actions"]]
    assert groups.count("pay") == 12 and groups.count("more") == 1
    view = client.post(f"/api/games/{view['id']}/act", json={"action": MORE, "move": view["move"]}).get_json()
    pays = [a for a in view["actions"] if a["group"] == "pay"]
    assert len(pays) == 10 and not any(a["group"] == "more" for a in view["actions"])
    game.step(MORE)
    assert [a["id"] for a in pays] == [a for a in game.legal_actions() if a != MORE]
    paid = client.post(f"/api/games/{view['id']}/act", json={"action": pays[-1]["id"], "move": view["move"]})
    assert paid.status_code == 200 and paid.get_json()["move"] == view["move"] + 1
