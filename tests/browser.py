"""A real headless browser for the tests of HTML pages (the report's, the server's): Debian's chromium driven by
selenium; the tests that use it skip, saying why, where chromium is not installed."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest


def browser(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Debian's chromium, headless, driven by selenium (installed by .ci/run)."""
    webdriver = pytest.importorskip("selenium.webdriver",
                                    reason="selenium is in the test extra (pip install -e .[test])")
    from selenium.webdriver.chrome.service import Service
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver):
        pytest.skip("no chromium/chromedriver: `apt-get install chromium chromium-driver` (.ci/run does)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
                 "--window-size=1200,900"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(driver), options=options)
