#!/usr/bin/env python3
"""Watches a gateway's I/O through its management socket (JSON-RPC 2.0, one request per line).

  gateway-io.py SOCKET io                       the reads and writes namespace 1 has run
  gateway-io.py SOCKET expiries                 keep-alive expiries so far
  gateway-io.py SOCKET wait-io SECONDS FROM SINCE
      wait until the gateway has run more I/O than FROM; print the seconds from SINCE (a time
      from `date +%s.%N`, taken just before the event) and exit 0, or exit 1 after SECONDS.
      A socket that does not answer (a gateway starting) counts as no I/O.
  gateway-io.py SOCKET after SECONDS CMD...
      as wait-io, for the event CMD makes (a kill, an ANA change): the count is read, then CMD
      runs, and the seconds are counted from just before it
  gateway-io.py SOCKET after-ana SECONDS ANA_SOCKET PORT GROUP STATE
      as after, the event being set_ana_state on ANA_SOCKET, called from this process
  gateway-io.py SOCKET idle SECONDS             exit 0 if the gateway runs no I/O for SECONDS
  gateway-io.py SOCKET wait-role SECONDS ROLE SINCE
      wait until the gateway's role for its first gateway-group ANA group is ROLE (owner,
      standby, lost); print the seconds from SINCE, or exit 1 after SECONDS
  gateway-io.py SOCKET group                    get_gateway_group's answer, as JSON
"""
import json
import socket
import subprocess
import sys
import time


def call(path, method, params=None):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.connect(path)
        req = {"jsonrpc": "2.0", "id": 1, "method": method}
        if params is not None:
            req["params"] = params
        s.sendall((json.dumps(req) + "\n").encode())
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    finally:
        s.close()
    answer = json.loads(buf)
    if "error" in answer:
        raise RuntimeError(f"{method}: {answer['error']}")
    return answer["result"]


def io(path):
    total = 0
    for sub in call(path, "get_stats")["subsystems"]:
        for ns in sub["namespaces"]:
            if ns["nsid"] == 1:
                total += ns["write"]["commands"] + ns["read"]["commands"]
    return total


def io_or_zero(path):
    try:
        return io(path)
    except (OSError, ValueError):
        return 0


def wait_io(path, limit, base, since):
    while time.time() - since < limit:
        if io_or_zero(path) > base:
            print(f"{time.time() - since:.2f}")
            return 0
        time.sleep(0.02)
    print(f"no I/O in {limit:.0f} s")
    return 1


def role(path):
    try:
        return call(path, "get_gateway_group")["ana_groups"][0]["role"]
    except (OSError, ValueError, RuntimeError, KeyError, IndexError):
        return None


def wait_role(path, limit, want, since):
    while time.time() - since < limit:
        if role(path) == want:
            print(f"{time.time() - since:.2f}")
            return 0
        time.sleep(0.05)
    print(f"not {want} in {limit:.0f} s (it is {role(path)})")
    return 1


def main(argv):
    path, what = argv[1], argv[2]
    if what == "io":
        print(io(path))
    elif what == "expiries":
        print(call(path, "get_stats")["keep_alive_expiries"])
    elif what == "wait-io":
        return wait_io(path, float(argv[3]), int(argv[4]), float(argv[5]))
    elif what == "after":
        base = io_or_zero(path)
        since = time.time()
        done = subprocess.run(argv[4:], stdout=sys.stderr)
        if done.returncode != 0:
            print(f"{' '.join(argv[4:])} failed ({done.returncode})")
            return 1
        return wait_io(path, float(argv[3]), base, since)
    elif what == "after-ana":
        base = io_or_zero(path)
        since = time.time()
        call(argv[4], "set_ana_state", {"portid": int(argv[5]), "grpid": int(argv[6]), "state": argv[7]})
        return wait_io(path, float(argv[3]), base, since)
    elif what == "wait-role":
        return wait_role(path, float(argv[3]), argv[4], float(argv[5]))
    elif what == "group":
        print(json.dumps(call(path, "get_gateway_group"), indent=1))
    elif what == "idle":
        base = io(path)
        time.sleep(float(argv[3]))
        now = io(path)
        if now != base:
            print(f"{now - base} I/O commands in {argv[3]} s")
            return 1
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
