#!/usr/bin/env bash
# Runs a command inside a private desktop-like session, the way the tests need it:
#   - an X display (Xvfb) for the desktop app's real window, unless one is already set;
#   - a private D-Bus session with an unlocked gnome-keyring, so `keyring` talks to a real
#     Secret Service whose keyring lives in a throw-away directory (never the user's own).
# Usage: bash scripts/with-desktop-session.sh COMMAND [ARGS...]
set -euo pipefail

if [ -z "${ECHO_IN_DESKTOP_SESSION:-}" ]; then
  for tool in dbus-run-session gnome-keyring-daemon; do
    command -v "$tool" >/dev/null || { echo "$tool is missing (apt-get install dbus gnome-keyring)" >&2; exit 1; }
  done
  export ECHO_IN_DESKTOP_SESSION=1
  if [ -z "${DISPLAY:-}" ]; then
    command -v xvfb-run >/dev/null || { echo "xvfb-run is missing (apt-get install xvfb xauth)" >&2; exit 1; }
    exec xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- bash "$0" "$@"
  fi
  exec dbus-run-session -- bash "$0" "$@"
fi

keyring_home="$(mktemp -d)"
runtime_dir="$(mktemp -d)"
chmod 700 "$runtime_dir"
cleanup() {
  if [ -n "${keyring_pid:-}" ]; then kill "$keyring_pid" 2>/dev/null || true; fi
  rm -rf "$keyring_home" "$runtime_dir"
}
trap cleanup EXIT
# The daemon prints GNOME_KEYRING_CONTROL=... and its pid; it unlocks (creating) a login
# keyring with the password on stdin.
out="$(printf 'echo-desk-test' | XDG_DATA_HOME="$keyring_home" XDG_RUNTIME_DIR="$runtime_dir" \
  gnome-keyring-daemon --unlock --components=secrets)"
keyring_pid="$(printf '%s\n' "$out" | sed -n 's/^GNOME_KEYRING_PID=//p')"
"$@"
