"""Reading a workflow file's YAML, and Woodpecker's JSON schema over it (validate_pipeline_config)."""

from typing import Any, Protocol

from domain.woodpecker.workflow_lint import Parsed, SchemaFault, YamlFault


class WorkflowSyntax(Protocol):
    def parse(self, text: str) -> Parsed | YamlFault:
        """The document with where each node starts, or where and why the YAML does not read."""
        ...

    def schema_faults(self, document: Any) -> tuple[SchemaFault, ...]:
        """What Woodpecker's JSON schema finds in the document, most specific first, none for a valid one."""
        ...
