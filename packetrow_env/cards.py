"""The card catalogue: one row per physical card, loaded into per-card numpy columns.

The default catalogue (``data/cards.csv``) is partly a reconstruction of the
published cards (see the README); users with the physical game pass their own
file, which is validated against the component counts of docs/rules.md R-COMP-2.
"""

from __future__ import annotations

import csv
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

BOARDS = ("guildhall", "docks", "market", "bank")  # R-COMP-1: boards 0-3, always in this order
GUILDHALL, DOCKS, MARKET, BANK = range(len(BOARDS))
NUM_BOARDS = len(BOARDS)
START = 4  # board code of the starting contracts (they have a guildhall back)
BOARD_CODES = BOARDS + ("start",)
# R-COMP-3: goods 0-3 and destinations 0-5, in this order
GOODS = ("grain", "cotton", "fur", "tobacco")
DESTINATIONS = ("great_britain", "france", "netherlands", "sweden", "spain", "german_confederation")
KINDS = ("contract", "assistant", "building", "ship", "captain", "gold", "goods", "trader", "money", "banker")
(CONTRACT, ASSISTANT, BUILDING, SHIP, CAPTAIN, GOLD, GOODS_KIND, TRADER, MONEY, BANKER) = range(len(KINDS))

COLUMNS = ("id", "board", "kind", "name", "good", "quantity", "destination", "reward", "cost", "vp", "money", "value")
NUMERIC = ("quantity", "reward", "cost", "vp", "money", "value")
NUM_CARDS = 172
NUM_CONTRACTS = 36

DEFAULT_PATH = Path(__file__).parent / "data" / "cards.csv"

# R-COMP-2: how many cards of each kind each board holds.
_COMPOSITION = {
    "guildhall": {"contract": 24, "assistant": 5, "building": 9},
    "docks": {"ship": 18, "captain": 5, "gold": 10, "building": 9},
    "market": {"goods": 28, "trader": 5, "building": 9},
    "bank": {"money": 24, "banker": 5, "building": 9},
    "start": {"contract": 12},
}
# Cards that can be spent in a shipment: R-SHIP-7 needs a positive value for them.
_SHIPMENT_KINDS = ("ship", "captain", "gold", "goods", "trader")
# Which kinds a column applies to (CARDS.md); on every other kind it must be empty or 0, so that no rule
# can read a value where the game has none (e.g. money on a contract would count toward a budget, R-TAKE-4).
_APPLIES = {
    "good": ("contract", "goods"),
    "destination": ("contract", "ship"),
    "quantity": ("contract", "goods", "gold"),
    "reward": ("contract",),
    "cost": ("goods", "gold", "building"),  # R-TAKE-3: all other cards are free
    "vp": ("building",),
    "money": ("money",),
    "value": KINDS,
}
# The largest value a column may hold. The printed cards stay far below (contracts need 2-4 units and pay
# $15-35, the dearest card costs $18 and scores 4 VP); the bounds keep every sum the engine forms (cash,
# budgets, payment values) small, and the final fulfilment's search over units (shipping.best_fulfilment) small.
MAX_VALUE = {"quantity": 6, "reward": 100, "cost": 100, "vp": 20, "money": 100, "value": 100}
MAX_NAME = 100
_NUMBER = re.compile(r"[0-9]{1,9}")


