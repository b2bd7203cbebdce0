"""CRC-32C (Castagnoli), the checksum of every record batch, from the ``crc32c`` package's C extension.

Importing the package runs its ``__init__``, which loads its command-line entry point and looks its own
version up through ``importlib.metadata``: about 25 ms, a quarter of a command-line tool's start-up
(``python -X importtime``). ``from crc32c._crc32c import ...`` runs that ``__init__`` too, so the
extension is loaded here from the package's folder without it; where the package is laid out some
other way, the ordinary import is used.
"""

from __future__ import annotations

from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader, FileFinder, PathFinder
from importlib.util import module_from_spec
from types import ModuleType
from typing import TYPE_CHECKING

PACKAGE = "crc32c"
EXTENSION = "crc32c._crc32c"


def extension_module(search_path: list[str] | None = None) -> ModuleType | None:
    """The ``crc32c._crc32c`` extension loaded without running its package, or None where the package
    (looked for on ``search_path``, default ``sys.path``) has no such file."""
    package = PathFinder.find_spec(PACKAGE, search_path)
    folders = package.submodule_search_locations if package is not None else None
    if not folders:
        return None
    spec = FileFinder(folders[0], (ExtensionFileLoader, EXTENSION_SUFFIXES)).find_spec(EXTENSION)
    if spec is None or spec.loader is None:
        return None
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if TYPE_CHECKING:
    from crc32c import crc32c as crc32c
else:
    _module = extension_module()
    if _module is None:
        from crc32c import crc32c
    else:
        crc32c = _module.crc32c
