"""Approvals: a hook's ``ask`` (``on_ask: approval``) held for a person, who answers from a terminal or ``guard view``.

:mod:`guard.approvals.store` keeps the requests and their sealed answers;
:mod:`guard.approvals.request` says what the webhook is sent and who may answer.
"""
