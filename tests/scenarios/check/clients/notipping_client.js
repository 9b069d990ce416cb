#!/usr/bin/env node
// No Tipping client, from the No Tipping protocol handout.
//
// Usage: node notipping_client.js HOST PORT NAME SEAT
//
// Messages look like COMMAND:ARG1:ARG2;  -- the ';' ends a message, and
// "spacing and line breaks are irrelevant", so we collect the data events
// in a buffer and cut it at every ';'. Fields are split at ':' and trimmed;
// the lists inside a field (weights, the 21 numbers of the state) are split
// on whitespace.
//
// The lever: positions -10..10, supports at -3 and -1, the board itself is
// 3 kg at 0, and the state already holds the initial 3 kg block at -4.
//   L = sum w*(x+3) must stay >= 0, R = sum w*(x+1) must stay <= 0.
// We only play moves that keep the board up, when there is one.

'use strict';

const net = require('net');

if (process.argv.length !== 6) {
  console.error('usage: node notipping_client.js HOST PORT NAME SEAT');
  process.exit(2);
}
const host = process.argv[2];
const port = parseInt(process.argv[3], 10);
const handle = process.argv[4];
let seat = parseInt(process.argv[5], 10);
if (seat !== 0 && seat !== 1) {
  console.error('SEAT must be 0 or 1');
  process.exit(2);
}

const MAX_JOIN_REQUESTS = 10;
let joinRequests = 0;
let result = null;
let finished = false;
let buffer = '';

// ---------------------------------------------------------------- the lever

function torques(state) {
  // state[i] is the weight on position i - 10
  let left = 3 * (0 + 3); // the board, 3 kg at 0
  let right = 3 * (0 + 1);
  for (let i = 0; i < 21; i++) {
    const x = i - 10;
    left += state[i] * (x + 3);
    right += state[i] * (x + 1);
  }
  return [left, right];
}

function safe(state) {
  const [l, r] = torques(state);
  return l >= 0 && r <= 0;
}

function slack(state) {
  const [l, r] = torques(state);
  return Math.min(l, -r);
}

function safeAdds(state, weights) {
  const moves = [];
  for (const w of weights) {
    for (let i = 0; i < 21; i++) {
      if (state[i] !== 0) continue;
      state[i] = w;
      if (safe(state)) moves.push([w, i - 10]);
      state[i] = 0;
    }
  }
  return moves;
}

function safeRemoves(state) {
  const moves = [];
  for (let i = 0; i < 21; i++) {
    if (state[i] === 0) continue;
    const w = state[i];
    state[i] = 0;
    if (safe(state)) moves.push(i - 10);
    state[i] = w;
  }
  return moves;
}

function chooseAdd(state, mine, theirs) {
  let best = null;
  let bestKey = null;
  for (const w of mine) {
    for (let i = 0; i < 21; i++) {
      if (state[i] !== 0) continue;
      state[i] = w;
      const ok = safe(state);
      let replies = 0;
      if (ok) {
        // how many safe replies does the opponent have after this?
        const myLeft = mine.filter((v) => v !== w);
        if (theirs.length > 0) replies = safeAdds(state, theirs).length;
        else if (myLeft.length === 0) replies = safeRemoves(state).length;
        else replies = 0;
      }
      // safe first, then fewest safe replies, then the steadiest board
      const key = [ok ? 1 : 0, -replies, slack(state)];
      if (bestKey === null || better(key, bestKey)) {
        best = [w, i - 10];
        bestKey = key;
      }
      state[i] = 0;
    }
  }
  return best;
}

// The REMOVE phase is small enough to solve exactly: the player to move
// wins if some safe removal leaves the other without a winning move.
// (Memo on the set of occupied positions; the weights on them never change.)
const memo = new Map();
function moverWins(state) {
  let key = 0;
  for (let i = 0; i < 21; i++) if (state[i] !== 0) key |= 1 << i;
  if (memo.has(key)) return memo.get(key);
  let wins = false;
  for (let i = 0; i < 21 && !wins; i++) {
    if (state[i] === 0) continue;
    const w = state[i];
    state[i] = 0;
    if (safe(state) && !moverWins(state)) wins = true;
    state[i] = w;
  }
  memo.set(key, wins);
  return wins;
}

