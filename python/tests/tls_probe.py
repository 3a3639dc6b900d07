"""Connects the package to Postgres with the given sslmode and root certificate and prints what Postgres says of
the connection. Run by test/python/python-package.test.ts once it has turned TLS on (not a pytest module)."""

from __future__ import annotations

import asyncio
import json
import sys

from ratchet_rollouts import RolloutClient


async def main(sslmode: str, sslrootcert: str) -> None:
    try:
        client = await RolloutClient.connect(sslmode=sslmode, sslrootcert=sslrootcert)
    except Exception as error:  # the test reads the failure from stdout
        print(json.dumps({"connected": False, "error": f"{type(error).__name__}: {error}"}))
        return
    async with client:
        cursor = await client.database.execute("SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        ssl, version = await cursor.fetchone() or (False, None)
        print(json.dumps({"connected": True, "ssl": ssl, "version": version, "policyVersion": await client.policy_version()}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
