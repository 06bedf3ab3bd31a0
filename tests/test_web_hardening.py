"""The web API as a hostile user or a careless one meets it (issue 31): no 500, no lost game, no file probe,
no request from another site, no stale move, bounded memory. One test (or a few) per row of the issue's table.
"""

from __future__ import annotations

import json
import socket
import threading

import numpy as np
import pytest

pytest.importorskip("flask")

from packetrow_agents.play import read_save  # noqa: E402
from packetrow_env.engine import Game  # noqa: E402
from packetrow_env.seat_view import SeatView  # noqa: E402
from packetrow_cli.main import main  # noqa: E402
from packetrow_arena.tournament import load_games, run_tournament  # noqa: E402
from packetrow_web import create_app  # noqa: E402
from packetrow_web.app import MAX_UPLOAD  # noqa: E402
from packetrow_web.opponents import OFFERED, OpponentRule  # noqa: E402
from packetrow_web.sessions import PlaySession, Replay, Sessions  # noqa: E402
from packetrow_web.views import hand_groups  # noqa: E402
from tests.test_leaks import random_position, twins  # noqa: E402
from tests.test_web import new_game, play_to_end, saved_text, session_of, snapshot  # noqa: E402


@pytest.fixture()
def app(tmp_path):
    return create_app(tmp_path / "saves")


@pytest.fixture()
def client(app):
    return app.test_client()


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    result = run_tournament(["heuristic", "random"], num_players=2, games=3, seed=5, progress=False)
    path, _ = result.write(tmp_path_factory.mktemp("tournament"))
    return load_games(path)


def error_of(response, status):
    assert response.status_code == status, (response.status_code, response.get_data(as_text=True)[:300])
    assert response.is_json
    return response.get_json()["error"]


# --------------------------------------------------------------------------- crashes: always a 4xx JSON error
def test_a_deeply_nested_body_is_a_400_on_every_post_route(app, client):
    key = new_game(client, opponents=["random"], seed=1)["id"]
    deep = "[" * 100_000 + "]" * 100_000
    for path in ("/api/games", "/api/games/load", f"/api/games/{key}/act", f"/api/games/{key}/advance",
                 f"/api/games/{key}/save", "/api/watch"):
        message = error_of(client.post(path, data=deep, content_type="application/json"), 400)
        assert "nested too deeply" in message, path
    assert app.config["SESSIONS"].counts()["games"] == 1


@pytest.mark.parametrize("query", ["move=%C2%B2", "move=%E2%91%A0", "seat=%C2%B2", "seat=%E2%91%A0",
                                   "move=" + "9" * 4400, "seat=" + "7" * 4400, "move=-1", "move=1e3", "move=%20"],
                         ids=lambda q: q[:16])
def test_watch_numbers_that_are_not_plain_digits_are_a_400(client, records, query):
    key = client.post("/api/watch", json={"text": json.dumps(records[0])}).get_json()["id"]
    assert "must be" in error_of(client.get(f"/api/watch/{key}/0?{query}"), 400)


@pytest.mark.parametrize("index", ["%C2%B2", "%E2%91%A0", "9" * 4400, "-1"], ids=lambda i: i[:8])
def test_watch_game_numbers_that_are_not_plain_digits_are_a_404(client, records, index):
    key = client.post("/api/watch", json={"text": json.dumps(records[0])}).get_json()["id"]
    assert error_of(client.get(f"/api/watch/{key}/{index}"), 404)


