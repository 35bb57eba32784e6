"""flexmbs.integrate"""
