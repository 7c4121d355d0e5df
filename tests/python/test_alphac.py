"""Tests of the Python package `alphac` (built with `pip install .`).

Run with `python -m pytest tests/python` in a virtual environment where the
package is installed (`.ci/run` does both). Tests that compare with the
`alphac` command line use the binary built by `cargo test` or `cargo build`
(`ALPHAC_BIN` overrides) and skip when there is none.
"""

import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import alphac

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

PREFIX_SUM = """
// B[i] = A[0] + ... + A[i]
affine prefix_sum [N] -> { : N > 0 }
    inputs
        A : [N]
    outputs
        B : [N]
    let
        B[i] = reduce(+, [j], {: 0 <= j <= i} : A[j]);
.
"""

GATHER = """
affine gather [N, M] -> { : N > 0 and M > 0 }
    inputs
        A : [M];
        idx : int [N];
    outputs
        B : [N];
    let
        B[j] = A[idx[j]];
.
"""


def alphac_bin():
    """The command-line binary, or None."""
    env = os.environ.get("ALPHAC_BIN")
    if env:
        return env
    for profile in ("release", "debug"):
        p = ROOT / "target" / profile / "alphac"
        if p.is_file():
            return str(p)
    return None


# --- compile -----------------------------------------------------------------


def test_compile_from_source_text_describes_the_system():
    p = alphac.compile(PREFIX_SUM)
    assert p.name == "prefix_sum"
    assert p.params == ["N"]
    assert p.inputs == {"A": "float64"}
    assert p.outputs == {"B": "float64"}
    assert p.shape("A", {"N": 7}) == [7]
    assert p.bounds("B", {"N": 7}) == [(0, 6)]
    assert "prefix_sum" in repr(p)


def test_compile_from_a_path_picks_the_system_named_like_the_file():
    p = alphac.compile(EXAMPLES / "gmm_gs.alpha")
    assert p.name == "gmm_gs"
    assert list(p.inputs) == ["x", "z"]
    assert p.inputs["z"] == "int64"
    q = alphac.compile(str(EXAMPLES / "gmm_gs.alpha"), system="gmm_gs_data")
    assert q.name == "gmm_gs_data"
    assert q.inputs == {}


def test_complexity_and_emit_say_what_the_optimizer_did():
    opt = alphac.compile(PREFIX_SUM)
    c = opt.complexity()
    assert "total: O(N^2) -> O(N)" in c, c
    assert "generated code (upper bound): O(N)" in c, c
    assert any(d["transformation"] == "simplification" and d["applied"] for d in opt.decisions())
    naive = alphac.compile(PREFIX_SUM, optimize=False)
    assert "generated code (upper bound): O(N^2)" in naive.complexity()
    assert naive.decisions() == []
    assert "for" in opt.emit() and "B" in opt.emit()


def test_a_syntax_error_is_a_compile_error_with_the_location_and_a_caret():
    bad = PREFIX_SUM.replace("reduce(+, [j]", "reduce(+ [j]")
    with pytest.raises(alphac.CompileError) as e:
        alphac.compile(bad)
    text = str(e.value)
    assert "<source>:9:" in text, text
    assert "^" in text, text
    assert isinstance(e.value, alphac.AlphaError)


def test_a_compile_error_names_the_file(tmp_path):
    f = tmp_path / "broken.alpha"
    f.write_text(PREFIX_SUM.replace("A[j]", "Q[j]"))
    with pytest.raises(alphac.CompileError) as e:
        alphac.compile(f)
    assert "broken.alpha:" in str(e.value)
    assert "Q" in str(e.value)


def test_missing_file_and_unknown_system_are_compile_errors(tmp_path):
    with pytest.raises(alphac.CompileError, match="cannot read"):
        alphac.compile(tmp_path / "nope.alpha")
    with pytest.raises(alphac.CompileError, match="no system named nope"):
        alphac.compile(PREFIX_SUM, system="nope")


# --- run -----------------------------------------------------------------------


@pytest.mark.parametrize("optimize", [True, False])
def test_run_computes_the_prefix_sum(optimize):
    p = alphac.compile(PREFIX_SUM, optimize=optimize)
    a = np.random.default_rng(3).random(50)
    out = p.run(params={"N": 50}, inputs={"A": a})
    assert list(out) == ["B"]
    b = out["B"]
    assert b.dtype == np.float64 and b.shape == (50,)
    np.testing.assert_allclose(b, np.cumsum(a), rtol=1e-12)


