// The live page: the lobby over /ws/lobby, one game over /ws/games/<id>.
// Every name and reason from a game is shown as text (textContent), never as markup.
"use strict";

const games = new Map();
let socket = null;
let ticker = null;  // a game view's clock, run between records
// When each live record arrived (its server time t, and the page's wall clock in ms):
// the browser tests measure how soon a record reaches the page. Kept bounded.
window.arrivals = [];

function text(tag, value, className) {
  const node = document.createElement(tag);
  node.textContent = value == null ? "" : String(value);
  if (className) node.className = className;
  return node;
}

function status(value) { document.getElementById("status").textContent = value; }

function result(game) {
  if (game.state !== "over") return "";
  if (game.winners.length) return `${game.winners.join(", ")} won (${game.reason})`;
  return game.reason || "";
}

function stateOf(game) {
  return game.state === "forming" && game.wanted ?
    `forming: ${game.players.length} of ${game.wanted}` : game.state;
}

function drawLobby() {
  const body = document.getElementById("games");
  body.replaceChildren();
  for (const game of [...games.values()].reverse()) {  // newest first
    const row = document.createElement("tr");
    row.className = "game";
    row.dataset.game = game.id;
    row.append(text("td", game.id), text("td", game.players.join(", ")),
               text("td", stateOf(game), `state-${game.state}`), text("td", result(game)));
    row.addEventListener("click", () => { location.hash = game.id; });
    body.append(row);
  }
}

function listen(path, onMessage) {
  if (socket) socket.close();
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  socket = new WebSocket(`${scheme}://${location.host}${path}`);
  socket.onopen = () => status("live");
  socket.onclose = () => status("disconnected");
  socket.onmessage = (event) => onMessage(JSON.parse(event.data));
}

function showLobby() {
  clearInterval(ticker);
  document.getElementById("lobby").hidden = false;
  document.getElementById("game").hidden = true;
  listen("/ws/lobby", (message) => {
    if (message.type === "lobby") {  // newest first: kept oldest first
      games.clear();
      for (const game of message.games.reverse()) games.set(game.id, game);
    } else if (message.type === "game" && message.game.state === "gone") {
      games.delete(message.game.id);  // a forming game that everyone left
    } else if (message.type === "game") {
      games.set(message.game.id, message.game);  // a new game goes last: drawn first
    }
    drawLobby();
  });
}

function line(record) {
  const copy = Object.assign({}, record);
  delete copy.t;
  return JSON.stringify(copy);
}

// -- drawn views: each turns the game's records, one by one, into what is shown ----------

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attributes) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes || {})) node.setAttribute(key, value);
  return node;
}

