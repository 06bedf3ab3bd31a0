"""PSRO over policies with the exploit stack: is a population's Nash mixture harder to exploit than one policy?

Policy-space response oracles (Lanctot et al., NeurIPS 2017) in 2-player games, with `packetrow exploit` as the
oracle. Each iteration:

1. the population's mixture is written as a mixture agent's file (`mixture_K.json`, `packetrow_agents.mixture`);
2. a best response to it is trained from `--start` for `--steps` learner steps (`packetrow_train.exploit.exploit`,
   seed K), and plays `--games` duplicate games against the mixture: its win rate is the mixture's
   exploitability at that budget, the iteration's row of the table;
3. the best response joins the population and plays every member `--pair-games` duplicate games (seed
   `--pair-seed`, the same deals for every pair);
4. the next mixture is the maximum-entropy Nash equilibrium of the population's meta-game (win rates, ties half;
   `packetrow_arena.population.max_entropy_nash`).

`--anchors SPEC=W ...` holds each best response to general strength: a share W of its training seats is drawn
from those agents (e.g. `--anchors ppo=0.2 heuristic=0.2`), the mixture keeping the rest (`exploit`'s
``anchors``); it is still measured against the mixture alone. Plain best responses to a population of best
responses become specialists that lose to players none of them trained against (docs/evaluation.md): anchored
ones trade some of their edge against the mixture for that strength.

The first population is `--members` (agent specs; the shipped policy by default). Everything is kept in `--out`
(`psro.json`: the members, the pair results, the mixtures and the rows), so an interrupted run resumes where it
stopped; `--iterations` may be raised on a resume. Budgets are learner steps, not minutes, so that the oracle does
not depend on the machine's load (8M steps: about 9 minutes of training on the idle 2-core development machine,
about 12 minutes of wall time with the evaluations and games).

    python benchmarks/psro.py --help
    python benchmarks/psro.py --out runs/psro --iterations 4 --steps 8000000

`--iterations 0` plays the round-robin alone. `--candidates SPEC ...` restricts a last mixture to some members
(those strong enough against opponents outside the population, say): `mixture_candidates.json` is the mixture of
them that the best member of the whole population beats least (`least_exploitable_mixture`), printed with that
member and its win rate, a lower bound on what a fresh best response wins against it. With `--strength SPEC=RATE`
for every candidate (its win rate against an opponent outside the population, ISMCTS say) and `--floor F`, the
mixture may use every candidate but must score at least F against that opponent on average
(`mixture_candidates_floor_F.json`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from packetrow_arena.population import least_exploitable_mixture, max_entropy_nash
from packetrow_arena.tournament import run_tournament
from packetrow_train.exploit import ExploitError, check_anchors, exploit


def pair_win_rate(a: str, b: str, games: int, seed: int, workers: int) -> float:
    """``a``'s share of wins (ties half) against ``b`` in ``games`` 2-player duplicate games."""
    result = run_tournament([a, b], 2, games, seed=seed, workers=workers, progress=False, duplicate=True)
    return float(result.table[0]["win_rate"])


def meta_game(members: list[str], wins: dict) -> np.ndarray:
    """The members' antisymmetric meta-game: A[i, j] = i's win rate against j less 1/2 (``wins["a|b"]``)."""
    size = len(members)
    payoff = np.zeros((size, size))
    for i, a in enumerate(members):
        for j, b in enumerate(members):
            if i != j:
                payoff[i, j] = wins[f"{a}|{b}"] - 0.5
    return (payoff - payoff.T) / 2


def nash_mixture(members: list[str], wins: dict) -> list[float]:
    """The maximum-entropy Nash weights of the members' meta-game."""
    return [float(w) for w in max_entropy_nash(meta_game(members, wins))]


def candidates_mixture(members: list[str], wins: dict, candidates: list[str], strength: dict | None = None,
                       floor: float | None = None) -> tuple[list[float], str, float]:
    """(weights, best member, its win rate): the mixture of ``candidates`` that the best member beats least; with
    ``floor``, among those whose average ``strength`` (a score per candidate) is at least ``floor``."""
    game = meta_game(members, wins)
    weights, value = least_exploitable_mixture(game, [members.index(c) for c in candidates],
                                               [strength[c] for c in candidates] if floor is not None else (), floor)
    return [float(w) for w in weights], members[int(np.argmax(game @ weights))], value + 0.5


