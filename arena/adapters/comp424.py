"""COMP424 agents, unchanged: a course checkout (or a hand-in) played as an arena bot (docs/comp424.md).

The McGill COMP424 Colosseum Survival course gave students ``store.py`` (``AGENT_REGISTRY`` and the
``register_agent(name)`` decorator), ``agents/agent.py`` (class ``Agent``) and ``agents/student_agent.py``
(``@register_agent("student_agent") class StudentAgent(Agent)`` whose ``step(chess_board, my_pos, adv_pos,
max_step)`` returns ``((r, c), dir)``).

:func:`take_agent` turns such a folder into an ordinary bot snapshot: every file of the folder plus one entry
file written by arena (:data:`ENTRY`), which builds a ``Bot`` with :func:`agent_bot`. So a COMP424 agent goes
wherever a folder bot goes (``arena match``, leagues, ``arena submit``, Ray) and runs sandboxed like any bot;
the digest covers the agent's name, so two agents of one checkout are two bots.

In the bot's process :func:`agent_bot` supplies ``store`` and ``agents.agent`` when the folder lacks them (a
hand-in of ``student_agent.py`` alone is also an ``agents`` package), imports the agent, and translates: the
state to ``chess_board`` (numpy bool ``(M, M, 4)``: up, right, down, left), ``my_pos``/``adv_pos`` (``(row,
col)`` tuples) and ``max_step``; the answer to an arena action. An answer that is not ``((r, c), dir)`` on the
board, or an exception in ``step``, is the bot's illegal answer: the process lives on, so under ``on_failure =
"random_move"`` the referee plays the course engine's random walk for it and asks it again next turn, as the
course engine did.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import random
import sys
import types
from pathlib import Path
from typing import Any

from arena.adapters.comp424_names import ENTRY, PREFIX, is_agent_arg
from arena.errors import ConfigError, IllegalMoveError
from arena.submissions.snapshot import MB, Snapshot, make
from arena.submissions.take import take

DEFAULT_AGENT = "student_agent"

_ENTRY_TEXT = '''\
# Written by arena (arena.adapters.comp424), not by the agent's author: runs the COMP424 agent registered as {agent!r}.
from arena.adapters.comp424 import agent_bot

Bot = agent_bot({agent!r}, __file__)
'''


def parse_agent_arg(bot: str) -> tuple[str, str]:
    """``comp424:PATH`` -> (PATH, "student_agent"); ``comp424:PATH@name`` -> (PATH, name)."""
    rest = bot[len(PREFIX):]
    path, _, agent = rest.rpartition("@") if "@" in os.path.basename(rest) else (rest, "", "")
    return path, agent or DEFAULT_AGENT


def take_agent(path: str | os.PathLike[str], agent: str = DEFAULT_AGENT, max_bytes: int = MB, *,
               setting: str = "--max-bot-mb") -> Snapshot:
    """A snapshot of a COMP424 folder (or a lone ``student_agent.py``) that runs the agent registered as
    ``agent``.

    Raises:
        ConfigError: one line: the path is missing or too large, holds no agent code, or already has a file
            named like arena's entry.
    """
    where = os.fspath(path)
    if not agent.isidentifier():
        raise ConfigError(f"COMP424 agent name {agent!r} is not a registered agent name (letters, digits, _)")
    entry = None
    if os.path.isdir(where):
        tops = sorted(n for n in os.listdir(where) if n.endswith(".py") and os.path.isfile(os.path.join(where, n)))
        if not tops and not os.path.isdir(os.path.join(where, "agents")):
            raise ConfigError(f"COMP424 folder {where} has neither an agents/ folder nor a student_agent.py: "
                              "give the course checkout or the folder of the hand-in")
        entry = tops[0] if tops else None
    if entry is None and os.path.isdir(where):
        raise ConfigError(f"COMP424 folder {where} has no .py file at its top (the course checkout has world.py "
                          "and store.py there)")
    snap = take(where, entry, max_bytes, setting=setting)
    return agent_snapshot(dict(snap.files), snap.name.removesuffix(".py"), agent, where)


def agent_snapshot(files: dict[str, bytes], folder: str, agent: str = DEFAULT_AGENT, where: str = "") -> Snapshot:
    """The snapshot of a COMP424 checkout's ``files`` (already read and checked, e.g. an unpacked upload) that
    runs the agent registered as ``agent``; shared by :func:`take_agent` and ``arena serve``'s uploads.

    Raises:
        ConfigError: one line: no agent code, or a file named like arena's entry.
    """
    if ENTRY in files:
        raise ConfigError(f"COMP424 folder {where or folder} has a file named {ENTRY}, which arena writes itself; "
                          "rename it")
    if not any(p.endswith(".py") for p in files):
        raise ConfigError(f"COMP424 folder {where or folder} holds no .py file (give the course checkout or the "
                          "hand-in)")
    files = dict(files)
    files[ENTRY] = _ENTRY_TEXT.format(agent=agent).encode()
    # named as the user names it (comp424:FOLDER[@agent]): the store lists it so, never as arena's entry file
    return make(ENTRY, files, f"{PREFIX}{folder}" if agent == DEFAULT_AGENT else f"{PREFIX}{folder}@{agent}")


# -- in the bot's process --------------------------------------------------------------------------------
def _supply_course_modules(root: str) -> None:
    """Makes ``store``, ``agents`` and ``agents.agent`` importable as the course's skeleton defines them, using
    the folder's own files where they exist."""
    if not os.path.isfile(os.path.join(root, "store.py")) and "store" not in sys.modules:
        store = types.ModuleType("store", "AGENT_REGISTRY and register_agent, as the COMP424 skeleton's store.py")
        store.AGENT_REGISTRY = {}  # type: ignore[attr-defined]

        def register_agent(agent_name: str = "") -> Any:
            def decorator(func: Any) -> Any:
                if agent_name in store.AGENT_REGISTRY:
                    raise AssertionError(f"Agent {agent_name} is already registered.")
                store.AGENT_REGISTRY[agent_name] = func
                return func
            return decorator

        store.register_agent = register_agent  # type: ignore[attr-defined]
        sys.modules["store"] = store
    agents_dir = os.path.join(root, "agents")
    if not os.path.isdir(agents_dir):  # a hand-in: the folder itself is the agents package
        package = types.ModuleType("agents")
        package.__path__ = [root]
        sys.modules["agents"] = package
    if not os.path.isfile(os.path.join(root, "agents", "agent.py")) and "agents.agent" not in sys.modules:
        base = types.ModuleType("agents.agent", "class Agent, as the COMP424 skeleton's agents/agent.py")

        class Agent:
            def __init__(self) -> None:
                self.name = "DummyAgent"
                self.autoplay = False

            def __str__(self) -> str:
                return self.name

            def step(self, chess_board: Any, my_pos: Any, adv_pos: Any, max_step: int) -> Any:
                pass

        Agent.__module__ = "agents.agent"
        base.Agent = Agent  # type: ignore[attr-defined]
        sys.modules["agents.agent"] = base


