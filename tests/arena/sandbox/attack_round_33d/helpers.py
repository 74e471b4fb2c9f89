"""Attack round 33d helpers."""
from __future__ import annotations

import os
from pathlib import Path

HOSTILE = Path(__file__).parent / "hostile"


def place_mode(tmp_path: Path, mode: str, nice: int = 19, cap: int = 16, pin: bool = False, buf_mb: int = 16,
               name: str = "thaw_threads") -> str:
    """The hostile thaw_threads bot, its settings written into a copy of its own."""
    d = tmp_path / f"bot_{name}_{mode}_{nice}_{cap}_{pin}_{buf_mb}"
    d.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(d, 0o755)
    target = d / f"{name}.py"
    text = (HOSTILE / f"{name}.py").read_text()
    text = text.replace('MODE = "spin"', f'MODE = "{mode}"').replace("NICE = 19", f"NICE = {nice}")
    text = text.replace("PIN = False", f"PIN = {pin}").replace("(16 << 20)", f"({buf_mb} << 20)")
    target.write_text(text.replace("CAP = 16", f"CAP = {cap}"))
    return str(target)
