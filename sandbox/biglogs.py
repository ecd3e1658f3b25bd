"""Huge step logs generated lazily: deterministic lines, streamed as a JSON array, never held in memory."""

import base64
from collections.abc import Iterator
from dataclasses import dataclass

# Realistic build output; each template renders to roughly 70-95 characters.
_TEMPLATES = (
    "[{t:>8.3f}s] ok   forge.example.org/acme/web/pkg/module{m:03d}    {d:.3f}s  coverage: {c:.1f}% of statements",
    "[{t:>8.3f}s] === RUN   TestHandler{m:03d}/case_{i:07d}_returns_the_expected_payload",
    "[{t:>8.3f}s] --- PASS: TestHandler{m:03d}/case_{i:07d} ({d:.2f}s)",
    "[{t:>8.3f}s] npm info run build@1.{m}.0 postinstall node_modules/esbuild node install.js",
    "[{t:>8.3f}s] #{m} [builder {k}/9] RUN go build -trimpath -o /out/app ./cmd/app  # line {i}",
    "[{t:>8.3f}s] Compiling serde_derive v1.0.{m} (registry+https://example.org/crates-index)",
    "[{t:>8.3f}s] WARN cache miss for key build-{i:08x}-{m:04x}; downloading 48.2 MiB from mirror",
)
CHUNK_ENTRIES = 2000
# Line texts repeat with this (prime) period, so their base64 forms are computed once per log.
_PERIOD = 1009


@dataclass(frozen=True)
class BigLog:
    """A step whose log has `lines` entries; entry ids start at `first_id`, times increase from 0."""

    step_id: int
    lines: int
    first_id: int
    # Lines whose text is given rather than generated, e.g. a test failure deep in the log.
    overrides: tuple[tuple[int, str], ...] = ()

    def line_text(self, i: int) -> str:
        """The text of line `i` (it depends on i modulo a period, like a build that loops over modules)."""
        for number, text in self.overrides:
            if number == i:
                return text
        j = i % _PERIOD
        return _TEMPLATES[j % len(_TEMPLATES)].format(
            t=j * 0.0125, m=(j * 7919) % 997, i=j, d=(j % 500) / 100, c=50 + (j % 500) / 10, k=1 + j % 9
        )

    def entry_json(self, i: int, data: str | None = None) -> str:
        if data is None:
            data = base64.b64encode(self.line_text(i).encode("utf-8")).decode("ascii")
        # 80 lines a second: `time` is seconds since the step started and never decreases.
        return (
            f'{{"id":{self.first_id + i},"step_id":{self.step_id},"time":{i // 80},'
            f'"line":{i},"data":"{data}","type":0}}'
        )

    def stream(self) -> Iterator[bytes]:
        """The whole JSON array, in chunks of CHUNK_ENTRIES entries; only the period's texts are kept."""
        encoded = [
            base64.b64encode(self.line_text(j).encode("utf-8")).decode("ascii")
            for j in range(min(_PERIOD, self.lines))
        ]
        given = {i: base64.b64encode(text.encode("utf-8")).decode("ascii") for i, text in self.overrides}
        yield b"["
        for start in range(0, self.lines, CHUNK_ENTRIES):
            end = min(start + CHUNK_ENTRIES, self.lines)
            body = ",".join(
                self.entry_json(i, given.get(i) or encoded[i % _PERIOD]) for i in range(start, end)
            )
            yield (body if start == 0 else "," + body).encode("ascii")
        yield b"]"
