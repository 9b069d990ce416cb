#!/usr/bin/env node
// Old Maid ring peer -- inf-3701 exercise one.
// Usage: node oldmaid_peer.js --nick NAME --table HOST:PORT
//
// Written from docs/protocols/oldmaid.md (sections 1-13). No verification
// (section 14): this is an "older client" that never sends "verify".
'use strict';

const net = require('net');

// ---------------------------------------------------------------- arguments

function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      if (eq > 0) out[a.slice(2, eq)] = a.slice(eq + 1);
      else out[a.slice(2)] = argv[++i];
    }
  }
  return out;
}

const ARGS = parseArgs(process.argv.slice(2));
const NICK = ARGS.nick || ARGS.name || process.env.CARDRING_NICK || 'nodepeer';
const TABLE = ARGS.table || ARGS.server || process.env.CARDRING_TABLE || '127.0.0.1:9898';

const PEER_TIMEOUT = 10000;   // longest wait for a single reply / pick / dial (section 8)
const GRACE = 200;            // ask the table about a silent seat after this (7.7 step 6)
const IDLE_TIMEOUT = 120000;  // give up after this long without hearing anyone
const PICK_PAUSE = 50;        // pause between ok and pick for non-stream offerers (13.2)
const LINGER = 200;           // keep answering after the end (7.8)
const MAX_LINE = 65536;

const VALUES = ['A', '2', '3', '4', '5', '6', '7', '8', '9', '10', 'J', 'Q', 'K'];
const SUITS = ['spades', 'clubs', 'diamonds', 'hearts'];

function log(...a) {
  console.log(`[${NICK} ${new Date().toISOString().slice(11, 23)}]`, ...a);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const randInt = (n) => Math.floor(Math.random() * n);

// ---------------------------------------------------------------- cards

function canonCard(c) {
  if (!Array.isArray(c) || c.length !== 2) return null;
  if (typeof c[0] !== 'string' || typeof c[1] !== 'string') return null;
  const v = c[0].toUpperCase();
  const s = c[1].toLowerCase();
  if (v === 'JOKER' && s === 'maid') return ['joker', 'maid'];
  if (!VALUES.includes(v) || !SUITS.includes(s)) return null;
  return [v, s];
}

function colour(suit) {
  return suit === 'spades' || suit === 'clubs' ? 'black' : 'red';
}

function isPair(a, b) {
  if (a[0] === 'joker' || b[0] === 'joker') return false;
  return a[0] === b[0] && a[1] !== b[1] && colour(a[1]) === colour(b[1]);
}

const cardStr = (c) => `${c[0]}${c[1][0]}`;
const handStr = () => '[' + S.hand.map(cardStr).join(' ') + ']';

// ---------------------------------------------------------------- state

const S = {
  hand: [],
  phase: 'draw',        // 'draw' | 'offer'
  out: false,           // the table acknowledged that we are out
  outPromise: null,     // pending out_of_cards / last discard
  players: null,        // [{host, port, nick}]
  seat: -1,
  n: 0,
  hosts: new Set(),
  hostsAreIPs: true,
  knownOut: new Set(),  // seats known to be out
  conns: new Map(),     // seat -> Promise<Conn|null> (connections we dialled)
  over: false,
  lost: false,
  joined: false,
  lastHeard: Date.now(),
  allSockets: new Set(),
};

let table = null;       // Conn to the table
let server = null;      // our listener
let joinedResolve;
const joinedP = new Promise((r) => { joinedResolve = r; });
let exiting = false;

// ---------------------------------------------------------------- exit paths

function closeAll() {
  try { if (server) server.close(); } catch (e) { /* ignore */ }
  for (const s of S.allSockets) {
    try { s.destroy(); } catch (e) { /* ignore */ }
  }
}

function fail(msg) {
  if (exiting) return new Promise(() => {});
  exiting = true;
  process.stderr.write(`${NICK}: ${msg}\n`);
  log('FATAL:', msg);
  closeAll();
  process.exit(1);
}

// Tell the table why we leave (5.8), then fail.
async function giveUp(blameSeat, reason) {
  if (S.over || exiting) return new Promise(() => {});
  const blame = blameSeat != null && S.players ? S.players[blameSeat].nick : null;
  const req = { cmd: 'give_up', reason };
  if (blame) req.nick = blame;
  log('giving up:', blame || '-', reason);
  try {
    await withTimeout(tableReq(req), 2000);
  } catch (e) { /* ignore */ }
  return fail(blame ? `${blame} ${reason}` : reason);
}

function withTimeout(p, ms) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => { const e = new Error('timeout'); e.code = 'TIMEOUT'; reject(e); }, ms);
    p.then((v) => { clearTimeout(t); resolve(v); }, (e) => { clearTimeout(t); reject(e); });
  });
}