// The Old Maid ring: players round a circle, the cards each holds (where the exchanges
// are reported: a verified game), who is out and in which place, the turn, the loser.
class RingView {
  constructor(box) {
    this.box = box;
    this.players = [];
    this.cards = new Map();
    this.places = new Map();
    this.turn = null;
    this.turnMoves = 0;
    this.pairs = 0;
    this.loser = null;
    this.handoff = null;  // the last exchange: {from, to, fresh: not drawn yet}
    // "verified game" once every player verifies (protocol 14.6); "verified games only"
    // at a table run with --verified, before its game starts; "" otherwise.
    this.mode = "";
  }
  add(record) {
    const message = record.msg || {};
    if (record.event === "start") {
      this.players = record.players.map((p) => String(p.name));
      for (const name of this.players) this.cards.set(name, 0);
      if ((record.options || {}).verified) this.mode = "verified games only";
    } else if (record.event === "started") {
      const verified = record.verified || [];
      if (verified.length && verified.length === (record.players || []).length) {
        this.mode = "verified game";
      }
    } else if (record.event === "dealt") {
      this.cards.set(record.nick, (this.cards.get(record.nick) || 0) + 1);
    } else if (record.event === "discarded") {
      this.cards.set(record.nick, (this.cards.get(record.nick) || 0) - 2);
      this.pairs += 1;
    } else if (record.event === "out") {
      this.places.set(record.nick, record.place);
    } else if (record.event === "over" || record.event === "end") {
      this.loser = record.loser || (record.losers || [])[0] || this.loser;
    } else if (record.dir === "in" && message.cmd === "gave") {
      this.cards.set(record.nick, (this.cards.get(record.nick) || 0) - 1);
      this.cards.set(message.to, (this.cards.get(message.to) || 0) + 1);
      if (this.turn !== message.to) this.turnMoves += 1;
      this.turn = message.to;
      this.handoff = { from: String(record.nick), to: String(message.to), fresh: true };
    } else {
      return;
    }
    this.draw();
  }
  draw() {
    const size = 420, middle = size / 2, radius = 150;
    const picture = svg("svg", { viewBox: `0 0 ${size} ${size}`, class: "ring" });
    picture.dataset.turn = this.turn || "";
    picture.dataset.turnMoves = String(this.turnMoves);
    picture.dataset.loser = this.loser || "";
    picture.dataset.mode = this.mode;
    picture.append(svg("circle", { cx: middle, cy: middle, r: radius, class: "track" }));
    const where = new Map();
    this.players.forEach((name, seat) => {
      const angle = (2 * Math.PI * seat) / this.players.length - Math.PI / 2;
      const x = middle + radius * Math.cos(angle), y = middle + radius * Math.sin(angle);
      where.set(name, [x, y]);
      const place = this.places.get(name);
      let state = place ? "out" : "in";
      if (name === this.loser) state = "loser";
      const group = svg("g", { class: `player ${state}${name === this.turn ? " turn" : ""}` });
      group.dataset.nick = name;
      group.append(svg("circle", { cx: x, cy: y, r: 34 }));
      const label = svg("text", { x, y: y - 4, "text-anchor": "middle" });
      label.textContent = name;
      const detail = svg("text", { x, y: y + 14, "text-anchor": "middle", class: "detail" });
      detail.textContent = name === this.loser ? "Old Maid" :
        place ? `out #${place}` : `${this.cards.get(name) || 0} cards`;
      group.append(label, detail);
      picture.append(group);
    });
    const centre = svg("text", { x: middle, y: middle, "text-anchor": "middle", class: "detail" });
    centre.textContent = this.loser ? `${this.loser} holds the Old Maid` : `${this.pairs} pairs down`;
    picture.append(centre);
    if (this.mode) {
      const mode = svg("text", { x: middle, y: middle + 20, "text-anchor": "middle",
                                 class: "detail mode" });
      mode.textContent = this.mode;
      picture.append(mode);
    }
    this.drawHandoff(picture, where);
    this.box.replaceChildren(picture);
  }
  // The last exchange as an arrow from giver to taker, and the turn's token on the taker;
  // drawn the first time, the token slides along the arrow (a replay's step redraws it
  // where it ends).
  drawHandoff(picture, where) {
    const hand = this.handoff;
    if (!hand || !where.has(hand.from) || !where.has(hand.to)) return;
    const [x1, y1] = where.get(hand.from), [x2, y2] = where.get(hand.to);
    const length = Math.hypot(x2 - x1, y2 - y1) || 1;
    const ux = (x2 - x1) / length, uy = (y2 - y1) / length, gap = 38;
    const arrow = svg("line", { x1: x1 + ux * gap, y1: y1 + uy * gap, x2: x2 - ux * gap,
                                y2: y2 - uy * gap, class: "handoff", "marker-end": "url(#arrow)" });
    arrow.dataset.from = hand.from;
    arrow.dataset.to = hand.to;
    const head = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 8, refY: 5,
                                 markerWidth: 6, markerHeight: 6, orient: "auto" });
    head.append(svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }));
    const defs = svg("defs");
    defs.append(head);
    const token = svg("circle", { cx: 0, cy: 0, r: 9, class: "token",
                                  transform: `translate(${x2 - ux * gap} ${y2 - uy * gap})` });
    picture.append(defs, arrow, token);
    if (hand.fresh && token.animate) {
      const from = `translate(${x1 + ux * gap}px, ${y1 + uy * gap}px)`;
      const to = `translate(${x2 - ux * gap}px, ${y2 - uy * gap}px)`;
      token.animate([{ transform: from }, { transform: to }], { duration: 350, easing: "ease-out" });
    }
    hand.fresh = false;
  }
}

