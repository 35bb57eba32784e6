"""flexmbs: flexible-body finite-element multibody solver."""
