"""The OpenAPI document is valid OpenAPI 3.1, as served and as docs/openapi.yaml holds it (checked by
openapi-spec-validator: a code generator or a gateway refuses a document it finds invalid)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from openapi_spec_validator import OpenAPIV31SpecValidator
from openapi_spec_validator.validation.exceptions import OpenAPIValidationError

DOC = Path(__file__).resolve().parents[1] / "docs" / "openapi.yaml"


def problems(document: dict) -> list[str]:
    """Every way `document` breaks OpenAPI 3.1 (the schema and the references), in the validator's words."""
    return [str(error).splitlines()[0] for error in OpenAPIV31SpecValidator(document).iter_errors()]


async def test_the_served_document_is_valid(worker):
    client = await worker()
    response = await client.get("/openapi.json")
    assert response.status == 200
    served = await response.json()
    assert served["openapi"].startswith("3.1")
    assert problems(served) == []


def test_the_yaml_file_is_valid():
    assert problems(yaml.safe_load(DOC.read_text(encoding="utf-8"))) == []


@pytest.mark.parametrize(
    "spoil",
    [
        lambda operation: operation["responses"].update({"299": {"content": {}}}),  # no description
        lambda operation: operation.update(summary=5),  # not a string
    ],
)
def test_the_validator_finds_a_broken_document(spoil):
    """The check can fail: the same document, one field of one operation spoilt."""
    broken = copy.deepcopy(yaml.safe_load(DOC.read_text(encoding="utf-8")))
    spoil(next(iter(next(iter(broken["paths"].values())).values())))
    assert len(problems(broken)) == 1
    with pytest.raises(OpenAPIValidationError):
        OpenAPIV31SpecValidator(broken).validate()
