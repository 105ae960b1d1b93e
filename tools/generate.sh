#!/usr/bin/env bash
# spec/*.tsp -> <out>/openapi.yaml (normalized OpenAPI 3.1) + <out>/types.ts.
# Usage: bash tools/generate.sh [out-dir]   (default: generated/)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/generated}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

cd "$root"
# warn-as-error is set in spec/tspconfig.yaml, so a diagnostic fails the build.
node_modules/.bin/tsp compile spec --output-dir "$tmp/tsp" >"$tmp/tsp.log" 2>&1 || {
  cat "$tmp/tsp.log" >&2
  exit 1
}
node --import tsx tools/normalize-openapi.ts "$tmp/tsp/openapi.yaml" "$out/openapi.yaml"
node_modules/.bin/openapi-typescript "$out/openapi.yaml" --output "$out/types.ts" >"$tmp/ots.log" 2>&1 || {
  cat "$tmp/ots.log" >&2
  exit 1
}
echo "generated: $out/openapi.yaml $out/types.ts"
