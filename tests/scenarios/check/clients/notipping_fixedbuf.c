/*
 * No Tipping client for the course server.
 *
 * Usage: ./notipping_fixedbuf HOST PORT NAME SEAT
 *
 * Protocol (handout): every message is COMMAND:ARG1:ARG2...;  -- spacing and
 * line breaks are irrelevant, only the colons and semicolons matter.
 *
 *   C->S  JOINREQUEST:<handle>:<playernumber>;
 *   S->C  GRANTED;  or  DENIED;   (denied: "wait for the game to begin")
 *   S->C  BEGIN:<gamenum>:<maxweight>;
 *   S->C  ROUND:<r.p>:ADD:<my weights>:<their weights>:<21 numbers>;
 *   C->S  ADD:<weight>:<position>;
 *   S->C  ROUND:<r.p>:REMOVE:<21 numbers>;
 *   C->S  REMOVE:<position>;
 *   S->C  INVALID;  WIN;  LOSE;
 *
 * The lever (docs/protocols/notipping.md): positions -10..10, the board
 * weighs 3 at position 0, supports at -3 and -1, a 3 kg block starts at -4
 * (it is in the state).  It tips when
 *     L = sum w*(x+3) < 0   or   R = sum w*(x+1) > 0
 * (board included).  Exactly 0 is fine.
 *
 * Reading: a fixed char buf[256]; recv appends to it, every complete
 * message (up to a ';') is taken out and handled, the rest is kept.
 */

#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#define NPOS 21            /* positions -10..10 */
#define MAXFIELDS 16

static int sock = -1;
static int max_weight = 7;
static int game_over = 0;

static void send_msg(const char *msg)
{
    size_t len = strlen(msg);
    size_t off = 0;
    while (off < len) {
        ssize_t n = send(sock, msg + off, len - off, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            perror("send");
            printf("connection lost while sending, exiting\n");
            close(sock);
            exit(0);
        }
        off += (size_t)n;
    }
}

/* board torques, the board itself (3 at 0) included */
static void torques(const int state[NPOS], long *left, long *right)
{
    long l = 3 * (0 + 3), r = 3 * (0 + 1);
    for (int i = 0; i < NPOS; i++) {
        int x = i - 10;
        l += (long)state[i] * (x + 3);
        r += (long)state[i] * (x + 1);
    }
    *left = l;
    *right = r;
}

static int tips(const int state[NPOS])
{
    long l, r;
    torques(state, &l, &r);
    return l < 0 || r > 0;
}

/* parse a list of numbers separated by whitespace; returns the count */
static int parse_numbers(const char *s, int *out, int max)
{
    int n = 0;
    const char *p = s;
    while (*p && n < max) {
        while (*p && isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p) { /* not a number: skip a character */
            p++;
            continue;
        }
        out[n++] = (int)v;
        p = end;
    }
    return n;
}

