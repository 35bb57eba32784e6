"""Test support: ``flexmbs check`` on a malformed case file must fail with one line."""
from flexmbs.cli.main import main


def assert_check_error(path, capsys, needles, file_name_only=False) -> None:
    """``flexmbs check path`` exits 2 and its last line on stderr is the error, naming the
    file (its full path, or only its name for the builder's model problems) and
    containing every string of ``needles``."""
    rc = main(["check", str(path)])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert rc == 2
    assert err.startswith("flexmbs check: error: ") and (path.name if file_name_only else str(path)) in err
    for n in needles:
        assert n in err, f"{n!r} not in {err!r}"
