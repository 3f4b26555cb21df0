#!/usr/bin/env python3
"""Minimal asyncio client for HeTu 0.2.0 (wire protocol in PROTOCOL.md).

Needs: websockets (>= 13, asyncio API), msgpack, cryptography -- all in the runtime venv
(/opt/hetu/bin/python in the rootfs built by hack/hetu-runtime.sh).

  smoke:  client_asyncio.py --url ws://127.0.0.1:2466/hetu/bench [--layers full|msgpack]
              [--authkey-file FILE] smoke [--check]
  load:   client_asyncio.py --url ... load --conns 64 --seconds 10 --rpc hello_world

`smoke` calls the four benchmark RPCs and prints each reply; with --check it exits 1 unless
every reply matches the values of HeTu's published benchmark. `load` runs N connections,
each with one outstanding call at a time (replies carry no request id), for S seconds and
prints calls/s. The auth key may also come from $HETU_AUTH_KEY; it is never printed.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import json
import os
import random
import string
import sys
import time
import zlib

import msgpack
from cryptography.hazmat.primitives.asymmetric.x25519 import (
    X25519PrivateKey,
    X25519PublicKey,
)
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from websockets.asyncio.client import connect

HELLO_MAGIC = b"H2A1"
CLIENT_TO_SERVER = b"\xff"  # first nonce byte per direction
SERVER_TO_CLIENT = b"\x00"
NAME_CHARS = string.ascii_uppercase + string.digits
ID_RANGE = 30000  # rows 1..30000, as in the published benchmark


class HandshakeRejected(Exception):
    pass


class ServerError(Exception):
    """The server answered a call with ["rej", ...] or ["err", ...]."""


class HetuConnection:
    """One WebSocket connection with HeTu's packet layers, client side."""

    def __init__(self, url: str, layers: str = "full", auth_key: bytes | None = None):
        if layers not in ("full", "msgpack"):
            raise ValueError("layers must be 'full' or 'msgpack'")
        if auth_key and layers != "full":
            raise ValueError("an auth key needs the crypto layer (layers=full)")
        self.url, self.layers, self.auth_key = url, layers, auth_key
        self.ws = None
        self._compress = self._decompress = None
        self._aead = None
        self._send_n = self._recv_n = 0

    # -- handshake -------------------------------------------------------------
    def _client_hello(self, private_key: X25519PrivateKey) -> bytes:
        public = private_key.public_key().public_bytes_raw()
        if not self.auth_key:
            return public  # 32 bytes: unsigned hello
        # 92 bytes: "H2A1" + pubkey(32) + timestamp(8, zero like HeTu's SDKs) + random(16)
        #           + HMAC-SHA256(auth_key, those 60 bytes)
        payload = HELLO_MAGIC + public + bytes(8) + os.urandom(16)
        return payload + hmac.new(self.auth_key, payload, hashlib.sha256).digest()

    async def connect(self) -> "HetuConnection":
        # No permessage-deflate (HeTu's server does not negotiate it), no client pings.
        self.ws = await connect(self.url, compression=None, max_size=2**22, ping_interval=None)
        private_key = None
        hello: list[bytes] = []
        if self.layers == "full":
            private_key = X25519PrivateKey.generate()
            hello = [b"", self._client_hello(private_key)]  # zlib: b"" = use server's dict
        # The handshake frame is plain msgpack in both directions (no zlib, no crypto).
        await self.ws.send(msgpack.packb(hello))
        try:
            reply = msgpack.unpackb(await self.ws.recv(), raw=False)
        except Exception as e:  # connection closed without a reply
            raise HandshakeRejected(f"no handshake reply: {type(e).__name__}: {e}") from None
        if self.layers == "msgpack":
            if reply != []:
                raise HandshakeRejected(f"unexpected handshake reply {reply!r}")
            return self
        if not isinstance(reply, list) or len(reply) != 2:
            raise HandshakeRejected("server rejected the handshake (reply %r)" % (reply,))
        zdict, server_public = reply
        self._compress = zlib.compressobj(1, zlib.DEFLATED, zlib.MAX_WBITS, zdict=zdict)
        self._decompress = zlib.decompressobj(zlib.MAX_WBITS, zdict=zdict)
        shared = private_key.exchange(X25519PublicKey.from_public_bytes(server_public))
        self._aead = ChaCha20Poly1305(hashlib.blake2b(shared, digest_size=32).digest())
        return self

    # -- framing ---------------------------------------------------------------
    def encode(self, message: list) -> bytes:
        data = msgpack.packb(message)
        if self._compress is not None:
            data = self._compress.compress(data) + self._compress.flush(zlib.Z_SYNC_FLUSH)
        if self._aead is not None:
            self._send_n += 1
            nonce = CLIENT_TO_SERVER + self._send_n.to_bytes(11, "big")
            data = self._aead.encrypt(nonce, data, None)  # ciphertext + 16-byte tag
        return data

    def decode(self, frame: bytes | str):
        if isinstance(frame, str):  # "motd" is answered with a plain text frame
            return frame
        if self._aead is not None:
            self._recv_n += 1
            nonce = SERVER_TO_CLIENT + self._recv_n.to_bytes(11, "big")
            frame = self._aead.decrypt(nonce, frame, None)
        if self._decompress is not None:
            frame = self._decompress.decompress(frame)
        return msgpack.unpackb(frame, raw=False, strict_map_key=False)

    async def send(self, message: list) -> None:
        await self.ws.send(self.encode(message))

    async def recv(self):
        return self.decode(await self.ws.recv())

    async def call(self, name: str, *args):
        """One RPC; returns the payload of ["rsp", payload]. Replies come back in order."""
        await self.send(["rpc", name, *args])
        reply = await self.recv()
        if reply[0] == "rsp":
            return reply[1]
        raise ServerError(reply)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()


