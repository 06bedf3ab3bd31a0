"""Search on a learned policy: determinised policy rollouts for every candidate action (SPARTA-style).

At each decision the agent deals K determinisations of what its seat cannot see
(``SeatView.sample_determinization``): with ``belief="uniform"`` uniform over the deals consistent with the
seat's knowledge; with ``belief="posterior"`` the opponents' hidden starting contracts come from the exact
posterior given their play so far, each opponent modelled as the search's own policy
(``belief.starting_contract_posterior``; the uniform deal where no contract explains their play, or in a game
loaded from a saved file, which cannot replay its past). It takes the
candidate actions (the policy's ``candidates`` most likely legal ones, or every legal one), and plays every
(determinisation, candidate) pair to the end of the game with the policy at every seat: one ``VectorGame``
holding all K x C games, one compiled policy forward per step for all of them (``PolicyStack``). The
same K determinisations serve every candidate and the rollouts are the policy's argmax, so candidates are
compared on common deals with no other noise (common random numbers). ``opponents`` is the opponent model, who
plays the other seats of the rollouts: the policy (the default), the compiled heuristic
(``heuristic_batch.heuristic_actions``) for a table the user knows to be heuristics, or the argmax of a policy
export (a ``.npz`` path), e.g. one fitted by ``packetrow imitate`` to how the table played in recorded games;
one of the policy's shape, mode and encoding moves in the same compiled call as the policy. Waves of K
determinisations repeat until the budget is spent: ``seconds_per_move`` (time; a wave started is finished) or
``rollouts`` (work: rollouts per decision, all candidates counted). The choice is the candidate with the best
mean reward if its gain over the policy's favourite, paired by deal, exceeds ``threshold`` and two standard errors
of it (SPARTA's deviation rule, ``update="sparta"``, the default: the search leaves the policy only where the
rollouts say clearly that it pays); else the favourite. With ``update="mmd"`` the rewards instead move the
policy's distribution over the candidates by one magnetic mirror-descent step (``mirror_descent``: step ``eta``,
magnet weight ``alpha``, ``magnet`` uniform over the candidates or the policy) on the candidates' paired
advantages over the favourite, each shrunk by its standard error, and the agent plays that distribution's most
likely candidate (``act="argmax"``, the default) or a draw from it (``act="sample"``). Neither rule needs a model
of the opponent: with the default ``opponents="policy"`` every seat of the rollouts is the policy itself.

With ``value`` (a value network: ``export_value``'s, ``ppo`` for the shipped policy's) a rollout stops when the
searching seat is to move after ``depth`` moves of its own, and the network's estimate of the seat's VP margin
(the ``vp`` reward) scores it; rollouts that end first score their real margin, both through tanh(margin / 5).

The reward of a finished rollout without ``value``, for the searching seat, is ``scoring.final_rewards``' rank
reward (the mean over opponents of +1 / 0 / -1) blended with a small VP-margin term, as
``ismcts.terminal_rewards`` does, so a search in a won position still prefers the larger lead.

No cheating: the seat's hidden cards are seen only through determinisations, which depend only on what the
seat knows, and the rollouts are deterministic given a determinisation: two games that differ only in what the
seat cannot know get the same action for a seed (tests/test_search.py).
"""

from __future__ import annotations

import math
import time

import numpy as np

from packetrow_env.actions import MAX_PAYMENT_OPTIONS, PAY
from packetrow_env.belief import HistoryUnavailableError, UnexplainedHistoryError, starting_contract_posterior
from packetrow_env.seat_view import covers
from packetrow_env.vector import VectorGame

from .base import Agent
from .ismcts import TERMINAL_MARGIN_WEIGHT
from .mirror_descent import advantages, check_step, mirror_descent_policy
from .policy import NumpyPolicy, PolicyAgent, action_model, load_policy, policy_input
from .policy_batch import same_architecture, stack_of
from .shipped import SHIPPED_VALUE

BELIEFS = ("uniform", "posterior")  # how the hidden starting contracts are dealt
OPPONENT_MODELS = ("policy", "heuristic")  # who plays the other seats in the rollouts
UPDATES = ("sparta", "mmd")  # how the rollouts' rewards pick the action
MAGNETS = ("uniform", "policy")  # the mirror-descent update's magnet, over the candidates
ACTING = ("argmax", "sample")  # how the mirror-descent update's policy picks the action
DEFAULT_ETA = 30.0  # the mirror-descent step, for rewards in [-1, 1] (docs/agents.md: how it was chosen)
DEFAULT_ALPHA = 0.1  # the magnet's weight
DEFAULT_ROLLOUTS = 256  # per decision, when no budget is given
MARGIN_SCALE = 5.0  # VP, as ismcts.terminal_rewards


