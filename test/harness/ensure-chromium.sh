#!/bin/sh
# npm's pretest step. The browser tests drive Debian's Chromium (/usr/bin/chromium) through playwright-core, which
# never downloads a browser. On a fresh Debian machine run as root, install it from the distribution; otherwise say
# in one line what to install, and stop before the suite runs (a missing browser is not a test failure to hunt for).
CHROMIUM=/usr/bin/chromium
[ -x "$CHROMIUM" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "pretest: $CHROMIUM is missing; installing Debian's chromium for the browser tests (apt-get install chromium)" >&2
  if apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; then
    [ -x "$CHROMIUM" ] && exit 0
  fi
  echo "pretest: apt-get could not install chromium; install it by hand (apt-get install chromium) and run npm test again" >&2
  exit 1
fi
echo "pretest: $CHROMIUM is missing: install Debian's chromium first (sudo apt-get install chromium), then run npm test again" >&2
exit 1
