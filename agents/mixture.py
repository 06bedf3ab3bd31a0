"""An agent that plays a mixture of agents: one member drawn per game, as a population's meta-strategy plays.

PSRO and Nash averaging (``packetrow population``) end with a *mixture* of agents, not one agent: against a
population whose members beat each other in a cycle, the mixture can be much harder to exploit than any member.
``MixtureAgent`` plays such a mixture: at the first move of each game it draws one member with the mixture's
weights (from the seed of that game, so a tournament reproduces) and plays the whole game as that member.

The mixture is a JSON file, named by the spec ``mixture:PATH`` (or ``mixture:path=PATH``)::

    {"mixture": {"ppo": 0.45, "ppo:path=runs/a/model.npz": 0.05, "ppo:path=runs/b/model.npz": 0.5},
     "mixture_by_players": {"4": {"ppo": 1.0}}}

``mixture``: agent specs and their weights (normalised to sum 1); ``mixture_by_players`` (optional): the mixture
of games of some player counts instead, as a training config's ``pool.mixture_by_players``. Members are any agent
spec but another mixture; model paths in them are read as in any spec (relative to the working directory), and
the shipped policies by name (``ppo:robust_br60``, ``packetrow_agents.shipped``).
``packetrow exploit`` trains its best response against the members themselves, drawn with the same weights in
each game (``weights``), so that it trains at the compiled members' speed.

Two shipped agents are mixture files (``ShippedMixtureAgent``; docs/model_card.md): ``robust`` (``RobustAgent``,
``models/robust.json``) plays, in 2-player games, the mixture PSRO found over best responses to the shipped policy,
which a best response trained against it beats less often than it beats the shipped policy; ``mmd`` (``MMDAgent``,
``models/mmd.json``) plays, in 2-player games, a mixture of the shipped policy trained on by MMD (``ppo:mmd_2p``)
and its counter from the seventh step of that training (``ppo:mmd_2p_step7``), the least exploitable mixture of
that population that keeps its strength against search. Both play the shipped policy ``ppo`` in 3-5 player
games.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from .base import Agent
from .shipped import SHIPPED_MIXTURES

KEYS = ("mixture", "mixture_by_players")


class MixtureAgent(Agent):
    """Plays one member of a mixture of agents per game (module docstring)."""

    def __init__(self, seed: int = 0, path=None):
        if path is None:
            raise ValueError("a mixture agent needs its file: mixture:PATH, a JSON file with a \"mixture\" of agent "
                             "specs and weights")
        self.path = Path(str(path))
        self.mixture, self.by_players = read_mixture(self.path)
        from .registry import make_agent  # the registry names this class
        self.members = {spec: make_agent(spec, seed) for spec in _specs(self.mixture, self.by_players)}
        self.name = f"mixture:{path}"
        self.reset(seed)

    @staticmethod
    def mixture_file(options: dict) -> Path | None:
        """The mixture file a parsed spec's agent reads (None where the spec names none)."""
        return options.get("path")

    @staticmethod
    def member_specs(path) -> list[str]:
        """The specs of every member a mixture file names (for any player count); a ValueError for a bad file."""
        return _specs(*read_mixture(path))

    def weights(self, num_players: int) -> dict[str, float]:
        """{member spec: probability} in games of ``num_players`` players (summing to 1)."""
        return self.by_players.get(num_players, self.mixture)

    def reset(self, seed: int) -> None:
        """A new game: its member is drawn at its first move (the draw depends on the game's player count)."""
        self._seed = seed
        self._member = None

    @property
    def member(self):
        """The member playing this game, None before its first move."""
        return self._member

    def act(self, view) -> int:
        """The action of this game's member for ``view`` (a SeatView)."""
        if self._member is None:
            self._member = self.members[draw_member(self.weights(view.num_players), self._seed)]
            self._member.reset(self._seed)
        return self._member.act(view)


class ShippedMixtureAgent(MixtureAgent):
    """A shipped mixture file played by its agent name (``SHIPPED_MIXTURES[agent_name]``); a spec sets no file."""

    agent_name: str

    def __init__(self, seed: int = 0):
        super().__init__(seed, SHIPPED_MIXTURES[self.agent_name])
        self.name = self.agent_name

    @classmethod
    def mixture_file(cls, options: dict) -> Path:
        """The shipped mixture file, whatever the spec."""
        return SHIPPED_MIXTURES[cls.agent_name]


