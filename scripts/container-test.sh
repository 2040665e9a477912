#!/usr/bin/env bash
# The container image and the Debian package, built and run as users run them, with no
# registry: a Debian 12 base made locally with mmdebstrap, podman with host networking, and
# only loopback addresses. Run as root (scripts/test.sh calls it).
#   scripts/container-test.sh base           make the Debian 12 base the others start from, if
#                                            this machine has none yet (each makes it too)
#   scripts/container-test.sh image          build the image with README.md's container command,
#                                            exactly as README prints it; run it (--read-only,
#                                            UID 10001, /healthz, /readyz, a check against a
#                                            redis-server on loopback, SIGTERM exits 0)
#   scripts/container-test.sh readme         README.md's first command, exactly as printed, in a
#                                            fresh Debian 12 container (packages from Debian's
#                                            mirror, a cold build): the time until the first
#                                            check is answered
#   scripts/container-test.sh deb DEB_FILE   apt-get install the package in a fresh container
#                                            from the base, check the files, start the binary
# Each step prints how long it took.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
. tests/php/lib/servers.sh   # work, fail, require_tools, start_redis; cleanup on exit
require_tools podman runc mmdebstrap curl redis-server redis-cli

# Short names (debian:12 in the Dockerfile) resolve to the local base only: no search
# registries, short-name aliases off, and --pull=never on every build and run.
export CONTAINERS_REGISTRIES_CONF=$work/registries.conf
printf 'unqualified-search-registries = []\nshort-name-mode = "disabled"\n' >"$CONTAINERS_REGISTRIES_CONF"
# Without --runtime runc / cgroupfs and the two ulimits the OCI runtime fails here on
# setrlimit and on hybrid cgroup hosts.
# The same settings for README's own `podman build` line, which names no flags: this machine's
# engine configuration, given to every podman the script runs through CONTAINERS_CONF.
export CONTAINERS_CONF=$work/containers.conf
cat >"$CONTAINERS_CONF" <<'CONF'
[containers]
netns = "host"
default_ulimits = ["nofile=10000:10000", "nproc=1000:1000"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
CONF
engine=(podman --runtime runc --cgroup-manager cgroupfs)
limits=(--ulimit nofile=10000:10000 --ulimit nproc=1000:1000)
containers=()
stop_containers() { local c; for c in "${containers[@]}"; do "${engine[@]}" rm -f "$c" >/dev/null 2>&1 || true; done; }
# cleanup (servers.sh) exits with the status it finds in $?: the script's, not stop_containers'.
trap 'rc=$?; stop_containers; (exit "$rc"); cleanup' EXIT

step_started=0
step() { step_started=$(date +%s); echo "=== container-test: $*"; }
took() { echo "ok    $* ($(( $(date +%s) - step_started )) s)"; }

# The base both FROM lines name (debian:12, debian:12-slim), made once per machine.
ensure_base() {
  if "${engine[@]}" image exists localhost/debian:12 && "${engine[@]}" image exists localhost/debian:12-slim; then
    echo "ok    base image localhost/debian:12 present"
    return
  fi
  step "base image: mmdebstrap bookworm"
  mmdebstrap --quiet --variant=apt --include=ca-certificates bookworm "$work/rootfs.tar"
  "${engine[@]}" import --quiet "$work/rootfs.tar" localhost/debian:12 >/dev/null
  "${engine[@]}" tag localhost/debian:12 localhost/debian:12-slim
  rm -f "$work/rootfs.tar"
  took "base image imported as localhost/debian:12 and :12-slim"
}

# The port a containerised ratelimitd chose for --listen 127.0.0.1:0, from its log.
listening_port() {  # container
  local line
  poll_until "$start_bound" logged_or_stopped "$1" 'listening on' || true
  line=$("${engine[@]}" logs "$1" 2>&1 | grep -m1 'listening on' || true)
  [ -n "$line" ] && { sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' <<<"$line"; return; }
  "${engine[@]}" logs "$1" >&2 || true
  fail "$1 did not start listening"
}

# logged_or_stopped CONTAINER TEXT: true once the container's log holds TEXT or it has stopped.
logged_or_stopped() {
  "${engine[@]}" logs "$1" 2>&1 | grep -q "$2" && return 0
  [ "$("${engine[@]}" inspect -f '{{.State.Running}}' "$1")" != true ]
}

# readme_command PATTERN: the first line of a ```sh block in README.md that starts with
# PATTERN, with its trailing comment removed: the command exactly as a reader copies it.
readme_command() {
  local line
  line=$(awk -v p="$1" '/^```sh/{code=1; next} /^```/{code=0} code && index($0, p) == 1 {print; exit}' README.md)
  [ -n "$line" ] || fail "README.md has no command starting with '$1' in a sh block"
  sed 's/[[:space:]]*#.*$//' <<<"$line"
}

test_image() {
  ensure_base
  local command; command=$(readme_command "podman build")
  step "image build: README's command, as printed: $command"
  # eval: the line as a shell reads it (README's quoting, if any, included); its tag is README's.
  eval "$command" >"$work/image-build.log" 2>&1 || { tail -40 "$work/image-build.log" >&2; fail "README's container command failed: $command"; }
  local tag; tag=$(sed -n 's/.* -t \([^ ]*\).*/\1/p' <<<"$command")
  [ -n "$tag" ] || fail "README's container command names no tag (-t): $command"
  "${engine[@]}" tag "$tag" localhost/ratelimitd:ci
  # The name deploy/kubernetes/ uses (tests/deploy/manifests_test.py checks it is this version).
  local version; version=$(sed -n 's/^project(ratelimitd VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
  "${engine[@]}" tag localhost/ratelimitd:ci "localhost/ratelimitd:$version"
  took "image localhost/ratelimitd:ci (and :$version) built"

  step "image run"
  [ "$("${engine[@]}" image inspect -f '{{.Config.User}}' localhost/ratelimitd:ci)" = "10001:10001" ] \
    || fail "the image does not run as the numeric user 10001:10001"
  # envoyproxy/ratelimit's Deployments run /bin/ratelimit: ERL mode (docs/envoy.md).
  "${engine[@]}" run --rm --pull=never --no-healthcheck "${limits[@]}" --entrypoint /bin/ratelimit localhost/ratelimitd:ci --version | grep -q '^ratelimitd ' \
    || fail "the image has no /bin/ratelimit running ratelimitd"
  start_redis
  local redis_port=$started_port name=ratelimitd-ci-$$
  containers+=("$name")
  # The config directory mounted read-only, as a ConfigMap is: a change on the host is reloaded.
  mkdir -p "$work/config" && cp config/example.yaml "$work/config/config.yaml"
  "${engine[@]}" run -d --pull=never --no-healthcheck --name "$name" --network host --read-only "${limits[@]}" \
    -v "$work/config:/etc/ratelimitd:ro" localhost/ratelimitd:ci --listen 127.0.0.1:0 --threads 2 \
    --redis "redis://127.0.0.1:$redis_port" >/dev/null
  local port; port=$(listening_port "$name")
  local pid; pid=$("${engine[@]}" inspect -f '{{.State.Pid}}' "$name")
  [ "$(ps -o uid= -p "$pid" | tr -d ' ')" = 10001 ] || fail "the process does not run as UID 10001"
  [ "$("${engine[@]}" inspect -f '{{.HostConfig.ReadonlyRootfs}}' "$name")" = true ] || fail "root is not read-only"
  "${engine[@]}" exec "$name" sh -c 'touch /etc/ratelimitd/x 2>/dev/null' && fail "the root filesystem is writable"

  curl -fsS "http://127.0.0.1:$port/healthz" | grep -q '"ok"' || fail "/healthz"
  curl -fsS "http://127.0.0.1:$port/readyz" | grep -q '"ready"' || fail "/readyz with Redis up"
  curl -fsS "http://127.0.0.1:$port/readyz?mode=sidecar" | grep -q '"ready"' || fail "/readyz?mode=sidecar"
  local tenant=ci-$$-$RANDOM headers
  headers=$(curl -sS -o /dev/null -D - -X POST "http://127.0.0.1:$port/v1/check" \
    -H 'Content-Type: application/json' -d "{\"policy\":\"login\",\"tenant\":\"$tenant\"}")
  grep -q '^HTTP/1.1 200' <<<"$headers" || fail "check: $headers"
  grep -qi '^X-RateLimit-Limit: 5' <<<"$headers" || fail "check: no X-RateLimit-Limit: 5 in $headers"
  grep -qi '^X-RateLimit-Remaining: 4' <<<"$headers" || fail "check: no X-RateLimit-Remaining: 4"
  grep -qi '^RateLimit-Policy: ' <<<"$headers" || fail "check: no RateLimit-Policy"
  [ "$(redis-cli -p "$redis_port" --scan --pattern '*' | grep -c "$tenant")" -ge 1 ] \
    || fail "the check did not reach the redis-server on loopback"

  # Append a policy under policies: (the example's first mapping) and save by rename.
  awk '{print} /^policies:/{print "  added-by-ci:\n    algorithm: fixed_window\n    limit: 1\n    window: 1m"}' \
    config/example.yaml >"$work/config/.config.yaml.new"
  mv "$work/config/.config.yaml.new" "$work/config/config.yaml"
  poll_until "$start_bound" logged_or_stopped "$name" 'reloaded path="/etc/ratelimitd/config.yaml"' || true
  "${engine[@]}" logs "$name" 2>&1 | grep -q 'reloaded path="/etc/ratelimitd/config.yaml"' || { "${engine[@]}" logs "$name" >&2; fail "a changed mounted config was not reloaded"; }
  curl -fsS -X POST "http://127.0.0.1:$port/v1/check" -H 'Content-Type: application/json' \
    -d "{\"policy\":\"added-by-ci\",\"tenant\":\"$tenant\"}" | grep -q '"allowed":true' \
    || fail "the reloaded policy does not answer"

  "${engine[@]}" kill --signal TERM "$name" >/dev/null
  local rc; rc=$("${engine[@]}" wait "$name")
  [ "$rc" = 0 ] || { "${engine[@]}" logs "$name" >&2; fail "SIGTERM: exit $rc, expected 0"; }
  took "image: UID 10001, read-only root, /healthz, /readyz, check in Redis with headers, reload of the mounted file, SIGTERM exits 0"
}

# README.md's first command, exactly as printed, in a fresh Debian 12 container as a newcomer
# runs it: root, the tree as a clone has it, nothing installed beyond the base, no ccache. The
# container shares the host's network (Debian's mirror, and the check on 127.0.0.1:8080).
test_readme() {
  ensure_base
  local command name=ratelimitd-readme-$$ started
  command=$(readme_command "bash scripts/start.sh")
  (exec 3<>/dev/tcp/127.0.0.1/8080) 2>/dev/null && fail "127.0.0.1:8080 is taken: README's command listens there"
  step "README's first command in a fresh debian:12 container: $command"
  mkdir -p "$work/tree"
  git ls-files -z --cached --others --exclude-standard | tar -c --null -T - | tar -x -C "$work/tree"
  containers+=("$name")
  started=$(date +%s)
  "${engine[@]}" run -d --pull=never --name "$name" --network host "${limits[@]}" \
    -v "$work/tree:/src" -w /src localhost/debian:12 bash -c "$command" >/dev/null
  readme_wait "$name" 1800 || true
  if ! readme_check_answered "$name" >/dev/null; then
    "${engine[@]}" logs "$name" 2>&1 | tail -40 >&2
    fail "README's first command did not answer a check on 127.0.0.1:8080"
  fi
  "${engine[@]}" logs "$name" 2>&1 | grep '^start.sh: .*([0-9]* s)' || true
  took "README's first command: first check answered $(( $(date +%s) - started )) s after the container started"
  build_figures "$work/tree/build-release/.ninja_log"
}

# build_figures NINJA_LOG: what the build in it cost, so that a slower first check can be told
# apart from a slower machine: its steps' summed time (the compiler's work, both cores) against
# the time from its first step's start to its last one's end.
build_figures() {
  [ -f "$1" ] || return 0
  awk -F'\t' '!/^#/ { n++; sum += $2 - $1; if ($2 > end) end = $2 }
    END { printf "ok    the build: %d steps, %.0f s of step time over %.0f s (%.2f steps at once)\n", n, sum / 1000, end / 1000, sum / end }' "$1"
}

# readme_wait CONTAINER BOUND: waits until README's check answers allowed, BOUND seconds at
# most. The wait must take nothing from the build it times: `podman inspect` is a Go program
# (about a tenth of a CPU-second a run), and asking it every 50 ms took about half of the two
# cores from README's build (first check 347 s with the build at 299 s, where the same build
# alone in a container took 179-210 s). So the port is tried with bash's own /dev/tcp every
# 0.2 s, the check is asked once it accepts, and whether the container still runs every 2 s.
readme_wait() {
  local deadline=$(( SECONDS + $2 )) polls=0
  while [ "$SECONDS" -lt "$deadline" ]; do
    if (exec 3<>/dev/tcp/127.0.0.1/8080) 2>/dev/null && readme_answers; then return 0; fi
    if (( polls++ % 10 == 0 )); then readme_still_running "$1"; fi
    sleep 0.2
  done
  return 1
}

# readme_check_answered CONTAINER: true once README's check answers allowed; fails the run at
# once if the container stopped first.
readme_check_answered() {
  readme_still_running "$1"
  readme_answers
}

readme_still_running() {  # container; fails the run if it stopped
  if [ "$("${engine[@]}" inspect -f '{{.State.Running}}' "$1")" != true ]; then
    "${engine[@]}" logs "$1" 2>&1 | tail -40 >&2
    fail "README's first command stopped before it answered a check"
  fi
}

readme_answers() {
  curl -fsS -X POST http://127.0.0.1:8080/v1/check -H 'Content-Type: application/json' \
    -d '{"policy":"login","tenant":"readme"}' 2>/dev/null | grep -q '"allowed":true'
}

test_deb() {  # deb-file
  local deb=$1
  [ -f "$deb" ] || fail "no package at $deb (cpack -G DEB in a Release build directory)"
  ensure_base
  step "package install in a fresh container ($(basename "$deb"))"
  local name=ratelimitd-deb-$$ port
  containers+=("$name")
  pick_port; port=$picked_port
  "${engine[@]}" run -d --pull=never --name "$name" --network host "${limits[@]}" \
    -v "$(cd "$(dirname "$deb")" && pwd):/pkg:ro" localhost/debian:12 sleep infinity >/dev/null
  "${engine[@]}" exec -e DEBIAN_FRONTEND=noninteractive "$name" sh -c \
    "apt-get update -q >/dev/null && cd /pkg && apt-get install -y -q --no-install-recommends ./$(basename "$deb") >/dev/null" \
    || fail "apt-get install ./$(basename "$deb")"
  local f
  # /bin/ratelimit: envoyproxy/ratelimit's command, ERL mode (docs/envoy.md).
  "${engine[@]}" exec "$name" sh -c 'test "$(readlink /usr/bin/ratelimit)" = ratelimitd && /bin/ratelimit --version | grep -q "^ratelimitd "' \
    || fail "the package does not link /bin/ratelimit to ratelimitd"
  for f in /usr/bin/ratelimitd /etc/ratelimitd/config.yaml /etc/default/ratelimitd \
           /lib/systemd/system/ratelimitd.service /usr/share/doc/ratelimitd/LICENSE; do
    "${engine[@]}" exec "$name" test -f "$f" || fail "the package does not install $f"
  done
  "${engine[@]}" exec "$name" sh -c 'grep -qx /etc/ratelimitd/config.yaml /var/lib/dpkg/info/ratelimitd.conffiles' \
    || fail "/etc/ratelimitd/config.yaml is not a conffile"
  "${engine[@]}" exec "$name" ratelimitd --check-config /etc/ratelimitd/config.yaml >/dev/null \
    || fail "the packaged config does not validate"
  # As the unit starts it: a non-root user, the packaged config.
  "${engine[@]}" exec -d --user 65534:65534 "$name" \
    ratelimitd --config /etc/ratelimitd/config.yaml --listen "127.0.0.1:$port" --threads 2 >/dev/null
  poll_until "$start_bound" curl -fsS -o /dev/null "http://127.0.0.1:$port/healthz" 2>/dev/null || true
  curl -fsS "http://127.0.0.1:$port/healthz" | grep -q '"ok"' || fail "the packaged binary does not answer /healthz"
  curl -fsS -X POST "http://127.0.0.1:$port/v1/check" -d '{"policy":"login","tenant":"deb"}' \
    -H 'Content-Type: application/json' | grep -q '"allowed":true' || fail "the packaged binary does not decide a check"
  took "package: installs with apt-get, conffile, unit, binary answers"
  if command -v systemd-analyze >/dev/null 2>&1; then
    step "systemd unit: verify and security exposure"
    # The unit from the package, pointed at the unpacked binary (verify wants ExecStart to exist).
    local tree=$work/deb-root unit=$work/ratelimitd.service out
    mkdir -p "$tree" && dpkg-deb -x "$deb" "$tree"
    sed "s#/usr/bin/ratelimitd#$tree/usr/bin/ratelimitd#g" "$tree/lib/systemd/system/ratelimitd.service" >"$unit"
    out=$(systemd-analyze verify "$unit" 2>&1) || fail "systemd-analyze verify: $out"
    [ -z "$out" ] || fail "systemd-analyze verify complains (an unknown or malformed directive): $out"
    # Exposure 0 (locked down) .. 10 (none); the hardening above gives 1.5.
    systemd-analyze security --offline=yes --threshold=20 "$unit" >/dev/null 2>&1 \
      || fail "systemd-analyze security: exposure above 2.0: $(systemd-analyze security --offline=yes "$unit" 2>&1 | tail -1)"
    took "unit verified, exposure $(systemd-analyze security --offline=yes "$unit" 2>&1 | sed -n 's/.*exposure level for [^:]*: \([0-9.]*\).*/\1/p')"
  fi
}

case "${1:-}" in
  base)   ensure_base ;;
  image)  test_image ;;
  readme) test_readme ;;
  deb)   test_deb "${2:?usage: container-test.sh deb DEB_FILE}" ;;
  *) echo "usage: container-test.sh base | image | readme | deb DEB_FILE" >&2; exit 2 ;;
esac
