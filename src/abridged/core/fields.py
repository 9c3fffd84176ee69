"""Settings fields checked by pydantic, with one error shape: ``SettingError(name, value, range)``.

A settings dataclass declares each field's range in its annotation (``Annotated[int, Ge(1)]``,
the aliases below) and calls ``check_fields(self)`` in ``__post_init__``; the flat
``abridged.runtime.Settings`` model uses the same aliases. Validation is strict (``True`` is not
an integer, ``"3"`` is not a number) and the range a message states is rendered from the same
annotation that is checked, so the two cannot drift apart.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Example:
...     share: Ratio = 0.5
...     def __post_init__(self) -> None:
...         check_fields(self)
>>> Example(share=2)  # doctest: +ELLIPSIS
Traceback (most recent call last):
abridged.errors.SettingError: setting share=2 is invalid: expected a number in (0, 1] ...
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import types
import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, TypeAlias, Union, get_args, get_origin

from annotated_types import Ge, Gt, Interval, Le, Lt
from pydantic import ConfigDict, PlainValidator, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from abridged.errors import SettingError

__all__ = [
    "Flag",
    "NonNegative",
    "Positive",
    "Ratio",
    "Share",
    "ValueCheck",
    "check_fields",
    "check_value",
    "describe",
]

STRICT = ConfigDict(strict=True, arbitrary_types_allowed=True)

Ratio: TypeAlias = Annotated[float, Interval(gt=0, le=1)]
"""A share in (0, 1]."""
Share: TypeAlias = Annotated[float, Interval(ge=0, le=1)]
"""A share in [0, 1]."""
NonNegative: TypeAlias = Annotated[int, Ge(0)]
"""An integer >= 0."""
Positive: TypeAlias = Annotated[int, Ge(1)]
"""An integer >= 1."""
Flag: TypeAlias = bool
"""True or False."""


@functools.cache
def _adapter(annotation: Any) -> TypeAdapter[Any]:
    return TypeAdapter(_instances(annotation), config=STRICT)


def _instances(annotation: Any) -> Any:
    """``annotation`` with each dataclass in it checked by ``isinstance`` alone (a settings
    object nested in another was checked when it was made)."""
    if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
        return Annotated[object, PlainValidator(functools.partial(_instance, annotation))]
    if get_origin(annotation) in (Union, types.UnionType):
        return functools.reduce(operator.or_, [_instances(a) for a in get_args(annotation)])
    return annotation


def _instance(cls: type, value: object) -> object:
    if not isinstance(value, cls):
        raise ValueError(f"not a {cls.__name__}")
    return value


class ValueCheck:
    """A check of one value against ``annotation``, built once (a hot path calls it often).

    >>> ValueCheck(Positive)("max_steps", 0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    abridged.errors.SettingError: setting max_steps=0 is invalid: expected an integer >= 1 ...
    """

    __slots__ = ("_annotation", "_validate")

    def __init__(self, annotation: Any) -> None:
        self._annotation = annotation
        self._validate = _adapter(annotation).validate_python

    def __call__(self, name: str, value: object) -> None:
        try:
            self._validate(value)
        except ValidationError as exc:
            raise _element_error(name, value, self._annotation, exc.errors()[0]["loc"]) from None


def check_value(name: str, value: object, annotation: Any) -> None:
    """Raise ``SettingError(name, value, <range of annotation>)`` unless ``value`` fits."""
    ValueCheck(annotation)(name, value)


class _FieldsCheck:
    """The check of every init field of one dataclass: one pydantic call over all of them."""

    __slots__ = ("annotations", "names", "validate")

    def __init__(self, cls: type) -> None:
        hints = typing.get_type_hints(cls, include_extras=True)
        self.names = tuple(f.name for f in dataclasses.fields(cls) if f.init)
        self.annotations = {name: hints[name] for name in self.names}
        make: Any = TypedDict  # the functional form, with a name known only now
        shape = make(
            f"{cls.__name__}Fields", {n: _instances(a) for n, a in self.annotations.items()}
        )
        shape.__pydantic_config__ = STRICT  # a TypedDict carries its own config
        self.validate: Callable[[object], object] = TypeAdapter(shape).validate_python


_CHECKS: dict[type, _FieldsCheck] = {}


def check_fields(settings: object) -> None:
    """Check every field of the dataclass instance ``settings`` against its annotation."""
    cls = type(settings)
    check = _CHECKS.get(cls)
    if check is None:
        check = _CHECKS[cls] = _FieldsCheck(cls)
    try:
        check.validate({name: getattr(settings, name) for name in check.names})
    except ValidationError as exc:
        loc = exc.errors()[0]["loc"]
        name = str(loc[0])
        value = getattr(settings, name)
        raise _element_error(name, value, check.annotations[name], loc[1:]) from None


def _element_error(
    name: str, value: object, annotation: Any, loc: tuple[int | str, ...]
) -> SettingError:
    """The error naming the offending entry of a mapping (``tool_policy['bash']``), else the
    whole value."""
    mapping = next((a for a in (annotation, *get_args(annotation)) if _is_mapping(a)), None)
    if mapping is None or not loc or not isinstance(value, Mapping):
        return SettingError(name, value, describe(annotation))
    key_type, value_type = get_args(mapping) or (Any, Any)
    if len(loc) > 1 and loc[1] == "[key]":
        return SettingError(f"{name} key", loc[0], describe(key_type))
    return SettingError(f"{name}[{loc[0]!r}]", value.get(loc[0]), describe(value_type))


def _is_mapping(annotation: Any) -> bool:
    origin = get_origin(annotation)
    return isinstance(origin, type) and issubclass(origin, Mapping)


# -- the range, for people ------------------------------------------------------------------------


def _bounds(metadata: tuple[Any, ...]) -> tuple[Any, Any, Any, Any]:
    ge = gt = le = lt = None
    for item in metadata:
        if isinstance(item, Interval):
            ge, gt, le, lt = item.ge, item.gt, item.le, item.lt
        elif isinstance(item, Ge):
            ge = item.ge
        elif isinstance(item, Gt):
            gt = item.gt
        elif isinstance(item, Le):
            le = item.le
        elif isinstance(item, Lt):
            lt = item.lt
    return ge, gt, le, lt


def _number(kind: str, metadata: tuple[Any, ...]) -> str:
    ge, gt, le, lt = _bounds(metadata)
    low, high = (ge, gt)[ge is None], (le, lt)[le is None]
    if low is not None and high is not None:
        left, right = "[("[ge is None], "])"[le is None]
        return f"{kind} in {left}{low}, {high}{right}"
    if low is not None:
        return f"{kind} {'>=' if ge is not None else '>'} {low}"
    if high is not None:
        return f"{kind} {'<=' if le is not None else '<'} {high}"
    return kind


def describe(annotation: Any) -> str:
    """The values ``annotation`` accepts, for an error message.

    >>> describe(Positive | None), describe(Ratio), describe(Literal["a", "b"])
    ('None or an integer >= 1', 'a number in (0, 1]', 'one of a, b')
    """
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        base, metadata = args[0], tuple(args[1:])
        if base is int:
            return _number("an integer", metadata)
        if base is float:
            return _number("a number", metadata)
        return describe(base)
    if origin in (Union, types.UnionType):
        parts = [describe(a) for a in args if a is not type(None)]
        text = " or ".join(parts)
        return f"None or {text}" if type(None) in args else text
    if origin is Literal:
        return "one of " + ", ".join(str(a) for a in args)
    if _is_mapping(annotation):
        return f"a mapping of {describe(args[0])} to {describe(args[1])}" if args else "a mapping"
    if annotation is Any:
        return "any value"
    return {bool: "True or False", int: "an integer", float: "a number", str: "a string"}.get(
        annotation, f"a {getattr(annotation, '__name__', annotation)}"
    )
