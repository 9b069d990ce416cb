// OldMaidPeer.java - INF-3701 exercise one, Old Maid ring peer.
//
// Blocking sockets, one thread per connection, BufferedReader.readLine()
// to read, PrintWriter to write (one line = one JSON object).
// JSON is done by hand: strings are built with +, and a small parser
// below turns a line into Maps/Lists/Strings/Numbers.
//
// Usage: java OldMaidPeer --nick NICK --table HOST:PORT
//
// Threads:
//   main          - joins, then does everything that needs "the turn"
//                   (drawing, discarding, offering our hand)
//   table-reader  - reads the table connection; replies go to a queue,
//                   the game_over notice ends the program
//   acceptor      - accepts connections from players to our right
//   one handler per accepted connection - answers your_turn/offer,
//                   and picks a card after accepting an offer

import java.io.*;
import java.net.*;
import java.util.*;
import java.util.concurrent.*;

public class OldMaidPeer {

    // ---- settings ----
    static final int PEER_TIMEOUT_MS = 10000;   // docs: neighbours wait 10 s
    static final int GRACE_MS = 200;            // 7.7 step 6

    // ---- game state (guarded by LOCK) ----
    static final Object LOCK = new Object();
    static String nick;
    static List<String[]> hand = new ArrayList<>();   // cards as {value, suit}
    static boolean offerPhase = false;   // deck known to be empty
    static boolean amOut = false;          // table has said ok to our going out
    static volatile boolean gameOver = false;
    static volatile boolean lost = false;
    static List<String> seatNick = new ArrayList<>();
    static List<String> seatHost = new ArrayList<>();
    static List<Integer> seatPort = new ArrayList<>();
    static int mySeat = -1;
    static Set<Integer> knownOut = new HashSet<>();
    static Map<Integer, Conn> dialled = new HashMap<>();

    static final CountDownLatch joined = new CountDownLatch(1);
    static final BlockingQueue<String> events = new LinkedBlockingQueue<>();
    static final Random rnd = new Random();

    // ---- table connection ----
    static Socket tableSock;
    static PrintWriter tableOut;
    static final BlockingQueue<Map<String, Object>> tableReplies = new LinkedBlockingQueue<>();
    static final Map<String, Object> CLOSED = new HashMap<>();   // sentinel

    // a connection we dialled to another seat
    static class Conn {
        Socket s;
        BufferedReader in;
        PrintWriter out;
        boolean used = false;
    }