@pytest.mark.parametrize("field, value, message", [
    ("seed", None, "seed must be an integer"), ("seed", [1], "seed must be an integer"),
    ("seed", float("inf"), "seed must be an integer"), ("seed", -3, "seed must be an integer"),
    ("seed", 2**70, "seed must be an integer"), ("seed", True, "seed must be an integer"),
    ("scores", None, "scores must be a list"), ("scores", [1, 2], "scores must be a list"),
    ("scores", [{"vp": float("nan")}], "scores must be a list"), ("scores", {"vp": 1}, "scores must be a list"),
    ("index", "zero", "index must be a game number"), ("index", [0], "index must be a game number"),
    ("actions", [300], "actions must be a list"), ("actions", [1.5], "actions must be a list"),
])
def test_a_record_with_a_bad_field_is_refused_when_opened(client, records, field, value, message):
    record = dict(records[0], **{field: value})
    text = json.dumps(record)  # Infinity and NaN as Python writes them: the page may be sent such a file
    assert message in error_of(client.post("/api/watch", json={"text": text, "name": "g.jsonl"}), 400)


@pytest.mark.parametrize("scores", [[], [{"vp": 1}], [{"vp": 1, "cash": 2}] * 5])
def test_a_record_whose_scores_do_not_replay_is_a_422_when_viewed(client, records, scores):
    key = client.post("/api/watch", json={"text": json.dumps(dict(records[0], scores=scores))}).get_json()["id"]
    assert "cannot be replayed" in error_of(client.get(f"/api/watch/{key}/{records[0]['index']}"), 422)


def test_an_unexpected_failure_is_still_a_json_answer(app, client, monkeypatch):
    monkeypatch.setattr(PlaySession, "view", lambda self: 1 / 0)
    assert "this is a bug" in error_of(client.post("/api/games", json={"opponents": ["random"]}), 500)


# --------------------------------------------------------------------------- data loss
def test_two_games_saved_in_the_same_round_get_two_files(app, client, tmp_path):
    first = new_game(client, players=2, opponents=["random"], seed=1)
    second = new_game(client, players=2, opponents=["random"], seed=2)
    names = [client.post(f"/api/games/{v['id']}/save", json={}).get_json()["saved"] for v in (first, second)]
    assert names[0] != names[1]
    for view, name in zip((first, second), names):
        assert read_save(str(tmp_path / "saves" / name))["game"].to_dict() == session_of(app, view).game.to_dict()


def test_a_named_save_never_replaces_another_file_unless_asked(app, client, tmp_path):
    first = new_game(client, players=2, opponents=["random"], seed=1)
    second = new_game(client, players=3, opponents=["random"], seed=2)
    assert client.post(f"/api/games/{first['id']}/save", json={"name": "mine"}).status_code == 200
    assert "already exists" in error_of(client.post(f"/api/games/{second['id']}/save", json={"name": "mine"}), 409)
    assert read_save(str(tmp_path / "saves" / "mine.json"))["game"].num_players == 2
    own = f"game-{second['id']}.json"
    assert "another game's autosave" in error_of(
        client.post(f"/api/games/{first['id']}/save", json={"name": own, "overwrite": True}), 409)
    assert client.post(f"/api/games/{second['id']}/save", json={"name": "mine", "overwrite": True}).status_code == 200
    assert read_save(str(tmp_path / "saves" / "mine.json"))["game"].num_players == 3


@pytest.mark.parametrize("name", ["x\n", "x.json\n", "x\r", "x\x00", " x", "x" * 90, "x/y"])
def test_a_save_name_with_a_trailing_newline_or_odd_character_is_refused(client, tmp_path, name):
    view = new_game(client, players=2, opponents=["random"], seed=0)
    assert "save name" in error_of(client.post(f"/api/games/{view['id']}/save", json={"name": name}), 400)
    assert "no saved game" in error_of(client.post("/api/games/load", json={"name": name}), 400)
    assert sorted(p.name for p in (tmp_path / "saves").iterdir()) == [f"game-{view['id']}.json"]


def test_every_game_is_autosaved_after_each_move(app, client, tmp_path):
    view = new_game(client, players=2, seat=1, opponents=["random"], seed=3)
    path = tmp_path / "saves" / f"game-{view['id']}.json"
    for _ in range(6):
        view = client.post(f"/api/games/{view['id']}/advance" if view["actions"] == [] else
                           f"/api/games/{view['id']}/act",
                           json={"move": view["move"]} if view["actions"] == [] else
                           {"action": view["actions"][0]["id"], "move": view["move"]}).get_json()
        assert read_save(str(path))["game"].to_dict() == session_of(app, view).game.to_dict()


