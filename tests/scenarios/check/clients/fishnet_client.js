#!/usr/bin/env node
// FishNet (Go Fish) client, from the FishNet protocol handout.
//
// Usage: node fishnet_client.js HOST PORT NAME OPPONENT
//
// Every FishNet message is one line: an operation and its arguments
// separated by spaces. We read the socket line by line with readline.
//
// We keep track of our hand from the server's lines:
//   fish r        we drew (or were dealt) a card of rank r
//   oppgives n r  the opponent gave us n cards of rank r
//   request r     the opponent asked for rank r: the server takes all of ours
//   oppmakes r    the opponent made a book (nothing changes in our hand)
//   youmake r     (later handout) we made a book of r
// Four of a rank is a book and leaves our hand.
// On yourturn we send "request r" for a rank we hold, or "pass" if we hold none.
// On error we print it and carry on, as the handout says.
// youwin / youlose / tiegame end the game; the server closes after them.

'use strict';

const net = require('net');
const readline = require('readline');

if (process.argv.length !== 6) {
  console.error('usage: node fishnet_client.js HOST PORT NAME OPPONENT');
  process.exit(2);
}
const host = process.argv[2];
const port = parseInt(process.argv[3], 10);
const name = process.argv[4];
const opponent = process.argv[5];

const hand = new Array(13).fill(0); // hand[r] = how many cards of rank r we hold
let myBooks = 0;
let oppBooks = 0;
let result = null;
let finished = false;
let lastRequest = -1; // the rank of our last request

function addCards(rank, n) {
  if (!(rank >= 0 && rank <= 12)) return;
  hand[rank] += n;
  if (hand[rank] >= 4) {
    // a book: the server takes it out of our hand
    hand[rank] = 0;
    myBooks += 1;
  }
}

function handString() {
  const cards = [];
  for (let r = 0; r <= 12; r++) for (let i = 0; i < hand[r]; i++) cards.push(r);
  return cards.join(' ');
}

function chooseRank() {
  // ask for the rank we hold most of (ties: the lowest rank)
  let best = -1;
  for (let r = 0; r <= 12; r++) {
    if (hand[r] > 0 && (best < 0 || hand[r] > hand[best])) best = r;
  }
  return best;
}

function finish(code) {
  if (finished) return;
  finished = true;
  if (result === null) console.log('connection closed before the game ended');
  socket.destroy();
  process.exit(code);
}

const socket = net.createConnection({ host: host, port: port }, () => {
  socket.write('play ' + name + ' ' + opponent + '\n');
});

function send(line) {
  if (!socket.destroyed && socket.writable) socket.write(line + '\n');
}

const rl = readline.createInterface({ input: socket, crlfDelay: Infinity });

rl.on('line', (raw) => {
  const words = raw.trim().split(/\s+/);
  const op = words[0].toLowerCase();
  if (op === '') return; // blank line
  const a = parseInt(words[1], 10);
  const b = parseInt(words[2], 10);
  switch (op) {
    case 'fish':
      addCards(a, 1);
      break;
    case 'oppgives':
      addCards(b, a);
      break;
    case 'request':
      // the opponent asked us for rank a: the server takes all we have
      if (a >= 0 && a <= 12) hand[a] = 0;
      break;
    case 'oppmakes':
      oppBooks += 1;
      break;
    case 'youmake':
      if (a >= 0 && a <= 12) {
        if (hand[a] !== 0) myBooks += 1; // not counted yet
        hand[a] = 0;
      }
      break;
    case 'pass':
      break; // the opponent passed
    case 'yourturn': {
      const r = chooseRank();
      if (r < 0) {
        send('pass');
      } else {
        lastRequest = r;
        send('request ' + r);
      }
      break;
    }
    case 'error':
      // the handout: print the error description and attempt to continue
      console.log('server error: ' + words.slice(1).join(' '));
      if (words[1] === 'rank_not_held') {
        // our idea of the hand was wrong; forget that rank, or we would
        // ask for it again on the yourturn that follows
        if (lastRequest >= 0) hand[lastRequest] = 0;
      }
      break;
    case 'youwin':
    case 'youlose':
    case 'tiegame':
      result = op;
      console.log(op + ' (my books ' + myBooks + ', opponent ' + oppBooks + ')');
      finish(0); // the server closes the connection right after
      break;
    default:
      console.log('unknown line from the server: ' + raw);
  }
});

rl.on('close', () => finish(0));
socket.on('error', (err) => {
  console.log('connection error: ' + err.message);
  finish(result === null && !socket.bytesRead ? 1 : 0);
});
