"""Every CLI output on the small examples is what tests/golden/cli_outputs.json says, byte for byte.

A refactor must leave them all unchanged. A deliberate change of output regenerates the manifest
(``python -m tests.cli_outputs --write``) and says in its commit which outputs changed and why.
"""

from __future__ import annotations

import json

from tests.cli_outputs import MANIFEST, manifest


def test_cli_outputs_match_the_manifest():
    expected = json.loads(MANIFEST.read_text())
    found = manifest()
    changed = sorted(k for k in expected.keys() | found.keys() if expected.get(k) != found.get(k))
    assert changed == [], "outputs changed; review, then: python -m tests.cli_outputs --write"