def test_a_game_survives_a_server_restart_under_its_id(tmp_path):
    saves = tmp_path / "saves"
    before = create_app(saves).test_client()
    view = new_game(before, players=3, seat=0, opponents=["random"], seed=6)
    view = before.post(f"/api/games/{view['id']}/act", json={"action": view["actions"][0]["id"],
                                                              "move": view["move"]}).get_json()
    after = create_app(saves).test_client()  # a new server process on the same save folder
    again = after.get(f"/api/games/{view['id']}").get_json()
    assert again["id"] == view["id"] and again["move"] == view["move"]
    assert {k: v for k, v in again.items() if k not in ("log", "log_moves")} == \
           {k: v for k, v in view.items() if k not in ("log", "log_moves")}
    final, _ = play_to_end(after, again, np.random.default_rng(0))
    assert final["over"]
    # reopening its own autosave from the list opens the same game, not a copy
    listed = after.post("/api/games/load", json={"name": f"game-{view['id']}.json"}).get_json()
    assert listed["id"] == view["id"] and listed["over"]


def test_a_game_that_is_gone_says_so_and_how_to_go_on(client):
    message = error_of(client.get("/api/games/AAAAAAAAAAAAAAAA"), 404)
    assert "no autosave" in message and "resume a saved game or start a new one" in message


# --------------------------------------------------------------------------- bots and files
@pytest.mark.parametrize("spec", ["ismcts:seconds=1e9", "ismcts:iters=100000000", "ismcts:seconds=2", "ppo:x.npz",
                                  "heuristic:weights=1"])
def test_only_the_offered_opponents_are_seated(app, client, spec):
    message = error_of(client.post("/api/games", json={"opponents": [spec]}), 400)
    assert "not offered" in message or "unknown option" in message
    assert app.config["SESSIONS"].counts()["games"] == 0


def test_every_offered_opponent_is_seated(client):
    for offered in OFFERED:
        view = new_game(client, players=2, opponents=[offered.spec], seed=0)
        assert view["opponents"] == [offered.spec]
    options = client.get("/api/options").get_json()
    assert [o["spec"] for o in options["offered"]] == [o.spec for o in OFFERED] and options["any_agent"] is False


def test_a_saved_game_cannot_bring_an_unoffered_opponent(client):
    text = saved_text(Game.new(2, seed=0).to_dict(), 0, opponents="ismcts:seconds=1e9")
    assert "not offered" in error_of(client.post("/api/games/load", json={"text": text}), 400)


@pytest.mark.parametrize("form", ["ppo:{}", "search:policy={}", "search:value={}"])
def test_a_model_path_error_never_says_whether_the_file_exists(tmp_path, form):
    real = tmp_path / "real.npz"
    real.write_bytes(b"not a model")
    client = create_app(tmp_path / "saves", OpponentRule(any_agent=True, model_dirs=(tmp_path / "models",))) \
        .test_client()
    messages = [error_of(client.post("/api/games", json={"opponents": [form.format(path)]}), 400)
                for path in (real, tmp_path / "absent.npz", tmp_path / "models" / ".." / "real.npz")]
    assert [m.replace(str(p), "P") for m, p in zip(messages, (real, tmp_path / "absent.npz",
                                                               tmp_path / "models" / ".." / "real.npz"))] == \
           [messages[1].replace(str(tmp_path / "absent.npz"), "P")] * 3
    assert "inside the server's model folders" in messages[0]