// ---------------------------------------------------------------- connections

class Conn {
  constructor(sock, kind, label) {
    this.sock = sock;
    this.kind = kind;       // 'table' | 'out' (we dialled) | 'in' (accepted)
    this.label = label;
    this.seat = null;       // for 'out' connections: the seat we dialled
    this.buf = '';
    this.pending = null;    // {resolve, reject, sync, cmd}
    this.closed = false;
    this.gotReply = false;
    this.offer = null;      // accepted offer awaiting a pick: {num, resolve, bad}
    S.allSockets.add(sock);
    sock.setNoDelay(true);
    sock.setEncoding('utf8');
    sock.on('data', (d) => this.onData(d));
    sock.on('error', (e) => { this.error = e; });
    sock.on('close', () => this.onClose());
  }

  send(obj) {
    if (this.closed) return;
    // one message, one write
    this.sock.write(JSON.stringify(obj) + '\n');
  }

  request(obj, sync) {
    if (this.closed) {
      const e = new Error('closed'); e.code = 'CLOSED';
      return Promise.reject(e);
    }
    if (this.pending) {
      return Promise.reject(new Error(`bug: second request on ${this.label}`));
    }
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject, sync, cmd: obj.cmd };
      this.send(obj);
    });
  }

  close() {
    if (!this.closed) this.sock.destroy();
  }

  onData(d) {
    this.buf += d;
    let i;
    while ((i = this.buf.indexOf('\n')) >= 0) {
      const line = this.buf.slice(0, i);
      this.buf = this.buf.slice(i + 1);
      this.onLine(line);
      if (this.closed) return;
    }
    if (this.buf.length > MAX_LINE) {
      this.send({ result: 'error', message: `message exceeds the ${MAX_LINE}-byte limit; closing the connection` });
      this.sock.end();
      this.sock.destroy();
    }
  }

  onLine(raw) {
    const line = raw.trim();
    if (!line) return;
    if (line.length > MAX_LINE) {
      this.send({ result: 'error', message: `message exceeds the ${MAX_LINE}-byte limit; closing the connection` });
      this.sock.destroy();
      return;
    }
    let msg = null;
    let bad = null;
    if (line[0] !== '{') bad = 'not a JSON object';
    else {
      try { msg = JSON.parse(line); } catch (e) { bad = 'invalid JSON: ' + e.message; }
      if (!bad && (msg === null || typeof msg !== 'object' || Array.isArray(msg))) bad = 'not a JSON object';
    }
    if (bad) {
      if (this.pending) {
        // garbage where a reply is expected: never answer it (section 3)
        log(`garbage from ${this.label} while waiting for a reply: ${line.slice(0, 80)}`);
        this.failPending('garbage instead of a reply');
        this.sock.destroy();
      } else {
        this.send({ result: 'error', message: bad });
      }
      return;
    }
    if (this.kind !== 'table') S.lastHeard = Date.now();
    if (typeof msg.cmd === 'string' || 'cmd' in msg) {
      handleRequest(this, msg);
    } else if ('result' in msg) {
      this.onReply(msg);
    } else {
      this.send({ result: 'error', message: 'a message needs "cmd" (a request) or "result" (a reply)' });
    }
  }

  onReply(msg) {
    const p = this.pending;
    if (!p) {
      log(`unexpected reply on ${this.label}: ${JSON.stringify(msg)}; closing it`);
      if (this.kind === 'table') {
        fail(`the table sent a reply to no request: ${JSON.stringify(msg)}`);
      }
      this.sock.destroy();
      return;
    }
    this.pending = null;
    this.gotReply = true;
    if (p.sync) {
      try { p.sync(msg); } catch (e) { log('sync hook error', e.message); }
    }
    p.resolve(msg);
  }

  failPending(why) {
    const p = this.pending;
    if (!p) return;
    this.pending = null;
    const e = new Error(why); e.code = 'CLOSED';
    p.reject(e);
  }

  onClose() {
    if (this.closed) return;
    this.closed = true;
    S.allSockets.delete(this.sock);
    this.failPending('connection closed');
    if (this.offer) {
      const o = this.offer;
      this.offer = null;
      const e = new Error('connection closed'); e.code = 'CLOSED';
      o.reject(e);
    }
    if (this.kind === 'table') {
      if (!S.over && !exiting) fail('the table closed the connection');
    } else {
      log(`connection ${this.label} closed`);
    }
  }
}