function chooseRemove(state) {
  // a removal that keeps the board up and leaves the opponent lost, if any
  for (let i = 0; i < 21; i++) {
    if (state[i] === 0) continue;
    const w = state[i];
    state[i] = 0;
    const winning = safe(state) && !moverWins(state);
    state[i] = w;
    if (winning) return i - 10;
  }
  let best = null;
  let bestKey = null;
  for (let i = 0; i < 21; i++) {
    if (state[i] === 0) continue;
    const w = state[i];
    state[i] = 0;
    const ok = safe(state);
    const replies = ok ? safeRemoves(state).length : 0;
    const key = [ok ? 1 : 0, -replies, slack(state)];
    if (bestKey === null || better(key, bestKey)) {
      best = i - 10;
      bestKey = key;
    }
    state[i] = w;
  }
  return best;
}

function better(a, b) {
  for (let k = 0; k < a.length; k++) {
    if (a[k] !== b[k]) return a[k] > b[k];
  }
  return false;
}

function numbers(field) {
  const t = field.trim();
  if (t === '') return [];
  return t.split(/\s+/).map((s) => parseInt(s, 10));
}

// ---------------------------------------------------------------- the wire

function send(msg) {
  if (!socket.destroyed && socket.writable) socket.write(msg + '\n');
}

function join() {
  joinRequests += 1;
  send('JOINREQUEST:' + handle + ':' + seat + ';');
}

function finish(code) {
  if (finished) return;
  finished = true;
  if (result === null) console.log('connection closed before the game ended');
  socket.destroy();
  process.exit(code || 0);
}

function handle_message(msg) {
  const fields = msg.split(':').map((f) => f.trim());
  const command = fields[0].replace(/\s+/g, '').toUpperCase();
  switch (command) {
    case 'GRANTED':
      console.log('granted seat ' + seat);
      break;
    case 'DENIED':
      // the seat is taken: ask for the other one
      if (joinRequests >= MAX_JOIN_REQUESTS) {
        console.log('denied ' + joinRequests + ' times, giving up');
        finish(0);
        return;
      }
      seat = 1 - seat;
      console.log('denied, asking for seat ' + seat);
      join();
      break;
    case 'BEGIN':
      console.log('game ' + fields[1] + ' begins, max weight ' + fields[2]);
      break;
    case 'ROUND': {
      const kind = (fields[2] || '').replace(/\s+/g, '').toUpperCase();
      const state = numbers(fields[fields.length - 1]);
      if (state.length !== 21) {
        console.log('bad state in ROUND: ' + msg);
      }
      while (state.length < 21) state.push(0);
      if (kind === 'ADD') {
        const mine = numbers(fields[3]);
        const theirs = numbers(fields[4]);
        const move = chooseAdd(state, mine, theirs);
        if (move === null) {
          console.log('nothing to add?! ' + msg);
          return;
        }
        send('ADD:' + move[0] + ':' + move[1] + ';');
      } else if (kind === 'REMOVE') {
        const pos = chooseRemove(state);
        if (pos === null) {
          console.log('nothing to remove?! ' + msg);
          return;
        }
        send('REMOVE:' + pos + ';');
      } else {
        console.log('unknown ROUND: ' + msg);
      }
      break;
    }
    case 'INVALID':
      console.log('INVALID: the server refused our move');
      break;
    case 'WIN':
    case 'LOSE':
      result = command;
      console.log(command === 'WIN' ? 'I won' : 'I lost');
      finish(0); // the server closes the connection next
      break;
    default:
      console.log('unknown message: ' + msg);
  }
}

const socket = net.createConnection({ host: host, port: port }, join);
socket.setEncoding('ascii');

socket.on('data', (chunk) => {
  buffer += chunk;
  let at;
  while (!finished && (at = buffer.indexOf(';')) >= 0) {
    const msg = buffer.slice(0, at).trim();
    buffer = buffer.slice(at + 1);
    if (msg !== '') handle_message(msg);
  }
});

socket.on('end', () => finish(0));
socket.on('close', () => finish(0));
socket.on('error', (err) => {
  console.log('connection error: ' + err.message);
  // could not connect at all: that is a failure; a reset mid-game is a close
  finish(socket.bytesRead > 0 ? 0 : 1);
});
