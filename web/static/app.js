// Packet Row in the browser. The server holds the game and sends only what your seat may know; this script
// draws it and sends your clicks. Bots move on the server, one move per request, while a "thinking" line shows.
"use strict";

const params = new URLSearchParams(location.search);
const BOT_DELAY = Math.max(0, Number(params.get("delay") ?? 350));  // ms between bot moves, so they can be followed

const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child instanceof Node ? child : document.createTextNode(child));
  }
  return node;
}

async function api(method, path, body) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  let data;
  try { data = await response.json(); } catch { data = { error: `the server answered ${response.status}` }; }
  if (!response.ok) {
    const error = new Error(data.error || `the server answered ${response.status}`);
    error.status = response.status;
    throw error;
  }
  return data;
}

let toastTimer = null;
function toast(message, ok = false) {
  const box = $("toast");
  box.textContent = message;
  box.className = ok ? "ok" : "";
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { box.hidden = true; }, ok ? 2500 : 6000);
}

// Icons drawn as SVG, so that they show without an emoji font.
const ICONS = {
  first: "M5 4h2v16H5zM20 4v16L9 12z", prev: "M18 4v16L6 12z", next: "M6 4v16l12-8z",
  last: "M17 4h2v16h-2zM4 4v16l11-8z",
  anchor: "M11 2a3 3 0 0 1 2 5.2V9h3v2h-3v8.9A7 7 0 0 0 19 14h-2l3-4 3 4h-2a9 9 0 0 1-18 0H1l3-4 3 4H5"
    + "a7 7 0 0 0 6 5.9V11H8V9h3V7.2A3 3 0 0 1 11 2zm1 2a1 1 0 1 0 0 2 1 1 0 0 0 0-2z",
  star: "M12 2l3 7h7l-5.5 4.5 2 7.5-6.5-4.5L5.5 21l2-7.5L2 9h7z",
};

function icon(name, label) {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("class", `icon icon-${name}`);
  svg.setAttribute(label ? "aria-label" : "aria-hidden", label || "true");
  if (label) svg.setAttribute("role", "img");
  const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
  path.setAttribute("d", ICONS[name]);
  svg.append(path);
  return svg;
}

// ------------------------------------------------------------------------------------------------ cards
const KIND_LABEL = { contract: "contract", goods: "goods", gold: "gold", ship: "ship", captain: "captain",
  trader: "trader", assistant: "assistant", building: "building", money: "money", banker: "banker" };

function cardTitle(card) {
  switch (card.kind) {
    case "contract": return `${card.quantity} ${card.good} → ${card.destination}`;
    case "ship": return `→ ${card.destination}`;
    case "money": return `$${card.money}`;
    case "goods": return `${card.quantity} ${card.good}`;
    case "gold": return card.quantity === 2 ? "double nugget" : "single nugget";
    case "building": return card.name.replace(/ \(\d+ VP\)$/, "");
    default: return card.kind;
  }
}

function cardNote(card) {
  if (card.kind === "contract") return `pays $${card.reward}${card.starting ? " · starting" : ""}`;
  if (card.kind === "building") return `${card.vp} VP${card.price ? ` · $${card.price}` : ""}`;
  if (card.price) return `$${card.price}`;
  return "";
}

function cardNode(card, action = null) {
  if (!card) return el("div", { class: "card empty", text: "empty" });
  const tag = action ? "button" : "div";
  const node = el(tag, { class: `card kind-${card.kind}${action ? " pick" : ""}`, title: action ? action.text : card.text,
      type: action ? "button" : null, "data-action": action ? action.id : null },
    el("span", { class: "kind", text: KIND_LABEL[card.kind] || card.kind }),
    el("span", { class: "name", text: cardTitle(card) }),
    el("span", { class: "price", text: cardNote(card) }));
  if (action) node.addEventListener("click", () => play.act(action.id));
  return node;
}

function revealedCard(card) {
  const node = cardNode(card);
  node.classList.add("revealed");
  node.title = `his starting contract, shown at the end: ${card.text}`;
  return node;
}

function hiddenCard(text) {
  return el("div", { class: "card hidden", title: text }, el("span", { class: "kind", text: "hidden" }),
    el("span", { class: "name", text: "starting contract" }), el("span", { class: "price", text: "?" }));
}