function dialOnce(host, port, timeoutMs) {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host, port });
    let settled = false;
    const t = setTimeout(() => {
      if (settled) return;
      settled = true;
      sock.destroy();
      const e = new Error('connect timeout'); e.code = 'ETIMEDOUT';
      reject(e);
    }, timeoutMs);
    sock.once('connect', () => {
      if (settled) return;
      settled = true;
      clearTimeout(t);
      resolve(sock);
    });
    sock.once('error', (e) => {
      if (settled) return;
      settled = true;
      clearTimeout(t);
      sock.destroy();
      reject(e);
    });
  });
}

// ---------------------------------------------------------------- the table

let tableChain = Promise.resolve();

// One request at a time on the table connection (section 3): queue them.
function tableReq(obj) {
  const p = tableChain.then(() => {
    if (exiting) return new Promise(() => {});
    return table.request(obj);
  });
  tableChain = p.catch(() => {});
  return p;
}

function seatOfNick(nick) {
  if (!S.players) return -1;
  return S.players.findIndex((p) => p.nick === nick);
}

// Ask the table for status; note who is out; notice the end.
async function refreshStatus() {
  let r;
  try {
    r = await withTimeout(tableReq({ cmd: 'status' }), PEER_TIMEOUT);
  } catch (e) {
    return null;
  }
  if (r && r.result === 'ok') {
    if (Array.isArray(r.out)) {
      for (const nick of r.out) {
        const s = seatOfNick(nick);
        if (s >= 0 && s !== S.seat) S.knownOut.add(s);
      }
    }
    if (r.state === 'over' || r.game_over) {
      onEnd({ loser: r.loser, out: r.out, undiscarded: r.undiscarded });
    } else if (r.state === 'aborted' || r.aborted) {
      onEnd({ aborted: true, reason: r.reason });
    }
  }
  return r;
}

function handleTableNotice(msg) {
  if (msg.cmd === 'game_over') {
    log('game_over notice:', JSON.stringify(msg));
    onEnd(msg);
  } else {
    // witnessed / draw_turn notices belong to section 14; we never verify
    log('ignoring table notice', JSON.stringify(msg));
  }
}

function onEnd(info) {
  if (S.over) return;
  S.over = true;
  if (info.aborted) {
    fail(`game aborted: ${info.reason}`);
    return;
  }
  let line;
  if (info.loser === NICK) {
    line = 'lost: holds the Old Maid';
  } else {
    const out = Array.isArray(info.out) ? info.out : [];
    const place = out.indexOf(NICK) + 1;
    const ord = (k) => k + (k % 100 >= 11 && k % 100 <= 13 ? 'th' : ['th', 'st', 'nd', 'rd'][k % 10] || 'th');
    line = place > 0 ? `out ${ord(place)} of ${S.n}` : `game over: loser ${info.loser}`;
  }
  log('GAME OVER. loser:', info.loser, 'out:', JSON.stringify(info.out), 'my hand:', handStr());
  console.log(line);
  // keep answering "out" a moment longer, then leave (7.8, 7.9)
  setTimeout(() => {
    exiting = true;
    closeAll();
    process.exit(0);
  }, LINGER);
}

