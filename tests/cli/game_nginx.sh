#!/usr/bin/env bash
# The deployment of README's "Running the game for real", on loopback: Debian's nginx
# terminating TLS (a throwaway self-signed certificate) in front of two `winokit serve
# --trust-proxy --secure-cookie` processes sharing a private PostgreSQL cluster; a whole round
# (spymaster and three solvers) is played through nginx over HTTPS, and the export has it.
#   game_nginx.sh <winokit>
set -uo pipefail
HERE=$(dirname "$(realpath "$0")")
WINOKIT=$1
BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
for need in "$BIN/initdb" "$NGINX" "$(command -v openssl)" "$(command -v curl)" "$(command -v node)"; do
  [ -x "$need" ] || { echo "FAIL - $need not found (scripts/setup installs it)"; exit 1; }
done
WORK=$(mktemp -d)
chmod 755 "$WORK"
AS=()
if [ "$(id -u)" -eq 0 ]; then AS=(runuser -u postgres --); fi
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null
  "${AS[@]}" "$BIN/pg_ctl" -D "$WORK/pg/data" -m immediate stop >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT
cd "$WORK" || exit 1
mkdir pg && { [ "$(id -u)" -ne 0 ] || chown postgres pg; }
"${AS[@]}" "$BIN/initdb" -D pg/data -U postgres --auth=trust >/dev/null || exit 1
"${AS[@]}" "$BIN/pg_ctl" -D pg/data -l pg/log -w \
  -o "-k $WORK/pg -c listen_addresses='' -c fsync=off" start >/dev/null || { cat pg/log; exit 1; }
URL="postgresql://postgres@/postgres?host=$WORK/pg"

"$WINOKIT" synth --out syn --count 12 --image-size 64 >/dev/null
# shellcheck source=game_server.sh
source "$HERE/game_server.sh"
for i in 1 2; do
  start_game_server "server$i.log" --images syn/images --db "$URL" --password-cost min \
    --cache-dir cache --creator-qualification-rounds 0 --trust-proxy --secure-cookie
  PIDS+=("$PID")
  eval "PORT$i=$PORT"
done

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -keyout key.pem \
  -out cert.pem >/dev/null 2>&1 || { echo "FAIL - openssl"; exit 1; }
mkdir -p nginx-tmp
# The README's site configuration, with loopback ports and the throwaway certificate.
cat > nginx.conf.in <<CONF
$([ "$(id -u)" -eq 0 ] && echo "user root;")
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log $WORK/nginx-access.log;
  client_body_temp_path $WORK/nginx-tmp/body;
  proxy_temp_path $WORK/nginx-tmp/proxy;
  fastcgi_temp_path $WORK/nginx-tmp/fastcgi;
  uwsgi_temp_path $WORK/nginx-tmp/uwsgi;
  scgi_temp_path $WORK/nginx-tmp/scgi;
  limit_conn_zone \$binary_remote_addr zone=winokit_addr:10m;
  upstream winokit {
    least_conn;
    server 127.0.0.1:$PORT1;
    server 127.0.0.1:$PORT2;
    keepalive 32;
    keepalive_timeout 5s;
  }
  server {
    listen 127.0.0.1:@TLS_PORT@ ssl;
    ssl_certificate $WORK/cert.pem;
    ssl_certificate_key $WORK/key.pem;
    client_max_body_size 64k;
    client_header_timeout 10s;
    client_body_timeout 10s;
    limit_conn winokit_addr 64;
    location / {
      proxy_pass http://winokit;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$http_host;
      proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto \$scheme;
    }
  }
}
CONF
# A free port can be taken by a test running beside this one before nginx binds it: up to 5
# ports are tried.
started=0
for _ in 1 2 3 4 5; do
  TLS_PORT=$(free_port)
  sed "s/@TLS_PORT@/$TLS_PORT/" nginx.conf.in > nginx.conf
  if "$NGINX" -p "$WORK" -c "$WORK/nginx.conf" -e "$WORK/nginx-error.log" 2>>nginx-start.log; then
    started=1
    break
  fi
done
[ "$started" -eq 1 ] || { echo "FAIL - nginx did not start"; cat nginx-start.log nginx-error.log; exit 1; }
for _ in $(seq 1 50); do [ -s nginx.pid ] && break; sleep 0.1; done
BASE=https://127.0.0.1:$TLS_PORT

fail=0
ok() { echo "ok   - $1"; }
bad() { echo "FAIL - $1"; fail=1; }
api() {  # api JAR METHOD PATH [JSON]: through nginx, as a browser on that origin would
  local csrf
  csrf=$(cat "$1.csrf" 2>/dev/null)
  if [ "$2" = GET ]; then curl -sk -m 10 -b "$1" -c "$1" "$BASE$3"
  else curl -sk -m 10 -b "$1" -c "$1" -H "Origin: $BASE" -H 'Content-Type: application/json' \
         -H "X-CSRF-Token: $csrf" -d "$4" "$BASE$3"; fi
}
json_get() { node -e "let s='';process.stdin.on('data',c=>s+=c).on('end',()=>{const d=JSON.parse(s);console.log($1)})"; }

curl -sk -m 10 "$BASE/" | grep -q "<html" && ok "the game's page over HTTPS through nginx" || bad "page through nginx"
api spy POST /api/register '{"name":"spy","password":"password1"}' | json_get 'd.csrf' > spy.csrf
awk '$6 == "wk_session" && $4 == "TRUE" { found = 1 } END { exit !found }' spy && ok "the session cookie is Secure behind TLS" || bad "cookie not Secure: $(cat spy)"
draft=$(api spy POST /api/rounds '{}')
id=$(echo "$draft" | json_get 'd.id')
assoc=$(echo "$draft" | json_get 'JSON.stringify(d.candidates.slice(0, 2))')
made=$(api spy POST "/api/rounds/$id/submit" "{\"cue\":\"ocean\",\"associations\":$assoc}")
echo "$made" | grep -q '"model_picks"\|"fool' && ok "a round is created through nginx" || bad "round: $made"
for s in 1 2 3; do
  api "s$s" POST /api/register "{\"name\":\"solver$s\",\"password\":\"password1\"}" | json_get 'd.csrf' > "s$s.csrf"
  got=$(api "s$s" POST /api/solve/next '{}' | json_get 'd.id')
  [ "$got" = "$id" ] || bad "solver $s got '$got', not $id"
  api "s$s" POST "/api/solve/$id" "{\"picks\":$assoc}" > /dev/null
done
state=$(api spy GET /api/me | json_get 'd.rounds[0].state + " " + d.rounds[0].solvable_by_humans.toFixed(1)')
[ "$state" = "complete 100.0" ] && ok "three solvers complete it (solvable 100.0)" || bad "round state '$state'"
# Behind TLS a plain-http Origin is another site.
st=$(curl -sk -m 10 -o /dev/null -w '%{http_code}' -H "Origin: http://127.0.0.1:$TLS_PORT" \
  -H 'Content-Type: application/json' -d '{"name":"eve1","password":"password1"}' "$BASE/api/register")
[ "$st" = 403 ] && ok "an http:// Origin is refused behind TLS (X-Forwarded-Proto)" || bad "http Origin: $st"
rows=$("$WINOKIT" game export --db "$URL" --min-solvable 80 | wc -l)
[ "$rows" -eq 2 ] && ok "the export from PostgreSQL has the round" || bad "export rows $rows"
up=$(grep -o 'upstream: "[^"]*"' nginx-error.log | sort -u | wc -l)
[ "$up" -eq 0 ] && ok "nginx logged no upstream errors" || bad "upstream errors: $(cat nginx-error.log)"
exit $fail
