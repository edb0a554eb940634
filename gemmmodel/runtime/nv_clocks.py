"""Clocks and driver of an NVIDIA GPU for the provenance of every measurement
(runtime.cuda.CudaRuntime.clocks): NVML where pynvml is installed, else nvidia-smi."""

from __future__ import annotations

import subprocess
from typing import Any


def nvml_clocks(bus_id: str) -> dict[str, Any] | None:
    """Current and maximum SM / memory clocks (Hz) and the driver of the GPU at PCI
    `bus_id` through NVML (pynvml); None without it or on an NVML error."""
    try:
        import pynvml  # from the nvidia-ml-py package
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
        try:
            handle = pynvml.nvmlDeviceGetHandleByPciBusId(bus_id.encode())
        except pynvml.NVMLError:
            handle = pynvml.nvmlDeviceGetHandleByPciBusId(("0000" + bus_id).encode())
        mhz = 1e6
        driver = pynvml.nvmlSystemGetDriverVersion()
        return {
            "sm_clock_hz": pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM) * mhz,
            "mem_clock_hz": pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_MEM) * mhz,
            "sm_clock_max_hz": pynvml.nvmlDeviceGetMaxClockInfo(handle,
                                                                pynvml.NVML_CLOCK_SM) * mhz,
            "mem_clock_max_hz": pynvml.nvmlDeviceGetMaxClockInfo(handle,
                                                                 pynvml.NVML_CLOCK_MEM) * mhz,
            "driver": driver.decode() if isinstance(driver, bytes) else str(driver),
            "clock_source": "nvml",
        }
    except (pynvml.NVMLError, OSError, AttributeError):  # fall back to nvidia-smi
        return None


def smi_clocks(bus_id: str) -> dict[str, Any] | None:
    """As nvml_clocks, from `nvidia-smi --query-gpu`; None where it is missing or fails."""
    fields = "pci.bus_id,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,driver_version"
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={fields}",
                              "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.splitlines():
        cols = [c.strip() for c in line.split(",")]
        if len(cols) == 6 and cols[0].lower().endswith(bus_id.lower()[-7:]):
            def hz(text: str) -> float | None:
                try:
                    return float(text) * 1e6
                except ValueError:
                    return None
            return {"sm_clock_hz": hz(cols[1]), "mem_clock_hz": hz(cols[2]),
                    "sm_clock_max_hz": hz(cols[3]), "mem_clock_max_hz": hz(cols[4]),
                    "driver": cols[5], "clock_source": "nvidia-smi"}
    return None
