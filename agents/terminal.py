"""Play Packet Row in the terminal against bots (``packetrow play``): a prompting HumanAgent and the game loop.

Everything the person sees is what his seat may know (R-INFO-3, the 'tracked' view): the boards, his own
hand, each opponent's cash, ships and the cards known from his takes, never a hidden starting contract
or a deck. Input and output are injectable (``input_fn`` like ``input``, ``out`` a text stream) so tests
drive the loop without a terminal.
"""

from __future__ import annotations

import builtins
import shutil
import sys

import numpy as np

from packetrow_env import actions
from packetrow_env.cards import BANKER
from packetrow_env.render_compact import LEGEND, compact, wrap
from packetrow_env.engine import Game
from packetrow_env.render import scores_lines, seat_label
from packetrow_env.scoring import banker_points
from packetrow_env.seat_view import SeatView
from packetrow_env.state import END_THRESHOLD, MAX_PLAYERS, MIN_PLAYERS
from packetrow_env.user_files import check_output_file

from .play import SAVE_ERRORS, PlayError, Session, narrate, opponent_specs, read_save, save_error_text, write_save
from .registry import split_specs

DEFAULT_SAVE = "packetrow-game.json"
DEFAULT_OPPONENT = "heuristic"
PROMPT = "Your move (number, name, or 'help'): "
LAYOUTS = ("auto", "full", "compact")  # auto: full when it fits the terminal, else compact


def _input(prompt: str) -> str:
    """builtins.input, looked up at each call (so tests may monkeypatch it)."""
    return builtins.input(prompt)


class QuitGame(Exception):
    """The person stopped the game: 'quit', end of input or Ctrl-C (the reason is the message)."""


