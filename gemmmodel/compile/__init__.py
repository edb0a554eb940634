"""Offline compile facts: resources and instruction mixes from hipcc / nvcc / NVRTC.

`compile_facts(source, spec_or_target, defines, entry)` compiles one source for one target;
`load_compile_facts()` reads the committed table calibration/compile_facts.csv for the
catalogue, so the model can run without any compiler.
"""

from gemmmodel.compile.driver import compile_facts, resolve_target
from gemmmodel.compile.facts import MIX_KEYS, KernelFacts
from gemmmodel.compile.table import facts_for, load_compile_facts

__all__ = [
           "MIX_KEYS",
           "KernelFacts",
           "compile_facts",
           "facts_for",
           "load_compile_facts",
           "resolve_target",
]