// Reversi: the board from the first board the server sent, then each move and its flips;
// the mover's time left. A turn's clock runs from the turn's first board (a board sent
// again after an illegal move does not restart it), in the server's record times.
class ReversiView {
  constructor(box) {
    this.box = box;
    this.board = null;  // 64 digits: 0 empty, 1 white, 2 black (the protocol's)
    this.last = null;
    this.toMove = "black";
    this.players = {};
    this.moveTime = 0;  // seconds a turn may take; 0: no limit
    this.turnStart = null;  // the record time of this turn's first board
    this.latest = null;  // the record time of the latest record shown
    this.took = null;  // seconds the last move took
    this.over = false;
  }
  add(record) {
    if (typeof record.t === "number") this.latest = record.t;
    const board = record.dir === "out" && /^B[012]{64}/.test(record.line || "");
    if (record.event === "start") {
      for (const p of record.players) this.players[p.colour] = String(p.name);
      this.moveTime = Number((record.options || {}).move_time) || 0;
    } else if (board && this.turnStart === null) {
      this.board = this.board || record.line.slice(1, 65).split("").map(Number);
      this.turnStart = record.t;
      this.toMove = record.colour || this.toMove;
    } else if (record.event === "move" && this.board) {
      this.play(record.x, record.y, record.colour === "black" ? 2 : 1);
      this.last = record.x * 8 + record.y;
      this.toMove = record.colour === "black" ? "white" : "black";
      if (this.turnStart !== null) this.took = record.t - this.turnStart;
      this.turnStart = null;
    } else if (record.event === "end") {
      this.over = true;
      this.turnStart = null;
    } else {
      this.tick(0);
      return;
    }
    this.draw();
  }
  // The clock line; `since` is how long ago (s) the latest record came, when following live.
  tick(since) {
    const clock = this.box.querySelector(".clock");
    if (!clock) return;
    let said = this.took === null ? "" : `last move took ${this.took.toFixed(2)} s`;
    clock.dataset.took = this.took === null ? "" : String(this.took);
    if (!this.over && this.turnStart !== null && this.latest !== null) {
      const used = this.latest - this.turnStart + since;
      const left = this.moveTime > 0 ? `${Math.max(0, this.moveTime - used).toFixed(1)} s left` :
        `${used.toFixed(1)} s (no limit)`;
      clock.dataset.left = this.moveTime > 0 ? Math.max(0, this.moveTime - used).toFixed(3) : "";
      said = `${this.toMove} to move: ${left}` + (said ? `; ${said}` : "");
    } else {
      clock.dataset.left = "";
    }
    clock.dataset.moveTime = String(this.moveTime);
    clock.textContent = said;
  }
  play(x, y, me) {
    const other = 3 - me;
    this.board[x * 8 + y] = me;
    for (let dx = -1; dx <= 1; dx++) for (let dy = -1; dy <= 1; dy++) {
      if (!dx && !dy) continue;
      const run = [];
      let i = x + dx, j = y + dy;
      while (i >= 0 && i < 8 && j >= 0 && j < 8 && this.board[i * 8 + j] === other) {
        run.push(i * 8 + j); i += dx; j += dy;
      }
      if (run.length && i >= 0 && i < 8 && j >= 0 && j < 8 && this.board[i * 8 + j] === me) {
        for (const square of run) this.board[square] = me;
      }
    }
  }
  draw() {
    if (!this.board) return;
    const table = document.createElement("table");
    table.className = "board";
    table.dataset.digits = this.board.join("");
    for (let x = 0; x < 8; x++) {
      const row = document.createElement("tr");
      for (let y = 0; y < 8; y++) {
        const cell = document.createElement("td");
        const digit = this.board[x * 8 + y];
        cell.className = digit === 2 ? "black" : digit === 1 ? "white" : "";
        if (x * 8 + y === this.last) cell.classList.add("last");
        row.append(cell);
      }
      table.append(row);
    }
    const count = (d) => this.board.filter((v) => v === d).length;
    const said = text("p", `${this.players.black || "black"} (black) ${count(2)} - ${count(1)} ` +
      `${this.players.white || "white"} (white)` + (this.over ? "" : `; ${this.toMove} to move`),
      "detail");
    this.box.replaceChildren(table, said, text("p", "", "detail clock"));
    this.tick(0);
  }
}

