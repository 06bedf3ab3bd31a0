"""The OpenAPI 3 description of the web app's JSON API, served at ``/api/openapi.json`` (and fuzzed by the tests)."""

from __future__ import annotations

from packetrow_env.state import MAX_PLAYERS, MIN_PLAYERS

ERROR = {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}}


def _json(schema: dict) -> dict:
    return {"content": {"application/json": {"schema": schema}}}


def _answers(ok: str, *codes: int) -> dict:
    out = {"200": dict(_json({"type": "object"}), description=ok)}
    for code in codes:
        out[str(code)] = dict(_json({"$ref": "#/components/schemas/Error"}), description="refused: what and why")
    return out


def _body(schema: dict, required: bool = True) -> dict:
    return dict(_json(schema), required=required)


KEY = {"name": "key", "in": "path", "required": True, "schema": {"type": "string"},
       "description": "a game's or watched file's id"}
MOVE = {"type": "integer", "minimum": 0, "description": "the view's move number: a stale request is refused (409)"}
NAME = {"type": "string", "description": "a save name: 1-80 letters, digits, '-', '_', '.'"}


def openapi() -> dict:
    """The description, as a JSON-ready dict."""
    game = {"parameters": [KEY]}
    paths = {
        "/api/options": {"get": {"summary": "the players counts and the opponents this server offers",
                                 "responses": _answers("the options")}},
        "/api/games": {"post": {
            "summary": "start a game",
            "requestBody": _body({"type": "object", "additionalProperties": False, "properties": {
                "players": {"type": "integer", "minimum": MIN_PLAYERS, "maximum": MAX_PLAYERS},
                "seat": {"type": "integer", "minimum": 0},
                "opponents": {"oneOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]},
                "seed": {"type": "integer", "minimum": 0, "nullable": True}}}, required=False),
            "responses": _answers("the new game's view", 400, 403)}},
        "/api/games/load": {"post": {
            "summary": "resume a saved game: one of the save folder (name) or a file's text",
            "requestBody": _body({"type": "object", "properties": {
                "name": NAME, "text": {"type": "string"}, "filename": {"type": "string"}}}),
            "responses": _answers("the resumed game's view", 400, 403, 404)}},
        "/api/games/{key}": dict(game, get={"summary": "a game's view (reopened from its autosave if need be)",
                                            "responses": _answers("the view", 404)}),
        "/api/games/{key}/hands": dict(game, get={"summary": "once the game is over: every hand face up",
                                                  "responses": _answers("{players}", 404, 409)}),
        "/api/games/{key}/act": dict(game, post={
            "summary": "play the person's move",
            "requestBody": _body({"type": "object", "required": ["action"], "properties": {
                "action": {"type": "integer", "description": "an action id of the view's 'actions'"},
                "move": MOVE}}),
            "responses": _answers("the view after the move", 400, 403, 404, 409)}),
        "/api/games/{key}/advance": dict(game, post={
            "summary": "let the bot to act make one move",
            "requestBody": _body({"type": "object", "properties": {"move": MOVE}}, required=False),
            "responses": _answers("the view after the bot's move", 400, 403, 404, 409)}),
        "/api/games/{key}/save": dict(game, post={
            "summary": "save the game: to its own autosave file, or as a name",
            "requestBody": _body({"type": "object", "properties": {
                "name": NAME, "overwrite": {"type": "boolean"}}}, required=False),
            "responses": _answers("{saved: file name, folder}", 400, 403, 404, 409)}),
        "/api/saves": {"get": {"summary": "the saved games of the save folder, newest first",
                               "responses": _answers("{saves, folder}")}},
        "/api/watch": {"post": {
            "summary": "open a tournament's games.jsonl or a saved game to watch",
            "requestBody": _body({"type": "object", "required": ["text"], "properties": {
                "text": {"type": "string"}, "name": {"type": "string"}}}),
            "responses": _answers("{id, games, source}", 400, 403, 413)}},
        "/api/watch/{key}/{index}": {
            "parameters": [KEY, {"name": "index", "in": "path", "required": True,
                                 "schema": {"type": "integer", "minimum": 0}}],
            "get": {"summary": "a watched game before one of its moves, from a seat or the full view",
                    "parameters": [
                        {"name": "move", "in": "query", "schema": {"type": "integer", "minimum": 0}},
                        {"name": "seat", "in": "query",
                         "schema": {"oneOf": [{"type": "integer", "minimum": 0}, {"enum": ["full"]}]}}],
                    "responses": _answers("the view", 400, 404, 422)}},
        "/api/openapi.json": {"get": {"summary": "this description", "responses": _answers("OpenAPI 3")}},
    }
    return {"openapi": "3.0.3",
            "info": {"title": "packetrow serve", "version": "1",
                     "description": "Play Packet Row against bots and watch recorded games. Every error is "
                                    "{\"error\": \"...\"} with a 4xx status and changes nothing."},
            "paths": paths,
            "components": {"schemas": {"Error": ERROR}}}
