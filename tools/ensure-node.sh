#!/usr/bin/env bash
# Prints the directory to put first on PATH so that the project runs on a supported Node, or nothing
# when the system's Node already is one. Switchyard supports Node 22 and 24 (LTS; `engines` in
# package.json, `.nvmrc`). Where the system's Node is older (or missing), the Node named in `.nvmrc`
# is brought from the npm registry into `.toolchain/node` (the registry's `node-<os>-<arch>` package
# holds the official binary; `npm pack` fetches it without running any install script) once per user:
# unpacked into the user's cache (`$XDG_CACHE_HOME/switchyard`, else `~/.cache/switchyard`) and linked
# from `.toolchain/node`, so another clone links it in no time (unpacking 190 MB took 8 s of CPU per
# clone). Without a writable cache it is unpacked into the clone. C headers and docs are left out.
# The Makefile calls this; so can a shell: `source <(tools/ensure-node.sh --env)`.
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
cache="${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/switchyard"
unpacked="$cache/node-v$want-$os-$arch"
rm -rf "$dir" && mkdir -p "$(dirname "$dir")"
if [[ -x "$unpacked/bin/node" && "$("$unpacked/bin/node" --version 2>/dev/null)" == "v$want" ]]; then
  ln -s "$unpacked" "$dir"; emit "${1:-}" "$dir/bin"; exit 0
fi
rm -rf "$unpacked" 2>/dev/null || true
echo "switchyard: Node $(node --version 2>/dev/null || echo '(none)') is not supported (Node 22 or 24 is); fetching Node $want from the npm registry into .toolchain/node" >&2
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent --prefer-offline "node-$os-$arch@$want" >/dev/null && tar -xzf ./*.tgz --exclude=package/include --exclude=package/share/doc)
"$tmp/package/bin/node" --version >/dev/null
# Into the cache when it can be written (another clone may be unpacking the same version: the first
# rename wins and both use it), else into this clone.
if mkdir -p "$cache" 2>/dev/null && [[ -w "$cache" ]]; then
  mv -T "$tmp/package" "$unpacked.$$" && { mv -T "$unpacked.$$" "$unpacked" 2>/dev/null || rm -rf "$unpacked.$$"; }
  ln -s "$unpacked" "$dir"
else
  mv "$tmp/package" "$dir"
fi
emit "${1:-}" "$dir/bin"
