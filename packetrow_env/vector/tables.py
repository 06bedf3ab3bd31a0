"""The catalogue as one int32 table for compiled kernels: ``table(cards)[FIELD, card]``.

Every fact a kernel reads about a card comes from here, computed once per catalogue from the
same sources the single engine reads (the catalogue's columns, payment's interchangeability
classes, the observation's card types, the engine's discard piles).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import payment
from ..cards import Catalogue
from ..engine import discard_locations
from ..observation import card_types

FIELDS = ("kind", "good", "quantity", "destination", "reward", "cost", "vp", "money", "value", "board",
          "number", "group", "type", "discard")
(KIND, GOOD, QUANTITY, DESTINATION, REWARD, COST, VP, MONEY, VALUE, BOARD,
 NUMBER, GROUP, TYPE, DISCARD) = range(len(FIELDS))


@lru_cache(maxsize=8)
def table(cards: Catalogue) -> np.ndarray:
    """int32[len(FIELDS), NUM_CARDS]: per field, each card's value (read-only, cached per catalogue).

    ``number`` is the contract number (-1 for other cards), ``group`` the card's class of interchangeable
    cards in a payment (R-SHIP-7), ``type`` its observation card type, ``discard`` its discard pile's
    location code.
    """
    out = np.empty((len(FIELDS), len(cards.kind)), dtype=np.int32)
    for field in ("kind", "good", "quantity", "destination", "reward", "cost", "vp", "money", "value", "board"):
        out[FIELDS.index(field)] = getattr(cards, field)
    out[NUMBER] = cards.contract_number
    out[GROUP] = payment.card_classes(cards)
    out[TYPE] = card_types(cards)[0]
    out[DISCARD] = discard_locations(cards)
    out.flags.writeable = False
    return out