def write_mixture(path: Path, members: list[str], weights: list[float]) -> str:
    """A mixture agent's file of the members with positive weight; its spec."""
    mixture = {m: round(w, 4) for m, w in zip(members, weights) if round(w, 4) > 0}
    path.write_text(json.dumps({"mixture": mixture}, indent=1) + "\n")
    return f"mixture:{path}"


def complete_pairs(state: dict, args) -> None:
    """Play every pair of members not played yet (both orders recorded from one duplicate match)."""
    members, wins = state["members"], state["wins"]
    for i, a in enumerate(members):
        for b in members[:i]:
            if f"{a}|{b}" not in wins:
                rate = pair_win_rate(a, b, args.pair_games, args.pair_seed, args.workers)
                wins[f"{a}|{b}"], wins[f"{b}|{a}"] = rate, 1.0 - rate
                print(f"  {a} against {b}: {100 * rate:.1f}%", file=sys.stderr, flush=True)
                save(state, args.out)


def save(state: dict, out: Path) -> None:
    tmp = out / "psro.json.tmp"
    tmp.write_text(json.dumps(state, indent=1) + "\n")
    tmp.replace(out / "psro.json")


def table(state: dict) -> str:
    """The rows as a Markdown table, members named m0, m1, ... (listed under it)."""
    lines = ["| iteration | members | mixture (weights over 1%) | best response's win rate [95% CI] | learner steps |",
             "|---:|---:|---|---|---:|"]
    for row in state["rows"]:
        weights = ", ".join(f"m{i} {w:.2f}" for i, w in enumerate(row["weights"]) if w > 0.01)
        lines.append(f"| {row['iteration']} | {len(row['members'])} | {weights} | {100 * row['win_rate']:.1f}% "
                     f"[{100 * row['low']:.1f}, {100 * row['high']:.1f}] | {row['timesteps']:,} |")
    lines += ["", "Members: " + "; ".join(f"m{i} `{m}`" for i, m in enumerate(state["members"]))]
    return "\n".join(lines)


