"""flexmbs.fe"""
