"""Fixtures of the playground tests: a server on a free port, and a headless Chromium page.

The browser tests need Debian's chromium (/usr/bin/chromium; ``bash scripts/ci_setup.sh``
installs it) and the Playwright package (``pip install -e '.[webtest]'``). They skip, saying
why, only where one of them is absent, and never on CI (``CI=true``), where both must be.
"""

from __future__ import annotations

import os
import shutil
import threading

import pytest

from cutelab.web import make_server, url_of

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")


def chromium_path() -> str | None:
    env = os.environ.get("CUTELAB_CHROMIUM")  # a chromium elsewhere; only that one is tried
    if env:
        return env if os.access(env, os.X_OK) else None
    for p in CHROMIUM_CANDIDATES:
        if os.path.exists(p):
            return p
    return shutil.which("chromium")


@pytest.fixture(scope="session")
def server():
    srv = make_server(0)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    yield url_of(srv)
    srv.shutdown()
    srv.server_close()


def _missing(reason: str):
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason}; CI must run the browser tests (bash scripts/ci_setup.sh, pip install -e '.[test,webtest]')")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser():
    path = chromium_path()
    if path is None:
        _missing("no chromium: install Debian's chromium (bash scripts/ci_setup.sh) to run the browser tests")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("no playwright: pip install -e '.[test,webtest]' to run the browser tests")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.js_errors = errors
    yield pg
    ctx.close()
    assert not errors, f"JavaScript errors on the page: {errors}"