    public static void main(String[] args) throws Exception {
        String table = null;
        for (int i = 0; i < args.length - 1; i++) {
            if (args[i].equals("--nick")) nick = args[i + 1];
            if (args[i].equals("--table")) table = args[i + 1];
        }
        if (nick == null || table == null) {
            System.err.println("usage: java OldMaidPeer --nick NICK --table HOST:PORT");
            System.exit(2);
        }
        int colon = table.lastIndexOf(':');
        String thost = table.substring(0, colon);
        int tport = Integer.parseInt(table.substring(colon + 1));

        // connect to the table (prefer IPv4: we must announce an IPv4 address)
        InetAddress taddr = null;
        for (InetAddress a : InetAddress.getAllByName(thost)) {
            if (a instanceof Inet4Address) { taddr = a; break; }
        }
        if (taddr == null) taddr = InetAddress.getByName(thost);
        tableSock = new Socket();
        tableSock.connect(new InetSocketAddress(taddr, tport), 10000);
        tableSock.setTcpNoDelay(true);
        tableOut = new PrintWriter(new OutputStreamWriter(tableSock.getOutputStream(), "UTF-8"), false);
        final BufferedReader tableIn = new BufferedReader(new InputStreamReader(tableSock.getInputStream(), "UTF-8"));
        System.out.println("connected to table " + taddr.getHostAddress() + ":" + tport);

        // listen BEFORE joining, on the address that faces the table
        String myHost = tableSock.getLocalAddress().getHostAddress();
        if (!(tableSock.getLocalAddress() instanceof Inet4Address)) myHost = "127.0.0.1";
        final ServerSocket server = new ServerSocket();
        server.bind(new InetSocketAddress(myHost, 0), 64);
        int myPort = server.getLocalPort();
        System.out.println("listening on " + myHost + ":" + myPort);

        Thread acc = new Thread(() -> acceptLoop(server), "acceptor");
        acc.setDaemon(true);
        acc.start();

        Thread tr = new Thread(() -> tableReader(tableIn), "table-reader");
        tr.setDaemon(true);
        tr.start();

        // join
        Map<String, Object> rep = tableRequest("{\"cmd\":\"join\",\"nick\":\"" + nick + "\",\"host\":\""
                + myHost + "\",\"port\":" + myPort + ",\"watch\":true}", 700000);
        if (!"ok".equals(rep.get("result"))) {
            System.err.println(nick + ": join refused: " + rep.get("message"));
            System.exit(1);
        }
        List<Object> players = (List<Object>) rep.get("players");
        for (int i = 0; i < players.size(); i++) {
            List<Object> p = (List<Object>) players.get(i);
            List<Object> addr = (List<Object>) p.get(0);
            String h = (String) addr.get(0);
            if (h.startsWith("::ffff:")) h = h.substring(7);
            seatHost.add(h);
            seatPort.add(((Number) addr.get(1)).intValue());
            seatNick.add((String) p.get(1));
            if (nick.equals(p.get(1))) mySeat = i;
        }
        System.out.println("game started, players " + seatNick + ", I am seat " + (mySeat + 1));
        if (mySeat < 0) {
            System.err.println(nick + ": my nick is not in the player list");
            System.exit(1);
        }
        joined.countDown();

        // dial the left neighbour at once
        int left = (mySeat + 1) % seatNick.size();
        if (left != mySeat) {
            try {
                getConn(left);
            } catch (IOException e) {
                System.out.println("could not dial left neighbour yet: " + e.getMessage());
            }
        }

        if (mySeat == 0) events.add("draw");

        // main loop: do what the turn asks
        long lastEvent = System.currentTimeMillis();
        while (true) {
            String ev = events.poll(1, TimeUnit.SECONDS);
            if (ev == null) {
                if (System.currentTimeMillis() - lastEvent > 330000) {
                    System.err.println(nick + ": nothing happened for 330 s, giving up");
                    System.exit(1);
                }
                continue;
            }
            lastEvent = System.currentTimeMillis();
            if (gameOver) continue;
            try {
                if (ev.equals("draw")) doDraw();
                else if (ev.equals("offer")) doOfferTurn();
            } catch (IOException | RuntimeException e) {
                if (gameOver) continue;
                System.err.println(nick + ": " + e.getMessage());
                System.exit(1);
            }
        }
    }

    // =====================================================================
    // table connection
    // =====================================================================

    static void tableReader(BufferedReader in) {
        try {
            String line;
            while ((line = in.readLine()) != null) {
                line = line.trim();
                if (line.isEmpty()) continue;
                System.out.println("table -> " + line);
                Object o;
                try {
                    o = Json.parse(line);
                } catch (Exception e) {
                    System.out.println("bad json from table: " + line);
                    continue;
                }
                if (!(o instanceof Map)) continue;
                Map<String, Object> m = (Map<String, Object>) o;
                if (m.containsKey("cmd")) {
                    if ("game_over".equals(m.get("cmd"))) gameOverNotice(m);
                    // other notices: ignore, never answer
                } else {
                    tableReplies.add(m);
                }
            }
        } catch (IOException e) {
            System.out.println("table read error: " + e.getMessage());
        }
        tableReplies.add(CLOSED);
        if (gameOver) {
            sleep(300);   // the game_over notice thread exits the program
            System.exit(0);
        }
        System.err.println(nick + ": the table closed the connection");
        System.exit(1);
    }

    static void gameOverNotice(Map<String, Object> m) {
        gameOver = true;
        if (Boolean.TRUE.equals(m.get("aborted"))) {
            System.err.println(nick + ": game aborted: " + m.get("reason"));
            System.exit(1);
        }
        String loser = (String) m.get("loser");
        List<Object> outs = (List<Object>) m.get("out");
        if (nick.equals(loser)) {
            System.out.println("lost: holds the Old Maid");
            System.exit(0);
        }
        int place = outs == null ? 0 : outs.indexOf(nick) + 1;
        System.out.println("out " + place + " of " + seatNick.size() + " (loser " + loser + ")");
        // keep answering "out" a moment so the loser's last round finds us
        try { Thread.sleep(200); } catch (InterruptedException e) { }
        System.exit(0);
    }