@dataclass(frozen=True, eq=False)
class Catalogue:
    """All cards of one game as numpy columns indexed by card id."""

    path: str
    names: tuple[str, ...]
    board: np.ndarray  # 0-3 board, 4 = starting contract
    kind: np.ndarray
    good: np.ndarray  # -1 where not applicable
    quantity: np.ndarray
    destination: np.ndarray  # -1 where not applicable
    reward: np.ndarray
    cost: np.ndarray
    vp: np.ndarray
    money: np.ndarray
    value: np.ndarray
    contract_ids: np.ndarray = field(init=False)  # contract number k -> card id
    contract_number: np.ndarray = field(init=False)  # card id -> k, or -1
    board_cards: tuple[np.ndarray, ...] = field(init=False)  # board -> its deck's card ids
    deck_sizes: np.ndarray = field(init=False)  # board -> its deck's size at setup (the agents' game clock)
    start_contracts: np.ndarray = field(init=False)
    # The same columns as tuples of Python ints: indexing one card is several times faster than numpy.
    kind_of: tuple[int, ...] = field(init=False)
    cost_of: tuple[int, ...] = field(init=False)
    money_of: tuple[int, ...] = field(init=False)
    number_of: tuple[int, ...] = field(init=False)  # contract number k, or -1

    def __post_init__(self):
        contract_ids = np.flatnonzero(self.kind == CONTRACT)
        number = np.full(NUM_CARDS, -1, dtype=np.int16)
        number[contract_ids] = np.arange(len(contract_ids))
        object.__setattr__(self, "contract_ids", contract_ids)
        object.__setattr__(self, "contract_number", number)
        object.__setattr__(self, "board_cards", tuple(np.flatnonzero(self.board == b) for b in range(NUM_BOARDS)))
        object.__setattr__(self, "deck_sizes", np.array([len(ids) for ids in self.board_cards]))
        object.__setattr__(self, "start_contracts", np.flatnonzero(self.board == START))
        for name, column in (("kind_of", self.kind), ("cost_of", self.cost), ("money_of", self.money),
                             ("number_of", number)):
            object.__setattr__(self, name, tuple(column.tolist()))
        for column in ("board", "kind", "good", "quantity", "destination", "reward", "cost", "vp", "money", "value",
                       "contract_ids", "contract_number", "start_contracts"):
            getattr(self, column).flags.writeable = False

    def describe(self, card: int) -> str:
        """A short human name for a card, e.g. 'contract: 3 cotton to netherlands for $25'."""
        kind = KINDS[self.kind[card]]
        if kind == "contract":
            start = "starting " if self.board[card] == START else ""
            return (f"{start}contract: {self.quantity[card]} {GOODS[self.good[card]]} to "
                    f"{place_name(self.destination[card])} for ${self.reward[card]}")
        if kind == "ship":
            return f"ship to {place_name(self.destination[card])}"
        if kind == "goods":
            return f"{self.quantity[card]} {GOODS[self.good[card]]}"
        if kind == "gold":
            return "double gold nugget" if self.quantity[card] == 2 else "single gold nugget"
        if kind == "money":
            return f"money ${self.money[card]}"
        if kind == "building":
            return f"{self.names[card].replace('_', ' ')} ({self.vp[card]} VP)"
        return kind


def place_name(destination: int) -> str:
    """A destination as written in a sentence, e.g. 'the Netherlands', 'Great Britain'."""
    name = DESTINATIONS[destination].replace("_", " ").title()
    return "the " + name if name in ("Netherlands", "German Confederation") else name


def _fail(path, row, column, message):
    where = f"{path}: row {row}" + (f", column {column!r}" if column else "")
    raise ValueError(f"{where}: {message}")


def _parse(path: str, rows: list[dict]) -> Catalogue:
    if len(rows) != NUM_CARDS:
        raise ValueError(f"{path}: the catalogue must have exactly {NUM_CARDS} card rows (docs/rules.md R-COMP-2), found {len(rows)}")
    columns = {name: [] for name in ("board", "kind", "good", "destination") + NUMERIC}
    names = []
    for row_number, row in enumerate(rows, start=2):  # row 1 is the header
        card = row_number - 2
        if row["id"].strip() != str(card):
            _fail(path, row_number, "id", f"expected id {card} (ids are the row order 0-{NUM_CARDS - 1}), found {_short(row['id'])}")
        for column, allowed in (("board", BOARD_CODES), ("kind", KINDS)):
            text = row[column].strip()
            if text not in allowed:
                _fail(path, row_number, column, f"unknown value {_short(text)}; allowed: {', '.join(allowed)}")
            columns[column].append(allowed.index(text))
        for column, allowed in (("good", GOODS), ("destination", DESTINATIONS)):
            text = row[column].strip()
            if text and text not in allowed:
                _fail(path, row_number, column, f"unknown value {_short(text)}; allowed: {', '.join(allowed)} or empty")
            columns[column].append(allowed.index(text) if text else -1)
        for column in NUMERIC:
            text = row[column].strip() or "0"
            if text.startswith("-") and _NUMBER.fullmatch(text[1:]):
                _fail(path, row_number, column, f"must not be negative, found {text}")
            if not _NUMBER.fullmatch(text):
                _fail(path, row_number, column, f"expected a whole number, found {_short(text)}")
            number = int(text)
            if number > MAX_VALUE[column]:
                _fail(path, row_number, column, f"must be at most {MAX_VALUE[column]}, found {number}")
            columns[column].append(number)
        name = row["name"].strip() or row["kind"].strip()
        if len(name) > MAX_NAME:
            _fail(path, row_number, "name", f"a name has at most {MAX_NAME} characters, found {len(name)}")
        names.append(name)
        _check_card(path, row_number, {k: v[-1] for k, v in columns.items()})
    cat = Catalogue(path=path, names=tuple(names),
                    **{k: np.array(v, dtype=np.int16) for k, v in columns.items()})
    _check_composition(path, cat)
    return cat


