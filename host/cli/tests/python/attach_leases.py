"""Two official-Python-client processes share one host through
`devicerail attach`, each running a Session on its own mock device, while
a third contends for a leased device.

Run by host/cli/tests/shared_host.rs with the venv's python:
    python attach_leases.py ROLE
ROLE `runner DEVICE` runs a Session on DEVICE and prints one JSON line;
ROLE `contender DEVICE` tries DEVICE while it is leased, waits for it to be
released, then takes it. Environment: DEVICERAIL_BIN, DEVICERAIL_SOCKET.
"""
from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid

from devicerail import DeviceRailClient, RpcRemoteError

HELLO = {
    "client": {"name": "attach-leases", "version": "1.0.0"},
    "protocol": {"ranges": [{"major": 1, "minMinor": 0, "maxMinor": 5}]},
    "features": {"required": [], "optional": ["device.routing.v1", "request.control.v1"]},
}


async def attach() -> DeviceRailClient:
    return await DeviceRailClient.spawn(
        os.environ["DEVICERAIL_BIN"],
        "attach",
        "--socket",
        os.environ["DEVICERAIL_SOCKET"],
        hello=HELLO,
        close_grace_seconds=5.0,
    )


async def runner(device: str, taps: int) -> dict:
    client = await attach()
    async with client:
        await client.call("device.select", {"deviceId": device})
        await client.call("device.connect", timeout_ms=15_000)
        session = await client.call("session.start")
        # Pipelined Actions on this connection, while the other runner
        # does the same on its device.
        results = await asyncio.gather(*[
            client.call(
                "device.execute",
                {"id": str(uuid.uuid4()), "name": "tap", "arguments": {"x": 5, "y": 5}},
                timeout_ms=20_000,
            )
            for _ in range(taps)
        ])
        # Hold the lease until the contender has been refused.
        await asyncio.sleep(float(os.environ.get("HOLD_SECONDS", "0")))
        ended = await client.call("session.end", {"outcome": "completed"})
        await client.call("device.disconnect")
        return {
            "device": device,
            "session": session["id"],
            "actions": len(results),
            "ended": ended["state"],
        }


async def contender(device: str) -> dict:
    client = await attach()
    async with client:
        await client.call("device.select", {"deviceId": device})
        refused = None
        for _ in range(200):
            try:
                await client.call("device.connect", timeout_ms=15_000)
                break
            except RpcRemoteError as error:
                data = error.rpc_error["data"]
                assert error.rpc_error["code"] == -32014, error.rpc_error
                assert data["code"] == "device_in_use", data
                assert data["retryable"] is True, data
                assert data["details"]["deviceId"] == device, data
                refused = refused or data
                await asyncio.sleep(0.05)
        else:
            raise AssertionError("the device was never released")
        session = await client.call("session.start")
        await client.call(
            "device.execute",
            {"id": str(uuid.uuid4()), "name": "tap", "arguments": {"x": 1, "y": 1}},
        )
        await client.call("session.end")
        return {"device": device, "refused": refused, "session": session["id"]}


def main() -> int:
    role, device = sys.argv[1], sys.argv[2]
    if role == "runner":
        out = asyncio.run(runner(device, int(os.environ.get("TAPS", "25"))))
    else:
        out = asyncio.run(contender(device))
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
