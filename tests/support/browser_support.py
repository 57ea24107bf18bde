"""Headless Chromium for the browser tests (demos, explanation panels, Space builds).

One place for the browser's paths and flags and for starting it: the flags are the ones this
machine's closed network needs (no background connections, no component updates) plus a fixed
window size so that screenshots are comparable. Skips, with the install command, when Chromium,
chromedriver or selenium are missing (CI installs them: ``scripts/install.sh --test``).
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("NLGMETRICS_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("NLGMETRICS_CHROMEDRIVER", "/usr/bin/chromedriver")
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-quic", "--no-first-run", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--window-size=1280,2000",
)
#: How long a page of an in-process demo may take to show a score.
WAIT_S = 60
#: A folder for the browser tests' screenshots; set it to ``benchmarks/results/screenshots`` to refresh
#: the committed ones deliberately. Unset, they go to a temporary folder: a test run never rewrites
#: tracked files.
SCREENSHOTS_ENV = "NLGMETRICS_SCREENSHOTS"


def screenshots_folder(temporary: Path) -> Path:
    """``$NLGMETRICS_SCREENSHOTS`` if set, else ``temporary``; created if missing."""
    chosen = os.environ.get(SCREENSHOTS_ENV)
    folder = Path(chosen) if chosen else Path(temporary)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def chromium() -> Iterator[Any]:
    """Yield a selenium driver of headless Chromium with a fresh profile; quit it afterwards."""
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not shutil.which(path)]
    if missing:
        pytest.skip(f"Chromium not installed ({', '.join(missing)} missing): apt-get install chromium chromium-driver")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium not installed (pip install selenium)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="nlgmetrics-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def set_input(wait: Any, selector: str, is_set: Callable[[Any], bool], apply: Callable[[Any], None]) -> None:
    """Apply ``apply`` to the element at ``selector`` until ``is_set`` holds for it, and again after
    a short settle: an input mounted as a Gradio accordion opens can miss an early click or typing,
    or be reset once by its mounting, and submitting then would score without the option.

    ``wait`` is a selenium ``WebDriverWait``; ``apply`` is retried while the element is still
    moving, covered or being re-rendered.
    """
    from selenium.common.exceptions import (
        ElementClickInterceptedException,
        ElementNotInteractableException,
        StaleElementReferenceException,
    )
    from selenium.webdriver.common.by import By

    def holds(driver: Any) -> bool:
        try:
            element = driver.find_element(By.CSS_SELECTOR, selector)
            if element.is_displayed() and not is_set(element):
                apply(element)
            return is_set(element)
        except (ElementClickInterceptedException, ElementNotInteractableException, StaleElementReferenceException):
            return False  # re-rendered, moving or covered: the next poll looks again

    for settle in (0.0, 0.5):
        time.sleep(settle)
        wait.until(holds)
