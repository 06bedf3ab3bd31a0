"""Training configs: reading YAML-shaped data into checked dataclasses, with errors that name the key.

A config is a dataclass of top-level values plus sections (each a dataclass); every key is optional
(the dataclass default), an unknown key is an error that lists the allowed ones, and a value is
converted to its default's type or refused.
"""

from __future__ import annotations

import dataclasses
import re

# a run's name is a directory name under runs/: no path separators, no "..", nothing hidden
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


class ConfigError(ValueError):
    """A training config with an unknown key or a bad value."""


def field_names(cls) -> list[str]:
    """The keys a config dataclass accepts."""
    return [f.name for f in dataclasses.fields(cls)]


def convert(where: str, value, default):
    """``value`` converted to the type of ``default``, or a ConfigError naming ``where``."""
    def fail(expected):
        raise ConfigError(f"{where} must be {expected}, got {value!r}")

    if isinstance(default, bool):
        return value if isinstance(value, bool) else fail("true or false")
    if isinstance(default, int):
        return int(value) if isinstance(value, int) and not isinstance(value, bool) else fail("an integer")
    if isinstance(default, float):
        if isinstance(value, str):  # YAML 1.1 reads 3e-4 (no dot) as a string
            try:
                value = float(value)
            except ValueError:
                fail("a number")
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else fail("a number")
    if isinstance(default, str):
        return value if isinstance(value, str) else fail("a string")
    if isinstance(default, list):
        if isinstance(value, (int, float, str)) and not isinstance(value, bool):
            value = [value]  # a single value is a list of one (num_players: 4)
        return list(value) if isinstance(value, (list, tuple)) else fail("a list")
    if isinstance(default, dict):
        return dict(value) if isinstance(value, dict) else fail("a mapping")
    raise AssertionError(default)


def section(cls, name: str, data, source: str):
    """The section ``name`` of a config as a ``cls`` dataclass; unknown keys raise ConfigError."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: section {name!r} must be a mapping of keys to values, got {data!r}")
    allowed = field_names(cls)
    unknown = [k for k in data if k not in allowed]
    if unknown:
        raise ConfigError(f"{source}: unknown key{'s' if len(unknown) > 1 else ''} "
                          f"{', '.join(f'{name}.{k}' for k in unknown)}; allowed keys in {name}: {', '.join(allowed)}")
    defaults = cls()
    values = {k: convert(f"{source}: {name}.{k}", v, getattr(defaults, k)) for k, v in data.items()}
    return cls(**values)


def load_sections(cls, sections: dict, data, source: str):
    """A ``cls`` config from plain data: its top-level keys plus one dataclass per name in ``sections``."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: a training config is a mapping of keys to values, got {type(data).__name__}")
    top = [name for name in field_names(cls) if name not in sections]
    allowed = top + list(sections)
    unknown = [k for k in data if k not in allowed]
    if unknown:
        listed = "; ".join(f"{name}: {', '.join(field_names(section_cls))}" for name, section_cls in sections.items())
        raise ConfigError(f"{source}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(str, unknown))}; "
                          f"allowed top-level keys: {', '.join(allowed)} (sections: {listed})")
    defaults = cls()
    values = {k: convert(f"{source}: {k}", data[k], getattr(defaults, k)) for k in top if k in data}
    parts = {name: section(section_cls, name, data.get(name), source) for name, section_cls in sections.items()}
    return cls(**values, **parts)


def check_positive(where: str, value, zero_ok: bool = False) -> None:
    """A ConfigError naming ``where`` unless ``value`` > 0 (>= 0 with ``zero_ok``)."""
    if value < 0 or (value == 0 and not zero_ok):
        raise ConfigError(f"{where} must be {'>= 0' if zero_ok else '> 0'}, got {value!r}")


def check_choice(where: str, value, allowed) -> None:
    """A ConfigError naming ``where`` unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        raise ConfigError(f"{where} must be one of {', '.join(map(str, allowed))}, got {value!r}")


def check_run_name(where: str, name: str) -> None:
    """A ConfigError naming ``where`` unless ``name`` is a plain name (it names the run's directory runs/<name>)."""
    if not NAME_PATTERN.fullmatch(name) or ".." in name:
        raise ConfigError(f"{where} must be a plain name (letters, digits, '.', '_', '-'; no path separators "
                          f"or '..'; it names the run's directory runs/<name>), got {name!r}")


def check_net_arch(where: str, widths) -> None:
    """A ConfigError naming ``where`` unless ``widths`` is a non-empty list of positive layer widths."""
    if not widths or any(isinstance(w, bool) or not isinstance(w, int) or w < 1 for w in widths):
        raise ConfigError(f"{where} must be a non-empty list of layer widths, got {widths!r}")


def check_agent_specs(where: str, specs) -> None:
    """A ConfigError naming ``where`` unless ``specs`` is a non-empty list of valid agent specs."""
    from packetrow_agents.registry import parse_spec

    if not specs:
        raise ConfigError(f"{where} must list at least one agent spec (e.g. random, heuristic)")
    for spec in specs:
        try:
            parse_spec(str(spec))
        except ValueError as error:
            raise ConfigError(f"{where}: {error}") from None
