"""The page's HTTP API fuzzed against its own OpenAPI schema (schemathesis, issue 19): whatever a client sends, every
route answers with a status and a body its schema declares, never a server error; schema-valid entries are taken
or refused with a reason, and invalid ones are rejected."""

from __future__ import annotations

import tempfile
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from companion_ui.server import create_app
from companion_ui.session import TrackedSession, new_manual
from companion_ui.table_setup import TableSetup
from tests.test_table_setup import Still, table_picture

MANUAL = schemathesis.openapi.from_asgi("/openapi.json", create_app(new_manual("loot-roll", 3, 0, {})))
CAMERA = schemathesis.openapi.from_asgi("/openapi.json", create_app(TrackedSession()))
# The page's table setup on a camera's still picture, kept in a fresh folder (its routes only: the video stream of a
# session with a picture never ends)
TABLE = TableSetup("loot-the-loop", Path(tempfile.mkdtemp(prefix="tabletop-table-")))
SETUP = schemathesis.openapi.from_asgi(
    "/openapi.json", create_app(TrackedSession(), Still(table_picture()), table=TABLE)
).include(path_regex="^/api/table")
FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
# A schema-valid entry may still break the rules ("explore 99"): its 400 refusal, with the reason, is documented
# and checked like any answer; only schemathesis's "valid data must be accepted" does not hold for a game.
RULES_MAY_REFUSE = [positive_data_acceptance]


@MANUAL.parametrize()
@FUZZ
def test_a_manual_games_api_answers_every_request_as_its_schema_says(case) -> None:
    case.call_and_validate(excluded_checks=RULES_MAY_REFUSE)


@CAMERA.parametrize()
@FUZZ
def test_a_camera_games_api_answers_every_request_as_its_schema_says(case) -> None:
    case.call_and_validate(excluded_checks=RULES_MAY_REFUSE)


@SETUP.parametrize()
@FUZZ
def test_the_table_setup_api_answers_every_request_as_its_schema_says(case) -> None:
    case.call_and_validate(excluded_checks=RULES_MAY_REFUSE)