def _find_agent(root: str, agent: str) -> type:
    """The class registered as ``agent``: its own module first (``agents/<agent>.py``), then the whole
    ``agents`` package, then every module of it one by one (a course ``agents/__init__.py`` may import a
    module that needs a display)."""
    store = importlib.import_module("store")
    registry = store.AGENT_REGISTRY
    problems: list[str] = []
    unparsed: SyntaxError | None = None  # the agent's module is not Python: said as such, with where
    folder = os.path.join(root, "agents") if os.path.isdir(os.path.join(root, "agents")) else root
    candidates = [agent] + ["__package__"] + sorted(
        n[:-3] for n in os.listdir(folder) if n.endswith(".py") and n not in ("__init__.py", ENTRY))
    for module in candidates:
        if agent in registry:
            break
        if module == "__package__":
            target = "agents"
        elif os.path.isfile(os.path.join(folder, module + ".py")):
            target = f"agents.{module}"
        else:
            continue
        try:
            importlib.import_module(target)
        except Exception as exc:  # noqa: BLE001 - the next candidate may still register it; reported below
            problems.append(f"{target}: {type(exc).__name__}: {exc}")
            if isinstance(exc, SyntaxError) and target == f"agents.{agent}":  # its own module (or one it imports)
                unparsed = exc
            if target == "agents":  # a broken __init__: reach the modules without it
                package = types.ModuleType("agents")
                package.__path__ = [folder]
                sys.modules["agents"] = package
    if agent not in registry and unparsed is not None:
        raise unparsed.with_traceback(None)  # its file and line, as any bot's syntax error is reported
    if agent not in registry:
        known = ", ".join(sorted(registry)) or "none"
        detail = f"; imports that failed: {'; '.join(problems)[:400]}" if problems else ""
        raise LookupError(f"no agent registered as {agent!r} (registered: {known}){detail}")
    return registry[agent]