class SearchAgent(Agent):
    """Determinised rollouts of a learned policy for the policy's top candidate actions; see the module."""

    def __init__(self, seed: int = 0, policy="ppo", seconds_per_move: float | None = None,
                 rollouts: int | None = None, determinizations: int = 16, candidates: int = 4,
                 belief: str = "uniform", threshold: float = 0.05, opponents: str = "policy", value=None,
                 depth: int = 0, update: str = "sparta", eta: float | None = None, alpha: float | None = None,
                 magnet: str | None = None, act: str | None = None):
        if seconds_per_move is not None and rollouts is not None:
            raise ValueError("give one budget: rollouts or seconds_per_move, not both "
                             f"(got rollouts={rollouts!r}, seconds_per_move={seconds_per_move!r})")
        if seconds_per_move is not None and (isinstance(seconds_per_move, bool)
                                             or not isinstance(seconds_per_move, (int, float, np.number))
                                             or not 0 < seconds_per_move < math.inf):
            raise ValueError(f"seconds_per_move must be a positive number of seconds, got {seconds_per_move!r}")
        for key, number, least in (("rollouts", rollouts, 1), ("determinizations", determinizations, 1),
                                   ("candidates", candidates, 0), ("depth", depth, 0)):
            if number is not None and (isinstance(number, bool) or not isinstance(number, (int, np.integer))
                                       or number < least):
                raise ValueError(f"{key} must be an integer of at least {least}"
                                 + (" (0: every legal action)" if key == "candidates" else "") + f", got {number!r}")
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.number)) \
                or not 0 <= threshold < math.inf:
            raise ValueError(f"threshold must be a non-negative number (a reward gain, rewards lie in [-1, 1]), got "
                             f"{threshold!r}")
        if belief not in BELIEFS:
            raise ValueError(f"belief must be one of {', '.join(BELIEFS)}, got {belief!r}")
        if seconds_per_move is None and rollouts is None:
            rollouts = DEFAULT_ROLLOUTS
        self.update, self.eta, self.alpha, self.magnet, self.act_by = _update_options(update, eta, alpha, magnet, act)
        self.player = _policy_agent(policy)
        if self.player.policy.num_actions < PAY + MAX_PAYMENT_OPTIONS:
            raise ValueError(f"the policy has {self.player.policy.num_actions} outputs, no pay actions (an env v0 "
                             "export): search needs a policy that plays every phase; retrain or export it again")
        self._opponent = _opponent_model(opponents, self.player)
        # An opponent policy that reads what the search's policy reads, in a network of its shape (one fine-tuned
        # from it by ``packetrow imitate``), shares its compiled forward: policy 1 of the stack, one call a step.
        # Otherwise the opponent model moves by its own forward (``_opponent_moves``).
        self._joint = isinstance(self._opponent, PolicyAgent) \
            and (self._opponent.observation_mode, self._opponent.observation_encoding) \
            == (self.player.observation_mode, self.player.observation_encoding) \
            and same_architecture(self.player.policy, self._opponent.policy)
        self._stack = stack_of((self.player.policy, self._opponent.policy) if self._joint else (self.player.policy,))
        self.value = None if value is None else _value_network(value, self.player.observation_mode)
        self.depth = int(depth)
        self.seconds_per_move = None if seconds_per_move is None else float(seconds_per_move)
        self.rollouts = None if rollouts is None else int(rollouts)
        self.determinizations = int(determinizations)
        self.candidates = int(candidates)
        self.belief = belief
        self.threshold = float(threshold)
        self.opponents = opponents if isinstance(opponents, str) else "a policy"
        self.name = "search"
        self.last_rollouts = 0  # rollouts of the last decision, for benchmarks
        # update="mmd": float64[A], the search's policy at its last decision with a choice, for distilling the
        # search into the policy (benchmarks/search_targets.py): the policy's probabilities with the candidates'
        # share of them moved by the mirror-descent update; None after a forced move or under update="sparta".
        self.last_policy = None
        self.reset(seed)

    def reset(self, seed: int) -> None:
        """Reseed for a new game (the determinisations' generator)."""
        self._rng = np.random.default_rng(seed)

    def act(self, view) -> int:
        """The action ``choose`` picks from the candidates' rollouts, for the seat of ``view`` (a SeatView of a game)."""
        if not view.has_game:
            raise ValueError("SearchAgent plays determinisations of the table: act(SeatView(game, seat)), not a view "
                             "of an observation")
        legal = view.legal_actions()
        if not legal:
            raise ValueError("no legal action: the mask is all zeros (is the game over, or is it another seat's turn?)")
        self.last_policy = None
        if len(legal) == 1:
            return int(legal[0])
        deadline = None if self.seconds_per_move is None else time.perf_counter() + self.seconds_per_move
        prior = self.player.action_probabilities(view)
        order = sorted(legal, key=lambda a: (-prior[a], a))
        candidates = order if self.candidates == 0 else order[:self.candidates]
        if len(candidates) == 1:  # nothing to compare: the policy's favourite
            if self.update == "mmd":
                self.last_policy = prior
            return int(candidates[0])
        posterior = self.posterior(view) if self.belief == "posterior" else None
        waves = []
        done = 0
        while True:
            k = self.determinizations
            if self.rollouts is not None:
                k = min(k, math.ceil((self.rollouts - done) / len(candidates)))
            deals = [view.sample_determinization(self._rng, posterior=posterior) for _ in range(k)]
            waves.append(self._rollouts(deals, candidates, view.seat))
            done += k * len(candidates)
            if (self.rollouts is not None and done >= self.rollouts) \
                    or (deadline is not None and time.perf_counter() >= deadline):
                break
        self.last_rollouts = done
        rewards = np.concatenate(waves)
        if self.update == "mmd":
            updated = self.mirror_descent(rewards, prior[candidates])
            prior[candidates] = updated * prior[candidates].sum()  # the candidates' share, moved by the update
            self.last_policy = prior
            return int(candidates[self.choose_from(updated)])
        return int(candidates[self.choose(rewards)])

    def mirror_descent(self, rewards: np.ndarray, prior: np.ndarray) -> np.ndarray:
        """float[C]: the mirror-descent update (``mirror_descent.mirror_descent_policy``, step ``eta``, magnet
        weight ``alpha``) of the policy's probabilities ``prior`` (float[C]) of the candidates, renormalised over
        them, by the shrunk paired advantages of the rewards float[deals, C] (``mirror_descent.advantages``;
        candidate 0: the policy's favourite); the magnet is uniform over the candidates or the policy itself."""
        policy = np.asarray(prior, np.float64) / np.sum(prior)
        magnet = policy if self.magnet == "policy" else None
        return mirror_descent_policy(policy, advantages(rewards), self.eta, self.alpha, magnet)

    def choose_by_mirror_descent(self, rewards: np.ndarray, prior: np.ndarray) -> int:
        """The index of the chosen candidate under ``update="mmd"``: ``choose_from`` the ``mirror_descent``
        update."""
        return self.choose_from(self.mirror_descent(rewards, prior))

    def choose_from(self, updated: np.ndarray) -> int:
        """The index of the candidate to play from the updated policy over the candidates: its most likely (ties:
        the policy's order) with ``act="argmax"``, a draw from it with ``act="sample"``."""
        if self.act_by == "sample":
            return int(self._rng.choice(len(updated), p=updated))
        return int(np.argmax(updated))

    def choose(self, rewards: np.ndarray) -> int:
        """The index of the chosen candidate under ``update="sparta"`` from the rewards float[deals, candidates]
        (candidate 0: the policy's favourite): the best mean where its gain over the favourite, paired by deal,
        exceeds ``threshold`` and two standard errors of that gain; else the favourite."""
        means = rewards.mean(axis=0)
        best = max(range(len(means)), key=lambda j: (means[j], -j))  # ties: the policy's order
        if best == 0:
            return 0
        gain = rewards[:, best] - rewards[:, 0]
        error = gain.std(ddof=1) / math.sqrt(len(gain)) if len(gain) > 1 else math.inf
        return best if gain.mean() > max(self.threshold, 2 * error) else 0

    def posterior(self, view):
        """The exact posterior over the hidden starting contracts of ``view``'s opponents, each modelled as the
        rollouts model them (the search's policy, the heuristic or the policy export of ``opponents``;
        ``belief.starting_contract_posterior``); None (uniform deals) where their play cannot explain any deal (they
        do not play as modelled) or the game cannot replay its past (loaded from a saved file)."""
        if self._opponent == "heuristic":
            from .heuristic import HeuristicAgent
            model = action_model(HeuristicAgent())
        else:
            model = action_model(self._opponent or self.player)
        try:
            return starting_contract_posterior(view, {q: model for q in range(view.state.num_players)})
        except (UnexplainedHistoryError, HistoryUnavailableError):
            return None

    def _rollouts(self, deals: list, candidates: list[int], seat: int) -> np.ndarray:
        """float[len(deals), len(candidates)]: the seat's reward when each candidate is played in each deal and
        the policy's argmax (or the opponent model) plays every seat to the end or to a value leaf (one compiled
        forward a step: no BLAS threads to share)."""
        starts = []
        for deal in deals:
            for action in candidates:
                game = deal.clone()
                game.step(action)
                starts.append(game)
        games = VectorGame.from_games(starts)
        moves = np.zeros(games.num_games, np.int64)
        leaf = np.zeros(games.num_games, bool)  # stopped for the value network
        turns = np.zeros(games.num_games, np.int64)  # the seat's own moves in the rollout
        while True:
            live = ~games.is_over & ~leaf
            seats_turn = games.current_player == seat if self.value is not None or self._opponent is not None \
                else None  # only leaves and an opponent model ask whose turn it is
            if self.value is not None:  # stop at the seat's turn after ``depth`` moves of its own
                leaf |= live & seats_turn & (turns >= self.depth)
                live &= ~leaf
                turns += live & seats_turn
            rows = np.flatnonzero(live)
            if not len(rows):
                break
            if self._opponent is not None and not self._joint:
                theirs = rows[~seats_turn[rows]]
                if len(theirs):
                    moves[theirs] = self._opponent_moves(games, theirs)
                rows = rows[seats_turn[rows]]
            ids = (~seats_turn[rows]).astype(np.int64) if self._joint else np.zeros(len(rows), np.int64)
            if len(rows):
                moves[rows] = _argmax_moves(self.player, self._stack, games, rows, ids)
            games.step(moves, where=live)
        if self.value is None:
            return seat_rewards(games, seat).reshape(len(deals), len(candidates))
        margin = games.rewards("vp")[:, seat].astype(np.float64)  # what the value network estimates, at the end
        rows = np.flatnonzero(leaf)
        if len(rows):
            observations = games.observe(self.value.observation_mode, rows=rows,
                                         encoding=self.value.observation_encoding)
            margin[rows] = self.value.logits(policy_input(self.value, observations, self.value.observation_encoding,
                                                          games.cards))[:, 0]
        return np.tanh(margin / MARGIN_SCALE).reshape(len(deals), len(candidates))

    def _opponent_moves(self, games: VectorGame, rows: np.ndarray) -> np.ndarray:
        """The opponent model's moves in ``rows`` of a rollout batch: the compiled heuristic's or a policy's
        argmax."""
        if self._opponent == "heuristic":
            from .heuristic_batch import heuristic_actions  # numba compiles it on first use
            return heuristic_actions(games, rows, self.player.observation_mode, self._rng)
        return _argmax_moves(self._opponent, stack_of((self._opponent.policy,)), games, rows,
                             np.zeros(len(rows), np.int64), self.player.observation_mode)


