#!/usr/bin/python3
"""Lists the NVMe-oF discovery controllers announced over mDNS (TP8009), as python3-zeroconf
resolves them: one line per service, 'TYPE|INSTANCE|ADDRESS|PORT|key=value,...'.
Usage: zeroconf-browse.py [SECONDS] (default 3). Exit 0 when one or more were found, 1 when none.
       zeroconf-browse.py --watch SECONDS: prints 'add NAME' and 'remove NAME' as services come and go
       (a removal well before the records' TTL is a goodbye packet), flushed, for SECONDS."""
import sys
import time

from zeroconf import ServiceBrowser, Zeroconf

TYPES = ["_nvme-disc._tcp.local.", "_nvme-disc._udp.local."]


class Collect:
    def __init__(self, say=False):
        self.names = set()
        self.say = say

    def event(self, what, name):
        if self.say:
            print("%s %s" % (what, name), flush=True)

    def add_service(self, zc, type_, name):
        self.names.add((type_, name))
        self.event("add", name)

    def update_service(self, zc, type_, name):
        self.names.add((type_, name))

    def remove_service(self, zc, type_, name):
        self.names.discard((type_, name))
        self.event("remove", name)


def watch(seconds):
    zc = Zeroconf()
    browsers = [ServiceBrowser(zc, t, Collect(say=True)) for t in TYPES]
    time.sleep(seconds)
    for b in browsers:
        b.cancel()
    zc.close()


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--watch":
        watch(float(sys.argv[2]))
        return
    wait = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    zc = Zeroconf()
    c = Collect()
    browsers = [ServiceBrowser(zc, t, c) for t in TYPES]
    time.sleep(wait)
    found = 0
    for type_, name in sorted(c.names):
        info = zc.get_service_info(type_, name, timeout=3000)
        if info is None:
            continue
        txt = ",".join("%s=%s" % (k.decode(), (v or b"").decode()) for k, v in sorted(info.properties.items()))
        instance = name[: -len(type_) - 1] if name.endswith("." + type_) else name
        for addr in info.parsed_addresses():
            print("%s|%s|%s|%d|%s" % (type_, instance, addr, info.port, txt))
            found += 1
    for b in browsers:
        b.cancel()
    zc.close()
    sys.exit(0 if found else 1)


if __name__ == "__main__":
    main()
