"""`sysbench.rand.*` against the real sysbench 1.0.20: a script of our own draws from every
generator in its events (uniform, default under each `--rand-type`, gaussian, special, pareto,
uniform_uint64, uniform_double, unique, string) and prints summary statistics from
`thread_done`; both tools run it with the same options, and the shapes must agree within
statistical tolerance. The values themselves differ: oltplab's xoroshiro128+ is seeded
otherwise (docs/lua.md), while the distributions' arithmetic is sysbench's (crates/oltplab-
engine/src/rand)."""

import math
import re
from pathlib import Path

import pytest

from tests.lua.test_dropin_commands import real
from tests.sysbench_compat.test_cli_sqlite import sysbench_cmd

DRAWS = 20_000
DISTRIBUTIONS = ("uniform", "default", "gaussian", "special", "pareto")

RAND = """-- Draws from every sysbench.rand generator and prints summary statistics per thread.
local A, B = 1, 1000
local names = {"uniform", "default", "gaussian", "special", "pareto"}
function thread_init()
  stats = {}
  for _, n in ipairs(names) do
    stats[n] = {n = 0, sum = 0, sq = 0, min = math.huge, max = -math.huge,
                mid = 0, low1 = 0, low10 = 0}
  end
  u64 = {n = 0, sum = 0, type = nil}
  dbl = {n = 0, sum = 0, min = math.huge, max = -math.huge}
  uniq = {n = 0, sum = 0, seen = {}, distinct = 0, min = math.huge, max = -math.huge}
  str = {n = 0, shape = true, digits = 0, letters = {}, digit_sum = 0}
end
local function add(s, v)
  s.n = s.n + 1; s.sum = s.sum + v; s.sq = s.sq + v * v
  if v < s.min then s.min = v end
  if v > s.max then s.max = v end
  if v >= 490 and v <= 510 then s.mid = s.mid + 1 end
  if v <= 10 then s.low1 = s.low1 + 1 end
  if v <= 100 then s.low10 = s.low10 + 1 end
end
function event()
  for _, n in ipairs(names) do add(stats[n], sysbench.rand[n](A, B)) end
  local x = sysbench.rand.uniform_uint64()
  u64.type = type(x)
  u64.n = u64.n + 1; u64.sum = u64.sum + tonumber(x) / 2^64
  local d = sysbench.rand.uniform_double()
  dbl.n = dbl.n + 1; dbl.sum = dbl.sum + d
  if d < dbl.min then dbl.min = d end
  if d > dbl.max then dbl.max = d end
  local q = sysbench.rand.unique()
  uniq.n = uniq.n + 1; uniq.sum = uniq.sum + q / 2^32
  if not uniq.seen[q] then uniq.seen[q] = true; uniq.distinct = uniq.distinct + 1 end
  if q < uniq.min then uniq.min = q end
  if q > uniq.max then uniq.max = q end
  local s = sysbench.rand.string("##-@@@x")
  str.n = str.n + 1
  if not s:match("^%d%d%-%l%l%lx$") then str.shape = false end
  str.digit_sum = str.digit_sum + tonumber(s:sub(1, 1))
  str.letters[s:sub(4, 4)] = true
end
function thread_done()
  for _, n in ipairs(names) do
    local s = stats[n]
    local mean = s.sum / s.n
    print(string.format(
      "%s n=%d min=%d max=%d mean=%.3f sd=%.3f mid=%.4f low1=%.4f low10=%.4f",
      n, s.n, s.min, s.max, mean, math.sqrt(s.sq / s.n - mean * mean),
      s.mid / s.n, s.low1 / s.n, s.low10 / s.n))
  end
  print(string.format("uniform_uint64 n=%d type=%s mean=%.4f",
    u64.n, u64.type, u64.sum / u64.n))
  print(string.format("uniform_double n=%d min=%.4f max=%.4f mean=%.4f",
    dbl.n, dbl.min, dbl.max, dbl.sum / dbl.n))
  print(string.format("unique n=%d distinct=%d min=%d max=%d mean=%.4f",
    uniq.n, uniq.distinct, uniq.min, uniq.max, uniq.sum / uniq.n))
  local letters = 0
  for _ in pairs(str.letters) do letters = letters + 1 end
  print(string.format("string n=%d shape=%s digit_mean=%.3f letters=%d",
    str.n, tostring(str.shape), str.digit_sum / str.n, letters))
end
"""

Stats = dict[str, dict[str, str]]


def drawn(tool: object, tmp_path: Path, *options: str) -> Stats:
    """Each line of thread_done's summary: its name, then its key=value pairs."""
    load = ["--threads=1", f"--events={DRAWS}", "--time=0", *options, "run"]
    done = tool("./rand.lua", *load, cwd=tmp_path)  # type: ignore[operator]
    assert done.returncode == 0, done.stdout + done.stderr
    found = {}
    for line in done.stdout.splitlines():
        name, _, rest = line.partition(" n=")
        if rest:
            found[name] = dict(re.findall(r"(\w+)=(\S+)", "n=" + rest))
    assert set(found) == {*DISTRIBUTIONS, "uniform_uint64", "uniform_double", "unique", "string"}
    return found


