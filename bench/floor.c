/* The loopback floor for a key-value load generator: C connections on one thread, each
 * sending PIPELINE requests in one write() and reading their replies with read(), nothing
 * else (no timing, no stats, level-triggered epoll). 1 SET in 11 requests, GETs of keys
 * never set, so every reply has a known size. Three wire protocols:
 *   redis             SET -> "+OK\r\n" (5 B), GET -> "$-1\r\n" (5 B)
 *   memcache_text     set -> "STORED\r\n" (8 B), get -> "END\r\n" (5 B)
 *   memcache_binary   SET -> 24 B header, GET miss -> 24 B header + "Not found" (33 B)
 * Two ways to refill a connection's pipeline:
 *   batch     (default) the next PIPELINE requests only when the whole last batch is
 *             answered, as redis-benchmark does
 *   per-read  after every read that completes a reply, as many requests as were answered,
 *             as memtier_benchmark (and kvbench's memtier front end) do
 * Two key sets:
 *   hot       (default) one key for every SET ("floor-set") and one for every GET
 *             ("floor-miss"): the server's cheapest case
 *   spread    keys spread like a load generator's: "memtier-" and seven random digits
 *             (odd for SETs, even for GETs, so GETs miss), close to what kvbench sends with
 *             --key-maximum=10000000, so the server does a real store's work (new items,
 *             cold lookups); a check that the hot key does not flatter the floor
 * A request is one copy of a template built before the run; with spread keys a random
 * key's seven digits are then written over the template's (about 30 instructions).
 * Usage: floor PORT CONNS REQUESTS_PER_CONN PIPELINE [redis|memcache_text|memcache_binary]
 *        [batch|per-read] [spread|hot] */
#define _GNU_SOURCE /* memmem */
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
#define SLOT_LEN 128 /* room for one request */
static char set_req[SLOT_LEN], get_req[SLOT_LEN];
static int set_len, get_len, set_key_at, get_key_at, spread;
static int set_reply, get_reply;
static int *left, *pend, *fds, *partial; /* partial: bytes of a reply not yet whole */
static long *seq, *acked; /* requests sent and answered, per connection */
static unsigned long rng = 88172645463325252UL; /* xorshift64, fixed seed: the same keys each run */

/* Builds one request of protocol `proto` (0 redis, 1 memcache_text, 2 memcache_binary)
 * for `key` into `out`; returns its length. */
static int build(char *out, int proto, int set, const char *key) {
  int k = strlen(key), v = sizeof VALUE - 1;
  if (proto == 0)
    return set ? sprintf(out, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", k, key, v, VALUE)
               : sprintf(out, "*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", k, key);
  if (proto == 1)
    return set ? sprintf(out, "set %s 0 0 %d\r\n%s\r\n", key, v, VALUE) : sprintf(out, "get %s\r\n", key);
  /* Binary: a 24-byte header (magic, opcode, key length, extras length, data type,
   * vbucket, body length, opaque, cas), then a SET's 8 bytes of extras (flags, expiry,
   * zero), the key, a SET's value. */
  int extras = set ? 8 : 0, body = extras + k + (set ? v : 0);
  memset(out, 0, 24 + extras);
  out[0] = (char)0x80;
  out[1] = set ? 0x01 : 0x00;
  out[2] = k >> 8; out[3] = k & 0xff;
  out[4] = extras;
  out[8] = body >> 24; out[9] = body >> 16; out[10] = body >> 8; out[11] = body & 0xff;
  memcpy(out + 24 + extras, key, k);
  if (set) memcpy(out + 24 + extras + k, VALUE, v);
  return 24 + body;
}

/* Copies a request into `out` and, with spread keys, writes a fresh random key's seven
 * digits over the template's (at `key_at`): odd for a SET, even for a GET. */
static int put(char *out, const char *req, int len, int key_at, int set) {
  memcpy(out, req, len);
  if (spread) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    unsigned n = 1000000 + (unsigned)(rng % 4500000) * 2 + (set ? 1 : 0);
    for (int d = 6; d >= 0; d--, n /= 10) out[key_at + 8 + d] = '0' + n % 10;
  }
  return len;
}

/* Writes connection c's next batch of up to `pipe` requests; counts the reply bytes due. */
static int send_batch(int c, int pipe) {
  static char out[65536];
  int k = pipe < left[c] ? pipe : left[c], len = 0;
  for (int j = 0; j < k; j++) {
    int set = seq[c]++ % 11 == 0;
    if (set) {
      len += put(out + len, set_req, set_len, set_key_at, 1);
      pend[c] += set_reply;
    } else {
      len += put(out + len, get_req, get_len, get_key_at, 0);
      pend[c] += get_reply;
    }
  }
  left[c] -= k;
  if (write(fds[c], out, len) != len) { fprintf(stderr, "floor: short write\n"); return 1; }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 5 || argc > 8) {
    fprintf(stderr, "usage: floor PORT CONNS REQS PIPELINE [redis|memcache_text|memcache_binary] [batch|per-read] "
                    "[spread|hot]\n");
    return 2;
  }
  int port = atoi(argv[1]), n = atoi(argv[2]), reqs = atoi(argv[3]), pipe = atoi(argv[4]);
  const char *name = argc >= 6 ? argv[5] : "redis";
  const char *refill = argc >= 7 ? argv[6] : "batch";
  const char *keys = argc == 8 ? argv[7] : "hot";
  int per_read = !strcmp(refill, "per-read"), proto;
  spread = !strcmp(keys, "spread");
  if (!per_read && strcmp(refill, "batch")) {
    fprintf(stderr, "floor: unknown refill %s (batch or per-read)\n", refill);
    return 2;
  }
  if (!spread && strcmp(keys, "hot")) {
    fprintf(stderr, "floor: unknown key set %s (spread or hot)\n", keys);
    return 2;
  }
  if (!strcmp(name, "redis")) {
    proto = 0; set_reply = 5; get_reply = 5;
  } else if (!strcmp(name, "memcache_text")) {
    proto = 1; set_reply = 8; get_reply = 5;
  } else if (!strcmp(name, "memcache_binary")) {
    proto = 2; set_reply = 24; get_reply = 33;
  } else {
    fprintf(stderr, "floor: unknown protocol %s\n", name);
    return 2;
  }
  /* Spread keys are "memtier-" and seven digits, rewritten per request; hot keys are fixed. */
  const char *set_key = spread ? "memtier-0000000" : "floor-set", *get_key = spread ? "memtier-0000000" : "floor-miss";
  set_len = build(set_req, proto, 1, set_key);
  get_len = build(get_req, proto, 0, get_key);
  set_key_at = (int)(memmem(set_req, set_len, set_key, strlen(set_key)) - (void *)set_req);
  get_key_at = (int)(memmem(get_req, get_len, get_key, strlen(get_key)) - (void *)get_req);
  int max_len = set_len > get_len ? set_len : get_len;
  if (n <= 0 || reqs <= 0 || pipe <= 0 || pipe * max_len > 65536) {
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
          int size = acked[c] % 11 == 0 ? set_reply : get_reply;
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
