"""The test suite (a package, so that test modules import shared helpers by their full name)."""