    // one request, one reply; synchronized so only one request at a time
    static synchronized Map<String, Object> tableRequest(String msg, long timeoutMs) throws IOException {
        System.out.println("-> table " + msg);
        tableOut.print(msg + "\n");
        tableOut.flush();
        Map<String, Object> r;
        try {
            r = tableReplies.poll(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            throw new IOException("interrupted");
        }
        if (r == null) throw new IOException("the table did not answer " + msg);
        if (r == CLOSED) {
            tableReplies.add(CLOSED);
            throw new IOException("the table closed the connection");
        }
        return r;
    }

    static Map<String, Object> tableRequest(String msg) throws IOException {
        return tableRequest(msg, 15000);
    }

    static Set<String> tableOutList() throws IOException {
        Map<String, Object> r = tableRequest("{\"cmd\":\"status\"}");
        Set<String> s = new HashSet<>();
        Object o = r.get("out");
        if (o instanceof List) for (Object x : (List<Object>) o) s.add(String.valueOf(x));
        if (Boolean.TRUE.equals(r.get("game_over"))) {
            gameOver = true;
        }
        return s;
    }

    // =====================================================================
    // cards
    // =====================================================================

    static String cardJson(String[] c) {
        return "[\"" + c[0] + "\",\"" + c[1] + "\"]";
    }

    static String[] toCard(Object o) {
        List<Object> l = (List<Object>) o;
        String v = String.valueOf(l.get(0));
        String s = String.valueOf(l.get(1)).toLowerCase();
        if (v.equalsIgnoreCase("joker")) v = "joker";
        else v = v.toUpperCase();
        return new String[]{v, s};
    }

    static String color(String suit) {
        if (suit.equals("spades") || suit.equals("clubs")) return "black";
        if (suit.equals("hearts") || suit.equals("diamonds")) return "red";
        return "none";
    }

    // put a received card at a random place
    static void addCard(String[] c) {
        synchronized (LOCK) {
            hand.add(rnd.nextInt(hand.size() + 1), c);
            System.out.println("got " + cardJson(c) + ", hand now " + handString());
        }
    }

    static String handString() {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < hand.size(); i++) {
            if (i > 0) sb.append(",");
            sb.append(cardJson(hand.get(i)));
        }
        return sb.append("]").toString();
    }

    // discard every pair we hold
    static void discardPairs() throws IOException {
        while (true) {
            String[] a = null, b = null;
            boolean last;
            synchronized (LOCK) {
                outer:
                for (int i = 0; i < hand.size(); i++) {
                    for (int j = i + 1; j < hand.size(); j++) {
                        String[] x = hand.get(i), y = hand.get(j);
                        if (x[0].equals("joker") || y[0].equals("joker")) continue;
                        if (x[0].equals(y[0]) && color(x[1]).equals(color(y[1])) && !x[1].equals(y[1])) {
                            a = x; b = y;
                            break outer;
                        }
                    }
                }
                if (a == null) return;
                hand.remove(a);
                hand.remove(b);
                last = hand.isEmpty() && offerPhase;
            }
            Map<String, Object> r = tableRequest("{\"cmd\":\"discard\",\"cards\":[" + cardJson(a) + ","
                    + cardJson(b) + "],\"last_cards\":\"" + last + "\"}");
            if (!"ok".equals(r.get("result"))) {
                System.out.println("discard refused: " + r.get("message"));
            } else if (last) {
                synchronized (LOCK) { amOut = true; }
                System.out.println("I am out!");
            }
        }
    }

    // hand empty in the offer phase: tell the table
    static void goOut() throws IOException {
        Map<String, Object> r = tableRequest("{\"cmd\":\"out_of_cards\"}");
        if ("ok".equals(r.get("result"))) {
            synchronized (LOCK) { amOut = true; }
            System.out.println("I am out!");
        } else {
            System.out.println("out_of_cards refused: " + r.get("message"));
        }
    }

    // =====================================================================
    // the turn
    // =====================================================================

