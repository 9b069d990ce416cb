// Reversi client for the course server (CS541 Reversi protocol).
//
// Usage: java -cp BUILD ReversiReadLine HOST PORT NAME
//
// Protocol (from the handout): send "Nname", get "U1" (Black, moves first)
// or "U0" (White), then a board "B" + 64 digits every time it is our turn,
// answer "Mxy". Digit i is square (x, y) with x = i / 8, y = i % 8;
// 0 empty, 1 White, 2 Black. At the end "W1" (won), "W0" (lost) or "W2"
// (draw), then "G", and the server closes the connection.
//
// The course server ends every message with println, so each message is
// read with BufferedReader.readLine().

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;

public class ReversiReadLine {

    static final int[][] DIRS = {
        {1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}, {1, -1}, {-1, 1}, {-1, -1}
    };

    // a little bit of strategy on top of greedy: corners are great,
    // the squares next to an empty corner are bad
    static final int[][] WEIGHT = {
        {100, -20, 10, 5, 5, 10, -20, 100},
        {-20, -50, -2, -2, -2, -2, -50, -20},
        {10, -2, 1, 1, 1, 1, -2, 10},
        {5, -2, 1, 0, 0, 1, -2, 5},
        {5, -2, 1, 0, 0, 1, -2, 5},
        {10, -2, 1, 1, 1, 1, -2, 10},
        {-20, -50, -2, -2, -2, -2, -50, -20},
        {100, -20, 10, 5, 5, 10, -20, 100},
    };

    static int flips(int[][] b, int x, int y, int me) {
        if (b[x][y] != 0) return 0;
        int opp = 3 - me;
        int total = 0;
        for (int[] d : DIRS) {
            int cx = x + d[0], cy = y + d[1], n = 0;
            while (cx >= 0 && cx < 8 && cy >= 0 && cy < 8 && b[cx][cy] == opp) {
                cx += d[0];
                cy += d[1];
                n++;
            }
            if (n > 0 && cx >= 0 && cx < 8 && cy >= 0 && cy < 8 && b[cx][cy] == me) {
                total += n;
            }
        }
        return total;
    }

    public static void main(String[] args) {
        if (args.length < 3) {
            System.err.println("usage: java ReversiReadLine HOST PORT NAME");
            System.exit(2);
        }
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        String name = args[2];

        Socket sock;
        try {
            sock = new Socket(host, port);
        } catch (IOException e) {
            System.err.println("cannot connect to " + host + ":" + port + ": " + e.getMessage());
            System.exit(1);
            return;
        }

        int me = 0;            // my digit on the board: 2 Black, 1 White
        String lastBoard = null;
        Set<String> refused = new HashSet<>();  // moves refused on lastBoard
        String lastMove = null;
        int moves = 0;
        String result = "no result";

        try {
            BufferedReader in = new BufferedReader(
                new InputStreamReader(sock.getInputStream(), StandardCharsets.US_ASCII));
            PrintWriter out = new PrintWriter(sock.getOutputStream(), true);

            out.println("N" + name);
            System.out.println("connected to " + host + ":" + port + " as " + name);

            String line;
            boolean sawG = false;
            while ((line = in.readLine()) != null) {
                line = line.trim();
                if (line.isEmpty()) continue;
                char c = line.charAt(0);
                if (c == 'U') {
                    me = line.equals("U1") ? 2 : 1;
                    System.out.println("game started, I am " + (me == 2 ? "Black (first)" : "White (second)"));
                } else if (c == 'B') {
                    if (line.length() < 65) {
                        System.out.println("short board message: " + line);
                        continue;
                    }
                    String digits = line.substring(1, 65);
                    if (me == 0) {
                        // no U seen: guess from the start position
                        me = 2;
                    }
                    int[][] b = new int[8][8];
                    for (int i = 0; i < 64; i++) {
                        b[i / 8][i % 8] = digits.charAt(i) - '0';
                    }
                    if (digits.equals(lastBoard) && lastMove != null) {
                        // the same board again: the server refused my move
                        System.out.println("move " + lastMove + " was refused, trying another");
                        refused.add(lastMove);
                    } else {
                        refused.clear();
                    }
                    int bestX = -1, bestY = -1, bestScore = Integer.MIN_VALUE;
                    for (int x = 0; x < 8; x++) {
                        for (int y = 0; y < 8; y++) {
                            int f = flips(b, x, y, me);
                            if (f == 0) continue;
                            if (refused.contains("M" + x + y)) continue;
                            int score = f + WEIGHT[x][y];
                            if (score > bestScore) {
                                bestScore = score;
                                bestX = x;
                                bestY = y;
                            }
                        }
                    }
                    if (bestX < 0) {
                        // should not happen: the server only sends a board when we can move
                        outer:
                        for (int x = 0; x < 8; x++) {
                            for (int y = 0; y < 8; y++) {
                                if (b[x][y] == 0 && !refused.contains("M" + x + y)) {
                                    bestX = x;
                                    bestY = y;
                                    break outer;
                                }
                            }
                        }
                        if (bestX < 0) { bestX = 0; bestY = 0; }
                    }
                    lastBoard = digits;
                    lastMove = "M" + bestX + bestY;
                    out.println(lastMove);
                    moves++;
                } else if (c == 'W') {
                    if (line.equals("W1")) result = "I won";
                    else if (line.equals("W0")) result = "I lost";
                    else if (line.equals("W2")) result = "a draw";
                    else result = "unknown result " + line;
                    System.out.println("game over: " + result + " (" + moves + " moves sent)");
                } else if (c == 'G') {
                    System.out.println("server says the game is over (G)");
                    sawG = true;
                    break;
                } else {
                    System.out.println("unknown message: " + line);
                }
            }
            if (!sawG) System.out.println("server closed the connection");
        } catch (IOException e) {
            System.out.println("connection error: " + e.getMessage());
        }
        try {
            sock.close();
        } catch (IOException e) {
            // ignore
        }
        System.out.println("done: " + result);
        System.exit(0);
    }
}
