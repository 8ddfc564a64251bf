#!/bin/sh
# Installs code-server (a real VS Code that runs headless) into a cache directory for the end-to-end tests.
# Offline-friendly: @vscode/ripgrep's postinstall would download rg from GitHub, so its download cache is
# seeded with the system's rg (Debian package `ripgrep`). Needs build-essential, pkg-config and libkrb5-dev
# for code-server's native modules.
#
# CODE_SERVER_VERSION picks the release (default 4.100.3, which runs on the system Node). CODE_SERVER_NODE_VERSION,
# when set, first fetches that Node from the npm registry (package node-linux-<arch>) into
# $cache/node-<version>, and builds code-server with it (4.139.1 needs Node 24; the caller runs it with the same).
set -eu

CODE_SERVER_VERSION="${CODE_SERVER_VERSION:-4.100.3}"
CODE_SERVER_NODE_VERSION="${CODE_SERVER_NODE_VERSION:-}"
# The @vscode/ripgrep release that code-server 4.100.x pins, and the rg tag that release downloads.
RIPGREP_PACKAGE_VERSION="1.15.11"
RIPGREP_TAG="v13.0.0-10"

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
cache="${AGENTREAD_E2E_CACHE:-$root/.vscode-test}"
dest="$cache/code-server-$CODE_SERVER_VERSION"

if [ -n "$CODE_SERVER_NODE_VERSION" ]; then
  node_dir="$cache/node-$CODE_SERVER_NODE_VERSION"
  if [ ! -x "$node_dir/bin/node" ]; then
    case "$(uname -m)" in
      x86_64) node_arch=x64 ;;
      aarch64) node_arch=arm64 ;;
      *) echo "no Node package for $(uname -m)" >&2; exit 1 ;;
    esac
    mkdir -p "$cache"
    work="$(mktemp -d)"
    (cd "$work" && npm pack --silent "node-linux-$node_arch@$CODE_SERVER_NODE_VERSION" >/dev/null)
    tar xzf "$work"/node-linux-*.tgz -C "$work"
    rm -rf "$node_dir"
    mv "$work/package" "$node_dir"
    rm -rf "$work"
    echo "Node $CODE_SERVER_NODE_VERSION installed in $node_dir"
  fi
  # code-server's install checks the running Node's major version; its native modules build against its headers.
  PATH="$node_dir/bin:$PATH"
  npm_config_nodedir="$node_dir"
  export PATH npm_config_nodedir
  # The check reads npm's user agent, which an `npm run` that started this script passes down naming its own
  # Node: without it, the npm run here names the Node it runs on.
  unset npm_config_user_agent
fi

if [ -x "$dest/node_modules/.bin/code-server" ]; then
  echo "code-server $CODE_SERVER_VERSION already installed in $dest"
  exit 0
fi

rg_bin="$(command -v rg || true)"
if [ -z "$rg_bin" ]; then
  echo "ripgrep (rg) is required: apt-get install -y ripgrep" >&2
  exit 1
fi
tmp="${TMPDIR:-/tmp}"
seed="$tmp/vscode-ripgrep-cache-$RIPGREP_PACKAGE_VERSION"
mkdir -p "$seed"
work="$(mktemp -d)"
cp "$rg_bin" "$work/rg"
tar czf "$seed/ripgrep-$RIPGREP_TAG-x86_64-unknown-linux-musl.tar.gz" -C "$work" rg
rm -rf "$work"

mkdir -p "$dest"
cd "$dest"
[ -f package.json ] || echo '{"name":"agentread-e2e-code-server","private":true}' > package.json
# code-server's postinstall runs npm and npx node-gyp as root.
# npm 11 blocks dependency install scripts by default; code-server needs its own and its native modules'.
npm_config_unsafe_perm=true npm_config_yes=true npm_config_dangerously_allow_all_scripts=true \
  npm install --no-audit --no-fund --no-save --no-package-lock "code-server@$CODE_SERVER_VERSION"
echo "code-server $CODE_SERVER_VERSION installed in $dest"
