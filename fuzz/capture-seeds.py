#!/usr/bin/env python3
"""Capture fuzz seed corpora from real servers: the bytes redis-server and memcached send.

Starts a throwaway redis-server (plain, with DEBUG PROTOCOL for every RESP3 type), a
two-node Redis Cluster and a memcached, each on a free port of 127.0.0.1 in a temporary
directory; sends the requests kvbench sends (and a few more that answer with other reply
types); writes each reply as a seed file under fuzz/seeds/<target>/; stops every server
it started, by PID. Run it from anywhere:

    python3 fuzz/capture-seeds.py            # rewrites fuzz/seeds/{resp,memcache_*,cluster,monitor}

Decoder seeds carry the header the decoder targets read (see fuzz/src/decoder.rs): one
byte saying the request kind, one saying zero cut points, then the reply bytes.
"""

import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SEEDS = os.path.join(HERE, "seeds")

# Request kinds, as fuzz/src/decoder.rs's Input::parse reads byte 0.
STORE, GET, AUTH, SETUP = 0, 1, 3, 4


def multi_get(n):
    return 2 + 5 * n


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, condition, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if condition():
                return
        except OSError:
            pass
        time.sleep(0.05)
    sys.exit(f"capture-seeds: {what} did not happen within {timeout} s")


