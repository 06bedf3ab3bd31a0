"""A rule-based baseline that plays the way a decent human would."""

from __future__ import annotations

import numpy as np

from packetrow_env import actions
from packetrow_env.cards import (ASSISTANT, BANKER, BUILDING, CAPTAIN, CONTRACT, DESTINATIONS, GOLD, GOODS, GOODS_KIND,
                                 MONEY, SHIP, TRADER)
from packetrow_env.scoring import leader_banker_points, time_left
from packetrow_env.state import CHOOSE_BOARD, MUST_TAKE, PAY

from .base import Agent
from .compiled_opponent import HEURISTIC, CompiledOpponent
from .heuristic_weights import (VP, UNIT_PRICE, ASSISTANT_SPEND, MISSING_UNIT, NO_SHIP, BANKER_LEAD, BANKER_TRAILING,
                                LEAD_MARGIN, RESERVE_WEIGHT, FLEXIBILITY, SPENT_VALUE,
                                ASSISTANT_VALUE, SWITCH_COST, TIME_FLOOR, UNAFFORDABLE,
                                TIE, RIVAL_WEIGHT)


class _Needs:
    """What one player's (known) hand and ships want: demand per good, units held, ships per destination."""

    __slots__ = ("demand", "reward", "units", "gold", "traders", "captains", "ships", "ship_dests",
                 "dest_reward", "money", "contracts", "bankers")

    def __init__(self, cards, hand, ships):
        kind, quantity, good, destination = cards.kind_of, cards.quantity, cards.good, cards.destination
        self.demand = [0] * len(GOODS)
        self.reward = [0] * len(GOODS)
        self.units = [0] * len(GOODS)
        self.gold = self.traders = self.captains = self.money = self.bankers = 0
        self.dest_reward = [0] * len(DESTINATIONS)
        self.contracts = []  # (good, destination, reward)
        for c in hand:
            k = kind[c]
            if k == CONTRACT:
                self.demand[good[c]] += int(quantity[c])
                self.reward[good[c]] += int(cards.reward[c])
                self.dest_reward[destination[c]] += int(cards.reward[c])
                self.contracts.append((int(good[c]), int(destination[c]), int(cards.reward[c])))
            elif k == GOODS_KIND:
                self.units[good[c]] += int(quantity[c])
            elif k == GOLD:
                self.gold += int(quantity[c])
            elif k == TRADER:
                self.traders += 1
            elif k == CAPTAIN:
                self.captains += 1
            elif k == MONEY:
                self.money += cards.money_of[c]
            elif k == BANKER:
                self.bankers += 1
        self.ships = len(ships)
        self.ship_dests = {int(destination[c]) for c in ships}

    def missing(self, g: int) -> int:
        """Units of good g the contracts still need, after goods and gold in hand."""
        short = [max(0, d - u) for d, u in zip(self.demand, self.units)]
        spare_gold = max(0, self.gold - (sum(short) - short[g]))
        return max(0, short[g] - spare_gold)

    def per_unit(self, g: int) -> float:
        """Contract money per unit of good g."""
        return self.reward[g] / self.demand[g] if self.demand[g] else 0.0

    def potential(self, time_left: float) -> float:
        """Expected contract money of this hand: each contract's reward, discounted per missing unit, for a
        missing ship, and (unless it could ship now) by the time left."""
        short = [max(0, d - u) for d, u in zip(self.demand, self.units)]
        spare = sum(max(0, u - d) for d, u in zip(self.demand, self.units))
        fill = self.gold + min(spare, 2 * self.traders)  # gold and traded goods go where least is missing
        for g in sorted(range(len(GOODS)), key=lambda g: short[g]):
            used = min(short[g], fill)
            short[g] -= used
            fill -= used
        total = 0.0
        for g, d, reward in self.contracts:
            ship = 1.0 if self.ship_ready(d) else NO_SHIP
            ready = short[g] == 0 and ship == 1.0
            total += reward * MISSING_UNIT ** short[g] * ship * (1.0 if ready else time_left)
        return total

    def ship_ready(self, destination: int) -> bool:
        """Whether a contract to ``destination`` has a ship (its own, or another with a captain)."""
        return destination in self.ship_dests or (self.ships > 0 and self.captains > 0)


