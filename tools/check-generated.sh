#!/usr/bin/env bash
# Fails when the committed generated/ differs from a fresh `make generate`.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

bash "$root/tools/generate.sh" "$tmp" >/dev/null
stale=0
for file in openapi.yaml types.ts; do
  if ! diff -u "$root/generated/$file" "$tmp/$file" >"$tmp/$file.diff" 2>&1; then
    head -n 40 "$tmp/$file.diff" >&2
    stale=1
  fi
done
if [ "$stale" -ne 0 ]; then
  echo "generated/ is stale: run make generate" >&2
  exit 1
fi
echo "generated/ is up to date"
