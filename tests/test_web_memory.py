"""The server's memory is bounded (issue 31): ``packetrow serve`` in its own process, 300 games created and three
watch uploads of about 12 MiB each (four games of each viewed), and its resident memory stays under a bound.

The bound: what the server holds after its first game (the engine, numpy, Flask, the shipped model) plus
MEMORY_BOUND_MIB. Without the limits this grew by about 320 MiB a 63 MB upload and never shrank.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("flask")

from packetrow_arena.tournament import load_games, run_tournament  # noqa: E402
from packetrow_web.app import MAX_UPLOAD  # noqa: E402

MEMORY_BOUND_MIB = 128  # measured: 59 and 73 MiB in two runs (docs/play.md)
UPLOAD_BYTES = 12 * 1024 * 1024  # sent as a JSON string: its escaped quotes make the body about 15 MiB


def resident_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def call(url: str, method: str, path: str, body=None) -> dict:
    """The API as a program on this machine calls it (no Origin)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url.rstrip("/") + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


def big_file(records: list[dict], copy: int) -> str:
    """About UPLOAD_BYTES of games.jsonl: the given games again and again, each under its own index."""
    lines, size, index = [], 0, 0
    while size < UPLOAD_BYTES:
        record = dict(records[index % len(records)], index=index, note=f"upload {copy}")
        line = json.dumps(record)
        lines.append(line)
        size += len(line) + 1
        index += 1
    return "\n".join(lines)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_300_games_and_three_large_uploads_stay_under_the_bound(tmp_path):
    result = run_tournament(["heuristic", "random"], num_players=2, games=4, seed=9, progress=False)
    path, _ = result.write(tmp_path)
    records = load_games(path)
    server = subprocess.Popen([sys.executable, "-m", "packetrow_cli", "serve", "--port", "0", "--save-dir",
                               str(tmp_path / "saves")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().split()[5].rstrip("/")
        call(url, "POST", "/api/games", {})  # the shipped agent loaded: the baseline
        baseline = resident_mib(server.pid)
        for k in range(300):
            opponent = ["ppo", "random", "heuristic"][k % 3]
            call(url, "POST", "/api/games", {"players": 2 + k % 4, "opponents": [opponent], "seed": k})
        for copy in range(3):
            text = big_file(records, copy)
            assert UPLOAD_BYTES <= len(text) and len(json.dumps({"text": text})) < MAX_UPLOAD
            watched = call(url, "POST", "/api/watch", {"text": text, "name": f"big{copy}.jsonl"})
            assert len(watched["games"]) > 3000
            for game in watched["games"][:4]:
                call(url, "GET", f"/api/watch/{watched['id']}/{game['index']}?move=5")
        grown = resident_mib(server.pid) - baseline
        assert grown < MEMORY_BOUND_MIB, f"the server grew by {grown:.0f} MiB"
        again = call(url, "GET", f"/api/watch/{watched['id']}/0?move=0")  # the last upload is still there
        assert again["move"] == 0
    finally:
        server.terminate()
        server.wait(timeout=30)