// No Tipping: the lever from -10 to 10 on its supports at -3 and -1, every block with its
// weight and owner, both torques (a side tips once its torque passes zero), weights left.
class LeverView {
  constructor(box) {
    this.box = box;
    this.weights = null;  // 21 positions, -10..10: the weight there, 0 for none
    this.owners = new Array(21).fill(null);
    this.left = [[], []];
    this.torques = null;
    this.players = ["player 0", "player 1"];
    this.tipped = false;
  }
  add(record) {
    const line = record.dir === "out" ? String(record.line || "") : "";
    if (record.event === "start") {
      for (const p of record.players) this.players[p.seat] = String(p.name);
    } else if (line.startsWith("ROUND:")) {
      // ROUND:<n>:ADD:<weights left, 0>:<weights left, 1>:<board>; or ROUND:<n>:REMOVE:<board>;
      const parts = line.replace(/;$/, "").split(":");
      const numbers = (w) => (w.trim() ? w.trim().split(/\s+/).map(Number) : []);
      if (parts[2] === "ADD") {
        this.left = [numbers(parts[3]), numbers(parts[4])];
        this.weights = numbers(parts[5]);
      } else {
        this.left = [[], []];
        this.weights = numbers(parts[3]);
      }
    } else if (record.event === "move" && this.weights) {
      const i = record.position + 10;
      if (record.move === "ADD") {
        this.weights[i] = record.weight;
        this.owners[i] = record.player;
        this.left[record.player] = this.left[record.player].filter((w) => w !== record.weight);
      } else {
        this.weights[i] = 0;
        this.owners[i] = null;
      }
      this.torques = [record.left, record.right];
      this.tipped = Boolean(record.tipped);
    } else {
      return;
    }
    this.draw();
  }
  draw() {
    if (!this.weights) return;
    const unit = 24, width = 21 * unit + 40, beam = 150;
    const picture = svg("svg", { viewBox: `0 0 ${width} 230`, class: "lever" });
    picture.dataset.weights = this.weights.join(" ");
    picture.append(svg("rect", { x: 20, y: beam, width: 21 * unit, height: 8, class: "beam" }));
    for (const support of [-3, -1]) {
      const x = 20 + (support + 10.5) * unit;
      picture.append(svg("polygon", { points: `${x},${beam + 8} ${x - 10},${beam + 30} ${x + 10},${beam + 30}`, class: "support" }));
    }
    this.weights.forEach((weight, i) => {
      const x = 20 + i * unit;
      const mark = svg("text", { x: x + unit / 2, y: beam + 48, "text-anchor": "middle", class: "detail" });
      mark.textContent = String(i - 10);
      picture.append(mark);
      if (!weight) return;
      const owner = this.owners[i];
      const height = 10 + weight * 6;
      const block = svg("rect", { x: x + 2, y: beam - height, width: unit - 4, height,
                                  class: `block owner-${owner === null ? "none" : owner}` });
      block.dataset.position = String(i - 10);
      const label = svg("text", { x: x + unit / 2, y: beam - height - 4, "text-anchor": "middle" });
      label.textContent = String(weight);
      picture.append(block, label);
    });
    // Both torques from the blocks and the board's own 3 kg at 0; a move's record says
    // them too (and the two agree).
    const [left, right] = this.torques || this.weights.reduce(
      ([l, r], w, i) => [l + w * (i - 10 + 3), r + w * (i - 10 + 1)], [3 * 3, 3 * 1]);
    // The margin: how much more torque each support takes before the board tips over it.
    const margins = [left, -right];
    picture.dataset.torques = `${left} ${right}`;
    picture.dataset.margins = margins.join(" ");
    const support = (name, at, torque, margin, way) => text("li",
      `${name} support (${at}): torque ${torque}, ` +
      (margin >= 0 ? `margin ${margin} before it tips ${way}` : `tipped ${way}`),
      margin <= 0 ? "tight" : "");
    const torques = document.createElement("ul");
    torques.className = "detail torques";
    torques.append(support("left", -3, left, margins[0], "left"),
                   support("right", -1, right, margins[1], "right"));
    const legend = text("p",
      `${this.players[0]} holds ${this.left[0].join(" ") || "nothing"}; ` +
      `${this.players[1]} holds ${this.left[1].join(" ") || "nothing"}.` +
      (this.tipped ? " The board tipped." : ""), "detail");
    this.box.replaceChildren(picture, torques, legend);
  }
}

