"""A mixture's match from its members' matches: play only the games a member's own match does not already hold.

A mixture agent (``packetrow_agents.mixture``) draws one member a game from that game's agent seed and passes the
seed on, so in a tournament it plays, game for game, exactly the game its drawn member plays in the same tournament
with the member in its place (same deals, seeds and seats): a deterministic member, move for move. So where a
member has played the whole match already (M against ISMCTS at 1 s a move, two hours of both cores), a mixture
that draws it in most games needs only its other games played.

    python benchmarks/mixture_member_games.py play --records DIR/records.jsonl --member SPEC --games 200
    python benchmarks/mixture_member_games.py count --records DIR/records.jsonl --member SPEC=MEMBER.jsonl \
        --games 200

``play``: ``--records`` is the record file of the mixture's tournament (``packetrow tournament --agents
mixture:FILE OPPONENT ... --out DIR``: its header, and any games it played); this plays, of its first ``--games``
games, those it lacks in which the mixture draws a member other than ``--member``, and appends them there
(``play_games``: each exactly its record in that tournament). ``packetrow tournament ... --resume`` plays the rest.

``count``: the mixture's wins over ``--games`` games: the record file's games, and where it lacks a game in which
the mixture draws ``--member``, that game from ``MEMBER.jsonl`` (the member's match: same opponent, seed, players
and schedule), after checking that every game both files hold is the same game; with a Wilson 95% interval and
each member's share. The mixture is the first entry of the tournament.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict

from packetrow_agents.mixture import draw_member, mixture_weights
from packetrow_arena import records as game_records
from packetrow_arena.stats import wilson_interval
from packetrow_arena.tournament import game_seeds, lineup, play_games

SAME_GAME = ("deal", "seed", "agent_seeds", "entries", "actions", "scores", "ranks")


def read(path: str) -> tuple[dict, dict[int, dict]]:
    """(header, {game index: record}) of a record file."""
    records = game_records.read_records(path)
    return records.header, {game["index"]: game for game in records.games}


def members(header: dict, member: str) -> dict[str, float]:
    """The weights of the mixture (entry 0) of a record file's ``header``, checked to hold ``member``."""
    weights = mixture_weights(header["specs"][0], header["num_players"]) or {}
    if member not in weights:
        raise SystemExit(f"{member!r} is not a member of {header['specs'][0]}; its members: {', '.join(weights)}")
    return weights


def drawn(weights: dict[str, float], game: dict) -> str:
    """The member the mixture of ``weights`` (entry 0) plays in ``game``."""
    return draw_member(weights, game["agent_seeds"][game["entries"].index(0)])


def mixture_games(header: dict, games: int) -> list[dict]:
    """The index, line-up and agent seeds of each of the tournament's first ``games`` games, as its records will
    hold them (the tournament's own schedule)."""
    players, seed = header["num_players"], header["seed"]
    if header.get("schedule", "rotation") != "rotation":
        raise SystemExit("mixture_member_games: only seat-rotated tournaments (no --duplicate) are supported")
    out = []
    for index in range(games):
        entries = lineup(index, len(header["specs"]), players, seed)
        out.append({"index": index, "entries": entries, "agent_seeds": game_seeds(index, players, seed)[1]})
    return out


def play(args) -> int:
    header, held = read(args.records)
    weights = members(header, args.member)
    todo = [g["index"] for g in mixture_games(header, args.games)
            if g["index"] not in held and drawn(weights, g) != args.member]
    print(f"{len(todo)} games to play: {todo}", flush=True)
    play_games(header["specs"], header["num_players"], todo, seed=header["seed"], workers=args.workers,
               progress=not args.no_progress, chunk_size=1,
               on_chunk=lambda chunk: game_records.append_records(args.records, chunk))
    return 0


def count(args) -> int:
    member, _, member_path = args.member.rpartition("=")
    if not member:
        raise SystemExit("mixture_member_games count: --member is SPEC=RECORDS (the member's match's record file)")
    header, held = read(args.records)
    weights = members(header, member)
    member_header, member_held = read(member_path)
    for key in ("num_players", "seed", "schedule"):
        if header.get(key) != member_header.get(key):
            raise SystemExit(f"{member_path} was played with {key} {member_header.get(key)!r}, the mixture's match "
                             f"with {header.get(key)!r}")
    if header["specs"][1:] != member_header["specs"][1:]:
        raise SystemExit(f"{member_path}'s opponents {member_header['specs'][1:]} are not the mixture's "
                         f"{header['specs'][1:]}")
    wins, played, checked, taken, missing = defaultdict(float), defaultdict(int), 0, 0, 0
    for game in mixture_games(header, args.games):
        index = game["index"]
        if index in held:
            record = held[index]
            if drawn(weights, record) == member and index in member_held:
                if any(record[k] != member_held[index][k] for k in SAME_GAME):
                    raise SystemExit(f"game {index}: the mixture's game is not its member's: the rule fails here")
                checked += 1
        elif drawn(weights, game) == member and index in member_held:
            record, taken = member_held[index], taken + 1
        else:
            missing += 1
            continue
        seat, ranks = record["entries"].index(0), record["ranks"]
        best = min(ranks)
        who = drawn(weights, record)
        wins[who] += 1 / ranks.count(best) if ranks[seat] == best else 0.0
        played[who] += 1
    total, n = sum(wins.values()), sum(played.values())
    low, high = wilson_interval(total, n) if n else (0.0, 1.0)
    print(f"{header['specs'][0]} against {', '.join(header['specs'][1:])}: won {total:g} of {n} games, "
          f"{total / max(n, 1):.1%} [{low:.1%}, {high:.1%}]; {len(held)} from its match, {taken} from {member}'s "
          f"(the {checked} games both played are the same games), {missing} not played yet")
    for who in sorted(played, key=played.get, reverse=True):
        print(f"  {who}: {wins[who]:g} of {played[who]} ({wins[who] / played[who]:.1%})")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("play", help="play the games in which the mixture draws another member than --member")
    p.add_argument("--records", required=True, help="the mixture's match's records.jsonl (its header at least)")
    p.add_argument("--member", required=True, help="the member whose own match holds its games (a spec)")
    p.add_argument("--games", type=int, required=True, help="games of the match")
    p.add_argument("--workers", type=int, default=2, help="processes playing the games (default 2)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    c = sub.add_parser("count", help="the mixture's wins from its match and its member's")
    c.add_argument("--records", required=True, help="the mixture's match's records.jsonl")
    c.add_argument("--member", required=True, help="SPEC=RECORDS: the member and its own match's records.jsonl")
    c.add_argument("--games", type=int, required=True, help="games of the match")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error(f"--games must be a positive number of games, got {args.games}")
    try:
        return play(args) if args.command == "play" else count(args)
    except game_records.RecordError as error:
        parser.exit(2, f"mixture_member_games: {error}\n")


if __name__ == "__main__":
    sys.exit(main())
