"""What a YAML file read from a user may expand to: recipes, ``--set`` values and run folders'
files are refused when their aliases blow them up."""

from __future__ import annotations

from typing import Any

#: the most values a YAML file may expand to through its aliases (a recipe holds a few hundred)
MAX_YAML_VALUES = 100_000


def check_expansion(value: Any, where: str, limit: int = MAX_YAML_VALUES) -> Any:
    """``value`` (read from YAML), unless its aliases (``*name``) expand it to more than ``limit``
    values: a "billion laughs" file is a few hundred bytes read, and gigabytes written out. Counted
    once per shared object, so the check is as cheap as the file is short.

    Raises:
        ValueError: naming ``where``.
    """
    sizes: dict[int, int] = {}

    def size(item: Any) -> int:
        if not isinstance(item, (dict, list)):
            return 1
        if id(item) not in sizes:
            sizes[id(item)] = 0  # a cycle counts as nothing more
            children = item.values() if isinstance(item, dict) else item
            sizes[id(item)] = min(limit + 1, 1 + sum(size(child) for child in children))
        return sizes[id(item)]

    if size(value) > limit:
        raise ValueError(f"{where}: its aliases (*name) expand it to more than {limit:,} values; "
                         "write the values out instead")
    return value
