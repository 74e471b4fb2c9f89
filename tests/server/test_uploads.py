"""Uploads are hostile: size limits while unpacking, path tricks, links, devices and duplicate names refused in
one line, and nothing written anywhere (arena/server/uploads.py)."""
from __future__ import annotations

import io
import stat
import zipfile

import pytest

from arena.server import uploads
from arena.server.uploads import TooBig, UploadError, read_upload

MB = 1 << 20
BOT = b"class Bot:\n    def __init__(self, game, seat, seed): pass\n    def step(self, state, limit):\n" \
      b"        return state.legal_actions()[0]\n"


def zipped(*entries: tuple[str, bytes], mode: int | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            if mode is not None and name != "bot.py":
                info.external_attr = mode << 16
            z.writestr(info, data)
    return buf.getvalue()


def test_a_py_file_and_a_zipped_folder_become_snapshots():
    assert read_upload("alice.py", BOT, MB).entry == "alice.py"
    snap = read_upload("mine.zip", zipped(("mine/bot.py", BOT), ("mine/lib/helper.py", b"X = 1\n")), MB)
    assert snap.entry == "bot.py" and set(snap.files) == {"bot.py", "lib/helper.py"}
    assert read_upload("../../etc/x y.py", BOT, MB).entry == "bot.py"  # an odd name is not kept


def test_a_zip_bomb_is_refused_while_unpacking(monkeypatch):
    bomb = zipped(("bot.py", BOT), ("pad.bin", b"\0" * (200 * MB)))
    assert len(bomb) < MB  # small on the wire: only unpacking shows it
    read = []
    real = zipfile.ZipExtFile.read

    def counting(self, n=-1):
        data = real(self, n)
        read.append(len(data))
        return data
    monkeypatch.setattr(zipfile.ZipExtFile, "read", counting)
    with pytest.raises(TooBig, match="while unpacking"):
        read_upload("bomb.zip", bomb, MB)
    assert sum(read) <= MB + 2 * uploads.CHUNK  # stopped at the limit, not after inflating 200 MB


def test_an_upload_over_the_limit_is_refused_before_reading():
    with pytest.raises(TooBig, match="max_bot_mb"):
        read_upload("big.py", b"#" * (MB + 1), MB)


@pytest.mark.parametrize("name", ["../evil.py", "a/../../evil.py", "/etc/evil.py", "C:/evil.py", "a\\..\\evil.py",
                                  "a//b.py", "./bot2.py", "x" * 300 + ".py"])
def test_bad_paths_are_refused_in_one_line(name):
    with pytest.raises(UploadError) as exc:
        read_upload("slip.zip", zipped(("bot.py", BOT), (name, b"print(1)\n")), MB)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("kind", [stat.S_IFLNK, stat.S_IFCHR, stat.S_IFBLK, stat.S_IFIFO, stat.S_IFSOCK])
def test_links_and_devices_are_refused(kind):
    with pytest.raises(UploadError, match="symlink|device"):
        read_upload("link.zip", zipped(("bot.py", BOT), ("link.py", b"/etc/passwd"), mode=kind | 0o777), MB)


def test_duplicate_names_are_refused():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z, pytest.warns(UserWarning):
        z.writestr("bot.py", BOT)
        z.writestr("bot.py", b"evil = 1\n")
    with pytest.raises(UploadError, match="twice"):
        read_upload("dup.zip", buf.getvalue(), MB)
    with pytest.raises(UploadError, match="twice"):  # a case-insensitive file system would merge them too
        read_upload("dup.zip", zipped(("bot.py", BOT), ("Lib.py", b""), ("lib.py", b"")), MB)


def test_too_many_files_and_other_formats_are_refused(monkeypatch):
    monkeypatch.setattr(uploads, "MAX_FILES", 3)
    with pytest.raises(UploadError, match="files"):
        read_upload("many.zip", zipped(("bot.py", BOT), *((f"m{i}.py", b"") for i in range(5))), MB)
    with pytest.raises(UploadError, match=r"\.py file"):
        read_upload("bot.tar", b"x", MB)
    with pytest.raises(UploadError, match="readable zip"):
        read_upload("bot.zip", b"PK\x03\x04garbage", MB)
    with pytest.raises(UploadError, match="no bot.py"):
        read_upload("nobot.zip", zipped(("a/main.py", BOT)), MB)


def _zip_folder(root, top: str) -> bytes:
    import os
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for here, dirs, names in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for n in sorted(names):
                full = os.path.join(here, n)
                z.write(full, f"{top}/{os.path.relpath(full, root)}")
    return buf.getvalue()


def test_a_zipped_comp424_checkout_is_the_agent_when_the_league_says_so():
    from pathlib import Path

    from arena.adapters.comp424 import take_agent
    from arena.adapters.comp424_names import ENTRY
    checkout = Path(__file__).resolve().parents[1] / "fixtures" / "comp424" / "checkout"
    data = _zip_folder(checkout, "checkout")
    with pytest.raises(UploadError, match="no bot.py"):  # an ordinary league: a folder bot needs bot.py
        read_upload("checkout.zip", data, MB)
    snap = read_upload("checkout.zip", data, MB, "comp424")
    assert snap.entry == ENTRY and snap.digest == take_agent(checkout, max_bytes=MB).digest
    # the same unpacking checks as a folder zip
    with pytest.raises(UploadError, match=r"'\.\.'"):
        read_upload("c.zip", zipped(("store.py", b"X = 1\n"), ("../evil.py", b"")), MB, "comp424")
    with pytest.raises(UploadError, match=ENTRY):
        read_upload("c.zip", zipped(("store.py", b""), (ENTRY, b"")), MB, "comp424")


def test_upload_format_is_a_league_key(tmp_path):
    from arena.league.config import load_config
    path = tmp_path / "l.toml"
    path.write_text('name = "l"\ngames = ["colosseum"]\nupload_format = "comp424"\n'
                    '[[bots]]\nspec = "random"\n[[bots]]\nspec = "mc(n=5)"\n')
    assert load_config(path).upload_format == "comp424"
