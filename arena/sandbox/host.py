"""The bot side of a sandboxed game: ``python -m arena.sandbox.host REQ_FD RESP_FD``.

Runs inside the sandbox (see :mod:`arena.sandbox.spawn`). It reads an ``init`` frame (game spec, seat,
seed, which bot, which in-process layers to apply), rebuilds the game itself, applies Landlock and
seccomp, loads the bot (a file defining ``class Bot`` or a built-in spec), answers ``ready``, then
answers every ``step`` frame with ``{"id": n, "action": a}``. The state is rebuilt from the game spec
and the actions the referee sends; nothing is ever pickled. A failing bot prints its traceback to
stderr (which the referee keeps) and reports ``{"error": reason}`` before exiting.
"""
from __future__ import annotations

import importlib.util
import operator
import os
import sys
from typing import Any

from arena.errors import IllegalMoveError
from arena.results.outcome import Termination
from arena.sandbox import protocol
from arena.sandbox.tracebacks import bot_traceback

_IN_FD = -1
_OUT_FD = -1
_ROOT: str | None = None  # the bot's snapshot folder: its traceback shows paths relative to it (None: built-in)


def _send(message: dict[str, Any]) -> None:
    protocol.write_frame(_OUT_FD, message)


def _write_all(data: bytes) -> None:
    while data:
        data = data[os.write(_OUT_FD, data):]


def _fail(reason: Termination, exc: BaseException | None = None) -> None:
    """Reports the bot's failure and exits. Everything here touches bot objects (the exception's ``__str__``,
    its traceback, a replaced ``sys.stderr``), so nothing may raise: the report must say what the bot did."""
    if exc is not None:
        try:  # the bot's own frames only, relative to its snapshot: never the host's or the install path
            print(bot_traceback(exc, _ROOT), file=sys.stderr)
        except BaseException:  # noqa: BLE001 - a deep chain, a raising __str__, a broken sys.stderr
            try:
                print(_exception_text(exc), file=sys.__stderr__)
            except BaseException:  # noqa: BLE001, S110
                pass
    try:
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001, S110
        pass
    try:
        _send({"type": "error", "reason": reason, "detail": _exception_text(exc)[:500] if exc else ""})
    except BaseException:  # noqa: BLE001, S110 - the referee then sees the exit and the stderr tail
        pass
    os._exit(1)


def _type_name(value: Any) -> str:
    """The name of a value's class, read without running any of the bot's code (a metaclass may override it)."""
    return _printable(type.__dict__["__name__"].__get__(type(value)))


def _printable(text: str) -> str:
    """``text`` without lone surrogates (they cannot be encoded further down: the store, a terminal)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _exception_text(exc: BaseException) -> str:
    """``Type: message`` of an exception; its type alone when its ``__str__`` (bot code) fails."""
    try:
        return _printable(f"{_type_name(exc)}: {exc}")
    except BaseException:  # noqa: BLE001
        return f"{_type_name(exc)} (its message could not be shown)"


def _exception_message(exc: BaseException) -> str:
    """An exception's message; its type alone when its ``__str__`` (bot code) fails."""
    try:
        return _printable(str(exc))
    except BaseException:  # noqa: BLE001
        return _type_name(exc)


def _describe(value: Any) -> str:
    """A short description of a bot's answer: its repr, or its type when the repr itself fails (a list nested
    deeper than the recursion limit, an int too long to print, a ``__repr__`` that raises)."""
    try:
        return _printable(repr(value)[:200])
    except MemoryError:
        raise
    except BaseException as exc:  # noqa: BLE001
        return f"a {_type_name(value)} that cannot be shown ({_exception_text(exc)[:200]})"


def apply_layers(layers: dict[str, Any]) -> dict[str, Any]:
    """Applies the in-process layers the referee asked for; returns what is active."""
    active: dict[str, Any] = {"uid": os.getuid()}
    if layers.get("landlock"):
        # start-up: a layer's module loads only when the referee asks for the layer
        from arena.sandbox import landlock
        active["landlock"] = landlock.restrict(layers["read_paths"])
    if layers.get("seccomp"):
        # start-up: a layer's module loads only when the referee asks for the layer
        from arena.sandbox import seccomp
        seccomp.install(deny_affinity=bool(layers.get("deny_affinity")))  # no cpuset holds its CPUs
        active["seccomp"] = True
    return active


def load_bot(spec: dict[str, Any], game: Any, seat: int, seed: int) -> Any:
    """Builds the bot: a built-in spec via the registry, or ``Bot(game, seat, seed)`` from a file."""
    if spec["kind"] == "builtin":
        # start-up: the bot registry only for a built-in bot (a bot file's process never loads it)
        import bots
        return bots.make(spec["spec"], game, seat, seed)
    global _ROOT
    path = spec["path"]
    _ROOT = os.path.dirname(path)
    sys.path.insert(0, _ROOT)  # the bot may import helper modules from its own directory
    module_spec = importlib.util.spec_from_file_location("submitted_bot", path)
    if module_spec is None or module_spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules["submitted_bot"] = module
    module_spec.loader.exec_module(module)
    cls = getattr(module, "Bot", None)
    if cls is None:
        raise AttributeError(f"{os.path.basename(path)} defines no class Bot "
                             "(the contract: class Bot(game, seat, seed) "
                             "with step(self, state, limit))")
    return cls(game, seat, seed)


