"""GPU specs: TOML data in spec/data/, loaded into frozen GpuSpec dataclasses in SI units.

    load_spec("mi100")            # by file stem or alias
    load_spec("my_gpu.toml")      # or a user's file (may `inherits = "gfx906"`)
    list_specs()                  # shipped spec names
    check_spec_file(path)         # validate a file; SpecError names file and key path
"""

from gemmmodel.spec.loader import DATA_DIR, aliases, check_spec_file, list_specs, load_spec, resolve
from gemmmodel.spec.model import GpuSpec, Quantity
from gemmmodel.spec.schema import FIELDS

__all__ = ["DATA_DIR", "FIELDS", "GpuSpec", "Quantity", "aliases", "check_spec_file",
           "list_specs", "load_spec", "resolve"]
