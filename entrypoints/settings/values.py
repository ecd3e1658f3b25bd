"""What the settings' fields share: exact flags, comma lists and the warnings a validator adds."""

from typing import Annotated

from pydantic import BeforeValidator, ValidationInfo

from domain.config import parse_flag


def warnings_of(info: ValidationInfo) -> list[str]:
    """The list a validator appends its warnings to (the validation context's `warnings`)."""
    context = info.context if isinstance(info.context, dict) else {}
    found = context.setdefault("warnings", [])
    assert isinstance(found, list)
    return found


def comma_list(raw: str) -> tuple[str, ...]:
    return tuple(e.strip() for e in raw.split(",") if e.strip())


def _comma_list_or_given(raw: object) -> object:
    return comma_list(raw) if isinstance(raw, str) else raw


CommaList = Annotated[tuple[str, ...], BeforeValidator(_comma_list_or_given)]


def exact_flag(name: str) -> BeforeValidator:
    """A boolean variable that is on only for the exact string `true` (behaviour.md)."""

    def parse(raw: object) -> bool:
        if isinstance(raw, bool):
            return raw
        return parse_flag(name, None if raw is None else str(raw))

    return BeforeValidator(parse)
