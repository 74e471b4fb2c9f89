"""One end of a covert channel between two sandboxed bots through kernel state they can both reach.

``role.txt`` beside it holds ``sender METHOD SECRET_HEX [FILE@OFFSET...]`` or ``receiver METHOD - [FILE@OFFSET...]``
(``later`` instead of ``receiver``: a receiver in a later game, which decodes at its first move). The sender encodes a 64-bit
secret, a chunk of bits per move; the receiver decodes what it can and ends the game by raising
``RuntimeError("DECODED <bits>")`` (one of 0, 1 or ? per bit, ? where it observed nothing) followed by notes
(the errors its calls met). Both play the first legal action; the game must last (``nim(n=200,k=1)``).

Methods (each a piece of state a bot can reach on the shared read-only runtime or the machine):
  posix   byte-range locks (F_SETLK / F_GETLK) on one runtime file; 64 bits a move
  ofd     open-file-description locks (F_OFD_SETLK / F_OFD_GETLK); 64 bits a move
  flock   whole-file locks (flock) on 64 runtime files; 16 bits a move (a bot may open 64 files)
  notify  directory notifications (F_NOTIFY + F_SETSIG, the signal names the directory); 16 bits a move
  futex   shared futex keys on a read-only mapping of a runtime file (a waiting thread per 1 bit); 8 a move
  sysinfo machine-wide task count (sysinfo().procs, the sender's extra threads); 1 bit per two moves
  atime   access times of runtime files (stat), for a receiver in a later game; 64 bits at once
  pagecache  page cache residency of rarely read runtime files: the sender reads the i-th of 64 pages
          (FILE@OFFSET) for a 1, the receiver touches each through a mapping and counts its major faults
          (getrusage); 64 bits at once, in the same game or a later one
Schedule: sender moves S0 S1 S2 ..., receiver moves R0 R1 ... in between. Chunk c is armed at S(c+1) and read
at R(c+1) (the receiver has surely set up by then).
"""
import ctypes
import errno
import fcntl
import os
import signal
import struct
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
STDLIB = os.path.dirname(os.__file__)
SHARED_FILE = os.__file__
LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.syscall.restype = ctypes.c_long
NBITS = 64
F_OFD_GETLK, F_OFD_SETLK, F_NOTIFY, F_SETSIG = 36, 37, 1026, 10
DN_ACCESS, DN_MULTISHOT = 0x1, 0x80000000
SYS_FUTEX = {"x86_64": 202, "aarch64": 98}[os.uname().machine]
SYS_SYSINFO = {"x86_64": 99, "aarch64": 179}[os.uname().machine]
FUTEX_WAIT, FUTEX_WAKE = 0, 1
PROT_READ, MAP_SHARED = 1, 1
CHUNK = {"posix": 64, "ofd": 64, "flock": 16, "notify": 16, "futex": 8, "sysinfo": 1, "atime": 64, "pagecache": 64}
SIG = signal.SIGRTMIN + 3


def err_name(exc):
    return errno.errorcode.get(exc.errno, str(exc.errno)) if isinstance(exc, OSError) else type(exc).__name__


def runtime_dirs():
    """64 runtime directories holding a .py file, the same list in both bots: (dir, file)."""
    out = []
    # The stdlib and its neighbours, then the packages bots see (the stdlib alone, as narrowed for bots, may
    # hold fewer than 64 such directories)
    for top in [os.path.dirname(STDLIB)] + [p for p in sys.path if p.endswith("-packages")]:
        for root, dirs, files in os.walk(top):
            dirs.sort()
            regular = sorted(f for f in files if f.endswith(".py"))
            if regular and "__pycache__" not in root and ("-packages" not in root or top != os.path.dirname(STDLIB)):
                out.append((root, os.path.join(root, regular[0])))
            if len(out) == NBITS:
                return out
    return out


def flock_struct(kind, start, pid_field=0):
    return struct.pack("hhqqi4x", kind, os.SEEK_SET, start, 1, pid_field)


class Sysinfo(ctypes.Structure):
    _fields_ = [("uptime", ctypes.c_long), ("loads", ctypes.c_ulong * 3), ("totalram", ctypes.c_ulong),
                ("freeram", ctypes.c_ulong), ("sharedram", ctypes.c_ulong), ("bufferram", ctypes.c_ulong),
                ("totalswap", ctypes.c_ulong), ("freeswap", ctypes.c_ulong), ("procs", ctypes.c_ushort),
                ("pad", ctypes.c_char * 64)]


def procs():
    info = Sysinfo()
    if LIBC.syscall(ctypes.c_long(SYS_SYSINFO), ctypes.byref(info)) < 0:
        raise OSError(ctypes.get_errno(), "sysinfo")
    return info.procs


