/*
 * inf-3701 exercise one: Old Maid ring peer.
 *
 * Single threaded: one select() loop over the table socket, the listening
 * socket and the sockets our right neighbours dialled to us.  When we hold
 * the turn we talk to the table / our left neighbour with blocking
 * request-reply calls (each with a timeout).
 *
 * JSON is done by hand with strstr/sscanf (no library on the lab machines).
 *
 *   gcc -O1 -Wall -o peer oldmaid_select.c
 *   ./peer --nick alice --table 127.0.0.1:9898
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <errno.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/select.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#define MAXP 8
#define MAXIN 64
#define BUFSZ 1024
#define PEER_TIMEOUT_MS 10000

struct card { char v[8]; char s[16]; };
struct seat { char host[64]; int port; char nick[40]; int fd; int out; };

static char my_nick[40];
static int table_fd = -1, listen_fd = -1;
static char my_host[64];
static int my_port;

static struct seat seats[MAXP];
static int nseats, me = -1;

static int in_fds[MAXIN];
static int n_in;

static struct card hand[64];
static int hand_n;

static int phase_offer;      /* 0 = draw phase, 1 = offer phase */
static int out_acked;        /* the table said ok to our going out */
static int game_over, aborted, lost;
static char over_msg[BUFSZ];
static long long last_activity;

static long long now_ms(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/* ---------------------------------------------------------------- json */

/* pointer to the value of "key": ... or NULL */
static const char *jfind(const char *msg, const char *key)
{
    char pat[64];
    const char *p = msg, *q;
    snprintf(pat, sizeof pat, "\"%s\"", key);
    while ((p = strstr(p, pat)) != NULL) {
        q = p + strlen(pat);
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q == ':') {
            q++;
            while (*q == ' ' || *q == '\t')
                q++;
            return q;
        }
        p = q;
    }
    return NULL;
}

static int jstr(const char *msg, const char *key, char *out, int n)
{
    const char *p = jfind(msg, key);
    int i = 0;
    out[0] = 0;
    if (!p || *p != '"')
        return 0;
    p++;
    while (*p && *p != '"' && i < n - 1)
        out[i++] = *p++;
    out[i] = 0;
    return 1;
}

static int jint(const char *msg, const char *key, int *v)
{
    const char *p = jfind(msg, key);
    if (!p)
        return 0;
    return sscanf(p, "%d", v) == 1;
}

static int jcard(const char *msg, struct card *c)
{
    const char *p = jfind(msg, "card");
    if (!p)
        return 0;
    return sscanf(p, "[ \"%7[^\"]\" , \"%15[^\"]\" ]", c->v, c->s) == 2;
}

/* is "nick" in the list "key":[...] ? */
static int jlist_has(const char *msg, const char *key, const char *nick)
{
    const char *p = jfind(msg, key), *e;
    char pat[48];
    if (!p || *p != '[')
        return 0;
    e = strchr(p, ']');
    if (!e)
        return 0;
    snprintf(pat, sizeof pat, "\"%s\"", nick);
    p = strstr(p, pat);
    return p && p < e;
}

/* ---------------------------------------------------------------- net */

static void nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int dial(const char *host, int port)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    if (strncmp(host, "::ffff:", 7) == 0)
        host += 7;
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
        close(fd);
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        close(fd);
        return -1;
    }
    nodelay(fd);
    return fd;
}

/* send one message (adds the newline) in one send() */
static int send_msg(int fd, const char *msg)
{
    char out[BUFSZ + 2];
    int n = snprintf(out, sizeof out, "%s\n", msg);
    printf("  -> [%d] %s\n", fd, msg);
    if (send(fd, out, n, 0) != n)
        return -1;
    return 0;
}

/*
 * Receive one message.
 * First version did one recv() per message, but TCP can glue two
 * messages together (the discard reply and the game_over notice came in
 * one recv and I lost the notice) or cut one in pieces, so now every fd
 * has its own buffer and we split on '\n'.
 * returns 1 ok, 0 timeout, -1 closed/error
 */
#define MAXFD 256
#define RBUF 4096
static char rbuf[MAXFD][RBUF];
static int rlen[MAXFD];

static int has_line(int fd)
{
    return fd >= 0 && fd < MAXFD && memchr(rbuf[fd], '\n', rlen[fd]) != NULL;
}

