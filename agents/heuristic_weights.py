"""The heuristic's weights: the one place its numbers live, read by ``heuristic.HeuristicAgent`` and by its
compiled form ``heuristic_batch``."""

from packetrow_env.cards import CAPTAIN, GOLD, SHIP, TRADER

VP = 10.0  # dollars per victory point: 1 VP per full $10 of cash at the end (R-SCORE-2)
UNIT_PRICE = 3.0  # what a missing unit of goods costs on the market, roughly
ASSISTANT_SPEND = 2.0  # what using up an assistant costs
MISSING_UNIT = 0.6  # how much each missing unit of goods discounts a contract
NO_SHIP = 0.5  # how much a contract without a ship for its destination is discounted
BANKER_LEAD = 0.8  # how likely a cash lead now holds to the end
BANKER_TRAILING = 0.2  # the same for a player behind in cash
LEAD_MARGIN = 10.0  # dollars of cash lead to keep at the start of the game (shrinks with the time left)
RESERVE_WEIGHT = 0.5  # dollars of a building's value lost per dollar it leaves short of the goods reserve
FLEXIBILITY = {SHIP: 1.0, CAPTAIN: 0.5, TRADER: 0.5, GOLD: 0.5}  # worth a little even when nothing needs them now
SPENT_VALUE = 0.25  # dollars per point of card value (CARDS.md `value`) a payment spends, between equal hands
ASSISTANT_VALUE = 2.0  # what an assistant in hand is worth
SWITCH_COST = 0.5  # R-ROUND-5: what choosing another board (instead of taking here) costs, so equal cards stay here
TIME_FLOOR = 0.15  # the least weight the clock gives unfinished plans (``scoring.time_left``'s floor)
UNAFFORDABLE = -1e9  # the value of a card the seat cannot pay for, and of a board with nothing for him
TIE = 1e-9  # values this close to the best are ties (broken by the generator)
RIVAL_WEIGHT = 1.5  # how much the opponents' gains count against a board
