#!/usr/bin/env bash
# The system packages the test suite needs, for `make test` and .ci/run alike: PostgreSQL's
# server binaries (the store tests start a throwaway cluster from them) and Chromium (the web
# page's tests drive Debian's chromium with Playwright; no browser download).
#
# What is missing is installed with apt-get where that can be done (root, apt-get present);
# elsewhere (no root, another OS) one line says what is missing and that its tests will skip.
# Under ABRIDGED_CI=1 (CI) anything still missing is an error. Nothing is run when everything
# is there, so a second call costs a few milliseconds.
set -euo pipefail

have_postgres() {
    [ -n "${ABRIDGED_TEST_PG_URL:-}" ] && return 0  # the tests use that server instead
    [ -n "${ABRIDGED_PG_BIN:-}" ] && [ -x "${ABRIDGED_PG_BIN}/initdb" ] && return 0
    compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null && return 0
    command -v initdb >/dev/null
}

CHROMIUM="${ABRIDGED_CHROMIUM:-/usr/bin/chromium}"  # the page tests look there too

have_chromium() {
    [ -x "$CHROMIUM" ]
}

missing=()
have_postgres || missing+=(postgresql)
have_chromium || missing+=(chromium)

if [ ${#missing[@]} -eq 0 ]; then
    echo "system packages: PostgreSQL and Chromium present"
    exit 0
fi

have_apt() {
    local apt
    apt=$(command -v apt-get) && [ -x "$apt" ]
}

if [ "$(id -u)" -eq 0 ] && have_apt; then
    echo "system packages: installing ${missing[*]} with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    # a failing apt-get (no network, a broken source) is reported below, not a bare exit
    if apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" \
        >/dev/null; then
        why="apt-get did not provide them"
    else
        why="apt-get failed (its message is above)"
    fi
    missing=()
    have_postgres || missing+=(postgresql)
    have_chromium || missing+=(chromium)
    if [ ${#missing[@]} -eq 0 ]; then
        echo "system packages: PostgreSQL and Chromium installed"
        exit 0
    fi
elif [ "$(id -u)" -ne 0 ] && have_apt; then
    why="not root (run: sudo $0)"
else
    why="no apt-get on this system; install them with its package manager"
fi

if [ -n "${ABRIDGED_CI:-}" ] && [ "${ABRIDGED_CI}" != "0" ]; then
    echo "system packages: ${missing[*]} missing under ABRIDGED_CI=1: ${why}" >&2
    exit 1
fi
echo "system packages: ${missing[*]} missing, their tests will skip: ${why}"
