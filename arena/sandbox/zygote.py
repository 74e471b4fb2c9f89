"""A fork server for bot processes: start-up without a fresh interpreter.

Starting a bot with ``exec`` costs a new interpreter plus the imports of ``games`` (``typing``,
``dataclasses``, ``inspect``, ...): tens of milliseconds of CPU. The zygote is one clean interpreter per
referee process (started with the same environment and flags a bot gets, before any bot exists) that
has already imported the bot host and one fixed set of modules: every installed game and built-in bot,
whoever plays (:func:`_preload`). For each bot it forks a child that runs exactly the same
hardening as the exec path (:func:`arena.sandbox.spawn._child_setup`: cgroups, namespaces, the
read-only root, uid drop, rlimits), closes every other descriptor and enters the host, which applies
Landlock and seccomp before loading bot code. The zygote holds nothing secret: it never sees a bot's
messages, nor its launch plan. A spawn request tells it only the plan's runtime part, the same for every bot
(``spawn.runtime_part``); it answers with the socket of a waiting init (``SCM_RIGHTS``), and the referee sends the
plan and the bot's three pipe ends there itself. Whatever the server decoded, every later bot would inherit in freed
memory: a bot that read its opponent's snapshot digest there would know who it plays.

Lifetimes: the zygote dies with the referee (``PR_SET_PDEATHSIG``, and it is started from a thread
that never exits). Each child is pid 1 of a new PID namespace, the bot's init (``spawn._init``), which dies
with the zygote (its own ``PR_SET_PDEATHSIG``, out of the bot's reach); the kernel then kills the whole
namespace, so a bot that clears its own death signal still dies. The zygote reaps its children and reports
the bot's exit status on request, so the referee still tells a CPU-limit kill from a crash.
"""
from __future__ import annotations

import array
import gc
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import fields
from typing import Any, NoReturn

_MAX_MSG = 1 << 20


def _send(sock: socket.socket, message: dict[str, Any], fds: list[int] | None = None) -> None:
    data = json.dumps(message).encode()
    if fds:
        sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    else:
        sock.send(data)


def _recv(sock: socket.socket, max_fds: int = 0) -> tuple[dict[str, Any] | None, list[int]]:
    fds = array.array("i")
    # (close-on-exec: a descriptor received, such as a waiting init's socket in the referee, is never inherited by a
    # process the receiver starts)
    data, ancdata, _, _ = sock.recvmsg(_MAX_MSG, socket.CMSG_SPACE(max_fds * fds.itemsize) if max_fds else 0,
                                       socket.MSG_CMSG_CLOEXEC)
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
    if not data:
        return None, list(fds)
    return json.loads(data), list(fds)