// ------------------------------------------------------------------------------------------------ the table
function renderBoards(view, root, clickable) {
  const byTarget = {};
  for (const action of clickable ? view.actions : []) {
    if (action.group === "take" || action.group === "future" || action.group === "choose") {
      byTarget[`${action.group}:${action.board}:${action.slot ?? ""}`] = action;
    }
  }
  root.replaceChildren(...view.boards.map((board) => {
    const flags = [];
    if (board.active) flags.push(el("span", { text: "taking now" }));
    if (board.chosen && !board.active) flags.push(el("span", { text: "chosen" }));
    if (board.exhausted) flags.push(el("span", { class: "warn", text: "exhausted" }));
    else if (board.runs_out) flags.push(el("span", { class: "warn", text: "runs out at next refill" }));
    flags.push(el("span", { text: `deck ${board.deck}` }));
    const choose = byTarget[`choose:${board.index}:`];
    const head = el("div", { class: "head" },
      el("span", { class: "title", text: board.name }),
      el("span", { class: "flags" }, ...flags.flatMap((f, i) => (i ? [" · ", f] : [f]))));
    const chooseButton = choose ? el("button", { type: "button", class: "primary choose", "data-action": choose.id,
      title: choose.text, onclick: () => play.act(choose.id), text: `Choose the ${board.name}` }) : null;
    return el("div", { class: `board${board.active ? " active" : ""}${board.exhausted ? " exhausted" : ""}`,
        "data-board": board.name },
      head, chooseButton,
      el("div", { class: "row-label", text: "now" }),
      el("div", { class: "cards" }, board.current.map((card, slot) => cardNode(card, byTarget[`take:${board.index}:${slot}`]))),
      el("div", { class: "row-label", text: "next (future supply)" }),
      el("div", { class: "cards" }, board.future.map((card, slot) => cardNode(card, byTarget[`future:${board.index}:${slot}`]))));
  }));
}

function renderPlayers(view, root) {
  const order = view.you === null || view.you === undefined ? view.players
    : view.players.map((_, k) => view.players[(view.you + k) % view.num_players]);
  root.replaceChildren(...order.map((player) => {
    const facts = [`$${player.cash} cash`];
    if (player.money_cards) facts.push(`+ $${player.money_cards} in money cards`);
    if (player.harbour_master) facts.push("harbour master");
    facts.push(player.has_taken ? "has taken this round" : "has not taken this round");
    if (!player.you && player.holds_starting_contract !== null) {
      facts.push(player.holds_starting_contract ? "still holds his starting contract" : "starting contract shipped");
    }
    const groups = player.hand.map((group) => el("div", { class: "group" },
      el("div", { class: "label", text: group.label }), el("div", { class: "cards" }, group.cards.map((c) => cardNode(c)))));
    const revealed = view.hands ? view.hands.players[player.seat].starting : [];
    if (player.hidden_cards && revealed.length) {
      groups.push(el("div", { class: "group" }, el("div", { class: "label", text: "starting contract (shown at the end)" }),
        el("div", { class: "cards" }, revealed.map(revealedCard))));
    } else if (player.hidden_cards) {
      groups.push(el("div", { class: "group" }, el("div", { class: "label", text: "hidden" }),
        el("div", { class: "cards" }, hiddenCard("his starting contract: you cannot see it"))));
    }
    if (player.ships.length) {
      groups.unshift(el("div", { class: "group" }, el("div", { class: "label", text: "ships (face up)" }),
        el("div", { class: "cards" }, player.ships.map((c) => cardNode(c)))));
    }
    const title = player.you ? `${player.label} — your hand` : view.you === null || view.mode === "full"
      ? player.label : `${player.label} — the cards you saw him take`;
    return el("div", { class: `player${player.to_act ? " to-act" : ""}${player.you ? " you" : ""}`,
        "data-seat": player.seat },
      el("div", { class: "who" }, player.harbour_master ? icon("anchor", "harbour master") : null,
        (player.to_act ? "to act: " : "") + title),
      el("div", { class: "facts", text: facts.join(" · ") }),
      groups.length ? groups : el("div", { class: "facts", text: "no cards" }));
  }));
}

