"""Calls kernel interfaces a bot has no use for, by raw syscall number through ctypes, and reports which
succeeded: the mount listing API (``listmount``/``statmount``, which name the host's mount sources),
``open_tree_attr`` (a mount handle) and ``modify_ldt`` (x86's local descriptor table). With
``raise.txt`` holding ``listmount`` it instead lets that call's failure propagate as an exception."""
import ctypes
import os
import platform

LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.syscall.restype = ctypes.c_long
NUMBERS = {"listmount": 458, "statmount": 457, "open_tree_attr": 467}
if platform.machine() == "x86_64":
    NUMBERS["modify_ldt"] = 154
LSMT_ROOT = 0xFFFFFFFFFFFFFFFF
STATMOUNT_SB_BASIC, STATMOUNT_MNT_BASIC, STATMOUNT_MNT_POINT = 0x1, 0x2, 0x10


class MntIdReq(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("spare", ctypes.c_uint32), ("mnt_id", ctypes.c_uint64),
                ("param", ctypes.c_uint64), ("mnt_ns_id", ctypes.c_uint64)]


def call(name, *args):
    result = LIBC.syscall(ctypes.c_long(NUMBERS[name]), *args)
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return result


def attempts():
    ids = (ctypes.c_uint64 * 64)()
    req = MntIdReq(32, 0, LSMT_ROOT, 0, 0)
    yield "listmount", lambda: call("listmount", ctypes.byref(req), ids, ctypes.c_size_t(64), ctypes.c_uint(0))
    buf = ctypes.create_string_buffer(8192)
    sreq = MntIdReq(32, 0, 0, STATMOUNT_SB_BASIC | STATMOUNT_MNT_BASIC | STATMOUNT_MNT_POINT, 0)

    def statmount():
        sreq.mnt_id = ids[0] or 1
        return call("statmount", ctypes.byref(sreq), buf, ctypes.c_size_t(8192), ctypes.c_uint(0))
    yield "statmount", statmount
    yield "open_tree_attr", lambda: call("open_tree_attr", ctypes.c_int(-100), b"/", ctypes.c_uint(0),
                                         None, ctypes.c_size_t(0))
    if "modify_ldt" in NUMBERS:
        ldt = ctypes.create_string_buffer(64)
        yield "modify_ldt", lambda: call("modify_ldt", ctypes.c_int(0), ldt, ctypes.c_ulong(64))


class Bot:
    def __init__(self, game, seat, seed):
        here = os.path.dirname(os.path.abspath(__file__))
        self.raise_name = ""
        if os.path.exists(os.path.join(here, "raise.txt")):
            with open(os.path.join(here, "raise.txt")) as f:
                self.raise_name = f.read().strip()

    def step(self, state, limit):
        out = []
        for name, attempt in attempts():
            if name == self.raise_name:
                attempt()  # a denied call's OSError ends the bot: its reason must name the call
            try:
                out.append(f"{name}=succeeded({attempt()})")
            except OSError as exc:
                out.append(f"{name}=denied({exc.errno})")
        raise RuntimeError("surface: " + " ".join(out))
