#!/usr/bin/env bash
# Builds Hearth's image and checks it as an operator would: it becomes healthy, answers /_health, /_ready,
# discovery and the web client, registers a person who sends a message and uploads an image, runs as uid 10001
# with only /data writable (the root filesystem mounted read-only), and `docker stop` ends it cleanly.
# A manual check for a machine with a Docker engine (docs/deployment.md, "What has been verified"); not part of
# `npm test` or CI, which have no engine.
#
# Usage: scripts/verify-image.sh            (from the repository root)
# Environment:
#   IMAGE             the tag to build and run (default hearth)
#   PORT              the port the container listens on, on this host's loopback (default 18080)
#   DOCKER            the docker client (default docker). BuildKit is needed (RUN --mount): a client with the
#                     buildx plugin, or Debian's docker.io client, whose built-in BuildKit needs no plugin.
#   BUILTIN_FRONTEND  1: build with the engine's built-in Dockerfile frontend, i.e. the Dockerfile without its
#                     `# syntax=` line, which makes BuildKit pull the docker/dockerfile image from Docker Hub
#                     (a host with no registry: see scripts/local-base-image.sh for the base image)
#   SKIP_BUILD        1: check an image built already
#   DATABASE_URL, REDIS_URL
#                     then also two containers on that PostgreSQL database (an empty one of its own) and Redis,
#                     as docs/deployment.md's "Several processes" sets them up (scripts/verify-image-nodes.mjs)
# The container uses the host's network (it listens on 127.0.0.1:$PORT only), so the check works on engines
# started without a bridge network too.
set -euo pipefail

image=${IMAGE:-hearth}
port=${PORT:-18080}
docker=${DOCKER:-docker}
public_url=http://127.0.0.1:$port
container=hearth-verify-$$
volume=hearth-verify-data-$$
failures=0

say() { printf '%s\n' "$*"; }
check() { # check <description> <command…>: runs the command, reports and counts its outcome
  local description=$1
  shift
  if "$@"; then say "ok   $description"; else say "FAIL $description"; failures=$((failures + 1)); fi
}
# json <path>: prints the field at a dotted path of the JSON on stdin ('' when absent).
json() {
  node -e 'let d="";process.stdin.on("data",(c)=>{d+=c}).on("end",()=>{const v=process.argv[1].split(".").reduce((o,k)=>o?.[k],JSON.parse(d||"null"));process.stdout.write(v===undefined||v===null?"":String(v))})' "$1"
}
now() { date +%s.%N; }
seconds_since() { node -e 'process.stdout.write((Number(process.argv[2])-Number(process.argv[1])).toFixed(1))' "$1" "$(now)"; }

cleanup() {
  "$docker" rm -f "$container" >/dev/null 2>&1 || true
  "$docker" volume rm "$volume" >/dev/null 2>&1 || true
}
trap cleanup EXIT

build_summary='build skipped'
if [ "${SKIP_BUILD:-}" != 1 ]; then
  say "building $image"
  started=$(now)
  if [ "${BUILTIN_FRONTEND:-}" = 1 ]; then
    sed '1{/^# syntax=/d}' Dockerfile | DOCKER_BUILDKIT=1 "$docker" build --network host -f - -t "$image" .
  else
    DOCKER_BUILDKIT=1 "$docker" build --network host -t "$image" .
  fi
  build_summary="build $(seconds_since "$started") s"
fi
image_bytes=$("$docker" image inspect --format '{{.Size}}' "$image")

say "running $image on $public_url"
started=$(now)
"$docker" run -d --name "$container" --network host --read-only --tmpfs /tmp -v "$volume:/data" \
  -e HOST=127.0.0.1 -e PORT="$port" -e HEARTH_PUBLIC_URL="$public_url" "$image" >/dev/null
health=starting
for _ in $(seq 1 240); do
  health=$("$docker" inspect --format '{{.State.Health.Status}}' "$container")
  [ "$health" = starting ] || break
  sleep 0.5
done
healthy_seconds=$(seconds_since "$started")
check "HEALTHCHECK reports healthy (after ${healthy_seconds} s)" test "$health" = healthy
if [ "$health" != healthy ]; then
  "$docker" logs "$container" 2>&1 | tail -20
  exit 1
fi

