#!/usr/bin/env bash
# A fresh clone on a machine without PostgreSQL or Chromium, simulated for real (issue 31); run by
# hand as root, never by CI. The clone is of REPO's committed HEAD (default: this repository), in
# /tmp with no ../shared beside it; PostgreSQL and Chromium are hidden from it by a mount
# namespace (`unshare -m`) that binds empty directories and an empty, non-executable file over
# the installed ones, so nothing on this machine is changed.
#
#   1. as the user `tester` (created if missing), hidden binaries: `make run` and `make test`
#      must pass, the install script saying in one line what it could not install and why, and
#      pytest one line per skipped need (what it needs, how to get it);
#   2. as root with ABRIDGED_CI=1, hidden binaries and apt-get hidden too (so nothing is
#      installed): `make test` must fail at once, saying what is missing;
#   3. as root with ABRIDGED_CI=1, the binaries present but no ../shared: `make test` must fail
#      saying which shared data is missing (in one process, stopping at the first failure:
#      pytest-xdist does not stop at --maxfail).
#
# Usage: sudo scripts/check-fresh-clone.sh [REPO]    (exit 0 when all three behave as above)
# CHECK_PYTEST_ARGS='tests/x.py ...' narrows step 1's suite (given to make test as PYTEST_ARGS),
# for a machine too busy to run it whole; by default it is the whole suite.
set -euo pipefail

repo=$(cd "${1:-$(dirname "$0")/..}" && pwd)
user=tester
work=$(mktemp -d /tmp/fresh-clone.XXXXXX)
log="$work/log"
mkdir "$log"
[ "$(id -u)" -eq 0 ] || { echo "check-fresh-clone: run as root (it adds a user and mounts)" >&2; exit 2; }

# Mounted over what a machine without the packages lacks (each only where it exists here).
HIDDEN_DIRS=(/usr/lib/postgresql /usr/lib/chromium)
HIDDEN_FILES=(/usr/bin/chromium)
NO_APT=(/usr/bin/apt-get)

id "$user" >/dev/null 2>&1 || useradd -m "$user"
# The package index this machine's root installs from, when it has its own (a machine with
# PyPI alone needs nothing here): the point is the missing system packages, not the index.
if [ -f /root/.config/pip/pip.conf ]; then
    install -D -m 644 -o "$user" /root/.config/pip/pip.conf "/home/$user/.config/pip/pip.conf"
fi
clone() {  # a clone of REPO at $work/$1, owned by $2
    git clone --quiet "$repo" "$work/$1"
    chown -R "$2" "$work/$1"
}
chmod 755 "$work"

# Run "$@" in a private mount namespace with the paths given before `--` hidden.
hidden() {
    local paths=()
    while [ "$1" != "--" ]; do paths+=("$1"); shift; done
    shift
    unshare --mount --propagation private bash -euo pipefail -c '
        empty_dir=$(mktemp -d) empty_file=$(mktemp)
        chmod 755 "$empty_dir"; chmod 644 "$empty_file"
        while [ "$1" != "--" ]; do
            if [ -d "$1" ]; then mount --bind "$empty_dir" "$1"
            elif [ -e "$1" ]; then mount --bind "$empty_file" "$1"; fi
            shift
        done
        shift
        exec "$@"' hidden "${paths[@]}" -- "$@"
}

# A login of its own: only what a new user has (none of this session's variables).
AS_TESTER=(runuser -u "$user" -- env -i HOME="/home/$user" USER="$user" LANG=C.UTF-8
    PATH=/usr/local/bin:/usr/bin:/bin PYTEST_ARGS="${CHECK_PYTEST_ARGS:-}")
AS_ROOT_CI=(env -i HOME=/root LANG=C.UTF-8 ABRIDGED_CI=1
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)

status=0
echo "== 1. user $user, no PostgreSQL, no Chromium, no ../shared: make run, make test must pass"
clone user "$user:"
if hidden "${HIDDEN_DIRS[@]}" "${HIDDEN_FILES[@]}" -- "${AS_TESTER[@]}" \
    bash -c "cd $work/user && make run && make test" >"$log/1.txt" 2>&1; then
    echo "   passed"
else
    echo "   FAILED (see $log/1.txt)"; status=1
fi
grep -E "^system packages:" "$log/1.txt" | sed 's/^/   /' || true
grep -E "^ *[0-9]+ skipped: " "$log/1.txt" | sed 's/^/   /' || true
grep -E "[0-9]+ (passed|failed)" "$log/1.txt" | tail -1 | sed 's/^/   /' || true

echo "== 2. root, ABRIDGED_CI=1, no PostgreSQL, no Chromium, no apt-get: make test must fail"
clone ci-hidden root:
if hidden "${HIDDEN_DIRS[@]}" "${HIDDEN_FILES[@]}" "${NO_APT[@]}" -- "${AS_ROOT_CI[@]}" \
    bash -c "cd $work/ci-hidden && make test" >"$log/2.txt" 2>&1; then
    echo "   PASSED, and should not have (see $log/2.txt)"; status=1
else
    echo "   failed, as it should:"
fi
grep -E "missing under ABRIDGED_CI=1" "$log/2.txt" | sed 's/^/   /' \
    || { echo "   but without saying what is missing"; status=1; }

echo "== 3. root, ABRIDGED_CI=1, PostgreSQL and Chromium present, no ../shared: make test must fail"
clone ci-shared root:
if "${AS_ROOT_CI[@]}" bash -c "cd $work/ci-shared && make test PYTEST_WORKERS=0 PYTEST_ARGS=--maxfail=1" \
    >"$log/3.txt" 2>&1; then
    echo "   PASSED, and should not have (see $log/3.txt)"; status=1
else
    echo "   failed, as it should:"
fi
grep -m 3 -E "^shared data .* missing under ABRIDGED_CI=1" "$log/3.txt" \
    | sed 's/^/   /' || { echo "   but not for the missing shared data"; status=1; }

echo "logs: $log"
exit "$status"