    static void doDraw() throws IOException {
        Map<String, Object> r = tableRequest("{\"cmd\":\"draw\"}");
        Object res = r.get("result");
        if ("ok".equals(res) || "last_card".equals(res)) {
            addCard(toCard(r.get("card")));
            if ("last_card".equals(res)) {
                synchronized (LOCK) { offerPhase = true; }
                System.out.println("I drew the last card, offer phase starts with me");
                discardPairs();
                doOfferTurn();
                return;
            }
            discardPairs();
            passTurn("{\"cmd\":\"your_turn\"}", false);
        } else {
            String msg = String.valueOf(r.get("message"));
            System.out.println("draw refused: " + msg);
            if (msg.startsWith("the deck is empty")) {
                boolean empty;
                synchronized (LOCK) { offerPhase = true; empty = hand.isEmpty() && !amOut; }
                if (empty) goOut();
            }
        }
    }

    // we hold the turn in the offer phase
    static void doOfferTurn() throws IOException {
        discardPairs();
        boolean empty;
        synchronized (LOCK) { empty = hand.isEmpty(); }
        if (empty) {
            boolean o;
            synchronized (LOCK) { o = amOut; }
            if (!o) goOut();
            // pass the turn on without cards
            passTurn("{\"cmd\":\"offer\",\"num_cards\":0}", true);
        } else {
            passTurn(null, true);
        }
    }

    // send your_turn or offer to the next player who is in.
    // msg == null means: offer our whole hand.
    static void passTurn(String msg, boolean offer) throws IOException {
        int n = seatNick.size();
        for (int k = 1; k < n; k++) {
            if (gameOver) return;
            int seat = (mySeat + k) % n;
            if (knownOut.contains(seat)) continue;
            String req = msg;
            int numCards = 0;
            if (req == null) {
                synchronized (LOCK) { numCards = hand.size(); }
                req = "{\"cmd\":\"offer\",\"num_cards\":" + numCards + ",\"stream\":true}";
            }
            String answer = askSeat(seat, req);
            if (answer.equals("out") || answer.equals("skip")) {
                knownOut.add(seat);
                System.out.println(seatNick.get(seat) + " is out, trying the next seat");
                continue;
            }
            // answer ok
            if (offer && numCards > 0) {
                servePick(seat);
            }
            return;
        }
        // every other seat is out
        if (offer) {
            lost = true;
            System.out.println("nobody else is in: I hold the Old Maid, I lost");
            waitForEnd();
        } else {
            System.err.println(nick + ": nobody to hand the draw turn to");
            System.exit(1);
        }
    }

    static void waitForEnd() {
        // the table's game_over notice ends the program; poll too, just in case
        for (int i = 0; i < 50; i++) {
            try { Thread.sleep(200); } catch (InterruptedException e) { }
            if (i % 10 == 9) {
                try {
                    tableOutList();
                } catch (IOException e) { }
                if (gameOver) {
                    System.out.println("lost: holds the Old Maid");
                    System.exit(0);
                }
            }
        }
        System.out.println("lost: holds the Old Maid (table never said game over)");
        System.exit(0);
    }

    // the picker answered ok to our offer: answer its pick(s)
    static void servePick(int seat) throws IOException {
        Conn c = dialled.get(seat);
        int bad = 0;
        while (true) {
            String line = readReply(c, seat, false);
            if (line == null) throw new IOException(seatNick.get(seat) + " did not pick within 10 s");
            System.out.println(seatNick.get(seat) + " -> " + line);
            Map<String, Object> m;
            try {
                m = (Map<String, Object>) Json.parse(line);
            } catch (Exception e) {
                send(c.out, "{\"result\":\"error\",\"message\":\"not a JSON object\"}");
                continue;
            }
            if (!"pick".equals(m.get("cmd"))) {
                send(c.out, "{\"result\":\"error\",\"message\":\"expected a pick\"}");
                if (++bad > 8) throw new IOException(seatNick.get(seat) + " never picked");
                continue;
            }
            Object cn = m.get("card_num");
            String[] card = null;
            String err = null;
            synchronized (LOCK) {
                if (!(cn instanceof Number) || cn instanceof Double) {
                    err = "card_num must be an integer";
                } else {
                    int idx = ((Number) cn).intValue();
                    if (idx == hand.size()) idx = hand.size() - 1;   // handout "between 0 and n"
                    System.out.println("pick " + idx + " from my hand " + handString());
                    if (idx < 0 || idx >= hand.size()) {
                        err = "card_num " + idx + " is not between 0 and " + (hand.size() - 1);
                    } else {
                        card = hand.remove(idx);
                    }
                }
            }
            if (card == null) {
                send(c.out, "{\"result\":\"error\",\"message\":\"" + err + "\"}");
                if (++bad > 8) throw new IOException(seatNick.get(seat) + " made 8 bad picks");
                continue;
            }
            send(c.out, "{\"result\":\"ok\",\"card\":" + cardJson(card) + "}");
            System.out.println(seatNick.get(seat) + " picked " + cardJson(card));
            boolean empty;
            synchronized (LOCK) { empty = hand.isEmpty(); }
            if (empty) goOut();
            return;
        }
    }

