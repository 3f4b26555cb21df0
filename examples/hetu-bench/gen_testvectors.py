#!/usr/bin/env python3
"""Write testvectors.json: deterministic HeTu 0.2.0 frames for unit-testing other clients.

  hack/hetu-client.sh --script gen_testvectors.py > examples/hetu-bench/testvectors.json

Fixed X25519 keys, auth key and hello randomness; the frames are built exactly as
client_asyncio.py builds them (that client is verified against the real server). Compressed
bytes come from CPython's zlib (level 1): another deflate implementation may compress
differently, so test *decoding* of these frames byte-exactly, and test your encoder by round trip.
"""

import hashlib
import hmac
import json
import sys
import zlib

import msgpack
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

ZDICT = b"Counter\nNickname\n_version\nid\nlabel\nname\nnumber\nupdt"  # app.py's, from the handshake
CLIENT_PRIV = bytes(range(1, 33))
SERVER_PRIV = bytes(range(101, 133))
AUTH_KEY = b"benchrun-test-auth-key-0123456789"
HELLO_RANDOM = bytes(range(200, 216))


def nonce(direction: int, n: int) -> bytes:
    return bytes([direction]) + n.to_bytes(11, "big")


def main() -> int:
    cpriv = X25519PrivateKey.from_private_bytes(CLIENT_PRIV)
    spriv = X25519PrivateKey.from_private_bytes(SERVER_PRIV)
    cpub = cpriv.public_key().public_bytes_raw()
    spub = spriv.public_key().public_bytes_raw()
    shared = cpriv.exchange(spriv.public_key())
    assert shared == spriv.exchange(cpriv.public_key())
    session_key = hashlib.blake2b(shared, digest_size=32).digest()
    aead = ChaCha20Poly1305(session_key)

    payload = b"H2A1" + cpub + bytes(8) + HELLO_RANDOM
    signed_hello = payload + hmac.new(AUTH_KEY, payload, hashlib.sha256).digest()
    assert len(signed_hello) == 92

    out = {
        "description": __doc__.strip().splitlines()[0],
        "x25519": {
            "client_private": CLIENT_PRIV.hex(), "client_public": cpub.hex(),
            "server_private": SERVER_PRIV.hex(), "server_public": spub.hex(),
            "shared_secret": shared.hex(),
            "session_key_blake2b256": session_key.hex(),
        },
        "handshake": {
            "client_frame_unsigned": msgpack.packb([b"", cpub]).hex(),
            "auth_key_utf8": AUTH_KEY.decode(),
            "signed_hello": signed_hello.hex(),
            "client_frame_signed": msgpack.packb([b"", signed_hello]).hex(),
            "server_frame": msgpack.packb([ZDICT, spub]).hex(),
            "msgpack_only_client_frame": msgpack.packb([]).hex(),
            "msgpack_only_server_frame": msgpack.packb([]).hex(),
            "zlib_dict": ZDICT.hex(),
        },
        "client_to_server": [],
        "server_to_client": [],
    }

    for key, direction, messages in (
        ("client_to_server", 0xFF, [["rpc", "hello_world"], ["rpc", "just_get", 1],
                                     ["rpc", "exchange_data", "AB1", 30000]]),
        ("server_to_client", 0x00, [["rsp", ["世界收到"]], ["rsp", [0]], ["rsp", [2]]]),
    ):
        comp = zlib.compressobj(1, zlib.DEFLATED, zlib.MAX_WBITS, zdict=ZDICT)
        for i, msg in enumerate(messages, start=1):
            packed = msgpack.packb(msg)
            z = comp.compress(packed) + comp.flush(zlib.Z_SYNC_FLUSH)
            n = nonce(direction, i)
            out[key].append({
                "message": msg, "msgpack": packed.hex(), "zlib": z.hex(),
                "nonce": n.hex(), "wire_full": aead.encrypt(n, z, None).hex(),
                "wire_msgpack_only": packed.hex(),
            })
    json.dump(out, sys.stdout, ensure_ascii=False, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