def _short(text: str) -> str:
    """A cell for an error message: quoted, cut to a readable length."""
    return repr(text) if len(text) <= 40 else f"{text[:40]!r}... ({len(text)} characters)"


def _check_card(path, row, card):
    kind = KINDS[card["kind"]]
    for column, kinds in _APPLIES.items():
        empty = card[column] < 0 if column in ("good", "destination") else card[column] == 0
        if kind not in kinds and not empty:
            what = "empty" if column in ("good", "destination") else "0 or empty"
            _fail(path, row, column, f"a {kind} card has no {column} (only {', '.join(kinds)} cards do); "
                  f"it must be {what}")
    if kind == "contract":
        if card["good"] < 0:
            _fail(path, row, "good", "a contract needs a good: " + ", ".join(GOODS))
        if card["destination"] < 0:
            _fail(path, row, "destination", "a contract needs a destination: " + ", ".join(DESTINATIONS))
        if card["quantity"] < 1:
            _fail(path, row, "quantity", "a contract needs a quantity of at least 1")
        if card["reward"] < 1:
            _fail(path, row, "reward", "a contract pays a reward of at least 1")
    elif kind == "goods":
        if card["good"] < 0:
            _fail(path, row, "good", "a goods card needs a good: " + ", ".join(GOODS))
        if card["quantity"] < 1:
            _fail(path, row, "quantity", "a goods card needs a quantity of at least 1")
    elif kind == "ship" and card["destination"] < 0:
        _fail(path, row, "destination", "a ship needs a destination: " + ", ".join(DESTINATIONS))
    elif kind == "gold" and card["quantity"] not in (1, 2):
        _fail(path, row, "quantity", f"a gold nugget has quantity 1 (single) or 2 (double), found {card['quantity']}")
    elif kind == "money" and card["money"] < 1:
        _fail(path, row, "money", "a money card must be worth at least 1")
    if kind in _SHIPMENT_KINDS and card["value"] < 1:
        _fail(path, row, "value", f"a {kind} card can pay for a shipment, so its value must be at least 1 (R-SHIP-7)")


def _check_composition(path, cat: Catalogue):
    """R-COMP-2. A kind a board may not hold, then a surplus, name a row; a shortfall has no row to name."""
    groups = []  # (cards of the group, required count, what, column)
    for board, kinds in _COMPOSITION.items():
        on_board = cat.board == BOARD_CODES.index(board)
        for kind in np.unique(cat.kind[on_board]):
            if KINDS[kind] not in kinds:
                first = int(np.flatnonzero(on_board & (cat.kind == kind))[0])
                _fail(path, first + 2, "kind", f"board {board!r} holds no {KINDS[kind]!r} cards (R-COMP-2); "
                      f"allowed: {', '.join(kinds)}")
        groups += [(on_board & (cat.kind == KINDS.index(kind)), count, f"board {board!r} must hold {count} {kind} cards",
                    "board") for kind, count in kinds.items()]
    # The 18 ships are printed, their split over the destinations is not (CARDS.md's 3 per destination is a
    # reconstruction): any split is accepted, and the board's count of ships above checks the 18.
    groups += [((cat.kind == GOLD) & (cat.quantity == q), 5, f"there must be 5 {label} gold nuggets", "quantity")
               for q, label in ((1, "single"), (2, "double"))]
    groups += [((cat.kind == GOODS_KIND) & (cat.good == g), 7, f"there must be 7 {name} goods cards", "good")
               for g, name in enumerate(GOODS)]
    groups += [((cat.board == START) & (cat.good == g), 3, f"there must be 3 {name} starting contracts", "good")
               for g, name in enumerate(GOODS)]
    for members, count, what, column in groups:
        found = int(np.count_nonzero(members))
        if found > count:
            extra = int(np.flatnonzero(members)[count])
            _fail(path, extra + 2, column, f"{what} (R-COMP-2), found {found}")
    for members, count, what, column in groups:
        found = int(np.count_nonzero(members))
        if found != count:
            raise ValueError(f"{path}: {what} (R-COMP-2), found {found}")