    // send a request to a seat and return "ok", "out" or "skip" (gone, listed out)
    static String askSeat(int seat, String req) throws IOException {
        long deadline = System.currentTimeMillis() + PEER_TIMEOUT_MS;
        while (true) {
            Conn c;
            try {
                c = getConn(seat);
            } catch (IOException e) {
                if (knownOut.contains(seat)) return "skip";
                throw e;
            }
            System.out.println("-> " + seatNick.get(seat) + " " + req);
            send(c.out, req);
            String line = null;
            boolean broken = false;
            try {
                line = readReply(c, seat, true);
            } catch (IOException e) {
                broken = true;
            }
            if (line == null && !broken) {
                // no answer within the peer timeout (or the table says it is out)
                if (knownOut.contains(seat)) return "skip";
                throw new IOException(seatNick.get(seat) + " did not answer within 10 s");
            }
            if (line == null || line.equals("\u0000closed")) {
                // connection closed: ask the table
                closeConn(seat);
                if (tableOutList().contains(seatNick.get(seat))) return "skip";
                if (System.currentTimeMillis() > deadline)
                    throw new IOException("lost the connection to " + seatNick.get(seat));
                sleep(100);
                continue;   // dial again, send again
            }
            System.out.println(seatNick.get(seat) + " -> " + line);
            Map<String, Object> m;
            try {
                m = (Map<String, Object>) Json.parse(line);
            } catch (Exception e) {
                throw new IOException("garbage from " + seatNick.get(seat) + ": " + line);
            }
            Object res = m.get("result");
            if ("ok".equals(res)) return "ok";
            if ("out".equals(res)) return "out";
            throw new IOException(seatNick.get(seat) + " answered " + line);
        }
    }

    // read one reply line from a seat we dialled. Returns null on timeout,
    // "\0closed" when the connection closed. With checkOut, a seat that is
    // slow is looked up in the table's status every 0.2 s (13.7).
    static String readReply(Conn c, int seat, boolean checkOut) throws IOException {
        long deadline = System.currentTimeMillis() + PEER_TIMEOUT_MS;
        while (System.currentTimeMillis() < deadline) {
            try {
                c.s.setSoTimeout(GRACE_MS);
                String line = c.in.readLine();
                if (line == null) return "\u0000closed";
                line = line.trim();
                if (line.isEmpty()) continue;
                c.used = true;
                return line;
            } catch (SocketTimeoutException e) {
                if (gameOver) return null;
                if (checkOut && tableOutList().contains(seatNick.get(seat))) {
                    knownOut.add(seat);
                    closeConn(seat);
                    return null;
                }
            } catch (IOException e) {
                return "\u0000closed";
            }
        }
        return null;
    }

    static Conn getConn(int seat) throws IOException {
        Conn c = dialled.get(seat);
        if (c != null) return c;
        long deadline = System.currentTimeMillis() + PEER_TIMEOUT_MS;
        long pause = 10;
        boolean asked = false;
        while (true) {
            try {
                Socket s = new Socket();
                s.connect(new InetSocketAddress(seatHost.get(seat), seatPort.get(seat)), PEER_TIMEOUT_MS);
                s.setTcpNoDelay(true);
                c = new Conn();
                c.s = s;
                c.in = new BufferedReader(new InputStreamReader(s.getInputStream(), "UTF-8"));
                c.out = new PrintWriter(new OutputStreamWriter(s.getOutputStream(), "UTF-8"), false);
                dialled.put(seat, c);
                System.out.println("dialled " + seatNick.get(seat) + " at " + seatHost.get(seat) + ":" + seatPort.get(seat));
                return c;
            } catch (IOException e) {
                System.out.println("cannot dial " + seatNick.get(seat) + ": " + e.getMessage());
                if (!asked && joined.getCount() == 0 && offerPhase) {
                    asked = true;
                    if (tableOutList().contains(seatNick.get(seat))) {
                        knownOut.add(seat);
                        throw new IOException(seatNick.get(seat) + " is out and gone");
                    }
                }
                if (System.currentTimeMillis() > deadline) {
                    if (tableOutList().contains(seatNick.get(seat))) knownOut.add(seat);
                    throw new IOException("cannot reach " + seatNick.get(seat) + " within 10 s: " + e.getMessage());
                }
                sleep(pause);
                pause = Math.min(pause * 2, 200);
            }
        }
    }

