"""The config reference is generated from the config schema: every key of both trainers, its type, default, meaning."""

import dataclasses
import json

import pytest

from packetrow_train.config import TrainConfig, config_reference, sections_of
from packetrow_train.rllib_selfplay import RLlibConfig


def keys(cls) -> list[tuple[str, dataclasses.Field, object]]:
    """(section.key, field, default) of every key of a config dataclass."""
    defaults = cls()
    sections = sections_of(cls)
    found = [(f.name, f, getattr(defaults, f.name)) for f in dataclasses.fields(cls) if f.name not in sections]
    for name, section in sections.items():
        found += [(f"{name}.{f.name}", f, getattr(getattr(defaults, name), f.name))
                  for f in dataclasses.fields(section)]
    return found


@pytest.mark.parametrize("cls", [TrainConfig, RLlibConfig])
def test_every_key_has_a_row_with_its_default_and_meaning(cls):
    table = config_reference(cls).splitlines()
    assert table[0] == "| key | type | default | meaning |"
    rows = {line.split(" | ")[0].removeprefix("| "): line for line in table[2:]}
    assert len(rows) == len(table) - 2 == len(keys(cls))
    for key, f, default in keys(cls):
        meaning = f.metadata.get("meaning", "")
        assert meaning.strip(), f"{cls.__name__}.{key} has no meaning"
        row = rows[f"`{key}`"]
        assert f"`{json.dumps(default)}`" in row and meaning.replace("|", "\\|") in row
        assert row.count(" | ") == 3  # the pipes of "tanh | relu" are escaped, not new cells


def test_the_reference_names_the_types_and_sections():
    table = config_reference()
    assert "| `ppo.net_arch` | list | `[64, 64]` |" in table
    assert "| `pool.mixture` | mapping |" in table and "| `eval.deterministic` | bool | `true` |" in table
    assert "| `env.observation_mode` | str | `\"tracked\"` | what the learner observes: tracked \\| " in table
    assert "| `league.win_rate_threshold` | float | `0.7` |" in config_reference(RLlibConfig)


def test_every_section_of_the_configs_has_a_meaning():
    for cls in (TrainConfig, RLlibConfig):
        assert all(f.metadata.get("meaning") for f in dataclasses.fields(cls))
