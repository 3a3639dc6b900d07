# syntax=docker/dockerfile:1
# Ratchet worker image: `docker build -t ratchet-rollouts .`, then
# `docker run ratchet-rollouts worker cpu|gpu` (see deploy/README.md).
# Node 24 LTS, one of the two lines Ratchet supports (24 and 26; package.json engines): CI runs every test on it
# (.ci/run, scripts/ci/with-node.sh), and the demo, the replays and the integration essentials on 26.
ARG NODE_VERSION=24.22.3

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
# npm 11.16+ reads package.json's allowScripts; build with the npm that wrote the lockfile.
ARG NPM_VERSION=11.19.1
RUN npm install -g npm@${NPM_VERSION}
# `npm ci` runs `prepare` (tsc), so the sources must be in place and dev deps installed.
COPY package.json package-lock.json tsconfig.json ./
# Ratchet's patch to the Temporal SDK (a switch for its per-promise stack traces), applied by npm ci's postinstall.
COPY patches ./patches
COPY src ./src
RUN --mount=type=cache,target=/root/.npm npm ci \
 && npm prune --omit=dev

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Code answers run under bubblewrap (the unshare floor otherwise) with an interpreter that has numpy, as AReaL's
# sandbox does: the same hashed lock `ratchet setup` installs from. Both sandboxes need user namespaces: run the
# CPU worker's container with them allowed (see deploy/README.md).
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv bubblewrap \
 && rm -rf /var/lib/apt/lists/*
COPY scripts/code-python/requirements.lock /opt/ratchet/code-python.lock
RUN python3 -m venv /opt/ratchet/code-python \
 && /opt/ratchet/code-python/bin/python -m pip install --disable-pip-version-check --quiet --require-hashes --no-deps --only-binary :all: -r /opt/ratchet/code-python.lock \
 && /opt/ratchet/code-python/bin/python -c "import numpy" \
 && chmod -R a+rX /opt/ratchet
ENV RATCHET_CODE_PYTHON=/opt/ratchet/code-python/bin/python
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# Code stays root-owned and read-only; only the project-local state dir is writable.
RUN mkdir -p /app/.ratchet && chown node:node /app/.ratchet
USER node
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["worker", "cpu"]
