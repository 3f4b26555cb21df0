#!/usr/bin/env python3
"""Probe a running HeTu server and print the protocol facts PROTOCOL.md relies on.

  protocol_probe.py --url ws://127.0.0.1:2466/hetu/bench --layers full [basic|flood N]

basic: handshake contents, zlib framing, reply ordering under pipelining, error behaviour,
       motd, wrong instance, permessage-deflate negotiation.
flood N: send N calls back-to-back (pipelined) and report how many replies arrive before the
       server closes the connection (run against a server started with --client-send-limits).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import zlib

import msgpack
from websockets.asyncio.client import connect

from client_asyncio import HetuConnection


def fact(msg: str) -> None:
    print("FACT:", msg, flush=True)


async def closed_or_reply(conn: HetuConnection, timeout=3.0) -> str:
    try:
        reply = await asyncio.wait_for(conn.recv(), timeout)
        return f"reply {reply!r}"
    except asyncio.TimeoutError:
        return "no reply within %.0fs, connection open" % timeout
    except Exception as e:  # noqa: BLE001
        return f"connection closed ({type(e).__name__}: {e})"


async def basic(url: str, layers: str, key: bytes | None) -> None:
    # 1. handshake + framing, looking at raw frames
    conn = await HetuConnection(url, layers, key).connect()
    if layers == "full":
        raw_dicts = []
        for _ in range(2):
            ws = await connect(url, compression=None)
            from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

            pk = X25519PrivateKey.generate().public_key().public_bytes_raw()
            await ws.send(msgpack.packb([b"", pk]))
            raw = await ws.recv()
            reply = msgpack.unpackb(raw)
            raw_dicts.append(reply[0])
            await ws.close()
        fact(f"handshake reply = [bin({len(raw_dicts[0])}), bin({len(reply[1])})]; "
             f"zlib dict identical across connections: {raw_dicts[0] == raw_dicts[1]}")
        fact(f"zlib dict for this app: {raw_dicts[0]!r}")
        # capture the compressed stream of the first two client frames
        orig = conn._compress
        c1 = orig.compress(msgpack.packb(["rpc", "hello_world"])) + orig.flush(zlib.Z_SYNC_FLUSH)
        fact(f"client zlib frame 1 starts {c1[:2].hex()} ends {c1[-4:].hex()} len {len(c1)}")
        # that consumed the stream state, so send exactly those bytes through crypto ourselves
        conn._send_n += 1
        nonce = b"\xff" + conn._send_n.to_bytes(11, "big")
        await conn.ws.send(conn._aead.encrypt(nonce, c1, None))
        frame = await conn.ws.recv()
        conn._recv_n += 1
        plain = conn._aead.decrypt(b"\x00" + conn._recv_n.to_bytes(11, "big"), frame, None)
        fact(f"server frame 1: {len(frame)} bytes on the wire = {len(plain)} zlib bytes + 16 tag; "
             f"zlib starts {plain[:2].hex()} ends {plain[-4:].hex()}")
        fact(f"server reply 1 decoded: {msgpack.unpackb(conn._decompress.decompress(plain))!r}")
        r2 = await conn.call("hello_world")
        fact(f"second call on same stream decodes: {r2!r}")
    else:
        fact(f"msgpack-only: handshake sent [] got [] ; hello_world -> {await conn.call('hello_world')!r}")

    # 2. pipelining: 6 requests sent back to back, replies in order?
    reqs = [["rpc", "just_get", 1], ["rpc", "hello_world"], ["rpc", "upsert", 7],
            ["rpc", "hello_world"], ["rpc", "exchange_data", "ABC", 7], ["rpc", "just_get", 2]]
    for r in reqs:
        await conn.send(r)
    replies = [await conn.recv() for _ in reqs]
    fact(f"pipelined {len(reqs)} requests -> replies in order: {replies!r}")
    await conn.close()

    # 3. error behaviour
    for label, msg in [("unknown endpoint", ["rpc", "no_such_endpoint"]),
                       ("wrong argument count", ["rpc", "just_get"]),
                       ("unknown message type", ["bogus"])]:
        c = await HetuConnection(url, layers, key).connect()
        await c.send(msg)
        fact(f"{label} {msg!r}: {await closed_or_reply(c)}")
        await c.close()

    # 4. motd
    c = await HetuConnection(url, layers, key).connect()
    await c.send(["motd"])
    frame = await asyncio.wait_for(c.ws.recv(), 3)
    fact(f"motd reply frame type {type(frame).__name__}: {frame!r}")
    await c.close()

    # 5. wrong instance
    bad = url.rsplit("/", 1)[0] + "/no_such_instance"
    try:
        await HetuConnection(bad, layers, key).connect()
        fact("wrong instance: handshake accepted (unexpected)")
    except Exception as e:  # noqa: BLE001
        fact(f"wrong instance name: {type(e).__name__}: {e}")

    # 6. permessage-deflate offered by the client?
    ws = await connect(url)  # websockets offers permessage-deflate by default
    fact(f"client offered permessage-deflate; server answered Sec-WebSocket-Extensions="
         f"{ws.response.headers.get('Sec-WebSocket-Extensions')!r}")
    await ws.close()


async def flood(url: str, layers: str, key: bytes | None, n: int) -> None:
    c = await HetuConnection(url, layers, key).connect()
    for _ in range(n):
        await c.send(["rpc", "hello_world"])
    got = 0
    outcome = "all replies received"
    while got < n:
        try:
            await asyncio.wait_for(c.recv(), 3)
            got += 1
        except Exception as e:  # noqa: BLE001
            outcome = f"then connection closed ({type(e).__name__})"
            break
    fact(f"flood: sent {n} pipelined calls, got {got} replies, {outcome}")
    await c.close()


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--url", default="ws://127.0.0.1:2466/hetu/bench")
    p.add_argument("--layers", choices=("full", "msgpack"), default="full")
    p.add_argument("what", nargs="*", default=["basic"])
    a = p.parse_args()
    key = os.environ.get("HETU_AUTH_KEY", "").encode() or None
    if a.what[0] == "flood":
        asyncio.run(flood(a.url, a.layers, key, int(a.what[1])))
    else:
        asyncio.run(basic(a.url, a.layers, key))
    return 0


if __name__ == "__main__":
    sys.exit(main())
