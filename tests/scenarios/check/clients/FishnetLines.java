// FishNet (Go Fish) client.
//
// Usage: java -cp BUILD FishnetLines HOST PORT NAME OPPONENT
//
// From the handout: each message is an operation and its arguments separated
// by spaces, ended by the end of a line, so every server message is read
// with BufferedReader.readLine().
//
//   play NAME OPPONENT      we send it once
//   fish r                  we drew a card of rank r
//   oppgives n r            the opponent gave us n cards of rank r
//   request r               the opponent asked for rank r: we lose all of them
//   oppmakes r              the opponent made a book of r
//   youmake r               (later handout) we made a book of r
//   pass                    the opponent passed
//   yourturn                answer "request r" (a rank we hold) or "pass"
//   error text              print it and attempt to continue
//   youwin/youlose/tiegame  the end; the server closes the connection
//
// Our own books are not announced by the server: four of a rank leave the
// hand as soon as we have them.

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

public class FishnetLines {

    static int[] hand = new int[13];
    static int myBooks = 0;
    static int oppBooks = 0;
    // ranks the opponent asked for since we last lost them (it holds some)
    static boolean[] oppHas = new boolean[13];
    // ranks we asked for and the opponent did not have
    static boolean[] oppLacks = new boolean[13];

    static int parseRank(String s) {
        try {
            int r = Integer.parseInt(s.trim());
            if (r >= 0 && r <= 12) return r;
        } catch (NumberFormatException e) {
            // fall through
        }
        return -1;
    }

    static void add(int rank, int n) {
        hand[rank] += n;
        if (hand[rank] >= 4) {
            hand[rank] = 0;
            myBooks++;
            oppHas[rank] = false;
            oppLacks[rank] = false;
            System.out.println("I made a book of " + rank + "s (" + myBooks + " books)");
        }
    }

    static String handString() {
        StringBuilder sb = new StringBuilder();
        for (int r = 0; r < 13; r++) {
            for (int k = 0; k < hand[r]; k++) sb.append(r).append(' ');
        }
        return sb.toString().trim();
    }

    static int chooseRank() {
        int best = -1;
        int bestScore = Integer.MIN_VALUE;
        for (int r = 0; r < 13; r++) {
            if (hand[r] == 0) continue;
            int score = hand[r] * 10;
            if (oppHas[r]) score += 100;     // a sure hit
            if (oppLacks[r]) score -= 50;    // probably a miss
            if (score > bestScore) {
                bestScore = score;
                best = r;
            }
        }
        return best;
    }

    public static void main(String[] args) {
        if (args.length < 4) {
            System.err.println("usage: java FishnetLines HOST PORT NAME OPPONENT");
            System.exit(2);
        }
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        String name = args[2];
        String opponent = args[3];

        Socket sock;
        try {
            sock = new Socket(host, port);
        } catch (IOException e) {
            System.err.println("cannot connect to " + host + ":" + port + ": " + e.getMessage());
            System.exit(1);
            return;
        }

        String result = "no result";
        int lastRequest = -1;
        try {
            BufferedReader in = new BufferedReader(
                new InputStreamReader(sock.getInputStream(), StandardCharsets.UTF_8));
            PrintWriter out = new PrintWriter(sock.getOutputStream(), true);

            out.println("play " + name + " " + opponent);
            System.out.println("connected, playing " + opponent + " as " + name);

            String line;
            boolean done = false;
            while (!done && (line = in.readLine()) != null) {
                line = line.trim();
                if (line.isEmpty()) continue;
                String[] w = line.split("\\s+");
                String op = w[0].toLowerCase();
                switch (op) {
                    case "fish": {
                        int r = w.length > 1 ? parseRank(w[1]) : -1;
                        if (r < 0) {
                            System.out.println("bad fish line: " + line);
                            break;
                        }
                        add(r, 1);
                        break;
                    }
                    case "oppgives": {
                        int n = w.length > 2 ? parseInt(w[1]) : -1;
                        int r = w.length > 2 ? parseRank(w[2]) : -1;
                        if (n < 0 || r < 0) {
                            System.out.println("bad oppgives line: " + line);
                            break;
                        }
                        System.out.println("opponent gives me " + n + " x " + r);
                        add(r, n);
                        oppHas[r] = false;
                        oppLacks[r] = true;   // it gave them all
                        break;
                    }
                    case "request": {
                        int r = w.length > 1 ? parseRank(w[1]) : -1;
                        if (r < 0) {
                            System.out.println("bad request line: " + line);
                            break;
                        }
                        if (hand[r] > 0) {
                            System.out.println("opponent takes my " + hand[r] + " x " + r);
                        }
                        hand[r] = 0;
                        oppHas[r] = true;
                        oppLacks[r] = false;
                        break;
                    }
                    case "oppmakes": {
                        int r = w.length > 1 ? parseRank(w[1]) : -1;
                        oppBooks++;
                        if (r >= 0) {
                            hand[r] = 0;   // cannot hold any of it any more
                            oppHas[r] = false;
                            oppLacks[r] = false;
                        }
                        System.out.println("opponent made a book of " + r + "s (" + oppBooks + " books)");
                        break;
                    }
                    case "youmake": {
                        int r = w.length > 1 ? parseRank(w[1]) : -1;
                        if (r >= 0 && hand[r] > 0) {
                            // we had not counted it yet
                            hand[r] = 0;
                            myBooks++;
                        }
                        break;
                    }
                    case "pass":
                        System.out.println("opponent passes");
                        break;
                    case "yourturn": {
                        int r = chooseRank();
                        if (r < 0) {
                            System.out.println("my hand is empty: pass");
                            out.println("pass");
                            lastRequest = -1;
                        } else {
                            System.out.println("hand [" + handString() + "], asking for " + r);
                            out.println("request " + r);
                            lastRequest = r;
                            oppLacks[r] = true;   // cleared again on a hit
                        }
                        break;
                    }
                    case "error": {
                        String why = line.length() > 5 ? line.substring(5).trim() : "";
                        System.out.println("server error: " + why);
                        if (why.equals("rank_not_held") && lastRequest >= 0) {
                            // our count was wrong: forget that rank
                            hand[lastRequest] = 0;
                        }
                        break;
                    }
                    case "youwin":
                        result = "I won";
                        done = true;
                        break;
                    case "youlose":
                        result = "I lost";
                        done = true;
                        break;
                    case "tiegame":
                        result = "a tie";
                        done = true;
                        break;
                    default:
                        System.out.println("unknown message: " + line);
                }
            }
            if (!done) System.out.println("server closed the connection");
        } catch (IOException e) {
            System.out.println("connection error: " + e.getMessage());
        }
        try {
            sock.close();
        } catch (IOException e) {
            // ignore
        }
        System.out.println("game over: " + result + " (my books " + myBooks + ", opponent's " + oppBooks + ")");
        System.exit(0);
    }

    static int parseInt(String s) {
        try {
            return Integer.parseInt(s.trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
