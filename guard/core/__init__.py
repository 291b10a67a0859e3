"""The core layer: types every other layer shares (errors, events, hook specs and their matchers, decisions, settings).

Standard library only, except the pydantic event model, which loads on first use.
Nothing here imports from any other guard package.
"""