def futex(addr, op, val, timeout=None):
    r = LIBC.syscall(ctypes.c_long(SYS_FUTEX), ctypes.c_void_p(addr), ctypes.c_int(op), ctypes.c_uint(val), timeout,
                     None, 0)
    if r < 0:
        raise OSError(ctypes.get_errno(), "futex")
    return r


class Shared:
    """A read-only shared mapping of the shared runtime file (futex words)."""

    def __init__(self):
        fd = os.open(SHARED_FILE, os.O_RDONLY)
        LIBC.mmap.restype = ctypes.c_void_p
        LIBC.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                              ctypes.c_long]
        self.base = LIBC.mmap(None, 4096, PROT_READ, MAP_SHARED, fd, 0)
        if self.base in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), "mmap")

    def word(self, i):
        addr = self.base + 4 * i
        return addr, ctypes.c_uint.from_address(addr).value


class Bot:
    def __init__(self, game, seat, seed):
        with open(os.path.join(HERE, "role.txt")) as f:
            parts = f.read().split()
        self.role, self.method = parts[0], parts[1]
        self.secret = int(parts[2], 16) if len(parts) > 2 and parts[2] != "-" else 0
        self.pages = [(p.rsplit("@", 1)[0], int(p.rsplit("@", 1)[1])) for p in parts[3:]]
        self.maps = {}
        self.moves = 0
        self.bits = ["?"] * NBITS
        self.notes = []
        self.held = []
        self.dirs = runtime_dirs()
        self.chunk = CHUNK[self.method]
        self.shared = None
        if self.method in ("posix", "ofd"):
            self.fd = os.open(SHARED_FILE, os.O_RDONLY)
        if self.method == "flock":
            self.fds = {}
        if self.method == "futex":
            self.shared = self.attempt(Shared)
        self.watch_fds = {}
        threading.stack_size(1 << 16)
        if self.method == "sysinfo":
            self.chunk, self.levels = 1, []

    def attempt(self, fn, *args):
        try:
            return fn(*args)
        except OSError as exc:
            note = f"{getattr(fn, '__name__', 'call')}:{err_name(exc)}"
            if note not in self.notes:
                self.notes.append(note)
            return None

    # -- notify --
    def watch(self, chunk):
        """Watches the directories of ``chunk`` (and no longer the previous ones)."""
        signal.pthread_sigmask(signal.SIG_BLOCK, [SIG])
        for fd in self.watch_fds:
            os.close(fd)
        self.watch_fds = {}
        lo = chunk * self.chunk
        for i in range(lo, min(lo + self.chunk, NBITS)):
            fd = os.open(self.dirs[i][0], os.O_RDONLY | os.O_DIRECTORY)
            if self.attempt(fcntl.fcntl, fd, F_SETSIG, SIG) is None or \
                    self.attempt(fcntl.fcntl, fd, F_NOTIFY, DN_ACCESS | DN_MULTISHOT) is None:
                os.close(fd)
                return
            self.watch_fds[fd] = i

    def drain(self):
        """The directories whose notification arrived (the queued signal's si_fd)."""
        seen = set()
        sigset = ctypes.create_string_buffer(128)
        LIBC.sigemptyset(sigset)
        LIBC.sigaddset(sigset, SIG)
        info = ctypes.create_string_buffer(128)
        zero = struct.pack("qq", 0, 0)
        while LIBC.sigtimedwait(sigset, info, zero) > 0:
            fd = struct.unpack_from("i", info.raw, 24)[0]  # si_fd of a SIGPOLL siginfo
            if fd in self.watch_fds:
                seen.add(self.watch_fds[fd])
        return seen

    # -- the sender --
    def send(self, chunk):
        lo = chunk * self.chunk
        want = [i for i in range(lo, min(lo + self.chunk, NBITS)) if self.secret >> i & 1]
        m = self.method
        for fd_or_lock in self.held:  # the previous chunk's state
            if m == "futex":
                self.attempt(futex, self.shared.word(fd_or_lock)[0], FUTEX_WAKE, 1)
            if m == "posix":
                self.attempt(fcntl.fcntl, self.fd, fcntl.F_SETLK, flock_struct(fcntl.F_UNLCK, fd_or_lock))
            elif m == "ofd":
                self.attempt(fcntl.fcntl, self.fd, F_OFD_SETLK, flock_struct(fcntl.F_UNLCK, fd_or_lock))
            elif m == "flock":
                os.close(self.fds.pop(fd_or_lock))
        self.held = []
        for i in want:
            if m == "posix":
                ok = self.attempt(fcntl.fcntl, self.fd, fcntl.F_SETLK, flock_struct(fcntl.F_RDLCK, 1000 + i))
            elif m == "ofd":
                ok = self.attempt(fcntl.fcntl, self.fd, F_OFD_SETLK, flock_struct(fcntl.F_RDLCK, 1000 + i))
            elif m == "flock":
                self.fds[i] = os.open(self.dirs[i][1], os.O_RDONLY)
                ok = self.attempt(fcntl.flock, self.fds[i], fcntl.LOCK_SH)
            elif m == "pagecache":
                ok = self.attempt(self.read_page, i)
            elif m in ("notify", "atime"):
                ok = self.attempt(lambda p: os.pread(os.open(p, os.O_RDONLY), 1, 0), self.dirs[i][1])
            elif m == "futex" and self.shared is not None:
                addr, value = self.shared.word(i)
                threading.Thread(target=self.attempt, args=(futex, addr, FUTEX_WAIT, value), daemon=True).start()
                ok = True
            else:
                ok = None
            if ok is not None:
                self.held.append(i)

    def read_page(self, i):
        path, offset = self.pages[i]
        fd = os.open(path, os.O_RDONLY)
        try:
            return os.pread(fd, 1, offset)
        finally:
            os.close(fd)

    def probe_page(self, i):
        """Major faults while touching the page: 0 when it was already cached."""
        import mmap
        import resource
        path, offset = self.pages[i]
        if path not in self.maps:
            fd = os.open(path, os.O_RDONLY)
            self.maps[path] = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
            os.close(fd)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_majflt
        self.maps[path][offset]
        return resource.getrusage(resource.RUSAGE_SELF).ru_majflt - before

    def send_sysinfo(self):
        """Bit c rides on sender moves 2c+1 (extra threads when 1) and 2c+2 (none): the receiver compares."""
        for event, thread in self.held:  # gone before this move ends: the receiver counts next
            event.set()
            thread.join()
        self.held = []
        c, phase = divmod(self.moves - 1, 2)
        if phase == 0 and 0 <= c < NBITS and self.secret >> c & 1:
            for _ in range(8):
                event = threading.Event()
                thread = threading.Thread(target=event.wait, daemon=True)
                thread.start()
                self.held.append((event, thread))

    # -- the receiver --
    def receive(self, chunk):
        lo = chunk * self.chunk
        m = self.method
        if m == "notify":
            if not self.watch_fds:
                return
            seen = self.drain()
        for i in range(lo, min(lo + self.chunk, NBITS)):
            bit = None
            if m in ("posix", "ofd"):
                cmd = fcntl.F_GETLK if m == "posix" else F_OFD_GETLK
                out = self.attempt(fcntl.fcntl, self.fd, cmd, flock_struct(fcntl.F_WRLCK, 1000 + i))
                if out is not None:
                    bit = int(struct.unpack("hhqqi4x", out)[0] != fcntl.F_UNLCK)
            elif m == "flock":
                fd = os.open(self.dirs[i][1], os.O_RDONLY)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    bit = 0
                except BlockingIOError:
                    bit = 1
                except OSError as exc:
                    self.notes.append(f"flock:{err_name(exc)}") if f"flock:{err_name(exc)}" not in self.notes else None
                os.close(fd)
            elif m == "notify":
                bit = int(i in seen)
            elif m == "futex" and self.shared is not None:
                addr, _ = self.shared.word(i)
                woken = self.attempt(futex, addr, FUTEX_WAKE, 1)
                if woken is not None:
                    bit = int(woken > 0)
            elif m == "pagecache":
                faults = self.attempt(self.probe_page, i)
                if faults is not None:
                    bit = int(faults == 0)
            elif m == "atime":
                before = os.stat(self.dirs[i][1]).st_atime_ns
                mine = os.stat(self.dirs[(i + 1) % NBITS][1]).st_atime_ns
                bit = int(before > mine) if before != mine else 0
            if bit is not None:
                self.bits[i] = str(bit)

    def receive_sysinfo(self):
        level = self.attempt(procs)
        self.levels.append(level)
        c, phase = divmod(self.moves - 1, 2)
        if phase == 1 and 0 <= c < NBITS and None not in self.levels[-2:]:
            self.bits[c] = str(int(self.levels[-2] - self.levels[-1] >= 4))

    def step(self, state, limit):
        chunks = -(-NBITS // self.chunk) if self.method != "sysinfo" else 2 * 8
        if self.role == "sender":
            if self.method == "sysinfo":
                self.send_sysinfo()
            elif 1 <= self.moves <= chunks:
                self.send(self.moves - 1)
        elif self.role == "later":  # the sender played an earlier game: everything is there at the first move
            self.receive(0)
            self.report()
        else:
            if self.method == "sysinfo":
                self.receive_sysinfo()
            elif 1 <= self.moves <= chunks:
                self.receive(self.moves - 1)
            if self.method == "notify" and self.moves < chunks:
                self.watch(self.moves)  # armed by the sender's next move
            if self.moves >= chunks + 1:
                self.report()
        self.moves += 1
        return state.legal_actions()[0]

    def report(self):
        raise RuntimeError(f"DECODED {''.join(self.bits)} NOTES {' '.join(self.notes) or '-'}")