// FishNet: each player's hand size and books, its last request and the answer it got, the
// deck; at the end the books the server counted. All from what each player is told: every
// card it gets comes as "fish" (the deal too) or "oppgives" (taken from the other), and a
// book made is told to the other ("oppmakes": four cards leave the maker's hand).
const FISH_DECK = 52;

class FishView {
  constructor(box) {
    this.box = box;
    this.players = [];
    this.books = [0, 0];
    this.hands = [0, 0];
    this.fished = 0;
    this.asked = ["", ""];
    this.answer = ["", ""];
    this.final = null;
  }
  add(record) {
    const words = String(record.line || "").split(/\s+/);
    const seat = record.seat;
    if (record.event === "start") {
      this.players = record.players.map((p) => String(p.name));
    } else if (record.event === "end") {
      this.final = (record.details || {}).books || null;
    } else if (seat !== 0 && seat !== 1) {
      return;
    } else if (record.dir === "in" && words[0] === "request") {
      this.asked[seat] = `asked for ${words[1]}`;
      this.answer[seat] = "";
    } else if (record.dir === "in" && words[0] === "pass") {
      this.asked[seat] = "passed";
      this.answer[seat] = "";
    } else if (record.dir === "out" && words[0] === "oppmakes") {
      this.books[1 - seat] += 1;
      this.hands[1 - seat] -= 4;
    } else if (record.dir === "out" && words[0] === "oppgives") {
      const given = Number(words[1]) || 0;
      this.hands[seat] += given;
      this.hands[1 - seat] -= given;
      this.answer[seat] = `got ${words[1]} of ${words[2]}`;
    } else if (record.dir === "out" && words[0] === "fish") {
      this.hands[seat] += 1;
      this.fished += 1;
      if (this.asked[seat]) this.answer[seat] = "went fishing";
    } else {
      return;
    }
    this.draw();
  }
  draw() {
    const table = document.createElement("table");
    table.className = "fish";
    table.dataset.books = (this.final || this.books).join(" ");
    table.dataset.hands = this.hands.join(" ");
    table.dataset.deck = String(FISH_DECK - this.fished);
    this.players.forEach((name, seat) => {
      const row = document.createElement("tr");
      const books = this.final ? this.final[seat] : this.books[seat];
      row.append(text("td", name), text("td", `${this.hands[seat]} cards`),
                 text("td", `${books} books`), text("td", this.asked[seat]),
                 text("td", this.answer[seat]));
      table.append(row);
    });
    const deck = text("p", `${FISH_DECK - this.fished} cards in the deck`, "detail");
    this.box.replaceChildren(table, deck);
  }
}