def _as_action(value: Any) -> dict[str, Any]:
    """The answer frame for what ``step`` returned: ``{"action": n}`` or ``{"bad_action": description}`` (the
    referee records the bot's illegal answer). Reading the value runs the bot's code (``__index__``,
    ``__repr__``, ``__class__``): whatever that raises is the bot's bad answer, never the host's crash."""
    try:
        return _read_action(value)
    except MemoryError:
        raise
    except BaseException as exc:  # noqa: BLE001
        return {"bad_action": f"a {_type_name(value)} that is not an action ({_exception_text(exc)[:200]})"}


def _read_action(value: Any) -> dict[str, Any]:
    kind = type(value)  # exact type checks: isinstance() would consult the value's own __class__
    if issubclass(kind, int) and kind is not bool:
        number = int.__index__(value)  # the plain int, without the subclass's own comparisons or repr
        if -(2**63) <= number < 2**63:
            return {"action": number}
        return {"bad_action": f"an integer of {number.bit_length()} bits"}
    if kind is bool or issubclass(kind, (float, str, bytes)):
        return {"bad_action": _describe(value)}
    try:  # numpy integers and friends
        number = operator.index(value)
    except TypeError:
        return {"bad_action": _describe(value)}
    return _read_action(number)


def serve() -> None:
    """The host's main loop."""
    # start-up: only in the main loop (a process that imports this module for its helpers loads no game)
    import games
    from bots.base import Limit
    reader = protocol.FrameReader(_IN_FD)
    init = reader.read()
    if init is None:
        os._exit(0)
    try:
        game = games.load(init["game"])
        state = game.new_initial_state()
    except Exception as exc:  # noqa: BLE001 - reported to the referee
        _fail(Termination.CRASH, exc)
    try:
        active = apply_layers(init.get("layers", {}))
    except Exception as exc:  # noqa: BLE001 - the referee must not run a bot with missing layers
        print(f"arena sandbox: could not apply layers: {exc}", file=sys.stderr)
        _fail(Termination.CRASH, exc)
    seat = init["seat"]
    try:
        bot = load_bot(init["bot"], game, seat, init["seed"])
    except MemoryError as exc:
        _fail(Termination.MEMORY, exc)
    except BaseException as exc:  # noqa: BLE001 - SystemExit at import is a crash too
        _fail(Termination.CRASH, exc)
    try:  # the lookup runs the bot's own __getattr__
        inform = getattr(bot, "inform", None)
    except BaseException as exc:  # noqa: BLE001
        _fail(Termination.CRASH, exc)
    _send({"type": "ready", "layers": active})
    limits: dict[tuple[Any, Any, bool, Any], Limit] = {}  # one Limit object per distinct limit (usually two)
    limit: Limit | None = None
    while True:
        request = reader.read()
        if request is None:
            os._exit(0)
        if request.get("type") != "step":
            continue
        for action in request.get("actions", []):
            who = state.current_player()
            state.apply_action(action)
            if inform is not None and who != seat:
                try:
                    inform(action)
                except MemoryError as exc:
                    _fail(Termination.MEMORY, exc)
                except BaseException as exc:  # noqa: BLE001
                    _fail(Termination.CRASH, exc)
        lim = request.get("limit")
        if lim is not None or limit is None:  # the referee sends the limit only when it changes
            lim = lim or {}
            key = (lim.get("time"), lim.get("memory_mb"), bool(lim.get("first_move")), lim.get("think"))
            if lim.get("clock") is not None:  # a game clock: a new limit every move (none is kept)
                limit = Limit(time=key[0], memory_mb=key[1], first_move=key[2], think=key[3], clock=lim["clock"],
                              increment=lim.get("increment"), moves_to_go=lim.get("moves_to_go"))
            else:
                limit = limits.get(key)
                if limit is None:
                    limit = limits[key] = Limit(time=key[0], memory_mb=key[1], first_move=key[2], think=key[3])
        try:
            value = bot.step(state.clone(), limit)
        except MemoryError as exc:
            _fail(Termination.MEMORY, exc)
        except IllegalMoveError as exc:  # an adapter's illegal answer (a COMP424 agent that raised): the bot lives on
            _send({"id": request["id"], "illegal": _exception_message(exc)[:300],
                   "traceback": bot_traceback(exc.__cause__ or exc, _ROOT)[-2000:]})
            continue
        except BaseException as exc:  # noqa: BLE001
            _fail(Termination.CRASH, exc)
        if type(value) is int and 0 <= value < 10**18:  # the common answer: one preformatted frame, one write
            _write_all(protocol.answer_frame(request["id"], value))
            continue
        try:
            answer = _as_action(value)
        except MemoryError as exc:
            _fail(Termination.MEMORY, exc)
        answer["id"] = request["id"]
        _send(answer)


def main(argv: list[str]) -> None:
    global _IN_FD, _OUT_FD
    _IN_FD, _OUT_FD = int(argv[0]), int(argv[1])
    os.dup2(2, 1)  # print() goes to the captured stderr pipe, never into the protocol
    serve()


if __name__ == "__main__":
    main(sys.argv[1:])
