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
import os
import sys
import traceback
from typing import Any

from arena.sandbox import protocol

_IN_FD = -1
_OUT_FD = -1


def _send(message: dict[str, Any]) -> None:
    protocol.write_frame(_OUT_FD, message)


def _write_all(data: bytes) -> None:
    while data:
        data = data[os.write(_OUT_FD, data):]


def _fail(reason: str, exc: BaseException | None = None) -> None:
    if exc is not None:
        try:
            traceback.print_exception(exc, file=sys.stderr)
        except MemoryError:
            print(f"{type(exc).__name__}", file=sys.stderr)
    sys.stderr.flush()
    try:
        _send({"type": "error", "reason": reason, "detail": f"{type(exc).__name__}: {exc}"[:500] if exc else ""})
    except OSError:
        pass
    os._exit(1)


def apply_layers(layers: dict[str, Any]) -> dict[str, Any]:
    """Applies the in-process layers the referee asked for; returns what is active."""
    active: dict[str, Any] = {"uid": os.getuid()}
    if layers.get("landlock"):
        from arena.sandbox import landlock
        active["landlock"] = landlock.restrict(layers["read_paths"])
    if layers.get("seccomp"):
        from arena.sandbox import seccomp
        seccomp.install(deny_affinity=bool(layers.get("deny_affinity")))  # no cpuset holds its CPUs
        active["seccomp"] = True
    return active


def load_bot(spec: dict[str, Any], game: Any, seat: int, seed: int) -> Any:
    """Builds the bot: a built-in spec via the registry, or ``Bot(game, seat, seed)`` from a file."""
    if spec["kind"] == "builtin":
        import bots
        return bots.make(spec["spec"], game, seat, seed)
    path = spec["path"]
    sys.path.insert(0, os.path.dirname(path))  # the bot may import helper modules from its own directory
    module_spec = importlib.util.spec_from_file_location("submitted_bot", path)
    if module_spec is None or module_spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules["submitted_bot"] = module
    module_spec.loader.exec_module(module)
    cls = getattr(module, "Bot", None)
    if cls is None:
        raise AttributeError(f"{os.path.basename(path)} defines no class Bot (the contract: class Bot(game, seat, seed) "
                             "with step(self, state, limit))")
    return cls(game, seat, seed)


def _as_action(value: Any) -> dict[str, Any]:
    if isinstance(value, int) and not isinstance(value, bool):
        if -(2**63) <= value < 2**63:
            return {"action": value}
        return {"bad_action": f"an integer with {len(hex(value)) * 4 // 3} digits"}
    try:  # numpy integers and friends
        import operator
        if not isinstance(value, (bool, float, str)):
            return _as_action(operator.index(value))
    except TypeError:
        pass
    return {"bad_action": repr(value)[:200]}


def serve() -> None:
    """The host's main loop."""
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
        _fail("crash", exc)
    try:
        active = apply_layers(init.get("layers", {}))
    except Exception as exc:  # noqa: BLE001 - the referee must not run a bot with missing layers
        print(f"arena sandbox: could not apply layers: {exc}", file=sys.stderr)
        _fail("crash", exc)
    seat = init["seat"]
    try:
        bot = load_bot(init["bot"], game, seat, init["seed"])
    except MemoryError as exc:
        _fail("memory", exc)
    except BaseException as exc:  # noqa: BLE001 - SystemExit at import is a crash too
        _fail("crash", exc)
    inform = getattr(bot, "inform", None)
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
                    _fail("memory", exc)
                except BaseException as exc:  # noqa: BLE001
                    _fail("crash", exc)
        lim = request.get("limit")
        if lim is not None or limit is None:  # the referee sends the limit only when it changes
            lim = lim or {}
            key = (lim.get("time"), lim.get("memory_mb"), bool(lim.get("first_move")), lim.get("think"))
            limit = limits.get(key)
            if limit is None:
                limit = limits[key] = Limit(time=key[0], memory_mb=key[1], first_move=key[2], think=key[3])
        try:
            value = bot.step(state.clone(), limit)
        except MemoryError as exc:
            _fail("memory", exc)
        except BaseException as exc:  # noqa: BLE001
            _fail("crash", exc)
        if type(value) is int and 0 <= value < 10**18:  # the common answer: one preformatted frame, one write
            _write_all(protocol.answer_frame(request["id"], value))
            continue
        answer = _as_action(value)
        answer["id"] = request["id"]
        _send(answer)


def main(argv: list[str]) -> None:
    global _IN_FD, _OUT_FD
    _IN_FD, _OUT_FD = int(argv[0]), int(argv[1])
    os.dup2(2, 1)  # print() goes to the captured stderr pipe, never into the protocol
    serve()


if __name__ == "__main__":
    main(sys.argv[1:])
