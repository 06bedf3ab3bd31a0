"""The web app (Flask): a JSON API over ``sessions`` and the static page; ``packetrow serve`` runs it.

API (every answer is JSON; an error is ``{"error": "..."}`` with a 4xx status and changes nothing; the full
description is served at ``/api/openapi.json``):

- ``POST /api/games`` {players, seat, opponents, seed?} -> a new game's view (with its ``id`` and ``move``)
- ``GET /api/games/<id>`` -> the view; ``POST /api/games/<id>/act`` {action, move} -> the view after the move
- ``POST /api/games/<id>/advance`` {move?} -> the view after the bot to act made one move
- ``GET /api/games/<id>/hands`` -> once the game is over, every hand face up (409 before)
- ``POST /api/games/<id>/save`` {name?, overwrite?} -> {saved: file name}; ``GET /api/saves`` -> the saved games
- ``POST /api/games/load`` {name} (a saved game of the save folder) or {text} (a saved game's JSON) -> a view
- ``POST /api/watch`` {text, name?} -> {id, games}; ``GET /api/watch/<id>/<game>?move=M&seat=S|full`` -> a view

Requests that change anything are taken only from the app's own page (Origin, Sec-Fetch-Site) or a program
on this machine, and only under a Host that is localhost, an IP address or the ``--host`` name.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import re
import socket
import sys
import threading
import webbrowser
from importlib.resources import files
from pathlib import Path
from urllib.parse import urlsplit

from packetrow_env.user_files import check_output_folder

from .opponents import DEFAULT_OPPONENT, OFFERED, OpponentRule
from .openapi import openapi
from .sessions import PlaySession, Replay, Sessions, WebError

MAX_UPLOAD = 16 * 1024 * 1024  # a games.jsonl of about 15,000 games; held in memory packed, and let go when idle
NUMBER = re.compile(r"[0-9]{1,9}")  # ASCII digits only: '²' passes str.isdigit but not int()
LOCAL_NAMES = ("localhost",)


def _host_allowed(host: str, extra: tuple[str, ...]) -> bool:
    """Whether a Host header names this machine: an IP address, localhost, or a name the server was given.

    Another name pointing here (DNS rebinding) would let any web page talk to the server as if it were its own.
    """
    name = urlsplit(f"//{host}").hostname or ""
    if name in LOCAL_NAMES or name in extra:
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def create_app(save_dir="packetrow-saves", rule: OpponentRule = OpponentRule(), host_names: tuple[str, ...] = (),
               **limits):
    """The Flask app, holding its own games; games are autosaved and saved to ``save_dir``.

    ``rule``: which opponents the page may seat; ``host_names``: names besides localhost and IP addresses the
    server answers to; ``limits``: ``Sessions``' max_games, max_watches, idle_seconds.
    """
    try:
        from flask import Flask, jsonify, request, send_from_directory
    except ImportError as error:  # the optional extra
        raise ImportError("the web app needs Flask: pip install 'packetrow[web]'") from error
    from werkzeug.exceptions import HTTPException

    static = str(files("packetrow_web").joinpath("static"))
    app = Flask(__name__, static_folder=static, static_url_path="/static")
    app.config["MAX_CONTENT_LENGTH"] = MAX_UPLOAD
    app.json.sort_keys = False
    sessions = Sessions(save_dir, rule, **limits)
    app.config["SESSIONS"] = sessions

    def body() -> dict:
        try:
            data = request.get_json(silent=True)
        except RecursionError:
            raise WebError("the request body's JSON is nested too deeply") from None
        if data is None:
            if not request.get_data():
                return {}
            raise WebError("the request body is not valid JSON")
        if not isinstance(data, dict):
            raise WebError("the request body must be a JSON object")
        return data

    def play(key, work=None) -> dict:
        with sessions.playing(key) as session:  # one request at a time per game; other games go on meanwhile
            if work is not None:
                work(session)
                sessions.autosave(session)
            return dict(session.view(), id=key)

    @app.before_request
    def own_page_only():
        """Requests come from the app's own page (or a program on this machine), never from another site's page."""
        if not _host_allowed(request.host, host_names):
            raise WebError(f"this server answers only to localhost and IP addresses, not Host {request.host!r} "
                           "(packetrow serve --host NAME allows a name)", 403)
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return
        origin = request.headers.get("Origin")
        if origin is not None and urlsplit(origin).netloc != request.host:
            raise WebError(f"requests that change games come only from this app's page; Origin {origin!r} is "
                           f"not {request.host!r}", 403)
        if request.headers.get("Sec-Fetch-Site", "same-origin") not in ("same-origin", "none"):
            raise WebError("requests that change games come only from this app's page, not from another site", 403)

    @app.errorhandler(WebError)
    def refused(error):
        return jsonify(error=str(error)), error.status

    @app.errorhandler(HTTPException)
    def http_error(error):
        if request.path.startswith("/api/"):
            return jsonify(error=f"{error.name}: {error.description}"), error.code
        return error

    @app.errorhandler(413)
    def too_large(error):
        return jsonify(error=f"the request is larger than this server takes ({MAX_UPLOAD // 2**20} MiB): watch a "
                             "smaller file, e.g. fewer games of a games.jsonl"), 413

    @app.errorhandler(Exception)
    def crashed(error):  # a bug: still a JSON answer the page can show
        app.logger.exception("unexpected error")
        return jsonify(error=f"the server failed ({type(error).__name__}); this is a bug, please report it"), 500

    @app.get("/")
    def index():
        response = send_from_directory(static, "index.html")
        response.headers["Cache-Control"] = "no-cache"
        return response

    @app.get("/api/options")
    def options():
        return jsonify(default_opponent=DEFAULT_OPPONENT, suggested=[o.spec for o in OFFERED],
                       offered=[{"spec": o.spec, "label": o.label} for o in OFFERED], any_agent=rule.any_agent,
                       players=[2, 3, 4, 5])

    @app.get("/api/openapi.json")
    def description():
        return jsonify(openapi())

    @app.post("/api/games")
    def new_game():
        session = PlaySession.new(body(), sessions.rule)
        return play(sessions.add(session))

    @app.post("/api/games/load")
    def load_game():
        data = body()
        if "name" in data:
            return play(sessions.load_saved(data["name"]))
        if "text" not in data:
            raise WebError("send {'name': a saved game's name} or {'text': a saved game file's text}")
        if not isinstance(data["text"], str):
            raise WebError("'text' must be the saved game file's text")
        filename = data.get("filename", "the file")
        filename = filename[:200] if isinstance(filename, str) else "the file"
        try:
            saved = json.loads(data["text"])
        except (json.JSONDecodeError, RecursionError):
            raise WebError(f"{filename} is not a saved game (not valid JSON)") from None
        return play(sessions.add(PlaySession.load(saved, filename, sessions.rule)))

    @app.get("/api/games/<key>")
    def game_view(key):
        return play(key)

    @app.get("/api/games/<key>/hands")
    def end_hands(key):
        with sessions.playing(key) as session:
            return jsonify(dict(session.hands(), id=key))

    @app.post("/api/games/<key>/act")
    def act(key):
        data = body()
        if "action" not in data:
            raise WebError("send {'action': an action id from the view's 'actions', 'move': the view's 'move'}")
        return play(key, lambda session: session.act(data["action"], data.get("move")))

    @app.post("/api/games/<key>/advance")
    def advance(key):
        data = body()
        return play(key, lambda session: session.advance(data.get("move")))

    @app.post("/api/games/<key>/save")
    def save(key):
        data = body()
        with sessions.playing(key) as session:
            name = sessions.save(session, data.get("name"), data.get("overwrite", False))
        return jsonify(saved=name, folder=str(sessions.save_dir))

    @app.get("/api/saves")
    def saves():
        return jsonify(saves=sessions.saves(), folder=str(sessions.save_dir))

    @app.post("/api/watch")
    def watch():
        data = body()
        name = data.get("name")
        replay = Replay.parse(data.get("text"), name[:200] if isinstance(name, str) and name else "the file")
        key = sessions.add(replay)
        return jsonify(id=key, games=replay.games(), source=replay.source)

    @app.get("/api/watch/<key>/<index>")
    def watch_view(key, index):
        replay = sessions.get(key, Replay)
        if not NUMBER.fullmatch(index):  # not werkzeug's int converter: it fails on 4,300 digits
            raise WebError(f"no game {index[:40]!r} in {replay.source}: a game is named by its number", 404)
        index = int(index)
        move = request.args.get("move", "0")
        seat = request.args.get("seat", "full")
        if not NUMBER.fullmatch(move):
            raise WebError(f"move must be a move number, got {move[:40]!r}")
        if seat != "full" and not NUMBER.fullmatch(seat):
            raise WebError(f"seat must be a seat number or 'full', got {seat[:40]!r}")
        with replay.lock:
            view = replay.view(index, int(move), None if seat == "full" else int(seat))
        return jsonify(dict(view, id=key))

    return app


def serve(host: str = "127.0.0.1", port: int = 8000, open_browser: bool = False, save_dir="packetrow-saves",
          rule: OpponentRule = OpponentRule()) -> int:
    """Run the web app until interrupted (an OSError if the address cannot be listened on)."""
    from werkzeug.serving import WSGIRequestHandler, make_server

    class Quiet(WSGIRequestHandler):
        def log_request(self, *args, **kwargs):  # one line per click would bury the address printed below
            pass

    wildcard = host in ("0.0.0.0", "", "::")
    app = create_app(save_dir, rule, host_names=() if wildcard else (host,))
    # bound here, so that a busy or bad address is this command's one-line error rather than werkzeug's exit
    listener = socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET)
    try:
        server = make_server(host, port, app, threaded=True, request_handler=Quiet, fd=listener.fileno())
    except BaseException:
        listener.close()
        raise
    url = f"http://{'127.0.0.1' if wildcard else host}:{listener.getsockname()[1]}/"
    print(f"Packet Row in the browser: {url}  (Ctrl-C stops the server; games are autosaved to {save_dir}/)",
          flush=True)
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
        listener.close()
    return 0


def port_number(text: str) -> int:
    """A TCP port from the command line: 0-65535 (0 picks a free one)."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is a number from 0 to 65535 (0 picks a free one), got {text!r}")
    return port


