"""Safe YAML: libyaml's C parser with a constructor that trusts nothing.

Only the JSON-like tags (map, seq, str, int, float, bool, null) construct;
anything else (`!!python/...`, `!!binary`, `!!set`, custom `!tags`) is recorded
as a problem and replaced by None. Duplicate keys are recorded, not silently
overwritten. Dates stay strings (the timestamp resolver is removed) so that
JSON Schema sees what the author wrote.

Most records are plain: string keys that do not repeat, JSON-like scalars, no
anchors, no tags beyond the core ones. Such a document is built from libyaml's
node tree by `_plain` in one tight pass, bypassing PyYAML's general constructor
(its per-node bookkeeping for recursive objects, generators and merge keys);
anything else, and any scalar the fast pass is not sure of, goes through
KbLoader's full constructor from the start, so both give the same data and the
same problems (tests/yaml/test_yamlsafe_fast.py holds them equal on generated YAML).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    _BaseLoader = yaml.SafeLoader  # CSafeLoader has the same interface
else:
    _BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_ALLOWED_TAGS = {
    "tag:yaml.org,2002:map",
    "tag:yaml.org,2002:seq",
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
}


@dataclass(frozen=True)
class YamlProblem:
    """Something the loader refused, with a 1-based position."""

    kind: str  # "duplicate-key" | "tag" | "key" | "number"
    line: int
    col: int
    detail: str


class KbLoader(_BaseLoader):
    """CSafeLoader (or SafeLoader without libyaml) that records problems instead of trusting."""

    yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
    }

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.problems: list[YamlProblem] = []

    # kb adds no path resolvers, so which tag a node gets depends on neither its parent
    # nor its place: the two calls the composer makes around every node go to C no-ops
    # (their results are ignored), not to Python methods that return at once.
    descend_resolver: Any = {}.get
    ascend_resolver: Any = tuple

    def resolve(self, kind: type[yaml.Node], value: Any, implicit: Any) -> str:
        """The tag of an untagged node: what BaseResolver.resolve answers, faster.

        Without path resolvers (kb adds none; asserted below) a quoted scalar is a
        string, a collection gets its kind's default tag, and a plain scalar's tag is a
        function of its text alone: remembered for short texts, which records repeat
        (keys, units, `true`, small numbers).
        """
        if kind is _SCALAR_NODE:
            if not implicit[0]:
                return _STR_TAG
            tag = _RESOLVED.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]
                if len(value) <= _INTERN_MAX and len(_RESOLVED) < _RESOLVED_MAX:
                    _RESOLVED[value] = tag
            return tag
        return _MAP_TAG if kind is _MAPPING_NODE else _SEQ_TAG

    def get_single_data(self) -> Any:
        """The one document of the stream: built by `_plain` when it is plain, else in full."""
        node = self.get_single_node()
        if node is None:
            return None
        if self.plain_depth:
            try:
                data = _plain(node, self.plain_depth)
            except _NotPlain:
                pass
            else:
                self.built_plain = True
                return data
        return self.construct_document(node)

    plain_depth = 0  # > 0: try `_plain` with at most this many levels of nesting
    built_plain = False  # `_plain` built the document (so it nests no deeper than plain_depth)

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict[Any, Any]:
        if not isinstance(node, yaml.MappingNode):  # `!!map [1]` or `!!map text`
            problem = f"expected a mapping node, but found {getattr(node, 'id', 'node')}"
            raise yaml.constructor.ConstructorError(None, None, problem, node.start_mark)
        if _plain_unique_keys(node):
            return super().construct_mapping(node, deep=deep)
        if any(key_node.tag == _MERGE_TAG for key_node, _ in node.value):
            node = self._without_merges(node)
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                self._problem("tag", key_node, "mapping keys must be plain scalars")
                continue
            if not isinstance(key, str):
                self._problem("key", key_node, _non_string_key(key_node, key))
            if key in seen:
                first = seen[key].start_mark.line + 1
                self._problem(
                    "duplicate-key", key_node, f"duplicate key {key!r} (first at line {first})"
                )
            else:
                seen[key] = key_node
        return super().construct_mapping(node, deep=deep)

    def _without_merges(self, node: yaml.MappingNode) -> yaml.MappingNode:
        """The mapping without its merge keys, each one reported once (LD006)."""
        kept = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                self._problem("tag", key_node, _MERGE_WORDS)
            else:
                kept.append((key_node, value_node))
        return yaml.MappingNode(node.tag, kept, node.start_mark, node.end_mark, node.flow_style)

    def construct_refused(self, node: yaml.Node) -> None:
        self._problem("tag", node, f"tag {node.tag!r} is not allowed in records")
        return None

    def _problem(self, kind: str, node: yaml.Node, detail: str) -> None:
        mark = node.start_mark
        self.problems.append(YamlProblem(kind, mark.line + 1, mark.column + 1, detail))


_STR_TAG = "tag:yaml.org,2002:str"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_MERGE_WORDS = (
    "merge key '<<' is not allowed in records: write out the keys it would merge "
    "(a record says each field where it is read)"
)


def _non_string_key(node: yaml.Node, key: object) -> str:
    """Why a key that YAML reads as null, a number or a boolean is not a record key."""
    written = node.value if isinstance(node, yaml.ScalarNode) and node.value else "~"
    read_as = "null" if key is None else type(key).__name__
    if isinstance(key, bool):
        read_as = "a boolean"
    elif isinstance(key, (int, float)):
        read_as = "a number"
    return f"key {written!r} is read as {read_as}, not text: record keys are strings"


def _plain_unique_keys(node: yaml.MappingNode) -> bool:
    """True when every key is a plain string scalar and none repeats (the usual case).

    Such keys construct to their text, so nothing needs constructing twice to
    find duplicates; anything else takes the full check.
    """
    keys = []
    for key_node, _ in node.value:
        if key_node.tag != _STR_TAG or not isinstance(key_node, yaml.ScalarNode):
            return False
        keys.append(key_node.value)
    return len(set(keys)) == len(keys)


# Only these constructors can raise on a well-formed node (`!!int ''`, `!!float abc`);
# str, null, seq and map raise ConstructorError themselves, so they stay unwrapped (fast).
_FALLIBLE_TAGS = {"tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool"}


# What each fallible tag reads, in kb's words (never the library's exception text).
_EXPECTED = {
    "int": "a whole number (digits, or 0x, 0o, 0b followed by digits)",
    "float": "a number (such as 1.5, 3.0e+9, .inf or .nan)",
    "bool": "true or false",
}


def _guarded(constructor: Any) -> Any:
    """Wrap a constructor so its value errors become located YAML errors, not exceptions.

    PyYAML's own constructors raise IndexError for `!!int ''` and ValueError for
    `!!float abc`; as a ConstructorError they carry the node's position (LD004).
    """

    def construct(loader: KbLoader, node: yaml.Node) -> Any:
        try:
            return constructor(loader, node)
        except (ValueError, IndexError, KeyError, TypeError, OverflowError):
            kind = node.tag.rsplit(":", 1)[-1]
            expected = _EXPECTED.get(kind, "a value of that type")
            problem = f"!!{kind} {node.value!r} is not {expected}"
            raise yaml.constructor.ConstructorError(None, None, problem, node.start_mark) from None

    return construct


_INTERN_MAX = 48


def _construct_str(loader: KbLoader, node: yaml.Node) -> str:
    """A string scalar; short ones interned.

    The keys and units every record repeats (`value`, `unit`, `basis`, `GB/s`, ...)
    become one object each instead of one per use: 10,000 loaded records take
    113 MB instead of 179 MB.
    """
    # PyYAML's stubs take only scalar and mapping nodes; at run time it refuses any other
    # node itself, with a located ConstructorError (`!!str [1]`: LD004).
    value: str = loader.construct_scalar(node)  # type: ignore[arg-type]
    return sys.intern(value) if len(value) <= _INTERN_MAX else value


_SCALAR_NODE, _MAPPING_NODE = yaml.ScalarNode, yaml.MappingNode
_RESOLVED: dict[str, str] = {}  # plain scalar text -> its tag (KbLoader.resolve)
_RESOLVED_MAX = 100_000
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_BOOL_TAG = "tag:yaml.org,2002:bool"
_NULL_TAG = "tag:yaml.org,2002:null"
_BOOLEANS = dict(yaml.constructor.SafeConstructor.bool_values)
_intern = sys.intern


class _NotPlain(Exception):
    """The document holds something only KbLoader's full constructor handles."""


