"""Loading the shipped specs, names and aliases, inheritance, validation errors, caching."""

import dataclasses
import os
import re

import pytest

from gemmmodel.errors import SpecError
from gemmmodel.spec import (
    DATA_DIR,
    FIELDS,
    GpuSpec,
    check_spec_file,
    list_specs,
    load_spec,
    resolve,
)

SPECS = list_specs()


def test_the_brief_specs_are_shipped():
    for name in ("gfx900", "gfx906", "mi50", "mi60", "gfx906-64cu-1700", "gfx908",
                 "mi100-1472", "gfx90a", "mi250", "sm_61", "sm_80", "sm_90", "h200"):
        assert name in SPECS


@pytest.mark.parametrize("name", SPECS)
def test_every_shipped_spec_loads_and_checks(name):
    spec = load_spec(name)
    assert check_spec_file(DATA_DIR / f"{name}.toml").name == name
    for fld in FIELDS:
        if spec.vendor in fld.vendors and (fld.required or fld.name in spec.quantities):
            q = spec.quantity(fld.name)
            assert q.source.strip(), f"{name}.{fld.name} has no source"
            assert getattr(spec, fld.name) == q.value
        else:
            with pytest.raises(SpecError):
                spec.quantity(fld.name)
    assert spec.wave_size == (64 if spec.vendor == "amd" else 32)


def test_schema_matches_the_dataclass():
    names = {f.name for f in dataclasses.fields(GpuSpec)}
    assert {f.name for f in FIELDS} <= names


@pytest.mark.parametrize("typed, stem", [
    ("mi100", "gfx908"), ("MI100", "gfx908"), ("h100", "sm_90"), ("h200", "h200"),
    ("a100", "sm_80"), ("gtx1050", "sm_61"), ("gfx906", "gfx906"), ("mi250x", "gfx90a"),
    ("mi250", "mi250"), ("vega-fe", "gfx900"), ("mi100-seed", "mi100-1472"),
    ("device-66a1", "gfx906-64cu-1700"), ("a100-80gb", "a100-80gb")])
def test_names_and_aliases(typed, stem):
    assert load_spec(typed).name == stem


def test_unknown_name_suggests_close_ones():
    with pytest.raises(SpecError, match="did you mean.*mi100"):
        load_spec("mi10O")


@pytest.mark.parametrize("name, attr, expected_tflops", [
    # ARCH-FACTS gives both the per-clock rates and these peaks: they must agree.
    ("mi100", "fp32_peak_flops", 23.1), ("mi100", "matrix_fp32_peak_flops", 46.1),
    ("h100", "fp32_peak_flops", 66.9), ("h200", "fp32_peak_flops", 66.9),
    ("a100", "fp32_peak_flops", 19.5), ("gtx1050", "fp32_peak_flops", 1.86)])
def test_peaks_agree_with_arch_facts(name, attr, expected_tflops):
    assert getattr(load_spec(name), attr) / 1e12 == pytest.approx(expected_tflops, rel=0.005)


def test_inheritance_overrides_and_keeps():
    mi50 = load_spec("mi50")
    assert mi50.compute_units == 60 and mi50.quantity("compute_units").origin.endswith("mi50.toml")
    assert mi50.lds_bytes_per_cu == 65536
    assert mi50.quantity("lds_bytes_per_cu").origin.endswith("gfx906.toml")
    assert mi50.quantity("clock_hz").assumption          # disputed MI50 clock
    assert mi50.arch == "gfx906" and mi50.inherits == "gfx906"
    mi250 = load_spec("mi250")                             # mi250 -> gfx90a -> gfx908 -> gfx906
    assert (mi250.compute_units, mi250.max_waves_per_simd, mi250.agpr_mode) == (104, 8, "unified")
    assert (mi250.regs_per_lane_file, mi250.reg_granule, mi250.lds_granule_bytes) == (512, 8, 512)
    assert mi250.aliases == ("mi250-gcd",)                 # aliases are not inherited


def test_clock_relative_quantities_use_the_childs_clock():
    gtx = load_spec("gtx1050")                             # 600 cycles given in sm_80.toml
    assert gtx.dram_latency_s == pytest.approx(600 / 1.455e9)
    h200 = load_spec("h200")                               # 1.4 G blocks/s at 1980 MHz
    assert h200.spawn_blocks_per_clk == pytest.approx(1.4e9 / 1.98e9)
    assert not h200.quantity("spawn_blocks_per_clk").assumption
    assert load_spec("h100").quantity("spawn_blocks_per_clk").assumption


def test_quantity_carries_unit_and_source():
    q = load_spec("gfx906-64cu-1700").quantity("clock_hz")
    assert (q.value, q.unit, q.given) == (1.7e9, "Hz", "1700 MHz")
    assert "66a1" in q.source and q.formatted() == "1700 MHz"
    assert load_spec("h100").quantity("lds_bytes_per_cu").formatted() == "228 KiB"


def test_lds_phases_are_lane_groups():
    amd = load_spec("gfx908").lds_phases
    assert amd["b32"] == (tuple(range(32)), tuple(range(32, 64)))
    assert amd["b128"][0] == (0, 1, 2, 3, 20, 21, 22, 23)
    assert len(amd["b128_write"]) == 8
    nv = load_spec("h100").lds_phases
    assert [len(nv[w]) for w in ("b32", "b64", "b128")] == [1, 2, 4]
    assert load_spec("gfx906").quantity("lds_phases").assumption


