// Go Fish client (FishNet protocol)
// usage: java -cp BUILD BugErrorOffturn HOST PORT NAME OPPONENT
//
// ranks 0..12 are printed as card names so the log is readable.
// strategy: ask for the rank we hold most of, skip ranks the opponent just
// told us it doesn't have (until it asks for them itself).

import java.io.*;
import java.net.*;

class BugErrorOffturn {
    static final String[] NAMES = {"2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"};

    static int[] hand = new int[13];
    static boolean[] oppLacks = new boolean[13];
    static int lastRank = -1;   // what I asked for in this turn, -1 = nothing pending
    static int myBooks = 0, oppBooks = 0;

    static void add(int r, int n) {
        hand[r] += n;
        if (hand[r] == 4) {
            System.out.println("  I made a book of " + NAMES[r] + "s");
            hand[r] = 0;
            myBooks++;
        }
    }

    static int choose() {
        int best = -1;
        for (int r = 0; r < 13; r++) {
            if (hand[r] == 0 || oppLacks[r]) continue;
            if (best < 0 || hand[r] > hand[best]) best = r;
        }
        if (best < 0) { // everything I have, the opponent lacks: ask anyway
            for (int r = 0; r < 13; r++)
                if (hand[r] > 0 && (best < 0 || hand[r] > hand[best])) best = r;
        }
        return best;
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 4) {
            System.out.println("usage: BugErrorOffturn HOST PORT NAME OPPONENT");
            System.exit(2);
        }
        Socket sock = new Socket(args[0], Integer.parseInt(args[1]));
        BufferedReader in = new BufferedReader(new InputStreamReader(sock.getInputStream()));
        PrintWriter out = new PrintWriter(sock.getOutputStream(), true);
        out.println("play " + args[2] + " " + args[3]);

        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split("\\s+");
            String cmd = w[0];
            if (cmd.equals("")) continue;

            if (cmd.equals("fish")) {
                int r = Integer.parseInt(w[1]);
                System.out.println("drew a " + NAMES[r]);
                if (lastRank >= 0) {
                    oppLacks[lastRank] = true; // missed: the opponent has none
                    lastRank = -1;
                }
                add(r, 1);
            } else if (cmd.equals("oppgives")) {
                int n = Integer.parseInt(w[1]);
                int r = Integer.parseInt(w[2]);
                System.out.println("got " + n + " " + NAMES[r] + "(s) from the opponent");
                oppLacks[r] = true; // it gave me all of them
                lastRank = -1;
                add(r, n);
            } else if (cmd.equals("request")) {
                int r = Integer.parseInt(w[1]);
                System.out.println("opponent wants " + NAMES[r] + "s, I have " + hand[r]);
                hand[r] = 0;
                oppLacks[r] = false; // it holds some now
                lastRank = -1;
            } else if (cmd.equals("pass")) {
                System.out.println("opponent passed");
                lastRank = -1;
            } else if (cmd.equals("oppmakes")) {
                int r = Integer.parseInt(w[1]);
                System.out.println("opponent made a book of " + NAMES[r] + "s");
                oppBooks++;
                oppLacks[r] = true;
            } else if (cmd.equals("youmake")) {
                int r = Integer.parseInt(w[1]);
                if (hand[r] > 0) {
                    hand[r] = 0;
                    myBooks++;
                }
            } else if (cmd.equals("yourturn")) {
                int r = choose();
                if (r < 0) {
                    System.out.println("empty hand?? passing");
                    out.println("pass");
                } else {
                    lastRank = r;
                    System.out.println("asking for " + NAMES[r] + "s");
                    out.println("request " + r);
                }
            } else if (cmd.equals("error")) {
                String why = w.length > 1 ? w[1] : "?";
                System.out.println("server error: " + why + " (my request for " + NAMES[lastRank] + "s)");
                lastRank = -1;
                // the server sends yourturn again, keep going
            } else if (cmd.equals("youwin") || cmd.equals("youlose") || cmd.equals("tiegame")) {
                System.out.println(cmd + "  (books: me " + myBooks + ", opponent " + oppBooks + ")");
                break;
            } else {
                System.out.println("unknown: " + line);
            }
        }
        sock.close();
    }
}
