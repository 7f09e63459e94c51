#!/usr/bin/env bash
# Runs a command inside a private desktop-like session, the way the tests need it:
#   - an X display (Xvfb) for the desktop app's real window, unless one is already set;
#   - a private D-Bus session whose Secret Service is an unlocked gnome-keyring, so `keyring`
#     talks to a real keychain that lives in a throw-away directory (never the user's own).
# The bus starts the keyring itself (D-Bus activation, through a service file of this session
# only), so if the daemon exits mid-run the next request starts it again on the same keyring,
# unlocked, instead of the system's service file starting one on the user's own, locked,
# keyring (which refused every key saved after it).
# Usage: bash scripts/with-desktop-session.sh COMMAND [ARGS...]
set -euo pipefail

if [ -z "${ECHO_IN_DESKTOP_SESSION:-}" ]; then
  for tool in dbus-run-session dbus-send gnome-keyring-daemon; do
    command -v "$tool" >/dev/null || { echo "$tool is missing (apt-get install dbus gnome-keyring)" >&2; exit 1; }
  done
  session_dir="$(mktemp -d)"
  mkdir -p "$session_dir/services" "$session_dir/keyring" "$session_dir/runtime"
  chmod 700 "$session_dir/runtime"
  # The keyring daemon, unlocking (creating on first start) a login keyring with a known
  # password on stdin.
  cat >"$session_dir/start-keyring.sh" <<SCRIPT
#!/bin/sh
printf 'echo-desk-test' | XDG_DATA_HOME='$session_dir/keyring' XDG_RUNTIME_DIR='$session_dir/runtime' \\
  exec gnome-keyring-daemon --foreground --unlock --components=secrets
SCRIPT
  cat >"$session_dir/services/org.freedesktop.secrets.service" <<SERVICE
[D-BUS Service]
Name=org.freedesktop.secrets
Exec=/bin/sh $session_dir/start-keyring.sh
SERVICE
  # The standard session bus, with this session's service directory first (the first
  # directory that names a service wins).
  cat >"$session_dir/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <servicedir>$session_dir/services</servicedir>
  <include>/usr/share/dbus-1/session.conf</include>
</busconfig>
CONF
  export ECHO_IN_DESKTOP_SESSION="$session_dir"
  session=(dbus-run-session --config-file="$session_dir/bus.conf" -- bash "$0" "$@")
  if [ -z "${DISPLAY:-}" ]; then
    command -v xvfb-run >/dev/null || { echo "xvfb-run is missing (apt-get install xvfb xauth)" >&2; exit 1; }
    session=(xvfb-run -a -s "-screen 0 1280x800x24" "${session[@]}")
  fi
  trap 'rm -rf "$session_dir"' EXIT
  "${session[@]}"
  exit
fi

# Inside the session: start the keyring now, so the first test does not wait for it.
dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
  org.freedesktop.DBus.StartServiceByName string:org.freedesktop.secrets uint32:0 >/dev/null
stop_keyring() {
  local pid
  pid="$(dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets 2>/dev/null |
    awk '{print $2}')" || true
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
}
trap stop_keyring EXIT
"$@"