def test_inputs_take_safe_casts_and_any_layout():
    p = alphac.compile(PREFIX_SUM)
    a32 = np.arange(10, dtype=np.float32)
    np.testing.assert_array_equal(p.run({"N": 10}, {"A": a32})["B"], np.cumsum(a32))
    strided = np.arange(20.0)[::2]
    np.testing.assert_array_equal(p.run({"N": 10}, {"A": strided})["B"], np.cumsum(strided))
    as_list = [1, 2, 3]
    np.testing.assert_array_equal(p.run({"N": 3}, {"A": as_list})["B"], [1.0, 3.0, 6.0])


def test_outputs_own_the_native_results_without_a_copy():
    out = alphac.compile(PREFIX_SUM).run({"N": 4}, {"A": np.ones(4)})["B"]
    # A view of the buffer alphac allocated (not an array numpy copied
    # into memory of its own), writable like any numpy array.
    assert not out.flags["OWNDATA"]
    assert out.base is not None
    out[0] = 42.0
    assert out[0] == 42.0


def test_two_dimensional_and_scalar_outputs_have_their_shapes():
    p = alphac.compile(EXAMPLES / "gmm_gs.alpha", system="gmm_gs_data")
    out = p.run({"N": 30, "K": 4}, seed=5)
    assert out["x"].shape == (30,) and out["x"].dtype == np.float64
    assert out["z"].dtype == np.int64 and out["z"].min() >= 0 and out["z"].max() < 4
    g = alphac.compile(EXAMPLES / "gmm_gs.alpha")
    res = g.run({"N": 30, "K": 4}, {"x": out["x"], "z": out["z"]}, seed=1)
    assert res["logp"].shape == () and np.isfinite(res["logp"])
    assert res["znew"].shape == (30,)


def test_run_errors_are_run_errors_naming_the_culprit():
    p = alphac.compile(PREFIX_SUM)
    with pytest.raises(alphac.RunError, match="missing value of parameter N"):
        p.run(inputs={"A": np.ones(3)})
    with pytest.raises(alphac.RunError, match="outside the context"):
        p.run({"N": 0}, {"A": np.ones(0)})
    with pytest.raises(alphac.RunError, match=r"input A: expected shape \(5,\), found \(4,\)"):
        p.run({"N": 5}, {"A": np.ones(4)})
    with pytest.raises(alphac.RunError, match="missing input A"):
        p.run({"N": 5})
    with pytest.raises(alphac.RunError, match="C is not an input"):
        p.run({"N": 5}, {"A": np.ones(5), "C": np.ones(5)})
    with pytest.raises(alphac.RunError, match="M is not a parameter"):
        p.run({"N": 5, "M": 1}, {"A": np.ones(5)})
    g = alphac.compile(GATHER)
    with pytest.raises(alphac.RunError, match="input idx: expected int elements"):
        g.run({"N": 2, "M": 3}, {"A": np.ones(3), "idx": np.array([0.0, 1.0])})


def test_an_out_of_range_indirect_index_is_a_run_error_with_the_point():
    g = alphac.compile(GATHER)
    a = np.array([10.0, 20.0, 30.0])
    ok = g.run({"N": 3, "M": 3}, {"A": a, "idx": np.array([2, 0, 1])})
    np.testing.assert_array_equal(ok["B"], [30.0, 10.0, 20.0])
    with pytest.raises(alphac.RunError, match=r"A.*\[7\]"):
        g.run({"N": 3, "M": 3}, {"A": a, "idx": np.array([2, 7, 1])})


def test_a_label_out_of_range_is_a_run_error_naming_the_variable():
    # `if z[j] == k` compares a label with the count's index: a label
    # outside 0..K-1 is an error, not a point counted nowhere
    g = alphac.compile(EXAMPLES / "gmm_gs.alpha")
    x = np.linspace(-1.0, 1.0, 6)
    ok = g.run({"N": 6, "K": 3}, {"x": x, "z": np.array([0, 1, 2, 0, 1, 2])}, seed=1)
    assert 0 <= ok["znew"].min() and ok["znew"].max() < 3
    with pytest.raises(alphac.RunError, match=r"selection value 3 is outside the range 0..=2 of `k`"):
        g.run({"N": 6, "K": 3}, {"x": x, "z": np.array([0, 1, 2, 0, 3, 2])}, seed=1)


# --- sweeps ----------------------------------------------------------------


def gmm_data(n=200, k=3, seed=1):
    d = alphac.compile(EXAMPLES / "gmm_gs.alpha", system="gmm_gs_data")
    out = d.run({"N": n, "K": k}, seed=seed)
    return {"N": n, "K": k}, {"x": out["x"], "z": out["z"]}


