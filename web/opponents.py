"""Which bots the page may seat: the offered opponents (one table), and the server's rule for anything else.

A spec from the page runs on the server and holds its game's lock while it thinks, and a model path names a
file the server reads: so by default only the specs of ``OFFERED`` are played. ``packetrow serve --any-agent``
allows every agent spec (any budget), with model files only from the server's ``--model-dir`` folders. A
refused spec is refused by what it asks for, never by whether a file exists (no file probing).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from packetrow_agents.registry import model_paths, parse_spec


@dataclass(frozen=True)
class Offered:
    """An opponent the page offers: its agent spec and what the person reads about it."""

    spec: str
    label: str


# The page's opponents, in the order it lists them; a new agent is one more row.
OFFERED = (
    Offered("ppo", "the shipped trained agent"),
    Offered("robust", "the shipped agent that is hard to exploit: one of three trained policies a game"),
    Offered("mmd", "the shipped agent trained on by MMD: stronger than ppo in 2-player games, ppo in others"),
    Offered("heuristic", "rule-based"),
    Offered("random", "random legal moves"),
    Offered("ismcts:seconds=1", "tree search, 1 s a move"),
    Offered("search:seconds=1", "search on the trained agent's rollouts, 1 s a move"),
)
DEFAULT_OPPONENT = OFFERED[0].spec


class SpecRefused(ValueError):
    """An agent spec this server does not play; the message says what is allowed."""


def _normal(spec: str) -> str:
    return ",".join(part.strip() for part in spec.strip().split(","))


@dataclass(frozen=True)
class OpponentRule:
    """What specs the server plays: the offered ones, or (``any_agent``) any, models only from ``model_dirs``."""

    any_agent: bool = False
    model_dirs: tuple[Path, ...] = field(default_factory=tuple)

    def check(self, spec: str) -> str:
        """``spec`` if this server plays it, else a SpecRefused naming what it allows."""
        offered = [o.spec for o in OFFERED]
        if _normal(spec) in offered:
            return _normal(spec)
        if not self.any_agent:
            raise SpecRefused(f"opponent {spec!r} is not offered by this server; offered: {', '.join(offered)} "
                              "(the server's --any-agent flag allows other agent specs)")
        try:
            name, options = parse_spec(spec)
        except ValueError as error:
            raise SpecRefused(str(error)) from None
        for path in model_paths(name, options):
            self._check_model(spec, path)
        return spec.strip()

    def _check_model(self, spec: str, path) -> None:
        folders = ", ".join(str(d) for d in self.model_dirs) or "none (start the server with --model-dir DIR)"
        refusal = SpecRefused(f"{spec!r}: a model must be a .npz file inside the server's model folders: {folders}")
        if not self.model_dirs:
            raise refusal
        try:
            resolved = Path(str(path)).resolve()
        except (OSError, ValueError, RuntimeError):
            raise refusal from None
        # resolved, so that '..' and symlinks cannot leave the folders
        if not any(resolved.is_relative_to(folder.resolve()) for folder in self.model_dirs):
            raise refusal
