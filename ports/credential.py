"""A forge's access token as the application passes it around: opaque, never printed."""


class Credential:
    """A personal access token whose value never shows in repr, str or logs."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Credential(***)"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Credential) and other._value == self._value

    def __hash__(self) -> int:
        return hash(("Credential", self._value))
