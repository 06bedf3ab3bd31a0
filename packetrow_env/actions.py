"""The fixed action layout (48 + MAX_PAYMENT_OPTIONS + 1 ids), and action ids <-> names and human text."""

from __future__ import annotations

from .cards import BOARDS, NUM_CONTRACTS

CHOOSE_BOARD = 0  # 0-3: choose board b
TAKE = 4  # 4-7: take the card in current-supply slot s of the chosen board
TAKE_FUTURE = 8  # 8-9: take the card in future-supply slot s with an assistant
PASS = 10
ADD_CONTRACT = 11  # 11-46: add contract number k to the pending shipment
SHIP = 47
PAY = 48  # 48 .. 48+K-1: pay the pending shipment with option k of the page shown (R-SHIP-7)
NUM_ACTIONS_V0 = 48  # the layout of rules v0, before the pay phase (policies trained then have 48 outputs)
# K, the payment options on one page: benchmarks/payment_options.py measures how often a shipment has more
# (README "Actions"). Page p shows options K*p .. K*p+K-1 in R-SHIP-7 order; MORE turns to the next page.
MAX_PAYMENT_OPTIONS = 12
MORE = PAY + MAX_PAYMENT_OPTIONS  # show the next page of payment options (forward only, so every game ends)
NUM_ACTIONS_V1 = MORE  # the layout of env v1: no MORE (policies trained then have 60 outputs)
NUM_ACTIONS = MORE + 1

# Short stable names, for logs, replays and typing at a prompt.
NAMES = (tuple(f"choose:{b}" for b in BOARDS) + tuple(f"take:{s}" for s in range(TAKE_FUTURE - TAKE))
         + tuple(f"assistant:{s}" for s in range(PASS - TAKE_FUTURE)) + ("pass",)
         + tuple(f"contract:{k}" for k in range(NUM_CONTRACTS)) + ("ship",)
         + tuple(f"pay:{k}" for k in range(MAX_PAYMENT_OPTIONS)) + ("more",))
_BY_NAME = {name: action for action, name in enumerate(NAMES)}
assert len(NAMES) == NUM_ACTIONS


def name(action: int) -> str:
    """The short name of an action id, e.g. 'take:2' or 'contract:17'."""
    if not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"action {action} is out of range; actions are 0-{NUM_ACTIONS - 1}")
    return NAMES[action]


def parse(text: str) -> int:
    """The action id for a short name ('choose:market', 'take:0', 'pass', 'ship', 'pay:1', 'more', ...) or a number."""
    key = text.strip().lower()
    if key.isdigit() and int(key) < NUM_ACTIONS:
        return int(key)
    if key in _BY_NAME:
        return _BY_NAME[key]
    raise ValueError(f"unknown action {text!r}; use a number 0-{NUM_ACTIONS - 1} or a name such as "
                     "'choose:docks', 'take:0'..'take:3', 'assistant:0', 'assistant:1', 'pass', "
                     f"'contract:0'..'contract:{NUM_CONTRACTS - 1}', 'ship', "
                     f"'pay:0'..'pay:{MAX_PAYMENT_OPTIONS - 1}', 'more'")
