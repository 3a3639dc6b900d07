# syntax=docker/dockerfile:1
# Ratchet worker image: `docker build -t ratchet-rollouts .`, then
# `docker run ratchet-rollouts worker cpu|gpu` (see deploy/README.md).
ARG NODE_VERSION=20.20.2

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
# npm 11.16+ reads package.json's allowScripts; build with the npm that wrote the lockfile.
ARG NPM_VERSION=11.19.1
RUN npm install -g npm@${NPM_VERSION}
# `npm ci` runs `prepare` (tsc), so the sources must be in place and dev deps installed.
COPY package.json package-lock.json tsconfig.json ./
COPY src ./src
RUN --mount=type=cache,target=/root/.npm npm ci \
 && npm prune --omit=dev

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# Code stays root-owned and read-only; only the project-local state dir is writable.
RUN mkdir -p /app/.ratchet && chown node:node /app/.ratchet
USER node
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["worker", "cpu"]