def add_arguments(parser) -> None:
    """Add the arguments of ``packetrow serve`` to its parser."""
    parser.description = ("Run a local web app: play against the shipped agent or other bots, and watch tournament "
                          "games (a games.jsonl) or saved games move by move.")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine "
                                                            "only)")
    parser.add_argument("--port", type=port_number, default=8000, help="port (default 8000; 0 picks a free one)")
    parser.add_argument("--open", action="store_true", help="open the page in the default browser")
    parser.add_argument("--save-dir", default="packetrow-saves", metavar="DIR",
                        help="folder of the games autosaved and saved from the page (default ./packetrow-saves)")
    parser.add_argument("--any-agent", action="store_true",
                        help="let the page seat any agent spec at any budget, not only the offered opponents ("
                             + ", ".join(o.spec for o in OFFERED) + ")")
    parser.add_argument("--model-dir", action="append", default=[], metavar="DIR",
                        help="with --any-agent: a folder whose .npz models 'ppo:PATH' may load (repeatable; "
                             "default none)")
    parser.set_defaults(run=run_command)


def run_command(args) -> int:
    """Run ``packetrow serve`` from parsed arguments; a save folder that cannot be written is refused first."""
    rule = OpponentRule(any_agent=args.any_agent, model_dirs=tuple(Path(d) for d in args.model_dir))
    try:  # now, not when the first game is autosaved
        check_output_folder(args.save_dir, ValueError, "argument --save-dir")
    except ValueError as error:
        print(f"packetrow serve: error: {error}", file=sys.stderr)
        return 2
    try:
        return serve(args.host, args.port, args.open, args.save_dir, rule)
    except ImportError as error:
        print(f"packetrow serve: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"packetrow serve: error: cannot listen on {args.host}:{args.port}: {error.strerror or error}",
              file=sys.stderr)
        return 2