def _child(tmp_path, body, name="child.toml", inherits="gfx906"):
    path = tmp_path / name
    head = f'title = "test"\ninherits = "{inherits}"\n' if inherits else 'title = "test"\n'
    path.write_text(head + body)
    return path


def test_user_file_inherits_a_shipped_spec(tmp_path):
    path = _child(tmp_path, 'clock_hz = { value = 1.5, unit = "GHz", source = "my board" }\n')
    spec = load_spec(str(path))
    assert spec.clock_hz == 1.5e9 and spec.compute_units == 64 and spec.name == "child"


def test_user_file_inherits_a_sibling_file(tmp_path):
    _child(tmp_path, 'compute_units = { value = 10, unit = "CUs", source = "s" }\n', "base.toml")
    path = _child(tmp_path, "", "leaf.toml", inherits="base")
    assert load_spec(path).compute_units == 10


def test_cache_reloads_an_edited_file(tmp_path):
    path = _child(tmp_path, 'compute_units = { value = 10, unit = "CUs", source = "s" }\n')
    first = load_spec(path)
    assert load_spec(path) is first
    path.write_text(path.read_text().replace("value = 10", "value = 12"))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert load_spec(path).compute_units == 12


BAD = {
    "unknown unit": ('clock_hz = { value = 1, unit = "MHZ", source = "s" }', "clock_hz.unit"),
    "wrong type": ('clock_hz = { value = "fast", unit = "MHz", source = "s" }', "clock_hz.value"),
    "negative": ('compute_units = { value = -4, unit = "CUs", source = "s" }',
                 "compute_units.value"),
    "zero": ('clock_hz = { value = 0, unit = "MHz", source = "s" }', "clock_hz.value"),
    "fraction of a count": ('compute_units = { value = 6.5, unit = "CUs", source = "s" }',
                            "compute_units.value"),
    "dimension": ('l2_bytes = { value = 4, unit = "GHz", source = "s" }', "l2_bytes.unit"),
    "no source": ('clock_hz = { value = 1, unit = "MHz" }', "clock_hz.source"),
    "extra field": ('clock_hz = { value = 1, unit = "MHz", source = "s", sorce = "x" }',
                    "clock_hz.sorce"),
    "bool assumption": ('clock_hz = { value = 1, unit = "MHz", source = "s", assumption = "yes" }',
                        "clock_hz.assumption"),
    "unknown key": ('clock_mhz = { value = 1, unit = "MHz", source = "s" }', "clock_mhz"),
    "bad mode": ('agpr_mode = { value = "shared", unit = "mode", source = "s" }', "agpr_mode.value"),
    "nvidia-only key": ('spawn_blocks_per_clk = { value = 1, unit = "blocks/clk", source = "s" }',
                        "spawn_blocks_per_clk"),
    "lane gap": (('lds_phases = { value = { b32 = ["0-30"], b64 = ["0-63"], b128 = ["0-63"] }, '
                  'unit = "lane groups", source = "s" }'), "lds_phases.value.b32"),
    "sgpr rows": (('sgpr_wave_limits = { value = [[80, 10], [70, 9]], unit = "SGPRs->waves", '
                   'source = "s" }'), "sgpr_wave_limits.value[1]"),
    "cross field": ('lds_bytes_per_block = { value = 128, unit = "KiB", source = "s" }',
                    "lds_bytes_per_block"),
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_bad_values_name_file_and_key(tmp_path, kind):
    body, key = BAD[kind]
    path = _child(tmp_path, body + "\n")
    with pytest.raises(SpecError) as err:
        check_spec_file(path)
    assert err.value.key_path == key
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_missing_required_quantity(tmp_path):
    text = (DATA_DIR / "gfx906.toml").read_text()
    text = re.sub(r"\[clock_hz\]\n(?:[^\[]*\n)", "", text, count=1)
    path = tmp_path / "noclock.toml"
    path.write_text(text)
    with pytest.raises(SpecError) as err:
        check_spec_file(path)
    assert err.value.key_path == "clock_hz" and "missing" in str(err.value)


def test_unknown_inherits(tmp_path):
    with pytest.raises(SpecError) as err:
        check_spec_file(_child(tmp_path, "", inherits="gfx999"))
    assert err.value.key_path == "inherits" and "gfx999" in str(err.value)


def test_inheritance_cycle(tmp_path):
    _child(tmp_path, "", "a.toml", inherits="b")
    _child(tmp_path, "", "b.toml", inherits="a")
    with pytest.raises(SpecError, match="cycle") as err:
        check_spec_file(tmp_path / "a.toml")
    assert err.value.key_path == "inherits"


def test_missing_identity_and_bad_toml(tmp_path):
    path = tmp_path / "novendor.toml"
    path.write_text('title = "x"\n')
    with pytest.raises(SpecError) as err:
        check_spec_file(path)
    assert err.value.key_path == "vendor"
    broken = tmp_path / "broken.toml"
    broken.write_text("title = \n")
    with pytest.raises(SpecError, match="not valid TOML"):
        check_spec_file(broken)
    with pytest.raises(SpecError, match="no such spec file"):
        check_spec_file(tmp_path / "absent.toml")


def test_resolve_prefers_paths_for_toml_names(tmp_path):
    path = _child(tmp_path, "")
    assert resolve(str(path)) == path.resolve()