def agent_bot(agent: str, entry_file: str) -> type:
    """The arena ``Bot`` class that plays the COMP424 agent ``agent`` of the folder holding ``entry_file``."""
    root = os.path.dirname(os.path.abspath(entry_file))

    class Bot:
        name = f"comp424:{agent}"

        def __init__(self, game: Any, seat: int, seed: int) -> None:
            if getattr(game, "name", None) != "colosseum":
                raise ValueError(f"a COMP424 agent plays colosseum, not {game}")
            import numpy as np  # start-up: numpy only for this view
            random.seed(seed)  # course agents draw from the global generators: seeded per bot, reproducible
            np.random.seed(seed % 2**32)
            if root not in sys.path:
                sys.path.insert(0, root)
            os.chdir(root)  # the course ran world.py from the checkout's root: agents open files relative to it
            _supply_course_modules(root)
            self.seat = seat
            self.agent = _find_agent(root, agent)()

        def step(self, state: Any, limit: Any) -> Any:
            from games.colosseum.arrays import chess_board  # start-up: numpy only for this view
            size = state.size
            mine, theirs = (tuple(p) for p in (state.positions()[self.seat], state.positions()[1 - self.seat]))
            try:
                answer = self.agent.step(chess_board(state), mine, theirs, int(state.max_step))
            except Exception as exc:  # noqa: BLE001 - the course engine's rule: a wrong answer, not the end
                # the bot's illegal answer, the process lives on; the host records the agent's traceback as the detail
                raise IllegalMoveError(f"the agent raised {type(exc).__name__}: {exc}"[:300]) from exc
            return to_action(answer, size)

    Bot.__qualname__ = Bot.__name__ = f"COMP424Agent_{agent}"
    return Bot


def to_action(answer: Any, size: int) -> int | str:
    """The arena action for a course answer ``((r, c), dir)``, or a string saying why it is not one (which
    the referee records as the bot's illegal answer)."""
    import numpy as np  # start-up: numpy only for this view
    try:
        (r, c), d = answer
        r, c, d = (int(v) if isinstance(v, (int, np.integer)) and not isinstance(v, bool) else None
                   for v in (r, c, d))
    except (TypeError, ValueError):
        return f"not ((row, col), dir): {answer!r}"[:300]
    if r is None or c is None or d is None:
        return f"not ((row, col), dir) in integers: {answer!r}"[:300]
    if not (0 <= r < size and 0 <= c < size):
        return f"end position {(r, c)} is off the {size}x{size} board"
    if not 0 <= d <= 3:
        return f"barrier dir should be in [0, 3], not {d}"
    return (r * size + c) * 4 + d


def check_entry(base: Any, file: str | None, entry: str | None, games: Any) -> Any:
    """Checks a league file's ``format = "comp424"`` bot; returns its resolved path.

    Raises:
        ValueError: no ``file``, a missing path, an ``entry`` (arena writes the entry), or a game that is not
            colosseum.
    """
    if file is None:
        raise ValueError('format = "comp424" needs file = "the course checkout or hand-in folder"')
    if entry is not None:
        raise ValueError('entry is not used with format = "comp424" (arena runs the registered agent; name it with '
                         'agent = "...")')
    path = (Path(base) / file).resolve()
    if not path.exists():
        raise ValueError(f"COMP424 folder {file!r} not found (looked for {path})")
    others = [g for g in games if not str(g).startswith("colosseum")]
    if others:
        raise ValueError(f"a COMP424 agent plays colosseum only, not {others[0]}; restrict it with "
                         'games = ["colosseum"]')
    return path


def enter(bot: Any, max_bytes: int, *, setting: str = "--max-bot-mb") -> Any:
    """A ``comp424:PATH[@agent]`` bot argument as its snapshot; any other argument unchanged."""
    if is_agent_arg(bot):
        path, agent = parse_agent_arg(bot)
        return take_agent(path, agent, max_bytes, setting=setting)
    return bot
