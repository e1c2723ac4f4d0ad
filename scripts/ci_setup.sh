#!/usr/bin/env bash
# Machine setup for CI (and anyone running the browser tests): Debian's chromium for the
# playground's browser tests (tests/web/test_browser.py drives it through Playwright), and
# pdflatex with TikZ and the standalone class (CuTe's .tex documents use it) for the .tex output's tests (tests/render/test_latex_compile.py; they skip
# without it). Idempotent: installs only what is missing. Needs root (CI is root) or sudo.
#
# When another apt-get or dpkg holds the package lock (an unattended upgrade, a second job),
# this waits for it, up to CI_APT_WAIT seconds (default 600), instead of failing at once.
set -euo pipefail
WAIT="${CI_APT_WAIT:-600}"
POLL="${CI_APT_POLL:-5}"
want=()
if command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; then
  echo "ci_setup: chromium present: $(command -v chromium || echo /usr/bin/chromium)"
else
  want+=(chromium)
fi
if command -v pdflatex >/dev/null 2>&1 && kpsewhich tikz.sty >/dev/null 2>&1 && kpsewhich standalone.cls >/dev/null 2>&1; then
  echo "ci_setup: pdflatex, TikZ and the standalone class present"
else
  want+=(texlive-latex-base texlive-pictures texlive-latex-extra)
fi
if [ "${#want[@]}" = 0 ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ci_setup: no apt-get here; install ${want[*]} by hand (the tests that need them skip without them)" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive

# apt-get with a bounded wait for the lock: apt's own DPkg::Lock::Timeout covers dpkg's locks;
# the retry loop also covers the lists lock of `apt-get update`, which older apt does not wait for.
apt_wait() {
  local deadline=$((SECONDS + WAIT)) log
  log="$(mktemp)"
  while true; do
    if $SUDO apt-get -o DPkg::Lock::Timeout="$WAIT" "$@" >"$log" 2>&1; then
      rm -f "$log"
      return 0
    fi
    if grep -qiE 'could not get lock|unable to acquire|lock-frontend|is another process using it' "$log" \
        && [ "$SECONDS" -lt "$deadline" ]; then
      echo "ci_setup: the package lock is held by another process; waiting ($((deadline - SECONDS)) s left)" >&2
      sleep "$POLL"
      continue
    fi
    cat "$log" >&2
    rm -f "$log"
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "ci_setup: gave up after waiting ${WAIT} s for the package lock (set CI_APT_WAIT to wait longer)" >&2
    fi
    return 1
  done
}

apt_wait update -qq
apt_wait install -y -qq --no-install-recommends "${want[@]}"
echo "ci_setup: installed ${want[*]}"