# -- smoke ---------------------------------------------------------------------
async def smoke(args, auth_key) -> int:
    conn = await HetuConnection(args.url, args.layers, auth_key).connect()
    failures = 0

    def check(label, got, ok):
        nonlocal failures
        mark = "ok" if ok else "MISMATCH"
        failures += 0 if ok else 1
        print(f"  {label:<34} -> {json.dumps(got, ensure_ascii=False):<16} {mark}")

    try:
        print(f"smoke: {args.url} layers={args.layers} auth_key={'set' if auth_key else 'none'}")
        if args.seed_rows:
            await seed_rows(args, auth_key, args.seed_rows)
            print(f"  seeded rows id=number=1..{args.seed_rows}")
        got = await conn.call("hello_world")
        check("hello_world()", got, got == ["世界收到"])
        row_id = random.randint(1, args.seed_rows or ID_RANGE)  # a seeded row if any
        got = await conn.call("just_get", row_id)
        check(f"just_get({row_id})", got, got == [0])
        n = random.randint(1, ID_RANGE)
        got = await conn.call("upsert", n)
        check(f"upsert({n})", got, is_retries(got))
        name = "".join(random.choices(NAME_CHARS, k=3))
        got = await conn.call("exchange_data", name, n)
        check(f'exchange_data("{name}", {n})', got, is_retries(got))
        # A call of an endpoint that does not exist: the server closes the connection
        # (release mode) or answers ["err", name, reason] (DEBUG).
        try:
            bad = await conn.call("no_such_endpoint")
            print(f"  no_such_endpoint()                  -> {bad!r} (unexpected rsp)")
            failures += 1
        except ServerError as e:
            print(f"  no_such_endpoint()                  -> {e.args[0]!r} (debug mode)")
        except Exception as e:  # noqa: BLE001
            print(f"  no_such_endpoint()                  -> connection closed ({type(e).__name__})")
    finally:
        await conn.close()
    print("smoke: " + ("PASS" if failures == 0 else f"FAIL ({failures} mismatches)"))
    return 0 if failures == 0 or not args.check else 1


async def seed_rows(args, auth_key, rows: int, conns: int = 4) -> None:
    """Create rows id=number=1..rows with the app's seed() helper, 1000 per call."""
    chunks = list(range(1, rows + 1, 1000))

    async def one(chunk_list):
        c = await HetuConnection(args.url, args.layers, auth_key).connect()
        try:
            for first in chunk_list:
                count = min(1000, rows - first + 1)
                got = await c.call("seed", first, count)
                if not (isinstance(got, list) and len(got) == 1 and 0 <= got[0] <= count):
                    raise SystemExit(f"seed({first}, {count}) returned {got!r}")
        finally:
            await c.close()

    await asyncio.gather(*(one(chunks[i::conns]) for i in range(conns)))


