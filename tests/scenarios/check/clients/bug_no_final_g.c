/* Reversi client, CS541 final project
 * usage: ./reversi HOST PORT NAME
 * strategy: corners > edges > most flips
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netdb.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#define BUFSIZE 1024

static int sock;
static char buf[BUFSIZE];
static int buflen = 0;
static int me; /* 2 = black, 1 = white (digits on the board) */

static int dx[8] = {-1, -1, -1, 0, 0, 1, 1, 1};
static int dy[8] = {-1, 0, 1, -1, 1, -1, 0, 1};

int count_flips(int board[8][8], int x, int y, int who)
{
    int d, total = 0;
    int other = (who == 1) ? 2 : 1;
    if (board[x][y] != 0)
        return 0;
    for (d = 0; d < 8; d++) {
        int cx = x + dx[d], cy = y + dy[d], n = 0;
        while (cx >= 0 && cx < 8 && cy >= 0 && cy < 8 && board[cx][cy] == other) {
            cx += dx[d];
            cy += dy[d];
            n++;
        }
        if (n > 0 && cx >= 0 && cx < 8 && cy >= 0 && cy < 8 && board[cx][cy] == who)
            total += n;
    }
    return total;
}

int score_square(int x, int y, int flips)
{
    int s = flips;
    if ((x == 0 || x == 7) && (y == 0 || y == 7))
        s += 1000;
    else if (x == 0 || x == 7 || y == 0 || y == 7)
        s += 20;
    return s;
}

void do_move(const char *digits)
{
    int board[8][8];
    int i, x, y, bx = -1, by = -1, best = -1;
    char out[32];

    for (i = 0; i < 64; i++)
        board[i / 8][i % 8] = digits[i] - '0';

    for (x = 0; x < 8; x++)
        for (y = 0; y < 8; y++) {
            int f = count_flips(board, x, y, me);
            if (f > 0 && score_square(x, y, f) > best) {
                best = score_square(x, y, f);
                bx = x;
                by = y;
            }
        }
    if (bx < 0) {
        printf("no legal move found!\n");
        bx = 0;
        by = 0;
    }
    sprintf(out, "M%d%d\n", bx, by);
    printf("my move: %c%d -> M%d%d\n", 'a' + bx, by + 1, bx, by);
    fflush(stdout);
    if (send(sock, out, strlen(out), 0) < 0) {
        perror("send");
        exit(1);
    }
}

/* read more bytes into buf; returns 0 if the server closed */
int fill(void)
{
    int n = recv(sock, buf + buflen, BUFSIZE - buflen, 0);
    if (n <= 0)
        return 0;
    buflen += n;
    return 1;
}

void eat(int n)
{
    memmove(buf, buf + n, buflen - n);
    buflen -= n;
}

int main(int argc, char **argv)
{
    struct hostent *he;
    struct sockaddr_in addr;
    char namemsg[64];

    if (argc != 4) {
        fprintf(stderr, "usage: %s HOST PORT NAME\n", argv[0]);
        return 2;
    }
    he = gethostbyname(argv[1]);
    if (he == NULL) {
        fprintf(stderr, "unknown host %s\n", argv[1]);
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
    snprintf(namemsg, sizeof(namemsg), "N%s\n", argv[3]);
    send(sock, namemsg, strlen(namemsg), 0);
    printf("sent name %s\n", argv[3]);

    for (;;) {
        /* skip newlines/spaces between messages */
        while (buflen > 0 && (buf[0] == '\n' || buf[0] == '\r' || buf[0] == ' '))
            eat(1);
        if (buflen == 0) {
            if (!fill())
                break;
            continue;
        }
        if (buf[0] == 'U') {
            if (buflen < 2) {
                if (!fill())
                    break;
                continue;
            }
            me = (buf[1] == '1') ? 2 : 1;
            printf("I am %s\n", me == 2 ? "black" : "white");
            eat(2);
        } else if (buf[0] == 'B') {
            if (buflen < 65) {
                if (!fill())
                    break;
                continue;
            }
            do_move(buf + 1);
            eat(65);
        } else if (buf[0] == 'W') {
            if (buflen < 2) {
                if (!fill())
                    break;
                continue;
            }
            if (buf[1] == '1')
                printf("I won!\n");
            else if (buf[1] == '0')
                printf("I lost\n");
            else
                printf("draw\n");
            /* game is over */
            close(sock);
            return 0;
        } else if (buf[0] == 'G') {
            printf("game over\n");
            break;
        } else {
            printf("unexpected byte '%c'\n", buf[0]);
            eat(1);
        }
    }
    close(sock);
    return 0;
}