function renderScores(view, root, heading) {
  if (!view.scores) { root.hidden = true; root.replaceChildren(); return; }
  const winners = view.scores.filter((row) => row.winner);
  let verdict;
  if (view.you !== null && view.you !== undefined && view.kind === "play") {
    verdict = winners.some((row) => row.seat === view.you)
      ? (winners.length > 1 ? "You share the win!" : "You win!")
      : `The winner: ${winners.map((row) => row.label).join(", ")}.`;
  } else {
    verdict = `Winner${winners.length > 1 ? "s" : ""}: ${winners.map((row) => row.label).join(", ")}.`;
  }
  const rows = view.scores.map((row) => el("tr", { class: row.winner ? "winner" : null, "data-seat": row.seat },
    el("td", { class: "who" }, row.label, row.winner ? icon("star", "winner") : null),
    el("td", { class: "vp", text: row.vp }),
    el("td", { text: row.building_vp }), el("td", { text: row.money_vp }), el("td", { text: row.banker_vp }),
    el("td", { class: "cash", text: `$${row.cash}` })));
  root.replaceChildren(el("h2", { text: heading }), el("p", { class: "verdict", text: verdict }),
    el("table", {}, el("thead", {}, el("tr", {}, ["player", "VP", "buildings", "money", "bankers", "cash"]
      .map((h, k) => el("th", { scope: "col", class: k ? "num" : null, text: h })))), el("tbody", {}, rows)));
  root.hidden = false;
}

function statusLine(view, thinking) {
  const hm = view.players[view.harbour_master];
  const parts = [el("span", { text: `Round ${view.round} · harbour master: ${hm.you ? "you" : hm.label} · ` }),
    el("span", { text: `game ends when ${view.end_threshold} board${view.end_threshold > 1 ? "s are" : " is"} exhausted ` +
      `(now ${view.exhausted}) · ` })];
  if (view.over) parts.push(el("span", { class: "turn", text: "The game is over." }));
  else if (view.kind === "play" && view.current_player === view.you) {
    parts.push(el("span", { class: "turn you-turn", text: "Your move (below)." }));
  } else {
    const who = view.players[view.current_player].label;
    parts.push(el("span", { class: `turn${thinking ? " thinking" : ""}`,
      text: thinking ? `${who} is thinking…` : `${who} to act: ${view.phase_text}.` }));
  }
  if (view.last_round) parts.push(el("div", { class: "last", text: "This is the last round." }));
  return parts;
}

// ------------------------------------------------------------------------------------------------ play
const ACTION_ORDER = { pay: 0, more: 1, contract: 2, ship: 3, take: 4, future: 5, choose: 6, pass: 7 };