// ---------------------------------------------------------------- peers

function normAddr(a) {
  if (typeof a !== 'string') return a;
  return a.startsWith('::ffff:') ? a.slice(7) : a;
}

// A connection to seat, dialled once and reused (7.7 step 2).
async function getConn(seat) {
  const have = S.conns.get(seat);
  if (have) {
    const c = await have;
    if (c && !c.closed) return c;
  }
  const p = dialSeat(seat, true);
  S.conns.set(seat, p);
  return p;
}

// Dial with retries (7.2, 7.7 step 5, 13.1). Returns null if the seat is out.
async function dialSeat(seat, askTable) {
  const pl = S.players[seat];
  const start = Date.now();
  let delay = 10;
  let attempts = 0;
  let lastAsk = 0;
  for (;;) {
    attempts++;
    try {
      const sock = await dialOnce(pl.host, pl.port, 2000);
      const c = new Conn(sock, 'out', `me>${pl.nick}`);
      c.seat = seat;
      log(`dialled ${pl.nick} (seat ${seat + 1}) at ${pl.host}:${pl.port}`);
      return c;
    } catch (e) {
      if (S.over || exiting) return new Promise(() => {});
      if (askTable && (lastAsk === 0 || Date.now() - lastAsk > 1000)) {
        lastAsk = Date.now();
        await refreshStatus();
        if (S.knownOut.has(seat)) {
          log(`${pl.nick} cannot be dialled (${e.code || e.message}) and the table lists it out: skipping`);
          return null;
        }
      }
      if (Date.now() - start > PEER_TIMEOUT) {
        if (!askTable) return null;
        await giveUp(seat, `cannot be reached at ${pl.host}:${pl.port} within 10 s (${attempts} attempts): ${e.code || e.message}`);
      }
      await sleep(delay);
      delay = Math.min(delay * 2, 200);
    }
  }
}

// Wait for a reply; after GRACE ask the table every GRACE whether the seat is out (7.7 step 6).
async function waitWithGrace(p, seat, what) {
  const start = Date.now();
  const wrapped = p.then((v) => ({ v }), (e) => ({ e }));
  for (;;) {
    const r = await Promise.race([wrapped, sleep(GRACE).then(() => null)]);
    if (r) {
      if (r.e) throw r.e;
      return r.v;
    }
    if (S.over) return new Promise(() => {});
    if (Date.now() - start >= PEER_TIMEOUT) {
      const e = new Error(`did not answer ${what} within 10 s`); e.code = 'TIMEOUT';
      throw e;
    }
    await refreshStatus();
    if (S.knownOut.has(seat)) {
      const e = new Error('silent and listed out'); e.code = 'GONE';
      throw e;
    }
  }
}

// A seat whose connection closed mid-exchange and is not out: probably dead.
// Ask status and wait half a second for the table's notice (7.10).
async function seatDied(seat, what) {
  await refreshStatus();
  if (S.knownOut.has(seat)) return 'gone';
  await sleep(500);
  await refreshStatus();
  if (S.knownOut.has(seat)) return 'gone';
  if (S.over || exiting) return new Promise(() => {});
  return giveUp(seat, what);
}

