# The Fileshare server image: `docker run -p 3000:3000 -v fileshare:/data <image>`.
# docs/deployment.md ("Container image") says how to build, run and upgrade it. Dockerfile is a
# copy of this file, not a link (Docker's BuildKit fails on a symlinked Dockerfile): keep the two
# identical (test/deploy/containerfile.test.ts checks).
#
# The base is an argument so that machines without a registry can build from a local stand-in
# (scripts/container/make-base); anything laid out like the official image works.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
WORKDIR /app
COPY package.json package-lock.json ./
# --omit=optional: the `node` package pins a runtime for hosts whose system Node.js is too old; the
# image takes Node.js from its base. --ignore-scripts: nothing needs an install script any more
# (better-sqlite3 13 ships prebuilt Node-API binaries), and esbuild's, without its optional
# platform package, would fetch it from the registry. Behind a TLS-inspecting proxy, give npm the
# proxy's CA as the build secret npm_ca (`--secret id=npm_ca,src=ca.pem`, as build-image does):
# it serves this step only and lands in no layer.
RUN --mount=type=secret,id=npm_ca \
    if [ -f /run/secrets/npm_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca; fi \
 && npm ci --omit=optional --ignore-scripts --loglevel=warn
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# Then production dependencies only, without better-sqlite3's C sources and the binaries of other
# platforms (25 MB); and fail here, not at the first request, if the binding does not load.
RUN npm run build \
 && rm -f dist/.tsbuildinfo \
 && npm prune --omit=dev --omit=optional --loglevel=warn \
 && rm -rf node_modules/better-sqlite3/deps node_modules/better-sqlite3/src \
 && find node_modules/better-sqlite3/prebuilds -type f ! -name "linux-$(node -p process.arch).node" -delete \
 && node -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()"

FROM ${NODE_IMAGE}
# Keep in step with package.json (test/deploy/containerfile.test.ts checks); build-image passes it.
ARG VERSION=0.2.0
LABEL org.opencontainers.image.title="Fileshare" \
      org.opencontainers.image.description="Self-hostable file-sharing service with a REST API (/api/v1)" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.source="https://github.com/fileshare/fileshare" \
      org.opencontainers.image.documentation="https://github.com/fileshare/fileshare/blob/main/docs/deployment.md"
# tini as PID 1: it passes SIGTERM on to node (which then finishes running requests) and reaps
# zombies. A fixed uid/gid so that a bind-mounted data folder can be given to it (chown 10001).
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tini >/dev/null \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 fileshare \
 && useradd --uid 10001 --gid fileshare --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin fileshare \
 && mkdir /data \
 && chown fileshare:fileshare /data
WORKDIR /app
ENV NODE_ENV=production \
    FILESHARE_DATA_DIR=/data \
    HOST=0.0.0.0 \
    PORT=3000
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY public ./public
# The operator CLI as `fileshare` (docker exec <container> fileshare account create ...).
RUN ln -s /app/bin/fileshare.js /usr/local/bin/fileshare
USER fileshare
# A named volume gets /data's owner (fileshare) when docker first creates it.
VOLUME /data
EXPOSE 3000
# Node.js itself (no curl in the image); /readyz checks the database and the storage. No "$" in
# it, so that compose files can repeat it as it is (deploy/, checked by test/deploy).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/readyz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
# The heap bounds of `npm start` (docs/configuration.md, "Memory").
CMD ["node", "--max-semi-space-size=8", "--max-old-space-size=1024", "--incremental-marking-soft-trigger=80", "--incremental-marking-hard-trigger=95", "dist/server.js"]