const play = {
  view: null,
  busy: false,
  generation: 0,  // a new game stops the bot loop of the old one
  seen: 0,  // log lines already seen when the person last moved
  keepFocus: false,  // the person moved from the move area: focus goes back there, not to the page's body

  async start(options) {
    await this.run(() => api("POST", "/api/games", options));
  },

  async open(id) {  // the game of the page's address: a reload or a second tab shows it again
    await this.run(() => api("GET", `/api/games/${encodeURIComponent(id)}`));
  },

  async run(request) {
    this.generation += 1;
    this.busy = true;
    try {
      this.show(await request());
    } catch (error) {
      this.fail(error);
    } finally {
      this.busy = false;
    }
    this.loop();
  },

  async act(action) {
    if (this.busy || !this.view) return;
    this.busy = true;
    this.keepFocus = document.activeElement && document.activeElement.closest("#play") !== null;
    this.disable();
    try {
      const view = await api("POST", `/api/games/${this.view.id}/act`, { action, move: this.view.move });
      this.seen = view.log.length;  // "since your last move" starts again
      this.show(view);
    } catch (error) {
      await this.fail(error);
    } finally {
      this.busy = false;
    }
    this.loop();
  },

  async loop() {  // while a bot is to act: show who thinks, ask the server for its move, show it
    const generation = this.generation;
    while (this.view && !this.view.over && this.view.current_player !== this.view.you && generation === this.generation) {
      this.busy = true;
      this.renderStatus(this.view, true);
      try {
        const [view] = await Promise.all([api("POST", `/api/games/${this.view.id}/advance`, { move: this.view.move }),
          new Promise((resolve) => setTimeout(resolve, BOT_DELAY))]);
        if (generation !== this.generation) return;
        this.show(view);
      } catch (error) {
        if (generation === this.generation) await this.fail(error, error.status === 409);
        if (error.status !== 409) break;  // 409: another tab moved the bot; go on from the game as it is now
      } finally {
        if (generation === this.generation) this.busy = false;
      }
    }
  },

  async fail(error, quiet = false) {  // a refused request: say why; a game moved elsewhere is shown as it is now
    if (error.status === 404 && (this.view || params.get("game"))) return this.gone(error.message);
    if (!quiet) toast(error.message);
    if (error.status === 409 && this.view) {
      try { this.show(await api("GET", `/api/games/${this.view.id}`)); } catch (again) { toast(again.message); }
    } else if (this.view) this.show(this.view);
  },

  gone(message) {  // the server has no such game (and no autosave of it): no live buttons, and a way on
    this.generation += 1;
    this.view = null;
    document.body.dataset.over = "gone";
    $("status").replaceChildren(el("div", { class: "turn gone", text: "This game is no longer on the server." }),
      el("div", { text: message }),
      el("div", { class: "actions" },
        el("button", { type: "button", class: "primary", id: "gone-resume", text: "Resume a saved game…", onclick: openLoad }),
        el("button", { type: "button", id: "gone-new", text: "New game…", onclick: openOptions })));
    for (const id of ["moves", "boards", "players", "log"]) $(id).replaceChildren();
    renderScores({ scores: null }, $("scores"));
    $("gone-resume").focus();
  },

  disable() {
    for (const button of document.querySelectorAll("#play [data-action]")) button.disabled = true;
  },

  async show(view) {
    const ended = view.over && !(this.view && this.view.id === view.id && this.view.over);
    if (!this.view || this.view.id !== view.id || this.seen > view.log.length) this.seen = view.log.length;
    if (this.view && this.view.id === view.id && this.view.hands) view.hands = this.view.hands;
    this.view = view;
    if (params.get("game") !== view.id) {  // the address names the game: reload and a second tab reopen it
      params.set("game", view.id);
      history.replaceState(null, "", `${location.pathname}?${params}`);
    }
    document.body.dataset.game = view.id;
    document.body.dataset.over = view.over ? "yes" : "no";
    this.renderStatus(view, false);
    renderBoards(view, $("boards"), true);
    renderPlayers(view, $("players"));
    renderScores(view, $("scores"), "Final scores");
    this.renderMoves(view);
    renderLog($("log"), view.log.map((line, k) => [view.log_moves[k], line]));
    if (this.keepFocus) this.focusMoves();
    if (ended) $("scores").scrollIntoView({ block: "start" });
    if (view.over && !view.hands) {  // every hand face up: the starting contracts nobody could see
      try {
        const hands = await api("GET", `/api/games/${view.id}/hands`);
        if (this.view === view) { view.hands = hands; renderPlayers(view, $("players")); }
      } catch (error) { toast(error.message); }
    }
  },

  focusMoves() {
    const first = document.querySelector("#moves [data-action]:not([disabled]), #moves button");
    (first || $("moves")).focus({ preventScroll: true });
    if (first) this.keepFocus = false;
  },

  renderStatus(view, thinking) {
    const news = view.over ? [] : view.log.slice(this.seen).filter((line) => line.trim());
    const lines = news.length ? [el("ul", { class: "news" }, news.slice(-8).map((line) => el("li", { text: line })))] : [];
    const warning = view.autosave_error ? [el("div", { class: "last", text: view.autosave_error })] : [];
    $("status").replaceChildren(...statusLine(view, thinking), ...warning, ...lines);
  },

  renderMoves(view) {
    const box = $("moves");
    if (!view.actions.length) {
      box.replaceChildren(...(view.over ? [el("button", { type: "button", class: "primary", id: "play-again",
        text: "Play again", onclick: () => openOptions() })] : []));
      return;
    }
    const actions = [...view.actions].sort((a, b) => ACTION_ORDER[a.group] - ACTION_ORDER[b.group] || a.id - b.id);
    const children = [el("h2", { class: "turn", text: `Your move: ${view.phase_text}.` })];
    if (view.pending_text) children.push(el("div", { text: `Pending shipment: ${view.pending_text.replace(/^ship /, "")}` }));
    if (view.pass_reason) children.push(el("div", { class: "reason", text: view.pass_reason }));
    const buttons = actions.map((action) => {
      if (action.group === "pay") {
        return el("button", { type: "button", class: "pay-option", "data-action": action.id,
          onclick: () => this.act(action.id) },
          el("div", { text: `Pay option ${action.option + 1}: give up` }),
          el("div", { class: "cards" }, action.payment.map((card) => cardNode(card))));
      }
      if (action.group === "more") {
        return el("button", { type: "button", class: "more", "data-action": action.id, title: action.name,
          onclick: () => this.act(action.id), text: "More ways to pay…" });
      }
      const label = action.group === "pass" ? action.text.replace(/^pass/, "Pass")
        : action.text.charAt(0).toUpperCase() + action.text.slice(1);
      return el("button", { type: "button", class: action.group, "data-action": action.id, title: action.name,
        onclick: () => this.act(action.id), text: label });
    });
    children.push(el("div", { class: `actions${actions[0].group === "pay" ? " pay" : ""}` }, buttons));
    box.replaceChildren(...children);
  },
};

