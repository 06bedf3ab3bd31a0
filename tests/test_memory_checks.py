"""Sizes are checked against the machine's memory before anything is allocated (issue #47, item 5).

``packetrow_env.memory`` compares an estimate with the memory available; the batched engine, the training config
and the tournament's game count estimate what they would hold. These tests hold the refusals to happen before any
allocation (tracemalloc), to name the size, the estimate and the memory available, and the estimates to be about
what is really held.
"""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest

from packetrow_arena.records import records_bytes
from packetrow_arena.tournament import TournamentError, run_tournament
from packetrow_env import memory
from packetrow_env.memory import TooLargeError, available_memory, check_fits, format_bytes
from packetrow_env.vector import VectorGame, bytes_per_game
from packetrow_train.config import ConfigError, config_from_dict, load_config


@pytest.fixture
def machine(monkeypatch):
    """Set the memory available (bytes) that the checks see."""
    def set_available(nbytes: int | None) -> None:
        monkeypatch.setattr(memory, "available_memory", lambda: nbytes)
    return set_available


def _peak_bytes(work) -> int:
    """The most memory Python allocated while ``work()`` ran (it may raise)."""
    gc.collect()
    tracemalloc.start()
    try:
        work()
    except ValueError:
        pass
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def test_the_machine_reports_its_available_memory():
    available = available_memory()
    assert available is None or available > 0


def test_byte_counts_read_as_people_read_them():
    assert [format_bytes(n) for n in (0, 512, 1536, 14.56 * 2**30, 3 * 2**40, 2**50)] == [
        "0 B", "512 B", "1.5 KiB", "14.5 GiB", "3.0 TiB", "1,024.0 TiB"]
    assert format_bytes(10**400).endswith(" TiB")  # past float's range: still a number


def test_a_check_names_what_the_estimate_and_the_memory_available(machine):
    machine(2**30)
    check_fits("a small thing", 2**29)
    with pytest.raises(TooLargeError) as refused:
        check_fits("a big thing", 3 * 2**30, hint="; ask for less")
    assert str(refused.value) == ("a big thing would take about 3.0 GiB of memory, more than the 1.0 GiB available "
                                  "on this machine; ask for less")
    with pytest.raises(ConfigError):  # the caller's error class
        check_fits("a big thing", 3 * 2**30, ConfigError)
    machine(None)  # a machine that does not say: nothing is refused
    check_fits("anything", 10**30)


@pytest.mark.parametrize("setup", [{"seeds": range(10**9)}, {"num_games": 10**9}, {"seeds": np.arange(10**7)}])
def test_a_batch_too_large_for_the_machine_is_refused_before_anything_is_allocated(setup):
    """The issue's case grew to 7.1 GiB before a MemoryError; now it is a ValueError, allocating next to nothing."""
    refused = []

    def build():
        try:
            VectorGame(4, **setup)
        except ValueError as error:
            refused.append(str(error))
            raise

    size = len(setup.get("seeds", ())) or setup["num_games"]
    if available_memory() is None or size * bytes_per_game() < available_memory():
        pytest.skip("this machine holds the batch")
    assert _peak_bytes(build) < 2**20
    assert f"a VectorGame of {size:,} games would take about" in refused[0]
    assert "available on this machine" in refused[0] and "a game" in refused[0]


def test_the_limit_is_the_memory_available(machine):
    machine(10 * bytes_per_game())
    assert VectorGame(2, seeds=range(10)).num_games == 10
    with pytest.raises(TooLargeError, match="a VectorGame of 11 games"):
        VectorGame(2, seeds=range(11))
    with pytest.raises(TooLargeError, match="a VectorGame of more than 10 games"):
        VectorGame(2, seeds=(seed for seed in range(10**12)))  # an iterator is read only up to the 11th seed


def test_a_redeal_allocates_nothing_so_only_its_player_counts_are_checked(machine):
    """Re-dealing games of a batch (every new game of a training env) reuses the batch's arrays: it is not refused
    for memory, even with none left, while a bad player count still is, before any game changes."""
    vg = VectorGame([2, 3], seeds=[0, 1])
    machine(0)
    vg.reset([0, 1], num_players=[4, 5])
    assert vg.num_players.tolist() == [4, 5]
    with pytest.raises(ValueError, match="num_players has 1 entries for 2 games; give one per game"):
        vg.reset([0, 1], num_players=[2])
    with pytest.raises(ValueError, match="num_players must be integers from 2 to 5, got 6"):
        vg.reset([0], num_players=6)
    assert vg.num_players.tolist() == [4, 5]


def test_a_games_estimate_is_about_what_a_batch_holds():
    VectorGame(4, seeds=[0]).observe("full")  # compiled kernels and their caches first: not the batch's

    def batch():
        vg = VectorGame(4, seeds=range(2000))
        vg.observe("full")
    held = _peak_bytes(batch) / 2000
    assert 0.5 < bytes_per_game() / held < 2


def test_a_records_estimate_is_about_what_a_tournament_holds():
    def held(games: int) -> int:  # what a finished tournament still holds: its records
        gc.collect()
        tracemalloc.start()
        result = run_tournament(["random", "random"], num_players=2, games=games)  # held while measured
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        assert len(result.records) == games
        return kept

    held(2)  # the agents' and the engine's caches first
    each = (held(50) - held(10)) / 40
    assert 0.5 < records_bytes(1, 2) / each < 2


def test_a_tournament_of_more_games_than_its_records_fit_in_is_refused_before_any_is_played(machine):
    machine(records_bytes(10, 2))
    assert len(run_tournament(["random", "random"], num_players=2, games=10).records) == 10
    with pytest.raises(TournamentError, match="11 games of 2 players would take about .*; give fewer games"):
        run_tournament(["random", "random"], num_players=2, games=11)
    assert _peak_bytes(lambda: run_tournament(["random", "random"], num_players=2, games=10**15)) < 2**20


def test_a_config_whose_arrays_cannot_fit_is_refused_naming_its_keys(machine):
    machine(16 * 2**30)
    with pytest.raises(ConfigError, match=r"the rollout buffer of ppo.n_steps x env.n_envs = 256,000,000 steps "
                                          r"would take about [0-9.,]+ (GiB|TiB) of memory.*lower ppo.n_steps or "
                                          r"env.n_envs") as refused:
        config_from_dict({"env": {"n_envs": 10**6}}, "big.yaml")
    assert str(refused.value).startswith("big.yaml: ")
    load_config("quick")  # the main job fits
    machine(3 * bytes_per_game())  # a machine of 3 games: each part names what to lower
    for data, keys in [({}, "env.n_envs"), ({"env": {"n_envs": 1}}, "ppo.n_steps or env.n_envs"),
                       ({"env": {"n_envs": 1}, "ppo": {"n_steps": 1, "batch_size": 1}},
                        "ppo.net_arch or ppo.extractor_layer")]:
        with pytest.raises(ConfigError, match=f"lower {keys}$"):
            config_from_dict(data)
