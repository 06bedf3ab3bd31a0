"""A language model as an agent: it reads its seat's view as text (or JSON) with the legal moves as strings, and
answers with one of them, through an OpenAI-compatible chat endpoint.

A decision: the system prompt (``prompts/rules.txt``, the rules in short, and ``prompts/system.txt``, the answer's
form) and the turn
(``prompts/turn.txt``: ``view_formats.view_text`` or ``view_json``) are sent; the reply is read by
``move_text.LegalMoves.read`` (the move string, its number or a close variant). A reply that names no legal move
is answered with the reason and the legal moves (``prompts/rethink.txt``), up to ``retries`` times in the same
conversation; a call that gets no reply (``ChatError``) counts as a try. When every try has failed, the
``fallback`` agent (a spec: ``random`` by default) moves instead, or with ``fallback=none`` a ``MoveNotRead`` is
raised for the caller to score as a forfeit (the engine has no forfeit: a game is played to its end). A seat with
one legal move plays it without asking.

``transcript`` keeps every decision: its ``attempts``, one per try (the raw ``reply``, with the ``error`` that says
why no move was read from it where none was; only an ``error`` where no reply came), the ``move`` played and ``how``
it was found (the reading rule that read the last reply, ``forced``, or ``fallback`` with the ``fallback`` spec that
moved; ``forfeit`` where ``MoveNotRead`` was raised); ``write_transcript(path)`` writes it as JSON lines.
``move_note()`` (the agent protocol's) gives the last decision without what a game record already holds (seed, move
number, seat, action): tournaments store it with the move in the game's record, so records keep the raw replies.
"""

from __future__ import annotations

import json
from collections import Counter
from importlib.resources import files

from packetrow_env.agent_protocol import NoMove
from packetrow_env.move_text import LegalMoves
from packetrow_env.seat_view import SeatView
from packetrow_env.view_formats import view_json, view_text

from .base import Agent
from .chat_endpoint import ChatEndpoint, ChatError
from .registry import make_agent

VIEWS = ("text", "json")
MAX_RETRIES = 10
_IN_THE_RECORD = ("agent_seed", "move_number", "seat", "action")  # a transcript entry's keys a game record holds


def prompt(name: str) -> str:
    """A prompt of the package (``prompts/<name>.txt``)."""
    return files("packetrow_agents").joinpath("prompts", f"{name}.txt").read_text(encoding="utf-8")


class MoveNotRead(NoMove, ValueError):
    """No try of an agent without a fallback gave a legal move; the message holds each try's reason."""


class LLMAgent(Agent):
    """A model behind an OpenAI-compatible chat endpoint (see the module docstring).

    ``model`` and ``base_url`` name the model and the endpoint (``https://api.openai.com/v1`` by default); the key is
    read from the environment variable ``key_env`` at each call. ``view``: ``text`` or ``json``. ``retries``: how
    many times a reply that names no move is sent back (0-10). ``fallback``: the spec of the agent that moves when
    every try failed (a spec without commas), or None (``fallback=none``) to raise ``MoveNotRead``.
    ``temperature``, ``max_tokens`` and ``timeout`` (seconds a call) go to the endpoint.
    """

    def __init__(self, seed: int = 0, model: str | None = None, base_url: str = "https://api.openai.com/v1",
                 key_env: str = "OPENAI_API_KEY", view: str = "text", retries: int = 2, fallback: str | None = "random",
                 temperature: float = 0.0, max_tokens: int | None = None, timeout: float = 60.0, name: str = "llm"):
        if model is None or not str(model).strip():
            raise ValueError("the llm agent needs a model, e.g. "
                             "llm:model=gpt-4o-mini,base_url=https://api.openai.com/v1")
        if view not in VIEWS:
            raise ValueError(f"view must be one of {', '.join(VIEWS)}, got {view!r}")
        if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= MAX_RETRIES:
            raise ValueError(f"retries must be an integer from 0 to {MAX_RETRIES}, got {retries!r}")
        if fallback is not None and str(fallback).split(":")[0].strip().lower() == "llm":
            raise ValueError("the fallback of an llm agent cannot be another llm agent")
        self.endpoint = ChatEndpoint(str(base_url), str(model), str(key_env), float(timeout), float(temperature),
                                     max_tokens)
        self.view = view
        self.retries = retries
        self.fallback_spec = None if fallback is None else str(fallback).strip()
        self.fallback = None if fallback is None else make_agent(self.fallback_spec, seed)
        self.seed = seed
        self.name = name
        self.transcript: list[dict] = []

    def reset(self, seed: int) -> None:
        self.seed = seed
        if self.fallback is not None:
            self.fallback.reset(seed)

    def act(self, view: SeatView) -> int:
        moves = LegalMoves(view)
        entry = {"agent_seed": self.seed, "move_number": len(view.state.history), "seat": view.seat, "attempts": []}
        self.transcript.append(entry)
        if len(moves) == 1:
            return self._played(entry, moves, 0, "forced")
        messages = [{"role": "system", "content": prompt("rules") + "\n" + prompt("system")},
                    {"role": "user", "content": prompt("turn").format(view=self.turn_view(view))}]
        while len(entry["attempts"]) <= self.retries:
            try:
                reply = self.endpoint.complete(messages)
            except ChatError as error:
                entry["attempts"].append({"error": str(error)})
                continue
            reading = moves.read(reply)
            if reading.index is not None:
                entry["attempts"].append({"reply": reply})  # read by the rule that ``how`` names
                return self._played(entry, moves, reading.index, reading.rule)
            entry["attempts"].append({"reply": reply, "error": reading.error})
            messages += [{"role": "assistant", "content": reply},
                         {"role": "user", "content": prompt("rethink").format(error=reading.error,
                                                                             moves=moves.numbered())}]
        if self.fallback is None:
            entry["how"] = "forfeit"
            raise MoveNotRead(f"{self.name} gave no legal move in {1 + self.retries} tries: "
                              + "; ".join(attempt["error"] for attempt in entry["attempts"]))
        entry["fallback"] = self.fallback_spec
        action = int(self.fallback.act(view))
        return self._played(entry, moves, moves.actions.index(action), "fallback")

    def turn_view(self, view: SeatView) -> str:
        """The seat's view as the turn's prompt shows it (``view``: text or JSON)."""
        return view_text(view) if self.view == "text" else json.dumps(view_json(view))

    @staticmethod
    def _played(entry: dict, moves: LegalMoves, index: int, how: str) -> int:
        entry.update(action=moves.actions[index], move=moves.texts[index], how=how)
        return moves.actions[index]

    def summary(self) -> dict:
        """How the transcript's moves were found: decisions, and per ``how`` (a reading rule, ``forced``,
        ``fallback``, ``forfeit``); ``retried``: the decisions that needed more than one try."""
        counts = Counter(entry["how"] for entry in self.transcript if "how" in entry)
        retried = sum(len(entry["attempts"]) > 1 for entry in self.transcript)
        return {"decisions": len(self.transcript), "retried": retried, **dict(sorted(counts.items()))}

    def move_note(self) -> dict | None:
        """The last decision as its game's record keeps it: ``attempts``, ``move``, ``how`` (and ``fallback``, the
        spec that moved, where it did); the record itself holds the seed, the move's number, the seat and the
        action."""
        if not self.transcript:
            return None
        return {key: value for key, value in self.transcript[-1].items() if key not in _IN_THE_RECORD}

    def write_transcript(self, path) -> None:
        """Write the transcript as JSON lines, one decision a line."""
        with open(path, "w", encoding="utf-8") as file:
            file.writelines(json.dumps(entry) + "\n" for entry in self.transcript)