// A log: moves numbered by the game's move number, separators (round ends, the final summary) unnumbered.
function renderLog(root, entries) {
  root.replaceChildren(...entries.filter(([, line]) => line.trim()).map(([number, line]) => {
    const separator = line.startsWith("---");
    return el("li", { class: separator ? "round" : (number ? "move" : "note") },
      el("span", { class: "num", text: number ? `${number}.` : "" }),
      el("span", { class: "line", text: separator ? line.replace(/^-+\s*/, "") : line }));
  }));
  root.scrollTop = root.scrollHeight;
}

// ------------------------------------------------------------------------------------------------ options
let offered = [];  // the opponents this server plays: /api/options
let lastOptions = {
  players: Number(params.get("players") || 2),
  seat: Number(params.get("seat") || 0),
  opponents: (params.get("opponents") || "ppo").split("|"),
  seed: params.has("seed") ? Number(params.get("seed")) : null,
};

function fillOptionForm() {
  const players = Number($("opt-players").value);
  const seat = $("opt-seat");
  const keep = Math.min(Number(seat.value || lastOptions.seat), players - 1);
  seat.replaceChildren(...Array.from({ length: players }, (_, p) => el("option", { value: p, text: `seat ${p}` })));
  seat.value = String(keep);
  const box = $("opt-opponents");
  const previous = [...box.querySelectorAll("input")].map((input) => input.value);
  const fields = [];
  for (let k = 0; k < players - 1; k += 1) {
    const value = previous[k] || lastOptions.opponents[k] || lastOptions.opponents[0] || "ppo";
    fields.push(el("label", {}, `Opponent ${k + 1}`,
      el("input", { type: "text", list: "agent-specs", value, name: `opponent-${k}`, class: "opponent" })));
  }
  box.replaceChildren(el("legend", { text: "Opponents (in seat order after you)" }), ...fields);
}

function openOptions() {
  $("opt-players").value = String(lastOptions.players);
  fillOptionForm();
  $("opt-seed").value = lastOptions.seed ?? "";
  $("options-dialog").showModal();
}

function readOptions() {
  const seed = $("opt-seed").value.trim();
  return {
    players: Number($("opt-players").value),
    seat: Number($("opt-seat").value),
    opponents: [...document.querySelectorAll("#opt-opponents input")].map((input) => input.value.trim() || "ppo"),
    seed: seed === "" ? null : Number(seed),
  };
}

// ------------------------------------------------------------------------------------------------ save / resume
async function saveGame() {
  if (!play.view) return;
  try {
    const answer = await api("POST", `/api/games/${play.view.id}/save`, {});
    toast(`Saved as ${answer.saved} in ${answer.folder}/ (every move is saved there too)`, true);
  } catch (error) { toast(error.message); }
}

async function openLoad() {
  const list = $("save-list");
  list.replaceChildren(el("li", { text: "…" }));
  $("load-dialog").showModal();
  try {
    const answer = await api("GET", "/api/saves");
    list.replaceChildren(...(answer.saves.length ? answer.saves.map((save) => el("li", {},
      el("button", { type: "button", text: `${save.name} (${save.players} players, round ${save.round}${save.over ? ", over" : ""})`,
        onclick: () => resume({ name: save.name }) })))
      : [el("li", { text: `no saved games in ${answer.folder}/ yet` })]));
  } catch (error) { list.replaceChildren(el("li", { text: error.message })); }
}

async function resume(body) {
  play.generation += 1;
  try {
    play.show(await api("POST", "/api/games/load", body));
    $("load-dialog").close();
    showTab("play");
  } catch (error) { toast(error.message); }
  play.loop();
}

async function loadOptions() {  // the offered opponents, listed in the options dialog
  try {
    const answer = await api("GET", "/api/options");
    offered = answer.offered;
    $("agent-specs").replaceChildren(...offered.map((o) => el("option", { value: o.spec, label: o.label })));
    $("offered-hint").replaceChildren(...offered.flatMap((o, k) => [k ? " · " : "", el("b", { text: o.spec }), `: ${o.label}`]),
      answer.any_agent ? ". Any agent spec may be typed." : ".");
  } catch (error) { toast(error.message); }
}