// Send a turn request to seat. Returns {kind:'ok', conn} | {kind:'out'} | {kind:'gone'}.
async function askSeat(seat, makeMsg, syncOk) {
  let resent = false;
  for (;;) {
    const conn = await getConn(seat);
    if (!conn) return { kind: 'gone' };
    const fresh = !conn.gotReply;
    const msg = makeMsg();
    log(`-> ${S.players[seat].nick}: ${JSON.stringify(msg)}`);
    const p = conn.request(msg, (r) => { if (r.result === 'ok' && syncOk) syncOk(conn, r); });
    let r;
    try {
      r = await waitWithGrace(p, seat, msg.cmd);
    } catch (e) {
      if (e.code === 'GONE') {
        log(`${S.players[seat].nick} is silent and the table lists it out: skipping`);
        return { kind: 'gone' };
      }
      if (e.code === 'CLOSED') {
        await refreshStatus();
        if (S.knownOut.has(seat)) return { kind: 'gone' };
        if (fresh && !resent) {
          // a connection we never used may have been evicted: dial again, once (section 8)
          resent = true;
          S.conns.delete(seat);
          log(`connection to ${S.players[seat].nick} closed before its first reply: dialling again`);
          continue;
        }
        const st = await seatDied(seat, `closed its connection instead of answering ${msg.cmd}`);
        if (st === 'gone') return { kind: 'gone' };
      }
      if (e.code === 'TIMEOUT') {
        await giveUp(seat, `did not answer ${msg.cmd} within 10 s`);
      }
      return fail(`error talking to ${S.players[seat].nick}: ${e.message}`);
    }
    log(`<- ${S.players[seat].nick}: ${JSON.stringify(r)}`);
    if (r.result === 'ok') return { kind: 'ok', conn };
    if (r.result === 'out') return { kind: 'out' };
    return giveUp(seat, `answered ${msg.cmd} with ${JSON.stringify(r).slice(0, 300)}`);
  }
}

// 7.7: ask seat by seat, going left, until one answers ok.
async function findNextIn(makeMsg, syncOk) {
  for (let step = 1; step < S.n; step++) {
    if (S.over) return new Promise(() => {});
    const seat = (S.seat + step) % S.n;
    if (S.knownOut.has(seat)) {
      log(`skip ${S.players[seat].nick} (known out)`);
      continue;
    }
    const res = await askSeat(seat, makeMsg, syncOk);
    if (res.kind === 'ok') return { seat, conn: res.conn };
    S.knownOut.add(seat);
    if (res.kind === 'out') await refreshStatus();
  }
  return null;
}

// ---------------------------------------------------------------- game logic

function addCard(card) {
  S.hand.splice(randInt(S.hand.length + 1), 0, card);
}

// Discard every pair we hold (4, 5.3). One request at a time.
async function discardPairs() {
  for (;;) {
    let found = null;
    for (let i = 0; i < S.hand.length && !found; i++) {
      for (let j = i + 1; j < S.hand.length; j++) {
        if (isPair(S.hand[i], S.hand[j])) { found = [i, j]; break; }
      }
    }
    if (!found) return;
    const [i, j] = found;
    const a = S.hand[i];
    const b = S.hand[j];
    S.hand.splice(j, 1);
    S.hand.splice(i, 1);
    const last = S.hand.length === 0 && S.phase === 'offer';
    log(`discard ${cardStr(a)} ${cardStr(b)} last=${last} hand now ${handStr()}`);
    const p = tableReq({ cmd: 'discard', cards: [a, b], last_cards: last ? 'true' : 'false' });
    if (last) {
      S.outPromise = p.then((r) => { if (r.result === 'ok') { S.out = true; log('I am OUT (last pair)'); } return r; });
    }
    const r = await p;
    if (r.result !== 'ok') {
      log('discard refused:', JSON.stringify(r));
      // the table aborts a game on a refused discard it can prove false; wait for its word
      await refreshStatus();
    }
  }
}

// Tell the table our hand is empty (5.4, 7.8). Resolves once the table said ok.
function goOut() {
  if (S.out) return Promise.resolve();
  if (!S.outPromise) {
    log('sending out_of_cards');
    S.outPromise = tableReq({ cmd: 'out_of_cards' }).then((r) => {
      if (r.result === 'ok') { S.out = true; log('I am OUT'); }
      else log('out_of_cards refused:', JSON.stringify(r));
      return r;
    });
  }
  return S.outPromise;
}