check "/_health answers 200 {\"status\":\"ok\"}" \
  test "$(curl -sS -w ' %{http_code}' "$public_url/_health")" = '{"status":"ok"} 200'
check "/_ready answers 200, database, shared state and object store ok" \
  test "$(curl -sS -w ' %{http_code}' "$public_url/_ready")" = \
  '{"status":"ready","checks":{"database":"ok","shared_state":"ok","object_store":"ok"}} 200'
check "discovery (/.well-known/service) announces the public URL and its gateway" \
  test "$(curl -sS "$public_url/.well-known/service" | json endpoints.gateway)" = "ws://127.0.0.1:$port/gateway"
check "the web client is served (HTML navigation to /)" \
  bash -c "curl -sS -H 'accept: text/html' '$public_url/' | grep -q '<title>Hearth</title>'"

email=verify-$$@example.com
password=verify-$$-$(date +%s)-password
registered=$(curl -sS -X POST "$public_url/v1/auth/register" -H 'content-type: application/json' \
  -d "{\"email\":\"$email\",\"password\":\"$password\",\"username\":\"verify$$\"}")
token=$(json token <<<"$registered")
check "a person registers" test -n "$token"
guild=$(curl -sS -X POST "$public_url/v1/guilds" -H "authorization: $token" -H 'content-type: application/json' \
  -d '{"name":"Image check"}')
channel=$(json system_channel_id <<<"$guild")
sent=$(curl -sS -X POST "$public_url/v1/channels/$channel/messages" -H "authorization: $token" \
  -H 'content-type: application/json' -d '{"content":"hello from the container"}')
check "they send a message in their guild's channel" test "$(json content <<<"$sent")" = 'hello from the container'
check "it reads back" test "$(curl -sS "$public_url/v1/channels/$channel/messages?limit=1" \
  -H "authorization: $token" | json 0.content)" = 'hello from the container'
# A 1×1 PNG: stored in /data and served back through the media routes.
png=$(mktemp)
base64 -d >"$png" <<<'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
uploaded=$(curl -sS -X POST "$public_url/v1/channels/$channel/messages" -H "authorization: $token" \
  -F 'payload_json={"attachments":[{"id":0,"filename":"dot.png"}]}' -F "files[0]=@$png;type=image/png;filename=dot.png")
rm -f "$png"
attachment_url=$(json attachments.0.url <<<"$uploaded")
check "they upload an image and it is served back" \
  test "$(curl -sS -o /dev/null -w '%{http_code} %{content_type}' "$attachment_url")" = '200 image/png'

check "the server runs as uid 10001 (pid 1 is node itself)" \
  test "$("$docker" exec "$container" sh -c 'id -u; tr "\0" " " </proc/1/cmdline')" = "$(printf '10001\nnode dist/main.js ')"
check "its code is read-only to it" \
  test "$("$docker" exec "$container" sh -c 'touch /app/dist/x 2>/dev/null || echo refused')" = refused
check "/data is writable to it" "$docker" exec "$container" sh -c 'touch /data/.verify && rm /data/.verify'

started=$(now)
"$docker" stop "$container" >/dev/null
stop_seconds=$(seconds_since "$started")
check "docker stop ends it with exit code 0 (in ${stop_seconds} s)" \
  test "$("$docker" inspect --format '{{.State.ExitCode}}' "$container")" = 0
check "it shut down on SIGTERM" bash -c "'$docker' logs '$container' 2>&1 | grep -q '\"signal\":\"SIGTERM\",\"msg\":\"shutting down\"'"

say "image $image: $((image_bytes / 1000000)) MB; $build_summary; start to healthy ${healthy_seconds} s; stop ${stop_seconds} s"
if [ "$failures" -gt 0 ]; then
  say "$failures check(s) failed"
  "$docker" logs "$container" 2>&1 | tail -20
  exit 1
fi
say "all checks passed"

if [ -n "${DATABASE_URL:-}" ] && [ -n "${REDIS_URL:-}" ]; then
  say "two containers on $DATABASE_URL and $REDIS_URL"
  IMAGE=$image DOCKER=$docker PORT=$((port + 10)) node --experimental-websocket --no-warnings \
    "$(dirname "$0")/verify-image-nodes.mjs"
fi
