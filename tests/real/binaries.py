"""Find the prebuilt Woodpecker binaries for one version: an archive in ../shared/woodpecker/bin/,
its sha256 checked against that folder's README, unpacked once into a cache folder keyed by the digest
(outside the repository). Nothing here builds Woodpecker or copies it into the repository."""

import hashlib
import os
import re
import tarfile
import tempfile
from pathlib import Path

ARCHIVE = re.compile(r"woodpecker-v(\d+\.\d+\.\d+)-linux-amd64\.tar\.xz")
README_ROW = re.compile(r"`(woodpecker-v\d+\.\d+\.\d+-linux-amd64\.tar\.xz)`.*`([0-9a-f]{64})`")


class BinaryError(RuntimeError):
    """The archive is missing, unlisted in the README, or its digest does not match."""


def normalise(version: str) -> str:
    value = version.removeprefix("v")
    if not re.fullmatch(r"\d+\.\d+\.\d+", value):
        raise BinaryError(f"version {version!r} is not X.Y.Z (for example 3.17.0 or v3.17.0)")
    return value


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def versions(bin_dir: Path) -> list[str]:
    """The versions whose archives are present, oldest first."""
    found = [m.group(1) for p in bin_dir.glob("*.tar.xz") if (m := ARCHIVE.fullmatch(p.name))]
    return sorted(found, key=_key)


def expected_digests(bin_dir: Path) -> dict[str, str]:
    readme = bin_dir / "README.md"
    if not readme.is_file():
        raise BinaryError(f"{readme} is missing: it lists each archive's sha256")
    return {m.group(1): m.group(2) for m in README_ROW.finditer(readme.read_text())}


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "woodpecker-ci-mcp" / "real-woodpecker"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def unpacked(bin_dir: Path, version: str | None = None, cache: Path | None = None) -> tuple[str, Path]:
    """(version, folder holding `server` and `agent`); the newest version present by default."""
    present = versions(bin_dir)
    if not present:
        raise BinaryError(f"no woodpecker-vX.Y.Z-linux-amd64.tar.xz in {bin_dir}")
    chosen = normalise(version) if version else present[-1]
    if chosen not in present:
        raise BinaryError(f"no archive for {chosen} in {bin_dir}; present: {', '.join(present)}")
    name = f"woodpecker-v{chosen}-linux-amd64.tar.xz"
    want = expected_digests(bin_dir).get(name)
    if want is None:
        raise BinaryError(f"{name} is not listed with a sha256 in {bin_dir / 'README.md'}")
    got = _sha256(bin_dir / name)
    if got != want:
        raise BinaryError(f"{name}: sha256 {got} does not match the README's {want}")
    target = (cache or cache_root()) / want
    if (target / "server").is_file() and (target / "agent").is_file():
        return chosen, target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent))
    with tarfile.open(bin_dir / name, "r:xz") as archive:
        archive.extractall(staging, filter="data")
    if not (staging / "server").is_file() or not (staging / "agent").is_file():
        raise BinaryError(f"{name} does not hold both `server` and `agent`")
    try:
        staging.rename(target)
    except OSError:
        if not (target / "server").is_file():
            raise
    return chosen, target
