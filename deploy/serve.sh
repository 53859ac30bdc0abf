#!/usr/bin/env bash
# A container's one job (deploy/Dockerfile): a private desktop, the apps the
# agent will use, and axsnap's MCP server over HTTP on that desktop. Runs in
# the foreground; SIGTERM or SIGINT (docker stop, a scheduler draining the
# node) stops the server, then the desktop, so nothing is left running.
#
#   AXSNAP_MCP_TOKEN      required: the bearer token every request carries
#   AXSNAP_PORT           the port to listen on (all interfaces: the container's)
#   AXSNAP_DESKTOP_NAME   the desktop's name (axsnap desktop list)
#   AXSNAP_DESKTOP_SIZE   its screen, WxH
#   AXSNAP_LAUNCH         apps to start on it first, space-separated
#   AXSNAP_ALLOWED_HOSTS  Host headers to accept besides loopback (the names the
#                         agents use for this container), space-separated;
#                         default: the container's hostname
set -euo pipefail

: "${AXSNAP_MCP_TOKEN:?set AXSNAP_MCP_TOKEN to the bearer token clients will send}"
name="${AXSNAP_DESKTOP_NAME:-agent}"

axsnap desktop start "$name" --size "${AXSNAP_DESKTOP_SIZE:-1280x800}"
server=""
stop() {
  trap - EXIT TERM INT
  [ -n "$server" ] && kill -TERM "$server" 2>/dev/null && wait "$server" 2>/dev/null
  axsnap desktop stop "$name" || true
}
trap stop EXIT
trap 'stop; exit 143' TERM INT

for app in ${AXSNAP_LAUNCH:-}; do
  axsnap launch "$app" --desktop "$name"
done

hosts=()
for h in ${AXSNAP_ALLOWED_HOSTS:-$(hostname)}; do hosts+=(--allowed-host "$h"); done
axsnap mcp --http "0.0.0.0:${AXSNAP_PORT:-8765}" --allow-remote "${hosts[@]}" --desktop "$name" &
server=$!
# wait returns early when a trapped signal arrives; the trap then stops all.
wait "$server"
