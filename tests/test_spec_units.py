"""The unit table: conversions to SI, clock-relative units, errors, and printing."""

import pytest

from gemmmodel.errors import BadArgument, SpecError
from gemmmodel.units import UNITS, format_bytes, format_flops, format_si, parse_quantity, to_si


@pytest.mark.parametrize("value, unit, dimension, expected", [
    (1700, "MHz", "frequency", 1.7e9),
    (1.98, "GHz", "frequency", 1.98e9),
    (500, "kHz", "frequency", 5e5),
    (64, "KiB", "bytes", 65536),
    (64, "KB", "bytes", 64000),
    (8, "MiB", "bytes", 8 * 1048576),
    (40, "MB", "bytes", 40e6),
    (1, "GiB", "bytes", 1073741824),
    (1228.8, "GB/s", "bandwidth", 1.2288e12),
    (3.35, "TB/s", "bandwidth", 3.35e12),
    (1, "GiB/s", "bandwidth", 1073741824),
    (5, "us", "time", 5e-6),
    (30, "ns", "time", 3e-8),
    (2, "ms", "time", 2e-3),
    (128, "FLOP/clk/CU", "flop_per_clk", 128),
    (256, "FLOP/clk/SM", "flop_per_clk", 256),
    (64, "lanes", "count", 64),
    (800, "SGPRs", "count", 800),
])
def test_to_si_values(value, unit, dimension, expected):
    assert to_si(value, unit, dimension) == pytest.approx(expected, rel=1e-12)


def test_clock_relative_units_use_the_clock():
    clock = 1.98e9
    assert to_si(600, "cycles", "time", clock) == pytest.approx(600 / 1.98e9)
    assert to_si(1024, "B/clk", "bandwidth", 1.8e9) == pytest.approx(1024 * 1.8e9)
    # REFERENCE section 3: 1.4 G blocks/s at 1980 MHz is about 0.707 blocks per clock.
    assert to_si(1.4e9, "blocks/s", "blocks_per_clk", clock) == pytest.approx(0.70707, rel=1e-4)


def test_clock_relative_unit_without_clock_is_an_error():
    with pytest.raises(SpecError) as err:
        to_si(600, "cycles", "time", None, key_path="dram_latency_s")
    assert err.value.key_path == "dram_latency_s.unit"


def test_unknown_unit_names_the_key_path():
    with pytest.raises(SpecError) as err:
        to_si(1700, "MHZ", "frequency", key_path="clock_hz", file="x.toml")
    assert err.value.key_path == "clock_hz.unit"
    assert "x.toml" in str(err.value) and "MHZ" in str(err.value) and "MHz" in str(err.value)


def test_unit_of_the_wrong_dimension_is_an_error():
    with pytest.raises(SpecError) as err:
        to_si(64, "KiB", "frequency", key_path="clock_hz")
    assert "bytes" in str(err.value) and err.value.key_path == "clock_hz.unit"


def test_every_unit_has_a_positive_factor():
    for unit in UNITS.values():
        assert unit.factor > 0, unit.name
        assert unit.clock_power in (-1, 0, 1), unit.name


@pytest.mark.parametrize("value, dimension, text", [
    (1.7e9, "frequency", "1700 MHz"),
    (65536, "bytes", "64 KiB"),
    (8 * 2**20, "bytes", "8 MiB"),
    (1_500_000, "bytes", "1.5 MB"),
    (300, "bytes", "300 B"),
    (1.2288e12, "bandwidth", "1.2288 TB/s"),
    (480e9, "bandwidth", "480 GB/s"),
    (4e-6, "time", "4 us"),
    (3e-8, "time", "30 ns"),
    (0.25, "time", "250 ms"),
])
def test_format_si(value, dimension, text):
    assert format_si(value, dimension) == text


def test_format_flops_and_bytes():
    assert format_flops(132 * 256 * 1.98e9) == "66.9 TFLOP/s"
    assert format_flops(5e11) == "500 GFLOP/s"
    assert format_bytes(233472) == "228 KiB"


@pytest.mark.parametrize("text, expected", [("16384", 16384), ("48KiB", 49152),
                                            ("1.5 KiB", 1536), ("2KB", 2000)])
def test_parse_quantity(text, expected):
    assert parse_quantity(text, "bytes", "B") == expected


@pytest.mark.parametrize("text", ["12 apples", "KiB", "-3", "1e3 MHz"])
def test_parse_quantity_rejects(text):
    with pytest.raises(BadArgument):
        parse_quantity(text, "bytes", "B")
