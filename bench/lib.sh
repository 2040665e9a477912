# Shared by bench/run.sh and bench/cpu.sh (sourced): a scratch directory and the processes
# started into it, stopped and removed on exit, and free loopback ports.
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

port_in_use() { (echo >"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
pick_port() { local p; while :; do p=$(shuf -i 20000-60000 -n 1); port_in_use "$p" || { echo "$p"; return; }; done; }
wait_port() { for _ in $(seq 1 200); do port_in_use "$1" && return 0; sleep 0.05; done; echo "nothing listens on $1" >&2; return 1; }
