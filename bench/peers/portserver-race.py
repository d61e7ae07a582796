#!/usr/bin/python3
# portserver-race.py — the peer of `peers-clock lease-race`: Google's portserver
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PROCS processes, released at once (after Python and portpicker are
# loaded, as the D-Bus racers are released after their bus login), each
# asking ADDRESS's portserver for PER ports with portpicker's own client.
# Prints the same line as lease-race: the rate, the ports handed out twice,
# and how many another program could bind (portserver holds nothing, so
# every one of them, which is the point of comparing with it).
#
# Usage: portserver-race.py ADDRESS PROCS PER

import multiprocessing
import socket
import sys
import time

import portpicker


def racer(address, per, barrier, results):
    barrier.wait()
    ports = [portpicker.get_port_from_port_server(address) for _ in range(per)]
    results.put(ports)
    # Stay alive while the ports are checked: portserver keeps a port
    # reserved for a live pid only.
    barrier.wait()


def bindable(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def main():
    address, procs, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    barrier = multiprocessing.Barrier(procs + 1)
    results = multiprocessing.Queue()
    children = [multiprocessing.Process(target=racer, args=(address, per, barrier, results))
                for _ in range(procs)]
    for child in children:
        child.start()
    barrier.wait()
    start = time.monotonic()
    handed = []
    for _ in range(procs):
        handed.extend(results.get())
    elapsed = time.monotonic() - start
    failed = sum(1 for port in handed if not port)
    ports = [port for port in handed if port]
    duplicates = len(ports) - len(set(ports))
    open_to_others = sum(1 for port in set(ports) if bindable(port))
    barrier.wait()
    for child in children:
        child.join()
    print(f"{len(ports) / elapsed:.0f} leases/s ({len(ports)} in {elapsed * 1000:.1f} ms), "
          f"{duplicates} duplicates, {open_to_others} bindable by others"
          + (f", {failed} refused" if failed else ""))


if __name__ == "__main__":
    main()
