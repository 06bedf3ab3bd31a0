"""Agents by name: 'random', 'heuristic', 'ismcts:iters=200,rollout=random', ... for the command line and configs."""

from __future__ import annotations

import importlib

# name -> (module, class); imported on first use so that e.g. torch loads only for learned agents
AGENTS = {
    "random": ("packetrow_agents.random_agent", "RandomAgent"),
    "heuristic": ("packetrow_agents.heuristic", "HeuristicAgent"),
    "ismcts": ("packetrow_agents.ismcts", "ISMCTSAgent"),
    "ppo": ("packetrow_agents.policy", "PolicyAgent"),
}
ALIASES = {"iters": "iterations", "seconds": "seconds_per_move", "time": "seconds_per_move"}
POSITIONAL = {"ppo": "path"}  # 'ppo:models/x.npz' means 'ppo:path=models/x.npz'


def _value(text: str):
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return {"true": True, "false": False, "none": None}.get(text.lower(), text)


def parse_spec(spec: str) -> tuple[str, dict]:
    """'ismcts:iters=200,rollout=random' -> ('ismcts', {'iterations': 200, 'rollout': 'random'})."""
    name, _, rest = spec.strip().partition(":")
    name = name.strip().lower()
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(sorted(AGENTS))}")
    options = {}
    for i, part in enumerate(filter(None, (p.strip() for p in rest.split(",")))):
        key, eq, value = part.partition("=")
        if not eq and i == 0 and name in POSITIONAL:
            key, value = POSITIONAL[name], part
        elif not eq:
            raise ValueError(f"agent option {part!r} in {spec!r} must look like key=value")
        options[ALIASES.get(key.strip(), key.strip())] = _value(value.strip())
    return name, options


def make_agent(spec: str, seed: int = 0):
    """Build an agent from a spec string (see ``parse_spec``), seeded."""
    name, options = parse_spec(spec)
    module, cls = AGENTS[name]
    factory = getattr(importlib.import_module(module), cls)
    try:
        agent = factory(seed=seed, **options)
    except TypeError as error:
        raise ValueError(f"bad options for agent {name!r} in {spec!r}: {error}") from None
    agent.name = spec.strip()
    return agent