function enterOfferPhase(why) {
  if (S.phase !== 'offer') log('offer phase begins:', why);
  S.phase = 'offer';
}

// Our draw turn (7.3).
async function drawTurn() {
  if (S.over) return;
  const r = await tableReq({ cmd: 'draw' });
  if (r.result === 'ok' || r.result === 'last_card') {
    const card = canonCard(r.card);
    if (!card) return fail(`the table sent a draw reply without a card: ${JSON.stringify(r)}`);
    addCard(card);
    log(`drew ${cardStr(card)}${r.result === 'last_card' ? ' (LAST CARD)' : ''} hand ${handStr()}`);
    if (r.result === 'last_card') {
      enterOfferPhase('I drew the last card');
      await discardPairs();
      return holdTurn();
    }
    await discardPairs();
    const next = await findNextIn(() => ({ cmd: 'your_turn', from: NICK }));
    if (!next) log('no one else took the draw turn?');
    return;
  }
  const m = String(r.message || '');
  log('draw refused:', m);
  if (m.startsWith('the deck is empty')) {
    // 7.4: not our turn; switch to the offer phase and wait
    enterOfferPhase('draw refused, deck empty');
    if (S.hand.length === 0) await goOut();
  }
}

// We hold the turn in the offer phase (7.5).
async function holdTurn() {
  if (S.over) return;
  await discardPairs();
  if (S.over) return;
  if (S.hand.length === 0) {
    if (!S.out) await goOut();
    // pass the turn with an empty offer (7.5 step 3)
    const next = await findNextIn(() => ({ cmd: 'offer', num_cards: 0, stream: true, from: NICK }));
    if (next) log(`passed the turn to ${S.players[next.seat].nick} (empty offer)`);
    else log('nobody else in, and my hand is empty; waiting for the end');
    return;
  }
  const num = S.hand.length;
  let pickP = null;
  const next = await findNextIn(
    () => ({ cmd: 'offer', num_cards: S.hand.length, stream: true, from: NICK }),
    (conn, r) => {
      // set up synchronously: the pick may be in the same read as the ok
      pickP = new Promise((resolve, reject) => {
        conn.offer = { num: S.hand.length, resolve, reject, bad: 0 };
      });
    });
  if (!next) {
    S.lost = true;
    log(`nobody else is in: I hold the Old Maid ${handStr()}; waiting for the table`);
    waitForEnd();
    return;
  }
  let card;
  try {
    card = await withTimeout(pickP, PEER_TIMEOUT);
  } catch (e) {
    if (S.over) return;
    if (e.code === 'TIMEOUT') return giveUp(next.seat, `did not pick from my offer of ${num} within 10 s`);
    const st = await seatDied(next.seat, 'closed its connection before picking from my offer');
    return st;
  }
  log(`${S.players[next.seat].nick} took ${cardStr(card)}; hand ${handStr()}`);
  if (S.hand.length === 0) await goOut();
}

// After we find nobody else in: the table has decided; wait for its notice, poll too.
async function waitForEnd() {
  const start = Date.now();
  while (!S.over && Date.now() - start < PEER_TIMEOUT) {
    await sleep(300);
    if (!S.over) await refreshStatus();
  }
  if (!S.over) fail('no game_over from the table within 10 s of finding no one else in');
}

function nickFromMsg(conn, msg) {
  if (typeof msg.from === 'string') return msg.from;
  return conn.label;
}

function checkAddress(conn) {
  if (!S.hostsAreIPs) return true;
  const addr = normAddr(conn.sock.remoteAddress);
  if (S.hosts.has(addr)) return true;
  conn.send({ result: 'error', message: `${addr} is not the address of any player of this game; closing the connection` });
  conn.sock.end();
  return false;
}

async function onYourTurn(conn, msg) {
  await joinedP;
  if (!checkAddress(conn)) return;
  if (S.out) { conn.send({ result: 'out' }); return; }
  if (S.outPromise) {
    await S.outPromise;
    if (S.out) { conn.send({ result: 'out' }); return; }
  }
  if (S.over) { conn.send({ result: 'error', message: 'the game is over' }); return; }
  log(`<- your_turn from ${nickFromMsg(conn, msg)}`);
  conn.send({ result: 'ok' });
  await drawTurn();
}