def test_sweeps_return_the_trace_and_are_reproducible():
    g = alphac.compile(EXAMPLES / "gmm_gs.alpha")
    params, inputs = gmm_data()
    t1 = g.sweeps(20, params, inputs, seed=7, progress=False)
    assert list(t1) == ["sweep", "logp"]
    np.testing.assert_array_equal(t1["sweep"], np.arange(20))
    assert t1["logp"].dtype == np.float64 and np.all(np.isfinite(t1["logp"]))
    t2 = g.sweeps(20, params, inputs, seed=7, progress=False)
    np.testing.assert_array_equal(t1["logp"], t2["logp"])
    t3 = g.sweeps(20, params, inputs, seed=8, progress=False)
    assert not np.array_equal(t1["logp"], t3["logp"])


def test_the_number_of_threads_does_not_change_the_results():
    params = {"N": 3000, "K": 16, "D": 4}
    data = alphac.compile(EXAMPLES / "lbp_stereo.alpha", system="lbp_stereo_data")
    out = data.run(params, seed=5)
    names = ["left", "right", "xs", "nbr", "rev", "valid", "msg"]
    inputs = {k: out[k] for k in names}
    runs = [
        alphac.compile(EXAMPLES / "lbp_stereo.alpha", threads=t).run(params, inputs)
        for t in (1, 2, None)
    ]
    for r in runs[1:]:
        for k in ("msgnew", "label", "energy"):
            assert r[k].tobytes() == runs[0][k].tobytes()
    with pytest.raises(alphac.CompileError):
        alphac.compile(EXAMPLES / "lbp_stereo.alpha", threads=0)


def test_a_sampler_resumed_from_its_state_continues_draw_for_draw():
    g = alphac.compile(EXAMPLES / "gmm_gs.alpha")
    params, inputs = gmm_data()
    whole = g.sweeps(12, params, inputs, seed=3, progress=False)
    s = g.sampler(params, inputs, seed=3)
    first = s.sweeps(5, progress=False)
    assert s.next_sweep == 5
    state = s.state()
    assert set(state) == {"x", "z"}
    resumed = g.sampler(params, state, seed=3, first_sweep=5)
    rest = resumed.sweeps(7, progress=False)
    np.testing.assert_array_equal(np.concatenate([first["logp"], rest["logp"]]), whole["logp"])
    np.testing.assert_array_equal(rest["sweep"], np.arange(5, 12))
    one = resumed.sweep()
    assert set(one) == {"logp"} and isinstance(one["logp"], float)
    assert resumed.outputs()["znew"].shape == (200,)


def test_the_progress_bar_is_tqdms_when_tqdm_is_installed(monkeypatch):
    calls = {"total": None, "updates": 0, "closed": False, "postfix": []}

    class FakeTqdm:
        def __init__(self, total=None, unit=None):
            calls["total"] = total

        def update(self, k):
            calls["updates"] += k

        def set_postfix_str(self, s, refresh=True):
            calls["postfix"].append(s)

        def close(self):
            calls["closed"] = True

    tqdm = types.ModuleType("tqdm")
    auto = types.ModuleType("tqdm.auto")
    auto.tqdm = FakeTqdm
    tqdm.auto = auto
    monkeypatch.setitem(sys.modules, "tqdm", tqdm)
    monkeypatch.setitem(sys.modules, "tqdm.auto", auto)
    g = alphac.compile(EXAMPLES / "gmm_gs.alpha")
    params, inputs = gmm_data(n=50)
    trace = g.sweeps(4, params, inputs, seed=1)
    assert calls["total"] == 4 and calls["updates"] == 4 and calls["closed"]
    assert calls["postfix"][-1] == f"logp = {trace['logp'][-1]:.6f}"
    # progress=False never touches tqdm.
    calls["updates"] = 0
    g.sweeps(3, params, inputs, seed=1, progress=False)
    assert calls["updates"] == 0


# --- the same results as the command line and the reference interpreter -----


def test_python_results_equal_the_command_lines_and_the_interpreters(tmp_path):
    exe = alphac_bin()
    if exe is None:
        pytest.skip("no alphac binary (build it with cargo build)")
    params, inputs = gmm_data(n=120, k=3, seed=2)
    for name, a in inputs.items():
        np.save(tmp_path / f"{name}.npy", a)
    g = alphac.compile(EXAMPLES / "gmm_gs.alpha")
    mine = g.run(params, inputs, seed=11)
    for engine in ([], ["--interp"]):
        out = tmp_path / f"znew{len(engine)}.npy"
        subprocess.run(
            [exe, "run", str(EXAMPLES / "gmm_gs.alpha"), "--param", "N=120", "--param", "K=3",
             "--input", f"x={tmp_path / 'x.npy'}", "--input", f"z={tmp_path / 'z.npy'}",
             "--seed", "11", "--output", f"znew={out}", *engine],
            check=True, capture_output=True,
        )
        np.testing.assert_array_equal(np.load(out), mine["znew"])