class HeuristicAgent(Agent):
    """A documented rule-based player: every card gets a value in dollars for its own hand (1 VP = $10).

    Rules, in order:
    1. Ship whenever possible: stage the highest-paying contract that can be added, then ship. Pay
       (R-SHIP-7) with the option that leaves the hand's expected contract money highest (the same
       expectation as in rule 2, so cards that still serve other contracts are kept); between equals,
       the option of least card value (``choose_payment``).
    2. Take the card worth most, if it is worth at least ``threshold`` dollars (default 0); otherwise pass.
       - Contracts, goods, gold, ships, captains and traders: what they add to the hand's expected
         contract money, minus their price. That expectation counts each contract's reward, discounted
         by 0.6 per missing unit of goods (after gold and traders), halved without a ship for its
         destination, and (unless it could ship now) scaled by the time left in the game.
       - Buildings: VP x $10 minus the price (best VP per dollar; near the end, the exact change in
         building VP plus cash VP, which counts per full $10), less when buying one would
         leave too little cash for the goods that nearly-complete contracts still need.
       - Money cards: their value. Bankers: worth a lot when leading in cash, little otherwise; with
         bankers in hand, a building that would cost the cash lead counts the banker VP it loses.
       - Assistants: a little; a future-supply card costs an assistant.
    3. As harbour master, choose the board where, after the players asked before him take the
       cards they value most, the best card left is worth most to him, minus 1.5 times what the
       best-served opponent gains there (``rival_weight``). When everyone else has taken, choose only a board where
       his best card beats the current one.
    Opponents are valued from what he knows of them (their known hands and ships): he reads only his SeatView.
    """

    rival_weight = RIVAL_WEIGHT
    rival_sum = False
    # action_probabilities: the weight of a uniformly random legal action in the model of this agent's play
    epsilon = 0.05

    def __init__(self, seed: int = 0, threshold: float = 0.0):
        self.name = "heuristic"
        self.threshold = threshold
        self.reset(seed)

    def reset(self, seed: int) -> None:
        """Reseed (the generator only breaks exact ties)."""
        self._rng = np.random.default_rng(seed)

    @classmethod
    def act_batch(cls, agents, turns) -> np.ndarray:
        """Each agent's turns in one compiled call (``heuristic_batch.heuristic_actions``: these rules on each
        seat's view), exact ties broken by ``turns.rng``."""
        from .heuristic_batch import heuristic_actions  # numba compiles only where games are batched

        out = np.zeros(len(turns), np.int64)
        for j, k, part in turns.by_agent():
            out[k] = heuristic_actions(part.games, part.rows, part.observation_mode, part.rng, agents[j].threshold,
                                       part.masks)
        return out

    def compiled_form(self, observation_mode: str, observation_encoding: str, observation_size: int):
        """These rules with this threshold, on each seat's view (the kernel's compiled heuristic)."""
        return CompiledOpponent(HEURISTIC, threshold=float(self.threshold))

    # --------------------------------------------------------------- act
    def act(self, view) -> int:
        """The action the rules above pick for the seat of ``view`` (a SeatView of a game)."""
        choice = self._choices(view)
        return choice if isinstance(choice, int) else self._best(choice)

    def action_probabilities(self, view) -> np.ndarray:
        """A model of this agent's play for beliefs (``packetrow_env.belief``): its choice with probability
        1 - ``epsilon`` (split evenly over exact ties), and ``epsilon`` spread uniformly over the legal actions."""
        legal = view.action_mask
        choice = self._choices(view)
        chosen = [choice] if isinstance(choice, int) else self._tied(choice)
        out = np.where(legal, self.epsilon / legal.sum(), 0.0)
        out[chosen] += (1.0 - self.epsilon) / len(chosen)
        return out

    def _choices(self, view) -> int | list[int]:
        """The rules' decision: an action, or the valued options of which ``act`` takes the best (``_best``)."""
        if not view.has_game:
            raise ValueError("HeuristicAgent reads the table: act(SeatView(game, seat)), not a view of an observation")
        game = view  # the helpers below read only the seat's view (public state, known hands), never the Game
        mask = view.action_mask
        legal = np.flatnonzero(mask)
        if len(legal) == 0:
            raise ValueError("no legal action: the mask is all zeros (is it this seat's turn?)")
        cards = game.cards
        contracts = legal[(legal >= actions.ADD_CONTRACT) & (legal < actions.SHIP)]
        if len(contracts):  # rule 1
            rewards = cards.reward[cards.contract_ids[contracts - actions.ADD_CONTRACT]]
            return int(contracts[int(np.argmax(rewards))])
        if mask[actions.SHIP]:
            return actions.SHIP
        s = game.state
        me = view.seat
        context = _Context(game, me)
        if s.phase == PAY:  # rule 1: how to pay
            return actions.PAY + choose_payment(game, context, me)
        if s.phase == CHOOSE_BOARD:  # rule 3
            return [(b, self._board_score(game, context, b)) for b in legal]
        options = [(a, self._take_value(game, context, me, a)) for a in legal if actions.TAKE <= a < actions.PASS]
        # R-ROUND-5: the harbour master may choose another board and take there
        options += [(b, self._own_best(game, context, me, b) - SWITCH_COST) for b in legal if b < actions.TAKE]
        if s.phase == MUST_TAKE or not mask[actions.PASS]:
            return options
        if options:
            if max(value for _, value in options) >= self.threshold:
                return options
        return actions.PASS

    def _best(self, options) -> int:
        """The action of highest value, exact ties broken by the generator."""
        best = self._tied(options)
        return best[self._rng.integers(len(best))]

    @staticmethod
    def _tied(options) -> list[int]:
        """The actions of the options whose value is within ``TIE`` of the best, in order."""
        values = np.array([v for _, v in options])
        return [int(options[i][0]) for i in np.flatnonzero(values >= values.max() - TIE).tolist()]

    # ------------------------------------------------------------ values
    def _take_value(self, game, context, seat, action) -> float:
        s = game.state
        board = s.current_board
        if action >= actions.TAKE_FUTURE:
            card = int(s.future[board, action - actions.TAKE_FUTURE])
            return card_value(game, context, seat, card) - ASSISTANT_SPEND
        return card_value(game, context, seat, int(s.current[board, action - actions.TAKE]))

    def _own_best(self, game, context, seat, board, taken=()) -> float:
        """The most a seat can get from a board's current supply (and future, with an assistant)."""
        s = game.state
        values = [card_value(game, context, seat, int(c)) for c in s.current[board] if c >= 0 and int(c) not in taken]
        if context.has_assistant(seat):
            values += [card_value(game, context, seat, int(c)) - ASSISTANT_SPEND for c in s.future[board] if c >= 0]
        return max(values, default=UNAFFORDABLE)

    def _board_score(self, game, context, board) -> float:
        s = game.state
        n = s.num_players
        me = s.current_player
        taken = set()
        others = []
        for k in range(1, n):  # asked before the harbour master, in order (R-ROUND-2)
            p = (me + k) % n
            if not s.has_piece[p]:
                continue
            cards = [int(c) for c in s.current[board] if c >= 0 and int(c) not in taken]
            if not cards:
                break
            values = [card_value(game, context, p, c) for c in cards]
            i = int(np.argmax(values))
            if values[i] >= self.threshold:
                taken.add(cards[i])
                others.append(values[i])
        rivals = sum(others) if self.rival_sum else max(others, default=0.0)
        return self._own_best(game, context, me, board, taken) - self.rival_weight * rivals