def _argmax_moves(player: PolicyAgent, stack, games: VectorGame, rows: np.ndarray, ids: np.ndarray,
                  mode: str | None = None) -> np.ndarray:
    """int64[len(rows)]: the most likely legal move for the player to act in ``rows`` of ``games``, each row by
    policy ``ids[j]`` of ``stack`` (one compiled forward), reading the observations ``player``'s policy reads of
    seats that know what ``mode`` shows (default: its own mode)."""
    masks = games.legal_action_mask()[rows, :player.policy.num_actions]
    inputs = player.action_inputs(games, rows, mode or player.observation_mode)
    return stack.actions(ids, inputs, masks, None, deterministic=True)


def seat_rewards(games: VectorGame, seat: int) -> np.ndarray:
    """float[B]: ``seat``'s rank reward in each finished game, blended with the VP-margin term of
    ``ismcts.terminal_rewards``."""
    rank = games.rewards("rank")[:, seat].astype(np.float64)
    vp, _ = games.scores()
    n = games.num_players
    others = np.arange(vp.shape[1])[None, :] < n[:, None]
    others[:, seat] = False
    margin = (np.tanh((vp[:, [seat]] - vp) / MARGIN_SCALE) * others).sum(axis=1) / (n - 1)
    return (1 - TERMINAL_MARGIN_WEIGHT) * rank + TERMINAL_MARGIN_WEIGHT * margin