def test_the_any_agent_flag_allows_budgets_and_models_from_the_model_folders(tmp_path):
    from packetrow_agents.policy import SHIPPED_MODEL

    models = tmp_path / "models"
    models.mkdir()
    (models / "mine.npz").write_bytes(SHIPPED_MODEL.read_bytes())
    client = create_app(tmp_path / "saves", OpponentRule(any_agent=True, model_dirs=(models,))).test_client()
    view = new_game(client, players=3, opponents=[f"ppo:{models / 'mine.npz'}", "ismcts:iters=20"], seed=1)
    assert view["opponents"] == [f"ppo:{models / 'mine.npz'}", "ismcts:iters=20"]
    assert "unknown agent" in error_of(client.post("/api/games", json={"opponents": ["bogus"]}), 400)


# --------------------------------------------------------------------------- requests from other sites
@pytest.mark.parametrize("headers", [{"Origin": "http://evil.example"}, {"Origin": "null"},
                                     {"Origin": "http://localhost:9"}, {"Sec-Fetch-Site": "cross-site"},
                                     {"Sec-Fetch-Site": "same-site"}])
def test_a_state_changing_request_from_another_site_is_refused(app, client, headers):
    response = client.post("/api/games", data='{"opponents": ["random"]}', content_type="text/plain",
                           headers=headers)
    assert "only from this app's page" in error_of(response, 403)
    view = new_game(client, opponents=["random"], seed=0)
    before = snapshot(app, view)
    for path, body in ((f"/api/games/{view['id']}/act", {"action": view["actions"][0]["id"]}),
                       (f"/api/games/{view['id']}/save", {"name": "x"}), ("/api/games/load", {"name": "x.json"})):
        assert error_of(client.post(path, json=body, headers=headers), 403)
    assert snapshot(app, view) == before and app.config["SESSIONS"].counts()["games"] == 1


def test_the_page_itself_and_local_programs_are_served(client):
    for headers in ({"Origin": "http://localhost"}, {"Sec-Fetch-Site": "same-origin"}, {}):
        assert client.post("/api/games", json={"opponents": ["random"]}, headers=headers).status_code == 200


@pytest.mark.parametrize("host", ["evil.example", "attacker.localhost.example:8000", "example.com:80"])
def test_a_host_name_not_this_machine_is_refused(client, host):
    """DNS rebinding: another site's name pointing at 127.0.0.1 would make its page same-origin."""
    for response in (client.get("/api/saves", headers={"Host": host}),
                     client.post("/api/games", json={}, headers={"Host": host})):
        assert "answers only to localhost and IP addresses" in error_of(response, 403)
    for host in ("127.0.0.1:8000", "localhost:5", "[::1]:8000", "192.168.1.4"):
        assert client.get("/api/options", headers={"Host": host}).status_code == 200


# --------------------------------------------------------------------------- stale moves
def test_a_move_chosen_at_an_old_position_is_refused_with_409(app, client):
    view = new_game(client, players=2, seat=0, opponents=["random"], seed=4)
    old = view
    view = client.post(f"/api/games/{view['id']}/act", json={"action": view["actions"][0]["id"],
                                                             "move": view["move"]}).get_json()
    moved = snapshot(app, view)
    while view["current_player"] != view["you"]:
        view = client.post(f"/api/games/{view['id']}/advance", json={"move": view["move"]}).get_json()
    moved = snapshot(app, view)
    resent = client.post(f"/api/games/{view['id']}/act", json={"action": old["actions"][0]["id"],
                                                               "move": old["move"]})
    assert f"made at move {old['move']}, but the game is at move {view['move']}" in error_of(resent, 409)
    assert "made at move" in error_of(client.post(f"/api/games/{view['id']}/advance", json={"move": 0}), 409)
    assert "must be the view's move number" in error_of(
        client.post(f"/api/games/{view['id']}/act", json={"action": 10, "move": "3"}), 400)
    assert snapshot(app, view) == moved


