"""docs/guide.md's prompt commands, run as written by the pinned Inspector CLI against the sandbox:
`prompts/list` lists the three prompts and `prompts/get` answers one of our texts."""

import json
import re
import shlex
from pathlib import Path

import pytest

from sandbox.server import Sandbox
from tests.docs.test_client_commands import fill, home, inspector, installed, run

__all__ = ["home"]  # the fixture, used by name below

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide.md"
pytestmark = [pytest.mark.node, pytest.mark.slow]


def prompt_commands() -> list[list[str]]:
    """The guide's Inspector commands that reach prompts, continuation lines joined."""
    found = []
    for block in re.findall(r"^```sh\n(.*?)^```", GUIDE.read_text(encoding="utf-8"), flags=re.M | re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line)
            if words[:2] == ["npx", "@modelcontextprotocol/inspector"] and any(
                w.startswith("prompts/") for w in words
            ):
                found.append([fill(w) for w in words])
    return found


def test_the_guide_shows_how_to_list_and_get_a_prompt() -> None:
    assert sorted(w[w.index("--method") + 1] for w in prompt_commands()) == ["prompts/get", "prompts/list"]


@installed("inspector")
def test_the_inspector_lists_and_gets_the_prompts_as_the_guide_shows(home: Path, sandbox: Sandbox) -> None:
    answers = {}
    for words in prompt_commands():
        done = run(home, inspector(words, sandbox))
        assert done.returncode == 0, done.stderr
        answers[words[words.index("--method") + 1]] = json.loads(done.stdout)
    assert [p["name"] for p in answers["prompts/list"]["prompts"]] == [
        "why_did_it_fail",
        "is_it_flaky",
        "blocked_pipelines",
    ]
    (message,) = answers["prompts/get"]["messages"]
    assert message["role"] == "user"
    assert message["content"]["text"].startswith("Find out why pipeline 2 of repository acme/web failed")
