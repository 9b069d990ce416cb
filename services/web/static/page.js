// The live page: the lobby over /ws/lobby, one game over /ws/games/<id>.
// Every name and reason from a game is shown as text (textContent), never as markup.
"use strict";

const games = new Map();
let socket = null;

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

function drawLobby() {
  const body = document.getElementById("games");
  body.replaceChildren();
  for (const game of [...games.values()].reverse()) {  // newest first
    const row = document.createElement("tr");
    row.className = "game";
    row.dataset.game = game.id;
    row.append(text("td", game.id), text("td", game.players.join(", ")),
               text("td", game.state, `state-${game.state}`), text("td", result(game)));
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
  document.getElementById("lobby").hidden = false;
  document.getElementById("game").hidden = true;
  listen("/ws/lobby", (message) => {
    if (message.type === "lobby") {  // newest first: kept oldest first
      games.clear();
      for (const game of message.games.reverse()) games.set(game.id, game);
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

function showGame(id) {
  document.getElementById("lobby").hidden = true;
  document.getElementById("game").hidden = false;
  document.getElementById("game-title").textContent = id;
  const list = document.getElementById("records");
  list.replaceChildren();
  listen(`/ws/games/${encodeURIComponent(id)}`, (message) => {
    if (message.type === "snapshot") {
      document.getElementById("game-summary").textContent =
        `${message.game.players.join(", ")}: ${message.game.state} ${result(message.game)}`;
      for (const record of message.records) list.append(text("li", line(record)));
    } else if (message.type === "record") {
      list.append(text("li", line(message.record)));
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