def is_retries(got) -> bool:
    return isinstance(got, list) and len(got) == 1 and isinstance(got[0], int) and got[0] >= 0


# -- load ----------------------------------------------------------------------
def make_args(rpc: str):
    if rpc == "hello_world":
        return lambda: ()
    if rpc in ("just_get", "upsert"):
        return lambda: (random.randint(1, ID_RANGE),)
    if rpc == "exchange_data":
        return lambda: ("".join(random.choices(NAME_CHARS, k=3)), random.randint(1, ID_RANGE))
    raise SystemExit(f"unknown --rpc {rpc}")


async def load(args, auth_key) -> int:
    gen_args = make_args(args.rpc)
    conns = await asyncio.gather(
        *(HetuConnection(args.url, args.layers, auth_key).connect() for _ in range(args.conns))
    )
    counts = [0] * args.conns
    values: dict[str, int] = {}
    errors = 0
    stop_at = 0.0

    async def worker(i: int, conn: HetuConnection):
        nonlocal errors
        while time.perf_counter() < stop_at:
            try:
                got = await conn.call(args.rpc, *gen_args())
            except Exception:  # noqa: BLE001
                errors += 1
                return
            counts[i] += 1
            key = str(got[0]) if isinstance(got, list) and got else str(got)
            values[key] = values.get(key, 0) + 1

    # warm-up, then the measured window
    stop_at = time.perf_counter() + args.warmup
    await asyncio.gather(*(worker(i, c) for i, c in enumerate(conns)))
    counts = [0] * args.conns
    values.clear()
    start = time.perf_counter()
    stop_at = start + args.seconds
    await asyncio.gather(*(worker(i, c) for i, c in enumerate(conns)))
    elapsed = time.perf_counter() - start
    await asyncio.gather(*(c.close() for c in conns), return_exceptions=True)
    total = sum(counts)
    top = sorted(values.items(), key=lambda kv: -kv[1])[:5]
    print(
        json.dumps(
            {
                "rpc": args.rpc,
                "layers": args.layers,
                "conns": args.conns,
                "seconds": round(elapsed, 3),
                "calls": total,
                "calls_per_s": round(total / elapsed, 1),
                "errors": errors,
                "return_values": dict(top),
            },
            ensure_ascii=False,
        )
    )
    return 0 if errors == 0 else 1


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", default="ws://127.0.0.1:2466/hetu/bench")
    p.add_argument("--layers", choices=("full", "msgpack"), default="full")
    p.add_argument("--authkey-file", help="file holding the crypto auth key (else $HETU_AUTH_KEY)")
    sub = p.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("smoke", help="call the four RPCs once and print the replies")
    s.add_argument("--check", action="store_true", help="exit 1 on any unexpected reply")
    s.add_argument("--seed-rows", type=int, default=0, metavar="N",
                   help="first create rows id=number=1..N via seed() (30000 = the published "
                        "benchmark's range; slow: ~0.2-5 ms per row)")
    ld = sub.add_parser("load", help="closed-loop load: N connections for S seconds")
    ld.add_argument("--conns", type=int, default=16)
    ld.add_argument("--seconds", type=float, default=10)
    ld.add_argument("--warmup", type=float, default=1)
    ld.add_argument("--rpc", default="hello_world",
                    choices=("hello_world", "just_get", "upsert", "exchange_data"))
    args = p.parse_args()

    key = os.environ.get("HETU_AUTH_KEY", "")
    if args.authkey_file:
        with open(args.authkey_file, encoding="utf-8") as f:
            key = f.read().strip("\r\n")
    auth_key = key.encode() if key else None
    try:
        import uvloop  # in the runtime venv (HeTu depends on it)
        runner = uvloop.run
    except ImportError:
        runner = asyncio.run
    try:
        return runner(smoke(args, auth_key) if args.mode == "smoke" else load(args, auth_key))
    except HandshakeRejected as e:
        print(f"error: handshake rejected by {args.url}: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: cannot connect to {args.url}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