class Servers:
    """Every server started here, stopped by PID at the end."""

    def __init__(self):
        self.procs = []
        self.dirs = []

    def start(self, argv_for_port, ready):
        """Starts a server on a free port; retries on a new port if another process took
        the one picked before the server bound it."""
        tmp = tempfile.mkdtemp(prefix="kvbench-seeds-")
        self.dirs.append(tmp)
        for _ in range(5):
            port = free_port()
            argv = argv_for_port(port, tmp)
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, start_new_session=True)
            self.procs.append(proc)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and proc.poll() is None:
                try:
                    if ready(port):
                        return port
                except OSError:
                    pass
                time.sleep(0.05)
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
            print(f"capture-seeds: {argv[0]} did not come up on port {port}; trying another", file=sys.stderr)
        sys.exit(f"capture-seeds: could not start {argv[0]}")

    def redis(self, *extra):
        def argv(port, tmp):
            return ["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                    "--save", "", "--appendonly", "no", "--dir", tmp, *extra]
        return self.start(argv, lambda port: exchange(port, b"*1\r\n$4\r\nPING\r\n", 1) == b"+PONG\r\n")

    def memcached(self):
        user = ["-u", "root"] if os.geteuid() == 0 else []

        def argv(port, tmp):
            return ["memcached", *user, "-p", str(port), "-l", "127.0.0.1", "-U", "0", "-m", "64", "-t", "1"]
        return self.start(argv, lambda port: exchange(port, b"version\r\n", None, end=b"\r\n").startswith(b"VERSION"))

    def stop(self):
        for proc in self.procs:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
        for tmp in self.dirs:
            shutil.rmtree(tmp, ignore_errors=True)


def resp_end(buf, at=0):
    """Offset just past the RESP reply starting at `at`, or None if incomplete."""
    cr = buf.find(b"\r\n", at)
    if cr < 0:
        return None
    kind, line, after = buf[at:at + 1], buf[at + 1:cr], cr + 2
    if kind in (b"$", b"=", b"!"):
        n = int(line)
        if n < 0:
            return after
        return after + n + 2 if len(buf) >= after + n + 2 else None
    if kind in (b"*", b"%", b"~", b">", b"|"):
        n = int(line)
        if n < 0:
            return after
        count = n * (2 if kind in (b"%", b"|") else 1)
        for _ in range(count):
            after = resp_end(buf, after)
            if after is None:
                return None
        if kind == b"|":
            return resp_end(buf, after)
        return after
    return after


def command(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def exchange(port, request, replies, end=None, timeout=5.0):
    """Sends `request`, reads until `replies` RESP replies (or `end`, or EOF) arrived."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(request)
        buf = b""
        while True:
            if replies is not None:
                at = 0
                for _ in range(replies):
                    at = resp_end(buf, at) if at is not None and at < len(buf) else None
                    if at is None:
                        break
                if at is not None:
                    return buf
            if end is not None and buf.endswith(end):
                return buf
            chunk = s.recv(65536)
            if not chunk:
                return buf
            buf += chunk


def resp_replies(port, commands, hello=None):
    """Each command's reply on one connection (after HELLO when given), split apart."""
    request = b"".join(commands)
    count = len(commands)
    if hello is not None:
        request = command("HELLO", hello) + request
        count += 1
    buf = exchange(port, request, count)
    out, at = [], 0
    for _ in range(count):
        end = resp_end(buf, at)
        out.append(buf[at:end])
        at = end
    return out[1:] if hello is not None else out


def write(target, name, data, kind=None):
    folder = os.path.join(SEEDS, target)
    os.makedirs(folder, exist_ok=True)
    if kind is not None:
        data = bytes([kind, 0]) + data
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def capture_redis(servers):
    port = servers.redis("--enable-debug-command", "yes")
    # What kvbench sends (SET, GET, MGET, SETEX, SETRANGE, GETRANGE, WAIT, AUTH, SELECT,
    # SCAN), then replies of every other shape.
    requests = [
        ("set", STORE, command("SET", "key:1", "value-1")),
        ("get-hit", GET, command("GET", "key:1")),
        ("get-miss", GET, command("GET", "key:none")),
        ("mget", multi_get(3), command("MGET", "key:1", "key:none", "key:1")),
        ("setex", STORE, command("SETEX", "key:2", 60, "v\r\n$-1\r\n")),
        ("get-tricky", GET, command("GET", "key:2")),
        ("setrange", STORE, command("SETRANGE", "key:3", 4, "abc")),
        ("getrange", GET, command("GETRANGE", "key:3", 2, -1)),
        ("wait", STORE, command("WAIT", 0, 0)),
        ("auth-error", AUTH, command("AUTH", "nobody", "wrong")),
        ("select", SETUP, command("SELECT", 0)),
        ("scan", GET, command("SCAN", 0, "COUNT", 5)),
        ("incr", STORE, command("INCR", "counter")),
        ("lpush", STORE, command("RPUSH", "list", "a", "", "c")),
        ("lrange", GET, command("LRANGE", "list", 0, -1)),
        ("hset", STORE, command("HSET", "hash", "f1", "v1", "f2", "v2")),
        ("hgetall", GET, command("HGETALL", "hash")),
        ("zadd", STORE, command("ZADD", "zset", "1.5", "a", "-2", "b")),
        ("zrange-scores", GET, command("ZRANGE", "zset", 0, -1, "WITHSCORES")),
        ("sadd", STORE, command("SADD", "set", "x", "y")),
        ("smembers", GET, command("SMEMBERS", "set")),
        ("wrongtype", GET, command("GET", "list")),
        ("unknown", STORE, command("NOSUCHCOMMAND", "x")),
        ("cluster-slots-not-cluster", SETUP, command("CLUSTER", "SLOTS")),
        ("eval-nested", GET, command("EVAL", "return {1, 'two', {3, false}, redis.error_reply('E x')}", 0)),
        ("client-info", GET, command("CLIENT", "INFO")),
    ]
    debug = [b"string", b"integer", b"double", b"bignum", b"null", b"array", b"set", b"map",
             b"attrib", b"push", b"verbatim", b"true", b"false"]
    for version in (2, 3):
        replies = resp_replies(port, [r[2] for r in requests], hello=version)
        stream = b""
        for (name, kind, _), reply in zip(requests, replies):
            write("resp", f"resp{version}-{name}", reply, kind)
            stream += reply
        # The replies of commands that are all answered alike, pipelined.
        write("resp", f"resp{version}-pipelined-stores", b"".join(
            r for (_, k, _), r in zip(requests, replies) if k == STORE), STORE)
        hello = exchange(port, command("HELLO", version), 1)
        write("resp", f"resp{version}-hello", hello, SETUP)
        replies = resp_replies(port, [command("DEBUG", "PROTOCOL", t) for t in debug], hello=version)
        for t, reply in zip(debug, replies):
            write("resp", f"resp{version}-debug-{t.decode()}", reply, GET)
            write("cluster", f"resp{version}-debug-{t.decode()}", reply)
    # Out-of-band data in RESP3: a push from SUBSCRIBE.
    push = resp_replies(port, [command("SUBSCRIBE", "news")], hello=3)[0]
    write("resp", "resp3-subscribe-push", push, GET)

    # MONITOR lines, as redis prints them, for the monitor target.
    with socket.create_connection(("127.0.0.1", port), timeout=5) as mon:
        mon.sendall(command("MONITOR"))
        buf = b""
        while not buf.endswith(b"+OK\r\n"):
            buf += mon.recv(4096)
        exchange(port, command("SET", "mon key", 'quote " back \\ bin \x01\xff')
                 + command("GET", "mon key") + command("HELLO", 3)
                 + command("EVAL", "return redis.call('get', KEYS[1])", 1, "mon key"), 4)
        lines = b""
        deadline = time.monotonic() + 5
        while lines.count(b"\r\n") < 5 and time.monotonic() < deadline:
            try:
                lines += mon.recv(4096)
            except socket.timeout:
                break
    capture = b"OK\n" + b"\n".join(line[1:] for line in lines.split(b"\r\n") if line.startswith(b"+"))
    write("monitor", "redis-monitor", capture + b"\n")


def capture_cluster(servers):
    a = servers.redis("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
    b = servers.redis("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
    exchange(a, command("CLUSTER", "ADDSLOTSRANGE", 0, 8191), 1)
    exchange(b, command("CLUSTER", "ADDSLOTSRANGE", 8192, 16383), 1)
    exchange(a, command("CLUSTER", "MEET", "127.0.0.1", b), 1)
    wait_for("the cluster to agree", lambda: exchange(a, command("CLUSTER", "SLOTS"), 1).startswith(b"*2\r\n")
             and b"cluster_state:ok" in exchange(a, command("CLUSTER", "INFO"), 1))
    b_id = exchange(b, command("CLUSTER", "MYID"), 1).split(b"\r\n")[1].decode()
    for version in (2, 3):
        slots = resp_replies(a, [command("CLUSTER", "SLOTS")], hello=version)[0]
        write("cluster", f"resp{version}-cluster-slots", slots)
        write("resp", f"resp{version}-cluster-slots", slots, SETUP)
    def slot_of(key):
        return int(exchange(a, command("CLUSTER", "KEYSLOT", key), 1)[1:-2])
    on_a = next(f"key:{i}" for i in range(100) if slot_of(f"key:{i}") < 8192)
    on_b = next(f"key:{i}" for i in range(100) if slot_of(f"key:{i}") >= 8192)
    # A key of node b asked of node a: MOVED.
    moved = exchange(a, command("GET", on_b), 1)
    assert moved.startswith(b"-MOVED"), moved
    write("cluster", "moved", moved)
    write("cluster", "moved-text", moved[1:-2])
    write("resp", "resp2-moved", moved, GET)
    # A slot of node a marked as migrating to b: a missing key there answers ASK.
    exchange(a, command("CLUSTER", "SETSLOT", slot_of(on_a), "MIGRATING", b_id), 1)
    ask = exchange(a, command("GET", on_a), 1)
    assert ask.startswith(b"-ASK"), ask
    write("cluster", "ask", ask)
    write("cluster", "ask-text", ask[1:-2])
    write("resp", "resp2-ask", ask, GET)


def binary(opcode, key=b"", value=b"", extras=b"", opaque=0):
    body = extras + key + value
    return struct.pack(">BBHBBHIIQ", 0x80, opcode, len(key), len(extras), 0, 0, len(body), opaque, 0) + body


QUITQ = binary(0x17)


def capture_memcached(servers):
    port = servers.memcached()

    def text(request):
        return exchange(port, request + b"quit\r\n", None)

    text_cases = [
        ("stored", STORE, b"set key:1 0 0 7\r\nvalue-1\r\n"),
        ("stored-tricky", STORE, b"set key:2 0 0 13\r\n\r\nEND\r\nVALUE x\r\n"),
        ("not-stored", STORE, b"add key:1 0 0 1\r\nx\r\n"),
        ("exists", STORE, b"cas key:1 0 0 1 999999\r\nx\r\n"),
        ("not-found", STORE, b"cas key:none 0 0 1 1\r\nx\r\n"),
        ("client-error", STORE, b"set key:3 0 0 2\r\nxyz\r\n"),
        ("server-error", STORE, b"set key:4 0 0 2000000\r\n" + b"v" * 2000000 + b"\r\n"),
        ("error", STORE, b"nosuchcommand\r\n"),
        ("get-hit", GET, b"get key:1\r\n"),
        ("get-tricky", GET, b"get key:2\r\n"),
        ("get-miss", GET, b"get key:none\r\n"),
        ("gets-hit", GET, b"gets key:1\r\n"),
        ("multi-get", multi_get(3), b"get key:1 key:none key:2\r\n"),
        ("multi-get-misses", multi_get(2), b"get key:none key:none2\r\n"),
    ]
    for name, kind, request in text_cases:
        reply = text(request)
        # The client error also closes the data line; keep the first reply line only.
        if name == "client-error":
            reply = reply[:reply.index(b"\r\n") + 2]
        write("memcache_text", name, reply, kind)

    def packets(*requests):
        return exchange(port, b"".join(requests) + QUITQ, None)

    set_extras = struct.pack(">II", 0, 0)
    binary_cases = [
        ("set", STORE, [binary(0x01, b"bin:1", b"value-1", set_extras, 1)]),
        ("add-exists", STORE, [binary(0x02, b"bin:1", b"x", set_extras, 2)]),
        ("too-large", STORE, [binary(0x01, b"bin:big", b"v" * 2000000, set_extras, 3)]),
        ("get-hit", GET, [binary(0x00, b"bin:1", opaque=4)]),
        ("get-miss", GET, [binary(0x00, b"bin:none", opaque=5)]),
        ("getk-hit", GET, [binary(0x0C, b"bin:1", opaque=6)]),
        ("multi-get", multi_get(3), [binary(0x0D, b"bin:1", opaque=7), binary(0x0D, b"bin:none", opaque=7),
                                     binary(0x0D, b"bin:1", opaque=7), binary(0x0A, opaque=7)]),
        ("multi-get-misses", multi_get(2), [binary(0x0D, b"bin:none", opaque=8), binary(0x0D, b"bin:no2", opaque=8),
                                            binary(0x0A, opaque=8)]),
        ("sasl-list-mechs", AUTH, [binary(0x20, opaque=9)]),
        ("sasl-auth", AUTH, [binary(0x21, b"PLAIN", b"\0user\0pass", opaque=10)]),
    ]
    for name, kind, requests in binary_cases:
        write("memcache_binary", name, packets(*requests), kind)


def main():
    for target in ("resp", "memcache_text", "memcache_binary", "cluster", "monitor"):
        shutil.rmtree(os.path.join(SEEDS, target), ignore_errors=True)
    servers = Servers()
    try:
        capture_redis(servers)
        capture_cluster(servers)
        capture_memcached(servers)
    finally:
        servers.stop()
    for target in sorted(os.listdir(SEEDS)):
        files = os.listdir(os.path.join(SEEDS, target))
        size = sum(os.path.getsize(os.path.join(SEEDS, target, f)) for f in files)
        print(f"{target}: {len(files)} seeds, {size} bytes")


if __name__ == "__main__":
    main()