def load(path: str | os.PathLike | None = None) -> Catalogue:
    """Load and validate a catalogue CSV (the default one when path is None)."""
    if path is None:
        return _default()
    return _load(str(path))


@lru_cache(maxsize=1)
def _default() -> Catalogue:
    return _load(str(DEFAULT_PATH))


MAX_FILE_BYTES = 1 << 20  # the default catalogue is about 12 KB
_MAX_LINE = 4096  # no cell of a valid catalogue comes near: a longer line is reported before the CSV parser sees it


def _load(path: str) -> Catalogue:
    with open(path, "rb") as handle:
        raw = handle.read(MAX_FILE_BYTES + 1)
    if len(raw) > MAX_FILE_BYTES:
        raise ValueError(f"{path}: a catalogue file has at most {MAX_FILE_BYTES} bytes (172 rows); this one is larger")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[:error.start].count(b"\n") + 1
        raise ValueError(f"{path}: row {line}: not UTF-8 text (byte {error.start})") from None
    lines = text.splitlines(keepends=True)
    header = tuple(name.strip() for name in next(csv.reader(lines[:1]), ())) if lines and len(lines[0]) <= _MAX_LINE \
        else ()
    for number, line in enumerate(lines, start=1):
        if len(line) > _MAX_LINE:
            cells = line.split(",")
            index = next(i for i, cell in enumerate(cells) if len(cell) > MAX_NAME or i == len(cells) - 1)
            column = header[index] if number > 1 and index < len(header) else None
            _fail(path, number, column, f"a cell of {len(cells[index])} characters; cells of a catalogue are short "
                  f"(names at most {MAX_NAME} characters)")
    try:
        return _parse(path, _rows(path, lines))
    except csv.Error as error:  # e.g. a quoted cell running over many lines
        raise ValueError(f"{path}: not a readable CSV file: {error}") from None


def _rows(path: str, lines: list[str]) -> list[dict]:
    reader = csv.DictReader(lines)
    header = tuple(name.strip() for name in (reader.fieldnames or ()))
    if set(header) != set(COLUMNS) or len(header) != len(COLUMNS):
        missing = [c for c in COLUMNS if c not in header]
        unknown = [c for c in header if c not in COLUMNS]
        raise ValueError(f"{path}: row 1 (header): the columns must be exactly {', '.join(COLUMNS)}; "
                         f"missing: {missing or 'none'}, unknown: {[c if len(c) <= 40 else c[:40] + '...' for c in unknown] or 'none'}")
    rows = []
    for number, row in enumerate(reader, start=2):
        if None in row:
            _fail(path, number, None, f"{len(header) + len(row[None])} cells, but the header has {len(header)} columns")
        missing = [k.strip() for k, v in row.items() if v is None]
        if missing:
            _fail(path, number, missing[0], f"the row ends before this column; every row needs {len(header)} cells")
        rows.append({k.strip(): v for k, v in row.items()})
    return rows


def resolve(cards: "Catalogue | str | os.PathLike | None") -> Catalogue:
    """A Catalogue from a Catalogue, a CSV path, or None (the default catalogue)."""
    if isinstance(cards, Catalogue):
        return cards
    return load(cards)
