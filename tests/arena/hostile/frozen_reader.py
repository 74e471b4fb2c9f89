"""Computes while frozen: threads loop long ``preadv`` calls over a large page-cached file any bot may read (the
interpreter's own shared library, else the interpreter). A page-cache read stops only for fatal signals, so each
call runs on after the freeze is asked for. Its main thread starts them on its first move and answers every move
at once."""
import os
import sys
import sysconfig
import threading

THREADS = 32  # every one is inside a call when the freeze comes: together far more than the 10 ms allowed


def _target():
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    name = sysconfig.get_config_var("INSTSONAME") or ""
    for path in (os.path.join(libdir, name), sys.executable):
        try:
            return os.open(os.path.realpath(path), os.O_RDONLY)
        except OSError:
            continue
    raise RuntimeError("no large readable file")


def _read_forever(fd):
    buf = bytearray(1 << 20)
    views = [buf] * 1024  # one buffer, many iovecs: each call copies the whole file
    while True:
        os.preadv(fd, views, 0)


class Bot:
    def __init__(self, game, seat, seed):
        self.fd = _target()
        self.started = False

    def step(self, state, limit):
        if not self.started:  # on its first move, not at start-up: the opponent's start-up would end it first
            self.started = True
            for _ in range(THREADS):
                threading.Thread(target=_read_forever, args=(self.fd,), daemon=True).start()
        return state.legal_actions()[0]