// ------------------------------------------------------------------------------------------------ watch
const watch = {
  id: null, games: [], game: null, view: null,
  target: 0,  // the move last asked for: quick clicks step from it, and older answers are dropped

  async open(file) {
    try {
      const answer = await api("POST", "/api/watch", { text: await file.text(), name: file.name });
      this.id = answer.id;
      this.games = answer.games;
      $("watch-game").replaceChildren(...answer.games.map((game) => el("option", { value: game.index,
        text: `game ${game.index}: ${game.agents.join(" vs ")}` })));
      this.pick(answer.games[0].index);
    } catch (error) { toast(error.message); }
  },

  pick(index) {
    this.game = this.games.find((game) => game.index === Number(index));
    $("watch-game").value = String(this.game.index);
    $("watch-seat").replaceChildren(el("option", { value: "full", text: "full view (every hand)" }),
      ...this.game.agents.map((agent, p) => el("option", { value: p, text: `seat ${p} (${agent})` })));
    this.go(0);
  },

  async go(move) {
    if (!this.id) return;
    this.target = move;
    const seat = $("watch-seat").value || "full";
    try {
      const view = await api("GET", `/api/watch/${this.id}/${this.game.index}?move=${move}&seat=${seat}`);
      if (move === this.target) this.show(view);
    } catch (error) { toast(error.message); }
  },

  step(delta) {
    if (this.view) this.go(Math.max(0, Math.min(this.view.moves, this.target + delta)));
  },

  show(view) {
    this.view = view;
    $("watch-controls").hidden = false;
    const slider = $("watch-move");
    slider.max = view.moves;
    slider.value = view.move;
    $("watch-position").textContent = `move ${view.move} of ${view.moves}`;
    const status = $("watch-status");
    status.replaceChildren(...statusLine(view, false),
      el("div", { class: "next", text: view.next ? `Next: ${view.next}` : "End of the game." }),
      el("div", { class: "hint", text: view.mode === "full" ? "Full view: every hand is shown."
        : `The view of seat ${view.viewer}: what that player knew.` }));
    renderBoards(view, $("watch-boards"), false);
    renderPlayers(view, $("watch-players"));
    renderScores(view, $("watch-scores"), "Final scores (replayed by the engine)");
    const history = $("watch-history");
    renderLog(history, view.history.map((line, m) => [m + 1, line]));
  },
};

// ------------------------------------------------------------------------------------------------ wiring
function showTab(name) {
  $("play").hidden = name !== "play";
  $("watch").hidden = name !== "watch";
  $("play-tools").hidden = name !== "play";
  $("tab-play").classList.toggle("active", name === "play");
  $("tab-watch").classList.toggle("active", name === "watch");
}

function wire() {
  for (const button of document.querySelectorAll("[data-icon]")) button.append(icon(button.dataset.icon));
  $("tab-play").addEventListener("click", () => showTab("play"));
  $("tab-watch").addEventListener("click", () => showTab("watch"));
  $("new-game").addEventListener("click", openOptions);
  $("save-game").addEventListener("click", saveGame);
  $("load-game").addEventListener("click", openLoad);
  $("show-help").addEventListener("click", () => $("help-dialog").showModal());
  $("opt-players").addEventListener("change", fillOptionForm);
  $("opt-cancel").addEventListener("click", () => $("options-dialog").close());
  $("options-form").addEventListener("submit", (event) => {
    event.preventDefault();
    lastOptions = readOptions();
    $("options-dialog").close();
    showTab("play");
    play.start(lastOptions);
  });
  $("load-file").addEventListener("change", async (event) => {
    const file = event.target.files[0];
    if (file) resume({ text: await file.text(), filename: file.name });
    event.target.value = "";
  });
  $("watch-file").addEventListener("change", (event) => { if (event.target.files[0]) watch.open(event.target.files[0]); });
  $("watch-game").addEventListener("change", (event) => watch.pick(event.target.value));
  $("watch-seat").addEventListener("change", () => watch.go(watch.view ? watch.view.move : 0));
  $("watch-move").addEventListener("input", (event) => watch.go(Number(event.target.value)));
  $("watch-first").addEventListener("click", () => watch.go(0));
  $("watch-prev").addEventListener("click", () => watch.step(-1));
  $("watch-next").addEventListener("click", () => watch.step(1));
  $("watch-last").addEventListener("click", () => watch.view && watch.go(watch.view.moves));
}

wire();
loadOptions();
if (params.get("tab") === "watch") showTab("watch");
// the page's address names its game; without one, opening the page starts a game at once against the shipped agent
if (params.get("game")) play.open(params.get("game"));
else play.start(lastOptions);
