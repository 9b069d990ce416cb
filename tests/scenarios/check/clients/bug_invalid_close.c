/* No Tipping client
 * usage: ./notipping HOST PORT NAME SEAT
 *
 * protocol: COMMAND:ARG:ARG;  -- messages end at ';', whitespace doesn't matter
 * physics: board 3kg at 0, supports at -3 and -1
 *   L = sum w*(x+3) must stay >= 0, R = sum w*(x+1) must stay <= 0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <unistd.h>
#include <netdb.h>
#include <sys/socket.h>
#include <netinet/in.h>

#define BUFSIZE 4096
#define MAXF 10

int sock;
int maxweight = 7;

void send_msg(const char *m)
{
    printf(">> %s\n", m);
    fflush(stdout);
    if (send(sock, m, strlen(m), 0) < 0) {
        perror("send");
        exit(1);
    }
}

/* trims spaces in place, returns start */
char *trim(char *s)
{
    char *e;
    while (*s && isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = 0;
    return s;
}

/* split on ':' keeping empty fields (strtok would drop them!) */
int split(char *msg, char **f)
{
    int n = 0;
    char *p = msg;
    for (;;) {
        char *c = strchr(p, ':');
        if (c != NULL)
            *c = 0;
        if (n < MAXF)
            f[n++] = trim(p);
        if (c == NULL)
            break;
        p = c + 1;
    }
    return n;
}

int parse_list(char *s, int *out, int max)
{
    int n = 0;
    char *end;
    while (n < max) {
        long v = strtol(s, &end, 10);
        if (end == s)
            break;
        out[n++] = (int)v;
        s = end;
    }
    return n;
}

void torque(int *state, int *L, int *R)
{
    int i;
    *L = 3 * 3;
    *R = 3 * 1;
    for (i = 0; i < 21; i++) {
        int x = i - 10;
        *L += state[i] * (x + 3);
        *R += state[i] * (x + 1);
    }
}

void do_add(int *state, int *mine, int nmine)
{
    int i, k, L, R;
    int bw = -1, bp = 0, bscore = -1000000;
    char out[64];

    for (k = 0; k < nmine; k++) {
        for (i = 0; i < 21; i++) {
            int score;
            if (state[i] != 0)
                continue;
            state[i] = mine[k];
            torque(state, &L, &R);
            state[i] = 0;
            if (L < 0 || R > 0)
                continue;
            /* keep as much room as possible, heavy weights first */
            score = (L < -R ? L : -R) + mine[k] * 3;
            if (score > bscore) {
                bscore = score;
                bw = mine[k];
                bp = i - 10;
            }
        }
    }
    if (bw < 0) {
        /* everything tips, just put something somewhere */
        bw = mine[0];
        for (i = 0; i < 21; i++)
            if (state[i] == 0) {
                bp = i - 10;
                break;
            }
        printf("no safe add :(\n");
    }
    sprintf(out, "ADD:%d:%d;\n", bw, bp);
    send_msg(out);
}

void do_remove(int *state)
{
    int i, L, R, w;
    int bp = 99, any = 99, bscore = -1000000;
    char out[64];

    for (i = 0; i < 21; i++) {
        int score;
        if (state[i] == 0)
            continue;
        if (any == 99)
            any = i - 10;
        w = state[i];
        state[i] = 0;
        torque(state, &L, &R);
        state[i] = w;
        if (L < 0 || R > 0)
            continue;
        score = (L < -R ? L : -R);
        if (score > bscore) {
            bscore = score;
            bp = i - 10;
        }
    }
    if (bp == 99) {
        printf("no safe remove :(\n");
        bp = any;
    }
    sprintf(out, "REMOVE:%d;\n", bp);
    send_msg(out);
}

/* returns 1 when the game is over */
int handle(char *msg)
{
    char *f[MAXF];
    int n, state[21], mine[16], nmine;

    n = split(msg, f);
    if (f[0][0] == 0)
        return 0;
    printf("<< %s\n", f[0]);

    if (strcmp(f[0], "GRANTED") == 0) {
        printf("seat granted, waiting for the game\n");
    } else if (strcmp(f[0], "DENIED") == 0) {
        printf("seat denied\n");
        close(sock);
        exit(1);
    } else if (strcmp(f[0], "BEGIN") == 0) {
        if (n >= 3)
            maxweight = atoi(f[2]);
        printf("game %s begins, maxweight %d\n", n >= 2 ? f[1] : "?", maxweight);
    } else if (strcmp(f[0], "ROUND") == 0) {
        memset(state, 0, sizeof(state));
        parse_list(f[n - 1], state, 21);
        printf("round %s %s\n", f[1], f[2]);
        if (strcmp(f[2], "ADD") == 0) {
            nmine = parse_list(f[3], mine, 16);
            do_add(state, mine, nmine);
        } else {
            do_remove(state);
        }
    } else if (strcmp(f[0], "INVALID") == 0) {
        printf("server said INVALID, we lost\n");
        close(sock);
        exit(0);
    } else if (strcmp(f[0], "WIN") == 0) {
        printf("WE WIN\n");
        return 1;
    } else if (strcmp(f[0], "LOSE") == 0) {
        printf("we lose\n");
        return 1;
    } else {
        printf("unknown message %s\n", f[0]);
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct hostent *he;
    struct sockaddr_in addr;
    char buf[BUFSIZE + 1];
    int len = 0;
    char join[128];

    if (argc != 5) {
        fprintf(stderr, "usage: %s HOST PORT NAME SEAT\n", argv[0]);
        return 2;
    }
    he = gethostbyname(argv[1]);
    if (!he) {
        fprintf(stderr, "bad host\n");
        return 1;
    }
    sock = socket(AF_INET, SOCK_STREAM, 0);
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_port = htons(atoi(argv[2]));
    memcpy(&addr.sin_addr, he->h_addr_list[0], he->h_length);
    if (connect(sock, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
        perror("connect");
        return 1;
    }
    snprintf(join, sizeof(join), "JOINREQUEST:%s:%s;\n", argv[3], argv[4]);
    send_msg(join);

    for (;;) {
        char *semi;
        int r = recv(sock, buf + len, BUFSIZE - len, 0);
        if (r <= 0) {
            printf("connection closed\n");
            break;
        }
        len += r;
        buf[len] = 0;
        while ((semi = strchr(buf, ';')) != NULL) {
            int used = semi - buf + 1;
            *semi = 0;
            if (handle(buf)) {
                close(sock);
                return 0;
            }
            memmove(buf, buf + used, len - used);
            len -= used;
            buf[len] = 0;
        }
    }
    close(sock);
    return 0;
}
