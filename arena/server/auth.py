"""Who is asking: bearer tokens (scripts), session cookies (browsers), CSRF tokens and login rate limits.

- A token is checked by :func:`leaderboards.accounts.by_token` (its HMAC, compared in constant time); a revoked
  account's token and sessions fail at the next request (both are looked up in the store every time, never
  cached).
- The session cookie is ``HttpOnly; SameSite=Strict; Path=/`` (and ``Secure`` with ``--behind-https``); its key
  is stored only as an HMAC. Every form POST carries the session's CSRF token (a hidden field), compared in
  constant time: a POST without it is answered 403 and changes nothing. The login form (no session yet) uses a
  double-submit token: a random ``arena_login`` cookie that the form must repeat.
- Failed logins are limited per account name and address, per account name and per client address
  (:class:`RateLimit`, :func:`client_key`): past a limit a login is refused (429) before the token is even looked
  at. API bearer tokens are not limited: 256-bit tokens cannot be guessed, and a block would let one client behind
  an address a class shares (a campus NAT, a script polling with a revoked token) shut the API for all of them.
"""
from __future__ import annotations

import hmac
import ipaddress
import secrets
import threading
import time
from collections import deque

SESSION_COOKIE = "arena_session"
LOGIN_COOKIE = "arena_login"
SESSION_TTL = 7 * 24 * 3600.0
LOGIN_WINDOW = 900.0
"""Seconds over which failed logins are counted."""
MAX_FAILS_PER_ACCOUNT_ADDRESS = 5
"""Failed logins under one name from one address: that name is then refused from there (a classmate guessing
someone's token closes the name only where the classmate is)."""
MAX_FAILS_PER_ACCOUNT = 50
"""Failed logins under one name from every address together (guesses spread over many addresses)."""
MAX_FAILS_PER_ADDRESS = 20
"""Failed logins from one address under any names."""
MAX_KEY = 111
"""Characters of a key kept (an address, a space and a name of at most 64): a login form's name field can be
16 kB."""
MAX_KEYS = 20_000
"""Keys each limit keeps (about 1 kB each): past it the least recently failed is forgotten, so a flood of names
or addresses costs a bounded memory."""


def same(a: str | None, b: str | None) -> bool:
    """Constant-time equality of two secrets (False when either is missing)."""
    if not a or not b:
        return False
    return hmac.compare_digest(a.encode(), b.encode())


def new_login_token() -> str:
    return secrets.token_urlsafe(32)


def cookie(name: str, value: str, *, secure: bool, max_age: int | None) -> str:
    """A Set-Cookie value: HttpOnly, SameSite=Strict, Path=/, Secure behind HTTPS."""
    parts = [f"{name}={value}", "Path=/", "HttpOnly", "SameSite=Strict"]
    if max_age is not None:
        parts.append(f"Max-Age={max_age}")
    if secure:
        parts.append("Secure")
    return "; ".join(parts)


def client_key(host: str) -> str:
    """Who a client is for the login limits: its IPv4 address, or its IPv6 /64 (one host holds a whole /64 and
    may send from any address in it); an IPv4-mapped IPv6 address is its IPv4 address. A value that is not an
    address (only a misconfigured proxy forwards one) is one client, "?"."""
    try:
        ip = ipaddress.ip_address(host.strip().removeprefix("[").removesuffix("]"))
    except ValueError:
        return "?"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def name_at(name: str, where: str) -> str:
    """The key of one name's failed logins from one client (``where``, a :func:`client_key`: no spaces)."""
    return f"{where} {name}"


class RateLimit:
    """Failures per key (an account name, an address) within a sliding window; at most :data:`MAX_KEYS` keys, in
    the order of their last failure (the dict's order)."""

    def __init__(self, limit: int, window: float = LOGIN_WINDOW) -> None:
        self.limit, self.window = limit, window
        self.fails: dict[str, deque[float]] = {}
        self.guard = threading.Lock()

    def _recent(self, key: str, now: float) -> deque[float]:
        times = self.fails.setdefault(key[:MAX_KEY], deque())
        while times and times[0] < now - self.window:
            times.popleft()
        return times

    def blocked(self, key: str) -> bool:
        with self.guard:
            if key[:MAX_KEY] not in self.fails:  # (a check adds no key: only failures are kept)
                return False
            return len(self._recent(key, time.monotonic())) >= self.limit

    def fail(self, key: str) -> None:
        with self.guard:
            now = time.monotonic()
            times = self._recent(key, now)
            times.append(now)
            del self.fails[key[:MAX_KEY]]  # to the end: the least recently failed key is always the first
            self.fails[key[:MAX_KEY]] = times
            while True:  # forget keys idle for a window, and the oldest past MAX_KEYS (each once: O(1) on average)
                first = next(iter(self.fails))
                if len(self.fails) <= MAX_KEYS and self.fails[first][-1] >= now - self.window:
                    break
                del self.fails[first]
