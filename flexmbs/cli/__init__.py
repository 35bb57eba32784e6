"""flexmbs command-line interface."""
