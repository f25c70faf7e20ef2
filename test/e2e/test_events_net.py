"""test_events_net.py - the network family, syscall by syscall (issue 3): socket (only those
out of the ordinary), bind, listen, connect, accept and accept4 over IPv4 and IPv6 (one record
each when they return at once; an entry-time record too when they stay blocked for a while,
written by the collector from the call's stash), an IPv4-mapped IPv6 connect shown
as IPv4; sendto, sendmsg and sendmmsg (one record per destination); datagrams to
port 53 keeping their payload (addressed, over IPv6, and on a connected socket); unix sockets
by path, abstract and datagram. The address as passed (addr) and as the kernel's socket holds
it after the call (peer: the remote end, or the local one for bind/listen) are both checked,
with the socket type and family the kernel reports.

No packet leaves the machine: every address is 127.0.0.1, ::1 or a unix socket, and the test
itself holds port 53 on both loopback addresses, so the DNS datagrams reach it and nothing
else."""
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwevents  # noqa: E402
from mwevents import F_ENTRY  # noqa: E402

AF_UNIX, AF_INET, AF_INET6 = 1, 2, 10
SOCK_STREAM, SOCK_DGRAM = 1, 2
SOCK_CLOEXEC = 0o2000000


class NetEvents(mwevents.EventsTestCase):
    STEPS = ("tcp4", "tcp6", "mapped", "udp", "udp_many", "dns", "dns6", "dns_connected", "unix_path",
             "unix_abstract", "unix_dgram", "sockets", "nonblock", "blocked")

    @classmethod
    def setUpClass(cls):
        # the DNS sink: if something already serves port 53 here, fail rather than query it
        cls.sinks = []
        for family, addr in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
            s = socket.socket(family, socket.SOCK_DGRAM)
            s.bind((addr, 53))
            s.settimeout(0)
            cls.sinks.append(s)
        try:
            super().setUpClass()
        finally:
            cls.received = []
            for s in cls.sinks:
                while True:
                    try:
                        cls.received.append(s.recv(512))
                    except BlockingIOError:
                        break
                s.close()

    def split(self, pid, op):
        """(entry records, exit records) of op in pid."""
        return self.rec.of(pid, op, entry=True), self.rec.of(pid, op, entry=False)

    def tcp(self, step, ip, family, addrlen):
        s = self.rec.step(step)
        pid, port = s["pid"], s["port"]
        kind = [SOCK_STREAM, family]
        self.assertEqual(self.rec.of(pid, "socket"), [])  # ordinary sockets: their uses are
        self.assertRecord(self.rec.one(pid, "bind"), "bind", 0,
                          args=[s["listen_fd"], addrlen] + kind, addr=ip(0), peer=ip(port))
        self.assertRecord(self.rec.one(pid, "listen"), "listen", 0,
                          args=[s["listen_fd"], 7] + kind, addr=None, peer=ip(port))
        # none of them blocks for long (a loopback handshake, a connection waiting to be
        # accepted): one record each, the exit's
        entries, exits = self.split(pid, "connect")
        self.assertEqual(entries, [])
        self.assertEqual(len(exits), 2)
        self.assertRecord(exits[0], "connect", 0, args=[s["client_fd"], addrlen] + kind,
                          addr=ip(port), peer=ip(port), flags=0)
        entries, exits = self.split(pid, "accept")
        self.assertEqual(entries, [])
        self.assertRecord(exits[0], "accept", s["accept"], args=[s["listen_fd"], 0] + kind,
                          addr=ip(s["client_port"]), peer=ip(s["client_port"]))
        entries, exits = self.split(pid, "accept4")
        self.assertEqual(entries, [])
        self.assertRecord(exits[0], "accept4", s["accept4"],
                          args=[s["listen_fd"], SOCK_CLOEXEC] + kind,
                          addr=None, peer=ip(s["client2_port"]))
        # a plain send on a connected stream is not recorded: the connect was
        self.assertEqual(s["send"], 1)
        self.assertEqual(self.rec.of(pid, "sendto"), [])

    def test_tcp_over_ipv4(self):
        self.tcp("tcp4", lambda p: "127.0.0.1:%d" % p, AF_INET, 16)

    def test_tcp_over_ipv6(self):
        self.tcp("tcp6", lambda p: "[::1]:%d" % p, AF_INET6, 28)

    def test_ipv4_mapped_ipv6_connect_reads_as_ipv4(self):
        s = self.rec.step("mapped")
        entries, exits = self.split(s["pid"], "connect")
        self.assertEqual(len(exits), 1)
        ev = exits[0]
        self.assertRecord(ev, "connect", 0, args=[s["fd"], 28, SOCK_STREAM, AF_INET6],
                          addr="127.0.0.1:%d" % s["port"], af="inet",
                          peer="127.0.0.1:%d" % s["port"])

    def test_udp_each_destination(self):
        s = self.rec.step("udp")
        pid, fd = s["pid"], s["fd"]
        dgram = [SOCK_DGRAM, AF_INET]
        to = ["127.0.0.1:%d" % s["port%d" % i] for i in range(3)]
        self.assertRecord(self.rec.one(pid, "sendto"), "sendto", 5, args=[fd, 5] + dgram,
                          addr=to[0], payload=None)
        self.assertRecord(self.rec.one(pid, "sendmsg"), "sendmsg", 5, args=[fd, 0] + dgram,
                          addr=to[1], payload=None)
        mm = self.rec.of(pid, "sendmmsg")
        self.assertEqual([(e["ret"], e["args"], e["addr"], e["flags"]) for e in mm],
                         [(3, [fd, i] + dgram, to[i], 0) for i in range(3)])

    def test_sendmmsg_beyond_the_records_says_so(self):
        # ten messages, eight records, each flagged MORE (policy: truncated) and ret = 10
        s = self.rec.step("udp_many")
        self.assertEqual(s["sendmmsg"], 10)
        to = "127.0.0.1:%d" % s["port"]
        mm = self.rec.of(s["pid"], "sendmmsg")
        self.assertEqual([(e["ret"], e["args"][:2], e["addr"], e["flags"]) for e in mm],
                         [(10, [s["fd"], i], to, mwevents.F_MORE) for i in range(8)])

    def dns(self, step, family):
        s = self.rec.step(step)
        query = bytes.fromhex(s["query_hex"])
        ev = self.rec.of(s["pid"], "sendto")
        self.assertEqual(len(ev), 1)
        self.assertRecord(ev[0], "sendto", len(query), args=[s["fd"], len(query), SOCK_DGRAM, family],
                          payload=mwevents.escape(query))
        self.assertIn(query, self.received)  # it reached our sink, on loopback
        return s, ev[0]

    def test_dns_datagram_keeps_its_payload(self):
        s, ev = self.dns("dns", AF_INET)
        self.assertEqual(ev["addr"], "127.0.0.1:53")
        s, ev = self.dns("dns6", AF_INET6)
        self.assertEqual(ev["addr"], "[::1]:53")

    def test_dns_on_a_connected_socket(self):
        s, ev = self.dns("dns_connected", AF_INET)
        self.assertNotIn("addr", ev)  # send() names no address: the socket's peer does
        self.assertEqual(ev["peer"], "127.0.0.1:53")
        _, exits = self.split(s["pid"], "connect")
        self.assertRecord(exits[0], "connect", 0, args=[s["fd"], 16, SOCK_DGRAM, AF_INET],
                          addr="127.0.0.1:53", peer="127.0.0.1:53")

    def unix(self, step, name):
        s = self.rec.step(step)
        pid, kind = s["pid"], [SOCK_STREAM, AF_UNIX]
        self.assertRecord(self.rec.one(pid, "bind"), "bind", 0,
                          args=[s["listen_fd"], s["addrlen"]] + kind, addr=name, peer=name)
        self.assertRecord(self.rec.one(pid, "listen"), "listen", 0,
                          args=[s["listen_fd"], 3] + kind, peer=name)
        _, exits = self.split(pid, "connect")
        self.assertRecord(exits[0], "connect", 0, args=[s["client_fd"], s["addrlen"]] + kind,
                          addr=name, peer=name)
        _, exits = self.split(pid, "accept")
        # the accepted socket's peer is the client, which has no address
        self.assertRecord(exits[0], "accept", s["accept"], args=[s["listen_fd"], 0] + kind,
                          addr=None, peer=None)

    def test_unix_socket_by_path(self):
        self.unix("unix_path", "unix:unix.sock")

    def test_abstract_unix_socket(self):
        self.unix("unix_abstract", "unix:@" + self.rec.step("unix_abstract")["name"])

    def test_sockets_out_of_the_ordinary_are_recorded(self):
        # the TCP socket is not (its uses would be); netlink, a refused protocol and ICMP are,
        # with domain, type and protocol as asked
        s = self.rec.step("sockets")
        self.assertGreaterEqual(s["tcp"], 0)
        self.assertGreaterEqual(s["netlink"], 0)
        self.assertEqual(s["tcp_udp"], -93)  # EPROTONOSUPPORT
        socks = self.rec.of(s["pid"], "socket")
        self.assertEqual([(e["ret"], e.get("args")) for e in socks],
                         [(s["netlink"], [16, 3 | SOCK_CLOEXEC]),  # AF_NETLINK, SOCK_RAW
                          (-93, [AF_INET, SOCK_STREAM, 17]),
                          (s["ping"], [AF_INET, SOCK_DGRAM, 1])])  # made or refused

    def test_nonblocking_connect_and_accept_have_no_entry_record(self):
        # they return at once, and so does the blocking connect beside them: their exit
        # records, with the address and the kernel's view, say it all
        s = self.rec.step("nonblock")
        pid, to = s["pid"], "127.0.0.1:%d" % s["port"]
        entries, exits = self.split(pid, "accept4")
        self.assertEqual(entries, [])
        self.assertRecord(exits[0], "accept4", -11, args=[s["listen_fd"], SOCK_CLOEXEC, SOCK_STREAM,
                                                           AF_INET])  # EAGAIN
        entries, exits = self.split(pid, "connect")
        self.assertEqual(entries, [])
        self.assertEqual([(e["args"], e["ret"], e["addr"], e["peer"], e["flags"]) for e in exits],
                         [([s[fd], 16, SOCK_STREAM, AF_INET], s[ret], to, to, 0)
                          for fd, ret in (("fd", "connect"), ("fd2", "connect2"),
                                          ("fd3", "connect3"))])
        self.assertIn(s["connect"], (0, -115))  # EINPROGRESS
        self.assertEqual(s["connect3"], 0)

    def test_calls_blocked_for_a_while_have_an_entry_record_first(self):
        # the collector writes a connect or accept still blocked 50 ms after its entry from its
        # stash: what was asked, the socket's kind, the caller's uid, the entry time, no result
        # and no peer yet; then its exit record as for any other
        s = self.rec.step("blocked")
        pid = s["pid"]
        order = [e for e in self.rec.events if e["pid"] == pid]
        for op, args, addr, peer, ret in (
                ("connect", [s["fd"], s["addrlen"], SOCK_STREAM, AF_UNIX], "unix:blocked.sock",
                 "unix:blocked.sock", s["connect"]),
                ("accept", [s["listen_fd"], 0, SOCK_STREAM, AF_INET], None, None, s["accept"])):
            entries, exits = self.split(pid, op)
            self.assertEqual(len(entries), 1, entries)
            self.assertRecord(entries[0], op, 0, args=args, addr=addr, peer=None,
                              flags=F_ENTRY)
            done = [e for e in exits if e["args"][0] == args[0] and e["tid"] == pid]
            self.assertEqual(len(done), 1, exits)
            self.assertRecord(done[0], op, ret, args=args, addr=addr, flags=0,
                              **({"peer": peer} if peer else {}))
            self.assertEqual(entries[0]["uid"], done[0]["uid"])
            self.assertEqual(entries[0]["tid"], done[0]["tid"])
            self.assertLess(entries[0]["ts"], done[0]["ts"])
            self.assertLess(order.index(entries[0]), order.index(done[0]))  # in trace order
        self.assertEqual(s["connect"], 0)
        self.assertGreaterEqual(s["accept"], 0)

    def test_unix_datagram(self):
        s = self.rec.step("unix_dgram")
        self.assertRecord(self.rec.one(s["pid"], "sendto"), "sendto", 4,
                          args=[s["fd"], 4, SOCK_DGRAM, AF_UNIX], addr="unix:unix.dgram")


if __name__ == "__main__":
    mwevents.main()
