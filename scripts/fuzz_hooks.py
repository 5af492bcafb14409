"""Schemathesis hooks for scripts/fuzz-api.sh.

`no_server_fault` is Schemathesis's own `not_a_server_error`, with one answer
let through: 503 `E_UNAVAILABLE`, the contract's refusal of a capability this
build does not have (semantic search), which the spec documents. Any other
5xx, a busy database or a timeout included, still fails the run.

`schema_valid_request_accepted` is Schemathesis's `positive_data_acceptance`
(a request the spec allows must not be refused), except for the refusals no
OpenAPI schema can state, listed in `beyond_the_schema` with the reason for
each. Every rule a schema can state (lengths, ranges, patterns, enums, the
text rules of names and prose) is in the spec, so any other refusal of a
schema-valid request fails the run.
"""
import json

import schemathesis
from schemathesis.checks import not_a_server_error
from schemathesis.core.jsonschema.patterns import compile_ecma_pattern
from schemathesis.specs.openapi.checks import positive_data_acceptance


def error_of(response):
    try:
        error = json.loads(response.content)["error"]
    except (ValueError, KeyError, TypeError):
        return None
    return error if isinstance(error, dict) else None


@schemathesis.check
def no_server_fault(ctx, response, case):
    if response.status_code == 503:
        error = error_of(response) or {}
        if error.get("code") == "E_UNAVAILABLE":
            return None
    return not_a_server_error(ctx, response, case)


def beyond_the_schema(case, response):
    """Why a refusal of a schema-valid request is one no schema can state, or None."""
    if response.status_code == 412:
        return "a precondition on the resource as it is now (If-Match)"
    if case.operation.path == "/api/tools/{name}":
        return "the generic door: the arguments depend on the tool its path names"
    error = error_of(response)
    if error is None:
        return None
    code = error.get("code")
    details = error.get("details") or {}
    field = details.get("field")
    if code in ("E_CURSOR", "STALE_CURSOR"):
        return "only the hub mints cursors: a made-up one is refused"
    if code in ("E_ARGUMENT", "E_REQUEST_ID") and details.get("with"):
        return "two inputs, each valid alone, that do not go together"
    if code == "E_PATH" and field == "mount" and "mounts" in details:
        return "mount keys are configuration (docs.toml), like ids that do not exist"
    if code == "E_ARGUMENT" and field == "swimlane" and "allowed" in details:
        return "swimlanes are configuration (the board's config)"
    if code == "E_ARGUMENT" and field == "formula_id" and "allowed" in details:
        return "agent roles are configuration (the role registry, roles.toml in the state folder)"
    if code == "E_PATH" and details.get("rule") in ("bytes", "excluded", "symlink"):
        return ("a path's length in bytes, a folder its mount keeps out (.git, the state "
                "folder, a mount inside it) or a symbolic link on disk (the spec's pattern "
                "states every other path rule)")
    if case.operation.path == "/api/search" and code == "E_ARGUMENT" and field in ("q", "path"):
        return ("the query language (filters named in the text, words to find) and glob syntax "
                "(balanced brackets, `.*` read as a regex)")
    if code == "E_ARGUMENT" and field == "uid" and "kind" in details:
        return "what can be renamed depends on the kind of node the uid names"
    if code == "E_TRANSITION":
        return "the moves allowed depend on the task's status"
    if code == "E_ARGUMENT" and field == "depends_on" and "existing tasks" in error.get("message", ""):
        return "dependencies must name tasks that exist"
    if code == "E_ARGUMENT" and isinstance(details.get("index"), int) and patch_fits_schema(case, details["index"]):
        return ("a patch operation that does not fit the document as it is now (a section it "
                "lacks, a count of matches that differs)")
    if code == "E_ARGUMENT" and field == "output_json" and "line" in details:
        return "JSON text inside a string: a schema types the string, not its content"
    return None


def patch_fits_schema(case, index):
    """Whether operation `index` of a patch holds nothing the server refuses on
    its own (a `find` must hold a character): its refusal is then the document's."""
    body = case.body if isinstance(case.body, dict) else {}
    operations = body.get("operations")
    if not isinstance(operations, list) or not 0 <= index < len(operations):
        return False
    operation = operations[index]
    return isinstance(operation, dict) and operation.get("find") != ""


def header_outside_its_pattern(case):
    """A header the case sends that its declared pattern does not match.

    Schemathesis's coverage phase seeds an optional header it found no
    positive value for with a negative one, and still labels cases built on
    it positive: those are not schema-valid requests.
    """
    sent = {name.lower(): value for name, value in (case.headers or {}).items()}
    for parameter in case.operation.headers:
        schema = parameter.definition.get("schema") or {}
        value = sent.get(parameter.name.lower())
        pattern = schema.get("pattern")
        if isinstance(value, str) and pattern and not compile_ecma_pattern(pattern).search(value):
            return parameter.name
    return None


@schemathesis.check
def schema_valid_request_accepted(ctx, response, case):
    if header_outside_its_pattern(case) is not None:
        return None
    if beyond_the_schema(case, response) is not None:
        return None
    return positive_data_acceptance(ctx, response, case)