# -- the zygote process ----------------------------------------------------------------------------------
def serve(control_fd: int) -> None:
    """The zygote's main loop (``python -c ... zygote.serve(fd)``)."""
    # start-up: the fork server loads these once, before any fork (the referee's process never does)
    import importlib.util  # noqa: F401
    import traceback  # noqa: F401

    import bots.base
    import bots.registry  # noqa: F401
    import games  # noqa: F401
    from arena.sandbox import _sys, host, landlock, protocol, seccomp, spawn, stock, template  # noqa: F401 - once, here
    _preload()
    # Everything imported so far lives as long as the server: out of every later collection, so a bot's garbage
    # collector never walks (and copies, page by page) the inherited objects (a full collection in a fresh fork:
    # ~50-80 ms unfrozen, ~3-8 ms frozen).
    gc.freeze()
    _sys.prctl(_sys.PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1:
        os._exit(0)
    sock = socket.socket(fileno=control_fd)
    statuses: dict[int, int] = {}
    children: set[int] = set()
    inits: dict[int, int] = {}  # children that are the init of their bot's PID namespace -> its status pipe
    self_fd = os.pidfd_open(os.getpid())  # readable once this process has exited: a child's check on its parent
    own_pid_ns = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    runtime_template = template.Template()
    inits_ahead = stock.Stock()

    def fork_init(pid_ns: bool, child: Callable[[int], None]) -> int:
        """Forks a bot's process; with ``pid_ns`` it is made pid 1 of a new PID namespace (the bot's init, whose
        status pipe goes to ``inits``), and this process goes back to its own namespace for its next children.
        Without the privilege the child makes the namespace itself and stays outside it as a relay
        (spawn._child_setup). ``child(status_w)`` runs in the child and never returns."""
        new_ns = False
        status_r, status_w = os.pipe() if pid_ns else (-1, -1)  # an init writes the bot's exact status
        if pid_ns:
            try:
                _sys.unshare(_sys.CLONE_NEWPID)
                new_ns = True
            except OSError:
                pass
        try:
            pid = os.fork()
            if pid == 0:
                for kept in (statuses, children, inits):  # earlier bots' pids and statuses
                    kept.clear()
                inits_ahead.forget()  # other inits' sockets, a request waiting
                child(status_w if new_ns else -1)
                os._exit(127)  # (unreachable: the child runs its bot or exits)
        except BaseException:
            if status_r >= 0:
                os.close(status_r)
            raise
        finally:
            if new_ns:
                _sys.setns(own_pid_ns, _sys.CLONE_NEWPID)
            if status_w >= 0:
                os.close(status_w)
        if new_ns:
            inits[pid] = status_r
        elif status_r >= 0:  # the child makes its namespace itself: its relay reads the init's pipe
            os.close(status_r)
        children.add(pid)
        return pid

    def reap() -> None:
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                children.clear()
                for fd in inits.values():
                    os.close(fd)
                inits.clear()
                return
            if pid == 0:
                return
            children.discard(pid)
            code = os.waitstatus_to_exitcode(status)
            if pid in inits:  # the bot's exact status, as its init wrote it; else what its init's status says
                exact = spawn.read_status(inits.pop(pid))
                code = exact if exact is not None else spawn.init_status(code)
            if pid in inits_ahead.dropped:  # a waiting init killed unused: nobody asks for its status
                inits_ahead.dropped.discard(pid)
            else:
                statuses[pid] = code

    def answer(message: dict[str, Any], fds: list[int] | None = None) -> None:
        try:
            _send(sock, message, fds)
        except ConnectionError:  # the referee is gone: nobody to serve
            os._exit(0)

    def fork_waiting(sock_fd: int) -> int:
        """Forks a waiting init for the stock's wanted shape (its end of the socket: ``sock_fd``)."""
        want = inits_ahead.wanted
        assert want is not None
        return fork_init(want.plan.pid_ns, lambda status_w: _wait_for_plan(sock_fd, self_fd, status_w, want))

    def hand_out(request: dict[str, Any]) -> bool:
        """Answers a spawn request with a waiting init of its shape: its pid and the socket it waits on for its plan
        (the referee sends it there); False when there is none (the stock is told the shape: the loop forks one and
        comes back). The request holds only the plan's runtime part (``spawn.runtime_part``)."""
        shape = spawn.Plan(**request["runtime"])
        template_fd = runtime_template.for_plan(shape)  # (-1: the bot's init mounts the runtime itself)
        want = stock.Shape.of(shape, template_fd, runtime_template.generation)
        inits_ahead.hurry()
        waiting = inits_ahead.take(want)
        if waiting is None:
            inits_ahead.want_now(want)
            return False
        try:
            stock.normal(waiting.pid)  # (it wakes at nice 0: its bot's start is timed)
            answer({"pid": waiting.pid, "depth": (1 if waiting.pid in inits else 2) if shape.pid_ns else 0},
                   [waiting.sock.fileno()])
        finally:
            waiting.sock.close()  # (the referee holds the only end now)
        # the next bots' first part, while this one's game is played (as many as the referee asks for)
        inits_ahead.want_ahead(want, max(0, min(int(request.get("ahead", stock.STOCK)), 8)))
        inits_ahead.paused = bool(request.get("hold"))
        return True

    while True:
        request = None  # nothing of the last request in this frame while the stock is filled
        # Ahead of need only once the referee is quiet, and not while a game's bots start (from a spawn request that
        # says hold to a "fill" or a status request): a fork started between two spawns held up the second, and a
        # fork and its copy of the runtime's mounts during the bots' load compete with them for the kernel's locks.
        while inits_ahead.short() and not inits_ahead.paused \
                and not (inits_ahead.ahead and select.select([sock], [], [], stock.QUIET)[0]):
            inits_ahead.fill(fork_waiting, 1)
        if inits_ahead.held is not None:  # a spawn request that waited for the fork just made
            request, inits_ahead.held = inits_ahead.held, None
        else:
            try:
                request, _ = _recv(sock)
            except ConnectionError:  # the referee went with an answer unread (killed, Ctrl-C): gone, as at end of file
                request = None
            if request is None:
                os._exit(0)
            reap()
        if request["op"] == "spawn":
            if not hand_out(request):
                inits_ahead.held = request
        elif request["op"] == "fill":  # (no answer)
            inits_ahead.paused = False
        elif request["op"] == "status":  # in a function of its own: no local of it outlives the request
            inits_ahead.paused = False  # (a game's bots are closing: no start of its is left to hold up)
            answer(_status(request["pid"], request["timeout"], statuses, children, reap))


def _status(pid: int, timeout: float, statuses: dict[int, int], children: set[int], reap: Any) -> dict[str, Any]:
    """The answer to a status request: the bot's exit status once it has exited within ``timeout``."""
    deadline = time.monotonic() + timeout
    if pid not in statuses and pid in children and timeout > 0:
        _wait_exit(pid, timeout)
        reap()
    while pid not in statuses and pid in children and time.monotonic() < deadline:
        time.sleep(0.002)
        reap()
    return {"status": statuses.pop(pid, None), "running": pid in children}


def _wait_exit(pid: int, timeout: float) -> None:
    """Sleeps until child ``pid`` exits or ``timeout`` passes (a pidfd wakes exactly at the exit)."""
    try:
        fd = os.pidfd_open(pid)
    except (OSError, AttributeError):
        return
    try:
        select.select([fd], [], [], timeout)
    finally:
        os.close(fd)


def _preload() -> None:
    """Imports every installed game (OpenSpiel's too, when it is installed) and every built-in bot's modules,
    once, before the first fork. What a bot inherits is then one fixed set whoever its opponents are and
    whatever this referee played before: imported on demand, ``bots._mc`` in ``sys.modules`` told a bot it
    played ``mc`` (docs/sandbox.md, "What a bot inherits"). No built-in bot pays for its imports either
    (~2-5 ms per bot); the server's start pays ~0.15 s once. A game or bot that fails to import is left for
    the bot's own start to report."""
    # start-up: only in the fork server
    import importlib

    from bots.registry import bot_class, bot_names
    from games.registry import game_class, game_names
    loads: list[tuple[Callable[[str], object], str]] = [(game_class, name) for name in game_names() + ["openspiel"]]
    loads += [(bot_class, n) for n in bot_names()]
    loads.append((importlib.import_module, "bots.generic"))  # the built-in bots' path for OpenSpiel games
    for load, name in loads:
        try:
            load(name)
        except Exception:  # noqa: BLE001, S110 - OpenSpiel not installed, a broken game: reported by its bot
            pass


def _wait_for_plan(sock_fd: int, parent_fd: int, status_fd: int, shape: Any) -> None:
    """A waiting init (:mod:`arena.sandbox.stock`): does the part of a bot's start that does not depend on the bot
    (its namespaces, a copy of the runtime template: ``spawn.enter_namespaces``), waits on ``sock_fd`` for the plan
    and pipes of its bot, then goes on as :func:`_child`. Exits at the socket's end of file (dropped, or the fork
    server gone). Does its first part at nice ``stock.BACKGROUND_NICE`` (0 again once a spawn request comes)."""
    # start-up: loaded by serve() already; named here for the child
    from arena.sandbox import spawn, stock
    try:
        null = os.open("/dev/null", os.O_RDWR)
        for std in (0, 1, 2):  # (nothing of the fork server's output: its bot's pipes come with the plan)
            os.dup2(null, std)
        template_fd = shape.template_fd
        _close_all_but({0, 1, 2, sock_fd, parent_fd} | {fd for fd in (status_fd, template_fd) if fd >= 0})
        os.setsid()
        if shape.stocked:  # (root: it can go back to nice 0; without root every init waits for no one)
            stock.background()
        if shape.plan.pid_ns:
            stock.wait_parent(parent_fd)
        os.umask(0o022)
        entered = template_fd >= 0
        if entered:
            spawn.enter_namespaces(shape.plan, 0, 0, template_fd)
        bot_ahead: tuple[int, socket.socket] | None = None
        if entered and shape.plan.pid_ns and os.getpid() == 1:  # the bot's own fork, ahead too
            bot_ahead = _fork_bot_ahead([sock_fd, parent_fd, status_fd])
        sock = socket.socket(fileno=sock_fd)
        request, fds = _recv(sock, 3)
        sock.close()
        if request is None or len(fds) != 3:
            os._exit(0)
        stock.normal()  # before anything of the bot's: its bot inherits the policy
        plan = spawn.Plan(**request["plan"])
        if not shape.fits(plan):
            raise OSError("the plan is of another shape than this waiting init's")
    except BaseException as exc:  # noqa: BLE001
        _start_failed(exc)
    _child(plan, fds, request["outer"], parent_fd, status_fd, entered=entered, bot_ahead=bot_ahead,
           plan_data=request["plan"])


def _fork_bot_ahead(init_fds: list[int]) -> tuple[int, socket.socket]:
    """In a waiting init that is pid 1 of its namespace: forks its bot now, which waits on a socket for its plan
    (:func:`_bot_ahead`) holding nothing of the init's (``init_fds`` are closed in it); (its pid, the init's end)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    bot = os.fork()
    if bot == 0:
        try:
            ours.close()
            for fd in init_fds:
                if fd >= 0:
                    os.close(fd)
        except BaseException:  # noqa: BLE001
            os._exit(127)
        _bot_ahead(theirs)
    theirs.close()
    return bot, ours


def _bot_ahead(sock: socket.socket) -> None:
    """A bot forked before its plan came: waits for its plan, pipes and cgroups from its init (which sends them once
    the root is mounted), then finishes its start (``spawn.bot_setup``) and becomes the host. Exits at the socket's
    end of file (its init ended without a bot)."""
    # start-up: loaded by serve() already; named here for the child
    from arena.sandbox import host, spawn
    try:
        request, fds = _recv(sock, 16)
        sock.close()
        if request is None or len(fds) < 3:
            os._exit(0)
        req_r, resp_w, err_w, *groups = fds
        os.dup2(err_w, 1)
        os.dup2(err_w, 2)
        _close_all_but({0, 1, 2, req_r, resp_w, *groups})
        spawn.bot_setup(spawn.Plan(**request["plan"]), groups)
        host.main([str(req_r), str(resp_w)])
    except BaseException as exc:  # noqa: BLE001
        _start_failed(exc)
    os._exit(0)


def _start_failed(exc: BaseException) -> NoReturn:
    """A child's start failed: says why on its stderr (the bot's pipe, once it has one) and exits 127."""
    try:
        os.write(2, f"arena sandbox: bot start failed: {exc}\n".encode())
    finally:
        os._exit(127)


def _close_all_but(keep: set[int]) -> None:
    start = 3
    for fd in sorted(keep) + [1 << 16]:
        if fd >= start:
            os.closerange(start, fd)
            start = fd + 1


def _child(plan: Any, fds: list[int], outer: list[int], parent_fd: int, status_fd: int = -1,
           template_fd: int = -1, entered: bool = False, bot_ahead: tuple[int, socket.socket] | None = None,
           plan_data: dict[str, Any] | None = None) -> None:
    """In the forked child: become a hardened bot host, exactly as the exec path does (``status_fd``: the pipe to
    the fork server for the bot's exact status, when this process is its namespace's init; ``template_fd``: the
    runtime's mount namespace, :mod:`arena.sandbox.template`)."""
    # start-up: loaded by serve() already; named here for the child
    from arena.sandbox import host, spawn, stock
    try:
        req_r, resp_w, err_w = fds
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(err_w, 1)
        os.dup2(err_w, 2)
        # close everything else: the control socket, the zygote's files
        _close_all_but({0, 1, 2, req_r, resp_w, parent_fd} | {fd for fd in (status_fd, template_fd) if fd >= 0}
                       | ({bot_ahead[1].fileno()} if bot_ahead is not None else set()))
        hand_over = None
        if bot_ahead is not None:
            bot, bot_sock = bot_ahead

            def hand_over(groups: list[int]) -> int:
                """The bot forked ahead gets its plan, its pipes (1: its stderr) and its cgroups, at the normal
                policy."""
                stock.normal(bot)
                _send(bot_sock, {"plan": plan_data}, [req_r, resp_w, 1, *groups])
                return bot
        spawn._child_setup(plan, outer[0], outer[1], parent_fd, status_fd, template_fd, entered, hand_over)
        host.main([str(req_r), str(resp_w)])
    except BaseException as exc:  # noqa: BLE001
        _start_failed(exc)
    os._exit(0)


# -- the referee side ------------------------------------------------------------------------------------
class ZygoteChild:
    """A bot started by the zygote, with the parts of the ``Popen`` interface the proxy uses."""

    def __init__(self, zygote: Zygote, pid: int, depth: int = 0) -> None:
        self.zygote = zygote
        self.pid = pid
        self.bot_depth = depth
        """How many forks below ``pid`` the bot's own process is (its PID namespace's init, a relay)."""
        self.returncode: int | None = None

    def poll(self) -> int | None:
        return self.wait(0.0, raise_timeout=False)

    def wait(self, timeout: float | None = None, raise_timeout: bool = True) -> int | None:
        if self.returncode is None:
            self.returncode = self.zygote.status(self.pid, 3600.0 if timeout is None else timeout)
        if self.returncode is None and raise_timeout:
            raise subprocess.TimeoutExpired(f"bot {self.pid}", timeout or 0.0)
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass


class Zygote:
    """The referee's handle on its fork server (one per referee process, started lazily)."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.owner = os.getpid()
        self._lock = threading.Lock()
        self._sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._theirs = theirs
        started = threading.Event()
        self._error: BaseException | None = None
        self.proc: subprocess.Popen | None = None

        def keeper() -> None:  # PDEATHSIG follows the creating *thread*: this one never exits
            try:
                self.proc = subprocess.Popen(argv + [str(theirs.fileno())], pass_fds=(theirs.fileno(),), env=env,
                                             stdin=subprocess.DEVNULL, close_fds=True)
            except BaseException as exc:  # noqa: BLE001
                self._error = exc
            started.set()
            threading.Event().wait()

        threading.Thread(target=keeper, name="arena-zygote-keeper", daemon=True).start()
        started.wait()
        theirs.close()
        if self._error is not None:
            raise OSError(f"cannot start the bot fork server: {self._error}")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def spawn(self, plan: Any, fds: tuple[int, int, int], hold: bool = False) -> ZygoteChild:
        """Starts one bot by ``plan`` with (request read end, response write end, stderr write end). The server is
        told only the plan's runtime part and hands back a waiting init's socket; the plan and pipes go there from
        this process, so the server learns nothing of the bot: not its code, its snapshot, its cgroups or its
        opponents. ``hold``: the server forks no init ahead till :meth:`fill` (or a status request): the game's other
        bots are still to start."""
        # start-up: the referee side loads the child's set-up only when a bot starts
        from arena.sandbox import spawn, stock
        spawn.choose_pid_ns(plan)
        whole = {f.name: getattr(plan, f.name) for f in fields(plan)}  # (not asdict: its deep copy cost ~1 ms a bot)
        for _ in range(3):  # (an init that dies between the answer and the plan: the next one)
            with self._lock:
                _send(self._sock, {"op": "spawn", "runtime": spawn.runtime_part(plan), "ahead": stock.size(),
                                   "hold": hold})
                reply, init_fds = _recv(self._sock, 1)
            if reply is None or len(init_fds) != 1:
                list(map(os.close, init_fds))
                raise OSError("the bot fork server exited")
            with socket.socket(fileno=init_fds[0]) as init:
                try:
                    _send(init, {"plan": whole, "outer": [os.getuid(), os.getgid()]}, list(fds))
                except OSError:
                    self.status(reply["pid"], 0.0)  # (its status, so the server keeps none)
                    continue
            return ZygoteChild(self, reply["pid"], reply.get("depth", 0))
        raise OSError("the bot fork server's inits died before their plans came")

    def fill(self) -> None:
        """Lets the server fork inits ahead again (a spawn request with ``hold`` held them back)."""
        with self._lock:
            _send(self._sock, {"op": "fill"})

    def status(self, pid: int, timeout: float) -> int | None:
        """The exit status of a bot (Popen convention: -N for signal N), None while it runs."""
        with self._lock:
            _send(self._sock, {"op": "status", "pid": pid, "timeout": max(0.0, min(timeout, 5.0))})
            reply, _ = _recv(self._sock)
        return None if reply is None else reply["status"]


_ZYGOTE: Zygote | None = None
_ZYGOTE_LOCK = threading.Lock()


def get(argv: list[str], env: dict[str, str]) -> Zygote:
    """This process's zygote, started on first use (and restarted if it died)."""
    global _ZYGOTE
    with _ZYGOTE_LOCK:
        # A forked referee (e.g. a multiprocessing worker) must not share its parent's control socket.
        if _ZYGOTE is None or _ZYGOTE.owner != os.getpid() or not _ZYGOTE.alive():
            _ZYGOTE = Zygote(argv, env)
        return _ZYGOTE


def current() -> Zygote | None:
    """This process's fork server when it has one running (None: nothing is started)."""
    server = _ZYGOTE
    return server if server is not None and server.owner == os.getpid() and server.alive() else None


def running_pid() -> int | None:
    """The pid of this process's fork server, None when it has none running (benchmarks read its CPU time)."""
    server = _ZYGOTE
    return server.proc.pid if server is not None and server.proc is not None and server.alive() \
        and server.owner == os.getpid() else None


def enabled() -> bool:
    """The fork server is on unless ``ARENA_SANDBOX_ZYGOTE=0``."""
    return os.environ.get("ARENA_SANDBOX_ZYGOTE", "1") != "0" and sys.platform.startswith("linux")
