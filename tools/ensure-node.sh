#!/usr/bin/env bash
# Prints the directory to put first on PATH so that the project runs on a supported Node, or nothing
# when the system's Node already is one. Switchyard supports Node 22 and 24 (LTS; `engines` in
# package.json, `.nvmrc`). Where the system's Node is older (or missing), the Node named in `.nvmrc`
# is brought from the npm registry into `.toolchain/node` (the registry's `node-<os>-<arch>` package
# holds the official binary; `npm pack` fetches it without running any install script) once, and
# reused after. The Makefile calls this; so can a shell: `source <(tools/ensure-node.sh --env)`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
want="$(tr -d ' \n' <"$root/.nvmrc")"
dir="$root/.toolchain/node"

supported() { # $1 = a version string such as v22.12.0
  local major="${1#v}"; major="${major%%.*}"
  [[ "$major" =~ ^[0-9]+$ ]] && { [[ "$major" == 22 ]] || (( major >= 24 )); }
}

emit() { if [[ "$1" == --env ]]; then echo "export PATH=\"$2:\$PATH\""; else echo "$2"; fi; }

if [[ "${SWITCHYARD_SYSTEM_NODE:-}" != 1 && -x "$dir/bin/node" && "$("$dir/bin/node" --version)" == "v$want" ]]; then
  emit "${1:-}" "$dir/bin"; exit 0
fi
if supported "$(node --version 2>/dev/null || echo none)"; then exit 0; fi

os="$(uname -s | tr '[:upper:]' '[:lower:]')"
case "$(uname -m)" in x86_64|amd64) arch=x64 ;; aarch64|arm64) arch=arm64 ;; *) arch="$(uname -m)" ;; esac
echo "switchyard: Node $(node --version 2>/dev/null || echo '(none)') is not supported (Node 22 or 24 is); fetching Node $want from the npm registry into .toolchain/node" >&2
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "node-$os-$arch@$want" >/dev/null && tar -xzf ./*.tgz)
rm -rf "$dir" && mkdir -p "$(dirname "$dir")" && mv "$tmp/package" "$dir"
"$dir/bin/node" --version >/dev/null
emit "${1:-}" "$dir/bin"
