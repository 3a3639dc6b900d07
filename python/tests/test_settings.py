"""Connection settings from the environment: Temporal's own environment configuration (temporalio.envconfig) for
TLS, mTLS, a custom CA, the server name and an API key; libpq's sslmode and sslrootcert for Postgres."""

from __future__ import annotations

from pathlib import Path

import pytest

from ratchet_rollouts.settings import postgres_settings, temporal_connect_config

NO_FILE = {"TEMPORAL_CONFIG_FILE": "/nonexistent/temporal.toml"}  # the user's own temporal.toml stays out


def test_defaults_to_ratchet_devs_temporal_without_tls() -> None:
    config = temporal_connect_config(env=NO_FILE)
    assert config["target_host"] == "127.0.0.1:7233" and config["namespace"] == "default"
    assert "tls" not in config and "api_key" not in config


def test_finds_ratchet_dev_on_the_port_it_was_moved_to() -> None:
    # Issue 36: `ratchet dev` with RATCHET_TEMPORAL_PORT=7300 listens there; the Python side looked at 7233.
    assert temporal_connect_config(env={**NO_FILE, "RATCHET_TEMPORAL_PORT": "7300"})["target_host"] == "127.0.0.1:7300"
    assert temporal_connect_config(env={**NO_FILE, "RATCHET_TEMPORAL_PORT": "7300", "TEMPORAL_ADDRESS": "t:1"})["target_host"] == "t:1"


def test_an_api_key_turns_tls_on_and_may_come_from_a_file(tmp_path: Path) -> None:
    assert temporal_connect_config(env={**NO_FILE, "TEMPORAL_API_KEY": "k1", "TEMPORAL_ADDRESS": "ns.tmprl.cloud:7233"}) == {
        "target_host": "ns.tmprl.cloud:7233", "namespace": "default", "api_key": "k1", "tls": True,
    }
    (tmp_path / "key").write_text("from-file\n")
    assert temporal_connect_config(env={**NO_FILE, "TEMPORAL_API_KEY_FILE": str(tmp_path / "key")})["api_key"] == "from-file"


def test_reads_mtls_a_custom_ca_and_the_server_name(tmp_path: Path) -> None:
    for name, text in (("ca.pem", "CA"), ("client.pem", "CERT"), ("client.key", "KEY")):
        (tmp_path / name).write_text(text)
    tls = temporal_connect_config(env={
        **NO_FILE,
        "TEMPORAL_TLS_CLIENT_CERT_PATH": str(tmp_path / "client.pem"), "TEMPORAL_TLS_CLIENT_KEY_PATH": str(tmp_path / "client.key"),
        "TEMPORAL_TLS_SERVER_CA_CERT_PATH": str(tmp_path / "ca.pem"), "TEMPORAL_TLS_SERVER_NAME": "temporal.internal",
    })["tls"]
    assert (tls.server_root_ca_cert, tls.client_cert, tls.client_private_key, tls.domain) == (b"CA", b"CERT", b"KEY", "temporal.internal")


def test_arguments_win_over_the_environment() -> None:
    config = temporal_connect_config("other:7233", "ns", tls=False, env={**NO_FILE, "TEMPORAL_TLS": "true", "TEMPORAL_ADDRESS": "env:7233"})
    assert (config["target_host"], config["namespace"], config["tls"]) == ("other:7233", "ns", False)


def test_postgres_tls_is_libpqs_own() -> None:
    settings = postgres_settings("postgres://u@db/r", sslmode="verify-full", sslrootcert="/ca.pem", env={})
    assert settings.connect_kwargs() == {"conninfo": "postgres://u@db/r", "sslmode": "verify-full", "sslrootcert": "/ca.pem"}
    assert postgres_settings(env={"DATABASE_URL": "postgres://x"}).connect_kwargs() == {"conninfo": "postgres://x"}
    with pytest.raises(ValueError, match="DATABASE_URL"):
        postgres_settings(env={})