def _update_options(update, eta, alpha, magnet, act) -> tuple:
    """(update, eta, alpha, magnet, act) checked, with the mirror-descent defaults filled in for ``update="mmd"``;
    a ValueError for a value not allowed, or a mirror-descent option given to SPARTA's rule."""
    if update not in UPDATES:
        raise ValueError(f"update must be one of {', '.join(UPDATES)}, got {update!r}")
    given = {key: v for key, v in (("eta", eta), ("alpha", alpha), ("magnet", magnet), ("act", act)) if v is not None}
    if update == "sparta":
        if given:
            raise ValueError(f"{', '.join(given)} set the mirror-descent update: give update=mmd with them (SPARTA's "
                             "rule, the default update, reads threshold)")
        return update, None, None, None, None
    magnet = MAGNETS[0] if magnet is None else magnet
    act = ACTING[0] if act is None else act
    if magnet not in MAGNETS:
        raise ValueError(f"magnet must be one of {', '.join(MAGNETS)}, got {magnet!r}")
    if act not in ACTING:
        raise ValueError(f"act must be one of {', '.join(ACTING)}, got {act!r}")
    return (update, check_step("eta", DEFAULT_ETA if eta is None else eta),
            check_step("alpha", DEFAULT_ALPHA if alpha is None else alpha), magnet, act)


