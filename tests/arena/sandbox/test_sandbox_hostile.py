"""The hostile-bot suite: real processes, real kernel features. Each attack must be recorded with the
right reason, have no effect, and leave no process behind."""
from __future__ import annotations

import json
import os
import socket
import uuid

import pytest

from arena.sandbox import check
from tests.arena.sandbox_helpers import FAST, IS_ROOT, assert_nothing_left, place, play

pytestmark = pytest.mark.xdist_group("sandbox")

if check.missing_mandatory():
    pytest.skip(f"mandatory sandbox layers missing on this machine: {check.missing_mandatory()}",
                allow_module_level=True)


def only_failure(record, seat=0):
    assert [f.seat for f in record.failures] == [seat], record.failures
    return record.failures[0]


def outcome(detail: str, key: str, sep: str = " | ") -> str:
    """What the hostile bot reported for one attempt (``key: outcome`` in the error it raised): positive
    evidence that the attempt ran. A bot that never ran, or stopped before this attempt, fails here."""
    assert f"{key}: " in detail, f"no report of the attempt {key!r}: the attack did not run\n{detail}"
    return detail.split(f"{key}: ", 1)[1].split(sep, 1)[0].split("\n", 1)[0]


def test_bot_runs_under_its_own_uid_not_root(tmp_path):
    record = play(place("whoami", tmp_path))
    detail = only_failure(record).detail
    uid = int(detail.split("uid=")[1].split()[0])
    assert uid == record.info["bot_uids"][0]
    if IS_ROOT:
        assert uid != 0 and "groups=[]" in detail, detail
    else:
        assert uid == os.getuid()


def test_memory_bomb_is_memory_where_the_referee_can_tell(tmp_path):
    # A generous move time: the bomb must hit the memory limit, not the clock, even on a loaded machine.
    # With a memory cgroup its OOM events establish it. Without one the bomb meets RLIMIT_AS, which shows only as
    # a MemoryError inside the bot: the referee cannot tell that from a bot raising one, so it is a crash with the
    # bot's own words quoted.
    record = play(place("memory_bomb", tmp_path),
                  limits=FAST.with_(move_time=10.0, first_move_time=10.0, memory_mb=100))
    failure = only_failure(record)
    assert record.returns == [-1.0, 1.0]
    if "cgroup_memory" in record.info["sandbox"]:
        assert record.terminations == ["memory", "normal"]
    else:
        assert failure.reason == "crash", failure
        assert "MemoryError" in failure.detail and "could not confirm" in failure.detail, failure.detail


FAKES = {"exit152": "exited with status 152", "print_memoryerror": "exited with status 1",
         "raise_memoryerror": "MemoryError: faked", "sigxcpu": "killed by signal SIGXCPU",
         "sigkill": "killed by signal SIGKILL"}


@pytest.mark.parametrize("mode", sorted(FAKES))
def test_a_bot_cannot_fake_a_timeout_or_memory_failure(tmp_path, mode):
    # Its exit status, its output and the signals it sends itself are facts to record, never a reason: no OOM
    # event and no CPU near its limit, so each is a crash that states what happened.
    record = play(place("fake_reason", tmp_path, files={"mode.txt": mode}))
    failure = only_failure(record)
    assert failure.reason == "crash", failure
    assert FAKES[mode] in failure.detail, failure.detail


def test_a_bot_that_reaches_its_cpu_limit_is_a_timeout(tmp_path):
    # The honest side: the kernel's SIGXCPU at RLIMIT_CPU (1 s here, the move time far longer), confirmed by the CPU
    # time the referee measured.
    record = play(place("cpu_spinner", tmp_path), limits=FAST.with_(move_time=20.0, first_move_time=20.0,
                                                                     cpu_seconds=1))
    failure = only_failure(record)
    assert failure.reason == "timeout", failure
    assert "CPU time limit" in failure.detail, failure.detail


def test_fork_bomb_forks_nothing(tmp_path):
    record = play(place("fork_bomb", tmp_path))
    assert record.terminations[0] == "crash"
    assert "forks that succeeded: 0" in only_failure(record).detail


@pytest.mark.parametrize("name", ["ignore_sigterm", "sleeper", "busy_wait"])
def test_slow_bots_time_out_and_are_killed(tmp_path, name):
    record = play(place(name, tmp_path))
    assert record.terminations == ["timeout", "normal"]
    assert record.returns == [-1.0, 1.0]
    assert record.wall_times[0] < FAST.move_time + 1.5  # the referee did not wait for the bot


@pytest.mark.slow
def test_timeout_with_random_move_rule_keeps_playing(tmp_path):
    record = play(place("sleeper", tmp_path), on_failure="random_move")
    assert record.terminations == ["normal", "normal"]
    assert record.failures and all(f.reason == "timeout" and f.seat == 0 for f in record.failures)
    assert all(f.substituted is not None for f in record.failures)
    assert sum(record.move_seats.count(s) for s in (0, 1)) == len(record.move_seats) and len(record.history) > 2