# --------------------------------------------------------------------------- bounded memory
def test_games_beyond_the_limit_are_let_go_and_reopen_from_their_autosave(tmp_path):
    app = create_app(tmp_path / "saves", max_games=3)
    client = app.test_client()
    views = [new_game(client, players=2, opponents=["random"], seed=k) for k in range(5)]
    assert app.config["SESSIONS"].counts()["games"] == 3
    first = client.get(f"/api/games/{views[0]['id']}").get_json()  # let go, reopened from its file
    assert first["id"] == views[0]["id"] and first["boards"] == views[0]["boards"]
    assert app.config["SESSIONS"].counts()["games"] == 3


def test_requests_at_once_for_a_game_let_go_reopen_one_copy(app, client):
    view = new_game(client, players=2, opponents=["random"], seed=2)
    sessions = app.config["SESSIONS"]
    for _ in range(5):
        sessions._forget(view["id"])
        barrier = threading.Barrier(6)
        found = []

        def reopen():
            barrier.wait()
            found.append(sessions.get(view["id"], PlaySession))

        threads = [threading.Thread(target=reopen) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len({id(x) for x in found}) == 1 and found[0] is sessions.get(view["id"], PlaySession)


def test_games_against_the_shipped_agent_share_its_weights():
    """The memory of a game stays small: its bots of one model hold one copy of the weights between them."""
    games = [PlaySession.new({"players": 5, "seat": 4, "opponents": ["ppo"], "seed": k}) for k in range(3)]
    policies = {id(bot.policy) for game in games for bot in game.bots.values()}
    assert len(policies) == 1 and sum(len(game.bots) for game in games) == 12
    for game in games:  # the shared policy plays a legal move for each
        assert game.game.legal_action_mask()[game.bot_move(game.game.current_player)]


def test_idle_games_and_files_are_let_go(tmp_path, records):
    now = [0.0]
    sessions = Sessions(tmp_path / "saves", idle_seconds=60, clock=lambda: now[0])
    game = PlaySession.new({"opponents": ["random"], "seed": 1})
    key = sessions.add(game)
    sessions.add(Replay.parse(json.dumps(records[0])))
    now[0] = 61
    sessions.add(Replay.parse(json.dumps(records[1])))
    assert sessions.counts() == {"games": 0, "watches": 1}
    assert sessions.get(key, PlaySession).game.to_dict() == game.game.to_dict()


def test_watched_files_are_bounded_in_size_and_number(tmp_path, records):
    sessions = Sessions(tmp_path / "saves", max_watches=2, watch_bytes=10**9)
    keys = [sessions.add(Replay.parse(json.dumps(r))) for r in records]
    assert sessions.counts()["watches"] == 2
    with pytest.raises(ValueError, match="no watched file"):
        sessions.get(keys[0], Replay)
    text = json.dumps(records[0])
    sessions = Sessions(tmp_path / "saves", watch_bytes=2 * len(text) + 1)
    for _ in range(4):
        sessions.add(Replay.parse(text))
    assert sessions.counts()["watches"] == 2


def test_a_watched_file_keeps_the_positions_of_two_games_only(records):
    replay = Replay.parse("\n".join(json.dumps(r) for r in records))
    for record in records:
        replay.view(record["index"], 3, None)
    assert len(replay._positions) == 2
    assert replay.records[0]["actions"].dtype == np.uint8  # actions packed a byte each


def test_an_upload_over_the_bound_is_a_413(client):
    big = json.dumps({"text": "x" * (MAX_UPLOAD + 10)})
    assert error_of(client.post("/api/watch", data=big, content_type="application/json"), 413)


# --------------------------------------------------------------------------- the end of a game
def test_the_hands_are_shown_only_once_the_game_is_over(app, client):
    view = new_game(client, players=3, seat=1, opponents=["random"], seed=12)
    assert "when the game is over" in error_of(client.get(f"/api/games/{view['id']}/hands"), 409)
    final, _ = play_to_end(client, view, np.random.default_rng(1))
    hands = client.get(f"/api/games/{view['id']}/hands").get_json()
    game = session_of(app, view).game
    full = SeatView(game, 1, "full")
    assert [p["hand"] for p in hands["players"]] == [hand_groups(full, h) for h in full.known_hands()]
    still_hidden = [p["seat"] for p in final["players"] if p["hidden_cards"]]
    assert all(len(hands["players"][p]["starting"]) == 1 for p in still_hidden)


def test_only_passing_comes_with_its_reason(client):
    for seed in range(200):
        view = new_game(client, players=2, opponents=["random"], seed=seed)
        rng = np.random.default_rng(seed)
        while not view["over"]:
            if [a["group"] for a in view["actions"]] == ["pass"]:
                assert view["pass_reason"].startswith("Only passing is possible: ")
                return
            assert "pass_reason" not in view
            if view["actions"]:
                action = view["actions"][int(rng.integers(len(view["actions"])))]["id"]
                view = client.post(f"/api/games/{view['id']}/act", json={"action": action}).get_json()
            else:
                view = client.post(f"/api/games/{view['id']}/advance").get_json()
    pytest.fail("no turn with only 'pass' found")


def test_no_rule_id_reaches_the_player(client):
    view = new_game(client, players=2, opponents=["random"], seed=0)
    texts = json.dumps(view)
    assert "R-" not in texts
    from packetrow_web.views import plain
    assert plain("choose how to pay the shipment (R-SHIP-7: which cards to discard)") == \
        "choose how to pay the shipment (which cards to discard)"


# --------------------------------------------------------------------------- hidden twins on the new routes
TWIN_CASES = [(n, seed, steps) for n in (2, 4) for seed, steps in ((40 + n, 30), (50 + n, 90))]


def new_routes(client, position: dict, seat: int) -> dict:
    """What the new routes send for a loaded position: end hands, a stale move, a restart's reopening."""
    view = client.post("/api/games/load", json={"text": saved_text(position, seat)}).get_json()
    key = view.pop("id")
    out = {"hands": client.get(f"/api/games/{key}/hands"),
           "stale": client.post(f"/api/games/{key}/act", json={"action": 0, "move": view["move"] + 1}),
           "stale_advance": client.post(f"/api/games/{key}/advance", json={"move": view["move"] + 1})}
    out = {name: (r.status_code, json.dumps(r.get_json(), sort_keys=True).replace(key, "KEY"))
           for name, r in out.items()}
    sessions = client.application.config["SESSIONS"]
    sessions._forget(key)  # as after a restart: reopened from the autosave
    reopened = client.get(f"/api/games/{key}").get_json()
    reopened.pop("id")
    out["reopened"] = json.dumps(reopened, sort_keys=True)
    return out


@pytest.mark.parametrize("n, seed, steps", TWIN_CASES)
def test_hidden_twins_get_identical_answers_from_the_new_routes(client, n, seed, steps):
    position = random_position(n, seed, steps)
    assert Game.from_dict(position).is_over is False
    rng = np.random.default_rng(seed)
    exercised = 0
    for seat in range(n):
        base = new_routes(client, position, seat)
        assert base["hands"][0] == 409 and base["stale"][0] == 409
        for name, twin in twins(position, seat, rng, "tracked"):
            assert new_routes(client, twin, seat) == base, (name, seat)
            exercised += 1
    assert exercised >= 2 * n


# --------------------------------------------------------------------------- the command
def test_a_port_out_of_range_is_a_one_line_error(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["serve", "--port", "99999"])
    assert stop.value.code == 2
    assert "a port is a number from 0 to 65535" in capsys.readouterr().err


def test_a_busy_port_is_the_apps_one_line_error(capsys, tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["serve", "--port", str(port), "--save-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"packetrow serve: error: cannot listen on 127.0.0.1:{port}: ") and err.count("\n") == 1


def test_the_openapi_description_names_every_api_route(app, client):
    described = client.get("/api/openapi.json").get_json()
    assert described["openapi"].startswith("3.")
    routes = {r.rule.replace("<int:", "{").replace("<", "{").replace(">", "}") for r in app.url_map.iter_rules()
              if r.rule.startswith("/api/")}
    assert routes == set(described["paths"])