def close_means(ours: dict[str, str], theirs: dict[str, str]) -> None:
    """Means within 6 standard errors of each other (and truncation's half unit)."""
    se = math.hypot(float(ours["sd"]), float(theirs["sd"])) / math.sqrt(DRAWS)
    assert abs(float(ours["mean"]) - float(theirs["mean"])) <= 6 * se + 0.5, (ours, theirs)
    assert float(ours["sd"]) == pytest.approx(float(theirs["sd"]), rel=0.08, abs=1.0)


def close_shares(ours: dict[str, str], theirs: dict[str, str], key: str) -> None:
    p, q = float(ours[key]), float(theirs[key])
    se = math.sqrt((p * (1 - p) + q * (1 - q)) / DRAWS)
    assert abs(p - q) <= 6 * se + 0.002, (key, ours, theirs)


def same_shapes(ours: Stats, theirs: Stats) -> None:
    for name in DISTRIBUTIONS:
        o, t = ours[name], theirs[name]
        assert o["n"] == t["n"] == str(DRAWS)
        assert 1 <= int(o["min"]) <= int(o["max"]) <= 1000, o
        close_means(o, t)
        for share in ("mid", "low1", "low10"):  # the hot set of special, pareto's low ids
            close_shares(o, t, share)
    # uniform reaches both ends of its range in 20,000 draws (misses one with p < 1e-8).
    assert (ours["uniform"]["min"], ours["uniform"]["max"]) == ("1", "1000")
    # A uint64 cdata as in sysbench (tonumber / 2^64 is uniform on [0, 1)).
    assert ours["uniform_uint64"]["type"] == theirs["uniform_uint64"]["type"] == "cdata"
    for name in ("uniform_uint64", "uniform_double", "unique"):  # means of [0, 1) uniforms
        se = math.sqrt(2 / 12 / DRAWS)
        assert abs(float(ours[name]["mean"]) - float(theirs[name]["mean"])) <= 6 * se, name
    o = ours["uniform_double"]
    assert 0 <= float(o["min"]) < 0.01, o
    assert 0.99 < float(o["max"]) <= 1, o
    # unique: as many distinct values as draws, over the whole 32-bit range.
    assert ours["unique"]["distinct"] == theirs["unique"]["distinct"] == str(DRAWS)
    assert 0 <= int(ours["unique"]["min"]) <= int(ours["unique"]["max"]) < 2**32
    # string: the template's shape, every letter drawn, digits uniform.
    assert ours["string"]["shape"] == theirs["string"]["shape"] == "true"
    assert ours["string"]["letters"] == theirs["string"]["letters"] == "26"
    digits = math.sqrt(2 * 8.25 / DRAWS)
    assert abs(float(ours["string"]["digit_mean"]) - float(theirs["string"]["digit_mean"])) <= (
        6 * digits
    )


@pytest.mark.parametrize("rand_type", ["special", "uniform", "gaussian", "pareto", None])
def test_each_generator_draws_what_sysbench_draws(tmp_path: Path, rand_type: str | None) -> None:
    """`default` follows --rand-type (special when none is given, as in sysbench 1.0.20)."""
    (tmp_path / "rand.lua").write_text(RAND)
    options = [] if rand_type is None else [f"--rand-type={rand_type}"]
    ours, theirs = drawn(sysbench_cmd, tmp_path, *options), drawn(real, tmp_path, *options)
    same_shapes(ours, theirs)
    like = ours[rand_type or "special"]
    close_means(ours["default"], like)
    close_shares(ours["default"], like, "mid")


def test_the_distributions_parameters_act_as_in_sysbench(tmp_path: Path) -> None:
    """--rand-spec-iter/-pct/-res and --rand-pareto-h reshape special, gaussian and pareto."""
    (tmp_path / "rand.lua").write_text(RAND)
    options = [
        "--rand-type=pareto",
        "--rand-spec-iter=3",
        "--rand-spec-pct=5",
        "--rand-spec-res=50",
        "--rand-pareto-h=0.1",
    ]
    ours, theirs = drawn(sysbench_cmd, tmp_path, *options), drawn(real, tmp_path, *options)
    same_shapes(ours, theirs)
    defaults = drawn(sysbench_cmd, tmp_path)
    # Fewer iterations widen the gaussian; a wider, lighter hot set; a steeper pareto.
    assert float(ours["gaussian"]["sd"]) > 1.5 * float(defaults["gaussian"]["sd"])
    assert float(ours["special"]["mid"]) < 0.6 < float(defaults["special"]["mid"])
    assert float(ours["pareto"]["low1"]) > float(defaults["pareto"]["low1"]) + 0.1


UNIQUE = """
function thread_init() drawn = {} end
function event() drawn[#drawn + 1] = sysbench.rand.unique() end
function thread_done() print("drawn " .. table.concat(drawn, " ")) end
"""


def test_unique_values_never_repeat_across_engine_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One sequence per run, as sysbench's per process: connections on different engine
    threads (as on a machine of 8 cores or more) draw different values."""
    (tmp_path / "unique.lua").write_text(UNIQUE)
    monkeypatch.setenv("TOKIO_WORKER_THREADS", "2")
    load = ["--threads=4", "--events=2000", "--time=0", "run"]
    done = sysbench_cmd("./unique.lua", *load, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    per_thread = [line.split()[1:] for line in done.stdout.splitlines() if line.startswith("drawn")]
    assert len(per_thread) == 4
    values = [v for drawn in per_thread for v in drawn]
    assert len(values) == 2000
    assert len(set(values)) == len(values)
