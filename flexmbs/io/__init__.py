"""flexmbs.io"""