def test_network_is_unreachable(tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    try:
        record = play(place("net_connect", tmp_path, {"port.txt": str(port)}))
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody ever connected
    finally:
        listener.close()
    detail = only_failure(record).detail
    assert record.terminations[0] == "crash"
    assert "connected" not in detail.replace("Errno", "").split("socket:")[0]
    # Both attempts ran and each ended in an exception (a name like PermissionError/OSError).
    assert outcome(detail, "socket", "; ").split(":")[0].endswith("Error"), detail
    assert outcome(detail, "http", "; ").endswith("Error"), detail


def test_other_files_are_invisible(tmp_path):
    secret = f"CANARY-{uuid.uuid4()}"
    other = tmp_path / "other_bot"
    other.mkdir()
    (other / "other.py").write_text(f"# {secret}\n")
    db = tmp_path / "results.db"
    db.write_text(secret)
    os.chmod(db, 0o644)  # world-readable: only the sandbox (not file permissions) keeps the bot out
    os.chmod(other / "other.py", 0o644)
    record = play(place("read_canary", tmp_path, {"targets.txt": f"{other / 'other.py'} {db} {other}"}))
    failure = only_failure(record)
    assert failure.reason == "crash"
    assert secret not in failure.detail
    assert "read b" not in failure.detail and "listed" not in failure.detail, failure.detail
    # Evidence that the bot ran and tried every target: each reports an error (strerror), not a read.
    # (read_canary reports [i] for its i-th target: the three above, then /etc/passwd, /root, /proc/1/environ)
    for i in range(6):
        said = outcome(failure.detail, f"[{i}]")
        assert said and not said.startswith(("read", "listed")), (i, said)


def test_nothing_can_be_written(tmp_path):
    tag = uuid.uuid4().hex
    paths = [f"/tmp/arena-bot-{tag}", f"/dev/shm/arena-bot-{tag}"]
    bot = place("write_files", tmp_path, {"names.txt": " ".join(paths)})
    record = play(bot)
    assert record.terminations[0] == "crash"
    detail = only_failure(record).detail
    assert "WRITTEN" not in detail
    for p in paths:  # each write was attempted and refused with an error (strerror)
        said = outcome(detail, p)
        assert said and said != "WRITTEN", (p, said)
    assert "dropped.txt: " in detail  # and its own directory too (its path is the sandbox's, not ours)
    for p in paths + [os.path.join(bot, "dropped.txt")]:
        assert not os.path.exists(p), p


def test_no_shell_can_be_run(tmp_path):
    marker = f"/tmp/arena-exec-{uuid.uuid4().hex}"
    record = play(place("exec_shell", tmp_path, {"marker.txt": marker}))
    assert record.terminations[0] == "crash"
    detail = only_failure(record).detail
    assert "subprocess ran" not in detail
    # All three attempts ran: os.system returned a failure status or raised, subprocess and execv raised.
    assert outcome(detail, "system") != "0", detail
    assert "Error" in outcome(detail, "subprocess") and "Error" in outcome(detail, "execv"), detail
    assert not os.path.exists(marker)


def test_killing_the_parent_fails_and_the_game_goes_on(tmp_path):
    record = play(place("kill_parent", tmp_path))
    assert record.terminations == ["normal", "normal"]  # the referee (this process) and the opponent survived
    assert record.failures == [] and record.returns in ([1.0, -1.0], [-1.0, 1.0])
    # The bot's own moves are the evidence that its kills ran: step() sends them before returning a move.
    assert record.move_seats.count(0) >= 1


def test_setsid_double_fork_leaves_nothing(tmp_path):
    record = play(place("setsid_orphan", tmp_path))  # play() asserts that no process of the bot's uid is left
    assert "orphan started: False" in only_failure(record).detail  # seccomp: no fork at all


def test_megabytes_on_stdout_do_not_block_or_corrupt(tmp_path):
    record = play(place("stdout_flood", tmp_path), limits=FAST.with_(move_time=2.0, first_move_time=2.0))
    assert record.terminations == ["normal", "normal"] and record.failures == []
    assert record.move_seats.count(0) >= 1  # it printed (step prints before answering) and still moved


@pytest.mark.parametrize("mode", ["string", "float", "nan", "huge", "negative", "out_of_range", "nested", "none",
                                  "bool"])
def test_garbage_answers_are_illegal_moves(tmp_path, mode):
    record = play(place("garbage_answer", tmp_path, {"mode.txt": mode}))
    assert record.terminations == ["illegal", "normal"], record.failures
    assert record.returns == [-1.0, 1.0]


@pytest.mark.parametrize("mode", ["not_json", "nan", "huge_int", "deep", "oversized", "not_object", "bad_utf8",
                                  "pickle", "no_action", "future_id", "bool_id"])
def test_protocol_garbage_is_a_protocol_forfeit(tmp_path, mode):
    record = play(place("raw_garbage", tmp_path, {"mode.txt": mode}))
    assert record.terminations == ["protocol", "normal"], record.failures
    assert record.returns == [-1.0, 1.0]


@pytest.mark.parametrize("name, needle", [("import_error", "tensorflow_secret_sauce"), ("syntax_error", "SyntaxError"),
                                          ("no_bot_class", "defines no class Bot")])
def test_broken_bot_files_crash_with_their_error_kept(tmp_path, name, needle):
    record = play(place(name, tmp_path))
    failure = only_failure(record)
    assert record.terminations == ["crash", "normal"]
    assert needle in failure.detail


def test_a_broken_second_seat_loses_after_the_first_moves(tmp_path):
    from arena.referee.sandboxed import play_game
    record = play_game("nim", ["random", place("syntax_error", tmp_path)], 1, FAST)
    assert_nothing_left(record)
    assert record.terminations == ["normal", "crash"] and record.returns == [1.0, -1.0]
    assert record.move_seats[:1] == [0]


# -- defence in depth: with seccomp switched off, the other layers still hold ------------------------------
@pytest.fixture
def no_seccomp(monkeypatch):
    real = check.active
    monkeypatch.setattr(check, "active", lambda name: False if name == "seccomp" else real(name))
    return FAST.with_(trusted=True)  # seccomp is mandatory: only a trusted run may go without it


@pytest.mark.skipif(not check.active("cgroup_kill"), reason="no cgroup.kill on this machine")
def test_without_seccomp_cgroup_kill_still_takes_setsid_orphans(tmp_path, no_seccomp):
    record = play(place("setsid_orphan", tmp_path), limits=no_seccomp)  # play() checks no process is left
    assert "seccomp" not in record.info["sandbox"]
    assert "orphan started: True" in only_failure(record).detail  # it really ran, and was still killed


@pytest.mark.skipif(not check.active("network_namespace"), reason="no network namespace on this machine")
def test_without_seccomp_the_network_is_still_unreachable(tmp_path, no_seccomp):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    listener.setblocking(False)
    try:
        record = play(place("net_connect", tmp_path, {"port.txt": str(listener.getsockname()[1])}), limits=no_seccomp)
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        listener.close()
    assert record.terminations[0] == "crash" and "socket:" in record.failures[0].detail
    assert outcome(record.failures[0].detail, "socket", "; ").split(":")[0].endswith("Error")


@pytest.mark.skipif(not check.active("mount_namespace"), reason="no mount namespace on this machine")
def test_without_seccomp_no_shell_exists_to_run(tmp_path, no_seccomp):
    marker = f"/tmp/arena-exec-{uuid.uuid4().hex}"
    record = play(place("exec_shell", tmp_path, {"marker.txt": marker}), limits=no_seccomp)
    assert record.terminations[0] == "crash"
    detail = only_failure(record).detail
    assert outcome(detail, "system") != "0" and "Error" in outcome(detail, "execv"), detail  # the attempts ran
    assert not os.path.exists(marker)


def test_a_one_file_bot_sees_only_its_own_file(tmp_path):
    """Every submission in one folder: a one-file bot's snapshot is that file, so it cannot read its neighbours
    (not even a file beside it that is no bot; disguised neighbours: tests/arena/submissions/test_bot_snapshots.py)."""
    secret = f"CANARY-{uuid.uuid4()}"
    bot = place("read_canary", tmp_path)
    folder = os.path.dirname(bot)
    neighbour = os.path.join(folder, "neighbour.py")
    with open(neighbour, "w") as f:
        f.write(f"# {secret}\nclass Bot:\n    pass\n")
    os.chmod(neighbour, 0o644)
    with open(os.path.join(folder, "targets.txt"), "w") as f:
        f.write(f"{neighbour} {folder}")
    record = play(bot)
    failure = only_failure(record)
    assert failure.reason == "crash" and secret not in failure.detail  # could not even read targets.txt
    assert "targets.txt" in failure.detail and "read b" not in failure.detail and "listed" not in failure.detail


def test_a_bot_that_forges_its_ready_frame_does_not_set_the_records_uid_or_layers(tmp_path):
    """The record states what the referee established (the uid it assigned, the layers it set up), never what
    the bot's process claims in its ready frame (this one claims uid 0 and layers it does not have)."""
    from arena.referee.sandboxed import play_game
    record = play_game("nim", [place("forge_ready", tmp_path), "random"], 1, FAST)
    detail = only_failure(record).detail
    uid = int(outcome(detail, "uid"))
    assert record.info["bot_uids"][0] == uid, (record.info["bot_uids"], detail)
    if IS_ROOT:
        assert uid != 0 and record.info["bot_uids"][0] != 0, record.info["bot_uids"]
    assert "forged" not in json.dumps(record.info) and "99" not in json.dumps(record.info.get("sandbox"))
