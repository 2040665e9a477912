#!/usr/bin/env bash
# Renders architecture.dot to architecture.svg with Graphviz `dot` (apt-get install graphviz) and
# stamps the SVG with the source's SHA-256, which tests/docs/docs_test.py compares: edit the
# .dot, run this, commit both.
set -euo pipefail
cd "$(dirname "$0")"
sum=$(sha256sum architecture.dot | cut -d' ' -f1)
dot -Tsvg architecture.dot | sed "s|^<svg |<!-- source: architecture.dot sha256 $sum -->\n<svg |" > architecture.svg
echo "architecture.svg from architecture.dot ($sum)"
