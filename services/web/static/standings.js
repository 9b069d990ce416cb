// A ring tournament's standings, over /ws/standings: sent again whenever the runner
// rewrites them. Names are shown as text only.
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";

function cell(tag, value) {
  const node = document.createElement(tag);
  node.textContent = value == null ? "" : String(value);
  return node;
}

function row(tag, values) {
  const line = document.createElement("tr");
  for (const value of values) line.append(cell(tag, value));
  return line;
}

function svgNode(tag, attributes) {
  const node = document.createElementNS(SVGNS, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  return node;
}

// Each entrant's figure and its 95 % interval, one line each, on one scale.
function chart(entries) {
  const width = 560, line = 26, left = 120;
  const lows = entries.map((e) => e.low), highs = entries.map((e) => e.high);
  const min = Math.min(...lows), max = Math.max(...highs);
  const scale = (v) => left + ((v - min) / ((max - min) || 1)) * (width - left - 20);
  const picture = svgNode("svg", { viewBox: `0 0 ${width} ${entries.length * line + 10}`, class: "chart" });
  entries.forEach((e, i) => {
    const y = 18 + i * line;
    const name = svgNode("text", { x: 4, y: y + 4 });
    name.textContent = e.name;
    const interval = svgNode("line", { x1: scale(e.low), x2: scale(e.high), y1: y, y2: y, class: "interval" });
    const point = svgNode("circle", { cx: scale(e.value), cy: y, r: 4, class: "point" });
    picture.append(name, interval, point);
  });
  return picture;
}

function draw(table) {
  const head = document.getElementById("head");
  const body = document.getElementById("ranking");
  const rings = !table.crosstable;
  const done = rings ? table.rings : table.games;
  document.getElementById("title").textContent =
    `${table.game}: ${done} of ${table.scheduled} ${rings ? "rings" : "games"}`;
  body.replaceChildren();
  let entries;
  if (rings) {
    head.replaceChildren(row("th", ["#", "entrant", "rings", "lost", "loss rate", "95 %", "mean place"]));
    table.ranking.forEach((e, i) => body.append(row("td", [i + 1, e.name, e.rings, e.losses,
      `${Math.round(e.loss_rate * 100)} %`,
      `${Math.round(e.loss_low * 100)} .. ${Math.round(e.loss_high * 100)} %`, e.mean_place.toFixed(2)])));
    entries = table.ranking.map((e) => ({ name: e.name, value: -e.loss_rate, low: -e.loss_high, high: -e.loss_low }));
  } else {
    head.replaceChildren(row("th", ["#", "entrant", "Elo", "95 %", "games", "score", "W-D-L"]));
    table.ranking.forEach((e, i) => body.append(row("td", [i + 1, e.entrant, Math.round(e.elo),
      `${Math.round(e.interval[0])} .. ${Math.round(e.interval[1])}`, e.games, e.score,
      `${e.record.wins}-${e.record.draws}-${e.record.losses}`])));
    entries = table.ranking.map((e) => ({ name: e.entrant, value: e.elo, low: e.interval[0], high: e.interval[1] }));
    const names = table.ranking.map((e) => e.entrant);
    const cross = document.getElementById("cross");
    cross.replaceChildren(row("th", ["", ...names]));
    for (const a of names) {
      cross.append(row("td", [a, ...names.map((b) => {
        if (a === b) return "";
        const r = table.crosstable[a][b];
        const played = r.wins + r.draws + r.losses;
        return played ? `${r.wins + r.draws / 2}/${played}` : "-";
      })]));
    }
    document.getElementById("cross-title").hidden = false;
  }
  document.getElementById("chart").replaceChildren(chart(entries));
}

const scheme = location.protocol === "https:" ? "wss" : "ws";
const socket = new WebSocket(`${scheme}://${location.host}/ws/standings`);
socket.onopen = () => { document.getElementById("status").textContent = "live"; };
socket.onclose = () => { document.getElementById("status").textContent = "disconnected"; };
socket.onmessage = (event) => draw(JSON.parse(event.data));