class _Context:
    """Per-decision facts shared by all card values: each seat's known needs, budgets, and the game's progress."""

    def __init__(self, game, observer):
        """``game``: the observer's SeatView."""
        s = game.state
        n = s.num_players
        self.observer = observer
        self._game = game
        self._needs = [None] * n
        self._hands = [None] * n
        cash = [int(c) for c in s.cash[:n]]
        self.cash = cash
        self.time_left = time_left(s, game.cards, floor=TIME_FLOOR)

    def known_hand(self, seat) -> list[int]:
        """The cards of a seat's hand the observer knows (R-INFO-3, from the view: packetrow_env.knowledge)."""
        hand = self._hands[seat]
        if hand is None:
            hand = self._hands[seat] = self._game.known_hand(seat) or []  # table mode: nothing known of others
        return hand

    def needs(self, seat) -> _Needs:
        """What a seat's known hand wants."""
        needs = self._needs[seat]
        if needs is None:
            game = self._game
            needs = self._needs[seat] = _Needs(game.cards, self.known_hand(seat), game.ships(seat))
        return needs

    def budget(self, seat) -> int:
        """Cash plus known money cards."""
        return self.cash[seat] + self.needs(seat).money

    def leading(self, seat) -> bool:
        """Whether the seat has (or shares) the most cash."""
        return self.budget(seat) >= max(self.budget(p) for p in range(len(self.cash)))

    def runner_up(self, seat) -> int:
        """The highest budget among the other seats."""
        return max(self.budget(p) for p in range(len(self.cash)) if p != seat)

    def has_assistant(self, seat) -> bool:
        """Whether a seat holds an assistant (known: assistants are taken face up)."""
        game = self._game
        return any(game.cards.kind_of[c] == ASSISTANT for c in self.known_hand(seat))


