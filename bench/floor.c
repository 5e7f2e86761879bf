/* The loopback floor for a key-value load generator: C connections on one thread, each
 * sending PIPELINE requests in one write() and reading their replies with read(), nothing
 * else (no timing, no stats, level-triggered epoll). 1 SET in 11 requests, keys that never
 * hit, so every reply has a known size. Three wire protocols:
 *   redis             SET -> "+OK\r\n" (5 B), GET -> "$-1\r\n" (5 B)
 *   memcache_text     set -> "STORED\r\n" (8 B), get -> "END\r\n" (5 B)
 *   memcache_binary   SET -> 24 B header, GET miss -> 24 B header + "Not found" (33 B)
 * Two ways to refill a connection's pipeline:
 *   batch     (default) the next PIPELINE requests only when the whole last batch is
 *             answered, as redis-benchmark does
 *   per-read  after every read that completes a reply, as many requests as were answered,
 *             as memtier_benchmark (and kvbench's memtier front end) do
 * Usage: floor PORT CONNS REQUESTS_PER_CONN PIPELINE [redis|memcache_text|memcache_binary]
 *        [batch|per-read] */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define VALUE "01234567890123456789012345678901"
static const char RESP_SET[] = "*3\r\n$3\r\nSET\r\n$9\r\nfloor-set\r\n$32\r\n" VALUE "\r\n";
static const char RESP_GET[] = "*2\r\n$3\r\nGET\r\n$10\r\nfloor-miss\r\n";
static const char TEXT_SET[] = "set floor-set 0 0 32\r\n" VALUE "\r\n";
static const char TEXT_GET[] = "get floor-miss\r\n";
/* Binary: 24-byte header (magic, opcode, key length, extras length, type, vbucket, body
 * length, opaque, cas), then extras (SET: flags and expiry), key, value. */
static const char BIN_SET[] = "\x80\x01\x00\x09\x08\x00\x00\x00\x00\x00\x00\x31"
                              "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
                              "\x00\x00\x00\x00\x00\x00\x00\x00"
                              "floor-set" VALUE;
static const char BIN_GET[] = "\x80\x00\x00\x0a\x00\x00\x00\x00\x00\x00\x00\x0a"
                              "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
                              "floor-miss";

struct proto { const char *set, *get; size_t set_len, get_len; int set_reply, get_reply; };
static struct proto p;
static int *left, *pend, *fds, *partial; /* partial: bytes of a reply not yet whole */
static long *seq, *acked; /* requests sent and answered, per connection */

/* Writes connection c's next batch of up to `pipe` requests; counts the reply bytes due. */
static int send_batch(int c, int pipe) {
  static char out[65536];
  int k = pipe < left[c] ? pipe : left[c], len = 0;
  for (int j = 0; j < k; j++) {
    int set = seq[c]++ % 11 == 0;
    size_t l = set ? p.set_len : p.get_len;
    memcpy(out + len, set ? p.set : p.get, l);
    len += l;
    pend[c] += set ? p.set_reply : p.get_reply;
  }
  left[c] -= k;
  if (write(fds[c], out, len) != len) { fprintf(stderr, "floor: short write\n"); return 1; }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 5 || argc > 7) {
    fprintf(stderr, "usage: floor PORT CONNS REQS PIPELINE [redis|memcache_text|memcache_binary] [batch|per-read]\n");
    return 2;
  }
  int port = atoi(argv[1]), n = atoi(argv[2]), reqs = atoi(argv[3]), pipe = atoi(argv[4]);
  const char *name = argc >= 6 ? argv[5] : "redis";
  const char *refill = argc == 7 ? argv[6] : "batch";
  int per_read = !strcmp(refill, "per-read");
  if (!per_read && strcmp(refill, "batch")) {
    fprintf(stderr, "floor: unknown refill %s (batch or per-read)\n", refill);
    return 2;
  }
  if (!strcmp(name, "redis")) {
    p = (struct proto){RESP_SET, RESP_GET, sizeof RESP_SET - 1, sizeof RESP_GET - 1, 5, 5};
  } else if (!strcmp(name, "memcache_text")) {
    p = (struct proto){TEXT_SET, TEXT_GET, sizeof TEXT_SET - 1, sizeof TEXT_GET - 1, 8, 5};
  } else if (!strcmp(name, "memcache_binary")) {
    p = (struct proto){BIN_SET, BIN_GET, sizeof BIN_SET - 1, sizeof BIN_GET - 1, 24, 33};
  } else {
    fprintf(stderr, "floor: unknown protocol %s\n", name);
    return 2;
  }
  if (n <= 0 || reqs <= 0 || pipe <= 0 || pipe * (p.set_len > p.get_len ? p.set_len : p.get_len) > 65536) {
    fprintf(stderr, "floor: bad arguments\n");
    return 2;
  }
  int ep = epoll_create1(0);
  left = calloc(n, sizeof(int)); pend = calloc(n, sizeof(int)); fds = calloc(n, sizeof(int));
  seq = calloc(n, sizeof(long)); acked = calloc(n, sizeof(long)); partial = calloc(n, sizeof(int));
  static char buf[65536];
  int done = 0;
  for (int i = 0; i < n; i++) {
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (void *)&a, sizeof a)) { perror("connect"); return 1; }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fds[i] = fd; left[i] = reqs;
    struct epoll_event e = {.events = EPOLLIN, .data.u32 = i};
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
  }
  for (int i = 0; i < n; i++)
    if (send_batch(i, pipe)) return 1;
  struct epoll_event ev[256];
  while (done < n) {
    int m = epoll_wait(ep, ev, 256, -1);
    for (int e = 0; e < m; e++) {
      int c = ev[e].data.u32;
      ssize_t r = read(fds[c], buf, sizeof buf);
      if (r <= 0) { fprintf(stderr, "floor: read failed\n"); return 1; }
      pend[c] -= r;
      if (per_read) {
        /* The bytes read so far, less those of the replies before: answer whole replies
         * off the front of what is in flight, then refill what they freed. */
        long before = acked[c];
        int part = r + partial[c];
        while (acked[c] < seq[c]) {
          int size = acked[c] % 11 == 0 ? p.set_reply : p.get_reply;
          if (part < size) break;
          part -= size;
          acked[c]++;
        }
        partial[c] = part;
        if (pend[c] < 0) { fprintf(stderr, "floor: unexpected reply size\n"); return 1; }
        if (acked[c] == seq[c] && left[c] == 0) { done++; close(fds[c]); continue; }
        if (acked[c] > before && left[c] > 0 && send_batch(c, pipe - (int)(seq[c] - acked[c]))) return 1;
        continue;
      }
      if (pend[c] > 0) continue;
      if (pend[c] < 0) { fprintf(stderr, "floor: unexpected reply size\n"); return 1; }
      if (left[c] == 0) { done++; close(fds[c]); continue; }
      if (send_batch(c, pipe)) return 1;
    }
  }
  return 0;
}
