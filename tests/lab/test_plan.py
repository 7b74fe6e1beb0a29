"""Plans: interleaved order, config differences, what may change when resuming."""

import dataclasses

from oltplab.documents.lab import LabDocument
from oltplab.lab.execute import new_document
from oltplab.lab.labfile import read_lab_text
from oltplab.lab.plan import config_differences, plan_cells, resume_difference
from tests.lab.test_labfile import GOOD


def test_interleaved_runs_every_config_once_per_repeat() -> None:
    cells = plan_cells(read_lab_text(GOOD, "l.toml"))
    assert len(cells) == 2 * 2 * 2
    assert [c.config for c in cells] == ["a", "b"] * 4
    assert [c.repeat for c in cells] == [1, 1, 1, 1, 2, 2, 2, 2]
    assert [c.id for c in cells][:2] == ["mdb.a.oltp_read_only.t1.r1", "mdb.b.oltp_read_only.t1.r1"]


def test_sequential_and_random_orders() -> None:
    spec = read_lab_text(GOOD.replace("repeats = 2", 'repeats = 2\norder = "sequential"'), "l.toml")
    assert [c.config for c in plan_cells(spec)] == ["a"] * 4 + ["b"] * 4
    shuffled = read_lab_text(GOOD.replace("repeats = 2", 'repeats = 2\norder = "random"'), "l")
    once, again = plan_cells(shuffled), plan_cells(shuffled)
    assert [c.id for c in once] == [c.id for c in again]  # seeded
    assert sorted(c.id for c in once) == sorted(c.id for c in plan_cells(spec))


def test_config_differences_list_only_what_differs() -> None:
    spec = read_lab_text(GOOD, "l.toml")
    assert config_differences(spec) == {
        "mdb": {
            "a": {"thread_handling": "one-thread-per-connection"},
            "b": {"thread_handling": "pool-of-threads"},
        }
    }


def test_resume_accepts_added_cells_and_refuses_changes() -> None:
    old = read_lab_text(GOOD, "l.toml")
    more = read_lab_text(GOOD.replace("threads = [1, 4]", "threads = [1, 4, 8]"), "l.toml")
    assert resume_difference(old, more) is None
    assert resume_difference(old, dataclasses.replace(old, repeats=3)) is None
    longer = read_lab_text(GOOD.replace("time = 5", "time = 6"), "l.toml")
    assert resume_difference(old, longer) == "[lab] time changed from 5.0 to 6.0"
    other = read_lab_text(GOOD.replace('"pool-of-threads"', '"no-threads"'), "l.toml")
    assert resume_difference(old, other) == "config mdb.b changed"
    fewer = read_lab_text(GOOD.replace("threads = [1, 4]", "threads = [4]"), "l.toml")
    assert resume_difference(old, fewer) == "workload oltp_read_only's threads 1 was removed"


def test_lab_document_round_trips(tmp_path: object) -> None:
    spec = read_lab_text(GOOD, "l.toml")
    doc = new_document(spec, __import__("pathlib").Path("l.toml"))
    doc.cells[0].status = "done"
    again = LabDocument.from_json(doc.to_json())
    assert again.to_json() == doc.to_json()
    assert again.lab == spec


def test_open_loop_cells_carry_their_rate() -> None:
    text = GOOD.replace("threads = [1, 4]", "threads = [8]\nrate = [100, 250.5]")
    cells = plan_cells(read_lab_text(text, "l.toml"))
    assert [(c.id, c.threads, c.rate) for c in cells[:4:2]] == [
        ("mdb.a.oltp_read_only.q100.r1", 8, 100.0),
        ("mdb.a.oltp_read_only.q250.5.r1", 8, 250.5),
    ]
