"""A shortened soak (issue 19): the looping demo served by a real uvicorn while 8 pages (push socket, MJPEG video,
state fetches) come and go. The full hour is `tabletop bench soak`; its figures are in the README."""

from __future__ import annotations

import pytest

from companion_ui.cli import main
from companion_ui.soak import format_summary, run_soak


@pytest.mark.long
def test_eight_pages_are_served_while_the_frame_loop_runs_and_each_gets_the_table_and_its_video() -> None:
    result = run_soak(minutes=0.3, clients=8, phase_s=6.0)
    loaded = [p for p in result["phases"] if p["clients"] == 8]
    alone = [p for p in result["phases"] if p["clients"] == 0]
    assert alone and loaded, result["phases"]
    assert all(p["frames_processed"] > 0 for p in result["phases"]), "the frame loop went on in every phase"
    pages = result["pages"]
    assert pages["opened"] == 8 * len(loaded)
    assert pages["errors"] == 0 and pages["starved"] == 0, pages
    assert pages["states"] > 0 and pages["pictures"] >= pages["opened"]
    assert result["frame_loop_slowdown"] is not None and len(result["memory"]["samples"]) >= 2
    assert "slowdown" in format_summary(result)


def test_soak_refuses_a_run_of_no_length(capsys) -> None:
    assert main(["bench", "soak", "--minutes", "0"]) == 2
    assert "--minutes must be above 0" in capsys.readouterr().err
