#!/bin/sh
# Runs once, when the postgres container starts on an empty data volume
# (docker-entrypoint-initdb.d). Temporal owns its two stores; Ratchet owns its own database
# and applies its own migrations there on start.
# No `set -u`: the entrypoint sources this file when it is not executable.
set -e

psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v temporal_password="${TEMPORAL_DB_PASSWORD:-temporal}" \
  -v ratchet_password="${RATCHET_DB_PASSWORD:-ratchet}" <<'SQL'
-- CREATEDB: temporal-sql-tool's `create` needs it even when the database already exists.
CREATE ROLE temporal LOGIN CREATEDB PASSWORD :'temporal_password';
CREATE ROLE ratchet LOGIN PASSWORD :'ratchet_password';

CREATE DATABASE temporal OWNER temporal;
CREATE DATABASE temporal_visibility OWNER temporal;
CREATE DATABASE ratchet OWNER ratchet;
SQL