def _plain(node: yaml.Node, room: int) -> Any:
    """The data under `node` as KbLoader's constructors build it, for a plain document.

    Plain: mappings of string keys that do not repeat, sequences, and scalars whose
    value is certain (`_plain_scalar`), nesting at most `room` levels; the stream has
    no anchors (the caller checks), so no node is shared. Raises _NotPlain at anything
    else, having recorded nothing: the caller then constructs the document in full.
    """
    kind = node.__class__
    if kind is yaml.ScalarNode:
        value: str = node.value
        if node.tag == _STR_TAG:
            return _intern(value) if len(value) <= _INTERN_MAX else value
        return _plain_scalar(node.tag, value)
    if room <= 0:
        raise _NotPlain
    if kind is yaml.MappingNode and node.tag == _MAP_TAG:
        built: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag != _STR_TAG or key_node.__class__ is not yaml.ScalarNode:
                raise _NotPlain
            key = key_node.value
            if len(key) <= _INTERN_MAX:
                key = _intern(key)
            if value_node.tag == _STR_TAG and value_node.__class__ is yaml.ScalarNode:
                text = value_node.value
                built[key] = _intern(text) if len(text) <= _INTERN_MAX else text
            else:
                built[key] = _plain(value_node, room - 1)
        if len(built) != len(node.value):  # a repeated key
            raise _NotPlain
        return built
    if kind is yaml.SequenceNode and node.tag == _SEQ_TAG:
        return [_plain(child, room - 1) for child in node.value]
    raise _NotPlain


