"""The microbenchmark sources (kernels/micro/*.cu) compile for sm_90 with nvcc and with
NVRTC (the runtime's compiler: no standard headers), in every -D variant the suites use, and
their timed loops survive optimisation (SASS, where nvdisasm is available)."""

import re
import subprocess

import pytest

from gemmmodel import KERNELS_DIR
from gemmmodel.calibrate.micro_compute import FMA_ILPS, FMA_PER_ITER, SMEM_BITS
from gemmmodel.errors import GemmModelError

MICRO = KERNELS_DIR / "micro"
VARIANTS = ([("fma.cu", {"ILP": i}) for i in FMA_ILPS]
            + [("smem.cu", {"VEC": b // 32}) for b in SMEM_BITS]
            + [("smem.cu", {"VEC": 1, "CP_BYTES": 16})]
            + [("smem.cu", {"VEC": 1, "CP_ROW_LANES": 2}),
               ("smem.cu", {"VEC": 1, "CP_ROW_LANES": 8, "CP_BYTES": 16})]
            + [(name, {}) for name in ("bandwidth.cu", "latency.cu", "launch.cu",
                                       "placement.cu")])


def _ids(variants):
    return [f"{src}-{'-'.join(f'{k}{v}' for k, v in d.items()) or 'plain'}" for src, d in variants]


@pytest.fixture(scope="module")
def cubins(tmp_path_factory):
    """nvcc -arch=sm_90 -cubin of every variant, run in parallel: {id: (path, returncode,
    stderr)}; None where nvcc is missing (tests then call require_tool)."""
    import shutil

    if shutil.which("nvcc") is None:
        return None
    out_dir = tmp_path_factory.mktemp("cubins")
    procs = {}
    for vid, (src, defines) in zip(_ids(VARIANTS), VARIANTS):
        out = out_dir / f"{vid}.cubin"
        cmd = ["nvcc", "-arch=sm_90", "-cubin", "-o", str(out), str(MICRO / src)]
        cmd += [f"-D{k}={v}" for k, v in defines.items()]
        procs[vid] = (out, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                            text=True))
    return {vid: (out, proc.wait(timeout=600), proc.stderr.read())
            for vid, (out, proc) in procs.items()}


def _cubin(cubins, vid):
    out, code, err = cubins[vid]
    assert code == 0, err
    return out


@pytest.mark.compiler
@pytest.mark.parametrize("src, defines", VARIANTS, ids=_ids(VARIANTS))
def test_nvcc_compiles_for_sm90(require_tool, cubins, src, defines):
    require_tool("nvcc")
    data = _cubin(cubins, _ids([(src, defines)])[0]).read_bytes()
    entries = re.findall(r'extern "C" __global__ void (\w+)', (MICRO / src).read_text())
    if "CP_ROW_LANES" not in defines:   # the rows kernels exist only with their lane count
        entries = [e for e in entries if e not in ROW_ENTRIES]
    assert entries and all(e.encode() in data for e in entries)


#: smem.cu's kernels of tools/device/cp_async_rows.py, compiled only with -DCP_ROW_LANES.
ROW_ENTRIES = ("mb_cp_async_rows", "mb_ldg_rows")


@pytest.mark.compiler
@pytest.mark.parametrize("nbytes", [4, 16])
def test_rows_kernels_issue_eight_accesses_of_their_width_per_iteration(require_tool, tmp_path,
                                                                         nbytes):
    """The timed loop of mb_cp_async_rows holds 8 cp.async of CP_BYTES and mb_ldg_rows 8
    ld.global.ca.v4 (PTX; SASS needs nvdisasm), and no two of a thread's loads repeat an
    address within an iteration (ptxas merged them when they did: session 54)."""
    require_tool("nvcc")
    out = tmp_path / "rows.ptx"
    subprocess.run(["nvcc", "-arch=sm_90", "-ptx", "-o", str(out), str(MICRO / "smem.cu"),
                    "-DVEC=1", "-DCP_ROW_LANES=2", f"-DCP_BYTES={nbytes}"], check=True)
    ptx = out.read_text()
    copy = ptx.split(".entry mb_cp_async_rows")[1].split(".entry ")[0]
    assert len(re.findall(rf"cp\.async\.c[ag]\.shared\.global \[[^]]+\], \[[^]]+\], {nbytes};",
                          copy)) >= 8
    loads = ptx.split(".entry mb_ldg_rows")[1].split(".entry ")[0]
    found = re.findall(r"ld\.global\.ca\.v4\.f32 \{[^}]+\}, \[(%rd\d+)\]", loads)
    assert len(found) >= 8
    assert len(set(found[:8])) == 8      # eight distinct address registers


@pytest.mark.parametrize("src, defines", VARIANTS, ids=_ids(VARIANTS))
def test_nvrtc_compiles_with_the_runtime_options(src, defines):
    try:
        from gemmmodel.runtime.cuda import import_cuda, nvrtc_compile, nvrtc_version

        nvrtc = import_cuda()[1]
        nvrtc_version(nvrtc)
    except (GemmModelError, RuntimeError, OSError) as err:
        pytest.skip(f"NVRTC not usable here: {type(err).__name__}: {str(err)[:120]}")
    from gemmmodel.runtime.base import compile_options

    opts = compile_options("-arch=sm_90", defines, [MICRO, KERNELS_DIR])
    cubin, log = nvrtc_compile((MICRO / src).read_text(), src, opts, nvrtc)
    assert cubin[:4] == b"\x7fELF"
    assert "warning" not in log.lower(), log


def _sass(cubins, src, defines):
    from gemmmodel.compile import tools

    if not tools.has_tool("nvdisasm"):
        pytest.skip(tools.INSTALL_HINTS["nvdisasm"])
    cubin = _cubin(cubins, _ids([(src, defines)])[0])
    proc = subprocess.run([str(tools.find_tool("nvdisasm")), "-c", str(cubin)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_fma_loop_keeps_every_fma(require_tool, cubins):
    require_tool("nvcc")
    sass = _sass(cubins, "fma.cu", {"ILP": 8})
    assert len(re.findall(r"\bFFMA\b", sass)) >= FMA_PER_ITER


@pytest.mark.parametrize("vec, op", [(1, r"LDS\s"), (2, r"LDS\.64"), (4, r"LDS\.128")])
def test_smem_loop_is_shared_loads_and_adds_only(require_tool, cubins, vec, op):
    require_tool("nvcc")
    sass = _sass(cubins, "smem.cu", {"VEC": vec})
    for entry in ("mb_smem_stride", "mb_smem_pattern"):
        body = sass.split(f"\n.text.{entry}:")[1].split("\n.text.")[0]
        assert len(re.findall(op, body)) >= 32, entry
        # no local memory traffic; the pattern kernel reads its lane table once (1 LDG)
        assert not re.search(r"\b(LDL|STL)\b", body), entry
        assert len(re.findall(r"\bLDG\b", body)) == (entry == "mb_smem_pattern"), entry


@pytest.mark.parametrize("nbytes", [4, 16])
def test_cp_async_loop_issues_only_async_copies(require_tool, cubins, nbytes):
    require_tool("nvcc")
    sass = _sass(cubins, "smem.cu", {"VEC": 1, **({"CP_BYTES": 16} if nbytes == 16 else {})})
    body = sass.split("\n.text.mb_cp_async:")[1].split("\n.text.")[0]
    copies = re.findall(r"LDGSTS(\.\w+)*", body)
    assert len(copies) >= 8
    # `@!PT LDS RZ, [RZ]` lines are never-executed padding that ptxas puts after LDGSTS
    live = "\n".join(line for line in body.splitlines() if "@!PT" not in line)
    assert not re.search(r"\b(LDL|STL|LDS|STS)\b", live)


def test_chases_are_one_dependent_load_per_step(require_tool, cubins):
    require_tool("nvcc")
    sass = _sass(cubins, "latency.cu", {})
    body = sass.split("\n.text.mb_smem_chase:")[1].split("\n.text.")[0]
    assert re.search(r"LDS R(\d+), \[R\1\]", body)        # ld.shared a <- [a]
    chase = sass.split("\n.text.mb_chase:")[1].split("\n.text.")[0]
    # explicit global loads (a generic LD would add its address-space check to the time)
    assert re.search(r"LDG\.E\.64 R(\d+), desc\[UR\d+\]\[R\1\.64\]", chase)
    assert not re.search(r"\bLD\.E", chase)