# ------------------------------------------------------------------------------------------ the human
class HumanAgent:
    """An Agent that shows the table to a person and asks for a move until a legal one is given.

    ``act`` raises QuitGame on 'quit', end of input (EOF) or Ctrl-C. ``on_save(path or None)`` handles the
    'save [FILE]' command and returns the path written. ``layout``: 'full', 'compact' (80 columns, about
    20 lines: ``packetrow_env.render_compact``) or 'auto' (full when it fits the terminal, else compact; full when
    the output is not a terminal).
    """

    def __init__(self, seat: int, input_fn=None, out=None, names=None, on_save=None, layout: str = "auto"):
        if layout not in LAYOUTS:
            raise PlayError(f"the layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
        self.name = "human"
        self.seat = seat
        self.input_fn = input_fn if input_fn is not None else _input
        self.out = out if out is not None else sys.stdout
        self.names = names
        self.on_save = on_save
        self.layout = layout
        self._last_compact = False
        self.news: list[str] = []  # what the others did since this seat's last move, shown above the actions

    def reset(self, seed: int) -> None:
        """Nothing to reseed: a person chooses."""

    def say(self, text: str = "") -> None:
        """Write a line (or lines) to the output."""
        self.out.write(text + "\n")
        self.out.flush()

    def view(self, view) -> str:
        """The table as this seat sees it (``view``: his SeatView), then what happened since his last move, then
        the legal actions."""
        text = view.render_text(names=self.names)
        if self.is_compact(text):
            news = [part for line in self.news for part in wrap("  " + line)]
            return "\n".join((["Since your last move:"] + news if news else []) + [compact(view, self.names)])
        if not self.news:
            return text
        table, marker, legal = text.partition("\nlegal actions:\n")
        news = "\n".join(["Since your last move:"] + ["  " + line for line in self.news])
        return f"{table}\n{news}{marker}{legal}"

    def is_compact(self, full_text: str | None = None) -> bool:
        """Whether to show the compact layout: asked for, or (auto) the full one would not fit the terminal."""
        if self.layout != "auto":
            return self.layout == "compact"
        if not getattr(self.out, "isatty", lambda: False)():
            return False
        if full_text is not None:
            size = shutil.get_terminal_size()
            lines = full_text.split("\n")
            # + the turn header, the news and the prompt
            self._last_compact = (len(lines) + len(self.news) + 4 > size.lines
                                  or max(map(len, lines)) > size.columns)
        return self._last_compact

    def fitted(self, text: str) -> str:
        """``text`` wrapped to 80 columns in the compact layout or when (auto) a line is wider than the terminal."""
        if self.layout == "compact" or (self.layout == "auto" and getattr(self.out, "isatty", lambda: False)()
                                        and max(map(len, text.split("\n"))) > shutil.get_terminal_size().columns):
            return fit(text)
        return text

    def act(self, view) -> int:
        """Show the table of ``view`` (his SeatView), then read lines until one names a legal action; commands are
        handled on the way."""
        if not view.has_game:
            raise ValueError("HumanAgent shows the table: act(SeatView(game, seat)), not a view of an observation")
        game = view  # everything below reads only this seat's view
        action_mask = view.action_mask
        text = self.view(game)
        if not self.is_compact():  # a compact screen has no line to spare
            self.say()
            self.say(f"=== Your turn (round {game.state.round}) " + "=" * 40)
        self.say(text)
        while True:
            try:
                line = self.input_fn(PROMPT)
            except EOFError:
                self.say()
                raise QuitGame("end of input") from None
            except KeyboardInterrupt:
                self.say()
                raise QuitGame("interrupted") from None
            action = self._handle(line, action_mask, game)
            if action is not None:
                self.news = []
                return action

    def _handle(self, line: str, mask, game) -> int | None:
        """The action a line names, or None after answering a command or explaining what was wrong."""
        text = " ".join(str(line).split())
        legal = np.flatnonzero(mask).tolist()
        listed = ", ".join(str(a) for a in legal)
        if not text:
            self.say(f"Please type one of the listed numbers ({listed}), an action name, or 'help'.")
            return None
        word, _, rest = text.partition(" ")
        command = word.lower()
        if command in ("help", "h", "?"):
            self.say(self.fitted(help_text(game)))
            if self.is_compact():
                self.say(LEGEND)
            self.say("Legal actions now:")
            self.say(legal_lines(game))
            return None
        if command in ("view", "look", "board", "v"):
            self.say(self.view(game))
            return None
        if command == "layout":
            choice = rest.strip().lower()
            if choice not in LAYOUTS:
                self.say(f"Type 'layout compact' (80 columns, about 20 lines), 'layout full', or 'layout auto' "
                         f"(compact when the full one does not fit the terminal). Now: {self.layout}.")
                return None
            self.layout = choice
            self.say(self.view(game))
            return None
        if command == "scores":
            self.say(standing_text(game, self.names))
            return None
        if command == "save":
            if self.on_save is None:
                self.say("Saving is not available here.")
                return None
            try:
                path = self.on_save(rest.strip() or None)
            except SAVE_ERRORS as error:
                self.say(f"Could not save: {save_error_text(error)}")
            else:
                self.say(f"Saved to {path} (resume with: packetrow play --load {path}).")
            return None
        if command in ("quit", "exit", "q"):
            raise QuitGame("quit")
        key = text.lower().replace(" ", ":", 1) if ":" not in text else text.lower().replace(" ", "")
        try:
            action = actions.parse(key)
        except ValueError:
            if text.isdigit():
                self.say(f"There is no action {text}. Type one of the listed numbers: {listed}.")
            else:
                self.say(f"{text!r} is neither an action nor a command. Type a listed number ({listed}), an "
                         f"action name such as {actions.name(legal[0])!r}, or 'help'.")
            return None
        if not mask[action]:
            self.say(f"Action {action} ({actions.name(action)}) is not legal now. Legal: "
                     + ", ".join(f"{a} ({actions.name(a)})" for a in legal) + ".")
            return None
        return action


def fit(text: str) -> str:
    """``text`` with every line longer than 80 columns wrapped (indented), for 80-column terminals."""
    return "\n".join(part for line in text.split("\n") for part in wrap(line, indent="    "))


def standing_text(view, names=None) -> str:
    """The scores if the game ended now with every money card cashed (contracts not shipped), from a SeatView."""
    cards = view.cards
    n = view.num_players
    rows = view.scores()
    cash, bankers = [], []
    seat = view.seat
    hands = view.known_hands()  # money cards and bankers are always taken face up: known to every seat (tracked)
    for p in range(n):
        hand = hands[p]
        cash.append(rows[p]["cash"] + sum(int(cards.money[c]) for c in hand))
        bankers.append(sum(int(cards.kind[c] == BANKER) for c in hand))
    per_banker = banker_points(cash)
    vp = [rows[p]["building_vp"] + cash[p] // 10 + per_banker[p] * bankers[p] for p in range(n)]
    labels = [seat_label(p, seat, names) for p in range(n)]
    width = max(len(label) for label in labels)
    lines = ["If the game ended now, with money cards cashed but no further shipments:",
             f"  {'player':{width}s}  {'VP':>3s}  {'buildings':>9s}  {'money':>5s}  {'bankers':>7s}  {'cash':>5s}"]
    for p in range(n):
        lines.append(f"  {labels[p]:{width}s}  {vp[p]:3d}  {rows[p]['building_vp']:9d}  {cash[p] // 10:5d}  "
                     f"{per_banker[p] * bankers[p]:7d}  {'$' + str(cash[p]):>5s}")
    return "\n".join(lines)


def legal_lines(view) -> str:
    """The legal actions of a SeatView, one a line: number, name, what it does."""
    return "\n".join(f"  {a:2d}  {actions.name(a):16s} {view.describe_action(a)}" for a in view.legal_actions())


def help_text(game) -> str:
    """The rules in brief and the commands."""
    n = game.num_players
    threshold = END_THRESHOLD[n]
    bankers = ("2 VP per banker if you have the most cash (ties included)" if n <= 3 else
               "3 VP per banker for the most cash; 1 VP per banker for the second most if one player leads alone")
    return "\n".join([
        "How a round goes (the full rules: docs/rules.md of the packetrow project):",
        "  The harbour master (HM) chooses a board. Starting left of the HM, each player who has not taken a",
        "  card this round takes one card from the board's 'now' supply or passes; the HM decides last. When",
        "  the HM takes, the round ends; when he passes he chooses another board. One card per player a round.",
        "  Then the chosen boards are refilled: the 'future' cards move to 'now' and new ones are drawn.",
        "Cards: prices are shown as ($N); money cards in your hand are cashed automatically when cash is short.",
        "  Ships lie face up in front of you. A contract needs its goods (gold nuggets count as any good,",
        "  traders change a good, captains change a ship's destination) and a ship to its destination.",
        "  To ship: add contracts ('contract:K'), then 'ship' (once a contract is added, the shipment must be",
        "  shipped; only contracts that can go together are offered). Shipping does not use up your decision.",
        "  When the shipment can be paid with different cards, you choose which ('pay:K', cheapest first;",
        f"  'more' shows the next {actions.MAX_PAYMENT_OPTIONS} when there are more).",
        "  An assistant lets you take from the 'future' supply ('assistant:0' / 'assistant:1').",
        "End: a board is exhausted when its deck can no longer fill its 'now' supply; the game ends after the",
        f"  round that leaves {threshold} board{'s' if threshold > 1 else ''} exhausted. Contracts you can still fulfil "
        "are then shipped for you",
        "  and money cards cashed. VP: buildings, 1 VP per $10 of cash,",
        f"  {bankers}. Most VP wins; ties go to the most cash.",
        "Commands:",
        "  a listed number, or an action name: choose:market, take:0, assistant:1, pass, contract:12, ship",
        "  view      show the table again          scores   the scores if the game ended now",
        "  layout L  L = compact (80x24), full or auto (compact when the full table does not fit)",
        "  save [F]  save the game (to F)          quit     stop (the game is saved first if you gave --save)",
        "  help      this text",
    ])


# ------------------------------------------------------------------------------------------ the game loop
class TerminalGame(Session):
    """One game between a person at ``seat`` and bots (``opponents``: one spec per other seat, in seat order)."""

    def __init__(self, game: Game, seat: int, opponents: list[str], seed: int, save_path: str | None = None,
                 input_fn=None, out=None, layout: str = "auto"):
        super().__init__(game, seat, opponents, seed)
        self.save_path = save_path
        self.input_fn = input_fn if input_fn is not None else _input
        self.out = out if out is not None else sys.stdout
        self.human = HumanAgent(seat, self.input_fn, self.out, names=self.names, on_save=self.save, layout=layout)
        self._saved_at = None

    def say(self, text: str = "") -> None:
        """Write a line (or lines) to the output."""
        self.out.write(text + "\n")
        self.out.flush()

    def save(self, path: str | None = None) -> str:
        """Write the game to ``path`` (default: the --save file, else packetrow-game.json); the path written."""
        path = path or self.save_path or DEFAULT_SAVE
        write_save(path, self.saved())
        return path

    def _autosave(self) -> None:
        moves = len(self.game.state.history)
        if self.save_path and self._saved_at != moves:
            try:
                self.save()
            except SAVE_ERRORS as error:
                self.say(f"(autosave to {self.save_path} failed: {save_error_text(error)})")
            else:
                self._saved_at = moves

    def intro(self) -> str:
        """Who plays whom, the seed, and where to find help."""
        n = self.game.num_players
        others = ", ".join(seat_label(p, self.seat, self.names) for p in range(n) if p != self.seat)
        lines = [f"Packet Row, {n} players. You are player {self.seat}; opponents: {others}.",
                 f"Seed {self.seed} (play this deal again with --seed {self.seed}). Type 'help' for the rules "
                 "in brief and the commands."]
        if self.save_path:
            lines.append(f"The game is saved to {self.save_path} after each of your moves.")
        if self.game.state.history:
            lines.append(f"Resuming in round {self.game.state.round}.")
        return "\n".join(lines)

    def bot_action(self, p: int) -> int:
        """The move of the bot at seat ``p``, given its own tracked view, with a status line while it thinks."""
        live = getattr(self.out, "isatty", lambda: False)()
        if live:  # a status line while a (possibly slow) bot thinks, erased afterwards
            self.out.write(f"({seat_label(p, self.seat, self.names)} is thinking...)")
            self.out.flush()
        try:
            return self.bot_move(p)
        finally:
            if live:
                self.out.write("\r\033[K")
                self.out.flush()

    def run(self) -> int:
        """Play to the end (or until the person quits); the exit status."""
        game = self.game
        self.say(self.human.fitted(self.intro()))
        if game.is_over:
            self.say("This game is already over.")
            self.say("\n".join(scores_lines(game, self.seat, self.names)))
            return 0
        try:
            while not game.is_over:
                p = game.current_player
                if p == self.seat:
                    self._autosave()
                    action = self.human.act(SeatView(game, self.seat, "tracked"))
                else:
                    action = self.bot_action(p)
                before = game.clone()
                try:
                    game.step(action)
                except ValueError as error:  # only a bot can get here: the person's input is checked
                    raise RuntimeError(f"{seat_label(p, self.seat, self.names)} chose an illegal action: "
                                       f"{error}") from None
                lines = narrate(before, action, game, self.seat, self.names)
                if p == self.seat or game.is_over:  # the others' moves are shown with the person's next view
                    for line in self.human.news + lines:
                        self.say(self.human.fitted(line))
                    self.human.news = []
                else:
                    self.human.news.extend(lines)
                if p == self.seat:
                    self._autosave()
        except (QuitGame, KeyboardInterrupt) as stop:
            return self._quit(str(stop) or "interrupted")
        self._autosave()
        if self.save_path:
            self.say(f"(the final position is saved in {self.save_path})")
        return 0

    def _quit(self, reason: str) -> int:
        if self.save_path:
            try:
                path = self.save()
            except SAVE_ERRORS as error:
                self.say(f"Could not save to {self.save_path}: {save_error_text(error)}")
            else:
                self.say(f"Game saved to {path}. Resume with: packetrow play --load {path}")
        elif reason == "quit":
            try:
                answer = self.input_fn("Save this game before quitting? Type a file name, or press Enter to quit "
                                       "without saving: ").strip()
            except (EOFError, KeyboardInterrupt):
                answer = ""
            if answer:
                try:
                    path = self.save(answer)
                except SAVE_ERRORS as error:
                    self.say(f"Could not save to {answer!r}: {save_error_text(error)}")
                else:
                    self.say(f"Game saved to {path}. Resume with: packetrow play --load {path}")
        self.say("Game stopped." if reason == "quit" else f"Game stopped ({reason}).")
        return 0


def play(players: int | None = None, opponents=None, seed: int | None = None, seat: int | None = None,
         save: str | None = None, load: str | None = None, input_fn=None, out=None, layout: str = "auto") -> int:
    """Set up (or load) a game and play it in the terminal; the exit status. Bad options raise PlayError, and so does
    a ``save`` file that cannot be written, before the game starts.

    ``opponents``: a comma-separated string or a list of agent specs, players - 1 of them or one for all.
    """
    specs = None
    if opponents is not None:
        try:
            specs = split_specs(opponents) if isinstance(opponents, str) else [str(o) for o in opponents]
        except ValueError as error:
            raise PlayError(f"--opponents: {error}") from None
    if players is not None and not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise PlayError(f"--players must be {MIN_PLAYERS} to {MAX_PLAYERS}, got {players}")
    if seed is not None and seed < 0:
        raise PlayError(f"--seed must be a non-negative integer, got {seed}")
    if load is not None:
        saved = read_save(load)
        game = saved["game"]
        n = game.num_players
        if saved["seat"] is not None:  # a saved terminal game: its settings come from the file
            given = [flag for flag, value in (("--players", players), ("--seat", seat), ("--seed", seed))
                     if value is not None]
            if given:
                raise PlayError(f"--load resumes {load} with its own players, seat and seed: leave out "
                                f"{', '.join(given)} (only --opponents and --save may change)")
            seat, seed = saved["seat"], saved["seed"]
            specs = specs if specs is not None else saved["opponents"]
            save = load if save is None else save  # resuming a saved game keeps saving to its file
        elif players is not None and players != n:
            raise PlayError(f"{load} holds a {n}-player game, but --players is {players}")
    else:
        n = 3 if players is None else players
        game = None
    seat = 0 if seat is None else seat
    if not 0 <= seat < n:
        raise PlayError(f"--seat must be a seat of the {n}-player game: 0 to {n - 1}, got {seat}")
    if seed is None:
        seed = int(np.random.default_rng().integers(2**31))
    specs = opponent_specs(specs if specs is not None else [DEFAULT_OPPONENT], n)
    if save is not None:  # now, not at the first autosave after the person's first move
        check_output_file(save, PlayError, "--save")
    if game is None:
        game = Game.new(n, seed=seed)
    session = TerminalGame(game, seat, specs, seed, save_path=save, input_fn=input_fn, out=out, layout=layout)
    return session.run()


# ------------------------------------------------------------------------------------------ command line
def add_arguments(parser) -> None:
    """Add the arguments of ``packetrow play`` to its parser."""
    parser.description = ("Play Packet Row in the terminal against bots. At each of your turns the table is shown "
                          "with your legal actions; type a listed number or an action name, or 'help', 'save [FILE]', "
                          "'quit'.")
    parser.add_argument("--players", type=int, default=None, choices=range(MIN_PLAYERS, MAX_PLAYERS + 1),
                        metavar="N", help="number of players, 2-5 (default 3)")
    parser.add_argument("--opponents", default=None, metavar="SPECS",
                        help="comma-separated agent specs, one per opponent or one for all, e.g. heuristic,ismcts "
                             f"or random (default {DEFAULT_OPPONENT})")
    parser.add_argument("--seed", type=int, default=None, help="seed of the deal and the bots (default: random)")
    parser.add_argument("--seat", type=int, default=None, help="your seat, 0 = harbour master of round 1 (default 0)")
    parser.add_argument("--save", metavar="FILE", default=None, help="save the game to FILE after each of your moves")
    parser.add_argument("--load", metavar="FILE", default=None,
                        help="resume a game saved with --save or 'save'; it keeps saving to FILE after each of your "
                             "moves and on quit (unless --save names another file)")
    parser.add_argument("--layout", choices=LAYOUTS, default="auto",
                        help="compact: the table in 80 columns and about 20 lines; full: everything spelled out; "
                             "auto (default): full when it fits the terminal, else compact")
    parser.set_defaults(run=run_command)


def run_command(args, input_fn=None, out=None) -> int:
    """Run ``packetrow play`` from parsed arguments; a bad option or file prints an error and gives status 2."""
    if input_fn is None and sys.stdin.isatty():
        try:
            import readline  # noqa: F401  (line editing and history at the prompt)
        except ImportError:
            pass
    try:
        return play(players=args.players, opponents=args.opponents, seed=args.seed, seat=args.seat, save=args.save,
                    load=args.load, input_fn=input_fn, out=out, layout=getattr(args, "layout", "auto"))
    except PlayError as error:
        print(f"packetrow play: error: {error}", file=sys.stderr)
        return 2
