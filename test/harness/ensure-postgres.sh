#!/bin/sh
# npm's pretest step. The PostgreSQL tests (state repositories, replicas, outages) start a real server from Debian's
# binaries (/usr/lib/postgresql/<v>/bin/postgres and initdb; test/helpers/postgres-server.ts), never a fake. On a
# fresh Debian machine run as root, install them from the distribution; otherwise say in one line what to install,
# and stop before the suite runs. SVC_PG_BIN (the folder holding initdb and postgres) overrides the location.
if [ -n "$SVC_PG_BIN" ] && [ -x "$SVC_PG_BIN/postgres" ] && [ -x "$SVC_PG_BIN/initdb" ]; then exit 0; fi
found() {
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/postgres" ] && [ -x "$d/initdb" ] && return 0
  done
  return 1
}
found && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "pretest: PostgreSQL server binaries are missing; installing Debian's postgresql for the state tests (apt-get install postgresql)" >&2
  # Only the binaries are wanted; RUNLEVEL=1 asks invoke-rc.d not to start the packaged cluster service.
  if apt-get update -qq && RUNLEVEL=1 DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null; then
    found && exit 0
  fi
  echo "pretest: apt-get could not install postgresql; install it by hand (apt-get install postgresql) and run npm test again" >&2
  exit 1
fi
echo "pretest: PostgreSQL server binaries are missing: install Debian's postgresql first (sudo apt-get install postgresql), or set SVC_PG_BIN, then run npm test again" >&2
exit 1
