"""CI's smoke of a non-editable install: run from an empty directory by the Python the wheel was installed into.

Each public entry once, on a tiny budget: the kernels compiled ahead, the batched engine, a short training run, a
tournament with the search agent, the browser app's start, the ladder, a belief posterior. Any failure exits non-zero with the
command's output; nothing here may read the repository (the directory it runs in must stay unrelated to it).
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import yaml


def packetrow(*args: str, timeout: int = 600) -> str:
    """Run the installed ``packetrow`` command; its stdout, or exit with its output on failure."""
    run = subprocess.run([str(Path(sys.executable).parent / "packetrow"), *args], capture_output=True, text=True,
                         timeout=timeout)
    if run.returncode:
        sys.exit(f"packetrow {' '.join(args)} failed ({run.returncode}):\n{run.stdout}\n{run.stderr}")
    print(f"ok: packetrow {' '.join(args)}")
    return run.stdout


def the_install_is_not_the_checkout() -> None:
    import packetrow_env

    location = Path(packetrow_env.__file__).resolve()
    assert "site-packages" in location.parts, f"packetrow_env comes from {location}, not the installed wheel"


def vector_game() -> None:
    import numpy as np
    from packetrow_env.vector import VectorGame
    from packetrow_env.vector.learner import random_legal

    vg = VectorGame(num_players=4, seeds=range(8), autoreset=False)
    rng = np.random.default_rng(0)
    while not vg.is_over.all():
        vg.observe("tracked")
        vg.step(random_legal(vg.legal_action_mask(), rng))
    print("ok: VectorGame played 8 games")


def gymnasium_ids() -> None:
    import gymnasium

    import packetrow_env  # noqa: F401 - registers packetrow/SingleAgent-v2

    env = gymnasium.make("packetrow/SingleAgent-v2", num_players=2, opponents="heuristic")
    env.reset(seed=0)
    envs = gymnasium.make_vec("packetrow/SingleAgent-v2", num_envs=4, opponents="ppo")
    envs.reset(seed=0)
    print("ok: gymnasium.make and make_vec built the registered envs")


def belief_posterior() -> None:
    from packetrow_agents import HeuristicAgent, RandomAgent
    from packetrow_agents.policy import action_model
    from packetrow_env import Game, belief
    from packetrow_env.seat_view import SeatView

    agents = [RandomAgent(0), HeuristicAgent(1)]
    game = Game.new(2, seed=3)
    for _ in range(30):
        game.step(agents[game.current_player].act(SeatView(game, game.current_player)))
    posterior = belief.starting_contract_posterior(SeatView(game, 0), {1: action_model(agents[1])})
    assert abs(sum(posterior[1].values()) - 1) < 1e-9, posterior
    print("ok: a belief posterior replayed the heuristic's moves")


def short_training() -> None:
    import packetrow_configs

    config = yaml.safe_load((Path(packetrow_configs.__file__).parent / "quick.yaml").read_text())
    config.update(total_timesteps=16384, pipeline=False)
    config["env"]["n_envs"] = 64
    config["eval"].update(final_games=8, games=8, workers=1)
    config["checkpoint"]["every"] = 0
    config["log"].update(tensorboard=False, progress_bar=False)
    Path("tiny.yaml").write_text(yaml.safe_dump(config))
    packetrow("train", "--config", "tiny.yaml", "--out", "run", "--no-progress")
    assert Path("run/model.npz").is_file(), sorted(Path("run").iterdir())


def web_app_starts() -> None:
    server = subprocess.Popen([str(Path(sys.executable).parent / "packetrow"), "serve", "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = server.stdout.readline()
        url = re.search(r"http://\S+", line)
        assert url, f"no address in the server's first line: {line!r}"
        deadline = time.monotonic() + 30
        while True:
            try:
                page = urllib.request.urlopen(url[0], timeout=5).read().decode()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        assert "Packet Row" in page, page[:200]
        print(f"ok: packetrow serve answered at {url[0]}")
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    the_install_is_not_the_checkout()
    packetrow("--help")
    packetrow("compile")  # the kernels on both cores, into the installed package's cache, before their first calls
    vector_game()
    gymnasium_ids()
    belief_posterior()
    packetrow("tournament", "--agents", "search:rollouts=8,heuristic", "--players", "2", "--games", "2",
              "--no-progress")
    packetrow("ladder", "--agent", "heuristic", "--games", "2", "--no-progress", timeout=900)
    web_app_starts()
    short_training()
    print("the wheel's smoke passed")


if __name__ == "__main__":
    main()
