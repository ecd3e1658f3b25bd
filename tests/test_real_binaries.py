"""The real suite's binaries come from the shared archives, digest-checked and unpacked once."""

import hashlib
import io
import tarfile
from pathlib import Path

import pytest

from tests.real.binaries import BinaryError, normalise, unpacked, versions


def _archive(folder: Path, version: str, payload: bytes) -> str:
    name = f"woodpecker-v{version}-linux-amd64.tar.xz"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:xz") as tar:
        for member in ("server", "agent"):
            info = tarfile.TarInfo(member)
            info.size = len(payload)
            info.mode = 0o755
            tar.addfile(info, io.BytesIO(payload))
    (folder / name).write_bytes(buffer.getvalue())
    return f"| `{name}` | v{version} | `x` | `{hashlib.sha256(buffer.getvalue()).hexdigest()}` |\n"


def test_newest_by_default_digest_checked_and_cached(tmp_path: Path) -> None:
    bins, cache = tmp_path / "bin", tmp_path / "cache"
    bins.mkdir()
    rows = _archive(bins, "3.11.0", b"old") + _archive(bins, "3.17.0", b"new")
    (bins / "README.md").write_text(rows)
    assert versions(bins) == ["3.11.0", "3.17.0"]
    version, folder = unpacked(bins, cache=cache)
    assert version == "3.17.0" and (folder / "server").read_bytes() == b"new"
    assert unpacked(bins, "v3.11.0", cache=cache)[1] != folder
    assert folder.parent == cache


def test_a_tampered_archive_is_refused(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text(_archive(tmp_path, "3.17.0", b"x"))
    (tmp_path / "woodpecker-v3.17.0-linux-amd64.tar.xz").write_bytes(b"tampered")
    with pytest.raises(BinaryError, match="does not match"):
        unpacked(tmp_path, cache=tmp_path / "cache")


def test_bad_version_is_named() -> None:
    with pytest.raises(BinaryError, match="X.Y.Z"):
        normalise("latest")


def test_harness_falls_back_to_the_shared_archives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.real.harness import BIN_DIR_ENV, bin_dir

    monkeypatch.delenv(BIN_DIR_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "README.md").write_text(_archive(tmp_path, "3.17.0", b"new"))
    folder = bin_dir(tmp_path)
    assert folder is not None and (folder / "agent").read_bytes() == b"new"
