"""Typed errors. Library code raises these; only the CLI turns them into exit codes."""


class GemmModelError(Exception):
    """Base class: the CLI prints the message on one line and exits with code 2."""

    exit_code = 2


class SpecError(GemmModelError):
    """A GPU spec file is invalid; `key_path` names the offending key (e.g. 'clock_hz.unit')."""

    def __init__(self, message: str, key_path: str = "", file: str = ""):
        self.key_path = key_path
        self.file = file
        where = f"{file}: " if file else ""
        key = f"{key_path}: " if key_path else ""
        super().__init__(f"{where}{key}{message}")


class KernelNotFound(GemmModelError):
    """An unknown kernel id, alias or template config name."""


class BadArgument(GemmModelError):
    """A bad command-line or API argument (size, shape, option value)."""


class ToolMissing(GemmModelError):
    """A compiler or profiler is not installed; the message gives the install command."""


class NoGpu(GemmModelError):
    """No GPU runtime could be found on this machine."""


class InvalidConfig(GemmModelError):
    """A template tile configuration was rejected before compiling."""

    def __init__(self, name: str, reasons: list[str]):
        self.reasons = list(reasons)
        super().__init__(f"invalid tile config {name}: " + "; ".join(self.reasons))


class CompileError(GemmModelError):
    """The compiler ran but failed; the message carries the first error lines."""