    static void closeConn(int seat) {
        Conn c = dialled.remove(seat);
        if (c != null) {
            try { c.s.close(); } catch (IOException e) { }
        }
    }

    static void send(PrintWriter w, String msg) {
        synchronized (w) {
            w.print(msg + "\n");   // one write: the whole line goes out on flush
            w.flush();
        }
    }

    static void sleep(long ms) {
        try { Thread.sleep(ms); } catch (InterruptedException e) { }
    }

    // =====================================================================
    // inbound connections (from players to our right)
    // =====================================================================

    static void acceptLoop(ServerSocket server) {
        while (true) {
            try {
                Socket s = server.accept();
                s.setTcpNoDelay(true);
                Thread t = new Thread(() -> handle(s), "in-" + s.getPort());
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                System.out.println("accept failed: " + e.getMessage());
                return;
            }
        }
    }

    static void handle(Socket s) {
        try {
            BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), "UTF-8"));
            PrintWriter out = new PrintWriter(new OutputStreamWriter(s.getOutputStream(), "UTF-8"), false);
            String line;
            while ((line = in.readLine()) != null) {
                line = line.trim();
                if (line.isEmpty()) continue;
                System.out.println("in " + s.getPort() + " -> " + line);
                Object o;
                try {
                    o = Json.parse(line);
                } catch (Exception e) {
                    send(out, "{\"result\":\"error\",\"message\":\"not a JSON object\"}");
                    continue;
                }
                if (!(o instanceof Map)) {
                    send(out, "{\"result\":\"error\",\"message\":\"not a JSON object\"}");
                    continue;
                }
                Map<String, Object> m = (Map<String, Object>) o;
                Object cmd = m.get("cmd");
                if (cmd == null) {
                    if (m.containsKey("result")) continue;   // never answer a reply
                    send(out, "{\"result\":\"error\",\"message\":\"a message needs \\\"cmd\\\" or \\\"result\\\"\"}");
                    continue;
                }
                // a request may come before we have read our own join reply
                try { joined.await(); } catch (InterruptedException e) { }
                if (cmd.equals("your_turn")) {
                    boolean o2;
                    synchronized (LOCK) { o2 = amOut; }
                    if (o2) {
                        send(out, "{\"result\":\"out\"}");
                    } else {
                        send(out, "{\"result\":\"ok\"}");
                        events.add("draw");
                    }
                } else if (cmd.equals("offer")) {
                    handleOffer(m, in, out, s);
                } else if (cmd.equals("pick")) {
                    send(out, "{\"result\":\"error\",\"message\":\"pick without an accepted offer\"}");
                } else {
                    send(out, "{\"result\":\"error\",\"message\":\"unknown cmd '" + cmd + "'\"}");
                }
            }
        } catch (IOException e) {
            System.out.println("inbound connection error: " + e.getMessage());
        } catch (RuntimeException e) {
            // a message we could not make sense of (a card that is not a card, ...)
            System.out.println("inbound connection: bad message: " + e);
        }
        try { s.close(); } catch (IOException e) { }
    }

    static void handleOffer(Map<String, Object> m, BufferedReader in, PrintWriter out, Socket s) throws IOException {
        Object nc = m.get("num_cards");
        if (!(nc instanceof Number) || nc instanceof Double) {
            send(out, "{\"result\":\"error\",\"message\":\"num_cards must be an integer\"}");
            return;
        }
        int numCards = ((Number) nc).intValue();
        if (numCards < 0 || numCards > 53) {
            send(out, "{\"result\":\"error\",\"message\":\"num_cards " + numCards + " is not between 0 and 53\"}");
            return;
        }
        boolean isOut, empty;
        synchronized (LOCK) {
            offerPhase = true;   // any offer means the draws are over
            isOut = amOut;
            empty = hand.isEmpty();
        }
        if (!isOut && empty) {
            goOut();   // waits for the table's ok
            synchronized (LOCK) { isOut = amOut; }
        }
        if (isOut) {
            send(out, "{\"result\":\"out\"}");
            return;
        }
        send(out, "{\"result\":\"ok\"}");
        if (numCards > 0) {
            // 6.2: an offerer that did not say "stream": true may read one
            // message per recv, so leave a little gap between ok and pick
            if (!Boolean.TRUE.equals(m.get("stream"))) sleep(50);
            // pick a card at random, pick again on error
            for (int tries = 0; tries < 8; tries++) {
                int idx = rnd.nextInt(numCards);
                send(out, "{\"cmd\":\"pick\",\"card_num\":" + idx + "}");
                System.out.println("picked card_num " + idx + " of " + numCards);
                s.setSoTimeout(PEER_TIMEOUT_MS);
                String line;
                try {
                    line = in.readLine();
                } finally {
                    s.setSoTimeout(0);
                }
                if (line == null) throw new IOException("the offerer closed the connection before giving the card");
                System.out.println("in " + s.getPort() + " -> " + line);
                Map<String, Object> r;
                try {
                    r = (Map<String, Object>) Json.parse(line.trim());
                } catch (Exception e) {
                    throw new IOException("garbage instead of a card: " + line);
                }
                if ("ok".equals(r.get("result")) && r.get("card") != null) {
                    addCard(toCard(r.get("card")));
                    break;
                }
                System.out.println("pick refused: " + r.get("message"));
            }
        }
        events.add("offer");   // we hold the turn now
    }

    // =====================================================================
    // a small JSON parser (objects, arrays, strings, numbers, true/false/null)
    // =====================================================================

    static class Json {
        String s;
        int i = 0;

        static Object parse(String text) {
            Json p = new Json();
            p.s = text;
            Object v = p.value();
            p.ws();
            if (p.i != p.s.length()) throw new RuntimeException("extra data at " + p.i);
            return v;
        }

        void ws() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++;
        }

        Object value() {
            ws();
            if (i >= s.length()) throw new RuntimeException("unexpected end");
            char c = s.charAt(i);
            if (c == '{') {
                i++;
                Map<String, Object> m = new LinkedHashMap<>();
                ws();
                if (s.charAt(i) == '}') { i++; return m; }
                while (true) {
                    ws();
                    String k = str();
                    ws();
                    if (s.charAt(i) != ':') throw new RuntimeException("expected :");
                    i++;
                    m.put(k, value());
                    ws();
                    char d = s.charAt(i++);
                    if (d == '}') return m;
                    if (d != ',') throw new RuntimeException("expected , or }");
                }
            }
            if (c == '[') {
                i++;
                List<Object> l = new ArrayList<>();
                ws();
                if (s.charAt(i) == ']') { i++; return l; }
                while (true) {
                    l.add(value());
                    ws();
                    char d = s.charAt(i++);
                    if (d == ']') return l;
                    if (d != ',') throw new RuntimeException("expected , or ]");
                }
            }
            if (c == '"') return str();
            if (s.startsWith("true", i)) { i += 4; return Boolean.TRUE; }
            if (s.startsWith("false", i)) { i += 5; return Boolean.FALSE; }
            if (s.startsWith("null", i)) { i += 4; return null; }
            int st = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
            String num = s.substring(st, i);
            if (num.isEmpty()) throw new RuntimeException("bad value at " + st);
            if (num.contains(".") || num.contains("e") || num.contains("E")) return Double.parseDouble(num);
            return Long.parseLong(num);
        }

        String str() {
            if (s.charAt(i) != '"') throw new RuntimeException("expected string");
            i++;
            StringBuilder sb = new StringBuilder();
            while (true) {
                char c = s.charAt(i++);
                if (c == '"') return sb.toString();
                if (c == '\\') {
                    char e = s.charAt(i++);
                    switch (e) {
                        case 'n': sb.append('\n'); break;
                        case 't': sb.append('\t'); break;
                        case 'r': sb.append('\r'); break;
                        case 'b': sb.append('\b'); break;
                        case 'f': sb.append('\f'); break;
                        case 'u': sb.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
                        default: sb.append(e);
                    }
                } else {
                    sb.append(c);
                }
            }
        }
    }
}
