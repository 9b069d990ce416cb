// Reversi client for the CS541 project.
// usage: java -cp BUILD BugPassCrash HOST PORT NAME
//
// reads the server one char at a time so it works with or without newlines.
// keeps the board from after its own move so it can print what the opponent did.

import java.io.*;
import java.net.*;
import java.util.*;

class BugPassCrash {
    static final int[] DX = {-1, -1, -1, 0, 0, 1, 1, 1};
    static final int[] DY = {-1, 0, 1, -1, 1, -1, 0, 1};
    static final String COLS = "abcdefgh";

    // square weights, board[8*x+y]
    static final int[][] W = {
        {100, -20, 10, 5, 5, 10, -20, 100},
        {-20, -50, -2, -2, -2, -2, -50, -20},
        {10, -2, -1, -1, -1, -1, -2, 10},
        {5, -2, -1, -1, -1, -1, -2, 5},
        {5, -2, -1, -1, -1, -1, -2, 5},
        {10, -2, -1, -1, -1, -1, -2, 10},
        {-20, -50, -2, -2, -2, -2, -50, -20},
        {100, -20, 10, 5, 5, 10, -20, 100},
    };

    static InputStream in;
    static OutputStream out;
    static int me;       // 2 black, 1 white
    static int[] myLast; // board right after my last move (null before my first move)

    static int readChar() throws IOException {
        int c = in.read();
        if (c == -1) {
            System.out.println("server closed the connection");
            System.exit(0);
        }
        return c;
    }

    static String readN(int n) throws IOException {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) sb.append((char) readChar());
        return sb.toString();
    }

    static int flips(int[] b, int x, int y, int who) {
        if (b[8 * x + y] != 0) return 0;
        int other = 3 - who;
        int total = 0;
        for (int d = 0; d < 8; d++) {
            int cx = x + DX[d], cy = y + DY[d], n = 0;
            while (cx >= 0 && cx < 8 && cy >= 0 && cy < 8 && b[8 * cx + cy] == other) {
                cx += DX[d];
                cy += DY[d];
                n++;
            }
            if (n > 0 && cx >= 0 && cx < 8 && cy >= 0 && cy < 8 && b[8 * cx + cy] == who) total += n;
        }
        return total;
    }

    static String name(int sq) {
        return "" + COLS.charAt(sq / 8) + (sq % 8 + 1);
    }

    static void onBoard(String digits) throws IOException {
        int[] b = new int[64];
        for (int i = 0; i < 64; i++) b[i] = digits.charAt(i) - '0';

        // what did the opponent play? = the square that was empty after my move
        if (myLast != null) {
            List<Integer> added = new ArrayList<>();
            for (int i = 0; i < 64; i++)
                if (myLast[i] == 0 && b[i] != 0) added.add(i);
            int opp = added.get(0);
            System.out.println("opponent played " + name(opp));
        }

        int best = -1, bestScore = Integer.MIN_VALUE;
        for (int x = 0; x < 8; x++)
            for (int y = 0; y < 8; y++) {
                int f = flips(b, x, y, me);
                if (f == 0) continue;
                int s = W[x][y] * 10 + f;
                if (s > bestScore) {
                    bestScore = s;
                    best = 8 * x + y;
                }
            }
        if (best < 0) {
            System.out.println("no legal move?");
            best = 0;
        }
        int x = best / 8, y = best % 8;
        System.out.println("I play " + name(best));
        out.write(("M" + x + y + "\n").getBytes());
        out.flush();

        b[best] = me;
        myLast = b;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.out.println("usage: BugPassCrash HOST PORT NAME");
            System.exit(2);
        }
        Socket s = new Socket(args[0], Integer.parseInt(args[1]));
        in = new BufferedInputStream(s.getInputStream());
        out = s.getOutputStream();
        out.write(("N" + args[2] + "\n").getBytes());
        out.flush();

        while (true) {
            int c = readChar();
            if (Character.isWhitespace(c)) continue;
            if (c == 'U') {
                me = readChar() == '1' ? 2 : 1;
                System.out.println("I am " + (me == 2 ? "black" : "white"));
            } else if (c == 'B') {
                onBoard(readN(64));
            } else if (c == 'W') {
                int r = readChar();
                System.out.println(r == '1' ? "I won" : r == '0' ? "I lost" : "draw");
            } else if (c == 'G') {
                System.out.println("game over");
                break;
            } else {
                System.out.println("unknown char " + (char) c);
            }
        }
        s.close();
    }
}