async function onOffer(conn, msg) {
  await joinedP;
  if (!checkAddress(conn)) return;
  const num = msg.num_cards;
  if (!Number.isInteger(num)) {
    conn.send({ result: 'error', message: `Expected \`int\`, got \`${typeof num}\` - at \`$.num_cards\`` });
    return;
  }
  if (num < 0 || num > 53) {
    conn.send({ result: 'error', message: `num_cards ${num} is not between 0 and 53 - at \`$.num_cards\`` });
    return;
  }
  if (S.out) { conn.send({ result: 'out' }); return; }
  enterOfferPhase(`offer from ${nickFromMsg(conn, msg)}`);
  if (S.hand.length === 0) {
    // 7.4 / 7.6: out, but tell the table first and wait for its ok
    await goOut();
    if (S.out) conn.send({ result: 'out' });
    else conn.send({ result: 'error', message: 'the table refused my out_of_cards' });
    return;
  }
  if (S.outPromise && !S.out) {
    await S.outPromise;
    if (S.out) { conn.send({ result: 'out' }); return; }
  }
  if (S.over) { conn.send({ result: 'error', message: 'the game is over' }); return; }
  log(`<- offer of ${num} from ${nickFromMsg(conn, msg)}; my hand ${handStr()}`);
  conn.send({ result: 'ok' });
  if (num === 0) {
    return holdTurn();
  }
  if (msg.stream !== true) await sleep(PICK_PAUSE);
  let tries = 0;
  for (;;) {
    const k = randInt(num);
    let r;
    try {
      r = await withTimeout(conn.request({ cmd: 'pick', card_num: k }), PEER_TIMEOUT);
    } catch (e) {
      if (S.over) return;
      const who = seatOfNick(msg.from);
      const blame = who >= 0 ? who : prevInSeat();
      if (e.code === 'TIMEOUT') return giveUp(blame, 'did not answer pick within 10 s');
      return seatDied(blame, 'closed its connection instead of answering pick');
    }
    const card = r.result === 'ok' ? canonCard(r.card) : null;
    if (card) {
      addCard(card);
      log(`picked #${k}: ${cardStr(card)} hand ${handStr()}`);
      break;
    }
    tries++;
    log(`pick #${k} answered ${JSON.stringify(r)}`);
    if (tries >= 8) {
      const who = seatOfNick(msg.from);
      return giveUp(who >= 0 ? who : prevInSeat(), `answered 8 picks in a row without a card (last: ${JSON.stringify(r).slice(0, 200)})`);
    }
  }
  await discardPairs();
  return holdTurn();
}

// The nearest seat to our right not known out (who should be offering to us).
function prevInSeat() {
  for (let step = 1; step < S.n; step++) {
    const s = (S.seat - step + S.n) % S.n;
    if (!S.knownOut.has(s)) return s;
  }
  return null;
}

function onPick(conn, msg) {
  const o = conn.offer;
  if (!o) {
    conn.send({ result: 'error', message: 'pick without an accepted offer' });
    return;
  }
  let k = msg.card_num;
  if (!Number.isInteger(k)) {
    o.bad++;
    conn.send({ result: 'error', message: `Expected \`int\` - at \`$.card_num\`` });
  } else {
    if (k === o.num) k = o.num - 1; // 13.3: older clients count to num_cards
    if (k < 0 || k >= o.num) {
      o.bad++;
      conn.send({ result: 'error', message: `card_num ${k} is not between 0 and ${o.num - 1}` });
    } else {
      const card = S.hand.splice(k, 1)[0];
      conn.offer = null;
      log(`gave card #${k} (${cardStr(card)})`);
      conn.send({ result: 'ok', card });
      o.resolve(card);
      return;
    }
  }
  if (o.bad >= 8) {
    conn.offer = null;
    giveUp(conn.seat, `made 8 bad picks in a row from my offer of ${o.num}`);
  }
}

