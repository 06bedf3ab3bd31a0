"""Agents by name: 'random', 'heuristic', 'ismcts:iters=200,rollout=random', ... for the command line and configs."""

from __future__ import annotations

import importlib
import inspect
import re

from .shipped import SHIPPED_POLICIES, SHIPPED_VALUE

# name -> (module, class); imported on first use so that e.g. torch loads only for learned agents
AGENTS = {
    "random": ("packetrow_agents.random_agent", "RandomAgent"),
    "heuristic": ("packetrow_agents.heuristic", "HeuristicAgent"),
    "ismcts": ("packetrow_agents.ismcts", "ISMCTSAgent"),
    "ppo": ("packetrow_agents.policy", "PolicyAgent"),
    "search": ("packetrow_agents.search", "SearchAgent"),
    "llm": ("packetrow_agents.llm", "LLMAgent"),
    "mixture": ("packetrow_agents.mixture", "MixtureAgent"),
    "robust": ("packetrow_agents.mixture", "RobustAgent"),
    "mmd": ("packetrow_agents.mixture", "MMDAgent"),
}
ALIASES = {"iters": "iterations", "seconds": "seconds_per_move", "time": "seconds_per_move"}
POSITIONAL = {"ppo": "path", "mixture": "path"}  # 'ppo:models/x.npz' means 'ppo:path=models/x.npz'
# the options naming model files the agent reads, checked wherever specs are, with the values that name no file
# but a shipped model ('ppo': the shipped policy; 'ppo:robust_br60': another shipped policy)
MODEL_OPTIONS = {"ppo": {"path": tuple(SHIPPED_POLICIES)},
                 "search": {"policy": ("ppo",), "value": ("ppo",), "opponents": ("ppo", "policy", "heuristic")}}
OPTION_START = re.compile(r"\s*[A-Za-z_]\w*\s*=")  # 'key=' opening a list part: an option, not an agent


def _value(text: str):
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return {"true": True, "false": False, "none": None}.get(text.lower(), text)


# constructor parameters a spec cannot set: the caller seeds the agent and names it; objects are passed in code
NOT_OPTIONS = ("self", "seed", "name")
CODE_ONLY = {"ppo": ("policy",)}  # PolicyAgent(policy=NumpyPolicy); a spec names the model by path


def agent_class(name: str):
    """The class an agent name builds (its module imported on first use)."""
    module, cls = AGENTS[name]
    return getattr(importlib.import_module(module), cls)


def agent_options(name: str) -> list[str]:
    """The options a spec of agent ``name`` may set (its constructor's keyword parameters)."""
    parameters = inspect.signature(agent_class(name).__init__).parameters
    return [p for p in parameters if p not in NOT_OPTIONS + CODE_ONLY.get(name, ())]


def _options_text(name: str) -> str:
    aliases = {}
    for alias, key in ALIASES.items():
        aliases.setdefault(key, []).append(alias)
    texts = [key + (f" (or {', '.join(aliases[key])})" if key in aliases else "") for key in agent_options(name)]
    return ", ".join(texts) if texts else "none"


def split_specs(text: str) -> list[str]:
    """'heuristic,ismcts:iters=200,rollout=random' -> ['heuristic', 'ismcts:iters=200,rollout=random'].

    The one rule for lists of agents (the terminal's opponents, a tournament's agents, the browser's): commas
    separate specs, and a part that starts with ``key=`` continues the options of the spec before it (so
    ``ppo:a.npz,path=C:/x.npz`` is one spec). An empty spec, or options with no agent before them, raise a
    ValueError saying where.
    """
    specs: list[str] = []
    parts = [p.strip() for p in str(text).split(",")]
    for position, part in enumerate(parts, start=1):
        if not part:
            raise ValueError(f"the agent list {text!r} has an empty agent spec at position {position} of {len(parts)} "
                             "(separate agents with single commas)")
        if OPTION_START.match(part):
            if not specs or ":" not in specs[-1]:
                before = f"{specs[-1]!r} has no options" if specs else "no agent comes before it"
                raise ValueError(f"{part!r} in the agent list {text!r} continues an agent's options, but {before}; "
                                 "options follow an agent's colon, e.g. ismcts:iters=200,rollout=random")
            specs[-1] += "," + part
        else:
            specs.append(part)
    return specs


