"""What OAuth mode adds to each request: verifying the access token and opening the person's linked token.

`python -m bench.oauth_gate [--reads N] [--redis URL]` measures, in this process, the CPU
(`time.process_time`) and wall time per operation of: `JwtTokenVerifier.check` on an RS256
token (keys already cached), `SealedLinkedTokens.token` over the in-memory backend, the
same over Redis, and a bare Redis GET of the same value (the floor of the Redis read). Redis
is `--redis`, else `WOODPECKER_MCP_TEST_REDIS_URL`, else a redis-server started from PATH on a
free port (skipped, with a line, where there is none). The figures are for the decision in
ADR 0023 on whether the gate's per-request vault read needs a cache.
"""

import argparse
import asyncio
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any

import jwt
import redis.asyncio
from cryptography.hazmat.primitives.asymmetric import rsa

from adapters.linked_token_vault import MemoryBackend, RedisBackend, SealedLinkedTokens, TokenCipher
from adapters.oauth_resource import IssuerKeys, JwtTokenVerifier
from ports.linked_tokens import LinkedToken
from ports.woodpecker import Credential

ISSUER = "https://idp.example.test/realms/team"
RESOURCE = "https://mcp.example.test/mcp"


async def per_operation(op: Callable[[], Awaitable[Any]], n: int) -> dict[str, float]:
    """Median wall and mean CPU per call of `op` over `n` calls in blocks of 50, in microseconds."""
    for _ in range(min(n, 50)):
        await op()
    walls: list[float] = []
    cpu_start = time.process_time()
    for _ in range(max(1, n // 50)):
        start = time.perf_counter()
        for _ in range(50):
            await op()
        walls.append((time.perf_counter() - start) / 50)
    cpu = (time.process_time() - cpu_start) / (max(1, n // 50) * 50)
    return {"wall_us_median": statistics.median(walls) * 1e6, "cpu_us": cpu * 1e6}


def verifier_with_local_keys() -> tuple[JwtTokenVerifier, str]:
    """A verifier whose issuer keys are served from memory (no HTTP), and a good token for it."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = dict(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key(), as_dict=True), kid="k1", use="sig")

    async def fetch(url: str) -> Any:
        if url.endswith("/jwks"):
            return {"keys": [jwk]}
        return {"issuer": ISSUER, "jwks_uri": ISSUER + "/jwks"}

    keys = IssuerKeys(ISSUER, fetch=fetch)
    now = int(time.time())
    claims = {
        "iss": ISSUER,
        "sub": "alice",
        "aud": RESOURCE,
        "exp": now + 3600,
        "iat": now,
        "scope": "woodpecker",
    }
    token = jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k1"})
    return JwtTokenVerifier([keys], resource=RESOURCE, required_scopes=["woodpecker"]), token


def start_redis(workdir: str) -> tuple[str, subprocess.Popen[bytes]] | None:
    binary = shutil.which("redis-server")
    if binary is None:
        return None
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return f"redis://127.0.0.1:{port}/0", process


async def ready(url: str) -> None:
    client = redis.asyncio.Redis.from_url(url)
    try:
        for _ in range(200):
            try:
                await client.ping()
                return
            except (redis.exceptions.RedisError, OSError):
                await asyncio.sleep(0.05)
        raise RuntimeError("redis-server did not answer")
    finally:
        await client.aclose()


async def run(reads: int, redis_url: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    verifier, token = verifier_with_local_keys()
    out["jwt_check_rs256"] = await per_operation(lambda: verifier.check(token), reads)
    cipher = TokenCipher([secrets.token_bytes(32)], os.urandom)
    linked = LinkedToken(Credential(secrets.token_hex(32)), "alice", time.time())
    memory = SealedLinkedTokens(MemoryBackend(), cipher)
    await memory.store("p" * 32, linked)
    out["vault_read_memory"] = await per_operation(lambda: memory.token("p" * 32), reads)
    if redis_url is None:
        out["redis"] = (
            "skipped: no Redis (set --redis or WOODPECKER_MCP_TEST_REDIS_URL, or put redis-server on PATH)"
        )
        return out
    await ready(redis_url)
    prefix = f"bench-oauth-gate:{secrets.token_hex(4)}:"
    backend = RedisBackend(redis_url, prefix=prefix)
    shared = SealedLinkedTokens(backend, cipher)
    raw = redis.asyncio.Redis.from_url(redis_url, decode_responses=True)
    try:
        await shared.store("p" * 32, linked)
        out["vault_read_redis"] = await per_operation(lambda: shared.token("p" * 32), reads)
        key = next(iter([k async for k in raw.scan_iter(match=prefix + "*")]))
        out["redis_get_floor"] = await per_operation(lambda: raw.get(key), reads)
        await raw.delete(key)
    finally:
        await backend.aclose()
        await raw.aclose()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=int, default=2000)
    parser.add_argument("--redis", default=os.environ.get("WOODPECKER_MCP_TEST_REDIS_URL"))
    args = parser.parse_args(argv)
    started = None
    with tempfile.TemporaryDirectory() as workdir:
        url = args.redis
        if url is None and (started := start_redis(workdir)) is not None:
            url = started[0]
        try:
            results = asyncio.run(run(args.reads, url))
        finally:
            if started is not None:
                started[1].terminate()
                started[1].wait(timeout=10)
    print(f"per request in OAuth mode ({args.reads} each; load average {os.getloadavg()[0]:.1f})")
    print(f"  {'operation':<40}{'wall, median':>14}{'CPU':>12}")
    for name, figures in results.items():
        if isinstance(figures, str):
            print(f"  {name}: {figures}")
            continue
        print(f"  {name:<40}{figures['wall_us_median']:>11.0f} us{figures['cpu_us']:>9.0f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
