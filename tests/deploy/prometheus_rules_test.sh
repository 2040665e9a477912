#!/usr/bin/env bash
# deploy/prometheus/alerts.yaml: valid rules (promtool check rules), the unit tests in
# alerts_test.yaml pass (promtool test rules), and every ratelimitd_* series the rules name is
# one the sources render (src/service/metrics.cpp). Usage: prometheus_rules_test.sh SOURCE_DIR
set -euo pipefail

source_dir=${1:?usage: $0 SOURCE_DIR}
rules=$source_dir/deploy/prometheus/alerts.yaml
tests=$source_dir/deploy/prometheus/alerts_test.yaml
exporter=$source_dir/src

if ! command -v promtool >/dev/null; then
    echo "SKIP: promtool not found (Debian package prometheus; scripts/install-deps.sh installs it)"
    exit 77
fi

promtool check rules "$rules"
promtool test rules "$tests"

# Every series the rules read or name to the operator must appear as a sample line the sources
# render (`"name{` or `"name `), or as a whole quoted name (`"name"`, as the process_* series
# are written): the rules may only use metrics that exist.
missing=0
for series in $(grep -v '^\s*#' "$rules" | grep -oE '(ratelimitd|process)_[a-z_]+' | sort -u); do
    if ! grep -rqE "\"$series[ {\"]" "$exporter"; then
        echo "FAIL: alerts.yaml uses $series, which src/ does not export" >&2
        missing=1
    fi
done
exit $missing