def _opponent_model(opponents, player: PolicyAgent):
    """Who plays the other seats of the rollouts: None (the search's own policy), 'heuristic', or the argmax
    PolicyAgent of a policy export (a ``.npz`` path or a NumpyPolicy), checked to read what the seats know."""
    if isinstance(opponents, str) and opponents in OPPONENT_MODELS:
        return None if opponents == "policy" else opponents
    if not isinstance(opponents, (str, NumpyPolicy)) or (isinstance(opponents, str) and "." not in opponents):
        raise ValueError(f"opponents must be one of {', '.join(OPPONENT_MODELS)} or the path of a policy export "
                         f"(.npz), got {opponents!r}")
    try:
        model = _policy_agent(opponents)
    except ValueError as error:  # no such file, not an export, a value network: say which option named it
        raise type(error)(f"opponents: {error}") from None
    if model.policy.num_actions < PAY + MAX_PAYMENT_OPTIONS:
        raise ValueError(f"opponents: the policy has {model.policy.num_actions} outputs, no pay actions (an env v0 "
                         "export); an opponent model must play every phase")
    if not covers(player.observation_mode, model.observation_mode):
        raise ValueError(f"opponents: a policy trained on {model.observation_mode} observations reads more than the "
                         f"search's {player.observation_mode} seats know")
    return model


def _value_network(value, mode: str) -> NumpyPolicy:
    """The value network ``value`` names: 'ppo' (the shipped policy's), a ``.npz`` of ``export_value`` or a
    NumpyPolicy; checked to be one that a seat playing in ``mode`` may read."""
    if isinstance(value, str):
        value = load_policy(SHIPPED_VALUE if value == "ppo" else value)
    if not isinstance(value, NumpyPolicy):
        raise ValueError(f"value must be 'ppo' (the shipped policy's value network) or the path of a .npz written by "
                         f"export_value, got {value!r}")
    if value.metadata.get("head") != "value" or value.num_actions != 1:
        raise ValueError(f"value: {value.metadata.get('config_name', 'the network')} is not a value network (a policy "
                         f"export has {value.num_actions} outputs); give a .npz written by export_value")
    if not covers(mode, value.observation_mode):
        raise ValueError(f"value: a network trained on {value.observation_mode} observations reads more than a "
                         f"{mode} seat knows")
    return value


def _policy_agent(policy) -> PolicyAgent:
    """The argmax PolicyAgent of ``policy``: 'ppo' (the shipped model), a ``.npz`` path or a NumpyPolicy."""
    if isinstance(policy, NumpyPolicy):
        return PolicyAgent(policy=policy)
    if isinstance(policy, PolicyAgent):
        return PolicyAgent(policy=policy.policy)
    if policy in ("ppo", None):
        return PolicyAgent()
    if not isinstance(policy, str):
        raise ValueError(f"policy must be 'ppo' (the shipped model) or the path of a .npz export, got {policy!r}")
    return PolicyAgent(path=policy)


__all__ = ["SearchAgent", "seat_rewards"]
