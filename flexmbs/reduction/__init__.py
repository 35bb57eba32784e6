"""flexmbs.reduction"""
