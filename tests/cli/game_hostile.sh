#!/usr/bin/env bash
# Hostile clients against `winokit serve` on loopback; bounded (every wait has a limit) and
# self-stopping. Network attacks in game_hostile.py; account attacks here with curl:
# admin takeover by registering the admin's name, case-variant names, names without a letter
# or digit, the model's path in /api/status, a cross-scheme Origin.
#   game_hostile.sh <winokit> [shared dir]
set -uo pipefail
HERE=$(dirname "$(realpath "$0")")
WINOKIT=$1
SHARED=${2:-}
WORK=$(mktemp -d)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
cd "$WORK" || exit 1
fails=0
ok() { echo "ok   - $1"; }
fail() { echo "FAIL - $1"; fails=$((fails + 1)); }
"$WINOKIT" synth --out syn --count 12 --image-size 64 >/dev/null
MODEL=()
[ -n "$SHARED" ] && [ -d "$SHARED/golden/clip/models/tiny-quickgelu-hf" ] && MODEL=(--model "$SHARED/golden/clip/models/tiny-quickgelu-hf")
DEADLINE=2
CAP=64
# shellcheck source=game_server.sh
source "$HERE/game_server.sh"
ARGS=(--images syn/images --db game.db --password-cost min --cache-dir cache --request-seconds "$DEADLINE"
      --max-connections-per-address "$CAP" "${MODEL[@]}")

# Admin by name alone is refused while no such account exists: nobody can register into it.
"$WINOKIT" serve --port 0 "${ARGS[@]}" --admin boss > refused.log 2>&1
code=$?
if [ "$code" -eq 2 ] && grep -q "no account named 'boss'" refused.log; then
  ok "--admin NAME without such an account refuses to start (exit 2)"
else
  fail "--admin NAME for a missing account: exit $code"; cat refused.log
fi

grep -q "encoding" refused.log && fail "--admin was checked after the pool was encoded" || ok "--admin is checked before the pool is encoded"
start_game_server server.log "${ARGS[@]}"
URL=http://127.0.0.1:$PORT
post() {  # post PATH JSON [curl args...] -> body, then the status on the last line
  local path=$1 body=$2
  shift 2
  curl -s -m 10 -o - -w '\n%{http_code}' -H 'Content-Type: application/json' "$@" \
    --data-binary "$body" "$URL$path"
}
register() { post /api/register "{\"name\":\"$1\",\"password\":\"password1\"}" -c "jar-$1" "${@:2}"; }

out=$(register boss)
if [ "$(tail -1 <<<"$out")" = 201 ] && grep -q '"admin":false' <<<"$out"; then
  ok "registering the admin's name gives an ordinary account"
else
  fail "register boss: $out"
fi
st=$(curl -s -m 10 -o /dev/null -w '%{http_code}' -b jar-boss "$URL/api/admin/reports")
[ "$st" = 403 ] && ok "... which cannot reach the admin pages (403)" || fail "admin pages for boss: $st"
if "$WINOKIT" game admin --db game.db --grant boss --grant nobody 2>err.txt; then
  fail "granting a missing account succeeded"
elif ! grep -q "granted" err.txt && [ "$("$WINOKIT" game admin --db game.db --list)" = "" ]; then
  ok "game admin --grant boss --grant nobody: all or nothing, and no 'granted' line"
else
  fail "a failed grant said or did something: $(cat err.txt)"
fi
if "$WINOKIT" game admin --db game.db --grant nobody 2>err.txt; then
  fail "granting a missing account succeeded"
elif [ $? -eq 2 ] && grep -q "no account named 'nobody'" err.txt; then
  ok "game admin --grant refuses a missing account (exit 2)"
else
  fail "game admin --grant nobody: $(cat err.txt)"
fi
"$WINOKIT" game admin --db game.db --grant BOSS 2>err.txt
st=$(curl -s -m 10 -o /dev/null -w '%{http_code}' -b jar-boss "$URL/api/admin/reports")
if [ "$st" = 200 ] && [ "$("$WINOKIT" game admin --db game.db --list)" = boss ]; then
  ok "game admin --grant makes the existing account an admin, live (200)"
else
  fail "after the grant: $st; $(cat err.txt)"
fi

register alice >/dev/null
for variant in ALICE Alice aLICE; do
  st=$(register "$variant" | tail -1)
  [ "$st" = 409 ] && ok "case variant '$variant' of alice is refused (409)" || fail "$variant: $st"
done
for bad in ... --- ___ ._-; do
  st=$(register "$bad" | tail -1)
  [ "$st" = 400 ] && ok "name '$bad' without a letter or digit is refused (400)" || fail "$bad: $st"
done

st=$(register carol -H "Origin: https://127.0.0.1:$PORT" | tail -1)
[ "$st" = 403 ] && ok "an https Origin on this http server is refused (403)" || fail "https Origin: $st"
st=$(register carol -H "Origin: http://127.0.0.1:$PORT" | tail -1)
[ "$st" = 201 ] && ok "the server's own Origin is accepted" || fail "own Origin: $st"

status=$(curl -s -m 10 "$URL/api/status")
if [ ${#MODEL[@]} -gt 0 ]; then
  if grep -q '"rival":"tiny-quickgelu-hf"' <<<"$status" && ! grep -q "$SHARED" <<<"$status"; then
    ok "/api/status names the model, not its path"
  else
    fail "/api/status: $status"
  fi
fi

# Over-long targets (issue 23, item 1): each of these killed the server with SIGSEGV (a
# backtracking regex recursed once per character); now 414 before routing.
long_a=$(head -c 26000 /dev/zero | tr '\0' A)
long_d=$(head -c 30000 /dev/zero | tr '\0' 9)
for target in "GET /images/$long_a" "POST /api/solve/$long_d" "POST /api/rounds/$long_d/submit"; do
  st=$(curl -s -m 10 -o /dev/null -w '%{http_code}' -X "${target%% *}" "$URL${target#* }")
  [ "$st" = 414 ] && ok "${target:0:16}... of ${#target} bytes: 414" || fail "${target:0:16}...: $st"
done
kill -0 "$PID" 2>/dev/null && ok "... and the server still runs" || fail "a long target killed the server"

# A second server on the same port (issue 23, item 2): "address already in use", exit 2, not a
# second listener sharing the port through SO_REUSEPORT.
timeout 60 "$WINOKIT" serve --port "$PORT" --images syn/images --db second.db --password-cost min \
  --cache-dir cache > second.log 2>&1
code=$?
if [ "$code" -eq 2 ] && grep -q "address already in use" second.log && ! grep -q listening second.log; then
  ok "a second server on port $PORT refuses to start (exit 2, address already in use)"
else
  fail "second server on a busy port: exit $code"; cat second.log
fi

if timeout 120 python3 "$HERE/game_hostile.py" "$PORT" "$PID" "$DEADLINE" "$CAP"; then :; else fails=$((fails + 1)); fi
kill -0 "$PID" 2>/dev/null && ok "the server is still running" || fail "the server died"
kill "$PID"; wait "$PID" 2>/dev/null; PID=
[ "$fails" -eq 0 ] && echo "hostile clients: passed" || { echo "hostile clients: $fails failed"; exit 1; }
