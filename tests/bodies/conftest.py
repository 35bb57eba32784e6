"""Fixtures of the flexible-body tests."""
from __future__ import annotations

import pytest

import flexmbs.compiled


@pytest.fixture(params=["compiled", "reference"])
def kernels(request, monkeypatch):
    """The test runs twice: on the compiled kernels and on their numpy references.

    Sets :data:`flexmbs.compiled.KERNELS` for the test (as ``FLEXMBS_KERNELS`` does for a
    process), which every :func:`flexmbs.compiled.backend` call asks; callers that bind a
    kernel at import are not switched (``test_backends_agree.py`` runs whole processes
    on each backend)."""
    monkeypatch.setattr(flexmbs.compiled, "KERNELS", request.param)
    return request.param
