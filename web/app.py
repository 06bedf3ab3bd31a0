"""The web app (Flask): a JSON API over ``sessions`` and the static page; ``packetrow serve`` runs it.

API (every answer is JSON; an error is ``{"error": "..."}`` with a 4xx status and changes nothing):

- ``POST /api/games`` {players, seat, opponents, seed?} -> a new game's view (with its ``id``)
- ``GET /api/games/<id>`` -> the view; ``POST /api/games/<id>/act`` {action} -> the view after the person's move
- ``POST /api/games/<id>/advance`` -> the view after the bot to act made one move
- ``POST /api/games/<id>/save`` {name?} -> {saved: file name}; ``GET /api/saves`` -> the saved games
- ``POST /api/games/load`` {name} (a saved game of the save folder) or {text} (a saved game's JSON) -> a view
- ``POST /api/watch`` {text, name?} -> {id, games}; ``GET /api/watch/<id>/<game>?move=M&seat=S|full`` -> a view
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import webbrowser
from importlib.resources import files

from .sessions import DEFAULT_OPPONENT, SUGGESTED_OPPONENTS, PlaySession, Replay, Sessions, WebError

MAX_UPLOAD = 64 * 1024 * 1024  # a games.jsonl of many thousand games fits


def create_app(save_dir="packetrow-saves"):
    """The Flask app, holding its own games; saved games go to ``save_dir``."""
    try:
        from flask import Flask, jsonify, request, send_from_directory
    except ImportError as error:  # the optional extra
        raise ImportError("the web app needs Flask: pip install 'packetrow[web]'") from error
    from werkzeug.exceptions import HTTPException

    static = str(files("packetrow_web").joinpath("static"))
    app = Flask(__name__, static_folder=static, static_url_path="/static")
    app.config["MAX_CONTENT_LENGTH"] = MAX_UPLOAD
    app.json.sort_keys = False
    sessions = Sessions(save_dir)
    app.config["SESSIONS"] = sessions

    def body() -> dict:
        data = request.get_json(silent=True)
        if data is None:
            if not request.get_data():
                return {}
            raise WebError("the request body is not valid JSON")
        if not isinstance(data, dict):
            raise WebError("the request body must be a JSON object")
        return data

    def play(key, work=None) -> dict:
        session = sessions.get(key, PlaySession)
        with session.lock:  # one request at a time per game; other games go on meanwhile
            if work is not None:
                work(session)
            return dict(session.view(), id=key)

    @app.errorhandler(WebError)
    def refused(error):
        return jsonify(error=str(error)), error.status

    @app.errorhandler(HTTPException)
    def http_error(error):
        if request.path.startswith("/api/"):
            return jsonify(error=f"{error.name}: {error.description}"), error.code
        return error

    @app.get("/")
    def index():
        response = send_from_directory(static, "index.html")
        response.headers["Cache-Control"] = "no-cache"
        return response

    @app.get("/api/options")
    def options():
        return jsonify(default_opponent=DEFAULT_OPPONENT, suggested=list(SUGGESTED_OPPONENTS), players=[2, 3, 4, 5])

    @app.post("/api/games")
    def new_game():
        session = PlaySession.new(body())
        key = sessions.add(session)
        return play(key)

    @app.post("/api/games/load")
    def load_game():
        data = body()
        if "name" in data:
            session = sessions.load_saved(data["name"])
        elif "text" in data:
            if not isinstance(data["text"], str):
                raise WebError("'text' must be the saved game file's text")
            try:
                saved = json.loads(data["text"])
            except (json.JSONDecodeError, RecursionError):
                raise WebError(f"{data.get('filename', 'the file')} is not a saved game (not valid JSON)") from None
            session = PlaySession.load(saved, str(data.get("filename", "the file")))
        else:
            raise WebError("send {'name': a saved game's name} or {'text': a saved game file's text}")
        return play(sessions.add(session))

    @app.get("/api/games/<key>")
    def game_view(key):
        return play(key)

    @app.post("/api/games/<key>/act")
    def act(key):
        data = body()
        if "action" not in data:
            raise WebError("send {'action': an action id from the view's 'actions'}")
        return play(key, lambda session: session.act(data["action"]))

    @app.post("/api/games/<key>/advance")
    def advance(key):
        return play(key, lambda session: session.advance())

    @app.post("/api/games/<key>/save")
    def save(key):
        data = body()
        session = sessions.get(key, PlaySession)
        with session.lock:
            name = sessions.save(session, data.get("name"))
        return jsonify(saved=name, folder=str(sessions.save_dir))

    @app.get("/api/saves")
    def saves():
        return jsonify(saves=sessions.saves(), folder=str(sessions.save_dir))

    @app.post("/api/watch")
    def watch():
        data = body()
        replay = Replay.parse(data.get("text"), str(data.get("name") or "the file"))
        key = sessions.add(replay)
        return jsonify(id=key, games=replay.games(), source=replay.source)

    @app.get("/api/watch/<key>/<int:index>")
    def watch_view(key, index):
        replay = sessions.get(key, Replay)
        move = request.args.get("move", "0")
        seat = request.args.get("seat", "full")
        if not move.isdigit():
            raise WebError(f"move must be a move number, got {move!r}")
        if seat != "full" and not seat.isdigit():
            raise WebError(f"seat must be a seat number or 'full', got {seat!r}")
        with replay.lock:
            view = replay.view(index, int(move), None if seat == "full" else int(seat))
        return jsonify(dict(view, id=key))

    return app


def serve(host: str = "127.0.0.1", port: int = 8000, open_browser: bool = False, save_dir="packetrow-saves") -> int:
    """Run the web app until interrupted."""
    from werkzeug.serving import WSGIRequestHandler, make_server

    class Quiet(WSGIRequestHandler):
        def log_request(self, *args, **kwargs):  # one line per click would bury the address printed below
            pass

    app = create_app(save_dir)
    server = make_server(host, port, app, threaded=True, request_handler=Quiet)
    url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{server.server_port}/"
    print(f"Packet Row in the browser: {url}  (Ctrl-C stops the server; games are saved to {save_dir}/)")
    if host not in ("127.0.0.1", "localhost", "::1"):
        print("Warning: the server answers anyone who can reach this machine on that address.")
    if open_browser:
        threading.Timer(0.5, webbrowser.open, args=(url,)).start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print()
    finally:
        server.server_close()
    return 0


def add_command(subparsers) -> argparse.ArgumentParser:
    """Register ``packetrow serve`` on the ``packetrow`` command's subparsers."""
    parser = subparsers.add_parser(
        "serve", help="play and watch games in the browser (needs the [web] extra)",
        description="Run a local web app: play against the shipped agent or other bots, and watch tournament games "
                    "(a games.jsonl) or saved games move by move.")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine "
                                                            "only)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    parser.add_argument("--open", action="store_true", help="open the page in the default browser")
    parser.add_argument("--save-dir", default="packetrow-saves", metavar="DIR",
                        help="folder of the games saved from the page (default ./packetrow-saves)")
    parser.set_defaults(run=run_command)
    return parser


def run_command(args) -> int:
    """Run ``packetrow serve`` from parsed arguments."""
    try:
        return serve(args.host, args.port, args.open, args.save_dir)
    except ImportError as error:
        print(f"packetrow serve: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"packetrow serve: error: cannot listen on {args.host}:{args.port}: {error.strerror or error}",
              file=sys.stderr)
        return 2