def anchor(text: str) -> tuple[str, float]:
    """argparse type of SPEC=W."""
    spec, _, weight = text.rpartition("=")
    try:
        return spec, float(weight)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected SPEC=WEIGHT, e.g. heuristic=0.2, got {text!r}") from None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("runs/psro"), help="the run's folder (default runs/psro)")
    parser.add_argument("--members", nargs="+", default=["ppo"], metavar="SPEC",
                        help="the first population, agent specs (default: ppo)")
    parser.add_argument("--iterations", type=int, default=3,
                        help="best responses to train (default 3; 0: only the members' round-robin and its mixtures)")
    parser.add_argument("--steps", type=int, default=8_000_000,
                        help="learner steps of each best response (default 8000000)")
    parser.add_argument("--start", default="ppo", help="the policy each best response starts from (default ppo)")
    parser.add_argument("--anchors", nargs="+", type=anchor, default=[], metavar="SPEC=W",
                        help="agents each best response also trains against, with their shares of the seats "
                             "(default: none, a pure best response)")
    parser.add_argument("--games", type=int, default=1000,
                        help="duplicate games of each best response against its mixture (default 1000)")
    parser.add_argument("--pair-games", type=int, default=400,
                        help="duplicate games of each pair of members (default 400)")
    parser.add_argument("--pair-seed", type=int, default=11, help="seed of the pairs' deals (default 11)")
    parser.add_argument("--workers", type=int, default=2, help="processes playing games (default 2)")
    parser.add_argument("--candidates", nargs="+", default=[], metavar="SPEC",
                        help="members of the population a last mixture is restricted to: the mixture of them "
                             "that the best member beats least, written as mixture_candidates.json (default: none)")
    parser.add_argument("--strength", nargs="+", type=anchor, default=[], metavar="SPEC=RATE",
                        help="each candidate's win rate against an opponent outside the population, for --floor")
    parser.add_argument("--floor", type=float, default=None,
                        help="the least average --strength the candidates' mixture may have (default: none)")
    args = parser.parse_args(argv)
    if args.iterations < 0 or args.steps < 1 or args.games < 2 or args.games % 2 or args.pair_games < 2 \
            or args.pair_games % 2:
        parser.error("--iterations must be 0 or more, --steps positive, --games and --pair-games positive and even")
    anchors = dict(args.anchors)
    try:
        check_anchors(anchors)
    except ExploitError as error:
        parser.error(f"--anchors: {error}")
    state_file = args.out / "psro.json"
    state = json.loads(state_file.read_text()) if state_file.exists() else {
        "members": list(args.members), "wins": {}, "rows": [], "steps": args.steps, "start": args.start,
        "anchors": anchors}
    if (state["steps"], state["start"], state.get("anchors", {})) != (args.steps, args.start, anchors):
        parser.error(f"{state_file} was run with --steps {state['steps']} --start {state['start']} --anchors "
                     f"{' '.join(f'{a}={w:g}' for a, w in state.get('anchors', {}).items()) or '(none)'}; resume "
                     "with those")
    unknown = [c for c in args.candidates if c not in state["members"]]
    if unknown or len(set(args.candidates)) != len(args.candidates):
        parser.error(f"--candidates must be distinct members of the population ({', '.join(state['members'])}); "
                     f"{'not members: ' + ', '.join(unknown) if unknown else 'one is repeated'}")
    strength = dict(args.strength)
    if args.floor is not None:
        missing = [c for c in args.candidates if c not in strength]
        extra = [s for s in strength if s not in args.candidates]
        if not args.candidates or missing or extra or len(strength) < len(args.strength) \
                or not all(0 <= r <= 1 for r in strength.values()) or not 0 <= args.floor <= 1:
            parser.error("--floor needs --candidates and one --strength SPEC=RATE for each of them, rates and floor "
                         f"in [0, 1]; missing: {', '.join(missing) or 'none'}; not candidates: "
                         f"{', '.join(extra) or 'none'}")
        if max(strength[c] for c in args.candidates) < args.floor:
            parser.error(f"--floor {args.floor}: no candidate's --strength reaches it")
    elif strength:
        parser.error("--strength is read only with --floor")
    args.out.mkdir(parents=True, exist_ok=True)
    complete_pairs(state, args)
    for iteration in range(len(state["rows"]) + 1, args.iterations + 1):
        weights = nash_mixture(state["members"], state["wins"])
        spec = write_mixture(args.out / f"mixture_{iteration}.json", state["members"], weights)
        print(f"iteration {iteration}: a best response to {spec}", file=sys.stderr, flush=True)
        curve = exploit(spec, 2, steps=[args.steps], games=args.games, seed=iteration, workers=args.workers,
                        out=args.out / f"br_{iteration}", start=args.start, overwrite=True, anchors=anchors)
        point = curve.points[0]
        state["rows"].append({"iteration": iteration, "members": list(state["members"]), "weights": weights,
                              "win_rate": point.win_rate, "low": point.low, "high": point.high,
                              "timesteps": point.timesteps, "best_response": str(point.npz_path)})
        state["members"].append(f"ppo:path={point.npz_path}")
        save(state, args.out)
        complete_pairs(state, args)
        print(table(state), file=sys.stderr, flush=True)
    weights = nash_mixture(state["members"], state["wins"])
    print(f"the last mixture: {write_mixture(args.out / 'mixture_last.json', state['members'], weights)}")
    if args.candidates:
        weights, best, rate = candidates_mixture(state["members"], state["wins"], args.candidates, strength,
                                                 args.floor)
        name = "mixture_candidates.json" if args.floor is None else f"mixture_candidates_floor_{args.floor:g}.json"
        spec = write_mixture(args.out / name, state["members"], weights)
        print(f"the candidates' mixture: {spec}; the best member against it, {best}, wins {100 * rate:.1f}%")
    print(table(state))
    return 0


if __name__ == "__main__":
    sys.exit(main())
