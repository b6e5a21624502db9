"""Map JSON pointers back to YAML line:col, composed lazily for files with findings.

Fast loading keeps no node tree; when a file has findings, this module composes
it once more (libyaml, no construction) and walks the node tree iteratively.
"""

from __future__ import annotations

from functools import lru_cache

import yaml

from kb.findings import pointer_join, pointer_parts

_Composer: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
Position = tuple[int, int]


@lru_cache(maxsize=256)
def pointer_positions(text: str) -> dict[str, Position]:
    """Every JSON pointer of the document -> the 1-based (line, col) of its key or item."""
    try:
        root = yaml.compose(text, Loader=_Composer)
    except (yaml.YAMLError, RecursionError, MemoryError):
        return {}
    if root is None:
        return {}
    positions: dict[str, Position] = {"": (root.start_mark.line + 1, root.start_mark.column + 1)}
    stack: list[tuple[str, yaml.Node]] = [("", root)]
    seen: set[int] = set()
    while stack:
        pointer, node = stack.pop()
        if id(node) in seen:  # aliases: each node is walked once
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                child = pointer_join(pointer, key_node.value)
                positions.setdefault(
                    child, (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
                )
                stack.append((child, value_node))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                child = pointer_join(pointer, index)
                positions[child] = (item.start_mark.line + 1, item.start_mark.column + 1)
                stack.append((child, item))
    return positions


def locate(text: str, pointer: str) -> Position:
    """The position of `pointer`, or of its nearest existing ancestor."""
    positions = pointer_positions(text)
    parts = pointer_parts(pointer)
    while parts:
        candidate = pointer_join("", *parts)
        if candidate in positions:
            return positions[candidate]
        parts.pop()
    return positions.get("", (1, 1))


# YAML's one-letter escapes and the character each stands for (\x, \u, \U carry a code point)
_ESCAPES = {
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_CODE_POINT = {"x": 2, "u": 4, "U": 8}


def locate_in_string(text: str, pointer: str, offset: int) -> Position:
    """The line:col of character `offset` of the string at `pointer` (its key's if unknown).

    Every non-blank character of a YAML scalar's value comes from one character of
    its source (an escape in a double-quoted one, `''` in a single-quoted one, from
    two or more), in order: the offset's non-blank character is found by counting.
    """
    node = _scalar_node(text, pointer)
    if node is None or not isinstance(node.value, str) or not 0 <= offset <= len(node.value):
        return locate(text, pointer)
    wanted = sum(1 for c in node.value[:offset] if not c.isspace())
    index = _source_index(text, node, wanted)
    if index is None:
        return locate(text, pointer)
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


@lru_cache(maxsize=8)
def _composed(text: str) -> yaml.Node | None:
    try:
        return yaml.compose(text, Loader=_Composer)
    except (yaml.YAMLError, RecursionError, MemoryError):
        return None


def _scalar_node(text: str, pointer: str) -> yaml.ScalarNode | None:
    node = _composed(text)
    for part in pointer_parts(pointer):
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if k.value == part), None)
        elif isinstance(node, yaml.SequenceNode) and part.isdigit() and int(part) < len(node.value):
            node = node.value[int(part)]
        else:
            return None
    return node if isinstance(node, yaml.ScalarNode) else None


def _escape(text: str, index: int) -> tuple[int, str]:
    """(source characters, produced text) of the escape whose letter is at `index`."""
    letter = text[index]
    if letter in _CODE_POINT:
        digits = text[index + 1 : index + 1 + _CODE_POINT[letter]]
        try:
            return 2 + len(digits), chr(int(digits, 16))
        except (ValueError, OverflowError):
            return 2, letter
    if letter in "\r\n":  # an escaped line break: the break and the next line's indent vanish
        return 2, ""
    return 2, _ESCAPES.get(letter, letter)


def _source_index(text: str, node: yaml.ScalarNode, wanted: int) -> int | None:
    """The index in `text` of the scalar's non-blank character number `wanted` (0-based)."""
    index, end = node.start_mark.index, node.end_mark.index
    style = node.style
    if style in ("|", ">"):
        index = text.find("\n", index, end) + 1  # past the indicator line
        if index == 0:
            return None
    elif style in ('"', "'"):
        index += 1
    seen = -1
    while index < end:
        char = text[index]
        step, counts = 1, not char.isspace()
        if style == '"' and char == "\\" and index + 1 < end:
            step, produced = _escape(text, index + 1)
            counts = bool(produced) and not produced.isspace()  # an escaped break produces nothing
        elif style == "'" and char == "'" and text[index + 1 : index + 2] == "'":
            step = 2
        if counts:
            seen += 1
            if seen == wanted:
                return index
        index += step
    return None
