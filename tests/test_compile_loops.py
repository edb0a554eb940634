"""Main-loop finder on hand-made listings (CPU only)."""

from gemmmodel.compile.listing import Instr, Label, Listing, count_mix
from gemmmodel.compile.loops import (
    control_flow_graph,
    find_main_loop,
    natural_loops,
    reachable_instructions,
)


def fma():
    return Instr("v_fmac_f32_e32", "fma")


def op(name="v_add_u32"):
    return Instr(name, "other")


def br(target, conditional=True):
    return Instr("s_cbranch_scc1" if conditional else "s_branch", "other", target=target,
                 conditional=conditional, ends_flow=not conditional)


def end():
    return Instr("s_endpgm", "other", ends_flow=True)


def test_no_loop():
    lst = Listing("k", [op(), fma(), end()])
    assert find_main_loop(lst) is None


def test_nested_loops_pick_inner_with_all_fmas():
    # outer: L1 .. br L1 ; inner: L2 (4 FMAs) .. br L2
    lst = Listing("k", [op(), Label("L1"), Instr("s_barrier", "barrier"), Label("L2"), fma(),
                        fma(), fma(), fma(), br("L2"), op(), br("L1"), fma(), end()])
    loop = find_main_loop(lst)
    assert loop.depth == 2
    mix = count_mix(loop.instrs)
    assert mix["fma"] == 4 and mix["instructions"] == 5
    outer = count_mix(loop.outer_instrs)  # the k-step loop: barrier + inner body once
    assert outer["barrier"] == 1 and outer["fma"] == 4 and outer["instructions"] == 8


def test_outer_loop_wins_when_it_has_more_fmas():
    lst = Listing("k", [Label("L1"), fma(), fma(), Label("L2"), fma(), br("L2"), br("L1"),
                        end()])
    loop = find_main_loop(lst)
    assert loop.depth == 1
    assert count_mix(loop.instrs)["fma"] == 3
    assert loop.outer_instrs == ()


def test_loop_body_laid_out_before_its_header():
    # The layout hipcc produced for the tiny kernel: the body block sits above the header and
    # the back edge jumps up from below the header. A layout-only scan would miss the body.
    lst = Listing("k", [op(), br("HEAD", conditional=False),
                        Label("BODY"), fma(), fma(), Instr("s_barrier", "barrier"),
                        Label("HEAD"), op(), br("EXIT"), op(), br("BODY", conditional=False),
                        Label("EXIT"), end()])
    loop = find_main_loop(lst)
    mix = count_mix(loop.instrs)
    assert mix["fma"] == 2 and mix["barrier"] == 1
    graph, _ = control_flow_graph(lst)
    assert len(natural_loops(graph)) == 1


def test_unreachable_self_branch_is_ignored():
    # nvdisasm prints `.L_x: BRA .L_x` plus NOPs after EXIT: not a loop, not counted.
    lst = Listing("k", [fma(), Instr("EXIT", "other", ends_flow=True), Label("T"),
                        Instr("BRA", "other", target="T", ends_flow=True), Instr("NOP", "other")])
    assert find_main_loop(lst) is None
    assert count_mix(reachable_instructions(lst))["instructions"] == 2


def test_trip_path_takes_the_fall_through_side_of_a_diamond():
    # HEAD: @P bra CHECKED ; fast: 1 op, bra JOIN ; CHECKED: 3 ops ; JOIN: 2 FMAs, bra HEAD.
    # One trip runs the fast or the checked side, never both: the path is the fast side.
    lst = Listing("k", [op(), Label("HEAD"), op("s_cmp"), br("CHECKED"),
                        op("fast_load"), br("JOIN", conditional=False),
                        Label("CHECKED"), op("checked_load"), op("checked_load"),
                        op("checked_load"),
                        Label("JOIN"), fma(), fma(), Instr("s_barrier", "barrier"),
                        br("HEAD"), end()])
    loop = find_main_loop(lst)
    assert count_mix(loop.instrs)["instructions"] == 11   # the whole body, both sides
    names = [ins.opcode for ins in loop.path]
    assert "fast_load" in names and "checked_load" not in names
    assert count_mix(loop.path)["fma"] == 2 and len(loop.path) == 8


def test_trip_path_is_the_body_when_the_work_is_behind_a_taken_branch():
    # the FMAs sit on the branch side only: the fall-through path would miss them
    lst = Listing("k", [Label("HEAD"), op(), br("WORK"), op("skip"),
                        br("TAIL", conditional=False), Label("WORK"), fma(), fma(),
                        Label("TAIL"), Instr("s_barrier", "barrier"), br("HEAD"), end()])
    loop = find_main_loop(lst)
    assert count_mix(loop.path)["fma"] == 2
    assert tuple(loop.path) == tuple(loop.instrs)


def test_a_loop_around_the_tile_loop_is_not_the_main_loop():
    # the strided-batched entry: for z { prologue FMAs, barrier, tile loop with a barrier,
    # peeled last step, epilogue } - the z loop holds more FMAs, the tile loop is the main one
    lst = Listing("k", [op(), Label("Z"), fma(), fma(), fma(), Instr("bar", "barrier"),
                        Label("T"), fma(), fma(), Instr("bar", "barrier"), br("T"),
                        fma(), fma(), fma(), br("Z"), end()])
    loop = find_main_loop(lst)
    assert loop.depth == 2
    mix = count_mix(loop.instrs)
    assert mix["fma"] == 2 and mix["barrier"] == 1 and mix["instructions"] == 4
    assert count_mix(loop.outer_instrs)["fma"] == 8


def test_an_inner_loop_without_a_barrier_does_not_take_over():
    # an outer tile loop (barrier) holding a rolled k-step loop with fewer FMAs: the outer
    # stays the main loop; the descent needs a barrier in the inner loop
    lst = Listing("k", [Label("T"), Instr("bar", "barrier"), fma(), fma(), Label("K"), fma(),
                        br("K"), Instr("bar", "barrier"), br("T"), end()])
    loop = find_main_loop(lst)
    assert loop.depth == 1 and count_mix(loop.instrs)["fma"] == 3