const VIEWS = { oldmaid: RingView, reversi: ReversiView, notipping: LeverView, fishnet: FishView };

// One game: its records kept, the view drawn from the first `shown` of them. At the end
// the view follows the game live; moved back (the step control), it stays where it is.
function showGame(id) {
  document.getElementById("lobby").hidden = true;
  document.getElementById("game").hidden = false;
  document.getElementById("game-title").textContent = id;
  const list = document.getElementById("records");
  const step = document.getElementById("step");
  const where = document.getElementById("step-at");
  const records = [];
  let shown = 0;
  const View = VIEWS[id.split("-")[0]];
  const box = document.getElementById("view");
  let view = null;
  const redraw = (upTo) => {
    box.replaceChildren();
    list.replaceChildren();
    view = View ? new View(box) : null;
    for (const record of records.slice(0, upTo)) {
      list.append(text("li", line(record)));
      if (view) view.add(record);
    }
    shown = upTo;
    step.max = String(records.length);
    step.value = String(upTo);
    where.textContent = `${upTo} of ${records.length} records`;
  };
  const add = (record) => {
    const following = shown === records.length;
    records.push(record);
    if (!following) {
      step.max = String(records.length);
      where.textContent = `${shown} of ${records.length} records`;
      return;
    }
    list.append(text("li", line(record)));
    if (view) view.add(record);
    shown = records.length;
    step.max = String(records.length);
    step.value = String(shown);
    where.textContent = `${shown} of ${records.length} records`;
  };
  // A live game's clock runs between records: the server's clock, as of the latest
  // record or snapshot, plus the page's time since (only while following a game playing).
  let live = null;  // {server: seconds on the records' clock, page: Date.now() then}
  clearInterval(ticker);
  ticker = setInterval(() => {
    if (!view || !view.tick) return;
    const following = live && shown === records.length;
    const now = following ? live.server + (Date.now() - live.page) / 1000 : null;
    view.tick(following && view.latest !== null ? Math.max(0, now - view.latest) : 0);
  }, 100);
  step.oninput = () => redraw(Number(step.value));
  document.getElementById("step-back").onclick = () => redraw(Math.max(0, shown - 1));
  document.getElementById("step-on").onclick = () => redraw(Math.min(records.length, shown + 1));
  document.getElementById("step-live").onclick = () => redraw(records.length);
  redraw(0);
  listen(`/ws/games/${encodeURIComponent(id)}`, (message) => {
    if (message.type === "game") {  // it forms: who has joined so far
      document.getElementById("game-summary").textContent =
        `${message.game.players.join(", ")}: ${stateOf(message.game)}`;
    } else if (message.type === "snapshot") {
      document.getElementById("game-summary").textContent =
        `${message.game.players.join(", ")}: ${stateOf(message.game)} ${result(message.game)}`;
      live = message.game.state === "playing" ? { server: message.now, page: Date.now() } : null;
      message.records.forEach(add);
    } else if (message.type === "record") {
      if (window.arrivals.length < 10000) window.arrivals.push([message.record.t, Date.now()]);
      if (live) live = { server: message.record.t, page: Date.now() };
      add(message.record);
      if (message.record.event === "end") {
        live = null;
        document.getElementById("game-summary").textContent = `over: ${message.record.reason || ""}`;
      }
    }
  });
}

function route() {
  const id = decodeURIComponent(location.hash.slice(1));
  if (id) showGame(id); else showLobby();
}

document.getElementById("back").addEventListener("click", (event) => {
  event.preventDefault();
  location.hash = "";
});
window.addEventListener("hashchange", route);
route();
