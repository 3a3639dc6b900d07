"""Which policy versions vLLM really loaded: its `/weight_info` (dev mode) reports the version the GPU worker tagged
the reloaded weights with. Polled in the background, so a reload that lands between two trainer steps counts."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request


class ReloadWatch:
    def __init__(self, vllm_url: str, every_s: float = 0.25) -> None:
        self.url = vllm_url.rstrip("/") + "/weight_info"
        self.every_s = every_s
        self.versions: dict[int, float] = {}  # version -> when it was first seen
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._poll())

    def seen(self) -> list[int]:
        return sorted(self.versions)

    async def until(self, version: int, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while version not in self.versions and time.monotonic() < deadline:
            await asyncio.sleep(self.every_s)
        return version in self.versions

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _poll(self) -> None:
        while True:
            tag = await asyncio.to_thread(self._read)
            if tag is not None and tag.isdigit():
                self.versions.setdefault(int(tag), time.time())
            await asyncio.sleep(self.every_s)

    def _read(self) -> str | None:
        try:
            with urllib.request.urlopen(self.url, timeout=5) as response:
                return str(json.load(response).get("weight_version"))
        except (OSError, ValueError):
            return None
