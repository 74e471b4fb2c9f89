"""Attack round 2 on `arena serve` (issue 30): holes found through HTTP only. Each test fails on the server as
found and asserts what docs/server.md promises."""
from __future__ import annotations

import re
import socket
import time

import pytest

from tests.server.support import PLAIN, Client, Server, accounts, make_league, multipart

pytestmark = pytest.mark.xdist_group("server")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    work = tmp_path_factory.mktemp("attack2")
    make_league(work)
    tokens = accounts(work, "alice", "bob", "mallory")
    tokens.update(accounts(work, "prof", organiser=True))
    server = Server(work).start()
    yield {"server": server, "tokens": tokens, "work": work}
    server.stop()


def _post(port: int, path: str, body: bytes, ctype: str, extra: str = "") -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\n{extra}Content-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
                  f"Connection: close\r\n\r\n".encode() + body)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
        return out


def test_a_stranger_cannot_grow_the_log_with_malformed_multipart_bodies(site):
    """No cookie, no token: 400 malformed multipart bodies to /logout, each with another byte at another place
    after the boundary. Before: python-multipart's "Expected boundary character 99, got N at index I" went to the
    log once per request (each message a new "kind" for the 5-a-minute filter): 3,000 requests wrote 3,000 lines
    (153 kB in 4 s). The log must stay bounded whatever a stranger sends."""
    server = site["server"]
    before = server.output()
    boundary = "c" * 70
    for i in range(400):
        body = ("--" + boundary[: i % 70]).encode() + bytes([33 + i // 70]) + b"x"
        answer = _post(server.port, "/logout", body, f"multipart/form-data; boundary={boundary}")
        assert answer.startswith(b"HTTP/1.1 4")
    time.sleep(0.5)
    grown = server.output()[len(before):]
    assert len(grown.splitlines()) <= 30, f"{len(grown.splitlines())} log lines ({len(grown)} bytes) from 400 requests"


def test_an_upload_in_flight_when_its_account_is_revoked_is_refused_or_withdrawn(site):
    """mallory's API upload has sent its head (the token is checked) and part of its body when the organiser
    revokes mallory; the rest of the body follows. Before: 202 and the submission stays "queued" for ever (after a
    restart too) on /admin, stored after the revocation. docs/server.md: a revoked account's token stops at once and
    its waiting uploads are withdrawn."""
    server, tokens = site["server"], site["tokens"]
    prof = Client(server.base)
    assert prof.login("prof", tokens["prof"]) == 303
    csrf = re.search(r'name="csrf" value="([^"]+)"', prof.get("/admin")[2]).group(1)
    body, ctype = multipart({"file": ("m.py", (PLAIN + "# in flight\n").encode())})
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
        head = (f"POST /api/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {tokens['mallory']}\r\n"
                f"Content-Type: {ctype}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n")
        s.sendall(head.encode() + body[:100])
        time.sleep(1)
        assert prof.form("/admin/revoke", {"csrf": csrf, "target": "mallory", "confirm": "yes"})[0] == 303
        time.sleep(0.5)
        s.sendall(body[100:])
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    if not answer.startswith(b"HTTP/1.1 202"):
        return  # refused: right
    sid = int(re.search(rb'"id":\s*(\d+)', answer).group(1))
    deadline = time.time() + 15
    while time.time() < deadline:
        page = prof.get(f"/admin/submissions/{sid}")[2]
        if "withdrawn" in page:
            return
        time.sleep(0.5)
    pytest.fail(f"a revoked account's upload was answered 202 and stays: {re.sub(r'<[^>]+>', ' ', page)[:300]}")


def test_a_request_head_over_16_kB_is_refused(site):
    """docs/server.md: a request's head is at most 16 kB (400). Before: a 20 kB header (sent at once) was answered
    200; the real bound was about 128 kB."""
    server = site["server"]
    with socket.create_connection(("127.0.0.1", server.port), timeout=15) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Pad: " + b"a" * 20_000 + b"\r\n\r\n")
        answer = s.recv(100)
    assert answer.startswith(b"HTTP/1.1 400") or answer.startswith(b"HTTP/1.1 431"), answer


def test_an_unauthenticated_body_is_not_read_past_32_MB(site):
    """docs/server.md: bodies are drained up to 32 MB for the 413. Before: the 401 (no token) came at once and then
    the server went on reading and discarding the stranger's body for 10 s: 1.1 to 1.7 GB per connection."""
    server = site["server"]
    sent = 0
    with socket.create_connection(("127.0.0.1", server.port), timeout=15) as s:
        s.sendall(b"POST /api/submissions HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=x\r\n"
                  b"Content-Length: 4000000000\r\n\r\n")
        chunk = b"a" * 65536
        start = time.time()
        try:
            while sent < 400_000_000 and time.time() - start < 30:
                sent += s.send(chunk)
        except OSError:
            pass
    assert sent < 64_000_000, f"the server read {sent / 1e6:.0f} MB of an unauthenticated body"


def test_a_pipelined_request_head_over_16_kB_is_refused(site):
    """A review's find: the head count stopped at the first request's end, and a second request sent in the same
    write waited whole in h11's buffer while the first was answered (60 kB: answered 200)."""
    server = site["server"]
    with socket.create_connection(("127.0.0.1", server.port), timeout=15) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" +
                  b"GET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Pad: " + b"a" * 60_000 + b"\r\n\r\n")
        out = b""
        while chunk := s.recv(65536):
            out += chunk
    assert out.count(b"HTTP/1.1 ") <= 2 and b"HTTP/1.1 404" not in out, out[:300]
    assert b"431" in out or out.count(b"HTTP/1.1 ") == 1, out[:300]  # refused, or closed without an answer
