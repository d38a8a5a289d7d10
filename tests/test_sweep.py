"""Sweeps on a real Dask LocalCluster (two worker processes): the same rows as serial, faults
become failed rows, resume skips finished rows, results stream to disk atomically."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest

pytest.importorskip("dask.distributed")

from maxmargin.cli import main  # noqa: E402
from maxmargin.verification.suite import Method, Outcome, extra_methods, run_suite  # noqa: E402
from maxmargin.verification.sweep import load_rows, local_client, write_rows  # noqa: E402


@pytest.fixture(scope="module")
def client():
    import dask

    # one death is enough to give up on a task (the default retries it on other workers)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        c = local_client(2)
        yield c
        cluster = c.cluster
        c.close()
        cluster.close()


def _key(run):
    return [(r.case, r.method, r.verdict, r.status, r.tolerances, r.reasons, r.exception)
            for r in run.rows]


def test_same_rows_as_serial(client) -> None:
    for kwargs in ({"suite": "random", "count": 12, "seed": 5},
                   {"suite": "full", "pattern": ["li_hang*", "circle_rbf", "overlap_hard"]}):
        serial = run_suite(progress=None, timeout=60, **kwargs)
        dist = run_suite(progress=None, timeout=60, client=client, **kwargs)
        assert _key(dist) == _key(serial)
        unguarded = run_suite(progress=None, client=client, **kwargs)
        assert _key(unguarded) == _key(serial)
    assert set(dist.artifacts.pictures) == set(serial.artifacts.pictures)


def test_a_warm_up_broadcast_to_a_lost_worker_does_not_stop_the_run(client, monkeypatch) -> None:
    """``client.run(warm_up)`` reaching a worker whose connection closed (a worker restarted
    under load) raises ``CommClosedError``; the workers then load the compiled code on first
    use, and the rows are the serial ones."""
    from distributed.comm.core import CommClosedError

    def lost(*args, **kwargs):
        raise CommClosedError("in <TCP (closed) Scheduler Broadcast>: Stream is closed")

    monkeypatch.setattr(client, "run", lost)
    kwargs = {"suite": "full", "pattern": ["li_hang*", "circle_rbf"]}
    serial = run_suite(progress=None, timeout=60, **kwargs)
    assert _key(run_suite(progress=None, timeout=60, client=client, **kwargs)) == _key(serial)


def test_the_warm_up_broadcast_names_the_plans_pieces_only(client, monkeypatch) -> None:
    """The workers warm up the compiled pieces the plan's methods name, not every piece (on
    an empty Numba cache, every piece is minutes of compiling in each worker)."""
    from maxmargin.verification.warmup import WARM_UPS

    sent = []

    def record(function, *args, **kwargs):
        sent.append(args)
        return {}

    monkeypatch.setattr(client, "run", record)
    run_suite("full", ["li_hang*"], progress=None, timeout=60, client=client)
    assert len(sent) == 1 and len(sent[0]) == 1
    pieces = sent[0][0]
    assert pieces and pieces == sorted(set(pieces)) and set(pieces) < set(WARM_UPS)


def _crash(ctx):
    os._exit(3)  # the process dies in the middle of a method


def _ok(ctx):
    return Outcome(status="optimal", oracle="none")


def test_a_crashing_method_is_a_failed_row_and_the_run_goes_on(client) -> None:
    with extra_methods(Method("crash", "smo", _crash), Method("ok", "smo", _ok)):
        guarded = run_suite("full", "li_hang*", progress=None, timeout=60, client=client)
        rows = {r.method: r for r in guarded.rows}
        assert not rows["crash"].passed and "worker process died" in rows["crash"].reasons
        assert rows["ok"].status == "optimal" and rows["smo/wss2"].passed
        # unguarded: the crash takes the Dask worker down; the task's rows fail with the reason
        bare = run_suite("full", "li_hang*", progress=None, client=client)
    assert all(not r.passed for r in bare.rows)
    assert all("the Dask task failed" in r.reasons for r in bare.rows)
    after = run_suite("full", "two_points", progress=None, client=client)  # the cluster lives on
    assert after.passed


def test_resume_skips_finished_rows_and_keeps_them(client, tmp_path) -> None:
    first = run_suite("random", count=6, seed=2, progress=None)
    # mark the kept rows so that a recomputation would show
    kept = [dataclasses.replace(r, reasons="from the file") for r in first.rows[:10]]
    path = tmp_path / "rows.json"
    write_rows(path, kept, first.suite, None)
    resumed = run_suite("random", count=6, seed=2, progress=None, client=client,
                        resume=load_rows(path), stream=str(path))
    assert [r.reasons for r in resumed.rows[:10]] == ["from the file"] * 10
    assert _key(resumed)[10:] == _key(first)[10:]
    on_disk = json.loads(path.read_text())["rows"]
    assert [(r["case"], r["method"]) for r in on_disk] == [(r.case, r.method)
                                                           for r in resumed.rows]


def test_cli_workers_and_resume(capsys, tmp_path) -> None:
    path = tmp_path / "campaign.json"
    assert main(["verify", "--suite", "random", "--count", "4", "--seed", "9", "--workers", "2",
                 "--json", str(path), "--quiet"]) == 0
    first = len(json.loads(path.read_text())["rows"])
    assert main(["verify", "--suite", "random", "--count", "6", "--seed", "9", "--resume",
                 str(path), "--quiet"]) == 0
    rows = json.loads(path.read_text())["rows"]
    assert len(rows) > first and {r["case"] for r in rows} == {
        f"random_s9_i{i}" for i in range(6)}
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        main(["verify", "--workers", "2", "--scheduler", "tcp://127.0.0.1:1", "--quiet"])
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        main(["verify", "--resume", str(tmp_path), "--quiet"])
    assert info.value.code == 2 and "is a directory" in capsys.readouterr().err
