# Sourced by the game's test and benchmark scripts: starts `winokit serve` on a free port.
#   start_game_server LOG ARGS...   (sets PID and PORT; ARGS go to `winokit serve --port 0`)
# Needs WINOKIT set to the binary.
start_game_server() {
  local log=$1
  shift
  : > "$log"
  "$WINOKIT" serve --port 0 "$@" > "$log" 2>&1 &
  PID=$!
  PORT=
  for _ in $(seq 1 1200); do
    PORT=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$log")
    [ -n "$PORT" ] && return 0
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "FAIL - the game server did not start"
  cat "$log"
  exit 1
}