def choose_payment(game, context: _Context | None = None, seat: int | None = None) -> int:
    """The index of the payment option on the page shown (``payment_page_options()`` of a SeatView, or a Game)
    that keeps the most in hand (rule 1)."""
    options = game.payment_page_options()
    if not options:
        raise ValueError("choose_payment needs a game in phase pay (a shipment waiting to be paid)")
    seat = game.current_player if seat is None else seat
    context = context or _Context(game, seat)
    cards = game.cards
    hand, ships = game.hand(seat), game.ships(seat)
    staged = set(game.state.pending)
    best, best_score = 0, -np.inf
    for k, option in enumerate(options):
        gone = staged.union(option)
        left = _Needs(cards, [c for c in hand if c not in gone], [c for c in ships if c not in gone])
        score = left.potential(context.time_left) - SPENT_VALUE * sum(int(cards.value[c]) for c in option)
        if score > best_score + TIE:  # ties keep the earlier option: the lower value, then the lower ids
            best, best_score = k, score
    return best


def card_value(game, context: _Context, seat: int, card: int) -> float:
    """What taking ``card`` is worth to ``seat``, in dollars (see HeuristicAgent's rules)."""
    cards = game.cards
    kind = cards.kind_of[card]
    cost = cards.cost_of[card]
    if cost > context.budget(seat):
        return UNAFFORDABLE
    needs = context.needs(seat)
    time_left = context.time_left
    if kind == MONEY:
        return float(cards.money_of[card])
    if kind == BUILDING:
        budget = context.budget(seat)
        # cash scores per full $10 (R-SCORE-2): near the end, count exactly what the purchase changes
        exact = VP * (int(cards.vp[card]) + (budget - cost) // 10 - budget // 10)
        value = time_left * (VP * int(cards.vp[card]) - cost) + (1 - time_left) * exact
        reserve = UNIT_PRICE * sum(needs.missing(g) for g in range(len(GOODS)) if needs.demand[g])
        left = context.budget(seat) - cost
        if left < reserve:  # keep cash for goods that nearly complete contracts
            value -= RESERVE_WEIGHT * (reserve - left) * time_left
        # R-SCORE-3: with bankers, keep (or keep a chance at) the cash lead, with a margin for what others still earn
        if needs.bankers and left < context.runner_up(seat) + LEAD_MARGIN * time_left:
            value -= VP * leader_banker_points(len(context.cash)) * needs.bankers * BANKER_LEAD
        return value
    if kind in (CONTRACT, GOODS_KIND, GOLD, SHIP, CAPTAIN, TRADER):  # what the card adds to the hand's contracts
        hand = context.known_hand(seat)
        ships = game.ships(seat)
        after = _Needs(cards, hand, ships + [card]) if kind == SHIP else _Needs(cards, hand + [card], ships)
        return after.potential(time_left) - needs.potential(time_left) - cost + FLEXIBILITY.get(kind, 0.0)
    if kind == BANKER:
        return VP * leader_banker_points(len(context.cash)) * (BANKER_LEAD if context.leading(seat) else BANKER_TRAILING)
    if kind == ASSISTANT:
        return ASSISTANT_VALUE
    return 0.0
