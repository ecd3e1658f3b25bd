"""The use cases carry facts and decide; the domain writes every sentence a person or a model reads (ADR 0031).

A sentence written in a use case is a second owner for the words: the next change to a message
would have to find it there as well as in the domain. The only prose allowed in
`ports/use_cases/` is a docstring, a comment, or the text of a programming error (an exception
that only a bug in this server raises, never shown as a tool result).
"""

import ast
from pathlib import Path

import pytest

USE_CASES = Path(__file__).resolve().parents[2] / "ports" / "use_cases"
# Raised only by a bug in this server (a missing port, a catalogue whose plan sends nothing):
# their text is for the developer reading the traceback.
PROGRAMMING_ERRORS = {"RuntimeError", "TypeError", "AssertionError"}
WORDS = 4  # a string of this many words or more is a sentence, not a key or a format fragment


def _docstrings(tree: ast.AST) -> set[int]:
    owners = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, owners)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def _raises(tree: ast.AST, names: set[str]) -> set[int]:
    inside: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Raise)
            and isinstance(node.exc, ast.Call)
            and isinstance(node.exc.func, ast.Name)
            and node.exc.func.id in names
        ):
            inside.update(id(child) for child in ast.walk(node.exc))
    return inside


def _in_programming_errors(tree: ast.AST) -> set[int]:
    # A built-in ValueError is a programming error only in a constructor (arguments a caller of the
    # class got wrong): during a call it would reach a result as "the answer could not be read".
    constructors = (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    return _raises(tree, PROGRAMMING_ERRORS).union(*(_raises(c, {"ValueError"}) for c in constructors))


def sentences(source: str) -> list[tuple[int, str]]:
    """The sentences a module writes outside docstrings and programming errors: (line, text)."""
    tree = ast.parse(source)
    allowed = _docstrings(tree) | _in_programming_errors(tree)
    found = []
    for node in ast.walk(tree):
        if id(node) in allowed:
            continue
        if isinstance(node, ast.JoinedStr):
            text = "".join(
                v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)
            )
            for part in node.values:  # its pieces are not sentences of their own
                allowed.add(id(part))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        else:
            continue
        if len(text.split()) >= WORDS:
            found.append((node.lineno, text))
    return found


@pytest.mark.parametrize("module", sorted(USE_CASES.glob("*.py")), ids=lambda p: p.name)
def test_a_use_case_writes_no_sentence_of_its_own(module: Path) -> None:
    assert sentences(module.read_text()) == [], f"{module.name}: move these words into the domain"


def test_the_check_finds_a_sentence_in_a_result_and_in_an_f_string() -> None:
    # The check above must be able to fail: the shapes of words the use cases used to write.
    source = '''
"""A docstring may say anything at all here."""
def run(tool):
    """So may this one, at any length."""
    if tool is None:
        raise RuntimeError(f"{tool} asked for a confirmation; resource tools never do")
    note = "The health check failed: Woodpecker cannot reach its database."
    return f"Pipeline {tool} is running after {1} s of at most {2} s.", note, "kind_only"
'''
    assert sorted(line for line, _ in sentences(source)) == [7, 8]
