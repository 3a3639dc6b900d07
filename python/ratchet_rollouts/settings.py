"""Where Temporal and Postgres are, and how to reach them securely, from arguments or the environment.

Temporal settings come from Temporal's own environment configuration (`temporalio.envconfig`): TEMPORAL_ADDRESS,
TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS, TEMPORAL_TLS_CLIENT_CERT_PATH / _KEY_PATH (mTLS),
TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_SERVER_NAME, TEMPORAL_PROFILE and its TOML file, the same
variables the TypeScript side reads. Postgres comes from DATABASE_URL; TLS is libpq's own `sslmode` and
`sslrootcert` (in the URL, as arguments, or PGSSLMODE / PGSSLROOTCERT).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from temporalio.envconfig import ClientConfigProfile

DEFAULT_TEMPORAL_PORT = 7233


def dev_temporal_address(env: Mapping[str, str]) -> str:
    """`ratchet dev`'s Temporal: 127.0.0.1 (where it binds) on RATCHET_TEMPORAL_PORT, the variable that moves it, or 7233.
    Used when TEMPORAL_ADDRESS (or a profile) names none, so `ratchet-env serve` and a trainer started beside
    `ratchet dev`, in the same environment, find its Temporal whatever port it was given."""
    port = env.get("RATCHET_TEMPORAL_PORT", "").strip()
    return f"127.0.0.1:{port if port.isdigit() else DEFAULT_TEMPORAL_PORT}"


DEFAULT_TEMPORAL_ADDRESS = dev_temporal_address({})


@dataclass(frozen=True)
class PostgresSettings:
    url: str
    sslmode: str | None = None
    sslrootcert: str | None = None

    def connect_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for psycopg's connect: libpq merges them into the URL's own parameters."""
        extra = {"sslmode": self.sslmode, "sslrootcert": self.sslrootcert}
        return {"conninfo": self.url, **{k: v for k, v in extra.items() if v}}


def _secret(env: Mapping[str, str], name: str) -> str | None:
    """A variable's value, or the content of the file NAME_FILE names (Docker and Kubernetes secrets)."""
    if env.get(name):
        return env[name]
    path = env.get(f"{name}_FILE")
    return Path(path).read_text().strip() if path else None


def temporal_connect_config(
    address: str | None = None,
    namespace: str | None = None,
    api_key: str | None = None,
    tls: bool | None = None,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Keyword arguments for `temporalio.client.Client.connect`: the environment's profile, then the arguments."""
    environ = dict(os.environ if env is None else env)
    key_from_file = _secret(environ, "TEMPORAL_API_KEY")
    if key_from_file:
        environ["TEMPORAL_API_KEY"] = key_from_file
    profile = ClientConfigProfile.load(override_env_vars=environ)
    config: dict[str, Any] = dict(profile.to_client_connect_config())
    config.setdefault("target_host", dev_temporal_address(environ))
    config.setdefault("namespace", "default")
    if address:
        config["target_host"] = address
    if namespace:
        config["namespace"] = namespace
    if api_key:
        config["api_key"] = api_key
        config.setdefault("tls", True)
    if tls is not None:
        config["tls"] = tls
    return config


def postgres_settings(
    url: str | None = None,
    sslmode: str | None = None,
    sslrootcert: str | None = None,
    env: Mapping[str, str] | None = None,
) -> PostgresSettings:
    environ = os.environ if env is None else env
    resolved = url or _secret(environ, "DATABASE_URL")
    if not resolved:
        raise ValueError("no Postgres: pass database_url or set DATABASE_URL (`ratchet dev` prints it)")
    return PostgresSettings(resolved, sslmode, sslrootcert)