function handleRequest(conn, msg) {
  if (conn.kind === 'table') {
    handleTableNotice(msg);
    return;
  }
  const cmd = msg.cmd;
  const run = (p) => p.catch((e) => fail(`internal error: ${e && e.stack ? e.stack.split('\n')[0] : e}`));
  switch (cmd) {
    case 'your_turn': run(onYourTurn(conn, msg)); break;
    case 'offer': run(onOffer(conn, msg)); break;
    case 'pick': onPick(conn, msg); break;
    case 'join': case 'draw': case 'discard': case 'out_of_cards': case 'status':
    case 'give_up': case 'accuse': case 'left_with_turn':
      conn.send({ result: 'error', message: `${cmd} is not a request a peer takes` });
      break;
    default:
      conn.send({ result: 'error', message: typeof cmd === 'string' ? `unknown cmd '${cmd}'` : 'Expected `str` - at `$.cmd`' });
  }
}

// ---------------------------------------------------------------- main

function splitHostPort(s) {
  const i = s.lastIndexOf(':');
  if (i < 0) return [s, 9898];
  let h = s.slice(0, i);
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  return [h, parseInt(s.slice(i + 1), 10)];
}

async function main() {
  const [th, tp] = splitHostPort(TABLE);
  log(`connecting to table ${th}:${tp}`);
  let sock;
  try {
    sock = await dialOnce(th, tp, 10000);
  } catch (e) {
    return fail(`cannot connect to the table at ${th}:${tp}: ${e.code || e.message}`);
  }
  table = new Conn(sock, 'table', 'table');

  // listen on the interface facing the table, before the join (7.1)
  let myHost = normAddr(sock.localAddress);
  if (!net.isIPv4(myHost)) myHost = '127.0.0.1';
  server = net.createServer((s) => {
    const c = new Conn(s, 'in', `${normAddr(s.remoteAddress)}:${s.remotePort}>me`);
    log(`accepted connection ${c.label}`);
  });
  server.on('error', (e) => fail(`listener error: ${e.message}`));
  await new Promise((resolve) => server.listen(0, myHost, resolve));
  const myPort = server.address().port;
  log(`listening on ${myHost}:${myPort}; joining as ${NICK}`);

  const r = await tableReq({ cmd: 'join', nick: NICK, host: myHost, port: myPort, watch: true, stream: true });
  if (r.result !== 'ok' || !Array.isArray(r.players)) {
    return fail(`the table refused the join: ${r.message || JSON.stringify(r)}`);
  }
  S.players = r.players.map((p) => ({ host: normAddr(p[0][0]), port: p[0][1], nick: p[1] }));
  S.n = S.players.length;
  S.seat = seatOfNick(NICK);
  if (S.seat < 0) return fail('my nick is not in the join reply');
  for (const p of S.players) {
    S.hosts.add(p.host);
    if (!net.isIP(p.host)) S.hostsAreIPs = false;
  }
  S.joined = true;
  S.lastHeard = Date.now();
  log(`game starts: ${S.players.map((p, i) => `${i + 1}:${p.nick}`).join(' ')}; I am player${S.seat + 1}`);

  // dial the left neighbour at once and keep the connection (7.2)
  const left = (S.seat + 1) % S.n;
  S.conns.set(left, dialSeat(left, false));
  joinedResolve();

  setInterval(() => {
    if (!S.over && !exiting && Date.now() - S.lastHeard > IDLE_TIMEOUT) {
      S.lastHeard = Date.now();
      giveUp(null, `heard nothing for ${IDLE_TIMEOUT / 1000} s`);
    }
  }, 1000);

  if (S.seat === 0) await drawTurn();
}

process.on('uncaughtException', (e) => fail(`internal error: ${e && e.message}`));
process.on('unhandledRejection', (e) => fail(`internal error: ${e && e.message}`));

main().catch((e) => fail(`internal error: ${e && e.message}`));
