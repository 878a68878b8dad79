"""benchwatch counts: callgrind and strace files read as counts, per-request arithmetic, the
breakdown by shared object, figures and problems, and real servers counted end to end."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import FIXTURE_APPS, REPO, benchwatch, make_project, uvicorn_processes

from benchwatch.counts import (
    CountTarget,
    breakdown,
    by_object,
    callgrind,
    count_requests,
    phase_files,
    render,
    strace,
    target_dirs,
)
from benchwatch.counts import (
    request_budget as plan,
)
from benchwatch.counts.all_targets import endpoint_figures
from benchwatch.counts.breakdown import INTERPRETER, object_group
from benchwatch.counts.target_counts import Phase, TargetCounts
from benchwatch.figures.figure_key import load_key
from benchwatch.figures.metrics import INSTRUCTIONS, RETAINED, STATEMENTS, SYSCALLS, Counted
from benchwatch.measure import inject
from benchwatch.measure.inject import Injection
from benchwatch.project.loading import load_project

FIXTURES = REPO / "tests" / "fixtures" / "counts"
# real callgrind dumps of one counted phase of hello@latest (GET /): base with the injection layer
# and no cost (200 requests), head with a 1000-iteration loop per request (apps/_inject.py; 100)
BASE_PHASE, HEAD_PHASE, PHASE_REQUESTS = (
    "hello-base.callgrind.gz",
    "hello-head-loops1000.callgrind.gz",
    (200, 100),
)
TRACE = FIXTURES / "hello.strace"  # a real strace -f -ttt excerpt of hello@latest
HAS_COUNTERS = callgrind.unavailable_reason() is None and strace.unavailable_reason() is None
needs_counters = pytest.mark.skipif(
    not HAS_COUNTERS, reason="valgrind or strace not installed (.ci/run installs them)"
)


def unpacked(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name.removesuffix(".gz")
    path.write_bytes(gzip.decompress((FIXTURES / name).read_bytes()))
    return path


def test_a_callgrind_dump_reads_as_its_total_and_its_functions_add_up_to_it(tmp_path):
    profile = callgrind.read(unpacked(tmp_path, BASE_PHASE))
    assert profile.total > 0
    assert sum(profile.by_function.values()) == profile.total
    objects = {object_group(obj) for obj, _ in profile.by_function}
    assert {INTERPRETER, "uvloop/libuv", "httptools", "pydantic_core", "libc"} <= objects
    assert (
        callgrind.read_total(unpacked(tmp_path, HEAD_PHASE)) / PHASE_REQUESTS[1]
        > profile.total / PHASE_REQUESTS[0]
    )


def test_a_cost_line_after_calls_belongs_to_the_callee_not_the_caller(tmp_path):
    path = tmp_path / "tiny.out"
    path.write_text(
        "version: 1\npositions: line\nevents: Ir\nsummary: 130\n\n"
        "ob=(1) /usr/lib/libpython3.11.so.1.0\nfn=(1) caller\n10 30\n"
        "cob=(2) /site-packages/pydantic_core/_pydantic_core.so\ncfn=(2) callee\ncalls=1 20\n11 100\n"
        "ob=(2)\nfn=(2)\n20 100\n"
    )
    profile = callgrind.read(path)
    assert profile.by_function == {
        ("/usr/lib/libpython3.11.so.1.0", "caller"): 30,
        ("/site-packages/pydantic_core/_pydantic_core.so", "callee"): 100,
    }
    assert profile.total == 130


def test_a_file_that_is_not_callgrind_output_is_an_error(tmp_path):
    path = tmp_path / "x.out"
    path.write_text("events: Ir\nfn=(3)\n")
    with pytest.raises(callgrind.CallgrindError):
        callgrind.read(path)
    with pytest.raises(callgrind.CallgrindError, match="cannot read"):
        callgrind.read(tmp_path / "missing")


@pytest.mark.parametrize(
    ("path", "group"),
    [
        ("/root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0", INTERPRETER),
        ("/root/.pyenv/versions/3.11.7/bin/python3.11", INTERPRETER),
        (
            "/env/lib/python3.11/site-packages/uvloop/loop.cpython-311-x86_64-linux-gnu.so",
            "uvloop/libuv",
        ),
        (
            "/env/lib/python3.11/site-packages/httptools/parser/parser.cpython-311-x86_64-linux-gnu.so",
            "httptools",
        ),
        (
            "/env/lib/python3.11/site-packages/orjson/orjson.cpython-311-x86_64-linux-gnu.so",
            "orjson",
        ),
        (
            "/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/_json.cpython-311-x86_64-linux-gnu.so",
            "CPython extension modules",
        ),
        ("/usr/lib/x86_64-linux-gnu/libc.so.6", "libc"),
        ("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "ld.so"),
    ],
)
def test_shared_objects_are_grouped_as_a_reader_knows_them(path, group):
    assert object_group(path) == group


def test_the_breakdown_puts_an_injected_python_loop_in_the_interpreter(tmp_path):
    base, head = unpacked(tmp_path, BASE_PHASE), unpacked(tmp_path, HEAD_PHASE)
    found = breakdown([base], [head], PHASE_REQUESTS)
    assert found.base == callgrind.read_total(base) / PHASE_REQUESTS[0]
    assert found.change > 0
    assert found.objects[0].name == INTERPRETER
    assert found.objects[0].change == pytest.approx(found.change, rel=0.05)
    assert sum(p.change for p in found.objects) == pytest.approx(found.change)
    assert found.functions[0].name.endswith(f"({INTERPRETER})")
    table = render(found)
    assert "| libpython |" in table and "**all**" in table
    assert table.count("\n|") >= 6
    data = by_object(
        found
    )  # the same as data (compare.json, attribution.json): the rows the table shows
    assert data.objects[0].name == INTERPRETER and data.objects[0].head > data.objects[0].base
    assert (data.base, data.head) == (round(found.base, 1), round(found.head, 1))
    assert [f"| {o.name} |" in table for o in data.objects] == [True] * len(data.objects)
    # what compare calls them by (a package attribute named `breakdown` once shadowed the module
    # there, and a compare with a moved instruction count crashed after its counts)
    from benchwatch.compare import compare as compare_run

    assert compare_run.render(found) == table and compare_run.by_object(found) == data


def test_functions_without_a_name_are_never_paired_across_sides_and_the_table_says_so(tmp_path):
    """A stripped interpreter (Debian's python3.11) has no names for its static functions: base's
    `_PyObject_Free` and head's `0x…4fee40` are the same function, so neither side's row may read as
    a function going to 0 and another appearing; the part's own total still compares."""

    def dump(name: str, functions: dict[str, int]) -> Path:
        path = tmp_path / name
        body = "".join(
            f"fn=({i}) {fn}\n1 {cost}\n" for i, (fn, cost) in enumerate(functions.items(), 1)
        )
        total = sum(functions.values())
        path.write_text(
            f"version: 1\npositions: line\nevents: Ir\nsummary: {total}\n\n"
            f"ob=(1) /usr/lib/libpython3.11.so.1.0\n{body}"
        )
        return path

    base = dump("base.out", {"_PyObject_Free": 1200, "_PyEval_EvalFrameDefault": 8800})
    head = dump("head.out", {"0x00000000004fee40": 1300, "_PyEval_EvalFrameDefault": 8800})
    found = breakdown([base], [head], 1)
    assert [p.name for p in found.functions] == ["_PyEval_EvalFrameDefault (libpython)"]
    assert found.objects[0].change == 100
    assert found.unnamed == {INTERPRETER: (0.0, pytest.approx(1300 / 10100))}
    table = render(found)
    assert "0x" not in table and "→ 0" not in table
    assert (
        "libpython: 0% of base's and 13% of head's instructions are in functions without a name"
        in table
    )


def test_the_breakdown_needs_files():
    with pytest.raises(ValueError):
        breakdown([], [], 10)


def test_a_real_trace_counts_calls_by_name_once_each_and_its_timer_wakeups():
    found = strace.calls(TRACE)
    named = Counter(c.name for c in found if c.name)
    text = TRACE.read_text()
    assert named["write"] == text.count(" write(")
    assert named["epoll_pwait"] == text.count(
        " epoll_pwait("
    )  # a resumed line is not a second call
    assert sum(c.timed_out for c in found) >= 1
    start, end = min(c.when for c in found), max(c.when for c in found)
    (whole,) = strace.count_windows(found, [(start, end)])
    assert sum(whole.calls.values()) == len([c for c in found if c.name])
    first, second = strace.count_windows(
        found, [(start, (start + end) / 2), ((start + end) / 2 + 1e-6, end)]
    )
    assert first.calls + second.calls == whole.calls


def test_the_ladder_gives_heavier_endpoints_fewer_requests():
    assert plan.requests_for(400_000, 1000) == 100
    assert plan.requests_for(4_000_000, 1000) == 10
    assert plan.requests_for(400_000, 50) == 50
    assert plan.requests_for(10**12, 1000) == plan.LADDER[-1]
    assert plan.warmup_for(400_000, 1000) <= plan.requests_for(400_000, 1000)


def test_the_settle_sends_as_many_requests_as_four_phases_of_the_former_100m_budget():
    for per_request in (400_000, 1_000_000, 4_000_000):  # where the ladder halves
        former = plan.fitting(per_request, 100_000_000, 1000)
        assert plan.settle_for(plan.requests_for(per_request, 1000)) == 4 * former


def _counted(
    instructions: list[int], calls: list[dict[str, int]], wakeups: list[int]
) -> tuple[TargetCounts, object]:
    project = load_project(REPO)
    variant = project.select("hello@latest")[0]
    endpoint = variant.endpoints[0]
    target = CountTarget(variant, env=None, endpoints=(endpoint,))  # type: ignore[arg-type]
    cg = [Phase(endpoint, r, 100, seconds=2.0, instructions=n) for r, n in enumerate(instructions)]
    st = [
        Phase(endpoint, r, 1000, seconds=3.0, calls=Counter(c), wakeups=w)
        for r, (c, w) in enumerate(zip(calls, wakeups, strict=True))
    ]
    return TargetCounts(target, cg, 1000.0, st, {"epoll_pwait": 2.0, "getpid": 1.0}), endpoint


def test_per_request_counts_take_off_the_idle_cost_of_their_time():
    counted, endpoint = _counted(
        [40_002_000, 40_012_000], [{"read": 1000, "epoll_pwait": 2060, "getpid": 30}] * 2, [30, 30]
    )
    assert counted.instructions(endpoint) == [
        400_000.0,
        400_100.0,
    ]  # 2 s x 1000 idle instructions/s off
    assert (
        counted.syscalls(endpoint) == [{"read": 1.0, "epoll_pwait": 2.0}] * 2
    )  # 30 wake-ups' calls off


def test_counted_timer_ticks_are_taken_off_by_the_tick_not_by_the_wall_time():
    """Two phases of the same work, one of them slower in wall time (a loaded machine): by the
    tick, both come out equal; a server whose ticks were not counted falls back to the time; with
    the timer quiet (no tick), only the cost of a window with no request comes off."""
    counted, endpoint = _counted([40_030_000, 40_090_000], [{"read": 1000}] * 2, [0, 0])
    counted.idle_instructions_per_tick = 3_000.0
    counted.instruction_phases[0].ticks, counted.instruction_phases[1].ticks = 10, 30
    counted.instruction_phases[
        1
    ].seconds = 2.0  # the same wall time: by the second they would differ
    assert counted.instructions(endpoint) == [400_000.0, 400_000.0]
    counted.instruction_phases[1].ticks = None
    assert counted.instructions(endpoint)[1] == (40_090_000 - 2.0 * 1000.0) / 100
    counted.idle_window_instructions = (
        30_000.0  # the timer quiet: no tick, a window's own cost alone
    )
    counted.instruction_phases[0].ticks = 0
    assert counted.instructions(endpoint)[0] == 400_000.0


def test_figures_are_named_by_the_one_name_rule_with_calls_by_name_in_detail():
    counted, endpoint = _counted(
        [40_002_000, 40_012_000, 40_007_000],
        [{"read": 1000, "write": 2000, "epoll_pwait": 2000}] * 3,
        [0, 0, 0],
    )
    (instructions, syscalls), problems = endpoint_figures(counted, endpoint, " (side by side)")
    assert problems == []
    assert (
        instructions.name
        == load_key("hello@latest", "GET /", Counted(), INSTRUCTIONS, " (side by side)").name
    )
    assert instructions.params == Counted().params() and instructions.kind == "load"
    assert (
        instructions.samples == [400_000.0, 400_100.0, 400_050.0]
        and instructions.value == 400_050.0
    )
    assert (
        syscalls.metric == SYSCALLS.key and syscalls.value == 3.0
    )  # the request's own: polls apart
    assert syscalls.detail == {"epoll_pwait": 2.0, "read": 1.0, "write": 2.0}  # every call, by name


def test_the_gated_system_calls_are_the_requests_own_and_scheduling_ones_are_information():
    """Thread hand-offs (`futex`), polls and thread starts follow the scheduler: left out of the
    count that gates, kept by name; a request's own calls (I/O, files, poll registration) count."""
    by_name = {
        "read": 5.0,
        "write": 6.0,
        "fcntl": 4.0,
        "epoll_ctl": 2.0,
        "futex": 21.7,
        "epoll_pwait": 17.4,
        "getpid": 78.0,
        "clone3": 0.1,
        "mmap": 0.1,
    }
    assert strace.own_calls(by_name) == 17.0
    counted, endpoint = _counted(
        [40_002_000] * 2, [{"read": 1000, "futex": 21_700}, {"read": 1000, "futex": 18_300}], [0, 0]
    )
    _, syscalls = endpoint_figures(counted, endpoint)[0]
    assert syscalls.samples == [1.0, 1.0] and syscalls.detail == {"futex": 20.0, "read": 1.0}


def test_a_count_that_does_not_grow_with_the_requests_is_a_problem_not_a_figure():
    counted, endpoint = _counted([1_000, 40_000_000], [{"read": 1000}] * 2, [0, 0])
    figures, problems = endpoint_figures(counted, endpoint)
    assert figures == []
    assert problems[0].endpoint == "GET /" and "did not grow" in problems[0].reason


def test_two_targets_of_one_variant_get_their_own_directories(tmp_path):
    variant = load_project(REPO).select("hello@latest")[0]
    targets = [CountTarget(variant, None, variant.endpoints) for _ in range(3)]  # type: ignore[arg-type]
    assert [p.name for p in target_dirs(tmp_path, targets)] == [
        "hello@latest",
        "hello@latest-2",
        "hello@latest-3",
    ]


def test_given_directories_are_where_each_target_counts(tmp_path, monkeypatch):
    """attribute counts every stack in one call, each target in its stack's folder."""
    from benchwatch.counts import all_targets as run
    from benchwatch.counts.target_counts import CountFailed

    variant = load_project(REPO).select("hello@latest")[0]
    targets = [CountTarget(variant, None, variant.endpoints) for _ in range(2)]  # type: ignore[arg-type]
    used: list[Path] = []

    def count_target(target, directory, **kw):
        used.append(directory)
        raise CountFailed("fake")

    monkeypatch.setattr(run, "count_target", count_target)
    monkeypatch.setattr(run.callgrind, "unavailable_reason", lambda: None)
    monkeypatch.setattr(run.strace, "unavailable_reason", lambda: None)
    dirs = [tmp_path / "a" / "hello@latest", tmp_path / "b" / "hello@latest"]
    figures, problems = count_requests(
        targets, out_dir=tmp_path, jobs=1, dirs=dirs, log=lambda _: None
    )
    assert (
        sorted(used) == dirs
        and not figures
        and [p.reason for p in problems] == ["count failed: fake"] * 2
    )
    with pytest.raises(ValueError, match="1 directories for 2 targets"):
        count_requests(targets, out_dir=tmp_path, dirs=dirs[:1], log=lambda _: None)


def test_the_command_refuses_bad_numbers_and_unknown_variants(cli):
    done = cli("counts", "--repeats", "0")
    assert done.returncode == 3 and "ERROR: --repeats" in done.stderr
    done = cli("counts", "-k", "nothing@here")
    assert done.returncode == 3 and "ERROR:" in done.stderr


@pytest.mark.slow
@needs_counters
@pytest.mark.load_independent
def test_real_hello_counted_with_and_without_an_injected_loop(tmp_path):
    """hello@latest counted twice side by side, once with a fixed loop per request: the loop's
    instructions show in every repeat and in the breakdown's interpreter row; no server is left."""
    from benchwatch.environments.envs import ensure

    variant = load_project(REPO).select("hello@latest")[0]
    env = ensure(variant.stack)
    targets = [
        CountTarget(variant, env, variant.endpoints, "base"),
        CountTarget(variant, env, variant.endpoints, "head"),
    ]
    with inject.armed(inject.Faults(head=Injection(loops=20_000))):
        figures, problems = count_requests(
            targets, out_dir=tmp_path, requests=20, repeats=2, log=lambda _: None
        )
    assert problems == []
    by = {("TESTING" in f.note, f.metric): f for f in figures}
    assert len(by) == len(figures) == 6  # instructions, system calls, retained memory per side
    plain, injected = by[(False, INSTRUCTIONS.key)], by[(True, INSTRUCTIONS.key)]
    assert 0 < plain.value < injected.value
    assert min(injected.samples) > max(plain.samples)
    calls = by[(False, SYSCALLS.key)]
    assert calls.value > 0 and any(name.startswith("epoll") for name in calls.detail)
    base_dir, head_dir = target_dirs(tmp_path, targets)
    (base_files, base_n), (head_files, head_n) = (
        phase_files(base_dir, "GET /"),
        phase_files(head_dir, "GET /"),
    )
    assert len(base_files) == len(head_files) == 2
    found = breakdown(base_files, head_files, (base_n, head_n))
    assert found.objects[0].name == INTERPRETER and found.objects[0].change > 0
    # valgrind runs the server in its own process, strace as its child: both name their output
    # file (under tmp_path) on their command line; other counts from this checkout may be running
    assert uvicorn_processes(str(tmp_path)) == []


@pytest.mark.slow
@needs_counters
@pytest.mark.load_independent
def test_real_post_and_thread_pool_endpoints_are_counted_while_a_broken_server_is_reported(
    tmp_path,
):
    """A sync app (its endpoints run in uvicorn's thread pool; one takes a POST body) beside one
    that cannot import: figures for the first, a Problem naming the second, both stopped."""
    from benchwatch.environments.envs import ensure

    project = load_project(
        make_project(tmp_path / "project", [FIXTURE_APPS / "good", FIXTURE_APPS / "broken_import"])
    )
    good, broken = project.select("good@latest")[0], project.select("broken_import@latest")[0]
    env = ensure(good.stack)
    targets = [CountTarget(good, env, good.endpoints), CountTarget(broken, env, broken.endpoints)]
    figures, problems = count_requests(
        targets, out_dir=tmp_path / "counts", requests=20, repeats=2, log=lambda _: None
    )
    assert [p.variant for p in problems] == ["broken_import@latest"]
    assert "boot under callgrind" in problems[0].reason and problems[0].detail
    counted = [f for f in figures if f.metric in (INSTRUCTIONS.key, SYSCALLS.key)]
    assert {(f.endpoint, f.metric) for f in counted} == {
        (e, m.key) for e in ("GET /items", "POST /echo") for m in (INSTRUCTIONS, SYSCALLS)
    }
    assert all(f.value > 0 and f.valid for f in counted)
    # and each endpoint's retained memory per request (a difference: 0 is a value)
    kept = {f.endpoint for f in figures if f.metric == RETAINED.key}
    assert kept == {"GET /items", "POST /echo"}
    echo = next(f for f in figures if f.endpoint == "POST /echo" and f.metric == SYSCALLS.key)
    assert echo.detail.get("futex", 0) > 0  # the thread pool's hand-offs
    for app in ("good", "broken_import"):
        assert uvicorn_processes(str(FIXTURE_APPS / app)) == []


@pytest.mark.slow
@needs_counters
def test_real_command_reports_a_server_that_cannot_boot_and_writes_its_run(tmp_path):
    root = make_project(tmp_path / "project", [FIXTURE_APPS / "broken_import"])
    out = tmp_path / "out"
    done = benchwatch(
        "counts", "-k", "broken_import@latest", "--out", str(out), root=root, timeout=300
    )
    assert done.returncode == 2, done.stderr
    assert "PROBLEM broken_import@latest" in done.stderr and "boot under callgrind" in done.stderr
    run = json.loads((out / "run.json").read_text())
    assert run["figures"] == [] and run["problems"][0]["variant"] == "broken_import@latest"
    assert uvicorn_processes(str(FIXTURE_APPS / "broken_import")) == []


@pytest.mark.slow
@needs_counters
@pytest.mark.load_independent
def test_real_app_with_a_pre_start_is_counted_its_migration_runs_without_the_harness(tmp_path):
    """pre_start is a Python process of the app's environment: had it the counting harness's
    variables, it would bind the harness's socket first and the server's harness could not."""
    from benchwatch.environments.envs import ensure

    root = make_project(tmp_path / "project", [REPO / "examples" / "todo_api"])
    variant = load_project(root).select("todo_api@own")[0]
    assert variant.app.declaration.pre_start
    target = CountTarget(variant, ensure(variant.stack), variant.selected_endpoints(True))
    figures, problems = count_requests(
        [target], out_dir=tmp_path / "out", requests=20, repeats=2, log=lambda _: None
    )
    assert problems == []
    counts = [f for f in figures if f.metric in (INSTRUCTIONS.key, SYSCALLS.key)]
    # the todo API on SQLite: its SQL statements per request too
    assert sorted(f.metric for f in figures) == sorted(
        [INSTRUCTIONS.key, SYSCALLS.key, RETAINED.key, STATEMENTS.key]
    )
    assert all(f.value > 0 for f in counts)
    assert uvicorn_processes(str(tmp_path)) == []


def test_the_client_sends_every_request_on_one_connection_and_stops_at_a_non_2xx_answer():
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from benchwatch.counts.client import Client, Request, RequestFailed

    seen: list[tuple[str, int, bytes]] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = self.rfile.read(int(self.headers["content-length"]))
            seen.append((self.path, self.client_address[1], body))
            status = 500 if self.path == "/broken" else 200
            self.send_response(status)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    client = Client("127.0.0.1", httpd.server_address[1], timeout=10)
    try:
        client.send(
            Request(
                "POST",
                "/ok",
                b'{"id": 7}',
                {"Host": "127.0.0.1", "content-type": "application/json"},
            ),
            3,
        )
        with pytest.raises(RequestFailed, match="status 500"):
            client.send(Request("POST", "/broken", b"{}", {"Host": "127.0.0.1"}), 5)
    finally:
        client.close()
        httpd.shutdown()
    assert [path for path, _, _ in seen] == ["/ok"] * 3 + ["/broken"]
    assert len({port for _, port, _ in seen}) == 1  # one connection
    assert seen[0][2] == b'{"id": 7}'


def test_a_loop_injection_reaches_the_app_as_a_fixed_number_of_iterations(monkeypatch):
    from apps._inject import InjectedCpu, with_injected_cpu

    injection = Injection(loops=25)
    assert bool(injection) and injection.environ() == {"BENCHWATCH_INJECT_LOOPS": "25"}
    assert "25-iteration loop" in injection.describe()
    for name, value in injection.environ().items():
        monkeypatch.setenv(name, value)
    wrapped = with_injected_cpu(object())
    assert isinstance(wrapped, InjectedCpu) and wrapped.loops == 25 and wrapped.microseconds == 0.0


def test_the_harness_collects_on_request_and_then_loads_the_environments_own_sitecustomize(
    tmp_path,
):
    """A real interpreter with the counting harness on its PYTHONPATH: `collect()` runs a full
    collection in it (the cycle made before is freed), and a sitecustomize found later on the
    path (as an environment's own would be) still runs."""
    import subprocess
    import sys

    from benchwatch.counts.harness_control import Harness, HarnessError

    own = tmp_path / "own"
    own.mkdir()
    (own / "sitecustomize.py").write_text("import builtins\nbuiltins.OWN_SITECUSTOMIZE = True\n")
    program = (
        "import builtins, gc, sys, weakref\n"
        "class Cycle: pass\n"
        "c = Cycle(); c.me = c; alive = weakref.ref(c); del c\n"
        "gc.disable()\n"  # only the harness may collect it
        "print(getattr(builtins, 'OWN_SITECUSTOMIZE', False), flush=True)\n"
        "sys.stdin.readline()\n"
        "print(alive() is None, flush=True)\n"
    )
    control = Harness()
    environ = {**control.environ(), "PATH": "/usr/bin:/bin"}
    environ["PYTHONPATH"] += f":{own}"
    process = subprocess.Popen(
        [sys.executable, "-c", program],
        env=environ,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert process.stdout.readline().strip() == "True"
        control.connect()
        control.collect()
        process.stdin.write("\n")
        process.stdin.flush()
        assert process.stdout.readline().strip() == "True"
    finally:
        process.kill()
        process.wait()
        control.close()
    with pytest.raises(HarnessError, match="collect"):
        control.collect()
    assert not control.path.exists()


@pytest.mark.slow
def test_the_harness_holds_a_uvicorn_loop_still_and_counts_its_timer_ticks(tmp_path):
    """A real uvicorn server (the latest stack's) with the harness: `hold()` answers with its
    timer's ticks so far and, while held, the loop serves nothing and ticks no more; after
    `release()` it ticks again. `quiet()` stops the ticks while the server still serves; after
    `wake()` it ticks, and stops on SIGINT. A process that is not a uvicorn server answers None
    and False. Neither prints an error from the harness (an environment without a
    sitecustomize of its own)."""
    import signal
    import subprocess
    import time
    import urllib.request

    from benchwatch.counts.harness_control import Harness
    from benchwatch.environments.envs import ensure
    from benchwatch.measure.ports import free_port

    python = str(ensure(load_project(REPO).select("hello@latest")[0].stack).python)
    port = free_port()
    control = Harness()
    environ = {**control.environ(), "PATH": "/usr/bin:/bin"}
    app = tmp_path / "tiny.py"
    app.write_text(
        "async def app(scope, receive, send):\n"
        "    if scope['type'] != 'http': return\n"
        "    await send({'type': 'http.response.start', 'status': 200, 'headers': []})\n"
        "    await send({'type': 'http.response.body', 'body': b'ok'})\n"
    )
    process = subprocess.Popen(
        [
            python,
            "-m",
            "uvicorn",
            "tiny:app",
            "--port",
            str(port),
            "--host",
            "127.0.0.1",
            "--log-level",
            "warning",
        ],
        env=environ,
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(300):  # until it answers: a server's harness is asked once it serves
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1.0).read()
                break
            except OSError:
                time.sleep(0.1)
        control.connect()
        first = control.hold()
        assert first is not None and first >= 1
        with pytest.raises(OSError):  # ten ticks' worth of wall time, held: the loop answers nobody
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1.0)
        control.release()
        again = control.hold()  # at once: the one overdue tick, at most one more
        control.release()
        assert again is not None and again - first <= 2
        time.sleep(0.5)
        later = control.hold()
        control.release()
        assert later is not None and later > again  # released, it ticks again
        assert control.quiet()  # the timer held: no tick while the server serves
        quieted = control.hold()
        control.release()
        urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5.0).read()  # it still answers
        time.sleep(1.0)
        still = control.hold()
        control.release()
        assert (
            quieted is not None and still is not None and still - quieted <= 1
        )  # the one already due, at most
        control.wake()
        time.sleep(0.5)
        woken = control.hold()
        control.release()
        assert woken is not None and woken > still
        process.send_signal(signal.SIGINT)  # a woken timer reads the exit flag: the server stops
        assert process.wait(30) == 0
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=30)
        control.close()
    assert "Error in sitecustomize" not in stderr
    plain = Harness()
    other = subprocess.Popen(
        [python, "-c", "import time; time.sleep(60)"],
        env={**plain.environ(), "PATH": "/usr/bin:/bin"},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        plain.connect()
        assert plain.hold() is None
        assert plain.quiet() is False
    finally:
        other.kill()
        _, stderr = other.communicate(timeout=30)
        plain.close()
    assert "Error in sitecustomize" not in stderr


@pytest.mark.slow
@pytest.mark.load_independent
def test_real_counted_server_keeps_its_one_connection_while_the_counter_dumps():
    """The count's one connection idles while callgrind dumps, which on a busy machine takes longer
    than uvicorn's 5 s keep-alive: the server then closed it and the next phase failed with
    'Connection reset by peer'. A counted server is booted with a keep-alive longer than any dump."""
    import time

    from benchwatch.counts.client import Client, Request, RequestFailed
    from benchwatch.counts.counted_server import KEEP_ALIVE_S
    from benchwatch.environments import envs
    from benchwatch.measure import launch, ports

    (hello,) = load_project(REPO).select("hello@latest")
    env = envs.ensure(hello.stack)
    outcomes = {}
    for keep_alive in (None, KEEP_ALIVE_S):
        with launch.running(hello, env, launch.ServerOptions(keep_alive=keep_alive)) as srv:
            request = Request.of(srv, hello.endpoints[0])
            client = Client(ports.HOST, srv.port, 30)
            client.send(request, 1)
            time.sleep(6.5)  # longer than uvicorn's default keep-alive
            try:
                client.send(request, 1)
                outcomes[keep_alive] = "answered"
            except RequestFailed as exc:
                outcomes[keep_alive] = str(exc)
            client.close()
    assert outcomes[KEEP_ALIVE_S] == "answered"
    assert outcomes[None] != "answered"  # the fault, as uvicorn's default planted it


def test_the_reads_are_counted_in_every_repeat_before_any_write_is():
    from benchwatch.counts.request_budget import counted_order

    order = counted_order(["GET", "POST", "get", "PUT", "HEAD"], 3)
    assert order[:9] == [(0, 0), (0, 2), (0, 4), (1, 0), (1, 2), (1, 4), (2, 0), (2, 2), (2, 4)]
    assert order[9:] == [(0, 1), (0, 3), (1, 1), (1, 3), (2, 1), (2, 3)]
    assert sorted(order) == [(r, i) for r in range(3) for i in range(5)]  # every phase once
    assert counted_order(["GET", "GET"], 2) == [
        (0, 0),
        (0, 1),
        (1, 0),
        (1, 1),
    ]  # reads only: as before


@pytest.mark.slow
@needs_counters
@pytest.mark.load_independent
def test_real_write_refused_when_repeated_is_counted_with_a_fresh_email_per_request(tmp_path):
    """Every counted request resolves `{unique}` again: had one body been sent twice, the app's
    400 would stop the count (a Problem, no figure)."""
    from benchwatch.environments.envs import ensure

    app = REPO / "tests" / "fixtures" / "unique_users"
    project = load_project(make_project(tmp_path / "project", [app]))
    variant = project.select("unique_users@latest")[0]
    assert variant.timed_endpoints(quick=False) == () and variant.quick_endpoints == ()
    target = CountTarget(variant, ensure(variant.stack), variant.selected_endpoints(False))
    figures, problems = count_requests(
        [target], out_dir=tmp_path / "out", requests=20, repeats=2, log=lambda _: None
    )
    assert problems == []
    counted = [f for f in figures if f.metric in (INSTRUCTIONS.key, SYSCALLS.key)]
    assert {(f.endpoint, f.metric) for f in counted} == {
        ("POST /users", m.key) for m in (INSTRUCTIONS, SYSCALLS)
    }
    assert all(f.value > 0 and f.valid for f in counted)
    assert uvicorn_processes(str(app)) == []
