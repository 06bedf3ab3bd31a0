"""No agent spec, config or saved game makes the program unpickle a file (issue #10, item 3).

A crafted SB3 checkpoint runs code when SB3 loads it (checked first, so the crafted file is known to be
dangerous); then each entry point that names an agent is given it, and must refuse it with a one-line
error before anything in the file runs. Numpy files are read with ``allow_pickle=False``: a pickle or an
object array dressed as ``.npz`` is refused too.
"""

from __future__ import annotations

import base64
import io
import json
import os
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml

from packetrow_agents import PolicyAgent, make_agent
from packetrow_agents.policy import ModelFormatError
from packetrow_agents.play import SAVE_FORMAT, SAVE_VERSION
from packetrow_agents.terminal import play
from packetrow_env.engine import Game
from packetrow_cli.main import main

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


class Payload:
    """Unpickling this creates the directory ``marker``: the sign that the file's code ran."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return os.mkdir, (self.marker,)


def crafted_checkpoint(path: Path, marker: Path) -> Path:
    """An SB3-style .zip whose 'data' holds one pickled field carrying the payload."""
    field = {":type:": "<class 'object'>",
             ":serialized:": base64.b64encode(pickle.dumps(Payload(marker))).decode()}
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data", json.dumps({"policy_class": field, "n_envs": 1}))
        archive.writestr("_stable_baselines3_version", "2.3.0")
    return path


@pytest.fixture
def evil(tmp_path, monkeypatch):
    """(checkpoint, marker): a crafted checkpoint in the working directory, and the path its payload creates."""
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / "PAYLOAD_RAN"
    return crafted_checkpoint(tmp_path / "evil.zip", marker), marker


def test_the_crafted_checkpoint_runs_its_code_when_sb3_loads_it(evil):
    """The control: the file really is dangerous, so the refusals below are what keep its code from running."""
    sb3 = pytest.importorskip("sb3_contrib")
    path, marker = evil
    with pytest.raises(Exception):
        sb3.MaskablePPO.load(path, device="cpu")
    assert marker.is_dir()


@pytest.mark.parametrize("spec", ["ppo:evil.zip", "ppo:path=evil.zip", "ppo:path=evil.zip,deterministic=false",
                                  "PPO:./evil.zip", "ppo:EVIL.ZIP"])
def test_agent_specs_refuse_it(evil, spec):
    _, marker = evil
    with pytest.raises(ValueError, match="not loaded as agents"):
        make_agent(spec)
    assert not marker.exists()


def test_policy_agent_load_refuses_it(evil):
    path, marker = evil
    with pytest.raises(ModelFormatError, match="not loaded as agents"):
        PolicyAgent.load(path)
    with pytest.raises(ModelFormatError, match="not loaded as agents"):
        PolicyAgent(path=str(path))
    assert not marker.exists()


@pytest.mark.parametrize("agents", ["ppo:path=evil.zip,random", "ppo:evil.zip,random"])
def test_tournament_refuses_it(evil, agents, capsys):
    _, marker = evil
    with pytest.raises(SystemExit):
        main(["tournament", "--agents", agents, "--players", "2", "--games", "2", "--no-progress"])
    assert "not loaded as agents" in capsys.readouterr().err
    assert not marker.exists()


def test_play_opponents_refuse_it(evil, capsys):
    _, marker = evil
    assert main(["play", "--players", "2", "--opponents", "ppo:evil.zip", "--seed", "1"]) == 2
    assert "not loaded as agents" in capsys.readouterr().err
    assert not marker.exists()


def test_a_shared_saved_game_naming_it_is_refused(evil, capsys):
    """A save file alone must not pick what gets unpickled (its opponents resolve from the current directory)."""
    _, marker = evil
    game = Game.new(2, seed=0)
    Path("shared_save.json").write_text(json.dumps({
        "format": SAVE_FORMAT, "format_version": SAVE_VERSION, "seat": 0, "seed": 1,
        "opponents": ["ppo:evil.zip"], "game": game.to_dict()}))
    assert main(["play", "--load", "shared_save.json"]) == 2
    assert "not loaded as agents" in capsys.readouterr().err
    with pytest.raises(ValueError, match="not loaded as agents"):
        play(load="shared_save.json", input_fn=lambda prompt: "quit", out=io.StringIO())
    assert not marker.exists()


@pytest.mark.parametrize("where", ["eval.opponents", "pool.mixture"])
def test_training_configs_naming_it_are_refused(evil, where, capsys):
    _, marker = evil
    data = yaml.safe_load((CONFIGS / "quick.yaml").read_text())
    if where == "eval.opponents":
        data["eval"]["opponents"] = ["random", "ppo:evil.zip"]
    else:
        data["pool"]["mixture"] = {"latest": 0.5, "ppo:path=evil.zip": 0.5}
    Path("evil.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(SystemExit):
        main(["train", "--config", "evil.yaml", "--out", "run", "--no-progress"])
    assert "not loaded as agents" in capsys.readouterr().err
    assert not marker.exists() and not Path("run").exists()


def test_resume_refuses_it_without_the_users_word(evil, capsys):
    """Resuming unpickles a checkpoint: only behind --trust-checkpoint, the documented statement that it is one's own."""
    _, marker = evil
    with pytest.raises(SystemExit):
        main(["train", "--config", "quick", "--resume", "evil.zip", "--out", "run", "--no-progress"])
    error = capsys.readouterr().err
    assert "--trust-checkpoint" in error and "unpickles" in error
    assert not marker.exists() and not Path("run").exists()


def test_pickles_dressed_as_npz_are_refused(evil):
    """np.load(allow_pickle=False): a pickle file, or an .npz holding a pickled object array, is not a policy."""
    _, marker = evil
    Path("pickle.npz").write_bytes(pickle.dumps(Payload(marker)))
    np.savez("objects.npz", meta=np.array("{}"), action_weight=np.array([Payload(marker)], dtype=object))
    for name in ["pickle.npz", "objects.npz"]:
        with pytest.raises(ModelFormatError, match=f"^{name} is not a policy export"):
            make_agent(f"ppo:{name}")
    assert not marker.exists()
