"""gemmmodel: explain and predict the performance of GPU SGEMM kernels.

The package follows the pipeline spec -> kernel -> compile facts -> measurements ->
model terms -> prediction -> explain / predict / report (see docs/design.md).
"""

from pathlib import Path

__version__ = "0.1.0"

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_DIR = PACKAGE_DIR.parent
KERNELS_DIR = PROJECT_DIR / "kernels"
CALIBRATION_DIR = PROJECT_DIR / "calibration"
REPORTS_DIR = PROJECT_DIR / "reports"