def parse_spec(spec: str) -> tuple[str, dict]:
    """'ismcts:iters=200,rollout=random' -> ('ismcts', {'iterations': 200, 'rollout': 'random'}).

    Unknown options raise a ValueError listing the agent's options; a model path must be a ``.npz`` export
    (an SB3 ``.zip`` would be unpickled: see ``packetrow_agents.policy.load_policy``).
    """
    name, _, rest = str(spec).strip().partition(":")
    name = name.strip().lower()
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(sorted(AGENTS))}")
    options = {}
    allowed = agent_options(name)
    for i, part in enumerate(filter(None, (p.strip() for p in rest.split(",")))):
        key, eq, value = part.partition("=")
        if not eq and i == 0 and name in POSITIONAL:
            key, value = POSITIONAL[name], part
        elif not eq:
            raise ValueError(f"agent option {part!r} in {spec!r} must look like key=value; options of "
                             f"{name!r}: {_options_text(name)}")
        key = ALIASES.get(key.strip(), key.strip())
        if key not in allowed:
            hint = " (the seed comes from the command's --seed)" if key == "seed" else ""
            raise ValueError(f"unknown option {key!r} for agent {name!r} in {spec!r}{hint}; options of "
                             f"{name!r}: {_options_text(name)}")
        if key in options:
            raise ValueError(f"option {key!r} is given twice in {spec!r}; give each option of {name!r} once")
        options[key] = _value(value.strip())
    from .policy import check_model_path
    for key, names in MODEL_OPTIONS.get(name, {}).items():
        if options.get(key) not in (None, *names):
            try:
                check_model_path(options[key])
            except ValueError as error:  # say which option, and what else it takes
                raise type(error)(f"option {key} of {spec!r} takes {' or '.join(names)} or the path of a .npz "
                                  f"export: {error}") from None
    return name, options


def model_paths(name: str, options: dict) -> list:
    """The model files a parsed spec's agent reads (``MODEL_OPTIONS``; a mixture's file, which names its members'
    in turn: ``model_files``); none where it plays the shipped model."""
    if name == "mixture":
        return [options["path"]] if "path" in options else []
    return [options[key] for key, names in MODEL_OPTIONS.get(name, {}).items()
            if options.get(key) not in (None, *names)]


def model_files(spec: str) -> dict:
    """Every model file a spec's agent may read, by a name that holds on any machine: its own files by their path
    as given (``model_paths``), the shipped policies it names by name and, for an agent with model options, the
    shipped policy and value network (its defaults and ``ppo``); for a mixture, its file and its members' files."""
    name, options = parse_spec(spec)
    cls = agent_class(name)
    if hasattr(cls, "mixture_file"):
        path = cls.mixture_file(options)
        if path is None:
            return {}
        files = {str(path) if name == "mixture" else f"shipped {name} mixture": path}
        try:
            members = cls.member_specs(path)
        except ValueError:
            return files
        for member in members:
            files.update(model_files(member))
        return files
    if name not in MODEL_OPTIONS:
        return {}
    shipped = {f"shipped {options[key]}": SHIPPED_POLICIES[options[key]] for key in MODEL_OPTIONS[name]
               if options.get(key) in SHIPPED_POLICIES and options[key] != "ppo"}
    return {**{str(path): path for path in model_paths(name, options)}, **shipped,
            "shipped policy": SHIPPED_POLICIES["ppo"], "shipped value": SHIPPED_VALUE}


def make_agent(spec: str, seed: int = 0):
    """Build an agent from a spec string (see ``parse_spec``), seeded."""
    name, options = parse_spec(spec)
    try:
        agent = agent_class(name)(seed=seed, **options)
    except TypeError as error:
        raise ValueError(f"bad options for agent {name!r} in {spec!r}: {error}; options of {name!r}: "
                         f"{_options_text(name)}") from None
    agent.name = spec.strip()
    return agent
