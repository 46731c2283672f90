#!/usr/bin/env python3
"""Hostile clients against a running `winokit serve` on loopback (standard library only).

    game_hostile.py PORT PID DEADLINE_SECONDS PER_ADDRESS_CAP

Checks: a chunked 10 MB body gets 413 with the server's memory flat; 300 idle half-open
sockets (from other loopback addresses) while a normal client is answered within 100 ms; the
per-address cap; idle and trickling clients cut off at the request deadline. Prints ok/FAIL
lines; exits 1 on any failure. Every socket has a timeout: the script always ends.
"""
import socket
import sys
import threading
import time

PORT, PID, DEADLINE, CAP = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
failures = 0


def check(ok, what):
    global failures
    print(("ok   - " if ok else "FAIL - ") + what, flush=True)
    if not ok:
        failures += 1


def memory_kib(field):
    with open(f"/proc/{PID}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def connect(source="127.0.0.1", timeout=5.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.bind((source, 0))
    s.connect(("127.0.0.1", PORT))
    return s


def read_all(s, limit=1 << 20):
    data = b""
    try:
        while len(data) < limit:
            part = s.recv(65536)
            if not part:
                break
            data += part
    except OSError:
        pass
    return data


def status_of(reply):
    try:
        return int(reply.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return 0


def get_status(path="/api/status"):
    """One request on a fresh connection: (HTTP status, seconds)."""
    t0 = time.monotonic()
    s = connect(timeout=5)
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{PORT}\r\nConnection: close\r\n\r\n".encode())
    reply = read_all(s)
    s.close()
    return status_of(reply), time.monotonic() - t0


# 1. Bodies over the cap, however framed.
s = connect()
s.sendall(b"POST /api/register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          b"Content-Length: 10485760\r\n\r\n")
check(status_of(read_all(s)) == 413, "a declared 10 MB body is refused with 413 before it is sent")
s.close()

hwm_before = memory_kib("VmHWM")
s = connect(timeout=10)
s.sendall(b"POST /api/register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          b"Transfer-Encoding: chunked\r\n\r\n")
reply = []
reader = threading.Thread(target=lambda: reply.append(read_all(s)))
reader.start()
chunk = b"[" + b"1," * 32767 + b"1"
chunk = chunk[:65536]
sent = 0
t0 = time.monotonic()
try:
    while sent < 10 * 1024 * 1024:
        s.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
        sent += len(chunk)
    s.sendall(b"0\r\n\r\n")
except OSError:
    pass
reader.join(15)
s.close()
hwm_after = memory_kib("VmHWM")
code = status_of(reply[0]) if reply else 0
check(code == 413, f"a chunked 10 MB body gets 413 (got {code}; {sent >> 10} KiB sent before the "
      f"server answered, {time.monotonic() - t0:.2f} s)")
grew = hwm_after - hwm_before
check(0 <= grew < 4096, f"the server's peak memory stays flat under it (+{grew} KiB)")
code, _ = get_status()
check(code == 200, "the server still answers afterwards")

# 2. 300 idle half-open sockets from five other loopback addresses (under the per-address cap
# each), each having sent one header line and then nothing.
idle = []
for i in range(300):
    try:
        c = connect(source=f"127.0.0.{2 + i % 5}", timeout=5)
        c.sendall(b"POST /api/login HTTP/1.1\r\nHost: x\r\n")
        idle.append(c)
    except OSError:
        pass
check(len(idle) == 300, f"300 idle half-open sockets are open ({len(idle)})")
time.sleep(0.2)
times, codes = [], []
for _ in range(20):
    code, dt = get_status()
    codes.append(code)
    times.append(dt)
times.sort()
check(all(c == 200 for c in codes), f"a normal client is answered while they are held ({codes.count(200)}/20)")
check(times[-1] < 0.1, f"within 100 ms (median {times[10] * 1000:.1f} ms, max {times[-1] * 1000:.1f} ms)")

# 3. The per-address cap: from one more address, connections beyond the cap are closed at once.
flood = [connect(source="127.0.0.7", timeout=5) for _ in range(CAP + 20)]
time.sleep(0.5)
closed = 0
for c in flood:
    c.setblocking(False)
    try:
        if c.recv(1) == b"":
            closed += 1
    except BlockingIOError:
        pass
    except OSError:
        closed += 1
check(closed == 20, f"{CAP + 20} connections from one address: the {closed} beyond the cap of {CAP} "
      "are closed")
for c in flood:
    c.close()

# 4. The deadline: the idle sockets are cut once it passes.
cutoff = time.monotonic() + DEADLINE + 2
open_left = len(idle)
for c in idle:
    c.settimeout(max(0.01, cutoff - time.monotonic()))
    try:
        c.recv(1024)  # EOF (or a last word) from the server: cut
        open_left -= 1
    except socket.timeout:
        pass
    except OSError:
        open_left -= 1
    c.close()
check(open_left == 0, f"every idle socket is closed within the {DEADLINE:.0f} s deadline (+2 s) "
      f"({open_left} left)")


# 5. Trickling clients: a header line, or a body byte, every 0.25 s; cut off at the deadline.
def trickle(head, drip):
    s = connect(timeout=0.25)
    t0 = time.monotonic()
    s.sendall(head)
    while time.monotonic() - t0 < DEADLINE + 5:
        try:
            if s.recv(4096) == b"":
                break
        except socket.timeout:
            pass
        except OSError:
            break
        try:
            s.sendall(drip)
        except OSError:
            break
    s.close()
    return time.monotonic() - t0


took = trickle(b"GET /api/status HTTP/1.1\r\nHost: x\r\n", b"X-Slow: y\r\n")
check(DEADLINE - 0.3 <= took <= DEADLINE + 1.5,
      f"a client trickling header lines is cut off at the deadline ({took:.2f} s; deadline {DEADLINE:.0f} s)")
took = trickle(b"POST /api/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               b"Content-Length: 1000\r\n\r\n", b" ")
check(DEADLINE - 0.3 <= took <= DEADLINE + 1.5,
      f"a client trickling its body is cut off at the deadline ({took:.2f} s)")
code, _ = get_status()
check(code == 200, "the server still answers at the end")
sys.exit(1 if failures else 0)