static int pop_line(int fd, char *buf)
{
    char *nl;
    int n;
    while ((nl = memchr(rbuf[fd], '\n', rlen[fd])) != NULL) {
        n = nl - rbuf[fd];
        if (n > BUFSZ - 1)
            n = BUFSZ - 1;      /* too long, cut it (never happens) */
        memcpy(buf, rbuf[fd], n);
        buf[n] = 0;
        rlen[fd] -= (nl - rbuf[fd]) + 1;
        memmove(rbuf[fd], nl + 1, rlen[fd]);
        while (n > 0 && (buf[n - 1] == '\r' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
            buf[--n] = 0;
        if (n == 0)
            continue;           /* blank line */
        printf("  <- [%d] %s\n", fd, buf);
        last_activity = now_ms();
        return 1;
    }
    return 0;
}

static int recv_msg(int fd, char *buf, int timeout_ms)
{
    fd_set rs;
    struct timeval tv;
    int n;
    long long end = now_ms() + timeout_ms, left;

    if (fd < 0 || fd >= MAXFD)
        return -1;
    for (;;) {
        if (pop_line(fd, buf))
            return 1;
        left = end - now_ms();
        if (left < 0)
            left = 0;
        FD_ZERO(&rs);
        FD_SET(fd, &rs);
        tv.tv_sec = left / 1000;
        tv.tv_usec = (left % 1000) * 1000;
        if (select(fd + 1, &rs, NULL, NULL, &tv) <= 0)
            return 0;
        if (rlen[fd] >= RBUF - 1)
            rlen[fd] = 0;       /* garbage without newline, throw away */
        n = recv(fd, rbuf[fd] + rlen[fd], RBUF - 1 - rlen[fd], 0);
        if (n <= 0)
            return -1;
        rlen[fd] += n;
    }
}

/* ---------------------------------------------------------------- table */

static void table_notice(const char *msg)
{
    char cmd[32];
    jstr(msg, "cmd", cmd, sizeof cmd);
    if (strcmp(cmd, "game_over") == 0) {
        game_over = 1;
        if (strstr(msg, "\"aborted\""))
            aborted = 1;
        snprintf(over_msg, sizeof over_msg, "%s", msg);
    }
}

static void finish(void);

/* request to the table; waits for its reply, skipping notices */
static int table_req(const char *req, char *reply)
{
    long long end;
    int r;
    if (send_msg(table_fd, req) < 0) {
        printf("%s: the table closed the connection\n", my_nick);
        exit(1);
    }
    end = now_ms() + PEER_TIMEOUT_MS;
    while (now_ms() < end) {
        r = recv_msg(table_fd, reply, (int)(end - now_ms()));
        if (r < 0) {
            fprintf(stderr, "%s: the table closed the connection\n", my_nick);
            if (game_over)
                finish();
            exit(1);
        }
        if (r == 0)
            break;
        if (jfind(reply, "result"))
            return 1;
        table_notice(reply);
    }
    fprintf(stderr, "%s: the table did not answer %s\n", my_nick, req);
    exit(1);
}

static void give_up(const char *nick, const char *why)
{
    char req[BUFSZ], rep[BUFSZ];
    if (nick)
        snprintf(req, sizeof req, "{\"cmd\":\"give_up\",\"nick\":\"%s\",\"reason\":\"%s\"}", nick, why);
    else
        snprintf(req, sizeof req, "{\"cmd\":\"give_up\",\"reason\":\"%s\"}", why);
    send_msg(table_fd, req);
    recv_msg(table_fd, rep, 2000);
    fprintf(stderr, "%s: %s %s\n", my_nick, nick ? nick : "", why);
    exit(1);
}

/* ask the table for status; returns 1 if seat s is listed out */
static int status_out(int s)
{
    char rep[BUFSZ], st[16];
    table_req("{\"cmd\":\"status\"}", rep);
    jstr(rep, "state", st, sizeof st);
    if (strcmp(st, "over") == 0 || strcmp(st, "aborted") == 0) {
        game_over = 1;
        if (strcmp(st, "aborted") == 0)
            aborted = 1;
        if (!over_msg[0])
            snprintf(over_msg, sizeof over_msg, "%s", rep);
    }
    if (s >= 0 && jlist_has(rep, "out", seats[s].nick)) {
        seats[s].out = 1;
        return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------- cards */

static int is_black(const char *s) { return !strcasecmp(s, "spades") || !strcasecmp(s, "clubs"); }
static int is_red(const char *s) { return !strcasecmp(s, "hearts") || !strcasecmp(s, "diamonds"); }

static int is_pair(struct card *a, struct card *b)
{
    if (!strcasecmp(a->v, "joker") || !strcasecmp(b->v, "joker"))
        return 0;
    if (strcasecmp(a->v, b->v) != 0)
        return 0;
    if (!strcasecmp(a->s, b->s))
        return 0;
    return (is_black(a->s) && is_black(b->s)) || (is_red(a->s) && is_red(b->s));
}

/* put a new card at a random place in the hand */
static void add_card(struct card *c)
{
    int pos = rand() % (hand_n + 1), i;
    for (i = hand_n; i > pos; i--)
        hand[i] = hand[i - 1];
    hand[pos] = *c;
    hand_n++;
}

static void remove_card(int i)
{
    for (; i < hand_n - 1; i++)
        hand[i] = hand[i + 1];
    hand_n--;
}

static void discard_pairs(void)
{
    int i, j, found;
    char req[BUFSZ], rep[BUFSZ], res[16];
    do {
        found = 0;
        for (i = 0; i < hand_n && !found; i++)
            for (j = i + 1; j < hand_n && !found; j++)
                if (is_pair(&hand[i], &hand[j])) {
                    int last = (hand_n == 2 && phase_offer);
                    snprintf(req, sizeof req,
                             "{\"cmd\":\"discard\",\"cards\":[[\"%s\",\"%s\"],[\"%s\",\"%s\"]],\"last_cards\":\"%s\"}",
                             hand[i].v, hand[i].s, hand[j].v, hand[j].s, last ? "true" : "false");
                    table_req(req, rep);
                    jstr(rep, "result", res, sizeof res);
                    if (strcmp(res, "ok") != 0)
                        printf("discard refused?! %s\n", rep);
                    remove_card(j);
                    remove_card(i);
                    if (last && strcmp(res, "ok") == 0)
                        out_acked = 1;
                    found = 1;
                }
    } while (found);
}

static void go_out(void)
{
    char rep[BUFSZ];
    if (out_acked)
        return;
    table_req("{\"cmd\":\"out_of_cards\"}", rep);
    out_acked = 1;
    printf("*** I am out\n");
}

/* ---------------------------------------------------------------- ring */

/* wait for a neighbour's reply on fd.
 * returns 1 reply, -1 closed, 2 seat listed out by the table, 0 timeout */
static int wait_peer(int fd, int s, char *reply)
{
    long long end = now_ms() + PEER_TIMEOUT_MS;
    int r;
    while (now_ms() < end) {
        r = recv_msg(fd, reply, 200);
        if (r != 0)
            return r;
        if (s >= 0 && status_out(s))
            return 2;
        if (game_over)
            return 3;
    }
    return 0;
}

static int connect_seat(int s)
{
    long long end = now_ms() + PEER_TIMEOUT_MS;
    int first = 1;
    if (seats[s].fd >= 0)
        return seats[s].fd;
    while (now_ms() < end) {
        seats[s].fd = dial(seats[s].host, seats[s].port);
        if (seats[s].fd >= 0) {
            rlen[seats[s].fd] = 0;
            printf("connected to %s (fd %d)\n", seats[s].nick, seats[s].fd);
            return seats[s].fd;
        }
        if (first && status_out(s))
            return -2;
        first = 0;
        usleep(50000);
    }
    return -1;
}

/*
 * Send req (your_turn or offer) to the next player who is in.
 * Returns the seat that said ok (its fd is seats[s].fd), or -1 if
 * nobody else is in.
 */
static int to_next_in(const char *req)
{
    int i, s, fd, r, tries;
    char rep[BUFSZ], res[16];

    for (i = 1; i < nseats; i++) {
        s = (me + i) % nseats;
        if (seats[s].out)
            continue;
        for (tries = 0; tries < 2; tries++) {
            fd = connect_seat(s);
            if (fd == -2)
                break;              /* out and gone */
            if (fd < 0) {
                give_up(seats[s].nick, "cannot be reached");
            }
            if (send_msg(fd, req) < 0)
                r = -1;
            else
                r = wait_peer(fd, s, rep);
            if (r == 1) {
                jstr(rep, "result", res, sizeof res);
                if (strcmp(res, "ok") == 0)
                    return s;
                if (strcmp(res, "out") == 0) {
                    seats[s].out = 1;
                    break;
                }
                printf("strange answer from %s: %s\n", seats[s].nick, rep);
                give_up(seats[s].nick, "answered something strange");
            }
            if (r == 2)
                break;
            if (r == 3)
                return -1;
            if (r == 0)
                give_up(seats[s].nick, "did not answer within 10 s");
            /* closed */
            rlen[fd] = 0;
            close(fd);
            seats[s].fd = -1;
            if (status_out(s))
                break;
            if (game_over)
                return -1;
        }
        if (tries == 2)
            give_up(seats[s].nick, "closed its connection");
    }
    return -1;
}

static void offer_turn(void);

static void draw_turn(void)
{
    char rep[BUFSZ], res[16], msg[BUFSZ];
    struct card c;

    table_req("{\"cmd\":\"draw\"}", rep);
    jstr(rep, "result", res, sizeof res);
    if (strcmp(res, "error") == 0) {
        jstr(rep, "message", msg, sizeof msg);
        if (strncmp(msg, "the deck is empty", 17) == 0) {
            phase_offer = 1;
            if (hand_n == 0)
                go_out();
        } else {
            printf("draw refused: %s\n", msg);
        }
        return;
    }
    if (!jcard(rep, &c)) {
        printf("draw reply without card?! %s\n", rep);
        return;
    }
    add_card(&c);
    if (strcmp(res, "last_card") == 0) {
        phase_offer = 1;
        discard_pairs();
        offer_turn();
        return;
    }
    discard_pairs();
    if (to_next_in("{\"cmd\":\"your_turn\"}") < 0)
        printf("nobody to pass the draw turn to?\n");
}

/* we hold the turn in the offer phase */
static void offer_turn(void)
{
    char req[BUFSZ], rep[BUFSZ], res[16], cmd[16];
    int s, fd, k, bad = 0;

    discard_pairs();
    if (game_over)
        return;
    if (hand_n == 0) {
        go_out();
        s = to_next_in("{\"cmd\":\"offer\",\"num_cards\":0,\"stream\":true}");
        if (s >= 0)
            printf("passed the turn to %s\n", seats[s].nick);
        return;
    }
    snprintf(req, sizeof req, "{\"cmd\":\"offer\",\"num_cards\":%d,\"stream\":true}", hand_n);
    s = to_next_in(req);
    if (s < 0) {
        printf("*** nobody else is in: I hold the Old Maid\n");
        lost = 1;
        return;
    }
    fd = seats[s].fd;
    for (;;) {
        int r = wait_peer(fd, -1, rep);
        if (r != 1)
            give_up(seats[s].nick, "did not pick after ok to offer");
        jstr(rep, "cmd", cmd, sizeof cmd);
        if (strcmp(cmd, "pick") != 0 || !jint(rep, "card_num", &k)) {
            send_msg(fd, "{\"result\":\"error\",\"message\":\"expected a pick\"}");
        } else if (k < 0 || k > hand_n) {
            snprintf(req, sizeof req,
                     "{\"result\":\"error\",\"message\":\"card_num %d is not between 0 and %d\"}", k, hand_n - 1);
            send_msg(fd, req);
        } else {
            if (k == hand_n)  /* older clients count to num_cards */
                k = hand_n - 1;
            snprintf(req, sizeof req, "{\"result\":\"ok\",\"card\":[\"%s\",\"%s\"]}", hand[k].v, hand[k].s);
            send_msg(fd, req);
            remove_card(k);
            break;
        }
        if (++bad >= 8)
            give_up(seats[s].nick, "picked outside the offer 8 times");
    }
    if (hand_n == 0)
        go_out();
    (void)res;
}

/* an offer came in on fd */
static void got_offer(int fd, const char *msg)
{
    int n, k, tries;
    char req[BUFSZ], rep[BUFSZ], res[16];
    struct card c;

    if (!jint(msg, "num_cards", &n) || n < 0 || n > 53) {
        send_msg(fd, "{\"result\":\"error\",\"message\":\"bad num_cards\"}");
        return;
    }
    phase_offer = 1;
    if (out_acked) {
        send_msg(fd, "{\"result\":\"out\"}");
        return;
    }
    if (hand_n == 0) {
        go_out();
        send_msg(fd, "{\"result\":\"out\"}");
        return;
    }
    send_msg(fd, "{\"result\":\"ok\"}");
    if (n > 0) {
        for (tries = 0; tries < 8; tries++) {
            k = rand() % n;
            snprintf(req, sizeof req, "{\"cmd\":\"pick\",\"card_num\":%d}", k);
            send_msg(fd, req);
            if (wait_peer(fd, -1, rep) != 1)
                give_up(NULL, "the offerer did not answer my pick");
            jstr(rep, "result", res, sizeof res);
            if (strcmp(res, "ok") == 0 && jcard(rep, &c))
                break;
        }
        if (tries == 8)
            give_up(NULL, "could not pick a card");
        printf("picked %s %s\n", c.v, c.s);
        add_card(&c);
    }
    offer_turn();
}

static void handle_request(int fd, const char *msg)
{
    char cmd[32];
    if (msg[0] != '{') {
        send_msg(fd, "{\"result\":\"error\",\"message\":\"not a JSON object\"}");
        return;
    }
    if (!jstr(msg, "cmd", cmd, sizeof cmd)) {
        if (!jfind(msg, "result"))
            send_msg(fd, "{\"result\":\"error\",\"message\":\"a message needs \\\"cmd\\\" (a request) or \\\"result\\\" (a reply)\"}");
        return;  /* never answer a reply */
    }
    if (strcmp(cmd, "your_turn") == 0) {
        if (out_acked) {
            send_msg(fd, "{\"result\":\"out\"}");
            return;
        }
        send_msg(fd, "{\"result\":\"ok\"}");
        draw_turn();
    } else if (strcmp(cmd, "offer") == 0) {
        got_offer(fd, msg);
    } else if (strcmp(cmd, "pick") == 0) {
        send_msg(fd, "{\"result\":\"error\",\"message\":\"pick without an accepted offer\"}");
    } else {
        char err[BUFSZ];
        snprintf(err, sizeof err, "{\"result\":\"error\",\"message\":\"unknown cmd '%s'\"}", cmd);
        send_msg(fd, err);
    }
}

/* ---------------------------------------------------------------- main */

static void finish(void)
{
    char loser[40];
    int i;
    if (aborted) {
        fprintf(stderr, "%s: game aborted: %s\n", my_nick, over_msg);
        exit(1);
    }
    jstr(over_msg, "loser", loser, sizeof loser);
    if (lost || strcmp(loser, my_nick) == 0)
        printf("lost: holds the Old Maid\n");
    else
        printf("out (game over, loser %s)\n", loser);
    for (i = 0; i < n_in; i++)
        close(in_fds[i]);
    for (i = 0; i < nseats; i++)
        if (seats[i].fd >= 0)
            close(seats[i].fd);
    close(listen_fd);
    close(table_fd);
    exit(0);
}

static void parse_players(const char *msg)
{
    const char *p = jfind(msg, "players");
    int n;
    if (!p || *p != '[') {
        fprintf(stderr, "bad join reply: %s\n", msg);
        exit(1);
    }
    p++;
    while (*p && nseats < MAXP) {
        while (*p == ' ' || *p == ',')
            p++;
        if (*p != '[')
            break;
        n = 0;
        if (sscanf(p, "[ [ \"%63[^\"]\" , %d ] , \"%39[^\"]\" ]%n",
                   seats[nseats].host, &seats[nseats].port, seats[nseats].nick, &n) < 3 || n == 0)
            break;
        seats[nseats].fd = -1;
        seats[nseats].out = 0;
        if (strcmp(seats[nseats].nick, my_nick) == 0)
            me = nseats;
        nseats++;
        p += n;
    }
    if (me < 0) {
        fprintf(stderr, "I am not in the player list?! %s\n", msg);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    char table_host[64] = "127.0.0.1", buf[BUFSZ], res[16];
    int table_port = 9898, i, maxfd, r;
    struct sockaddr_in a;
    socklen_t alen;
    long long linger_until = 0, lost_since = 0;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--nick") && i + 1 < argc)
            snprintf(my_nick, sizeof my_nick, "%s", argv[++i]);
        else if (!strcmp(argv[i], "--table") && i + 1 < argc) {
            char *c = strrchr(argv[++i], ':');
            if (c) {
                *c = 0;
                snprintf(table_host, sizeof table_host, "%s", argv[i]);
                table_port = atoi(c + 1);
            }
        }
    }
    if (!my_nick[0]) {
        fprintf(stderr, "usage: %s --nick NICK --table HOST:PORT\n", argv[0]);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    srand(time(NULL) ^ getpid());

    table_fd = dial(table_host, table_port);
    if (table_fd < 0) {
        perror("connect to table");
        return 1;
    }
    /* listen on the address that faces the table */
    alen = sizeof a;
    getsockname(table_fd, (struct sockaddr *)&a, &alen);
    inet_ntop(AF_INET, &a.sin_addr, my_host, sizeof my_host);
    listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    i = 1;
    setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &i, sizeof i);
    a.sin_port = 0;
    if (bind(listen_fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(listen_fd, 16) < 0) {
        perror("listen");
        return 1;
    }
    alen = sizeof a;
    getsockname(listen_fd, (struct sockaddr *)&a, &alen);
    my_port = ntohs(a.sin_port);
    printf("%s listening on %s:%d\n", my_nick, my_host, my_port);

    snprintf(buf, sizeof buf, "{\"cmd\":\"join\",\"nick\":\"%s\",\"host\":\"%s\",\"port\":%d,\"watch\":true}",
             my_nick, my_host, my_port);
    send_msg(table_fd, buf);
    r = recv_msg(table_fd, buf, 700 * 1000);
    if (r != 1) {
        fprintf(stderr, "%s: no join reply\n", my_nick);
        return 1;
    }
    jstr(buf, "result", res, sizeof res);
    if (strcmp(res, "ok") != 0) {
        fprintf(stderr, "%s: join refused: %s\n", my_nick, buf);
        return 1;
    }
    parse_players(buf);
    printf("I am player%d of %d\n", me + 1, nseats);

    /* dial the left neighbour at once */
    if (connect_seat((me + 1) % nseats) < 0)
        give_up(seats[(me + 1) % nseats].nick, "cannot be reached");

    last_activity = now_ms();
    if (me == 0)
        draw_turn();

    for (;;) {
        fd_set rs;
        struct timeval tv;

        if (game_over && !linger_until)
            linger_until = now_ms() + 200;
        if (lost && !game_over) {
            /* wait (at most 10 s) for the table to say it is over */
            if (!lost_since)
                lost_since = now_ms();
            if (now_ms() - lost_since > PEER_TIMEOUT_MS) {
                printf("lost: holds the Old Maid (the table never said game over)\n");
                exit(0);
            }
            status_out(-1);
        }
        if (linger_until && now_ms() >= linger_until)
            finish();
        if (now_ms() - last_activity > 120000)
            give_up(NULL, "heard nothing for 120 s");

        FD_ZERO(&rs);
        FD_SET(table_fd, &rs);
        FD_SET(listen_fd, &rs);
        maxfd = table_fd > listen_fd ? table_fd : listen_fd;
        for (i = 0; i < n_in; i++) {
            FD_SET(in_fds[i], &rs);
            if (in_fds[i] > maxfd)
                maxfd = in_fds[i];
        }
        tv.tv_sec = 0;
        tv.tv_usec = 100000;
        /* a line may already be waiting in a buffer: do not block then */
        if (has_line(table_fd))
            tv.tv_usec = 0;
        for (i = 0; i < n_in; i++)
            if (has_line(in_fds[i]))
                tv.tv_usec = 0;
        if (select(maxfd + 1, &rs, NULL, NULL, &tv) < 0) {
            if (errno == EINTR)
                continue;
            perror("select");
            exit(1);
        }
        if (FD_ISSET(table_fd, &rs) || has_line(table_fd)) {
            r = recv_msg(table_fd, buf, 0);
            if (r < 0) {
                if (game_over)
                    finish();
                fprintf(stderr, "%s: the table closed the connection\n", my_nick);
                exit(1);
            }
            if (r == 1)
                table_notice(buf);
        }
        if (FD_ISSET(listen_fd, &rs)) {
            int fd = accept(listen_fd, NULL, NULL);
            if (fd >= 0) {
                if (n_in < MAXIN) {
                    nodelay(fd);
                    rlen[fd] = 0;
                    in_fds[n_in++] = fd;
                    printf("accepted fd %d\n", fd);
                } else {
                    close(fd);
                }
            }
        }
        for (i = 0; i < n_in; i++) {
            if (!FD_ISSET(in_fds[i], &rs) && !has_line(in_fds[i]))
                continue;
            r = recv_msg(in_fds[i], buf, 0);
            if (r < 0) {
                rlen[in_fds[i]] = 0;
                close(in_fds[i]);
                in_fds[i] = in_fds[--n_in];
                i--;
                continue;
            }
            if (r == 1)
                handle_request(in_fds[i], buf);
        }
    }
    return 0;
}
