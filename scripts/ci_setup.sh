#!/usr/bin/env bash
# Machine setup for CI (and anyone running the browser tests): Debian's chromium for the
# playground's browser tests (tests/web/test_browser.py drives it through Playwright).
# Idempotent: does nothing when a chromium is installed already. Needs root (CI is root) or sudo.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; then
  echo "ci_setup: chromium present: $(command -v chromium || echo /usr/bin/chromium)"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ci_setup: no apt-get here; install chromium by hand (the browser tests skip without it)" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq chromium >/dev/null
echo "ci_setup: installed $(chromium --version 2>/dev/null || echo chromium)"
