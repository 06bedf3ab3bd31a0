"""The API fuzzed from its own OpenAPI description (schemathesis): no request the schema allows, nor the
malformed ones schemathesis derives from it, gets a 5xx; every error is a JSON object naming the problem.

Game and watch ids in paths are mostly real ones (a random id is only a 404), so the bodies and queries
reach the moves, saves and replays themselves. Deterministic (derandomized) and bounded in examples.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("flask")
schemathesis = pytest.importorskip("schemathesis")

from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402

from packetrow_arena.tournament import run_tournament  # noqa: E402
from packetrow_web import create_app  # noqa: E402


@pytest.fixture(scope="module")
def web_app(tmp_path_factory):
    app = create_app(tmp_path_factory.mktemp("saves"))
    client = app.test_client()
    game = client.post("/api/games", json={"players": 3, "opponents": ["random"], "seed": 1}).get_json()
    result = run_tournament(["heuristic", "random"], num_players=2, games=2, seed=1, progress=False)
    path, _ = result.write(tmp_path_factory.mktemp("tournament"))
    watched = client.post("/api/watch", json={"text": path.read_text()}).get_json()
    app.config["FUZZ_IDS"] = {"game": game["id"], "watch": watched["id"]}
    return app


@pytest.fixture(scope="module")
def web_schema(web_app):
    return schemathesis.openapi.from_wsgi("/api/openapi.json", web_app)


schema = schemathesis.pytest.from_fixture("web_schema")


@schema.parametrize()
@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
def test_no_request_gets_a_server_error(case, web_app):
    ids = web_app.config["FUZZ_IDS"]
    key = (case.path_parameters or {}).get("key")
    if key is not None and len(key) % 4:  # three ids in four are real: the requests reach a game or a file
        case.path_parameters["key"] = ids["watch" if case.path.startswith("/api/watch") else "game"]
    response = case.call()
    assert response.status_code < 500, response.text[:500]
    case.validate_response(response, checks=(not_a_server_error,))
    if response.status_code >= 400:
        assert isinstance(json.loads(response.text)["error"], str)
