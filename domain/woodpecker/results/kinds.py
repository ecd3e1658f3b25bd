"""How the entries of a list are cleaned: a list's key -> the kind of its entries, for the lists whose
entries are cleaned like single objects. What each tool answers is in its declaration (its `answer`)."""

from collections.abc import Mapping

ENTRY_KIND: Mapping[str, str] = {
    "secrets": "secret",
    "registries": "registry",
    "forges": "forge",
    "users": "user",
    "pipelines": "pipeline",
}
