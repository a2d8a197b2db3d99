#!/usr/bin/env bash
# Builds Gitea from its Go module into the cache, once per version: `go mod download` of code.gitea.io/gitea, then
# `go build` with SQLite in the downloaded folder (without embedded assets: Gitea reads templates and options from
# the source folder, which stays next to the binary as its STATIC_ROOT_PATH). The build takes about 20 minutes at
# low priority on 2 cores; it runs under `nice -n 19`. The marker `.ok` is written last, so an interrupted build is
# redone, not trusted. A lock keeps two callers (infra/test.sh's background build, `stack.sh start gitea`) from
# building the same version at once: the second waits for the first.
# Usage: infra/gitea-build.sh <home> <version>
set -euo pipefail
home=$1 version=$2
[ -f "$home/.ok" ] && exit 0
command -v go >/dev/null || { echo "gitea build needs Go on PATH" >&2; exit 1; }
mkdir -p "$(dirname "$home")"
exec 9>"$home.lock"
flock 9
[ -f "$home/.ok" ] && exit 0
rm -rf "$home"; mkdir -p "$home"
# A module cache of its own, writable (-modcacherw), so the source folder can be copied and the cache removed.
export GOMODCACHE="$home/gomod" GOFLAGS="-modcacherw -buildvcs=false"
dir=$(nice -n 19 go mod download -json "code.gitea.io/gitea@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$dir" ] && [ -d "$dir" ] || { echo "go mod download code.gitea.io/gitea@$version gave no folder" >&2; exit 1; }
cp -r "$dir" "$home/src"
(cd "$home/src" && CGO_ENABLED=1 nice -n 19 go build -trimpath -tags 'sqlite sqlite_unlock_notify' \
  -ldflags "-s -w -X 'main.Version=${version#v}'" -o "$home/gitea" .)
# The module cache (about 1 GB) is kept only while building; the source folder holds templates and options.
go clean -modcache >/dev/null 2>&1 || rm -rf "$GOMODCACHE"
rm -rf "$home/src/.git"
touch "$home/.ok"