def _plain_scalar(tag: str, value: str) -> Any:
    """A non-string scalar as KbLoader constructs it, when that is certain; else _NotPlain.

    Ints: ASCII digits without a leading zero (int() reads them as PyYAML does; signs,
    `0x`, `0o`, octal and sexagesimal forms take the full constructor). Floats:
    whatever Python's float() reads is what PyYAML's constructor computes (it strips
    underscores and a sign, lowercases, then calls float()), and the value must be
    finite and within MAX_MAGNITUDE (else it is a problem the full constructor records).
    """
    if tag == _INT_TAG:
        if value.isdigit() and value.isascii() and len(value) <= 300:
            if value[0] != "0" or len(value) == 1:
                return int(value)
        raise _NotPlain
    if tag == _FLOAT_TAG:
        try:
            number = float(value)
        except ValueError:
            raise _NotPlain from None
        if math.isfinite(number) and abs(number) <= MAX_MAGNITUDE:
            return number
        raise _NotPlain
    if tag == _BOOL_TAG:
        truth = _BOOLEANS.get(value.lower())
        if truth is None:
            raise _NotPlain
        return truth
    if tag == _NULL_TAG:
        return None
    raise _NotPlain


KbLoader.yaml_constructors = {
    tag: _guarded(ctor) if tag in _FALLIBLE_TAGS else ctor
    for tag, ctor in _BaseLoader.yaml_constructors.items()
    if tag in _ALLOWED_TAGS
}
KbLoader.yaml_constructors[_STR_TAG] = _construct_str

# JSON has no infinity or NaN, and no figure is beyond 1e300 (kb's expressions stop there
# too): such a number is refused where it is written, not met later as a cascade.
MAX_MAGNITUDE = 1e300


def _bounded(constructor: Any) -> Any:
    def construct(loader: KbLoader, node: yaml.Node) -> Any:
        value = constructor(loader, node)
        if isinstance(value, float) and not math.isfinite(value):
            loader._problem("number", node, f"{node.value} is not a finite number")
        elif isinstance(value, (int, float)) and abs(value) > MAX_MAGNITUDE:
            loader._problem("number", node, f"{node.value[:40]} is beyond 1e300")
        return value

    return construct


for _tag in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float"):
    KbLoader.yaml_constructors[_tag] = _bounded(KbLoader.yaml_constructors[_tag])
if KbLoader.yaml_path_resolvers:  # KbLoader.resolve and its no-op descend/ascend_resolver
    raise ImportError("kb.yamlsafe: KbLoader's fast resolving assumes no path resolvers")
KbLoader.add_constructor(None, KbLoader.construct_refused)
KbLoader.add_multi_constructor("", lambda loader, suffix, node: loader.construct_refused(node))
KbLoader.add_multi_constructor("!", lambda loader, suffix, node: loader.construct_refused(node))


def load_yaml(text: str) -> tuple[Any, list[YamlProblem]]:
    """Parse one YAML document safely; raises yaml.YAMLError on a syntax error."""
    data, problems, _ = load_record_yaml(text, PLAIN_DEPTH)
    return data, problems


PLAIN_DEPTH = 64  # the nesting `load_yaml` lets the fast pass build


def load_record_yaml(text: str, max_depth: int) -> tuple[Any, list[YamlProblem], bool]:
    """load_yaml, and whether the document is known to nest at most `max_depth` levels.

    True when the fast pass built it (it gives up past `max_depth`), so the caller
    need not walk the document again to measure it.
    """
    loader = KbLoader(text)
    loader.plain_depth = max_depth if "&" not in text else 0  # anchors: nodes may be shared
    try:
        data = loader.get_single_data()
    finally:
        loader.dispose()
    return data, loader.problems, loader.built_plain


def max_nesting(text: str, limit: int | None = None) -> int:
    """Nesting depth from the parser's event stream (iterative: safe for any depth).

    With `limit`, stops as soon as the depth exceeds it: libyaml's scanner does
    work proportional to the open flow levels for every token, so walking a
    200,000-deep list to its end takes minutes; stopping at limit + 1 is instant.
    """
    depth = deepest = 0
    for event in yaml.parse(text, Loader=_BaseLoader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            deepest = max(deepest, depth)
            if limit is not None and deepest > limit:
                return deepest
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
    return deepest