/* trim leading/trailing whitespace in place */
static char *trim(char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/* number of safe removals in a REMOVE-phase state */
static int safe_removals(int state[NPOS])
{
    int count = 0;
    for (int i = 0; i < NPOS; i++) {
        if (state[i] == 0)
            continue;
        int w = state[i];
        state[i] = 0;
        if (!tips(state))
            count++;
        state[i] = w;
    }
    return count;
}

/* number of safe placements for a hand */
static int safe_adds(int state[NPOS], const int *hand, int nhand)
{
    int count = 0;
    for (int k = 0; k < nhand; k++) {
        for (int i = 0; i < NPOS; i++) {
            if (state[i] != 0)
                continue;
            state[i] = hand[k];
            if (!tips(state))
                count++;
            state[i] = 0;
        }
    }
    return count;
}

static void play_add(int state[NPOS], const int *mine, int nmine,
                     const int *theirs, int ntheirs)
{
    int best_w = -1, best_pos = 0;
    long best_score = 0;

    for (int k = 0; k < nmine; k++) {
        int w = mine[k];
        for (int i = 0; i < NPOS; i++) {
            if (state[i] != 0)
                continue;
            state[i] = w;
            if (!tips(state)) {
                long l, r;
                torques(state, &l, &r);
                long slack = l < -r ? l : -r;
                /* fewer safe replies for the opponent is better, then more
                 * slack for us, then heavier weights first */
                long score = -1000000L * (ntheirs ? safe_adds(state, theirs, ntheirs) : 0)
                             + 100L * slack + w;
                if (best_w < 0 || score > best_score) {
                    best_w = w;
                    best_pos = i - 10;
                    best_score = score;
                }
            }
            state[i] = 0;
        }
    }
    if (best_w < 0) {
        /* every placement tips: still make an allowed move */
        for (int i = 0; i < NPOS && best_w < 0; i++) {
            if (state[i] == 0 && nmine > 0) {
                best_w = mine[0];
                best_pos = i - 10;
            }
        }
        printf("no safe placement, we will tip\n");
    }
    if (best_w < 0) { /* nothing we can do (no weights?) */
        best_w = 1;
        best_pos = 0;
    }
    char msg[64];
    snprintf(msg, sizeof msg, "ADD:%d:%d;\n", best_w, best_pos);
    printf("  placing %d at %d\n", best_w, best_pos);
    send_msg(msg);
}

static void play_remove(int state[NPOS])
{
    int best_pos = 99;
    int best_replies = 0;
    int any_pos = 99;

    for (int i = 0; i < NPOS; i++) {
        if (state[i] == 0)
            continue;
        if (any_pos == 99)
            any_pos = i - 10;
        int w = state[i];
        state[i] = 0;
        if (!tips(state)) {
            int replies = safe_removals(state);
            if (best_pos == 99 || replies < best_replies) {
                best_pos = i - 10;
                best_replies = replies;
            }
        }
        state[i] = w;
    }
    if (best_pos == 99) {
        printf("no safe removal, we will tip\n");
        best_pos = any_pos == 99 ? 0 : any_pos;
    }
    char msg[64];
    snprintf(msg, sizeof msg, "REMOVE:%d;\n", best_pos);
    printf("  removing the block at %d\n", best_pos);
    send_msg(msg);
}

/* split msg on ':' keeping empty fields */
static int split_fields(char *msg, char **fields, int max)
{
    int n = 0;
    char *p = msg;
    fields[n++] = p;
    while (*p && n < max) {
        if (*p == ':') {
            *p = '\0';
            fields[n++] = p + 1;
        }
        p++;
    }
    for (int i = 0; i < n; i++)
        fields[i] = trim(fields[i]);
    return n;
}

static void handle_message(char *raw)
{
    char *msg = trim(raw);
    if (*msg == '\0')
        return;

    char *fields[MAXFIELDS];
    int nf = split_fields(msg, fields, MAXFIELDS);
    char *cmd = fields[0];

    if (strcasecmp(cmd, "GRANTED") == 0) {
        printf("seat granted, waiting for the game to begin\n");
    } else if (strcasecmp(cmd, "DENIED") == 0) {
        /* handout: "The client should then wait for the game to begin." */
        printf("join request denied, waiting for the game to begin\n");
    } else if (strcasecmp(cmd, "BEGIN") == 0) {
        if (nf >= 3)
            max_weight = atoi(fields[2]);
        printf("game %s begins, max weight %d\n", nf >= 2 ? fields[1] : "?", max_weight);
    } else if (strcasecmp(cmd, "ROUND") == 0) {
        if (nf < 4) {
            printf("bad ROUND message, ignored\n");
            return;
        }
        int state[NPOS];
        memset(state, 0, sizeof state);
        int ns = parse_numbers(fields[nf - 1], state, NPOS);
        if (ns != NPOS)
            printf("warning: state has %d numbers, not %d\n", ns, NPOS);
        printf("round %s %s\n", fields[1], fields[2]);
        if (strcasecmp(fields[2], "ADD") == 0) {
            int mine[32], theirs[32];
            int nmine = nf >= 6 ? parse_numbers(fields[3], mine, 32) : 0;
            int ntheirs = nf >= 6 ? parse_numbers(fields[4], theirs, 32) : 0;
            play_add(state, mine, nmine, theirs, ntheirs);
        } else {
            play_remove(state);
        }
    } else if (strcasecmp(cmd, "INVALID") == 0) {
        printf("server says our move was INVALID\n");
    } else if (strcasecmp(cmd, "WIN") == 0) {
        printf("we WIN\n");
        game_over = 1;
    } else if (strcasecmp(cmd, "LOSE") == 0) {
        printf("we LOSE\n");
        game_over = 1;
    } else {
        printf("unknown message: %s\n", cmd);
    }
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s HOST PORT NAME SEAT\n", argv[0]);
        return 2;
    }
    const char *host = argv[1];
    const char *port = argv[2];
    const char *name = argv[3];
    int seat = atoi(argv[4]);

    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);

    struct addrinfo hints, *res, *ai;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        fprintf(stderr, "getaddrinfo: %s\n", gai_strerror(rc));
        return 1;
    }
    for (ai = res; ai; ai = ai->ai_next) {
        sock = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (sock < 0)
            continue;
        if (connect(sock, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        close(sock);
        sock = -1;
    }
    freeaddrinfo(res);
    if (sock < 0) {
        fprintf(stderr, "cannot connect to %s:%s\n", host, port);
        return 1;
    }
    printf("connected to %s:%s as %s, asking for seat %d\n", host, port, name, seat);

    char join[128];
    snprintf(join, sizeof join, "JOINREQUEST:%s:%d;\n", name, seat);
    send_msg(join);

    char buf[256];
    size_t len = 0;

    while (!game_over) {
        if (len >= sizeof buf - 1) {
            /* no ';' in 255 bytes: not a message we know, drop it */
            printf("message too long, dropped\n");
            len = 0;
        }
        ssize_t n = recv(sock, buf + len, sizeof buf - 1 - len, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            perror("recv");
            break;
        }
        if (n == 0) {
            printf("server closed the connection\n");
            break;
        }
        len += (size_t)n;
        buf[len] = '\0';

        /* take out every complete message */
        char *start = buf;
        char *semi;
        while (!game_over && (semi = memchr(start, ';', len - (size_t)(start - buf))) != NULL) {
            *semi = '\0';
            handle_message(start);
            start = semi + 1;
        }
        if (game_over)
            break;
        len -= (size_t)(start - buf);
        memmove(buf, start, len);
        buf[len] = '\0';
    }

    close(sock);
    printf("done\n");
    return 0;
}