class RobustAgent(ShippedMixtureAgent):
    """``models/robust.json`` (module docstring): hard to exploit in 2-player games."""

    agent_name = "robust"


class MMDAgent(ShippedMixtureAgent):
    """``models/mmd.json`` (module docstring): the MMD policy and its seventh step's counter in 2-player games,
    ``ppo`` in others."""

    agent_name = "mmd"


def draw_member(weights: dict[str, float], seed: int) -> str:
    """The member (spec) that a mixture of ``weights`` plays in a game where the agent's seed is ``seed``: the one
    draw rule, which the agent plays by and ``packetrow population --members`` reads back from record files."""
    specs = list(weights)
    return specs[np.random.default_rng(seed).choice(len(specs), p=list(weights.values()))]


def mixture_weights(spec: str, num_players: int) -> dict[str, float] | None:
    """{member spec: probability} that the agent of ``spec`` plays in games of ``num_players`` (as its ``weights``),
    read from its file without building its members; None for an agent that is not a mixture; a ValueError for a
    bad spec or mixture file."""
    from .registry import agent_class, parse_spec
    name, options = parse_spec(spec)
    cls = agent_class(name)
    if not issubclass(cls, MixtureAgent):
        return None
    path = cls.mixture_file(options)
    if path is None:
        raise ValueError(f"{spec!r}: a mixture agent needs its file: mixture:PATH")
    mixture, by_players = read_mixture(path)
    return by_players.get(num_players, mixture)


def read_mixture(path) -> tuple[dict[str, float], dict[int, dict[str, float]]]:
    """(mixture, mixture by player count) of a mixture file, each weight normalised; a ValueError saying what is
    wrong in the file and what is allowed."""
    path = Path(str(path))
    try:
        data = json.loads(path.read_text())
    except OSError as error:
        raise ValueError(f"cannot read the mixture file {path}: {error.strerror or error}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"the mixture file {path} is not JSON: {error}") from None
    if not isinstance(data, dict) or "mixture" not in data or set(data) - set(KEYS):
        raise ValueError(f"the mixture file {path} must hold a JSON object with the keys {', '.join(KEYS)} (the "
                         f"first required), got {sorted(data) if isinstance(data, dict) else type(data).__name__}")
    mixture = _weights(data["mixture"], f"{path}: mixture")
    by_players = data.get("mixture_by_players", {})
    if not isinstance(by_players, dict):
        raise ValueError(f"{path}: mixture_by_players must map player counts to mixtures, got {by_players!r}")
    counts = {}
    for count, weights in by_players.items():
        if not str(count).isdigit() or int(count) not in range(2, 6):
            raise ValueError(f"{path}: mixture_by_players has the player count {count!r}; allowed: 2, 3, 4, 5")
        counts[int(count)] = _weights(weights, f"{path}: mixture_by_players {count}")
    return mixture, counts


def _specs(mixture: dict, by_players: dict) -> list[str]:
    return sorted({spec for weights in (mixture, *by_players.values()) for spec in weights})


def _weights(weights, where: str) -> dict[str, float]:
    from .registry import agent_class, parse_spec
    if not isinstance(weights, dict) or not weights:
        raise ValueError(f"{where} must map agent specs to weights, e.g. {{\"ppo\": 0.5, \"heuristic\": 0.5}}, "
                         f"got {weights!r}")
    for spec, weight in weights.items():
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not (
                weight >= 0 and math.isfinite(weight)):
            raise ValueError(f"{where}: the weight of {spec!r} must be a number >= 0, got {weight!r}")
        try:
            name, _ = parse_spec(spec)
        except ValueError as error:
            raise ValueError(f"{where}: member {spec!r}: {error}") from None
        if issubclass(agent_class(name), MixtureAgent):
            raise ValueError(f"{where}: member {spec!r} is a mixture; list its members instead")
    total = sum(weights.values())
    if total <= 0:
        raise ValueError(f"{where}: the weights sum to 0; give at least one member a positive weight")
    return {spec: weight / total for spec, weight in weights.items() if weight > 0}
