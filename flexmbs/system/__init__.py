"""flexmbs.system"""
