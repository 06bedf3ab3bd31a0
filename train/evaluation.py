"""Evaluating a learner: seat-rotated tournaments against fixed bots, one row per opponent and player count."""

from __future__ import annotations

import math

from packetrow_agents.policy import PolicyAgent

from .config import TrainConfig
from .run_dir import export_model
from packetrow_arena.tournament import run_tournament

LEARNER = "learner"  # the learner's entry name in evaluation tournaments
EVAL_SEED_OFFSET = 1_000_003  # evaluations deal from the run's seed + this, apart from its training games


def evaluate(agent, opponents=("random", "heuristic"), player_counts=(2, 4), games: int = 40, seed: int = 0,
             workers: int = 1, observation_mode: str = "tracked") -> list[dict]:
    """The learner ``agent`` against n-1 copies of each opponent spec per player count: one row each."""
    agent.name = LEARNER
    rows = []
    for opponent in opponents:
        for n in player_counts:
            count = math.ceil(games / n) * n  # whole rotations: the learner plays every seat equally often
            result = run_tournament([agent] + [opponent] * (n - 1), n, count, seed, workers, progress=False,
                                    observation_mode=observation_mode)
            row = result.row(LEARNER)
            rows.append({"opponent": str(opponent), "num_players": n, "games": row["games"],
                         **{k: row[k] for k in ("win_rate", "win_low", "win_high", "fair_share", "mean_rank",
                                                "rank_low", "rank_high", "mean_vp", "vp_low", "vp_high")}})
    return rows


def format_evaluation(rows: list[dict]) -> str:
    """Evaluation rows as an aligned table."""
    header = ["opponents", "players", "games", "win rate [95% CI]", "fair share", "mean rank [95% CI]",
              "mean VP [95% CI]"]
    lines = [header]
    for r in rows:
        lines.append([r["opponent"], str(r["num_players"]), str(r["games"]),
                      f"{100 * r['win_rate']:.1f}% [{100 * r['win_low']:.1f}, {100 * r['win_high']:.1f}]",
                      f"{100 * r['fair_share']:.1f}%",
                      f"{r['mean_rank']:.2f} [{r['rank_low']:.2f}, {r['rank_high']:.2f}]",
                      f"{r['mean_vp']:.1f} [{r['vp_low']:.1f}, {r['vp_high']:.1f}]"])
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    text = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths)))
            for line in lines]
    text.insert(1, "  ".join("-" * w for w in widths))
    text.append("The learner holds one seat, every other seat plays the opponent; seats rotate. "
                "Rank 1 = best; a shared win counts 1/k.")
    return "\n".join(text)


def evaluate_model(model, config: TrainConfig, games: int) -> list[dict]:
    """Evaluate the model's current policy as the config's eval section says."""
    agent = PolicyAgent(policy=export_model(model, config), deterministic=config.eval.deterministic)
    return evaluate(agent, config.eval.opponents, config.eval.num_players, games, config.seed + EVAL_SEED_OFFSET,
                    config.eval.workers, config.env.observation_mode)
