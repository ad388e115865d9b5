"""Shared test configuration: the order tests are handed to pytest-xdist's workers."""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules holding a test marked `long` run first, each kept whole so its module fixtures are built once. The
    workers take tests in this order, so the long tests start while there is still other work to share, and no
    worker is left finishing a 90-second test alone at the end (the default suite must stay under 10 minutes)."""
    first = {item.nodeid.split("::")[0] for item in items if item.get_closest_marker("long")}
    items.sort(key=lambda item: item.nodeid.split("::")[0] not in first)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-m slow` runs one test at a time. Among the slow runs, the companion bench plays the demo in real time and
    counts the moves it reads live; a worker beside it would take half the CPU it is timed on."""
    return 0 if config.getoption("markexpr") == "slow" else None


@pytest.fixture(scope="session")
def test_design(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A held-out board design of The LOOP (17: the test split), rendered once per worker for every module that
    needs one (about 10 s each time)."""
    from vision.synth.components import design_dir, render_designs

    root = tmp_path_factory.mktemp("the-loop")
    render_designs("the-loop", root, [17], workers=1, progress=False)
    return design_dir(root, "the-loop", 17)
